/* The top of the dominator tree (retain.c computes it): the objects that
 * retain most, each under the one that dominates it, for the treemap of
 * pycore heap's HTML page and the JSON's heap.retained.tree; and the
 * min-heap that picks them, and the largest retainers. */
#include "python/heap/dom.h"
#include "python/objects/objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void heap_dom_keep(const struct dom *d, uint32_t *heap, size_t *n, size_t cap, uint32_t b)
{
	size_t i;
	if (*n < cap) {
		for (i = (*n)++; i && d->retained[heap[(i - 1) / 2]] > d->retained[b]; i = (i - 1) / 2)
			heap[i] = heap[(i - 1) / 2];
		heap[i] = b;
		return;
	}
	if (d->retained[b] <= d->retained[heap[0]])
		return;
	for (i = 0;;) {
		size_t l = 2 * i + 1, m = l + 1 < *n && d->retained[heap[l + 1]] < d->retained[heap[l]] ? l + 1 : l;
		if (l >= *n || d->retained[heap[m]] >= d->retained[b])
			break;
		heap[i] = heap[m];
		i = m;
	}
	heap[i] = b;
}

/* the tree's order (qsort_r's, over D): most retained first, a dominator
 * before what it dominates at a tie (its postorder number is higher) */
static int tree_order(const void *a, const void *b, void *arg)
{
	const struct dom *d = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (d->retained[x] != d->retained[y])
		return d->retained[x] < d->retained[y] ? 1 : -1;
	return x < y ? 1 : x > y ? -1 : 0;
}

struct tree_at {
	uint32_t post;               /* postorder number */
	uint32_t index;              /* in the tree */
};
static int by_post(const void *a, const void *b)
{
	uint32_t x = ((const struct tree_at *)a)->post, y = ((const struct tree_at *)b)->post;
	return x < y ? -1 : x > y;
}

/* The name node V's object goes by: a root's (NAMES, as D's roots), a
 * module's __name__, a class's qualified name; NULL for any other
 * object. */
static const char *node_name(struct census *k, const struct dom *d, const char *const *names, uint32_t v)
{
	for (size_t i = 0; i < d->nroots; i++) {
		if (d->roots[i] != v)
			continue;
		/* (paths start from an interpreter's sys or builtins
		 * namespace as "sys"; the node is that dict: "sys.__dict__") */
		size_t len = names[i] ? strlen(names[i]) : 0;
		if (i >= d->ndicts || !len || (len >= 7 && strcmp(names[i] + len - 7, "modules") == 0))
			return names[i];
		char *s = arena_alloc(k->c->a, len + 10);
		if (s)
			snprintf(s, len + 10, "%s.__dict__", names[i]);
		return s;
	}
	struct py_ctx *c = k->c;
	struct heap_type *t = heap_type_entry(k, heap_node_type(k, v));
	uint64_t dict, name;
	const char *why = NULL, *module, *qualname;
	if (!t || t->instance)
		return NULL;
	if (t->walk == HW_MODULE)
		return py_rd_ptr(c, k->g.addr[v] + c->L->module_dict, &dict) == PC_OK && dict &&
				       py_dict_get_str(c, dict, "__name__", &name) == 0
			       ? py_str_utf8(c, name, 200, &why)
			       : NULL;
	if (t->walk != HW_TYPE)
		return NULL;
	py_type_qualname(c, k->g.addr[v], &module, &qualname);
	return qualname;
}

/* Each node's dominator is among the nodes kept (it retains more than
 * what it dominates), or is the root. */
void heap_dom_tree(struct census *k, const struct dom *d, const char *const *names, struct model_heap_retained *r)
{
	struct py_ctx *c = k->c;
	const struct heap_graph *g = &k->g;
	uint32_t *sel = malloc(MODEL_HEAP_TREE * sizeof(*sel)), top = d->m - 1;
	struct tree_at *at = malloc(MODEL_HEAP_TREE * sizeof(*at));
	size_t n = 0;
	if (!sel || !at)
		goto out;
	for (uint32_t i = 0; i < top; i++)
		heap_dom_keep(d, sel, &n, MODEL_HEAP_TREE, i);
	qsort_r(sel, n, sizeof(*sel), tree_order, (void *)d);
	for (size_t i = 0; i < n; i++)
		at[i] = (struct tree_at){ sel[i], (uint32_t)i };
	qsort(at, n, sizeof(*at), by_post);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = d->order[sel[i]];
		struct model_heap_node *o = arena_alloc(c->a, sizeof(*o));
		if (!o)
			break;
		struct tree_at key = { d->idom[sel[i]], 0 };
		const struct tree_at *p = key.post == top ? NULL : bsearch(&key, at, n, sizeof(*at), by_post);
		*o = (struct model_heap_node){ .parent = p && p->index < i ? (int64_t)p->index : -1,
					       .address = g->addr[v], .bytes = heap_node_size(g, v),
					       .retained = d->retained[sel[i]], .objects = d->nobjects[sel[i]] };
		py_type_qualname(c, heap_node_type(k, v), &o->module, &o->qualname);
		o->name = node_name(k, d, names, v);
		ptrvec_push(c->a, &r->tree, o);
	}
out:
	free(sel);
	free(at);
}

