/* Object readers: types, str, bytes, int, dict, set, code objects and an
 * instance's attributes, each size capped; NULL or -1 says why, none formats. */
#ifndef PYCORE_PYTHON_OBJECTS_H
#define PYCORE_PYTHON_OBJECTS_H

#include "python/python_int.h"
#include "python/runtime/runtime.h"

/* What a walk remembers of a code object. */
struct py_code {
	uint64_t addr;
	const char *name, *qualname, *filename;
	int firstlineno;
	int firsttraceable;          /* code units; 3.11+ */
	uint8_t *table;              /* co_lnotab or co_linetable, arena-owned */
	size_t table_len;
	const char *error;           /* set when the code object could not be read */
	struct model_error_info error_info;
};

/* What a walk remembers of a type's name (py_type_qualname). */
struct py_type_name {
	uint64_t addr;
	const char *module, *qualname;
};

/* ---- types.c ---- */

/* The type of the object at ADDR (and its type object's address). */
enum py_type py_type_of(struct py_ctx *c, uint64_t addr, uint64_t *type);
/* A type's tp_name, in the arena; NULL when not captured. */
const char *py_type_tp_name(struct py_ctx *c, uint64_t type);
/* The short name of a type as _PyType_Name gives it: after tp_name's
 * last dot; NULL when not captured. */
const char *py_type_short_name(struct py_ctx *c, uint64_t type);
/* The built-in types' symbols, by enum py_type. */
extern const char *const py_type_symbols[PYT_COUNT];

/* ---- classes.c ---- */

/* The built-in types, by symbol (when found by symbols) and from the
 * builtins dict of the interpreter HEAD. */
void py_find_types(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt, uint64_t head);
/* "dict", "collections.OrderedDict": the name Python shows for a type. */
const char *py_type_name(struct py_ctx *c, uint64_t type);
/* Module and qualified name of a type, as object.__repr__ shows them. */
void py_type_qualname(struct py_ctx *c, uint64_t type, const char **module, const char **qualname);
/* The value of NAME found along TYPE's MRO (*OWNER, when not NULL, the
 * class whose dict holds it), 0 when none. */
uint64_t py_mro_lookup(struct py_ctx *c, uint64_t type, const char *name, uint64_t *owner);

/* ---- objects.c ---- */

/* Read a str object as UTF-8 into the arena (at most MAXCHARS characters).
 * Returns NULL and sets *why on failure. */
const char *py_str_utf8(struct py_ctx *c, uint64_t addr, size_t maxchars, const char **why);
/* Read a bytes object's contents (at most MAX bytes) into the arena. */
uint8_t *py_bytes(struct py_ctx *c, uint64_t addr, size_t max, size_t *len, const char **why);
/* Why an int object's digits could not be read. */
enum py_long_err {
	PY_LONG_OK,
	PY_LONG_UNREADABLE,          /* its size (lv_tag, ob_size) not captured */
	PY_LONG_CORRUPT_SIGN,        /* 3.12+ sign bits 3, which CPython never writes */
	PY_LONG_TOO_LARGE,           /* more digits than asked for (or a negative count) */
	PY_LONG_DIGITS_UNREADABLE,   /* its digits not captured */
};
/* The sign and 30-bit digits (least significant first) of the int object at
 * ADDR: sets *NDIGITS (also when PY_LONG_TOO_LARGE) and *NEGATIVE, and reads
 * the digits into DIGITS when there are at most MAX of them. */
enum py_long_err py_long_digits(struct py_ctx *c, uint64_t addr, uint32_t *digits, size_t max,
				int64_t *ndigits, bool *negative);
/* Read an int object that fits in 60 bits: 0, or -1 when it does not, is
 * not captured or is corrupt. */
int py_long_i64(struct py_ctx *c, uint64_t addr, int64_t *out);
/* Look up a str key in a dict; returns 0 and the value's address. */
int py_dict_get_str(struct py_ctx *c, uint64_t dict, const char *key, uint64_t *value);
/* The same for N keys (at most PY_MAX_LOOKUP) in one pass over the dict:
 * VALUES[i] the value of KEYS[i], 0 when not found; returns how many were
 * found. */
#define PY_MAX_LOOKUP 16
int py_dict_get_strs(struct py_ctx *c, uint64_t dict, const char *const *keys, uint64_t *values, size_t n);

/* Iterate a dict's items: calls FN for each key/value pair until it returns
 * non-zero.  Returns 0, or -1 when the dict could not be read. */
typedef int (*py_dict_fn)(struct py_ctx *c, uint64_t key, uint64_t value, void *arg);
int py_dict_items(struct py_ctx *c, uint64_t dict, py_dict_fn fn, void *arg);
/* The same over a keys object and (split tables) a values array. */
int py_dict_keys_values(struct py_ctx *c, uint64_t keys, uint64_t values, py_dict_fn fn, void *arg);
/* The dict of module NAME in sys.modules of interpreter INTERP: 0 and its
 * address, or -1 when not imported or unreadable. */
int py_module_dict(struct py_ctx *c, uint64_t interp, const char *name, uint64_t *dict);
/* The same for N modules (at most PY_MAX_LOOKUP) in one pass over
 * sys.modules: DICTS[i] 0 for those not found; returns how many were. */
int py_module_dicts(struct py_ctx *c, uint64_t interp, const char *const *names, uint64_t *dicts, size_t n);
/* Calls FN (value 0) for each key of the set at SET until it returns
 * non-zero; at most MAX keys.  0, or -1 when the set could not be read. */
int py_set_items(struct py_ctx *c, uint64_t set, size_t max, py_dict_fn fn, void *arg);
/* UTF-8 of one code point (at most 4 bytes); returns the length. */
size_t py_utf8_encode(uint32_t cp, char *out);

/* ---- code.c ---- */

/* A code object's name, file and line table, cached by address; valid
 * until the next call.  NULL only when out of memory; ->error says why a
 * code object could not be read. */
const struct py_code *py_code_get(struct py_ctx *c, uint64_t addr);
/* The line at POS in the bytecode (bytes up to 3.9, code units after);
 * 0 when unknown. */
int py_code_line(const struct py_ctx *c, const struct py_code *pc, int64_t pos);
/* F's line, and from 3.11 on its end line and columns, at POS as above. */
void py_code_locate(const struct py_ctx *c, const struct py_code *pc, int64_t pos, struct model_frame *f);

/* ---- attrs.c ---- */

/* An instance's attributes: its __dict__ (every layout) and __slots__. */
typedef int (*py_attr_fn)(struct py_ctx *c, const char *name, uint64_t value, void *arg);

/* Calls FN for each attribute of OBJ (of type TYPE) until it returns
 * non-zero.  Returns 0, or -1 when they could not be read. */
int py_instance_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, py_attr_fn fn, void *arg);
/* The same when FN looks for the attribute NAME only: the __dict__'s keys
 * that cannot be it are passed over unread (FN still compares the name). */
int py_instance_attr_named(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name, py_attr_fn fn,
			   void *arg);

/* The objects OBJ's attributes hold, unnamed, as the interpreter's
 * subtype_traverse visits them: FN (key 0, but for a values array's
 * entries) with its __dict__ where one was made, else each value of its
 * values array, and each slot's object; until FN returns non-zero.  0, or
 * -1 when they could not be read. */
int py_instance_referents(struct py_ctx *c, uint64_t obj, uint64_t type, py_dict_fn fn, void *arg);

/* The instance attribute NAME of OBJ (an instance of a Python class, or of
 * a C type with a __dict__): its value, 0 when it has none. */
uint64_t py_attr(struct py_ctx *c, uint64_t obj, const char *name);
/* The same for OBJ of type TYPE, whatever that type is (its __dict__ or
 * __slots__): 0 when not set. */
uint64_t py_instance_attr(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name);

#endif
