/* Between the standard library's repr files (stdlib.c, builtins.c,
 * collections.c, datatypes.c): the types proven the stdlib's, shared readers. */
#ifndef PYCORE_PYTHON_REPR_STDLIB_H
#define PYCORE_PYTHON_REPR_STDLIB_H

#include "python/repr/repr_int.h"

#define TPFLAGS_HEAPTYPE (1ul << 9)

struct py_stdlib {
	uint64_t interp;
	uint64_t collections, enum_mod, uuid_mod, fractions_mod;   /* module dicts */
	uint64_t dataclasses, reprlib, field_marker;   /* and dataclasses._FIELD */
	uint64_t pathlib;                              /* pathlib._local (3.13+) or pathlib */
	uint64_t deque, defaultdict, odict, counter, partial;
	uint64_t date, time, datetime, timedelta, timezone, utc;
	uint64_t uuid, fraction, decimal;
	uint64_t exc_repr, structseq_repr;   /* tp_repr of BaseException, of sys.version_info's type */
	uint64_t exc_str, keyerror_str;      /* tp_str of BaseException, of KeyError */
	bool modules_read;                   /* the module types and structseq_repr: stdlib_modules() */
};

/* The items of a deque, in order: calls FN until it returns false
 * (collections.c).  *LEN its length, *MAXLEN its maxlen (-1: none). */
bool stdlib_deque_items(struct py_ctx *c, uint64_t addr, int64_t *len, int64_t *maxlen,
			bool (*fn)(struct rctx *r, uint64_t item, int64_t i), struct rctx *r);

/* ---- Small readers ---- */

/* The object header's size: where an object's own fields start. */
static inline uint64_t hdr(struct py_ctx *c)
{
	return (uint64_t)c->L->object_type + 8;
}

/* The value of NAME in DICT, 0 when none (or no DICT). */
static inline uint64_t dict_get(struct py_ctx *c, uint64_t dict, const char *name)
{
	uint64_t v;
	return dict && py_dict_get_str(c, dict, name, &v) == 0 ? v : 0;
}

static inline bool rd_ptr(struct py_ctx *c, uint64_t addr, uint64_t *out)
{
	return py_rd_ptr(c, addr, out) == 0;
}

static inline bool is_none(struct py_ctx *c, uint64_t v)
{
	return py_type_of(c, v, NULL) == PYT_NONE;
}


/* ---- Each appends the repr of the object at ADDR and returns true, or
 * returns false when it cannot be proven (repr_stdlib then takes back
 * what it appended and shows the fallback) ---- */

/* builtins.c */
bool repr_exception(struct rctx *r, uint64_t addr, uint64_t type);
bool repr_structseq(struct rctx *r, uint64_t addr, uint64_t type);
bool repr_generator(struct rctx *r, uint64_t addr, uint64_t type);
/* collections.c */
bool repr_deque(struct rctx *r, uint64_t addr);
bool repr_defaultdict(struct rctx *r, uint64_t addr);
bool repr_odict(struct rctx *r, uint64_t addr);
bool repr_counter(struct rctx *r, uint64_t addr, uint64_t type);
bool repr_namedtuple(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner);
/* datatypes.c */
bool repr_partial(struct rctx *r, uint64_t addr);
bool repr_datetime(struct rctx *r, uint64_t addr, uint64_t type, const struct py_stdlib *s);
bool repr_decimal(struct rctx *r, uint64_t addr);
bool repr_enum(struct rctx *r, uint64_t addr, uint64_t type);
bool repr_uuid(struct rctx *r, uint64_t addr, uint64_t type);
bool repr_fraction(struct rctx *r, uint64_t addr, uint64_t type);
/* A dataclass, the class OWNER's generated __repr__ proven by repr_stdlib. */
bool repr_dataclass(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner, const struct py_stdlib *s);
bool repr_path(struct rctx *r, uint64_t addr, uint64_t type);

#endif
