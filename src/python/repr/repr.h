/* repr() of objects in a dump, as CPython prints them, within limits: what
 * walkers call.  A result is true or NULL with why; a cut one ends in "...". */
#ifndef PYCORE_PYTHON_REPR_H
#define PYCORE_PYTHON_REPR_H

#include "python/objects/objects.h"

struct repr_limits {
	size_t max_repr;     /* characters; a longer repr is cut to this many, "..." included */
	size_t max_items;    /* items shown of one container */
	int max_depth;       /* containers inside containers */
};

/* The repr of the object at ADDR, in the arena.  Returns NULL with *error
 * set when it cannot be formed truthfully; when a limit cut it short, the
 * result is a true prefix followed by "..." and *error says which limit. */
const char *py_repr(struct py_ctx *c, uint64_t addr, const struct repr_limits *lim,
		    const char **error);
/* The same; *LENGTH (when not NULL) is len() of the object when a limit
 * cut its repr and its length is known (str, bytes, containers), else -1. */
const char *py_repr_len(struct py_ctx *c, uint64_t addr, const struct repr_limits *lim,
			const char **error, int64_t *length);
/* len() of a str, bytes, bytearray, list, tuple, dict, set, frozenset,
 * range or collections.deque at ADDR; -1 when not one or unreadable. */
int64_t py_len(struct py_ctx *c, uint64_t addr);

/* How str() of an exception of TYPE is formed: 0 BaseException's (the
 * args), 1 KeyError's (repr of its only argument), -1 its own, -2 unknown
 * (BaseException's not found). */
int py_exception_str_kind(struct py_ctx *c, uint64_t type);

/* numpy's major version in the dump (sys.modules['numpy'].__version__,
 * looked up once); 0 when unknown. */
int py_numpy_major(struct py_ctx *c);
/* The fields of the numpy array at ADDR that pycore reads (repr/numpy.c):
 * 0, or -1 when one is not in the dump (or nd is negative). */
struct py_ndarray {
	uint64_t data, dims, strides, descr;
	int32_t nd, flags;
};
int py_numpy_array(struct py_ctx *c, uint64_t addr, struct py_ndarray *a);

/* Shortest repr of a double that reads back the same, as float.__repr__. */
void py_float_repr(double v, char *out, size_t outlen);
/* The same for a float32 (numpy.float32): fewest digits that read back as
 * the same single-precision value. */
void py_float_repr_single(float v, char *out, size_t outlen);

/* The decimal text of an int given as 30-bit digits, least significant
 * first (CPython's PyLongObject).  Returns NULL, or why it cannot be
 * printed (more than 4300 decimal digits, a digit out of range). */
const char *py_long_format(const uint32_t *digits, size_t ndigits, bool negative, char *out, size_t cap);

#endif
