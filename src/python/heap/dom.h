/* The dominators' computation (retain.c) as tree.c reads it.  Private to
 * python/heap/. */
#ifndef PYCORE_PYTHON_HEAP_DOM_H
#define PYCORE_PYTHON_HEAP_DOM_H

#include "python/heap/heap.h"

#define UNDEF UINT32_MAX

/* What one computation holds: the nodes 0 .. n-1 and the root, n, whose
 * references are the roots'. */
struct dom {
	uint32_t n, root;
	uint32_t *roots;             /* the root's references */
	size_t nroots;
	size_t ndicts;               /* of them, the interpreters' dicts (first) */
	uint32_t *post;              /* postorder number by node, UNDEF: not reached */
	uint32_t *order;             /* node by postorder number */
	uint32_t m;                  /* nodes reached, the root included (the last) */
	uint32_t *pfirst;            /* predecessors by postorder number: pred[pfirst[i] ..] */
	uint32_t *pred;              /* (postorder numbers) */
	uint32_t *idom;              /* by postorder number */
	uint64_t *retained;          /* by postorder number */
	uint32_t *nobjects;          /* by postorder number */
	uint32_t *parent;            /* by node: the breadth-first walk's, UNDEF none */
};

/* ---- tree.c ---- */

/* Postorder number B kept in HEAP, a min-heap of at most CAP of them by
 * retained size (*N of them so far): the largest retainers. */
void heap_dom_keep(const struct dom *d, uint32_t *heap, size_t *n, size_t cap, uint32_t b);
/* The top of the dominator tree into R's tree: the MODEL_HEAP_TREE nodes
 * of most retained (NAMES: the roots', as D's). */
void heap_dom_tree(struct census *k, const struct dom *d, const char *const *names,
		   struct model_heap_retained *r);

#endif
