/* numpy scalars: their value sits right after the object header
 * (numpy/core/include/numpy/arrayscalars.h: PyObject_HEAD then obval), and
 * their repr depends on the numpy major version in the dump: numpy 1.x prints
 * the bare value (5, 0.1, True), numpy 2 the constructor (np.int64(5),
 * np.float64(0.1), np.True_) — NEP 51. */
#include "python/repr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUMPY_OBVAL 16   /* sizeof(PyObject) on 64-bit, default builds */

/* The numpy major version of the dump's interpreter: sys.modules['numpy']
 * .__version__.  0 when unknown. */
static int numpy_major(struct py_ctx *c)
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
		if (numpy_major(c) >= 2)
			return raw[0] ? "np.True_" : "np.False_";
		return raw[0] ? "True" : "False";
	}
	if (numpy_major(c) >= 2)
		return arena_printf(c->a, "np.%s(%s)", t, val);
	return arena_strdup(c->a, val);
}
