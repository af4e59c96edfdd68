/* The heap census: every object on the GC's lists (each generation's and
 * the permanent one, of every interpreter; 3.6 keeps one set in
 * gcmodule.c, 3.7 and 3.8 in the runtime), counted by type, with sys.getsizeof's size (sizeof.c).
 *
 * A list is a ring of PyGC_Head: 3.8+ _gc_next and _gc_prev (its low two
 * bits flags, Include/internal/pycore_gc.h), 3.6 and 3.7 gc_next and
 * gc_prev pointers; the object follows its header.  Every step is checked
 * against the dump: a node whose back link is not the node before it, or
 * whose type is no type, ends that list, said in the census's unread
 * lines, and the census is not exact. */
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/walk/walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPF_TYPE_SUBCLASS (1ul << 31)   /* Include/object.h */

/* objects read at most, over every list (a budget, not CPython's) */
#define HEAP_MAX_OBJECTS (1ull << 32)

/* one of the largest objects: a min-heap by bytes while the lists are read */
struct big {
	uint64_t address, type, bytes;
};

struct census {
	struct py_ctx *c;
	struct model_heap *h;
	struct addrtab types;        /* struct heap_type, by address */
	uint64_t inexact_objects;    /* objects whose size could not be read */
	struct big big[MODEL_HEAP_LARGEST];
	size_t nbig;
};

/* OBJ, of TYPE and BYTES, among the largest so far (ties: the first kept) */
static void keep_big(struct census *k, uint64_t obj, uint64_t type, uint64_t bytes)
{
	struct big *h = k->big, b = { obj, type, bytes };
	size_t i;
	if (k->nbig < MODEL_HEAP_LARGEST) {
		for (i = k->nbig++; i && h[(i - 1) / 2].bytes > b.bytes; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = b;
		return;
	}
	if (bytes <= h[0].bytes)
		return;
	/* the smallest goes: sift B down from the root */
	for (i = 0;;) {
		size_t l = 2 * i + 1, m = l + 1 < k->nbig && h[l + 1].bytes < h[l].bytes ? l + 1 : l;
		if (l >= k->nbig || h[m].bytes >= b.bytes)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = b;
}

static int big_desc(const void *a, const void *b)
{
	const struct big *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static void unread(struct census *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unread(struct census *k, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ptrvec_push(k->c->a, &k->h->unread, arena_strdup(k->c->a, line));
	k->h->exact = false;
}

/* The cached entry of TYPE, proven a type (its own type's flags say it
 * is a type's) on first sight; NULL when it is not. */
static struct heap_type *type_entry(struct census *k, uint64_t type)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	bool found;
	struct heap_type *t = addrtab_get(&k->types, type, &found);
	if (!t)
		return NULL;
	if (found)
		return t->proven ? t : NULL;
	uint64_t meta, mflags = 0, flags = 0;
	int64_t basic = -1, item = -1;
	if (py_rd_ptr(c, type + L->object_type, &meta) != PC_OK ||
	    dump_read(c->d, meta + L->type_flags, &mflags, sizeof(mflags)) != PC_OK ||
	    !(mflags & TPF_TYPE_SUBCLASS) ||
	    dump_read(c->d, type + L->type_flags, &flags, sizeof(flags)) != PC_OK ||
	    py_rd_i64(c, type + L->type_basicsize, &basic) != PC_OK ||
	    py_rd_i64(c, type + L->type_itemsize, &item) != PC_OK ||
	    basic < 16 || basic > (1 << 24) || item < 0 || item > (1 << 16))
		return NULL;
	struct heap_type copy = { .addr = type, .proven = true, .basicsize = basic, .itemsize = item,
				  .flags = flags };
	heap_sizeof_rule(c, &copy);
	/* the rule's look-ups may have grown the table */
	if ((t = addrtab_get(&k->types, type, &found)) == NULL)
		return NULL;
	*t = copy;
	return t;
}

/* The ring at HEAD (a PyGC_Head): its objects counted into *N. */
static void walk_list(struct census *k, uint64_t head, const char *what, uint64_t *n)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	/* 3.8+: flags in _gc_prev's two low bits and _gc_next's lowest */
	uint64_t mask = L->minor >= 8 ? ~(uint64_t)3 : ~(uint64_t)0;
	uint64_t prev = head, node, back;
	if (py_rd_ptr(c, head, &node) != PC_OK) {
		unread(k, "%s: its list head (0x%llx) is not in the dump", what, (unsigned long long)head);
		return;
	}
	node &= mask;
	while (node != head) {
		if (k->h->objects >= HEAP_MAX_OBJECTS) {
			unread(k, "%s: the census stopped at %llu objects (its budget)", what, HEAP_MAX_OBJECTS);
			return;
		}
		if ((k->h->objects & 0xffff) == 0 && py_out_of_time(c)) {
			unread(k, "%s: the time budget ran out at %llu objects", what, (unsigned long long)k->h->objects);
			return;
		}
		uint64_t obj = node + (uint64_t)L->sizeof_gc_head, type, next, size;
		if (py_rd_ptr(c, node + 8, &back) != PC_OK || (back & mask) != prev) {
			unread(k, "%s: the list breaks at 0x%llx (its back link is not the object before it)", what,
			       (unsigned long long)node);
			return;
		}
		struct heap_type *t;
		if (py_rd_ptr(c, obj + L->object_type, &type) != PC_OK || (t = type_entry(k, type)) == NULL) {
			unread(k, "%s: the object at 0x%llx has no readable type (0x%llx); the list ends there", what,
			       (unsigned long long)obj, (unsigned long long)type);
			return;
		}
		if (heap_sizeof(c, obj, t, &size) != 0) {
			size = (uint64_t)t->basicsize + (uint64_t)L->sizeof_gc_head;
			k->inexact_objects++;
		}
		if (n == &k->h->permanent) {
			t->permanent++;
			t->permanent_bytes += size;
		}
		t->count++;
		t->bytes += size;
		keep_big(k, obj, type, size);
		k->h->objects++;
		k->h->bytes += size;
		(*n)++;
		if (py_rd_ptr(c, node, &next) != PC_OK) {
			unread(k, "%s: the list breaks after 0x%llx (its next link is not in the dump)", what,
			       (unsigned long long)node);
			return;
		}
		prev = node;
		node = next & mask;
	}
}

/* 3.7 to 3.13: the gc state's generation0 follows its generations (at
 * the next pointer's alignment) and points at the first, which proves
 * where they are.  The layout of one minor version can differ there:
 * 3.13.0's PyGC_Head is 8-aligned, later 3.13 releases' Py_ALIGNED(1 <<
 * _PyObject_ALIGNMENT_SHIFT) makes it 4-aligned, which moves the lists
 * 4 bytes.  *GENS, the table's, becomes the one within 8 bytes that
 * generation0 proves; false when none does. */
static bool prove_generations(struct census *k, uint64_t *gens)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	if (L->minor < 7 || L->minor > 13)
		return true;
	static const int64_t tries[] = { 0, -4, 4, -8, 8 };
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		uint64_t g = *gens + (uint64_t)tries[i], gen0;
		uint64_t at = (g + 3 * (uint64_t)L->sizeof_gc_generation + 7) & ~(uint64_t)7;
		if (py_rd_ptr(c, at, &gen0) == PC_OK && gen0 == g) {
			*gens = g;
			return true;
		}
	}
	return false;
}

/* The lists of one gc state, whose generations start at GENS and whose
 * permanent generation is at PERM (0: none). */
static void walk_state(struct census *k, uint64_t gens, uint64_t perm)
{
	const struct py_layout *L = k->c->L;
	uint64_t table = gens;
	if (!prove_generations(k, &gens)) {
		unread(k, "the GC's lists are not where this version's layout puts them (0x%llx: no generation0 "
		       "points there): its build differs; its debug file (--debug-dir) gives its layout",
		       (unsigned long long)table);
		return;
	}
	static const char *const names[] = { "generation 0", "generation 1", "generation 2" };
	for (int g = 0; g < 3; g++)
		walk_list(k, gens + (uint64_t)g * (uint64_t)L->sizeof_gc_generation, names[g], &k->h->generation[g]);
	if (perm)
		walk_list(k, perm, "the permanent generation", &k->h->permanent);
}

static int by_bytes(const void *a, const void *b)
{
	const struct model_heap_type *x = *(const struct model_heap_type *const *)a;
	const struct model_heap_type *y = *(const struct model_heap_type *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* The census's types into the model, most bytes first. */
static void types_out(struct census *k)
{
	struct py_ctx *c = k->c;
	for (size_t i = 0; i < k->types.cap; i++) {
		struct heap_type *t = addrtab_slot(&k->types, i);
		if (!t || !t->count)
			continue;
		struct model_heap_type *m = arena_alloc(c->a, sizeof(*m));
		if (!m)
			return;
		m->address = t->addr;
		m->count = t->count;
		m->bytes = t->bytes;
		m->permanent = t->permanent;
		m->permanent_bytes = t->permanent_bytes;
		m->exact = t->rule != HS_UNKNOWN;
		m->sizeof_owner = t->owner;
		ptrvec_push(c->a, &k->h->types, m);
	}
	/* names after the walk: each read may grow the table */
	for (size_t i = 0; i < k->h->types.n; i++) {
		struct model_heap_type *m = k->h->types.items[i];
		py_type_qualname(c, m->address, &m->module, &m->qualname);
		if (!m->exact)
			k->h->exact = false;
	}
	qsort(k->h->types.items, k->h->types.n, sizeof(void *), by_bytes);
	qsort(k->big, k->nbig, sizeof(k->big[0]), big_desc);
	for (size_t i = 0; i < k->nbig; i++) {
		struct model_heap_object *o = arena_alloc(c->a, sizeof(*o));
		if (!o)
			return;
		o->address = k->big[i].address;
		o->bytes = k->big[i].bytes;
		py_type_qualname(c, k->big[i].type, &o->module, &o->qualname);
		ptrvec_push(c->a, &k->h->largest, o);
	}
}

void py_heap_census(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t gen0)
{
	const struct py_layout *L = c->L;
	struct model_heap *h = arena_alloc(c->a, sizeof(*h));
	if (!h)
		return;
	c->r->heap = h;
	h->exact = true;
	uint64_t t0 = py_now_ns();
	struct census k = { .c = c, .h = h, .types = ADDRTAB_INIT(struct heap_type) };
	if (py_layout_free_threaded(L)) {
		unread(&k, "a free-threaded build keeps its objects in mimalloc's heaps, which pycore does not "
		       "read yet: no object is counted");
	} else if (L->sizeof_gc_generation <= 0 || L->sizeof_gc_head <= 0) {
		unread(&k, "%s", "the GC's lists are not in this version's layout: no object is counted");
	} else if (L->minor == 6) {
		/* _PyGC_generation0 points at generations[0]'s head */
		uint64_t gens;
		if (gen0 && py_rd_ptr(c, gen0, &gens) == PC_OK && gens)
			walk_state(&k, gens, 0);
		else
			unread(&k, "%s", "CPython 3.6 keeps its GC lists in gcmodule.c, found by the symbol "
			       "_PyGC_generation0, which this dump's files do not give: no object is counted");
	} else if (L->minor <= 8) {
		if (runtime && L->runtime_gc_generations >= 0)
			walk_state(&k, runtime + (uint64_t)L->runtime_gc_generations,
				   L->runtime_gc_permanent >= 0 ? runtime + (uint64_t)L->runtime_gc_permanent : 0);
		else
			unread(&k, "%s", "the runtime's GC state is not known");
	} else {
		struct addrtab seen = ADDRTAB_INIT(uint64_t);
		for (uint64_t in = head; in && addrtab_add(&seen, in) == 0 && !c->timed_out;) {
			walk_state(&k, in + (uint64_t)L->interp_gc_generations,
				   L->interp_gc_permanent >= 0 ? in + (uint64_t)L->interp_gc_permanent : 0);
			if (py_rd_ptr(c, in + L->interp_next, &in) != PC_OK)
				break;
		}
		addrtab_free(&seen);
	}
	if (k.inexact_objects)
		unread(&k, "the size of %llu objects could not be read: their type's basic size is counted",
		       (unsigned long long)k.inexact_objects);
	types_out(&k);
	addrtab_free(&k.types);
	h->read_ms = (double)(py_now_ns() - t0) / 1e6;
	if (!h->exact && h->unread.n)
		c->r->incomplete = true;
}
