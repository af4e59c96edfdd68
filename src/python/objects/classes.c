/* Types as Python code sees them, read through their dicts: the built-in
 * type objects found (by symbol, else by name in the builtins dict), a
 * type's module and qualified name as object.__repr__ shows them, and a
 * lookup along its MRO. */
#include "python/objects/objects.h"
#include "python/runtime/runtime.h"

#include <string.h>

/* ------------------------------------------------------------------------
 * The built-in types
 * ------------------------------------------------------------------------ */

/* Without symbols, the built-in types are still where Python code finds
 * them: in the interpreter's builtins dict, by name (None and Ellipsis by
 * the types of their objects). */
static void find_types_in_builtins(struct py_ctx *c, uint64_t interp)
{
	uint64_t builtins = 0, v;
	if (c->L->interp_builtins < 0 || py_rd_ptr(c, interp + c->L->interp_builtins, &builtins) != 0 ||
	    !builtins)
		return;
	static const struct { int t; const char *name; bool instance; } names[] = {
		{ PYT_INT, "int", false }, { PYT_BOOL, "bool", false }, { PYT_FLOAT, "float", false },
		{ PYT_STR, "str", false }, { PYT_BYTES, "bytes", false },
		{ PYT_BYTEARRAY, "bytearray", false }, { PYT_LIST, "list", false },
		{ PYT_TUPLE, "tuple", false }, { PYT_DICT, "dict", false }, { PYT_SET, "set", false },
		{ PYT_FROZENSET, "frozenset", false }, { PYT_COMPLEX, "complex", false },
		{ PYT_OBJECT, "object", false }, { PYT_TYPE, "type", false },
		{ PYT_RANGE, "range", false }, { PYT_SLICE, "slice", false },
		{ PYT_NONE, "None", true }, { PYT_ELLIPSIS, "Ellipsis", true },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (c->type_addr[names[i].t] || py_dict_get_str(c, builtins, names[i].name, &v) != 0)
			continue;
		if (names[i].instance && py_rd_ptr(c, v + c->L->object_type, &v) != 0)
			continue;
		c->type_addr[names[i].t] = v;
	}
	/* the module type: the type of sys.modules['builtins'] */
	uint64_t modules = 0;
	if (!c->type_addr[PYT_MODULE] && c->L->interp_modules >= 0 &&
	    py_rd_ptr(c, interp + c->L->interp_modules, &modules) == 0 && modules &&
	    py_dict_get_str(c, modules, "builtins", &v) == 0 &&
	    py_rd_ptr(c, v + c->L->object_type, &v) == 0)
		c->type_addr[PYT_MODULE] = v;
}

/* The built-in type objects, for repr(), and the set's dummy key. */
static void find_types(struct py_ctx *c, struct symbols *s, struct dump_module *m)
{
	struct symbol_want w[PYT_COUNT + 1];
	for (int i = 0; i < PYT_COUNT; i++)
		w[i] = (struct symbol_want){ py_type_symbols[i], 0, 0 };
	w[PYT_COUNT] = (struct symbol_want){ "_PySet_Dummy", 0, 0 };
	if (symbols_lookup(s, m, w, PYT_COUNT + 1) < 0)
		return;
	for (int i = 0; i < PYT_COUNT; i++)
		c->type_addr[i] = w[i].addr;
	if (w[PYT_COUNT].addr)
		py_rd_ptr(c, w[PYT_COUNT].addr, &c->set_dummy);
}

void py_find_types(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt, uint64_t head)
{
	if (strcmp(rt->located_by, "symbol") == 0)
		find_types(c, s, rt->mod);
	if (head)
		find_types_in_builtins(c, head);
}

/* ------------------------------------------------------------------------
 * Names and the MRO
 * ------------------------------------------------------------------------ */

/* Module and qualified name of a type, as object.__repr__ shows them;
 * looked up once per type in a walk (a heap type's __module__ is a dict
 * lookup), kept in c->type_names. */
void py_type_qualname(struct py_ctx *c, uint64_t type, const char **module, const char **qualname)
{
	const struct py_layout *L = c->L;
	bool found = false;
	struct py_type_name *tn = type ? addrtab_get(&c->type_names, type, &found) : NULL;
	if (found) {
		*module = tn->module;
		*qualname = tn->qualname;
		return;
	}
	*module = NULL;
	*qualname = NULL;
	uint64_t flags = 0;
	dump_read(c->d, type + L->type_flags, &flags, sizeof(flags));
	const char *tp_name = py_type_tp_name(c, type);
	const char *why;
	if ((flags & (1ul << 9)) && L->heaptype_qualname >= 0) {   /* Py_TPFLAGS_HEAPTYPE */
		uint64_t q, dict, mod;
		if (py_rd_ptr(c, type + L->heaptype_qualname, &q) == 0)
			*qualname = py_str_utf8(c, q, 256, &why);
		if (py_rd_ptr(c, type + L->type_dict, &dict) == 0 && dict &&
		    py_dict_get_str(c, dict, "__module__", &mod) == 0 &&
		    py_type_of(c, mod, NULL) == PYT_STR)
			*module = py_str_utf8(c, mod, 256, &why);
	}
	if (!*qualname && tp_name) {
		const char *dot = strrchr(tp_name, '.');
		if (dot) {
			*module = arena_printf(c->a, "%.*s", (int)(dot - tp_name), tp_name);
			*qualname = dot + 1;
		} else {
			*module = "builtins";
			*qualname = tp_name;
		}
	}
	/* the table may have moved since */
	if (tn && (tn = addrtab_get(&c->type_names, type, &found)) != NULL) {
		tn->module = *module;
		tn->qualname = *qualname;
	}
}

const char *py_type_name(struct py_ctx *c, uint64_t type)
{
	const char *mod, *qual;
	py_type_qualname(c, type, &mod, &qual);
	if (!qual)
		return NULL;
	if (!mod || strcmp(mod, "builtins") == 0)
		return qual;
	return arena_printf(c->a, "%s.%s", mod, qual);
}

/* The value of NAME found along TYPE's MRO (tp_mro), 0 when none. */
uint64_t py_mro_lookup(struct py_ctx *c, uint64_t type, const char *name, uint64_t *owner)
{
	const struct py_layout *L = c->L;
	uint64_t mro, t, dict, v;
	int64_t n;
	if (py_rd_ptr(c, type + L->type_mro, &mro) != 0 || py_type_of(c, mro, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, mro + L->var_size, &n) != 0 || n < 1 || n > 256)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		if (py_rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)i, &t) != 0 ||
		    py_rd_ptr(c, t + L->type_dict, &dict) != 0 || !dict)
			return 0;
		if (py_dict_get_str(c, dict, name, &v) == 0) {
			if (owner)
				*owner = t;
			return v;
		}
	}
	return 0;
}
