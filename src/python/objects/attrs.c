/* An instance's attributes, for --locals=deep: its __dict__, wherever the
 * version keeps it, and its __slots__.
 *
 * Where the __dict__ is (Include/internal/pycore_object.h of each version):
 * up to 3.10, at tp_dictoffset inside the object (a negative one counts
 * from the end of a variable-size object: a subclass of int or tuple); with Py_TPFLAGS_MANAGED_DICT
 * (1 << 4, 3.11+) before the object: 3.11 a dict pointer at -24 or, while no
 * dict was made, a values array at -32; 3.12 one word at -24 that is a dict
 * pointer, or a values pointer minus one (odd); 3.13 a dict pointer at -24
 * (-8 in free-threaded builds, which have no GC header before the object:
 * MANAGED_DICT_OFFSET), and with Py_TPFLAGS_INLINE_VALUES (1 << 2) the
 * values inline at tp_basicsize (right after the object header), in use
 * while their `valid` byte (the fourth) is set.  Values arrays share the
 * keys of the class (ht_cached_keys).
 * py_instance_referents gives the same objects unnamed, as the interpreter's
 * subtype_traverse visits them: the dict itself (not its items) where one
 * was made, else each value of the values array, and each slot's object.
 * __slots__ are PyMemberDef entries (40 bytes: name, type, offset, flags,
 * doc) that follow each heap type, one per slot, of type T_OBJECT_EX (16),
 * for every class along the MRO.
 */
#include "python/objects/objects.h"

#include <string.h>

#define TPFLAGS_INLINE_VALUES (1ul << 2)
#define TPFLAGS_MANAGED_DICT  (1ul << 4)
#define TPFLAGS_HEAPTYPE      (1ul << 9)
#define MEMBERDEF_SIZE        40
#define T_OBJECT_EX           16
#define MAX_SLOTS             1024
#define MAX_BASES             64

struct by_name {
	py_attr_fn fn;
	void *arg;
	int64_t only_len;   /* >= 0: only a key of so many characters can be
			     * the one FN looks for (py_instance_attr_named) */
	py_dict_fn raw;     /* py_instance_referents: the objects, unnamed */
};

static int dict_attr(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct by_name *b = arg;
	const char *why;
	int64_t length;
	if (py_type_of(c, key, NULL) != PYT_STR)
		return 0;
	/* a str of another length is not the ASCII name looked for (see
	 * py_dict_get_str): its characters need not be read */
	if (b->only_len >= 0 &&
	    (py_rd_i64(c, key + c->L->unicode_length, &length) != 0 || length != b->only_len))
		return 0;
	const char *name = py_str_utf8(c, key, PY_MAX_NAME, &why);
	return name ? b->fn(c, name, value, b->arg) : 0;
}

static int dict_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, uint64_t flags, struct by_name *b)
{
	const struct py_layout *L = c->L;
	uint64_t dict = 0, values = 0, keys = 0;
	if (L->minor >= 11 && (flags & TPFLAGS_MANAGED_DICT)) {
		if (L->minor >= 13 && (flags & TPFLAGS_INLINE_VALUES)) {
			uint8_t valid;
			int64_t basicsize;
			if (dump_read(c->d, type + L->type_basicsize, &basicsize, 8) != PC_OK ||
			    basicsize <= 0 || basicsize > (1 << 16) ||
			    dump_read(c->d, obj + (uint64_t)basicsize + 3, &valid, 1) != PC_OK)
				return -1;
			if (valid)
				values = obj + (uint64_t)basicsize;
		}
		uint64_t word;
		uint64_t managed = py_layout_free_threaded(L) ? 8 : 24;
		if (!values && py_rd_ptr(c, obj - managed, &word) != 0)
			return -1;
		if (!values) {
			if (L->minor == 12 && (word & 1))
				values = word + 1;
			else
				dict = word;
		}
		if (!values && !dict && L->minor == 11 && py_rd_ptr(c, obj - 32, &values) != 0)
			return -1;
		if (values && py_rd_ptr(c, type + L->heaptype_cached_keys, &keys) != 0)
			return -1;
	} else {
		int64_t off;
		if (dump_read(c->d, type + L->type_dictoffset, &off, 8) != PC_OK)
			return -1;
		if (off < 0 && off > -(1 << 20)) {
			/* a subclass of a variable-size type (int, bytes, tuple):
			 * counted from the object's end, its size rounded up to
			 * a word (Objects/object.c _PyObject_GetDictPtr) */
			int64_t n, basic, item;
			if (py_rd_i64(c, obj + L->var_size, &n) != 0 ||
			    dump_read(c->d, type + L->type_basicsize, &basic, 8) != PC_OK ||
			    dump_read(c->d, type + L->type_itemsize, &item, 8) != PC_OK || n < -(1ll << 40) ||
			    n > (1ll << 40) || basic <= 0 || basic > (1 << 20) || item < 0 || item > (1 << 16))
				return -1;
			off += (basic + (n < 0 ? -n : n) * item + 7) & ~7ll;
		}
		if (off > 0 && off < (1ll << 40) && py_rd_ptr(c, obj + (uint64_t)off, &dict) != 0)
			return -1;
	}
	if (values)
		return py_dict_keys_values(c, keys, values, b->raw ? b->raw : dict_attr, b->raw ? b->arg : b);
	if (dict && b->raw) {
		b->raw(c, 0, dict, b->arg);
		return 0;
	}
	if (dict)
		return py_dict_items(c, dict, dict_attr, b);
	return 0;
}

static int slot_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, struct by_name *b)
{
	const struct py_layout *L = c->L;
	/* every class of the MRO (tp_mro): with
	 * several bases, __slots__ of a base that is not tp_base count too */
	uint64_t mro;
	int64_t nmro;
	if (py_rd_ptr(c, type + L->type_mro, &mro) != 0 || !mro ||
	    py_rd_i64(c, mro + L->var_size, &nmro) != 0 || nmro < 1 || nmro > MAX_BASES)
		return -1;
	for (int64_t depth = 0; depth < nmro; depth++) {
		uint64_t flags, meta;
		int64_t nmembers, meta_size;
		if (py_rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)depth, &type) != 0 ||
		    dump_read(c->d, type + L->type_flags, &flags, 8) != PC_OK)
			return -1;
		if (!(flags & TPFLAGS_HEAPTYPE))
			continue; /* static types keep no __slots__ of Python code */
		if (py_rd_ptr(c, type + L->object_type, &meta) != 0 ||
		    dump_read(c->d, meta + L->type_basicsize, &meta_size, 8) != PC_OK ||
		    dump_read(c->d, type + L->var_size, &nmembers, 8) != PC_OK)
			return -1;
		if (nmembers < 0 || nmembers > MAX_SLOTS || meta_size <= 0 || meta_size > (1 << 16))
			return -1;
		uint64_t members = type + (uint64_t)meta_size;
		for (int64_t i = 0; i < nmembers; i++) {
			uint8_t m[MEMBERDEF_SIZE];
			if (dump_read(c->d, members + (uint64_t)i * MEMBERDEF_SIZE, m, sizeof(m)) != PC_OK)
				return -1;
			uint64_t name_ptr, value;
			int32_t mtype;
			int64_t offset;
			memcpy(&name_ptr, m, 8);
			memcpy(&mtype, m + 8, 4);
			memcpy(&offset, m + 16, 8);
			if (mtype != T_OBJECT_EX || offset <= 0 || offset > (1 << 20))
				continue;
			if (b->raw) {
				if (py_rd_ptr(c, obj + (uint64_t)offset, &value) != 0)
					return -1;
				if (value && b->raw(c, 0, value, b->arg))
					return 0;
				continue;
			}
			char name[256];
			if (dump_read_cstr(c->d, name_ptr, name, sizeof(name)) != PC_OK)
				return -1;
			if (py_rd_ptr(c, obj + (uint64_t)offset, &value) != 0)
				return -1;
			if (value && b->fn(c, arena_strdup(c->a, name), value, b->arg))
				return 0;
		}
	}
	return 0;
}

static int instance_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, struct by_name *b)
{
	uint64_t flags;
	if (dump_read(c->d, type + c->L->type_flags, &flags, 8) != PC_OK)
		return -1;
	if (dict_attrs(c, obj, type, flags, b) != 0)
		return -1;
	return slot_attrs(c, obj, type, b);
}

int py_instance_attrs(struct py_ctx *c, uint64_t obj, uint64_t type, py_attr_fn fn, void *arg)
{
	struct by_name b = { fn, arg, -1, NULL };
	return instance_attrs(c, obj, type, &b);
}

int py_instance_referents(struct py_ctx *c, uint64_t obj, uint64_t type, py_dict_fn fn, void *arg)
{
	struct by_name b = { NULL, arg, -1, fn };
	return instance_attrs(c, obj, type, &b);
}

int py_instance_attr_named(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name, py_attr_fn fn,
			   void *arg)
{
	struct by_name b = { fn, arg, -1, NULL };
	size_t len = strlen(name);
	bool ascii = len < PY_MAX_NAME;
	for (const char *p = name; *p && ascii; p++)
		ascii = (unsigned char)*p < 0x80;
	if (ascii)
		b.only_len = (int64_t)len;
	return instance_attrs(c, obj, type, &b);
}

struct attr {
	const char *name;
	uint64_t value;
};

static int take_attr(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	struct attr *a = arg;
	(void)c;
	if (strcmp(name, a->name) != 0)
		return 0;
	a->value = value;
	return 1;
}

/* The instance attribute NAME of OBJ (an instance of a Python class, or of
 * a C type with a __dict__): its value, 0 when it has none. */
uint64_t py_attr(struct py_ctx *c, uint64_t obj, const char *name)
{
	struct attr a = { name, 0 };
	uint64_t type;
	if (!obj || py_type_of(c, obj, &type) != PYT_OTHER ||
	    py_instance_attr_named(c, obj, type, name, take_attr, &a) != 0)
		return 0;
	return a.value;
}

uint64_t py_instance_attr(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name)
{
	struct attr a = { name, 0 };
	if (py_instance_attr_named(c, obj, type, name, take_attr, &a) != 0)
		return 0;
	return a.value;
}
