/* Type identity: which of the built-in types an object's type is, told by
 * the type objects' addresses (or, without symbols, tp_name), and a
 * type's tp_name.  What every object reader asks first; reads no dict. */
#include "python/objects/objects.h"

#include <string.h>

static const char *const type_names[PYT_COUNT] = {
	[PYT_INT] = "int", [PYT_BOOL] = "bool", [PYT_FLOAT] = "float", [PYT_STR] = "str",
	[PYT_BYTES] = "bytes", [PYT_BYTEARRAY] = "bytearray", [PYT_LIST] = "list",
	[PYT_TUPLE] = "tuple", [PYT_DICT] = "dict", [PYT_SET] = "set",
	[PYT_FROZENSET] = "frozenset", [PYT_NONE] = "NoneType", [PYT_ELLIPSIS] = "ellipsis",
	[PYT_CELL] = "cell", [PYT_COMPLEX] = "complex", [PYT_OBJECT] = "object",
	[PYT_TYPE] = "type", [PYT_FUNCTION] = "function", [PYT_RANGE] = "range",
	[PYT_SLICE] = "slice", [PYT_MODULE] = "module",
};

const char *const py_type_symbols[PYT_COUNT] = {
	[PYT_INT] = "PyLong_Type", [PYT_BOOL] = "PyBool_Type", [PYT_FLOAT] = "PyFloat_Type",
	[PYT_STR] = "PyUnicode_Type", [PYT_BYTES] = "PyBytes_Type",
	[PYT_BYTEARRAY] = "PyByteArray_Type", [PYT_LIST] = "PyList_Type",
	[PYT_TUPLE] = "PyTuple_Type", [PYT_DICT] = "PyDict_Type", [PYT_SET] = "PySet_Type",
	[PYT_FROZENSET] = "PyFrozenSet_Type", [PYT_NONE] = "_PyNone_Type",
	[PYT_ELLIPSIS] = "PyEllipsis_Type", [PYT_CELL] = "PyCell_Type",
	[PYT_COMPLEX] = "PyComplex_Type", [PYT_OBJECT] = "PyBaseObject_Type",
	[PYT_TYPE] = "PyType_Type", [PYT_FUNCTION] = "PyFunction_Type",
	[PYT_RANGE] = "PyRange_Type", [PYT_SLICE] = "PySlice_Type", [PYT_MODULE] = "PyModule_Type",
};

/* The type's tp_name, read once per type would be nicer; types are few. */
const char *py_type_tp_name(struct py_ctx *c, uint64_t type)
{
	uint64_t name;
	char buf[256];
	if (py_rd_ptr(c, type + c->L->type_name, &name) != 0 ||
	    dump_read_cstr(c->d, name, buf, sizeof(buf)) != PC_OK)
		return NULL;
	return arena_strdup(c->a, buf);
}

enum py_type py_type_of(struct py_ctx *c, uint64_t addr, uint64_t *type_out)
{
	uint64_t type;
	if (py_rd_ptr(c, addr + c->L->object_type, &type) != 0 || type == 0)
		return PYT_UNREADABLE;
	if (type_out)
		*type_out = type;
	/* one comparison a type (type is not 0: an unknown one never
	 * matches); most objects a walk meets are of none of them */
	uint64_t any = 0;
	for (int i = 0; i < PYT_COUNT; i++) {
		if (c->type_addr[i] == type)
			return (enum py_type)i;
		any |= c->type_addr[i];
	}
	/* No symbol for it: trust the name only for names that no module
	 * qualifies (static built-in types). */
	if (!any) {
		const char *n = py_type_tp_name(c, type);
		for (int i = 0; n && i < PYT_COUNT; i++)
			if (type_names[i] && strcmp(n, type_names[i]) == 0)
				return (enum py_type)i;
	}
	return PYT_OTHER;
}

/* The short name of a type as _PyType_Name gives it: after tp_name's
 * last dot. */
const char *py_type_short_name(struct py_ctx *c, uint64_t type)
{
	uint64_t p;
	char buf[256];
	if (py_rd_ptr(c, type + c->L->type_name, &p) != 0 || dump_read_cstr(c->d, p, buf, sizeof(buf)) != PC_OK)
		return NULL;
	const char *dot = strrchr(buf, '.');
	return arena_strdup(c->a, dot ? dot + 1 : buf);
}
