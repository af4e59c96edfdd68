/* numpy scalars: their value sits right after the object header
 * (numpy/core/include/numpy/arrayscalars.h: PyObject_HEAD then obval), and
 * their repr depends on the numpy major version in the dump: numpy 1.x prints
 * the bare value (5, 0.1, True), numpy 2 the constructor (np.int64(5),
 * np.float64(0.1), np.True_) — NEP 51. */
#include "python/repr/repr_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUMPY_OBVAL 16   /* sizeof(PyObject) on 64-bit, default builds */

int py_numpy_major(struct py_ctx *c)
{
	if (c->numpy_major)
		return c->numpy_major > 0 ? c->numpy_major : 0;
	c->numpy_major = -1;
	uint64_t modules = 0, mod, dict, ver;
	const char *why;
	if (c->L->interp_modules < 0 || !c->interp ||
	    dump_read_u64(c->d, c->interp + c->L->interp_modules, &modules) != PC_OK || !modules ||
	    py_dict_get_str(c, modules, "numpy", &mod) != 0 ||
	    dump_read_u64(c->d, mod + 16, &dict) != PC_OK || !dict ||   /* PyModuleObject.md_dict */
	    py_dict_get_str(c, dict, "__version__", &ver) != 0)
		return 0;
	const char *v = py_str_utf8(c, ver, 32, &why);
	if (v && v[0] >= '1' && v[0] <= '9')
		c->numpy_major = atoi(v);
	return c->numpy_major > 0 ? c->numpy_major : 0;
}

const char *py_numpy_repr(struct py_ctx *c, uint64_t addr, uint64_t type)
{
	uint64_t name_ptr;
	char name[64];
	if (dump_read_u64(c->d, type + c->L->type_name, &name_ptr) != PC_OK ||
	    dump_read_cstr(c->d, name_ptr, name, sizeof(name)) != PC_OK ||
	    strncmp(name, "numpy.", 6) != 0)
		return NULL;
	const char *t = name + 6;
	static const struct { const char *name; int size; char kind; } scalars[] = {
		{ "int8", 1, 'i' }, { "int16", 2, 'i' }, { "int32", 4, 'i' }, { "int64", 8, 'i' },
		{ "uint8", 1, 'u' }, { "uint16", 2, 'u' }, { "uint32", 4, 'u' }, { "uint64", 8, 'u' },
		{ "float32", 4, 'f' }, { "float64", 8, 'f' },
		{ "bool_", 1, 'b' }, { "bool", 1, 'b' },
	};
	int k = -1;
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (strcmp(t, scalars[i].name) == 0)
			k = (int)i;
	if (k < 0)
		return NULL;
	uint8_t raw[8] = { 0 };
	if (dump_read(c->d, addr + NUMPY_OBVAL, raw, (size_t)scalars[k].size) != PC_OK)
		return NULL;
	char val[64];
	switch (scalars[k].kind) {
	case 'i': {
		int64_t v = 0;
		if (scalars[k].size == 1) v = (int8_t)raw[0];
		else if (scalars[k].size == 2) { int16_t x; memcpy(&x, raw, 2); v = x; }
		else if (scalars[k].size == 4) { int32_t x; memcpy(&x, raw, 4); v = x; }
		else memcpy(&v, raw, 8);
		snprintf(val, sizeof(val), "%lld", (long long)v);
		break;
	}
	case 'u': {
		uint64_t v = 0;
		memcpy(&v, raw, (size_t)scalars[k].size);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
		break;
	}
	case 'f':
		if (scalars[k].size == 4) {
			float f;
			memcpy(&f, raw, 4);
			py_float_repr_single(f, val, sizeof(val));
		} else {
			double d;
			memcpy(&d, raw, 8);
			py_float_repr(d, val, sizeof(val));
		}
		break;
	default:
		if (py_numpy_major(c) >= 2)
			return raw[0] ? "np.True_" : "np.False_";
		return raw[0] ? "True" : "False";
	}
	if (py_numpy_major(c) >= 2)
		return arena_printf(c->a, "np.%s(%s)", t, val);
	return arena_strdup(c->a, val);
}

/* numpy arrays (numpy/core/include/numpy/ndarraytypes.h, the same in
 * numpy 1 and 2): PyArrayObject_fields {HEAD, char *data, int nd,
 * npy_intp *dimensions, *strides, PyObject *base, PyArray_Descr *descr,
 * int flags};
 * PyArray_Descr {HEAD, typeobj, char kind, char type, ...}.
 * array_repr prints a 1-d array of the default int ('l') or of bool, up to
 * its summarising threshold (1000), as "array([" the items, each
 * right-aligned to the widest (bools as " True"/"False"), ", "-joined,
 * "])", wrapped at 75 columns: only such arrays short enough for one line
 * are formed here.  Any other array keeps the fallback, its shape and
 * dtype said in the error. */
#define NPY_ONE_LINE     72      /* under numpy's 75 columns, "])" and all */
#define NPY_MAX_FORMED   1000

static const char *array_dtype(struct py_ctx *c, uint64_t descr, char *kind, char *code)
{
	uint64_t typeobj, p;
	char name[64];
	uint64_t h = (uint64_t)c->L->object_type + 8;
	if (dump_read_u64(c->d, descr + h, &typeobj) != PC_OK ||
	    dump_read(c->d, descr + h + 8, kind, 1) != PC_OK || dump_read(c->d, descr + h + 9, code, 1) != PC_OK ||
	    dump_read_u64(c->d, typeobj + c->L->type_name, &p) != PC_OK ||
	    dump_read_cstr(c->d, p, name, sizeof(name)) != PC_OK)
		return NULL;
	return arena_strdup(c->a, strncmp(name, "numpy.", 6) == 0 ? name + 6 : name);
}

int py_numpy_array(struct py_ctx *c, uint64_t addr, struct py_ndarray *a)
{
	uint64_t h = (uint64_t)c->L->object_type + 8;
	return dump_read_u64(c->d, addr + h, &a->data) == PC_OK && dump_read(c->d, addr + h + 8, &a->nd, 4) == PC_OK &&
			       dump_read_u64(c->d, addr + h + 16, &a->dims) == PC_OK &&
			       dump_read_u64(c->d, addr + h + 24, &a->strides) == PC_OK &&
			       dump_read_u64(c->d, addr + h + 40, &a->descr) == PC_OK &&
			       dump_read(c->d, addr + h + 48, &a->flags, 4) == PC_OK && a->nd >= 0
		       ? 0
		       : -1;
}

bool repr_numpy_array(struct rctx *r, uint64_t addr, uint64_t type, const char **note)
{
	struct py_ctx *c = r->c;
	uint64_t p;
	struct py_ndarray a;
	char name[32], kind = 0, code = 0;
	if (dump_read_u64(c->d, type + c->L->type_name, &p) != PC_OK ||
	    dump_read_cstr(c->d, p, name, sizeof(name)) != PC_OK || strcmp(name, "numpy.ndarray") != 0 ||
	    py_numpy_array(c, addr, &a) != 0 || a.nd > 32)
		return false;
	uint64_t data = a.data, dims = a.dims, strides = a.strides, descr = a.descr;
	int32_t nd = a.nd;
	int64_t shape[32], stride = 0;
	for (int i = 0; i < nd; i++)
		if (dump_read(c->d, dims + 8 * (uint64_t)i, &shape[i], 8) != PC_OK)
			return false;
	const char *dtype = array_dtype(c, descr, &kind, &code);
	bool plain = dtype && nd == 1 && shape[0] > 0 && shape[0] <= NPY_MAX_FORMED &&
		     ((kind == 'i' && code == 'l') || (kind == 'b' && code == '?')) &&
		     dump_read(c->d, strides, &stride, 8) == PC_OK && stride > -(1ll << 40) &&
		     stride < (1ll << 40);
	char *text = NULL;
	if (plain) {
		/* the items' text, then their common width */
		size_t size = kind == 'b' ? 1 : 8, width = 0, n = (size_t)shape[0];
		char (*items)[24] = arena_alloc(c->a, 24 * n);
		for (size_t i = 0; items && i < n && plain; i++) {
			int64_t v = 0;
			if (dump_read(c->d, data + (uint64_t)((int64_t)i * stride), &v, size) != PC_OK)
				plain = false;
			else if (kind == 'b')
				snprintf(items[i], 24, "%s", (v & 0xff) ? " True" : "False");
			else
				snprintf(items[i], 24, "%lld", (long long)v);
			if (items && strlen(items[i]) > width)
				width = strlen(items[i]);
		}
		size_t len = strlen("array([])") + n * width + (n - 1) * 2;
		if (items && plain && len <= NPY_ONE_LINE && (text = arena_alloc(c->a, len + 1))) {
			size_t at = (size_t)snprintf(text, len + 1, "array([");
			for (size_t i = 0; i < n; i++)
				at += (size_t)snprintf(text + at, len + 1 - at, "%s%*s", i ? ", " : "", (int)width,
						       items[i]);
			snprintf(text + at, len + 1 - at, "])");
		}
	}
	if (text) {
		sb_puts(&r->b, text);
		return true;
	}
	/* the fallback, with what the array is */
	char dims_text[256];
	size_t at = 0;
	for (int i = 0; i < nd && at < sizeof(dims_text) - 32; i++)
		at += (size_t)snprintf(dims_text + at, sizeof(dims_text) - at, "%s%lld", i ? ", " : "",
				       (long long)shape[i]);
	dims_text[at] = '\0';
	*note = arena_printf(c->a, "numpy.ndarray of shape (%s%s) and dtype %s: its repr is "
			      "numpy's code, not run: shown as object.__repr__",
			      dims_text, nd == 1 ? "," : "", dtype ? dtype : "unknown");
	return false;
}
