/* Who holds the memory: the graph of the objects the census counted and
 * the references it follows between them (reach.c's: the items of the
 * exact built-in containers, a dict's keys and values, a cell's object, a
 * module's dict, an instance's attributes), rooted at each interpreter's
 * sys.modules, sys.__dict__ and builtins' __dict__, and at the locals of
 * every Python frame the walk read (but a module's: its globals).
 *
 * An object X dominates Y when every path from the roots to Y passes
 * through X: Y is freed with X.  X's retained size is its own and that of
 * every object it dominates.  The immediate dominators come from Cooper,
 * Harvey and Kennedy's iteration ("A Simple, Fast Dominance Algorithm",
 * 2001): over the objects in reverse postorder of a depth-first walk from
 * the roots, each one's dominator is the meeting point of its
 * predecessors' dominators in the tree so far, until nothing changes.  A
 * dominator finishes after what it dominates in that walk, so one pass in
 * postorder adds each retained size into its dominator's.
 *
 * The largest retainers (modules and their dicts, and the roots, which
 * hold everything, left out) each get the shortest path from a root, by a
 * breadth-first walk, in Python's words (path.c). */
#include "python/heap/dom.h"
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/walk/walk.h"
#include "util/hugeheap.h"

#include <stdlib.h>
#include <string.h>

/* P, N bytes just allocated (or NULL): an array of 8 MB or more is read
 * and written at random, and on huge pages its faults and TLB misses are
 * 512 times fewer (a fifth of the time at 2 M objects was page faults) */
static void *advised(void *p, size_t n)
{
	if (p && n >= (8u << 20))
		hugeheap_advise(p, n);
	return p;
}

static void *big_malloc(size_t n)
{
	return advised(malloc(n), n);
}

static void *big_calloc(size_t n, size_t size)
{
	return advised(calloc(n, size), n * size);
}

/* *P reallocated to N entries of ESIZE bytes; false (and *P as it was)
 * when out of memory. */
static bool resize(void **p, size_t n, size_t esize)
{
	void *q = advised(realloc(*p, n * esize), n * esize);
	if (q)
		*p = q;
	return q != NULL;
}

/* *P grown by doubling to hold NEED entries of ESIZE bytes (*CAP of
 * them now); false when out of memory. */
static bool grow(void **p, size_t *cap, size_t need, size_t esize)
{
	size_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	if (c != *cap && !resize(p, c, esize))
		return false;
	*cap = c;
	return true;
}

/* The nodes' arrays reallocated to CAP entries each, in turn: false when
 * one could not be (it and those after it as they were, each holding the
 * nodes so far either way). */
static bool resize_nodes(struct heap_graph *g, size_t cap)
{
	if (!resize((void **)&g->addr, cap, 8) || !resize((void **)&g->size, cap, 4) ||
	    !resize((void **)&g->type, cap, 4) || !resize((void **)&g->refcnt, cap, 4) ||
	    !resize((void **)&g->first, cap, 4) || !resize((void **)&g->count, cap, 4))
		return false;
	g->cap = cap;
	return true;
}

/* a new node, not counted yet (type 0, no references); HEAP_NO_NODE when
 * the graph has failed, or fails now */
static uint32_t new_node(struct heap_graph *g)
{
	if (!g->failed && g->n >= HEAP_NO_NODE - 1)
		g->failed = true;
	/* (an array that could not grow is the graph's end) */
	if (!g->failed && g->n == g->cap && !resize_nodes(g, g->cap ? 2 * g->cap : 4096))
		g->failed = true;
	if (g->failed)
		return HEAP_NO_NODE;
	g->addr[g->n] = 0;
	g->size[g->n] = g->type[g->n] = g->refcnt[g->n] = g->first[g->n] = g->count[g->n] = 0;
	return (uint32_t)g->n++;
}

int heap_graph_claim(struct census *k, uint64_t obj, uint32_t *node)
{
	struct heap_graph *g = &k->g;
	bool found;
	struct heap_node_ref *r = addrtab_get(&g->index, obj, &found);
	*node = HEAP_NO_NODE;
	if (!r) {
		g->failed = true;   /* (an object not kept: the graph would lack it) */
		return -1;
	}
	if (found && (r->node & HEAP_COUNTED)) {
		*node = r->node & ~HEAP_COUNTED;
		return 1;
	}
	if (!found)
		r->node = new_node(g);
	*node = r->node;
	r->node |= HEAP_COUNTED;
	return 0;
}

uint32_t heap_graph_ref(struct census *k, uint64_t obj)
{
	struct heap_graph *g = &k->g;
	bool found;
	if (g->failed)
		return HEAP_NO_NODE;
	struct heap_node_ref *r = addrtab_get(&g->index, obj, &found);
	if (!r) {
		g->failed = true;
		return HEAP_NO_NODE;
	}
	if (!found)
		r->node = new_node(g);
	return r->node & ~HEAP_COUNTED;
}

void heap_graph_set(struct census *k, uint32_t node, uint64_t obj, uint32_t type_id, uint64_t size, bool tracked)
{
	struct heap_graph *g = &k->g;
	if (!type_id)
		g->failed = true;   /* (its type's number could not be kept) */
	if (g->failed || node == HEAP_NO_NODE)
		return;
	g->addr[node] = obj;
	g->size[node] = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
	g->type[node] = type_id;
	if (size >= UINT32_MAX) {
		bool found;
		struct heap_big_size *b = addrtab_get(&g->big, (uint64_t)node + 1, &found);
		if (!b) {
			g->failed = true;
			return;
		}
		b->size = size;
	}
	/* ob_refcnt (3.14+: its low 32 bits, ob_flags above them);
	 * unreadable: as if held from outside, never garbage */
	uint64_t rc = 0;
	if (tracked && py_layout_free_threaded(k->c->L))
		rc = heap_mimalloc_refcnt(k->c, obj);
	else if (tracked && py_rd_ptr(k->c, obj, &rc) != PC_OK)
		rc = UINT64_MAX;
	else if (tracked && k->c->L->minor >= 14)
		rc &= UINT32_MAX;
	g->refcnt[node] = !tracked ? 0 : !rc || rc >= UINT32_MAX ? UINT32_MAX : (uint32_t)rc;
}

void heap_graph_begin(struct census *k, uint32_t node)
{
	struct heap_graph *g = &k->g;
	g->cur = g->failed ? HEAP_NO_NODE : node;
	if (g->cur != HEAP_NO_NODE)
		g->first[g->cur] = (uint32_t)g->ne;
}

void heap_graph_edge(struct census *k, uint32_t node)
{
	struct heap_graph *g = &k->g;
	if (g->failed || g->cur == HEAP_NO_NODE)
		return;
	if (g->ne >= UINT32_MAX - 1 || !grow((void **)&g->dst, &g->cape, g->ne + 1, sizeof(*g->dst))) {
		g->failed = true;
		return;
	}
	g->dst[g->ne++] = node;
}

void heap_graph_end(struct census *k)
{
	struct heap_graph *g = &k->g;
	if (!g->failed && g->cur != HEAP_NO_NODE) {
		uint64_t n = g->ne - g->first[g->cur];
		if (n >= UNDEF)
			g->failed = true;
		g->count[g->cur] = (uint32_t)n;
	}
	g->cur = HEAP_NO_NODE;
}

void heap_graph_free(struct census *k)
{
	struct heap_graph *g = &k->g;
	addrtab_free(&g->index);
	addrtab_free(&g->big);
	free(g->addr);
	free(g->size);
	free(g->type);
	free(g->refcnt);
	free(g->first);
	free(g->count);
	free(g->dst);
	memset(g, 0, sizeof(*g));
}

/* The node of the object counted at ADDR, UNDEF when it is none. */
static uint32_t node_of(const struct heap_graph *g, uint64_t addr)
{
	const struct heap_node_ref *r = addrtab_find(&g->index, addr);
	return r && (r->node & HEAP_COUNTED) && r->node != (HEAP_NO_NODE | HEAP_COUNTED) ? r->node & ~HEAP_COUNTED
										    : UNDEF;
}

/* Node V's references: *N of them, at the returned pointer (into the
 * resolved runs). */
static const uint32_t *refs(const struct heap_graph *g, const struct dom *d, const uint32_t *dst, uint32_t v,
			    size_t *n)
{
	if (v == d->root) {
		*n = d->nroots;
		return d->roots;
	}
	*n = g->count[v];
	return dst + g->first[v];
}

/* The depth-first walk from the root: postorder numbers (iterative: a
 * stack of nodes and how far each one's references were walked). */
static bool walk_postorder(const struct heap_graph *g, struct dom *d, const uint32_t *dst)
{
	uint32_t *stack = big_malloc((size_t)(d->n + 1) * sizeof(*stack));
	uint32_t *at = big_malloc((size_t)(d->n + 1) * sizeof(*at));
	if (!stack || !at) {
		free(stack);
		free(at);
		return false;
	}
	for (uint32_t i = 0; i <= d->n; i++)
		d->post[i] = UNDEF;
	uint32_t next = 0;
	size_t sp = 0;
	/* (on the stack: post = UNDEF - 1, "open") */
	d->post[d->root] = UNDEF - 1;
	stack[sp] = d->root;
	at[sp++] = 0;
	while (sp) {
		uint32_t v = stack[sp - 1];
		size_t n;
		const uint32_t *r = refs(g, d, dst, v, &n);
		if (at[sp - 1] < n) {
			uint32_t w = r[at[sp - 1]++];
			if (w != UNDEF && d->post[w] == UNDEF) {
				d->post[w] = UNDEF - 1;
				stack[sp] = w;
				at[sp++] = 0;
			}
			continue;
		}
		d->post[v] = next;
		d->order[next++] = v;
		sp--;
	}
	d->m = next;
	free(stack);
	free(at);
	return true;
}

/* Each reached node's predecessors among the reached, by postorder
 * number (a count, then a fill). */
static bool predecessors(const struct heap_graph *g, struct dom *d, const uint32_t *dst)
{
	d->pfirst = big_calloc((size_t)d->m + 1, sizeof(*d->pfirst));
	if (!d->pfirst)
		return false;
	for (uint32_t i = 0; i < d->m; i++) {
		size_t n;
		const uint32_t *r = refs(g, d, dst, d->order[i], &n);
		for (size_t j = 0; j < n; j++)
			if (r[j] != UNDEF && d->post[r[j]] < d->m)
				d->pfirst[d->post[r[j]] + 1]++;
	}
	for (uint32_t i = 0; i < d->m; i++)
		d->pfirst[i + 1] += d->pfirst[i];
	d->pred = big_malloc((d->pfirst[d->m] ? d->pfirst[d->m] : 1) * sizeof(*d->pred));
	if (!d->pred)
		return false;
	/* (each one's start its fill's cursor: after the fill, the next
	 * one's start, shifted back in place) */
	for (uint32_t i = 0; i < d->m; i++) {
		size_t n;
		const uint32_t *r = refs(g, d, dst, d->order[i], &n);
		for (size_t j = 0; j < n; j++)
			if (r[j] != UNDEF && d->post[r[j]] < d->m)
				d->pred[d->pfirst[d->post[r[j]]]++] = i;
	}
	memmove(d->pfirst + 1, d->pfirst, (size_t)d->m * sizeof(*d->pfirst));
	d->pfirst[0] = 0;
	return true;
}

/* Cooper, Harvey and Kennedy's iteration, by postorder numbers (the root
 * the highest): idom[] until it holds. */
static bool dominators(struct dom *d)
{
	uint32_t *idom = d->idom, root = d->m - 1;
	for (uint32_t i = 0; i < d->m; i++)
		idom[i] = UNDEF;
	idom[root] = root;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t b = root; b-- > 0;) {
			uint32_t nd = UNDEF;
			for (uint32_t j = d->pfirst[b]; j < d->pfirst[b + 1]; j++) {
				uint32_t p = d->pred[j];
				if (idom[p] == UNDEF)
					continue;
				if (nd == UNDEF) {
					nd = p;
					continue;
				}
				uint32_t x = p, y = nd;
				while (x != y) {
					while (x < y)
						x = idom[x];
					while (y < x)
						y = idom[y];
				}
				nd = x;
			}
			if (idom[b] != nd) {
				idom[b] = nd;
				changed = true;
			}
		}
	}
	return true;
}

/* The breadth-first walk from the root: each node's parent on a shortest
 * path. */
static bool shortest(const struct heap_graph *g, struct dom *d, const uint32_t *dst)
{
	uint32_t *queue = big_malloc((size_t)d->m * sizeof(*queue));
	if (!queue)
		return false;
	for (uint32_t i = 0; i <= d->n; i++)
		d->parent[i] = UNDEF;
	size_t head = 0, tail = 0;
	d->parent[d->root] = d->root;
	queue[tail++] = d->root;
	while (head < tail) {
		uint32_t v = queue[head++];
		size_t n;
		const uint32_t *r = refs(g, d, dst, v, &n);
		for (size_t j = 0; j < n; j++)
			if (r[j] != UNDEF && d->parent[r[j]] == UNDEF && tail < d->m) {
				d->parent[r[j]] = v;
				queue[tail++] = r[j];
			}
	}
	free(queue);
	return true;
}

/* Whether node V is a module, a module's dict or a class's namespace
 * (MODDICT) or an interpreter's dict among the roots: they hold
 * everything below them (the class itself is an answer), and are no
 * answer to "who holds it". */
static bool structural(struct census *k, const struct dom *d, const bool *moddict, uint32_t v)
{
	for (size_t i = 0; i < d->ndicts; i++)
		if (d->roots[i] == v)
			return true;
	struct heap_type *t = heap_type_entry(k, heap_node_type(k, v));
	return (t && t->walk == HW_MODULE && !t->instance) || moddict[v];
}

/* Node V's path from the root: the breadth-first parents, in Python's
 * words, into the arena. */
static const char *path_of(struct census *k, const struct dom *d, uint32_t v, const char *const *root_names)
{
	struct heap_graph *g = &k->g;
	uint32_t chain[256];
	size_t n = 0;
	for (uint32_t x = v; x != d->root && x != UNDEF && n < 256; x = d->parent[x])
		chain[n++] = x;
	if (!n || n == 256)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return NULL;
	uint32_t top = chain[n - 1];
	size_t at = 0;
	while (at < d->nroots && d->roots[at] != top)
		at++;
	const char *name = at < d->nroots ? root_names[at] : NULL;
	fputs(name ? name : "?", out);
	/* (sys's and builtins' dicts are namespaces: their keys attributes) */
	size_t nlen = name ? strlen(name) : 0;
	bool ns = at < d->ndicts && !(nlen >= 7 && strcmp(name + nlen - 7, "modules") == 0);
	for (size_t i = n - 1; i > 0; i--) {
		uint32_t p = chain[i], c = chain[i - 1];
		struct heap_type *t = heap_type_entry(k, heap_node_type(k, p));
		struct heap_type copy;
		if (!t) {
			fputs(".?", out);
			ns = false;
			continue;
		}
		copy = *t;   /* (the type table may grow under the step's reads) */
		heap_path_step(k, g->addr[p], &copy, g->addr[c], &ns, out);
	}
	fclose(out);
	const char *s = buf ? arena_strdup(k->c->a, buf) : NULL;
	free(buf);
	return s;
}

/* Node V (reached) as a retainer, into OUT. */
static void add_retainer(struct census *k, const struct dom *d, const char **names, uint32_t v, struct ptrvec *out)
{
	struct py_ctx *c = k->c;
	const struct heap_graph *g = &k->g;
	uint32_t i = d->post[v];
	struct model_heap_retainer *o = arena_alloc(c->a, sizeof(*o));
	if (!o)
		return;
	*o = (struct model_heap_retainer){ .address = g->addr[v], .bytes = heap_node_size(g, v), .retained = d->retained[i],
					   .objects = d->nobjects[i] };
	py_type_qualname(c, heap_node_type(k, v), &o->module, &o->qualname);
	o->path = path_of(k, d, v, names);
	ptrvec_push(c->a, out, o);
}

static const struct dom *sort_dom;
static int by_retained(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sort_dom->retained[x] != sort_dom->retained[y])
		return sort_dom->retained[x] < sort_dom->retained[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* Root V named NAME (in the arena) into D; false when out of memory. */
static bool add_root(struct dom *d, const char ***names, size_t *cap, uint32_t v, const char *name)
{
	if (d->nroots == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		uint32_t *r = realloc(d->roots, c * sizeof(*r));
		if (r)
			d->roots = r;
		const char **n = r ? realloc(*names, c * sizeof(*n)) : NULL;
		if (!n)
			return false;
		*names = n;
		*cap = c;
	}
	d->roots[d->nroots] = v;
	(*names)[d->nroots++] = name;
	return name != NULL;
}

/* The roots: the sys.modules, sys.__dict__ and builtins.__dict__ of every
 * interpreter from HEAD, and the locals of every Python frame the walk
 * read (each thread's); into D with their names (*NAMES, malloc'd), said
 * in R's roots.  False when out of memory. */
static bool find_roots(struct census *k, uint64_t head, struct dom *d, const char ***names,
		       struct model_heap_retained *r)
{
	struct py_ctx *c = k->c;
	const struct py_layout *L = c->L;
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	size_t interp = 0, cap = 0, locals = 0;
	bool ok = true;
	for (uint64_t in = head; ok && in && addrtab_add(&seen, in) == 0; interp++) {
		const struct {
			int64_t off;
			const char *name;
		} fields[] = { { L->interp_modules, "sys.modules" }, { L->interp_sysdict, "sys" },
			       { L->interp_builtins, "builtins" } };
		for (size_t i = 0; ok && i < sizeof(fields) / sizeof(fields[0]); i++) {
			uint64_t p;
			uint32_t v;
			if (fields[i].off < 0 || py_rd_ptr(c, in + (uint64_t)fields[i].off, &p) != PC_OK ||
			    (v = node_of(&k->g, p)) == UNDEF)
				continue;
			const char *name = interp ? arena_printf(c->a, "<interpreter %zu>.%s", interp, fields[i].name)
						  : fields[i].name;
			ok = add_root(d, names, &cap, v, name);
			ptrvec_push(c->a, &r->roots, arena_printf(c->a, "%s%s (dict at 0x%llx)", name ? name : "?",
								  i ? ".__dict__" : "", (unsigned long long)p));
		}
		if (L->interp_next < 0 || py_rd_ptr(c, in + L->interp_next, &in) != PC_OK)
			break;
	}
	addrtab_free(&seen);
	d->ndicts = d->nroots;
	/* every Python frame's locals (the walk's, with their objects) */
	for (size_t i = 0; ok && i < c->r->interps.n; i++) {
		const struct model_interp *mi = c->r->interps.items[i];
		for (size_t t = 0; ok && t < mi->threads.n; t++) {
			const struct model_thread *th = mi->threads.items[t];
			for (size_t f = 0; ok && f < th->frames.n; f++) {
				const struct model_frame *fr = th->frames.items[f];
				/* (a module's code: its locals are its globals, reached from
				 * sys.modules) */
				if (fr->kind != FRAME_PYTHON || (fr->function && strcmp(fr->function, "<module>") == 0))
					continue;
				for (size_t l = 0; ok && l < fr->locals.n; l++) {
					const struct model_local *lo = fr->locals.items[l];
					uint32_t v = node_of(&k->g, lo->address);
					if (v == UNDEF)
						continue;
					ok = add_root(d, names, &cap, v,
						      arena_printf(c->a, "<thread %lld, %s()>.%s", (long long)th->tid,
								   fr->function ? fr->function : "?",
								   lo->name ? lo->name : "?"));
					locals++;
				}
			}
		}
	}
	if (locals)
		ptrvec_push(c->a, &r->roots, arena_printf(c->a, "the locals of every Python frame read: %zu objects",
							  locals));
	return ok;
}

/* garbage's types: a small table by type address */
struct gtype {
	uint64_t addr;
	uint64_t count, bytes;
};

static int gtype_by_bytes(const void *a, const void *b)
{
	const struct model_heap_type *x = *(const struct model_heap_type *const *)a;
	const struct model_heap_type *y = *(const struct model_heap_type *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* What a collection would free, by the GC's own test (Modules/gcmodule.c's
 * update_refs, subtract_refs, move_unreachable): each tracked object's
 * ob_refcnt less the references to it from tracked objects (the runs DST
 * read); those with some left are held from outside (C, the stack, an
 * object whose references the census does not read), and so is all they
 * reach; the rest of the tracked objects is garbage.  A reference pycore
 * does not read is never subtracted: an object held through one counts as
 * held from outside, so nothing held is ever called garbage. */
static bool garbage(struct census *k, const uint32_t *dst, struct model_heap_retained *r)
{
	struct heap_graph *g = &k->g;
	struct py_ctx *c = k->c;
	uint32_t *left = big_malloc((g->n ? g->n : 1) * sizeof(*left));
	bool *alive = big_calloc(g->n ? g->n : 1, sizeof(*alive));
	uint32_t *queue = big_malloc((g->n ? g->n : 1) * sizeof(*queue));
	struct addrtab types = ADDRTAB_INIT(struct gtype);
	bool ok = left && alive && queue;
	size_t head = 0, tail = 0;
	if (ok) {
		memcpy(left, g->refcnt, g->n * sizeof(*left));
		for (uint32_t v = 0; v < g->n; v++)
			for (uint32_t j = 0; g->refcnt[v] && j < g->count[v]; j++) {
				uint32_t w = dst[g->first[v] + j];
				/* (more references than ob_refcnt: a misread, held) */
				if (w != UNDEF && g->refcnt[w] && left[w] != UINT32_MAX)
					left[w] = left[w] > 0 ? left[w] - 1 : UINT32_MAX;
			}
		for (uint32_t v = 0; v < g->n; v++)
			if (g->refcnt[v] && left[v] > 0) {
				alive[v] = true;
				queue[tail++] = v;
			}
		while (head < tail) {
			uint32_t v = queue[head++];
			for (uint32_t j = 0; j < g->count[v]; j++) {
				uint32_t w = dst[g->first[v] + j];
				if (w != UNDEF && !alive[w]) {
					alive[w] = true;
					queue[tail++] = w;
				}
			}
		}
		for (uint32_t v = 0; ok && v < g->n; v++) {
			if (alive[v] || !g->type[v])   /* (not counted: no object) */
				continue;
			if (!g->refcnt[v]) {
				/* untracked, held by garbage alone (else not in the graph) */
				r->garbage_untracked++;
				r->garbage_untracked_bytes += heap_node_size(g, v);
				continue;
			}
			r->garbage_objects++;
			r->garbage_bytes += heap_node_size(g, v);
			bool found;
			struct gtype *t = addrtab_get(&types, heap_node_type(k, v), &found);
			if (!t) {
				ok = false;
				break;
			}
			t->count++;
			t->bytes += heap_node_size(g, v);
		}
	}
	for (size_t i = 0; ok && i < types.cap; i++) {
		struct gtype *t = addrtab_slot(&types, i);
		struct model_heap_type *m = t ? arena_alloc(c->a, sizeof(*m)) : NULL;
		if (!m)
			continue;
		*m = (struct model_heap_type){ .address = t->addr, .count = t->count, .bytes = t->bytes, .exact = true };
		py_type_qualname(c, t->addr, &m->module, &m->qualname);
		ptrvec_push(c->a, &r->garbage_types, m);
	}
	if (r->garbage_types.n > 1)
		qsort(r->garbage_types.items, r->garbage_types.n, sizeof(void *), gtype_by_bytes);
	addrtab_free(&types);
	free(left);
	free(alive);
	free(queue);
	return ok;
}

void heap_retain(struct census *k, uint64_t head)
{
	struct heap_graph *g = &k->g;
	struct py_ctx *c = k->c;
	uint64_t t0 = py_now_ns();
	if (g->failed || c->timed_out) {
		ptrvec_push(c->a, &k->h->unread,
			    arena_strdup(c->a, c->timed_out ? "retained sizes: not computed (the time budget ran out)"
							     : "retained sizes: not computed (out of memory)"));
		return;
	}
	struct model_heap_retained *r = arena_alloc(c->a, sizeof(*r));
	/* the nodes' arrays cut to their length (grown by doubling: up to
	 * half of them unused) */
	resize_nodes(g, g->n ? g->n : 1);
	/* the references to no object counted (only referred to, or none)
	 * as UNDEF, then the runs cut to their length */
	uint32_t *dst = g->dst;
	for (size_t i = 0; i < g->ne; i++)
		if (dst[i] == HEAP_NO_NODE || !g->type[dst[i]])
			dst[i] = UNDEF;
	g->dst = NULL;
	g->cape = 0;
	resize((void **)&dst, g->ne ? g->ne : 1, sizeof(*dst));   /* (else as it was) */
	bool *ns = big_calloc((size_t)g->n + 1, sizeof(*ns));
	uint32_t *watch = big_calloc(k->nwatch ? k->nwatch : 1, sizeof(*watch));
	struct dom d = { .n = (uint32_t)g->n, .root = (uint32_t)g->n };
	const char **names = NULL;
	bool ok = r && dst && ns && watch;
	if (ok) {
		/* a module's dict, a class's namespace marked: the one dict
		 * among their references (a class's others are its bases and
		 * MRO, tuples) */
		for (uint32_t v = 0; v < d.n; v++) {
			struct heap_type *t = heap_type_entry(k, heap_node_type(k, v));
			if (!t || (t->walk != HW_MODULE && t->walk != HW_TYPE) || t->instance)
				continue;
			for (uint32_t e = 0; e < g->count[v]; e++) {
				uint32_t w = dst[g->first[v] + e];
				struct heap_type *wt = w != UNDEF ? heap_type_entry(k, heap_node_type(k, w)) : NULL;
				if (wt && wt->walk == HW_DICT && !wt->instance) {
					ns[w] = true;
					break;
				}
			}
		}
		ok = find_roots(k, head, &d, &names, r);
		for (size_t i = 0; i < k->nwatch; i++)
			watch[i] = node_of(g, k->watch[i]);
	}
	/* (the last look-up by address: the index goes before the
	 * dominators' arrays come) */
	addrtab_free(&g->index);
	/* Each array goes as soon as nothing more reads it, and the next ones
	 * come after: the garbage (then the reference counts go), the
	 * postorder, the predecessors (then the postorder numbers by node
	 * go), the dominators (then the predecessors go), the breadth-first
	 * parents (then the references go: nothing follows them any more),
	 * the retained sizes. */
	ok = ok && garbage(k, dst, r);
	free(g->refcnt);
	g->refcnt = NULL;
	if (ok) {
		d.post = big_malloc(((size_t)d.n + 1) * sizeof(*d.post));
		d.order = big_malloc(((size_t)d.n + 1) * sizeof(*d.order));
		ok = d.post && d.order && walk_postorder(g, &d, dst) && predecessors(g, &d, dst);
	}
	free(d.post);
	d.post = NULL;
	if (ok) {
		d.idom = big_malloc((size_t)d.m * sizeof(*d.idom));
		ok = d.idom && dominators(&d);
	}
	free(d.pred);
	free(d.pfirst);
	d.pred = NULL;
	d.pfirst = NULL;
	if (ok) {
		d.parent = big_malloc(((size_t)d.n + 1) * sizeof(*d.parent));
		ok = d.parent && shortest(g, &d, dst);
	}
	free(dst);
	free(g->first);
	free(g->count);
	dst = NULL;
	g->first = g->count = NULL;
	if (ok) {
		d.post = big_malloc(((size_t)d.n + 1) * sizeof(*d.post));
		d.retained = big_malloc((size_t)d.m * sizeof(*d.retained));
		d.nobjects = big_malloc((size_t)d.m * sizeof(*d.nobjects));
		ok = d.post && d.retained && d.nobjects;
	}
	if (ok) {
		for (uint32_t i = 0; i <= d.n; i++)
			d.post[i] = UNDEF;
		for (uint32_t i = 0; i < d.m; i++)
			d.post[d.order[i]] = i;
	}
	if (ok) {
		uint32_t top = d.m - 1;
		for (uint32_t i = 0; i < top; i++) {
			d.retained[i] = heap_node_size(g, d.order[i]);
			d.nobjects[i] = 1;
		}
		d.retained[top] = d.nobjects[top] = 0;
		for (uint32_t i = 0; i < top; i++) {
			d.retained[d.idom[i]] += d.retained[i];
			d.nobjects[d.idom[i]] += d.nobjects[i];
		}
		r->reached_objects = top;
		r->reached_bytes = d.retained[top];
		r->edges = g->ne;
		uint32_t heap[MODEL_HEAP_LARGEST];
		size_t nh = 0;
		for (uint32_t i = 0; i < top; i++)
			if (!structural(k, &d, ns, d.order[i]))
				heap_dom_keep(&d, heap, &nh, MODEL_HEAP_LARGEST, i);
		sort_dom = &d;
		qsort(heap, nh, sizeof(heap[0]), by_retained);
		for (size_t i = 0; i < nh; i++)
			add_retainer(k, &d, names, d.order[heap[i]], &r->retainers);
		heap_dom_tree(k, &d, names, r);
		/* heap --diff's: the newer dump's retainers, at the same addresses here */
		for (size_t i = 0; i < k->nwatch; i++)
			if (watch[i] != UNDEF && d.post[watch[i]] != UNDEF)
				add_retainer(k, &d, names, watch[i], &r->watched);
		r->ms = (double)(py_now_ns() - t0) / 1e6;
		k->h->retained = r;
	} else {
		ptrvec_push(c->a, &k->h->unread, arena_strdup(c->a, "retained sizes: not computed (out of memory)"));
	}
	free(dst);
	free(ns);
	free(watch);
	free(d.roots);
	free(names);
	free(d.post);
	free(d.order);
	free(d.parent);
	free(d.pfirst);
	free(d.pred);
	free(d.idom);
	free(d.retained);
	free(d.nobjects);
}
