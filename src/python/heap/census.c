/* The heap census: every object on the GC's lists (each generation's and
 * the permanent one, of every interpreter; 3.6 keeps one set in
 * gcmodule.c, 3.7 and 3.8 in the runtime), counted by type with
 * sys.getsizeof's size (sizeof.c), and what each holds that the GC does
 * not track (reach.c).
 *
 * A list is a ring of PyGC_Head: 3.8+ _gc_next and _gc_prev (its low two
 * bits flags, Include/internal/pycore_gc.h), 3.6 and 3.7 gc_next and
 * gc_prev pointers; the object follows its header.  Every step is checked
 * against the dump: a node whose back link is not the node before it, or
 * whose type is no type, stops the walk, which goes on back from the
 * list's end to that node; both are said in the census's unread lines,
 * and the census is not exact.  A free-threaded build has no lists: the
 * objects its GC tracks are those mimalloc.c finds in its heaps. */
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/walk/walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* objects read at most, over every list (a budget, not CPython's) */
#define HEAP_MAX_OBJECTS (1ull << 32)

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

/* One object OBJ the GC tracks (a list's node's, or a block's of
 * mimalloc): counted into *N and the census, with what it holds; false
 * (and said, WHAT naming where it was found) when its type is no type. */
static bool count_object(struct census *k, uint64_t obj, uint64_t *n, const char *what)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	uint64_t type = 0, size, buffer;
	struct heap_type *t;
	if (py_rd_ptr(c, obj + L->object_type, &type) != PC_OK || (t = heap_type_entry(k, type)) == NULL) {
		unread(k, "%s: the object at 0x%llx has no readable type (0x%llx): not counted, nor is what it holds", what,
		       (unsigned long long)obj, (unsigned long long)type);
		return false;
	}
	if (heap_sizeof(c, obj, t, &size, &buffer) != 0) {
		size = (uint64_t)t->basicsize + heap_gc_head_size(L);
		k->inexact_objects++;
	}
	if (n == &k->h->permanent) {
		t->permanent++;
		t->permanent_bytes += size;
	}
	t->count++;
	t->bytes += size;
	heap_seen(k, obj, type, size, buffer);
	uint32_t node;
	if (heap_graph_claim(k, obj, &node) == 0)
		heap_graph_set(k, node, obj, t->id, size, true);
	if (t->walk != HW_NONE || t->instance)
		heap_reach(k, obj, node, t);
	k->h->objects++;
	k->h->bytes += size;
	(*n)++;
	return true;
}

/* The ring at HEAD (a PyGC_Head) from its first node on (BACK: from its
 * last, by the back links) until STOP or HEAD comes again: its objects
 * counted into *N.  Each node's link the other way must point at the node
 * before it.  Returns the last node counted (HEAD: none); *BROKEN set
 * when the walk stopped short, said in the census's unread lines. */
static uint64_t walk_ring(struct census *k, uint64_t head, uint64_t stop, bool back, const char *what,
			  uint64_t *n, bool *broken)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	/* 3.8+: flags in _gc_prev's two low bits and _gc_next's lowest */
	uint64_t mask = L->minor >= 8 ? ~(uint64_t)3 : ~(uint64_t)0;
	uint64_t to = back ? 8 : 0, from = back ? 0 : 8, prev = head, node, link;
	*broken = true;
	if (py_rd_ptr(c, head + to, &node) != PC_OK) {
		unread(k, "%s: its list head (0x%llx) is not in the dump", what, (unsigned long long)head);
		return head;
	}
	for (node &= mask; node != head && node != stop; node = link & mask) {
		if (k->h->objects >= HEAP_MAX_OBJECTS) {
			unread(k, "%s: the census stopped at %llu objects (its budget)", what, HEAP_MAX_OBJECTS);
			return prev;
		}
		if ((k->h->objects & 0xffff) == 0 && py_out_of_time(c)) {
			unread(k, "%s: the time budget ran out at %llu objects", what, (unsigned long long)k->h->objects);
			return prev;
		}
		if (py_rd_ptr(c, node + from, &link) != PC_OK) {
			unread(k, "%s: the list breaks after 0x%llx: its %s object, 0x%llx, is not in the dump", what,
			       (unsigned long long)prev, back ? "previous" : "next", (unsigned long long)node);
			return prev;
		}
		if ((link & mask) != prev) {
			unread(k, "%s: the list breaks at 0x%llx (its %s link is not the object %s it)", what,
			       (unsigned long long)node, back ? "next" : "back", back ? "after" : "before");
			return prev;
		}
		uint64_t ahead;   /* the next node, fetched into the cache while this one is counted */
		if (dump_read(c->d, node + to, &ahead, 8) == PC_OK && (ahead &= mask) != head) {
			dump_prefetch(c->d, ahead);
			dump_prefetch(c->d, ahead + (uint64_t)L->sizeof_gc_head + 8);   /* ob_type */
			addrtab_prefetch(&k->g.index, ahead + (uint64_t)L->sizeof_gc_head);
		}
		if (!count_object(k, node + (uint64_t)L->sizeof_gc_head, n, what))
			return prev;
		if (py_rd_ptr(c, node + to, &link) != PC_OK) {
			unread(k, "%s: the list breaks after 0x%llx (its %s link is not in the dump)", what,
			       (unsigned long long)node, back ? "back" : "next");
			return node;
		}
		prev = node;
	}
	*broken = false;
	return prev;
}

/* The list at HEAD: forward, and where it breaks, back from its end to
 * the break (what lies between the two is not counted). */
static void walk_list(struct census *k, uint64_t head, const char *what, uint64_t *n)
{
	bool broken;
	uint64_t last = walk_ring(k, head, 0, false, what, n, &broken), before = *n;
	if (!broken)
		return;
	walk_ring(k, head, last, true, what, n, &broken);
	unread(k, "%s: %llu more objects read back from the list's end%s", what,
	       (unsigned long long)(*n - before), broken ? " (that walk broke too)" : "");
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
		       "points there): its build differs; --layout dwarf reads its layout from its debug file "
		       "(--debug-dir)",
		       (unsigned long long)table);
		return;
	}
	static const char *const names[] = { "generation 0", "generation 1", "generation 2" };
	for (int g = 0; g < 3; g++)
		walk_list(k, gens + (uint64_t)g * (uint64_t)L->sizeof_gc_generation, names[g], &k->h->generation[g]);
	if (perm)
		walk_list(k, perm, "the permanent generation", &k->h->permanent);
}

/* a free-threaded build's: an object of mimalloc's GC heaps */
static bool mimalloc_object(void *arg, uint64_t obj, const char *what)
{
	struct census *k = arg;
	count_object(k, obj, &k->mimalloc_objects, what);   /* (false: said, and the next is read) */
	if ((k->h->objects & 0xffff) == 0 && py_out_of_time(k->c)) {
		unread(k, "%s: the time budget ran out at %llu objects", what, (unsigned long long)k->h->objects);
		return false;
	}
	return true;
}

static void mimalloc_unread(void *arg, const char *line)
{
	unread(arg, "%s", line);
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

/* N objects kept (struct big) into V, their types named */
static void objects_out(struct py_ctx *c, const struct big *b, size_t n, struct ptrvec *v)
{
	for (size_t i = 0; i < n; i++) {
		struct model_heap_object *o = arena_alloc(c->a, sizeof(*o));
		if (!o)
			return;
		o->address = b[i].address;
		o->bytes = b[i].bytes;
		py_type_qualname(c, b[i].type, &o->module, &o->qualname);
		ptrvec_push(c->a, v, o);
	}
}

/* The census's types into the model, most bytes first. */
static void types_out(struct census *k)
{
	struct py_ctx *c = k->c;
	for (size_t i = 0; i < k->types.cap; i++) {
		struct heap_type *t = addrtab_slot(&k->types, i);
		for (int untracked = 0; t && untracked < 2; untracked++) {
			uint64_t count = untracked ? t->ucount : t->count;
			struct model_heap_type *m = count ? arena_alloc(c->a, sizeof(*m)) : NULL;
			if (!m)
				continue;
			*m = (struct model_heap_type){ .address = t->addr, .count = count,
						       .bytes = untracked ? t->ubytes : t->bytes,
						       .permanent = untracked ? 0 : t->permanent,
						       .permanent_bytes = untracked ? 0 : t->permanent_bytes,
						       .exact = t->rule != HS_UNKNOWN, .sizeof_owner = t->owner };
			ptrvec_push(c->a, untracked ? &k->h->untracked_types : &k->h->types, m);
		}
	}
	/* names after the walk: each read may grow the table */
	struct ptrvec *lists[] = { &k->h->types, &k->h->untracked_types };
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			struct model_heap_type *m = lists[l]->items[i];
			py_type_qualname(c, m->address, &m->module, &m->qualname);
			if (!m->exact)
				k->h->exact = false;
		}
		qsort(lists[l]->items, lists[l]->n, sizeof(void *), by_bytes);
	}
	qsort(k->big, k->nbig, sizeof(k->big[0]), big_desc);
	objects_out(c, k->big, k->nbig, &k->h->largest);
	objects_out(c, k->watched, k->nwatched, &k->h->watched);
}

void py_heap_census(struct py_ctx *c, struct symbols *s, struct dump_module *mod, uint64_t runtime, uint64_t head,
		    uint64_t gen0)
{
	const struct py_layout *L = c->L;
	struct model_heap *h = arena_alloc(c->a, sizeof(*h));
	if (!h)
		return;
	c->r->heap = h;
	h->exact = true;
	uint64_t t0 = py_now_ns();
	struct census k = { .c = c, .h = h, .types = ADDRTAB_INIT(struct heap_type),
			    .g = { .index = ADDRTAB_INIT_DENSE(struct heap_node_ref),
				   .big = ADDRTAB_INIT(struct heap_big_size), .cur = HEAP_NO_NODE } };
	heap_reach_init(&k, head);
	heap_memory_init(&k);
	heap_memory_modules(&k);
	heap_malloc_read(&k, s);
	heap_pymalloc_read(&k, s, mod, head);
	if (py_layout_free_threaded(L))
		heap_mimalloc_memory(c, s, mod, &h->memory);
	if (c->opt->heap_nwatch && (k.watch = malloc(c->opt->heap_nwatch * sizeof(uint64_t))) != NULL &&
	    (k.watched = malloc(c->opt->heap_nwatch * sizeof(*k.watched))) != NULL) {
		memcpy(k.watch, c->opt->heap_watch, c->opt->heap_nwatch * sizeof(uint64_t));
		k.nwatch = c->opt->heap_nwatch;
		qsort(k.watch, k.nwatch, sizeof(uint64_t), heap_cmp_u64);
	}
	h->found_in = py_layout_free_threaded(L) ? "mimalloc heaps" : "gc lists";
	if (py_layout_free_threaded(L)) {
		struct heap_mimalloc_visit v = { .c = c, .object = mimalloc_object, .unread = mimalloc_unread, .arg = &k };
		heap_mimalloc_objects(&v, head);
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
	h->unreadable_references = k.unreadable;
	if (k.unreadable)
		unread(&k, "%llu references led to no readable object: what they hold is not counted",
		       (unsigned long long)k.unreadable);
	heap_reach_free(&k);
	heap_retain(&k, head);
	heap_graph_free(&k);
	types_out(&k);
	heap_memory_free(&k);
	free(k.watch);
	free(k.watched);
	addrtab_free(&k.types);
	free(k.type_addrs);
	h->read_ms = (double)(py_now_ns() - t0) / 1e6;
	if (!h->exact && h->unread.n)
		c->r->incomplete = true;
}
