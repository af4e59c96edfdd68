/* sys.getsizeof of an object in a dump, as the interpreter computes it:
 * the __sizeof__ of the class along the MRO that defines it, plus what
 * _PySys_GetSizeOf adds (the GC header; 3.11+ the pre-header of managed
 * dicts and weak references).  The rules are CPython's, read from its
 * Objects/ (listobject.c list___sizeof__, dictobject.c _PyDict_SizeOf and
 * _PyDict_KeysSize, setobject.c set_sizeof, bytearrayobject.c
 * bytearray_sizeof, typeobject.c object___sizeof__ and type___sizeof__,
 * moduleobject.c module___sizeof__, unicodeobject.c unicode_sizeof,
 * longobject.c int___sizeof__, bytesobject.c bytes_sizeof) of 3.6 to 3.15,
 * array.array's (Modules/arraymodule.c array_array___sizeof__) and numpy's
 * ndarray (numpy/core/src/multiarray/methods.c array_sizeof);
 * a __sizeof__ of any other class is not guessed: the type is marked
 * inexact. */
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/repr/repr.h"

#include <string.h>

/* Include/object.h */
#define TPF_MANAGED_WEAKREF (1ul << 3)    /* 3.12+ */
#define TPF_MANAGED_DICT    (1ul << 4)    /* 3.11+ */

/* Here rather than in types.c, which asks this file for a type's rule:
 * reach.c and path.c also follow a class's namespace through it. */
int heap_type_dict(struct py_ctx *c, uint64_t type, uint64_t *dict)
{
	uint64_t flags;
	*dict = 0;
	if (dump_read(c->d, type + c->L->type_flags, &flags, sizeof(flags)) != PC_OK)
		return -1;
	return flags & TPF_HEAPTYPE ? (py_rd_ptr(c, type + c->L->type_dict, dict) == PC_OK ? 0 : -1) : 0;
}

int heap_type_refs(struct py_ctx *c, uint64_t type, uint64_t refs[HEAP_TYPE_REFS])
{
	const struct py_layout *L = c->L;
	const int64_t at[HEAP_TYPE_REFS] = { L->type_dict, L->type_bases, L->type_mro };
	uint64_t flags;
	memset(refs, 0, HEAP_TYPE_REFS * sizeof(refs[0]));
	if (dump_read(c->d, type + L->type_flags, &flags, sizeof(flags)) != PC_OK)
		return -1;
	if (!(flags & TPF_HEAPTYPE))
		return 0;
	for (int i = 0; i < HEAP_TYPE_REFS; i++)
		if (at[i] >= 0 && py_rd_ptr(c, type + (uint64_t)at[i], &refs[i]) != PC_OK)
			return -1;
	return 0;
}

/* Does the static type TYPE's tp_methods define __sizeof__?  tp_methods
 * is three words before tp_base in every version's PyTypeObject
 * (tp_methods, tp_members, tp_getset, tp_base); a PyMethodDef is four
 * words, ml_name first, the array ends with a NULL name. */
static bool methods_define_sizeof(struct py_ctx *c, uint64_t type)
{
	uint64_t m, name;
	char buf[11];
	if (py_rd_ptr(c, type + (uint64_t)c->L->type_base - 24, &m) != PC_OK || !m)
		return false;
	for (int i = 0; i < 512; i++, m += 32) {
		if (py_rd_ptr(c, m, &name) != PC_OK || !name)
			return false;
		if (dump_read(c->d, name, buf, sizeof(buf)) == PC_OK && memcmp(buf, "__sizeof__", 11) == 0)
			return true;
	}
	return false;
}

/* Does TYPE define __sizeof__ itself: a heap type in its dict (a class
 * statement's def, or an extension's method), a static type in its
 * tp_methods (3.12+ keeps a static built-in type's dict outside it)?
 * *IN_DICT: the heap type's __sizeof__, 0 for a static type's. */
static bool defines_sizeof(struct py_ctx *c, uint64_t type, uint64_t *in_dict)
{
	uint64_t dict;
	if (heap_type_dict(c, type, &dict) == 0 && dict && py_dict_get_str(c, dict, "__sizeof__", in_dict) == 0)
		return true;
	*in_dict = 0;
	return methods_define_sizeof(c, type);
}

/* Is V, the __sizeof__ in a heap type's dict, a C method (a
 * method_descriptor: an extension's type made by PyType_FromSpec, as
 * array.array is from 3.10), not a Python function (a class's)? */
static bool c_method(struct py_ctx *c, uint64_t v)
{
	uint64_t vt;
	const char *name;
	return v && py_rd_ptr(c, v + c->L->object_type, &vt) == PC_OK && (name = py_type_tp_name(c, vt)) != NULL &&
	       strcmp(name, "method_descriptor") == 0;
}

static const struct {
	const char *name;
	enum heap_sizeof rule;
} known[] = {
	{ "object", HS_OBJECT }, { "list", HS_LIST }, { "dict", HS_DICT }, { "set", HS_SET },
	{ "frozenset", HS_SET }, { "bytearray", HS_BYTEARRAY }, { "type", HS_TYPE },
	{ "module", HS_MODULE }, { "str", HS_STR }, { "int", HS_INT }, { "bytes", HS_OBJECT },
	{ "numpy.ndarray", HS_NDARRAY }, { "array.array", HS_ARRAY }, { "code", HS_CODE },
};


void heap_sizeof_rule(struct py_ctx *c, struct heap_type *t)
{
	const struct py_layout *L = c->L;
	uint64_t mro, k;
	int64_t n;
	t->rule = HS_UNKNOWN;
	t->owner = NULL;
	if (py_rd_ptr(c, t->addr + L->type_mro, &mro) != PC_OK || py_type_of(c, mro, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, mro + L->var_size, &n) != PC_OK || n < 1 || n > 256)
		return;
	for (int64_t i = 0; i < n; i++) {
		if (py_rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)i, &k) != PC_OK)
			return;
		uint64_t in_dict;
		if (!defines_sizeof(c, k, &in_dict))
			continue;
		uint64_t flags = 0;
		dump_read(c->d, k + L->type_flags, &flags, sizeof(flags));
		t->owner = py_type_name(c, k);
		if ((flags & TPF_HEAPTYPE) && !c_method(c, in_dict))
			return;      /* a class's own __sizeof__: not guessed */
		const char *name = py_type_tp_name(c, k);
		for (size_t j = 0; name && j < sizeof(known) / sizeof(known[0]); j++)
			if (strcmp(name, known[j].name) == 0)
				t->rule = known[j].rule;
		/* a dtype's item size: an int after PyObject_HEAD, typeobj, four
		 * chars and int type_num in numpy 1 (numpy/ndarraytypes.h);
		 * numpy 2 put a 64-bit flags there and elsize, an npy_intp,
		 * after it, but no test interpreter has numpy 2 yet: not sized */
		if (t->rule == HS_NDARRAY && py_numpy_major(c) != 1)
			t->rule = HS_UNKNOWN;
		/* code_sizeof before 3.11 adds its cell-to-argument map and
		 * opcode cache: not computed */
		if (t->rule == HS_CODE && L->minor < 11)
			t->rule = HS_UNKNOWN;
		return;
	}
}

/* _PyDict_KeysSize: the keys object's header, its index table and its
 * usable entries (USABLE_FRACTION: two thirds of the slots). */
static int keys_size(struct py_ctx *c, uint64_t keys, uint64_t *size)
{
	const struct py_layout *L = c->L;
	if (L->minor >= 11) {
		uint8_t b[3];
		if (dump_read(c->d, keys + L->dictkeys_log2_size, b, 3) != PC_OK || b[0] > 40 || b[1] > 43)
			return -1;
		uint64_t slots = 1ull << b[0];
		uint64_t es = b[2] == 0 ? (uint64_t)L->sizeof_dictkeyentry : (uint64_t)L->sizeof_dictunicodeentry;
		*size = (uint64_t)L->dictkeys_indices + (1ull << b[1]) + (slots << 1) / 3 * es;
		return 0;
	}
	int64_t slots;
	if (py_rd_i64(c, keys + L->dictkeys_size, &slots) != PC_OK || slots < 8 || slots > (1ll << 40))
		return -1;
	uint64_t ix = slots <= 0xff ? 1 : slots <= 0xffff ? 2 : slots <= 0xffffffffll ? 4 : 8;
	*size = (uint64_t)L->dictkeys_indices + ix * (uint64_t)slots +
		((uint64_t)slots << 1) / 3 * (uint64_t)L->sizeof_dictkeyentry;
	return 0;
}

static int dict_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size)
{
	const struct py_layout *L = c->L;
	uint64_t keys, values, ksize;
	int64_t refcnt;
	if (py_rd_ptr(c, obj + L->dict_keys, &keys) != PC_OK || !keys ||
	    py_rd_ptr(c, obj + L->dict_values, &values) != PC_OK ||
	    py_rd_i64(c, keys + L->dictkeys_refcnt, &refcnt) != PC_OK)
		return -1;
	*size = (uint64_t)t->basicsize;
	if (values) {
		/* a split table's values: 3.11+ as many as the shared keys can
		 * hold (dk_nentries + dk_usable; dk_usable is the word before
		 * dk_nentries in every version), before two thirds of its slots */
		if (L->minor >= 11) {
			int64_t usable, nentries;
			if (py_rd_i64(c, keys + L->dictkeys_nentries - 8, &usable) != PC_OK ||
			    py_rd_i64(c, keys + L->dictkeys_nentries, &nentries) != PC_OK ||
			    usable < 0 || nentries < 0 || usable + nentries > (1ll << 40))
				return -1;
			*size += 8 * (uint64_t)(usable + nentries);
		} else {
			int64_t slots;
			if (py_rd_i64(c, keys + L->dictkeys_size, &slots) != PC_OK || slots < 0 || slots > (1ll << 40))
				return -1;
			*size += 8 * (((uint64_t)slots << 1) / 3);
		}
	}
	/* shared keys are counted in their class */
	if (refcnt == 1) {
		if (keys_size(c, keys, &ksize) != 0)
			return -1;
		*size += ksize;
	}
	return 0;
}

/* object.__sizeof__: tp_basicsize, and tp_itemsize per item (ob_size;
 * more items than memory holds is no size) */
static int object_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size)
{
	*size = (uint64_t)t->basicsize;
	if (t->itemsize > 0) {
		int64_t n;
		if (py_rd_i64(c, obj + c->L->var_size, &n) != PC_OK || n < -(1ll << 40) || n > (1ll << 40))
			return -1;
		*size += (uint64_t)(n < 0 ? -n : n) * (uint64_t)t->itemsize;
	}
	return 0;
}

/* unicode_sizeof: the compact forms' header and characters (and their
 * terminator), a legacy string's (a str subclass's instances)
 * PyUnicodeObject and its data; and a UTF-8 copy, and before 3.12 a
 * wchar_t copy, kept beside them.  The state's bits are layout.h's. */
static int str_sizeof(struct py_ctx *c, uint64_t obj, uint64_t *size)
{
	const struct py_layout *L = c->L;
	uint32_t state;
	int64_t len;
	if (py_rd_i64(c, obj + L->unicode_length, &len) != PC_OK || len < 0 || len > (1ll << 40) ||
	    dump_read(c->d, obj + L->unicode_state, &state, 4) != PC_OK)
		return -1;
	uint64_t kind = (state >> L->unicode_kind_shift) & 7, data;
	bool compact = (state >> L->unicode_compact_shift) & 1, ascii = (state >> L->unicode_ascii_shift) & 1;
	if (compact && ascii) {
		*size = (uint64_t)L->sizeof_ascii + (uint64_t)len + 1;
		data = obj + (uint64_t)L->sizeof_ascii;
	} else if (compact) {
		*size = (uint64_t)L->sizeof_compact + ((uint64_t)len + 1) * kind;
		data = obj + (uint64_t)L->sizeof_compact;
	} else {
		*size = (uint64_t)L->unicode_data + 8;    /* sizeof(PyUnicodeObject) */
		if (py_rd_ptr(c, obj + L->unicode_data, &data) != PC_OK)
			return -1;
		if (data)
			*size += ((uint64_t)len + 1) * kind;
	}
	/* PyCompactUnicodeObject: utf8_length, utf8, and before 3.12
	 * wstr_length (a compact ASCII string's is its length) */
	uint64_t utf8, wstr;
	int64_t n;
	if (!(compact && ascii)) {
		if (py_rd_ptr(c, obj + L->unicode_utf8, &utf8) != PC_OK)
			return -1;
		if (utf8 && utf8 != data) {
			if (py_rd_i64(c, obj + L->unicode_utf8 - 8, &n) != PC_OK || n < 0 || n > (1ll << 40))
				return -1;
			*size += (uint64_t)n + 1;
		}
	}
	if (L->unicode_wstr >= 0 && py_rd_ptr(c, obj + L->unicode_wstr, &wstr) == PC_OK && wstr &&
	    (wstr != data || (L->unicode_ready_shift >= 0 && !((state >> L->unicode_ready_shift) & 1)))) {
		if (compact && ascii)
			n = len;
		else if (py_rd_i64(c, obj + L->unicode_utf8 + 8, &n) != PC_OK || n < 0 || n > (1ll << 40))
			return -1;
		*size += ((uint64_t)n + 1) * 4;   /* sizeof(wchar_t) */
	}
	return 0;
}

/* int___sizeof__: the digits' offset and 4 bytes a digit, 3.11+ at least
 * one (3.12+ lv_tag's count, above its three bits; before, |ob_size|) */
static int int_sizeof(struct py_ctx *c, uint64_t obj, uint64_t *size)
{
	const struct py_layout *L = c->L;
	int64_t n;
	if (L->long_lv_tag >= 0) {
		uint64_t tag;
		if (py_rd_ptr(c, obj + L->long_lv_tag, &tag) != PC_OK || (tag >> 3) > (1ull << 40))
			return -1;
		n = (int64_t)(tag >> 3);
		if (n < 1)
			n = 1;
	} else {
		if (py_rd_i64(c, obj + L->var_size, &n) != PC_OK || n < -(1ll << 40) || n > (1ll << 40))
			return -1;
		n = n < 0 ? -n : n;
		if (n < 1 && L->minor >= 11)
			n = 1;
	}
	*size = (uint64_t)L->long_digit + 4 * (uint64_t)n;
	return 0;
}

/* numpy's array_sizeof: the type's basic size, the dimensions and strides
 * (an npy_intp each per dimension), and the data when the array owns it
 * (NPY_ARRAY_OWNDATA): the item size (numpy 1's descr->elsize, an int at
 * 32) times every dimension. */
#define NPY_ARRAY_OWNDATA 0x4
static int ndarray_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size)
{
	struct py_ndarray a;
	uint32_t e;
	uint64_t d[64], n = 1;
	if (py_numpy_array(c, obj, &a) != 0 || a.nd > 64)
		return -1;
	*size = (uint64_t)t->basicsize + 16 * (uint64_t)a.nd;
	if (!(a.flags & NPY_ARRAY_OWNDATA))
		return 0;
	if ((a.nd && dump_read(c->d, a.dims, d, 8 * (size_t)a.nd) != PC_OK) ||
	    dump_read_u32(c->d, a.descr + 32, &e) != PC_OK || (int32_t)e < 0 || e > (1u << 20))
		return -1;
	for (int32_t i = 0; i < a.nd; i++) {
		if ((int64_t)d[i] < 0 || (d[i] && n > (UINT64_C(1) << 48) / d[i]))
			return -1;
		n *= d[i];
	}
	if (n && e > (UINT64_C(1) << 48) / n)
		return -1;
	*size += n * e;
	return 0;
}

static int own_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size)
{
	const struct py_layout *L = c->L;
	int64_t n;
	uint64_t p;
	switch (t->rule) {
	case HS_LIST:
		if (py_rd_i64(c, obj + L->list_allocated, &n) != PC_OK || n < 0 || n > (1ll << 40))
			return -1;
		*size = (uint64_t)t->basicsize + 8 * (uint64_t)n;
		return 0;
	case HS_DICT:
		return dict_sizeof(c, obj, t, size);
	case HS_SET: {
		/* a table other than the 8-slot one inside the object */
		if (py_rd_i64(c, obj + L->set_mask, &n) != PC_OK || n < 0 || n > (1ll << 40))
			return -1;
		*size = (uint64_t)t->basicsize + (n + 1 > 8 ? (uint64_t)(n + 1) * (uint64_t)L->sizeof_setentry : 0);
		return 0;
	}
	case HS_BYTEARRAY:
		/* 3.15 keeps the bytes in a bytes object whose header counts too */
		if (py_rd_i64(c, obj + L->bytearray_alloc, &n) != PC_OK || n < 0 || n > (1ll << 48))
			return -1;
		*size = (uint64_t)t->basicsize + (uint64_t)n + (L->minor >= 15 ? (uint64_t)L->bytes_sval + 1 : 0);
		return 0;
	case HS_TYPE: {
		/* a heap type: sizeof(PyHeapTypeObject) (type's tp_basicsize)
		 * and its cached shared keys; a static type sizeof(PyTypeObject) */
		int64_t heapsize;
		uint64_t flags = 0, keys, ksize;
		if (!c->type_addr[PYT_TYPE] ||
		    py_rd_i64(c, c->type_addr[PYT_TYPE] + L->type_basicsize, &heapsize) != PC_OK ||
		    dump_read(c->d, obj + L->type_flags, &flags, sizeof(flags)) != PC_OK ||
		    !(flags & TPF_HEAPTYPE))
			return -1;
		*size = (uint64_t)heapsize;
		if (py_rd_ptr(c, obj + L->heaptype_cached_keys, &keys) != PC_OK)
			return -1;
		if (keys) {
			if (keys_size(c, keys, &ksize) != 0)
				return -1;
			*size += ksize;
		}
		return 0;
	}
	case HS_MODULE: {
		/* and md_def->m_size: md_def follows md_dict; m_size is at 56
		 * in PyModuleDef (after PyModuleDef_Base's 40 bytes, m_name,
		 * m_doc) */
		*size = (uint64_t)t->basicsize;
		if (py_rd_ptr(c, obj + L->module_dict + 8, &p) != PC_OK)
			return -1;
		if (p) {
			if (py_rd_i64(c, p + 56, &n) != PC_OK || n < -1 || n > (1ll << 40))
				return -1;
			*size += (uint64_t)n;
		}
		return 0;
	}
	case HS_NDARRAY:
		return ndarray_sizeof(c, obj, t, size);
	case HS_ARRAY: {
		/* Modules/arraymodule.c's arrayobject, 3.6-3.15: after
		 * PyObject_VAR_HEAD, ob_item, allocated (the items allocated),
		 * ob_descr (a struct arraydescr: its int itemsize after a char
		 * typecode, at 4) */
		uint64_t at = (uint64_t)L->var_size + 8;
		uint32_t itemsize;
		if (py_rd_i64(c, obj + at + 8, &n) != PC_OK || n < 0 || n > (1ll << 48) ||
		    py_rd_ptr(c, obj + at + 16, &p) != PC_OK || dump_read_u32(c->d, p + 4, &itemsize) != PC_OK ||
		    itemsize == 0 || itemsize > 16)
			return -1;
		*size = (uint64_t)t->basicsize + (uint64_t)n * itemsize;
		return 0;
	}
	case HS_CODE: {
		/* code_sizeof (Objects/codeobject.c, 3.11-3.15):
		 * _PyObject_VAR_SIZE, its code units after the header rounded
		 * up to a pointer, and the co_extra block a tool may have set,
		 * which is not read: such an object's size is not known */
		if (L->code_extra < 0 || py_rd_ptr(c, obj + (uint64_t)L->code_extra, &p) != PC_OK || p ||
		    object_sizeof(c, obj, t, size) != 0)
			return -1;
		*size = (*size + 7) & ~(uint64_t)7;
		return 0;
	}
	case HS_OBJECT:
		return object_sizeof(c, obj, t, size);
	case HS_STR:
		return str_sizeof(c, obj, size);
	case HS_INT:
		return int_sizeof(c, obj, size);
	default:
		/* a __sizeof__ not computed: the basic size, nothing read that
		 * its own layout may use otherwise (a generator's ob_size) */
		*size = (uint64_t)t->basicsize;
		return 0;
	}
}

int heap_sizeof(struct py_ctx *c, uint64_t obj, const struct heap_type *t, uint64_t *size, uint64_t *buffer)
{
	const struct py_layout *L = c->L;
	*buffer = 0;
	if (own_sizeof(c, obj, t, size) != 0)
		return -1;
	if ((t->rule == HS_BYTEARRAY || t->rule == HS_ARRAY || t->rule == HS_NDARRAY) &&
	    *size > (uint64_t)t->basicsize)
		*buffer = *size - (uint64_t)t->basicsize;
	if (!(t->flags & TPF_HAVE_GC))
		return 0;
	*size += heap_gc_head_size(L);
	uint64_t pre = L->minor >= 12 ? TPF_MANAGED_DICT | TPF_MANAGED_WEAKREF : L->minor == 11 ? TPF_MANAGED_DICT : 0;
	if (t->flags & pre)
		*size += 16;
	return 0;
}
