/* The objects the GC does not track (strings, numbers, bytes, and the
 * tuples and dicts it has untracked), reached from those it does through
 * the references pycore reads: the items of lists and tuples, the keys and
 * values of dicts, the keys of sets and frozensets, a cell's object, a
 * module's dict, and an instance of a Python class's attributes (its
 * __dict__ or values, its slots; subtype_traverse's) and what its built-in
 * base holds.  Each is counted once, in its type's ucount and ubytes, and
 * an untracked container is walked in turn.
 *
 * "Tracked" is proven, not assumed: an object of a GC type is on a list
 * when its header's next link is set and the next node's back link
 * (masked of its flags, 3.8+) points at it; the interpreter's static
 * objects (3.12+'s empty tuple, its static strings) fail that and are
 * counted, as gc.is_tracked() says; static types (the interpreter's image,
 * not its heap) are not.  A free-threaded build has no lists: there its
 * ob_gc_bits say (mimalloc.c). */
#include "python/heap/heap.h"
#include "python/objects/objects.h"

#include <stdlib.h>
#include <string.h>

/* references walked at most from one container (a corrupt size is no
 * reason to read gigabytes) */
#define MAX_ITEMS (1ll << 31)

void heap_reach_init(struct census *k, uint64_t head)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	uint64_t builtins, loader;
	/* builtins.__loader__ is importlib's BuiltinImporter, a class
	 * statement's class: its tp_traverse is subtype_traverse */
	if (head && L->interp_builtins >= 0 && py_rd_ptr(c, head + L->interp_builtins, &builtins) == PC_OK &&
	    builtins && py_dict_get_str(c, builtins, "__loader__", &loader) == 0 && loader) {
		uint64_t flags = 0, trav;
		if (dump_read(c->d, loader + L->type_flags, &flags, 8) == PC_OK && (flags & TPF_HEAPTYPE) &&
		    heap_type_traverse(c, loader, &trav) == PC_OK)
			k->subtype_traverse = trav;
	}
}

void heap_reach_free(struct census *k)
{
	free(k->stack);
	k->stack = NULL;
}

/* Is OBJ (of a GC type) on one of the GC's lists? */
static bool tracked(struct census *k, uint64_t obj)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	if (py_layout_free_threaded(L))
		return heap_mimalloc_tracked(c, obj);
	uint64_t node = obj - (uint64_t)L->sizeof_gc_head, next, back;
	uint64_t mask = L->minor >= 8 ? ~(uint64_t)3 : ~(uint64_t)0;
	if (py_rd_ptr(c, node, &next) != PC_OK || !next)
		return false;
	next &= mask;
	return py_rd_ptr(c, next + 8, &back) == PC_OK && (back & mask) == node;
}

static void push(struct census *k, uint64_t obj, uint32_t node)
{
	if (k->nstack == k->capstack) {
		size_t cap = k->capstack ? 2 * k->capstack : 1024;
		struct heap_pending *s = realloc(k->stack, cap * sizeof(*s));
		if (!s)
			return;   /* (its references go unwalked: counted in unreadable) */
		k->stack = s;
		k->capstack = cap;
	}
	k->stack[k->nstack++] = (struct heap_pending){ obj, node };
}

/* R, a reference: counted when untracked and not seen yet, and queued
 * when it holds references pycore reads. */
static void reference(struct census *k, uint64_t r)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	uint64_t type, size, buffer;
	struct heap_type *t;
	if (py_rd_ptr(c, r + L->object_type, &type) != PC_OK || (t = heap_type_entry(k, type)) == NULL) {
		k->unreadable++;
		heap_graph_edge(k, HEAP_NO_NODE);
		return;
	}
	if (t->flags & TPF_HAVE_GC) {
		if (t->flags & TPF_TYPE_SUBCLASS) {
			uint64_t flags = 0;
			if (dump_read(c->d, r + L->type_flags, &flags, 8) != PC_OK || !(flags & TPF_HEAPTYPE)) {
				heap_graph_edge(k, HEAP_NO_NODE);
				return;   /* a static type: on no list */
			}
		}
		if (tracked(k, r)) {
			/* (counted when its list is read) */
			heap_graph_edge(k, heap_graph_ref(k, r));
			return;
		}
	}
	uint32_t node;
	int seen = heap_graph_claim(k, r, &node);
	heap_graph_edge(k, node);
	if (seen != 0) {
		if (seen < 0)
			k->unreadable++;
		return;
	}
	if (heap_sizeof(c, r, t, &size, &buffer) != 0) {
		size = (uint64_t)t->basicsize;
		k->inexact_objects++;
	}
	t->ucount++;
	t->ubytes += size;
	heap_seen(k, r, type, size, buffer);
	heap_graph_set(k, node, r, t->id, size, false);
	k->h->untracked_objects++;
	k->h->untracked_bytes += size;
	if (t->walk != HW_NONE || t->instance)
		push(k, r, node);
}

/* R, a reference of the object being walked: visited after the
 * HEAP_AHEAD read after it, its header and its index slot fetched
 * meanwhile (the order of one object's edges does not matter) */
static int visit(struct py_ctx *c, uint64_t key, uint64_t r, void *arg)
{
	struct census *k = arg;
	(void)key;
	if (!r)
		return 0;
	dump_prefetch(c->d, r - 16);   /* a GC header (tracked() reads it) */
	dump_prefetch(c->d, r + 8);    /* ob_type */
	addrtab_prefetch(&k->g.index, r);
	if (k->nahead == HEAP_AHEAD) {
		uint64_t first = k->ahead[k->ahead_at];
		k->ahead[k->ahead_at] = r;
		k->ahead_at = (k->ahead_at + 1) % HEAP_AHEAD;
		reference(k, first);
	} else {
		k->ahead[(k->ahead_at + k->nahead++) % HEAP_AHEAD] = r;
	}
	return 0;
}

/* the references still ahead, visited */
static void visit_rest(struct census *k)
{
	while (k->nahead) {
		uint64_t r = k->ahead[k->ahead_at];
		k->ahead_at = (k->ahead_at + 1) % HEAP_AHEAD;
		k->nahead--;
		reference(k, r);
	}
}

/* a dict's key and its value; a set's key (and 0) */
static int visit_pair(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	visit(c, 0, key, arg);
	visit(c, 0, value, arg);
	return 0;
}

/* the N pointers at ITEMS */
static void visit_array(struct census *k, uint64_t items, int64_t n)
{
	uint64_t buf[64];
	if (n < 0 || n > MAX_ITEMS) {
		k->unreadable++;
		return;
	}
	for (int64_t i = 0; i < n; i += 64) {
		size_t m = (size_t)(n - i < 64 ? n - i : 64);
		if (dump_read(k->c->d, items + 8 * (uint64_t)i, buf, 8 * m) != PC_OK) {
			k->unreadable++;
			return;
		}
		for (size_t j = 0; j < m; j++)
			visit(k->c, 0, buf[j], k);
	}
}

/* the references of OBJ, of type T, the graph's NODE */
static void edges(struct census *k, uint64_t obj, uint32_t node, const struct heap_type *t)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	int64_t n;
	uint64_t p;
	heap_graph_begin(k, node);
	if (t->instance && py_instance_referents(c, obj, t->addr, visit, k) != 0)
		k->unreadable++;
	switch (t->walk) {
	case HW_LIST:
		if (py_rd_i64(c, obj + L->var_size, &n) != PC_OK || py_rd_ptr(c, obj + L->list_item, &p) != PC_OK)
			k->unreadable++;
		else if (n && p)
			visit_array(k, p, n);
		break;
	case HW_TUPLE:
		if (py_rd_i64(c, obj + L->var_size, &n) != PC_OK)
			k->unreadable++;
		else
			visit_array(k, obj + L->tuple_item, n);
		break;
	case HW_DICT:
		if (py_dict_items(c, obj, visit_pair, k) != 0)
			k->unreadable++;
		break;
	case HW_SET:
		if (py_set_items(c, obj, (size_t)MAX_ITEMS, visit_pair, k) != 0)   /* (key, 0) */
			k->unreadable++;
		break;
	case HW_CELL:
	case HW_MODULE:   /* the one object at ob_ref, md_dict */
		if (py_rd_ptr(c, obj + (t->walk == HW_CELL ? L->cell_ref : L->module_dict), &p) != PC_OK)
			k->unreadable++;
		else
			visit(c, 0, p, k);
		break;
	case HW_TYPE: {   /* a class's namespace, bases and MRO; a static type's are not its heap */
		uint64_t refs[HEAP_TYPE_REFS];
		if (heap_type_refs(c, obj, refs) != 0)
			k->unreadable++;
		for (int i = 0; i < HEAP_TYPE_REFS; i++)
			if (refs[i])
				visit(c, 0, refs[i], k);
		break;
	}
	case HW_FUNCTION:
	case HW_CODE: {
		int64_t at[HEAP_FIXED_REFS];
		const char *const *attr;
		int nat = heap_fixed_refs(L, t->walk, at, &attr);
		for (int i = 0; i < nat; i++) {
			if (at[i] < 0)
				continue;   /* (a layout without it: not followed) */
			if (py_rd_ptr(c, obj + (uint64_t)at[i], &p) != PC_OK)
				k->unreadable++;
			else if (p)
				visit(c, 0, p, k);
		}
		break;
	}
	case HW_NONE:
		break;
	}
	visit_rest(k);
	heap_graph_end(k);
}

void heap_reach(struct census *k, uint64_t obj, uint32_t node, const struct heap_type *t)
{
	struct heap_type first = *t;   /* (the type table may grow under edges) */
	edges(k, obj, node, &first);
	while (k->nstack) {
		struct heap_pending r = k->stack[--k->nstack];
		uint64_t type;
		const struct heap_type *rt;
		if (py_rd_ptr(k->c, r.obj + k->c->L->object_type, &type) == PC_OK &&
		    (rt = heap_type_entry(k, type)) != NULL) {
			struct heap_type copy = *rt;   /* (the table may grow under edges) */
			edges(k, r.obj, r.node, &copy);
		}
	}
}
