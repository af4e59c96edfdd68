/* An instance's attributes: its __dict__ (every layout) and __slots__. */
#ifndef PYCORE_PYTHON_ATTRS_H
#define PYCORE_PYTHON_ATTRS_H

#include "python/repr/repr.h"

typedef int (*py_attr_fn)(struct py_ctx *c, const char *name, uint64_t value, void *arg);

/* Calls FN for each attribute of OBJ (of type TYPE) until it returns
 * non-zero.  Returns 0, or -1 when they could not be read. */
int py_instance_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, py_attr_fn fn, void *arg);
/* The same when FN looks for the attribute NAME only: the __dict__'s keys
 * that cannot be it are passed over unread (FN still compares the name). */
int py_instance_attr_named(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name, py_attr_fn fn,
			   void *arg);

/* The instance attribute NAME of OBJ (an instance of a Python class, or of
 * a C type with a __dict__): its value, 0 when it has none. */
uint64_t py_attr(struct py_ctx *c, uint64_t obj, const char *name);

#endif
