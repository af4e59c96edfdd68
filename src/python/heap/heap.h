/* The heap census (pycore heap): every object on the GC's lists, counted
 * by type with the size sys.getsizeof gives it.  Private to python/. */
#ifndef PYCORE_PYTHON_HEAP_H
#define PYCORE_PYTHON_HEAP_H

#include "python/python_int.h"

/* How one type's __sizeof__ is computed: the class along its MRO that
 * defines __sizeof__, known by its name (sizeof.c). */
enum heap_sizeof {
	HS_OBJECT,                   /* object.__sizeof__: basic + items */
	HS_LIST, HS_DICT, HS_SET, HS_BYTEARRAY, HS_TYPE, HS_MODULE,
	HS_UNKNOWN,                  /* a __sizeof__ pycore does not know: object's, a lower bound */
};

/* What the census knows of one type, cached by its address. */
struct heap_type {
	uint64_t addr;
	bool proven;                 /* its own type is a type */
	enum heap_sizeof rule;
	const char *owner;           /* the class whose __sizeof__ it is */
	int64_t basicsize, itemsize;
	uint64_t flags;
	uint64_t count, bytes, permanent, permanent_bytes;
};

/* The rule of TYPE (t->addr): t->rule, t->owner filled. */
void heap_sizeof_rule(struct py_ctx *c, struct heap_type *t);
/* sys.getsizeof of the object at OBJ of type T (a GC object): 0 and *SIZE,
 * or -1 when what __sizeof__ reads is not captured. */
int heap_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size);

/* The census of every interpreter (from HEAD; 3.7 and 3.8 keep the lists
 * in RUNTIME, 3.6 in the static state _PyGC_generation0, at GEN0, points
 * into) into c->r->heap. */
void py_heap_census(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t gen0);

#endif
