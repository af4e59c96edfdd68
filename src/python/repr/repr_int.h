/* Between the repr files: one repr being formed (its buffer and context) and
 * each file's part.  python/'s one circle is here: a container's items. */
#ifndef PYCORE_PYTHON_REPR_INT_H
#define PYCORE_PYTHON_REPR_INT_H

#include "python/repr/repr.h"

/* ---- buffer.c ---- */

/* The output buffer: stops at the limit and remembers it was cut. */
struct sbuf {
	char *p;
	size_t n, cap;
	size_t chars, limit;     /* characters written, and the most allowed */
	bool cut;
	bool oom;
};

/* Append N bytes, not counted as characters nor held to the limit. */
void sb_raw(struct sbuf *b, const char *s, size_t n);
/* Append one character's UTF-8 bytes. */
void sb_char(struct sbuf *b, const char *utf8, size_t n);
/* Append ASCII text. */
void sb_puts(struct sbuf *b, const char *s);
/* Append UTF-8 text read from the dump. */
void sb_utf8(struct sbuf *b, const char *s);
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Cut, or out of memory: nothing more is appended. */
static inline bool sb_full(const struct sbuf *b)
{
	return b->cut || b->oom;
}

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
/* Py_ReprEnter: true (and "..." is due) when ADDR is being printed further
 * out; enter() then pushes it (false at the depth limit).  Inline: every
 * container's repr asks. */
static inline bool repr_reentered(struct rctx *r, uint64_t addr)
{
	for (int i = 0; i < r->depth; i++)
		if (r->stack[i] == addr)
			return true;
	return false;
}

static inline bool repr_enter(struct rctx *r, uint64_t addr)
{
	if (r->depth >= r->lim->max_depth || r->depth >= REPR_MAX_DEPTH_HARD) {
		repr_limit(r, "nesting deeper than the depth limit");
		return false;
	}
	r->stack[r->depth++] = addr;
	return true;
}

/* Both for a container's repr: true when the caller prints it (and leaves
 * with r->depth--); false when AGAIN was printed (it is being printed
 * further out) or the depth limit was reached. */
bool repr_guard(struct rctx *r, uint64_t addr, const char *again);

/* ---- repr.c: the built-in containers and the driver ---- */

/* Append the repr of the object at ADDR. */
void repr_obj(struct rctx *r, uint64_t addr);
/* The same for an item inside a container: an item that cannot be read
 * is shown as <NULL> or <invalid object at 0x...> (the container keeps its
 * repr, which then says it is not exact). */
void repr_item(struct rctx *r, uint64_t addr);
/* dict.__repr__ of the dict (or dict subclass instance) at ADDR. */
void repr_dict(struct rctx *r, uint64_t addr);

/* ---- scalar.c: each appends the repr of the object at ADDR ---- */

void repr_long(struct rctx *r, uint64_t addr);
void repr_float(struct rctx *r, uint64_t addr);
void repr_str(struct rctx *r, uint64_t addr);
void repr_bytes(struct rctx *r, uint64_t addr);
void repr_bytearray(struct rctx *r, uint64_t addr);

/* ---- builtins.c: the other built-in types repr.c meets ---- */

void repr_complex(struct rctx *r, uint64_t addr);
void repr_range(struct rctx *r, uint64_t addr);
void repr_slice(struct rctx *r, uint64_t addr);
void repr_module(struct rctx *r, uint64_t addr);

/* ---- stdlib.c ---- */

/* The standard library's types whose repr can be formed from memory;
 * false (nothing appended) when TYPE is none of them. */
bool repr_stdlib(struct rctx *r, uint64_t addr, uint64_t type);
/* len() of the stdlib containers (deque, defaultdict, ...), else -1. */
int64_t py_stdlib_len(struct py_ctx *c, uint64_t addr, uint64_t type);

/* ---- numpy.c ---- */

/* numpy scalars (numpy.int64, float64, bool_, ...): their repr, or NULL
 * when TYPE is no numpy scalar type. */
const char *py_numpy_repr(struct py_ctx *c, uint64_t addr, uint64_t type);
/* numpy.ndarray: a short 1-d array of ints or bools; false otherwise,
 * and for another array *NOTE says its shape and dtype. */
bool repr_numpy_array(struct rctx *r, uint64_t addr, uint64_t type, const char **note);

#endif
