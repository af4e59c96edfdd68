/* The heap census (pycore heap): every object on the GC's lists, counted
 * by type with the size sys.getsizeof gives it.  Private to python/. */
#ifndef PYCORE_PYTHON_HEAP_H
#define PYCORE_PYTHON_HEAP_H

#include <stdio.h>

#include "python/python_int.h"

/* How one type's __sizeof__ is computed: the class along its MRO that
 * defines __sizeof__, known by its name (sizeof.c). */
enum heap_sizeof {
	HS_OBJECT,                   /* object.__sizeof__: basic + items */
	HS_LIST, HS_DICT, HS_SET, HS_BYTEARRAY, HS_TYPE, HS_MODULE, HS_STR, HS_INT,
	HS_NDARRAY,                  /* numpy.ndarray's: its dimensions and the data it owns */
	HS_ARRAY,                    /* array.array's: its items' buffer as allocated */
	HS_CODE,                     /* a code object's (3.11+): basic + items, 8-aligned */
	HS_UNKNOWN,                  /* a __sizeof__ pycore does not know: object's, a lower bound */
};

/* Include/object.h's type flags the census reads */
#define TPF_HEAPTYPE        (1ul << 9)
#define TPF_HAVE_GC         (1ul << 14)
#define TPF_LIST_SUBCLASS   (1ul << 25)
#define TPF_TUPLE_SUBCLASS  (1ul << 26)
#define TPF_DICT_SUBCLASS   (1ul << 29)
#define TPF_TYPE_SUBCLASS   (1ul << 31)

/* The references reach.c follows from an object of a type: those of the
 * exact built-in containers, of instances of Python classes (whose
 * tp_traverse is subtype_traverse) their attributes and what their
 * built-in base holds, of a class its namespace, of a function what it
 * holds of its own (defaults, keyword defaults, closure, code), and of a
 * code object its constants, names, file name, name and qualified name. */
enum heap_walk {
	HW_NONE, HW_LIST, HW_TUPLE, HW_DICT, HW_SET, HW_CELL, HW_MODULE,
	HW_TYPE,                     /* a class (a heap type): its namespace, tp_dict */
	HW_FUNCTION,                 /* a function: its defaults, keyword defaults, closure, code */
	HW_CODE,                     /* a code object: co_consts, co_names, co_filename,
					co_name, co_qualname */
};

/* What the census knows of one type, cached by its address. */
struct heap_type {
	uint64_t addr;
	bool proven;                 /* its own type is a type */
	enum heap_sizeof rule;
	const char *owner;           /* the class whose __sizeof__ it is */
	int64_t basicsize, itemsize;
	uint64_t flags;
	enum heap_walk walk;         /* its layout's references */
	bool instance;               /* an instance of a Python class: its attributes too */
	uint32_t id;                 /* its number (1, 2, ...): the census's type_addrs[id - 1] */
	uint64_t count, bytes, permanent, permanent_bytes;
	uint64_t ucount, ubytes;     /* objects the GC does not track (reach.c) */
};

/* one of the largest objects: a min-heap by bytes while the lists are read */
struct big {
	uint64_t address, type, bytes;
};

/* The object graph (retain.c): each object counted a node, by index, and
 * the references edges() reads from it, in order, a run of targets' nodes
 * (an object referred to gets its node at the first reference, before
 * the census counts it; one it never counts is no object). */
struct heap_graph {
	struct addrtab index;        /* struct heap_node_ref, by address */
	uint64_t *addr;              /* by node */
	uint32_t *size;              /* by node: sys.getsizeof's; UINT32_MAX: in big */
	struct addrtab big;          /* struct heap_big_size: the sizes of 4 GiB - 1 and
					more, by node + 1 */
	uint32_t *type;              /* by node: its type's id (heap_type's; 0: not counted,
					only referred to) */
	uint32_t *refcnt;            /* by node: its ob_refcnt when the GC tracks it (UINT32_MAX
					at or above it, or unread: held), else 0; freed once
					the garbage is known */
	uint32_t *first;             /* its run's start in dst (the runs stay under 2**32) */
	uint32_t *count;             /* its run's length */
	size_t n, cap;
	uint32_t *dst;               /* the runs, one after another (HEAP_NO_NODE: no object) */
	size_t ne, cape;
	uint32_t cur;                /* the node whose run is being read; HEAP_NO_NODE none */
	bool failed;                 /* out of memory or over the budget: no retained sizes */
};
#define HEAP_NO_NODE 0x7fffffffu
#define HEAP_COUNTED 0x80000000u
/* (12 bytes, not 16: the index holds one per object) */
struct __attribute__((packed)) heap_node_ref {
	uint64_t addr;
	/* its node (HEAP_NO_NODE: seen after the graph failed), with
	 * HEAP_COUNTED once the census counted it (else only a reference to
	 * it was read so far) */
	uint32_t node;
};
struct heap_big_size {
	uint64_t node1;              /* node + 1 */
	uint64_t size;
};
struct heap_pending {
	uint64_t obj;
	uint32_t node;
};

/* One census in progress. */
#define HEAP_AHEAD 8

struct census {
	struct py_ctx *c;
	struct model_heap *h;
	struct addrtab types;        /* struct heap_type, by address */
	uint64_t *type_addrs;        /* the proven types' addresses, by id - 1 */
	size_t ntype_addrs, captype_addrs;
	uint64_t inexact_objects;    /* objects whose size could not be read */
	uint64_t mimalloc_objects;   /* a free-threaded build's, found in mimalloc's heaps */
	struct big big[MODEL_HEAP_LARGEST];
	size_t nbig;
	/* reach.c: the untracked objects still to walk (those seen are the
	 * graph's index), and subtype_traverse (Python classes' tp_traverse;
	 * 0 unknown) */
	struct heap_pending *stack;
	size_t nstack, capstack;
	/* the references read but not yet visited: each one's object and
	 * index slot are fetched into the cache while the ones before it are
	 * visited (on 10 M objects, most of the time is those misses) */
	uint64_t ahead[HEAP_AHEAD];
	unsigned nahead, ahead_at;
	uint64_t subtype_traverse;
	uint64_t unreadable;         /* references to no readable object */
	uint64_t *watch;             /* py_options.heap_watch, sorted */
	struct big *watched;         /* those found (nwatch at most) */
	size_t nwatched;
	/* the anonymous mappings (memory.c), sorted, to tell where an object lies */
	const struct dump_vma **anon;
	size_t nanon;
	size_t nwatch;
	struct heap_graph g;
};

/* ---- types.c ---- */

/* OBJ, of TYPE and SIZE (BUFFER of it outside the object), counted: among
 * the largest?  One heap --diff asked about? */
void heap_seen(struct census *k, uint64_t obj, uint64_t type, uint64_t size, uint64_t buffer);

/* TYPE's entry, proven a type on first sight; NULL when it is not. */
struct heap_type *heap_type_entry(struct census *k, uint64_t type);
/* TYPE's tp_traverse (after tp_flags and tp_doc in PyTypeObject,
 * Include/cpython/object.h, 3.6-3.15) into *TRAV: a PC_* code. */
int heap_type_traverse(struct py_ctx *c, uint64_t type, uint64_t *trav);
/* qsort's and bsearch's order of uint64_t */
int heap_cmp_u64(const void *a, const void *b);

/* ---- memory.c ---- */

/* The mappings split into files, stacks and anonymous memory into
 * k->h->memory; the anonymous ones kept for heap_memory_object. */
void heap_memory_init(struct census *k);
/* [START, END), memory that glibc's heap_info proves reserved (no access):
 * the part of it the dump records as anonymous moved to the reserved;
 * that part's bytes. */
uint64_t heap_memory_reserved(struct census *k, uint64_t start, uint64_t end);
/* The modules' zero-initialised data (their .bss) in the anonymous
 * memory: k->h->memory.modules_bss. */
void heap_memory_modules(struct census *k);
/* OBJ, of SIZE (BUFFER of it outside the object), counted: in anonymous
 * memory? */
void heap_memory_object(struct census *k, uint64_t obj, uint64_t size, uint64_t buffer);
void heap_memory_free(struct census *k);

/* The offsets of the references the census follows in an object of a
 * walk W of HW_FUNCTION or HW_CODE (reach.c's edges, path.c's steps), and
 * their names as a path writes them (*ATTR); -1 one the layout lacks.
 * Returns how many (0: another walk). */
#define HEAP_FIXED_REFS 5
static inline int heap_fixed_refs(const struct py_layout *L, int w, int64_t at[HEAP_FIXED_REFS],
				  const char *const **attr)
{
	static const char *const function[] = { ".__defaults__", ".__kwdefaults__", ".__closure__", ".__code__" };
	static const char *const code[] = { ".co_consts", ".co_names", ".co_filename", ".co_name", ".co_qualname" };
	if (w == HW_FUNCTION) {
		at[0] = L->function_defaults;
		at[1] = L->function_kwdefaults;
		at[2] = L->function_closure;
		at[3] = L->function_code;
		*attr = function;
		return 4;
	}
	if (w == HW_CODE) {
		at[0] = L->code_consts;
		at[1] = L->code_names;
		at[2] = L->code_filename;
		at[3] = L->code_name;
		at[4] = L->code_qualname;
		*attr = code;
		return 5;
	}
	return 0;
}

/* ---- reach.c ---- */

/* The walk of the untracked: subtype_traverse found (from the builtins'
 * __loader__, a Python class), for interpreter HEAD. */
void heap_reach_init(struct census *k, uint64_t head);
/* Every object the GC does not track that OBJ (a tracked one, of type T,
 * the graph's NODE) holds, and all that those hold, counted once each in
 * their type's ucount and ubytes. */
void heap_reach(struct census *k, uint64_t obj, uint32_t node, const struct heap_type *t);
void heap_reach_free(struct census *k);

/* ---- retain.c ---- */

/* OBJ counted: 0 the first time, its node *NODE (made unless a reference
 * made it; HEAP_NO_NODE when the graph has failed: the index, which is
 * also the census's set of the objects seen, goes on), 1 when it was
 * counted before (*NODE its node), -1 out of memory (not kept). */
int heap_graph_claim(struct census *k, uint64_t obj, uint32_t *node);
/* A node claim made: its object OBJ, of the type whose id is TYPE_ID and
 * of SIZE, counted (TRACKED: on the GC's lists). */
void heap_graph_set(struct census *k, uint32_t node, uint64_t obj, uint32_t type_id, uint64_t size, bool tracked);
/* The size of node V (counted) */
static inline uint64_t heap_node_size(const struct heap_graph *g, uint32_t v)
{
	const struct heap_big_size *b;
	if (g->size[v] != UINT32_MAX)
		return g->size[v];
	b = addrtab_find(&g->big, (uint64_t)v + 1);
	return b ? b->size : UINT32_MAX;
}
/* The address of the type of node V: 0 for one only referred to, never
 * counted (the census did not read it: its page, its list) */
static inline uint64_t heap_node_type(const struct census *k, uint32_t v)
{
	return k->g.type[v] ? k->type_addrs[k->g.type[v] - 1] : 0;
}
/* OBJ referred to: its node, made when it has none (not counted:
 * heap_graph_claim counts it later); HEAP_NO_NODE when out of memory. */
uint32_t heap_graph_ref(struct census *k, uint64_t obj);
/* The references edges() reads from NODE start, one to each node (from
 * heap_graph_claim or heap_graph_ref; HEAP_NO_NODE: no object), and end. */
void heap_graph_begin(struct census *k, uint32_t node);
void heap_graph_edge(struct census *k, uint32_t node);
void heap_graph_end(struct census *k);
/* The graph rooted at the sys.modules, sys.__dict__ and builtins of every
 * interpreter from HEAD and at the frames' locals the walk read (the
 * report's threads): the dominators, each object's retained size,
 * the largest retainers with their paths, into k->h->retained. */
void heap_retain(struct census *k, uint64_t head);
void heap_graph_free(struct census *k);

/* ---- path.c ---- */

/* How the object at CHILD is reached from the object at PARENT (a node of
 * type T), in Python's words appended to the memstream OUT: "[3]",
 * "['key']", ".name" (a key of a namespace, NS: a module's or an
 * instance's __dict__), ".cell_contents"; nothing when CHILD is PARENT's
 * namespace (a module's or an instance's __dict__), *NS then set. */
void heap_path_step(struct census *k, uint64_t parent, const struct heap_type *t, uint64_t child, bool *ns,
		    FILE *out);

/* The rule of TYPE (t->addr): t->rule, t->owner filled. */
void heap_sizeof_rule(struct py_ctx *c, struct heap_type *t);
/* The namespace (tp_dict) of the class at TYPE into *DICT: 0 (*DICT 0 for
 * a static type, whose namespace is no heap's), -1 not in the dump. */
int heap_type_dict(struct py_ctx *c, uint64_t type, uint64_t *dict);
/* The references the census follows in the class TYPE: its namespace
 * (tp_dict), its bases (tp_bases) and its MRO (tp_mro), each 0 when a
 * static type's (not its heap) or absent; -1 when not read. */
#define HEAP_TYPE_REFS 3
int heap_type_refs(struct py_ctx *c, uint64_t type, uint64_t refs[HEAP_TYPE_REFS]);
/* sys.getsizeof of the object at OBJ of type T: 0 and *SIZE (and *BUFFER,
 * of it what the object holds outside itself: a bytearray's, an
 * array.array's or a numpy array's own allocation; else 0), or -1 when
 * what __sizeof__ reads is not captured. */
int heap_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size, uint64_t *buffer);

/* The first part of an allocator's state not read (cmalloc.c, pymalloc.c):
 * said once, in BUF */
struct heap_part {
	const char *why;             /* NULL: all read */
	char buf[200];
};
void heap_part_unread(struct heap_part *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The bytes sys.getsizeof adds for an object's GC header: none in a
 * free-threaded build, whose objects keep their GC state in ob_gc_bits
 * (_PyType_PreHeaderSize, Include/internal/pycore_object.h, 3.13) */
static inline uint64_t heap_gc_head_size(const struct py_layout *L)
{
	return py_layout_free_threaded(L) ? 0 : (uint64_t)L->sizeof_gc_head;
}

/* ---- mimalloc.c ---- */

/* The visitor of a free-threaded build's objects: OBJECT for each one the
 * GC tracks (WHAT: where it was found), the walk stopped when it returns
 * false; UNREAD for each line of what could not be read. */
struct heap_mimalloc_visit {
	struct py_ctx *c;
	bool (*object)(void *arg, uint64_t obj, const char *what);
	void (*unread)(void *arg, const char *line);
	void *arg;
};
/* Every object the GC tracks in the GC heaps of every thread state of
 * every interpreter from HEAD, to V (as mi_heap_visit_blocks visits them
 * for the collector). */
void heap_mimalloc_objects(const struct heap_mimalloc_visit *v, uint64_t head);
/* Does the GC of a free-threaded build track OBJ (its ob_gc_bits)? */
bool heap_mimalloc_tracked(struct py_ctx *c, uint64_t obj);
/* OBJ's reference count in a free-threaded build, UINT64_MAX when not
 * known (not read, immortal, or deferred: as if held from outside). */
uint64_t heap_mimalloc_refcnt(struct py_ctx *c, uint64_t obj);
/* mimalloc's arenas, through the symbols S gives of MOD, the
 * interpreter's module: MEM->mimalloc, or why not in its mimalloc_unread. */
void heap_mimalloc_memory(struct py_ctx *c, struct symbols *s, struct dump_module *mod,
			  struct model_heap_memory *mem);

/* ---- cmalloc.c ---- */

/* glibc's malloc state, through the symbols S gives of the C library:
 * k->h->memory.malloc, or why not in its malloc_unread. */
void heap_malloc_read(struct census *k, struct symbols *s);

/* ---- pymalloc.c ---- */

/* pymalloc's arenas (3.6-3.11 through the symbols S gives of MOD, the
 * interpreter's module; 3.12+ each interpreter's from HEAD):
 * k->h->memory.pymalloc, or why not in its pymalloc_unread. */
void heap_pymalloc_read(struct census *k, struct symbols *s, struct dump_module *mod, uint64_t head);

/* The census of every interpreter (from HEAD; 3.7 and 3.8 keep the lists
 * in RUNTIME, 3.6 in the static state _PyGC_generation0, at GEN0, points
 * into) into c->r->heap; the C heap and pymalloc's arenas through S's
 * symbols (MOD: the interpreter's module). */
void py_heap_census(struct py_ctx *c, struct symbols *s, struct dump_module *mod, uint64_t runtime, uint64_t head,
		    uint64_t gen0);

#endif
