/* repr() of objects in a dump, as CPython prints them. */
#ifndef PYCORE_PYTHON_REPR_H
#define PYCORE_PYTHON_REPR_H

#include "python/python_int.h"

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

/* The type of the object at ADDR (and its type object's address). */
enum py_type py_type_of(struct py_ctx *c, uint64_t addr, uint64_t *type);
/* "dict", "collections.OrderedDict": the name Python shows for a type. */
const char *py_type_name(struct py_ctx *c, uint64_t type);

/* Shortest repr of a double that reads back the same, as float.__repr__. */
void py_float_repr(double v, char *out, size_t outlen);
/* The same for a float32 (numpy.float32): fewest digits that read back as
 * the same single-precision value. */
void py_float_repr_single(float v, char *out, size_t outlen);

/* The decimal text of an int given as 30-bit digits, least significant
 * first (CPython's PyLongObject).  Returns NULL, or why it cannot be
 * printed (more than 4300 decimal digits, a digit out of range). */
const char *py_long_format(const uint32_t *digits, size_t ndigits, bool negative, char *out, size_t cap);

/* numpy scalars (numpy.int64, float64, bool_, ...): their repr, or NULL
 * when TYPE is no numpy scalar type. */
const char *py_numpy_repr(struct py_ctx *c, uint64_t addr, uint64_t type);

extern const char *const py_type_symbols[PYT_COUNT];

/* ---- Between repr.c and repr_scalar.c: one repr being formed ---- */

/* The output buffer: stops at the limit and remembers it was cut. */
struct sbuf {
	char *p;
	size_t n, cap;
	size_t chars, limit;     /* characters written, and the most allowed */
	bool cut;
	bool oom;
};

/* Append one character's UTF-8 bytes. */
void sb_char(struct sbuf *b, const char *utf8, size_t n);
/* Append ASCII text. */
void sb_puts(struct sbuf *b, const char *s);
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool sb_full(const struct sbuf *b);

/* Context of one repr: limits and the containers being printed. */
#define REPR_MAX_DEPTH_HARD 64

struct rctx {
	struct py_ctx *c;
	const struct repr_limits *lim;
	struct sbuf b;
	uint64_t stack[REPR_MAX_DEPTH_HARD];
	int depth;
	const char *error;       /* first failure met inside */
	struct model_error_info error_info;   /* its kind and address */
	const char *limit_why;   /* which limit cut the repr */
	const char *approx;      /* a type whose own __repr__ could not be run */
	const char *damaged;     /* an item shown as <NULL> or <invalid object at 0x...> */
	struct model_error_info damaged_info; /* the item's failure: kind and address */
	uint64_t at;             /* the object being printed (the innermost) */
};

/* A hard failure: the object cannot be printed truthfully, because
 * memory it needs is not in the dump (kind not captured, at the object
 * being printed); repr_fail_as for any other kind (corrupt, ...). */
void repr_fail(struct rctx *r, const char *why);
void repr_fail_as(struct rctx *r, enum pc_code code, const char *why);
/* A limit reached: stop here; what was printed is a true prefix. */
void repr_limit(struct rctx *r, const char *why);

/* Append the repr of the object at ADDR. */
void repr_obj(struct rctx *r, uint64_t addr);
/* The same for an item inside a container: an item that cannot be read
 * is shown as <NULL> or <invalid object at 0x...> (the container keeps its
 * repr, which then says it is not exact). */
void repr_item(struct rctx *r, uint64_t addr);
/* Append UTF-8 text read from the dump. */
void sb_utf8(struct sbuf *b, const char *s);
/* Py_ReprEnter: false (and "..." is due) when ADDR is being printed further
 * out; enter() then pushes it (false at the depth limit). */
bool repr_reentered(struct rctx *r, uint64_t addr);
bool repr_enter(struct rctx *r, uint64_t addr);
/* Module and qualified name of a type, as object.__repr__ shows them. */
void py_type_qualname(struct py_ctx *c, uint64_t type, const char **module, const char **qualname);

/* repr_stdlib.c: the standard library's types whose repr can be formed
 * from memory; false (nothing appended) when TYPE is none of them. */
bool repr_stdlib(struct rctx *r, uint64_t addr, uint64_t type);
void repr_complex(struct rctx *r, uint64_t addr);
/* numpy.ndarray: a short 1-d array of ints or bools; false otherwise,
 * and for another array *NOTE says its shape and dtype. */
bool repr_numpy_array(struct rctx *r, uint64_t addr, uint64_t type, const char **note);
/* len() of the stdlib containers (deque, defaultdict, ...), else -1. */
int64_t py_stdlib_len(struct py_ctx *c, uint64_t addr, uint64_t type);
/* How str() of an exception of TYPE is formed: 0 BaseException's (the
 * args), 1 KeyError's (repr of its only argument), -1 its own, -2 unknown
 * (BaseException's not found). */
int py_exception_str_kind(struct py_ctx *c, uint64_t type);
/* dict.__repr__ of the dict (or dict subclass instance) at ADDR. */
void repr_dict(struct rctx *r, uint64_t addr);
void repr_range(struct rctx *r, uint64_t addr);
void repr_slice(struct rctx *r, uint64_t addr);
void repr_module(struct rctx *r, uint64_t addr);

/* repr_scalar.c: each appends the repr of the object at ADDR. */
void repr_long(struct rctx *r, uint64_t addr);
void repr_float(struct rctx *r, uint64_t addr);
void repr_str(struct rctx *r, uint64_t addr);
void repr_bytes(struct rctx *r, uint64_t addr);
void repr_bytearray(struct rctx *r, uint64_t addr);

#endif
