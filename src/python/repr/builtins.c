/* repr() of the built-in types repr.c hands over (complex, range, slice,
 * module) and of those repr_stdlib tells by their tp_repr or name
 * (exceptions, struct sequences, generators), formed from memory exactly
 * as Python prints them.
 *
 * Facts used (CPython's sources of 3.6 to 3.15, cited by file):
 * - Objects/complexobject.c complex_repr: "%s%s%sj%s", the parts as
 *   repr() without the added ".0", the imaginary part signed; no parens
 *   when the real part is +0.0.  PyComplexObject: Py_complex after the head.
 * - Objects/rangeobject.c range_repr: "range(%R, %R)" when the step is 1,
 *   else "range(%R, %R, %R)"; rangeobject: start, stop, step, length.
 * - Objects/sliceobject.c slice_repr: "slice(%R, %R, %R)"; start, stop, step.
 * - Lib/importlib/_bootstrap.py _module_repr and _module_repr_from_spec
 *   (module_repr in Objects/moduleobject.c calls it); up to 3.10 a
 *   loader's module_repr() comes first: only BuiltinImporter and
 *   FrozenImporter (classes) have one among the standard loaders.
 * - Objects/exceptions.c BaseException_repr: "%s(%R)" with the only
 *   argument, else "%s%R" with args (3.6: always "%s%R"), the name after
 *   tp_name's last dot.
 * - Objects/structseq.c structseq_repr: tp_name, then "name=%R" per
 *   visible field named by tp_members (up to 3.8 into a 512-byte buffer
 *   that cut long ones).
 * - Objects/genobject.c gen_repr: "<generator object %S at %p>" (and
 *   coroutine, async_generator) with the qualname.
 */
#include "python/repr/stdlib.h"

#include <string.h>

#define STRUCTSEQ_OLD_MAX 400     /* bytes: up to 3.8 a struct sequence's repr this short
				     was never cut by its 512-byte buffer */

/* ------------------------------------------------------------------------
 * Built-in types
 * ------------------------------------------------------------------------ */

/* repr() of one part of a complex: float's repr without the ".0" that
 * float_repr adds (complex_repr passes no Py_DTSF_ADD_DOT_0). */
static void complex_part(struct sbuf *b, double v, bool sign)
{
	char buf[64];
	py_float_repr(v, buf, sizeof(buf));
	size_t n = strlen(buf);
	if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
		buf[n - 2] = '\0';
	if (sign && buf[0] != '-')
		sb_puts(b, "+");
	sb_puts(b, buf);
}

void repr_complex(struct rctx *r, uint64_t addr)
{
	double v[2];
	if (dump_read(r->c->d, addr + hdr(r->c), v, sizeof(v)) != PC_OK)
		return repr_fail(r, "complex not captured");
	bool bare = v[0] == 0.0 && !__builtin_signbit(v[0]);
	if (!bare) {
		sb_puts(&r->b, "(");
		complex_part(&r->b, v[0], false);
	}
	complex_part(&r->b, v[1], !bare);
	sb_puts(&r->b, bare ? "j" : "j)");
}

void repr_range(struct rctx *r, uint64_t addr)
{
	uint64_t f[3];
	int64_t step;
	if (dump_read(r->c->d, addr + hdr(r->c), f, sizeof(f)) != PC_OK)
		return repr_fail(r, "range not captured");
	bool one = py_type_of(r->c, f[2], NULL) == PYT_INT && py_long_i64(r->c, f[2], &step) == 0 && step == 1;
	sb_puts(&r->b, "range(");
	for (int i = 0; i < (one ? 2 : 3); i++) {
		if (i)
			sb_puts(&r->b, ", ");
		repr_item(r, f[i]);
	}
	sb_puts(&r->b, ")");
}

void repr_slice(struct rctx *r, uint64_t addr)
{
	uint64_t f[3];
	if (dump_read(r->c->d, addr + hdr(r->c), f, sizeof(f)) != PC_OK)
		return repr_fail(r, "slice not captured");
	sb_puts(&r->b, "slice(");
	for (int i = 0; i < 3; i++) {
		if (i)
			sb_puts(&r->b, ", ");
		repr_item(r, f[i]);
	}
	sb_puts(&r->b, ")");
}

static bool type_named(struct py_ctx *c, uint64_t obj, const char *qualname, bool instance)
{
	uint64_t type = obj;
	const char *mod, *qual;
	if (instance && py_type_of(c, obj, &type) != PYT_OTHER)
		return false;
	py_type_qualname(c, type, &mod, &qual);
	return qual && mod && strcmp(qual, qualname) == 0 &&
	       (strcmp(mod, "importlib._bootstrap") == 0 || strcmp(mod, "_frozen_importlib") == 0 ||
		strcmp(mod, "importlib._bootstrap_external") == 0 ||
		strcmp(mod, "_frozen_importlib_external") == 0);
}

/* "<module 'name'", the name's repr ('?' when None). */
static void module_open(struct rctx *r, uint64_t name)
{
	sb_puts(&r->b, "<module ");
	if (!name || is_none(r->c, name))
		sb_puts(&r->b, "'?'");
	else
		repr_obj(r, name);
}

/* The module's repr; false when it cannot be proven (the caller then
 * shows the fallback). */
static bool module_repr(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint64_t dict, spec, loader, name, origin, loc, stype;
	if (!rd_ptr(c, addr + c->L->module_dict, &dict) || py_type_of(c, dict, NULL) != PYT_DICT)
		return false;
	spec = dict_get(c, dict, "__spec__");
	loader = dict_get(c, dict, "__loader__");
	if (c->L->minor <= 10 && loader && !is_none(c, loader)) {
		/* a loader's module_repr() comes first: BuiltinImporter's and
		 * FrozenImporter's ("<module %r (built-in)>", "(frozen)");
		 * the file loaders have none */
		bool cls = py_type_of(c, loader, NULL) == PYT_TYPE;
		if (cls && (type_named(c, loader, "BuiltinImporter", false) ||
			    type_named(c, loader, "FrozenImporter", false))) {
			name = dict_get(c, dict, "__name__");
			if (py_type_of(c, name, NULL) != PYT_STR)
				return false;
			module_open(r, name);
			sb_puts(&r->b, type_named(c, loader, "BuiltinImporter", false) ? " (built-in)>" : " (frozen)>");
			return true;
		}
		if (cls || !(type_named(c, loader, "SourceFileLoader", true) ||
			     type_named(c, loader, "SourcelessFileLoader", true) ||
			     type_named(c, loader, "ExtensionFileLoader", true)))
			return false;
	}
	if (spec && !is_none(c, spec)) {
		if (py_type_of(c, spec, &stype) != PYT_OTHER || !type_named(c, spec, "ModuleSpec", true))
			return false;
		name = py_instance_attr(c, spec, stype, "name");
		origin = py_instance_attr(c, spec, stype, "origin");
		loc = py_instance_attr(c, spec, stype, "_set_fileattr");
		if (!name || !origin || (!is_none(c, name) && py_type_of(c, name, NULL) != PYT_STR))
			return false;
		if (is_none(c, origin)) {
			uint64_t sl = py_instance_attr(c, spec, stype, "loader");
			if (!sl || !is_none(c, sl))
				return false;
			module_open(r, name);
			sb_puts(&r->b, ">");
			return true;
		}
		int64_t has_location;
		if (py_type_of(c, origin, NULL) != PYT_STR || !loc || py_type_of(c, loc, NULL) != PYT_BOOL ||
		    py_long_i64(c, loc, &has_location) != 0)
			return false;
		if (!has_location && is_none(c, name))
			return false; /* '<module None (...)>': spec.name's repr, not '?' */
		module_open(r, name);
		if (has_location) {
			sb_puts(&r->b, " from ");
			repr_obj(r, origin);
			sb_puts(&r->b, ">");
		} else {
			const char *why, *o = py_str_utf8(c, origin, PY_MAX_NAME, &why);
			if (!o)
				return false;
			sb_puts(&r->b, " (");
			sb_utf8(&r->b, o);
			sb_puts(&r->b, ")>");
		}
		return true;
	}
	name = dict_get(c, dict, "__name__");
	uint64_t file = dict_get(c, dict, "__file__");
	if (name && py_type_of(c, name, NULL) != PYT_STR)
		return false;
	if (file) {
		module_open(r, name);
		sb_puts(&r->b, " from ");
		repr_obj(r, file);
		sb_puts(&r->b, ">");
		return true;
	}
	if (loader && !is_none(c, loader))
		return false;
	module_open(r, name);
	sb_puts(&r->b, ">");
	return true;
}

void repr_module(struct rctx *r, uint64_t addr)
{
	size_t n = r->b.n, chars = r->b.chars;
	if (module_repr(r, addr))
		return;
	r->b.n = n;
	r->b.chars = chars;
	if (r->b.p)
		r->b.p[n] = '\0';
	if (!r->approx)
		r->approx = "module's repr comes from importlib and could not be formed: shown as object.__repr__";
	sb_printf(&r->b, "<module object at 0x%llx>", (unsigned long long)addr);
}

/* ------------------------------------------------------------------------
 * Exceptions, struct sequences, generators
 * ------------------------------------------------------------------------ */

bool repr_exception(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t args, item;
	int64_t n;
	const char *name = py_type_short_name(c, type);
	if (!name || !rd_ptr(c, addr + c->L->exc_args, &args) || py_type_of(c, args, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, args + c->L->var_size, &n) != 0)
		return false;
	sb_utf8(&r->b, name);
	if (n == 1 && c->L->minor >= 7 && rd_ptr(c, args + c->L->tuple_item, &item)) {
		sb_puts(&r->b, "(");
		repr_item(r, item);
		sb_puts(&r->b, ")");
	} else {
		repr_item(r, args);
	}
	return true;
}

bool repr_structseq(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const struct py_layout *L = c->L;
	uint64_t p, members;
	int64_t n;
	char buf[256];
	if (!rd_ptr(c, type + L->type_name, &p) ||
	    dump_read_cstr(c->d, p, buf, sizeof(buf)) != PC_OK ||
	    !rd_ptr(c, type + L->type_base - 16, &members) ||   /* tp_members */
	    py_rd_i64(c, addr + L->var_size, &n) != 0 || n < 0 || n > 1024)
		return false;
	size_t start = r->b.n, chars = r->b.chars;
	sb_utf8(&r->b, buf);
	sb_puts(&r->b, "(");
	for (int64_t i = 0; i < n && !sb_full(&r->b); i++) {
		uint64_t name, item;
		/* PyMemberDef: 40 bytes, the name first */
		if (!rd_ptr(c, members + 40 * (uint64_t)i, &name) ||
		    dump_read_cstr(c->d, name, buf, sizeof(buf)) != PC_OK ||
		    !rd_ptr(c, addr + L->tuple_item + 8 * (uint64_t)i, &item)) {
			r->b.n = start;
			r->b.chars = chars;
			if (r->b.p)
				r->b.p[start] = '\0';
			return false;
		}
		if (i)
			sb_puts(&r->b, ", ");
		sb_utf8(&r->b, buf);
		sb_puts(&r->b, "=");
		repr_item(r, item);
	}
	sb_puts(&r->b, ")");
	/* up to 3.8 structseq_repr wrote into 512 bytes and cut what did
	 * not fit: only a short whole repr is certain */
	return L->minor >= 9 || (!sb_full(&r->b) && r->b.n - start < STRUCTSEQ_OLD_MAX);
}

/* PyGenObject's gi_qualname, after the object header (3.6-3.13; from
 * PyGenObject of each version, as walk/asyncio_stack.c reads it; 3.14 and
 * 3.15 from their DWARF: ptype /o PyGenObject). */
static const int gen_qualname[] = { [6] = 40, [7] = 40, [8] = 40, [9] = 40, [10] = 32,
				    [11] = 24, [12] = 16, [13] = 16, [14] = 16, [15] = 16 };

bool repr_generator(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	unsigned m = c->L->minor;
	uint64_t p, q, flags;
	char buf[32];
	const char *why, *qual;
	if (m >= sizeof(gen_qualname) / sizeof(gen_qualname[0]) || !gen_qualname[m] ||
	    !rd_ptr(c, type + c->L->type_flags, &flags) || (flags & TPFLAGS_HEAPTYPE) ||
	    !rd_ptr(c, type + c->L->type_name, &p) || dump_read_cstr(c->d, p, buf, sizeof(buf)) != PC_OK ||
	    (strcmp(buf, "generator") && strcmp(buf, "coroutine") && strcmp(buf, "async_generator")))
		return false;
	if (!rd_ptr(c, addr + hdr(c) + (uint64_t)gen_qualname[m], &q) ||
	    py_type_of(c, q, NULL) != PYT_STR || !(qual = py_str_utf8(c, q, PY_MAX_NAME, &why)))
		return false;
	sb_printf(&r->b, "<%s object ", buf);
	sb_utf8(&r->b, qual);
	sb_printf(&r->b, " at 0x%llx>", (unsigned long long)addr);
	return true;
}
