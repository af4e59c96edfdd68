/* repr() of the standard library's types that real services hold, formed
 * from memory exactly as Python prints them, or not at all (the caller
 * then shows object.__repr__ and says so).  A type counts as the standard
 * library's only when memory proves it: it is the very object its module
 * exports (sys.modules[...].__dict__[name]) with the expected tp_name, and
 * for classes written in Python, the __repr__ found along the MRO is a
 * function of that module (its __globals__ is the module's dict) with the
 * expected __qualname__.
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
 * - Modules/_collectionsmodule.c: dequeobject {VAR_HEAD, leftblock,
 *   rightblock, leftindex, rightindex, state, maxlen}, blocks of 64 items
 *   {leftlink, data[64], rightlink}; deque_repr "%s(%R)" or
 *   "%s(%R, maxlen=%zd)" of list(deque), "[...]" when re-entered;
 *   defdictobject {PyDictObject, default_factory}, defdict_repr
 *   "%s(%U, %U)" (factory repr or "None", "..." when re-entered; the dict).
 * - Objects/odictobject.c: PyODictObject {PyDictObject, od_first, ...},
 *   _ODictNode {key, hash, next, prev}; odict_repr "%s()" when empty,
 *   "..." when re-entered, else "%s(%R)" of list(items()) up to 3.11 and of
 *   dict(self) from 3.12.
 * - Lib/collections/__init__.py: Counter.__repr__ (most_common(): a stable
 *   sort by count, highest first); namedtuple's __repr__ (3.7+, a closure
 *   over the field names, which the class keeps as _fields).
 * - Modules/_functoolsmodule.c partial_repr: "functools.partial(%R" fn,
 *   ", %R" per argument, ", %S=%R" per keyword, ")"; partialobject {fn,
 *   args, kw, ...}.
 * - Modules/_datetimemodule.c and Include/datetime.h: the objects and
 *   date_repr, time_repr, datetime_repr, delta_repr (3.6: positional),
 *   timezone_repr.
 * - Modules/_decimal/_decimal.c dec_repr (see repr_decimal).
 * - Lib/dataclasses.py: the generated __repr__ (see dataclass_repr_fn).
 * - Lib/pathlib.py PurePath.__repr__ (see repr_path).
 * - Lib/enum.py Enum.__repr__: "<%s.%s: %r>" (3.12+: the class's
 *   _value_repr_ or repr); Lib/uuid.py, Lib/fractions.py __repr__.
 * - Objects/structseq.c structseq_repr: tp_name, then "name=%R" per
 *   visible field named by tp_members (up to 3.8 into a 512-byte buffer
 *   that cut long ones).
 * - Objects/genobject.c gen_repr: "<generator object %S at %p>" (and
 *   coroutine, async_generator) with the qualname.
 */
#include "python/attrs.h"
#include "python/repr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPFLAGS_HEAPTYPE (1ul << 9)
#define TP_STR_FROM_REPR 48   /* tp_str is six words after tp_repr in PyTypeObject */
#define DEQUE_BLOCKLEN   64
#define MAX_SORTED       100000   /* a Counter or OrderedDict larger keeps the fallback */
#define STRUCTSEQ_OLD_MAX 400     /* bytes: up to 3.8 a struct sequence's repr this short
				     was never cut by its 512-byte buffer */

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

static uint64_t hdr(struct py_ctx *c)
{
	return (uint64_t)c->L->object_type + 8;
}

static uint64_t dict_get(struct py_ctx *c, uint64_t dict, const char *name)
{
	uint64_t v;
	return dict && py_dict_get_str(c, dict, name, &v) == 0 ? v : 0;
}

/* The C type NAME of module MOD, when its tp_name is TP_NAME. */
static uint64_t c_type(struct py_ctx *c, uint64_t dict, const char *name, const char *tp_name)
{
	uint64_t t = dict_get(c, dict, name), p;
	char buf[64];
	if (!t || py_type_of(c, t, NULL) != PYT_TYPE || py_rd_ptr(c, t + c->L->type_name, &p) != 0 ||
	    dump_read_cstr(c->d, p, buf, sizeof(buf)) != PC_OK || strcmp(buf, tp_name) != 0)
		return 0;
	return t;
}

/* The builtins' part: what str() and repr() of an exception need, from
 * the builtins dict (which every thread's exception asks for, a walk of
 * tasks for each of theirs). */
static struct py_stdlib *stdlib(struct py_ctx *c)
{
	if (c->stdlib && c->stdlib->interp == c->interp)
		return c->stdlib;
	struct py_stdlib *s = c->stdlib;
	if (!s && !(s = arena_alloc(c->a, sizeof(*s))))
		return NULL;
	memset(s, 0, sizeof(*s));
	c->stdlib = s;
	s->interp = c->interp;
	if (!c->interp)
		return s;
	const struct py_layout *L = c->L;
	uint64_t builtins = 0, t[2];
	static const char *const exc_names[2] = { "BaseException", "KeyError" };
	if (L->interp_builtins >= 0 && py_rd_ptr(c, c->interp + L->interp_builtins, &builtins) == 0 && builtins &&
	    py_dict_get_strs(c, builtins, exc_names, t, 2) > 0) {
		if (t[0]) {
			py_rd_ptr(c, t[0] + L->type_repr, &s->exc_repr);
			py_rd_ptr(c, t[0] + L->type_repr + TP_STR_FROM_REPR, &s->exc_str);
		}
		if (t[1])
			py_rd_ptr(c, t[1] + L->type_repr + TP_STR_FROM_REPR, &s->keyerror_str);
	}
	return s;
}

/* And the rest, read the first time a repr needs it: the modules' types
 * and that of sys.version_info. */
static struct py_stdlib *stdlib_modules(struct py_ctx *c)
{
	struct py_stdlib *s = stdlib(c);
	if (!s || s->modules_read || !c->interp)
		return s;
	s->modules_read = true;
	const struct py_layout *L = c->L;
	/* one pass over sys.modules for them all */
	enum { COLLECTIONS, FUNCTOOLS, DATETIME, DECIMAL, ENUM, DATACLASSES, PATHLIB_LOCAL, PATHLIB, REPRLIB,
	       UUID, FRACTIONS, NMODULES };
	static const char *const names[NMODULES] = {
		"collections", "functools", "datetime", "decimal", "enum", "dataclasses", "pathlib._local",
		"pathlib", "reprlib", "uuid", "fractions",
	};
	uint64_t mods[NMODULES];
	py_module_dicts(c, c->interp, names, mods, NMODULES);
	uint64_t m = s->collections = mods[COLLECTIONS];
	s->deque = c_type(c, m, "deque", "collections.deque");
	s->defaultdict = c_type(c, m, "defaultdict", "collections.defaultdict");
	s->odict = c_type(c, m, "OrderedDict", "collections.OrderedDict");
	s->counter = dict_get(c, m, "Counter");
	s->partial = c_type(c, mods[FUNCTOOLS], "partial", "functools.partial");
	m = mods[DATETIME];
	s->date = c_type(c, m, "date", "datetime.date");
	s->time = c_type(c, m, "time", "datetime.time");
	s->datetime = c_type(c, m, "datetime", "datetime.datetime");
	s->timedelta = c_type(c, m, "timedelta", "datetime.timedelta");
	s->timezone = c_type(c, m, "timezone", "datetime.timezone");
	uint64_t tdict;
	if (s->timezone && py_rd_ptr(c, s->timezone + L->type_dict, &tdict) == 0)
		s->utc = dict_get(c, tdict, "utc");
	/* 3.13+ keeps a static type's dict in the interpreter (tp_dict is
	 * NULL): datetime.UTC (3.11+) is the same object */
	if (!s->utc)
		s->utc = dict_get(c, m, "UTC");
	s->decimal = c_type(c, mods[DECIMAL], "Decimal", "decimal.Decimal");
	s->enum_mod = mods[ENUM];
	s->dataclasses = mods[DATACLASSES];
	if (!(s->pathlib = mods[PATHLIB_LOCAL]))
		s->pathlib = mods[PATHLIB];
	s->reprlib = mods[REPRLIB];
	s->field_marker = dict_get(c, s->dataclasses, "_FIELD");
	s->uuid = dict_get(c, s->uuid_mod = mods[UUID], "UUID");
	s->fraction = dict_get(c, s->fractions_mod = mods[FRACTIONS], "Fraction");
	uint64_t sysdict, t;
	if (L->interp_sysdict >= 0 && py_rd_ptr(c, c->interp + L->interp_sysdict, &sysdict) == 0 &&
	    (t = dict_get(c, sysdict, "version_info")) && py_rd_ptr(c, t + L->object_type, &t) == 0)
		py_rd_ptr(c, t + L->type_repr, &s->structseq_repr);
	return s;
}

/* ------------------------------------------------------------------------
 * Small readers
 * ------------------------------------------------------------------------ */

static bool rd_ptr(struct py_ctx *c, uint64_t addr, uint64_t *out)
{
	return py_rd_ptr(c, addr, out) == 0;
}

/* The short name of a type as _PyType_Name gives it: after tp_name's
 * last dot. */
static const char *short_name(struct py_ctx *c, uint64_t type)
{
	uint64_t p;
	char buf[256];
	if (!rd_ptr(c, type + c->L->type_name, &p) || dump_read_cstr(c->d, p, buf, sizeof(buf)) != PC_OK)
		return NULL;
	const char *dot = strrchr(buf, '.');
	return arena_strdup(c->a, dot ? dot + 1 : buf);
}

/* The value of NAME found along TYPE's MRO (tp_mro: ten words after
 * tp_dict in every version's PyTypeObject), 0 when none. */
static uint64_t mro_lookup(struct py_ctx *c, uint64_t type, const char *name, uint64_t *owner)
{
	const struct py_layout *L = c->L;
	uint64_t mro, t, dict, v;
	int64_t n;
	if (!rd_ptr(c, type + L->type_dict + 80, &mro) || py_type_of(c, mro, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, mro + L->var_size, &n) != 0 || n < 1 || n > 256)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		if (!rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)i, &t) ||
		    !rd_ptr(c, t + L->type_dict, &dict) || !dict)
			return 0;
		if (py_dict_get_str(c, dict, name, &v) == 0) {
			if (owner)
				*owner = t;
			return v;
		}
	}
	return 0;
}

/* Is FN a function of the module whose dict is GLOBALS, with a
 * __qualname__ of QUALNAME (or, QUALNAME starting with '.', ending so)?
 * PyFunctionObject: func_globals is the second word up to 3.9, the first
 * from 3.10 (COMMON_FIELDS). */
static bool function_is(struct py_ctx *c, uint64_t fn, uint64_t globals, const char *qualname)
{
	uint64_t g, q;
	const char *why, *name;
	if (!globals || py_type_of(c, fn, NULL) != PYT_FUNCTION ||
	    !rd_ptr(c, fn + hdr(c) + (c->L->minor <= 9 ? 8 : 0), &g) || g != globals ||
	    !rd_ptr(c, fn + c->L->function_qualname, &q) || !(name = py_str_utf8(c, q, 256, &why)))
		return false;
	if (qualname[0] == '.') {
		size_t a = strlen(name), b = strlen(qualname);
		return a > b && strcmp(name + a - b, qualname) == 0;
	}
	return strcmp(name, qualname) == 0;
}

struct attr_find {
	const char *name;
	uint64_t value;
	bool found;
};

static int attr_match(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	(void)c;
	struct attr_find *f = arg;
	if (strcmp(name, f->name) != 0)
		return 0;
	f->value = value;
	f->found = true;
	return 1;
}

/* An instance attribute (its __dict__ or __slots__), 0 when not set. */
static uint64_t attr(struct py_ctx *c, uint64_t obj, uint64_t type, const char *name)
{
	struct attr_find f = { name, 0, false };
	if (py_instance_attr_named(c, obj, type, name, attr_match, &f) != 0 || !f.found)
		return 0;
	return f.value;
}

static bool is_none(struct py_ctx *c, uint64_t v)
{
	return py_type_of(c, v, NULL) == PYT_NONE;
}

/* Py_ReprEnter for a container's repr: true when the caller prints it
 * (and leaves with r->depth--); false when AGAIN was printed (it is being
 * printed further out) or the depth limit was reached. */
static bool guard(struct rctx *r, uint64_t addr, const char *again)
{
	if (repr_reentered(r, addr)) {
		sb_puts(&r->b, again);
		return false;
	}
	return repr_enter(r, addr);
}

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
		name = attr(c, spec, stype, "name");
		origin = attr(c, spec, stype, "origin");
		loc = attr(c, spec, stype, "_set_fileattr");
		if (!name || !origin || (!is_none(c, name) && py_type_of(c, name, NULL) != PYT_STR))
			return false;
		if (is_none(c, origin)) {
			uint64_t sl = attr(c, spec, stype, "loader");
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

static bool repr_exception(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t args, item;
	int64_t n;
	const char *name = short_name(c, type);
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

static bool repr_structseq(struct rctx *r, uint64_t addr, uint64_t type)
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
 * PyGenObject of each version, as asyncio.c reads it; 3.14 and 3.15 from
 * their DWARF: ptype /o PyGenObject). */
static const int gen_qualname[] = { [6] = 40, [7] = 40, [8] = 40, [9] = 40, [10] = 32,
				    [11] = 24, [12] = 16, [13] = 16, [14] = 16, [15] = 16 };

static bool repr_generator(struct rctx *r, uint64_t addr, uint64_t type)
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

/* ------------------------------------------------------------------------
 * collections
 * ------------------------------------------------------------------------ */

/* The items of a deque, in order: calls FN until it returns false. */
static bool deque_items(struct py_ctx *c, uint64_t addr, int64_t *len, int64_t *maxlen,
			bool (*fn)(struct rctx *r, uint64_t item, int64_t i), struct rctx *r)
{
	uint64_t v = (uint64_t)c->L->var_size + 8, block;
	int64_t n, index;
	if (py_rd_i64(c, addr + c->L->var_size, &n) != 0 || n < 0 || n > (1ll << 48) ||
	    !rd_ptr(c, addr + v, &block) || py_rd_i64(c, addr + v + 16, &index) != 0 ||
	    py_rd_i64(c, addr + v + 40, maxlen) != 0 || index < 0 || index >= DEQUE_BLOCKLEN)
		return false;
	*len = n;
	for (int64_t i = 0; i < n && fn; i++) {
		uint64_t item;
		if (!rd_ptr(c, block + 8 + 8 * (uint64_t)index, &item))
			return false;
		if (!fn(r, item, i))
			break;
		if (++index == DEQUE_BLOCKLEN) {
			index = 0;
			if (!rd_ptr(c, block + 8 + 8 * DEQUE_BLOCKLEN, &block))
				return false;
		}
	}
	return true;
}

static bool list_item(struct rctx *r, uint64_t item, int64_t i)
{
	if (sb_full(&r->b))
		return false;
	if ((size_t)i >= r->lim->max_items) {
		repr_limit(r, "more items than the item limit");
		return false;
	}
	if (i)
		sb_puts(&r->b, ", ");
	repr_item(r, item);
	return true;
}

static bool repr_deque(struct rctx *r, uint64_t addr)
{
	int64_t n, maxlen;
	if (!deque_items(r->c, addr, &n, &maxlen, NULL, r))
		return false;
	if (!guard(r, addr, "[...]"))
		return true;
	sb_puts(&r->b, "deque([");
	if (!deque_items(r->c, addr, &n, &maxlen, list_item, r))
		repr_fail(r, "deque blocks not captured");
	sb_puts(&r->b, "]");
	if (maxlen >= 0)
		sb_printf(&r->b, ", maxlen=%lld", (long long)maxlen);
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}

static bool repr_defaultdict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t factory;
	if (!c->type_addr[PYT_DICT] ||
	    py_rd_i64(c, c->type_addr[PYT_DICT] + c->L->type_basicsize, &size) != 0 || size <= 0 ||
	    size > 4096 || !rd_ptr(c, addr + (uint64_t)size, &factory))
		return false;
	sb_puts(&r->b, "defaultdict(");
	if (!factory)
		sb_puts(&r->b, "None");
	else if (repr_reentered(r, factory))
		sb_puts(&r->b, "...");
	else
		repr_item(r, factory);
	sb_puts(&r->b, ", ");
	repr_dict(r, addr);
	sb_puts(&r->b, ")");
	return true;
}

struct kv {
	uint64_t key, value;
};

static int collect_pair(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	(void)c;
	bool found;
	struct kv *e = key ? addrtab_get(arg, key, &found) : NULL;
	if (!e)
		return 1;
	e->value = value;
	return 0;
}

/* OrderedDict's items in the order of its linked list, their values
 * from the dict by the key object. */
static bool repr_odict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size, used;
	uint64_t node;
	if (!c->type_addr[PYT_DICT] ||
	    py_rd_i64(c, c->type_addr[PYT_DICT] + c->L->type_basicsize, &size) != 0 || size <= 0 ||
	    size > 4096 || py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0 ||
	    used > MAX_SORTED || !rd_ptr(c, addr + (uint64_t)size, &node))
		return false;
	if (used == 0) {
		sb_puts(&r->b, "OrderedDict()");
		return true;
	}
	struct addrtab values = ADDRTAB_INIT(struct kv);
	if (py_dict_items(c, addr, collect_pair, &values) != 0 || values.n != (size_t)used) {
		addrtab_free(&values);
		return false;
	}
	bool old = c->L->minor <= 11;
	if (guard(r, addr, "...")) {
		sb_puts(&r->b, old ? "OrderedDict([" : "OrderedDict({");
		for (int64_t i = 0; i < used && !sb_full(&r->b); i++) {
			uint64_t key;
			bool found;
			struct kv *e;
			if ((size_t)i >= r->lim->max_items) {
				repr_limit(r, "more items than the item limit");
				break;
			}
			if (!node || !rd_ptr(c, node, &key) || !key || !(e = addrtab_get(&values, key, &found)) ||
			    !found) {
				repr_fail_as(r, PC_ECORRUPT, "OrderedDict's linked list does not match its dict");
				break;
			}
			if (i)
				sb_puts(&r->b, ", ");
			sb_puts(&r->b, old ? "(" : "");
			uint64_t value = e->value;
			repr_item(r, key);
			sb_puts(&r->b, old ? ", " : ": ");
			repr_item(r, value);
			sb_puts(&r->b, old ? ")" : "");
			if (!rd_ptr(c, node + 16, &node))
				node = 0;
		}
		sb_puts(&r->b, old ? "])" : "})");
		r->depth--;
	}
	addrtab_free(&values);
	return true;
}

struct counted {
	uint64_t key, value;
	int64_t count;
	size_t order;
};

static int by_count(const void *a, const void *b)
{
	const struct counted *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct count_walk {
	struct counted *items;
	size_t n, cap;
	bool ok;
};

static int count_item(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct count_walk *w = arg;
	if (w->n == w->cap || py_type_of(c, value, NULL) != PYT_INT ||
	    py_long_i64(c, value, &w->items[w->n].count) != 0) {
		w->ok = false;
		return 1;
	}
	w->items[w->n] = (struct counted){ key, value, w->items[w->n].count, w->n };
	w->n++;
	return 0;
}

/* Counter.__repr__: its items by most_common(), every count an int. */
static bool repr_counter(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *name = short_name(c, type);
	int64_t used;
	if (!name || py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0 || used > MAX_SORTED)
		return false;
	if (used == 0) {
		sb_utf8(&r->b, name);
		sb_puts(&r->b, "()");
		return true;
	}
	struct count_walk w = { calloc((size_t)used, sizeof(struct counted)), 0, (size_t)used, true };
	if (!w.items || py_dict_items(c, addr, count_item, &w) != 0 || !w.ok || w.n != (size_t)used) {
		free(w.items);
		return false;
	}
	qsort(w.items, w.n, sizeof(w.items[0]), by_count);
	sb_utf8(&r->b, name);
	sb_puts(&r->b, "({");
	for (size_t i = 0; i < w.n && !sb_full(&r->b); i++) {
		if (i >= r->lim->max_items) {
			repr_limit(r, "more items than the item limit");
			break;
		}
		if (i)
			sb_puts(&r->b, ", ");
		repr_item(r, w.items[i].key);
		sb_puts(&r->b, ": ");
		repr_item(r, w.items[i].value);
	}
	sb_puts(&r->b, "})");
	free(w.items);
	return true;
}

/* namedtuple's __repr__ (3.7+): the class's __name__, then name=repr for
 * each of the _fields of the class that defines that __repr__. */
static bool repr_namedtuple(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner)
{
	struct py_ctx *c = r->c;
	const struct py_layout *L = c->L;
	uint64_t dict, fields;
	int64_t nf, n;
	const char *name = short_name(c, type);
	uint64_t base;
	if (!name || !rd_ptr(c, owner + L->type_base, &base) || !base || base != c->type_addr[PYT_TUPLE] ||
	    !rd_ptr(c, owner + L->type_dict, &dict) || !(fields = dict_get(c, dict, "_fields")) ||
	    py_type_of(c, fields, NULL) != PYT_TUPLE || py_rd_i64(c, fields + L->var_size, &nf) != 0 ||
	    py_rd_i64(c, addr + L->var_size, &n) != 0 || n != nf || n > 4096)
		return false;
	const char **names = arena_alloc(c->a, sizeof(char *) * (size_t)(n + 1));
	for (int64_t i = 0; names && i < n; i++) {
		uint64_t f;
		const char *why;
		if (!rd_ptr(c, fields + L->tuple_item + 8 * (uint64_t)i, &f) ||
		    py_type_of(c, f, NULL) != PYT_STR || !(names[i] = py_str_utf8(c, f, 256, &why)))
			return false;
	}
	if (!names)
		return false;
	if (repr_reentered(r, addr)) {
		/* tuple.__repr__ of self inside "%"-formatting is not reached:
		 * the fields' reprs recurse as Python would, without a guard */
		return false;
	}
	if (!repr_enter(r, addr))
		return true;
	sb_utf8(&r->b, name);
	sb_puts(&r->b, "(");
	for (int64_t i = 0; i < n && !sb_full(&r->b); i++) {
		uint64_t item;
		if (!rd_ptr(c, addr + L->tuple_item + 8 * (uint64_t)i, &item)) {
			repr_fail(r, "namedtuple item not captured");
			break;
		}
		if (i)
			sb_puts(&r->b, ", ");
		sb_utf8(&r->b, names[i]);
		sb_puts(&r->b, "=");
		repr_item(r, item);
	}
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}

/* ------------------------------------------------------------------------
 * functools, datetime, enum, uuid, fractions
 * ------------------------------------------------------------------------ */

struct kw_walk {
	struct rctx *r;
	bool ok;
};

static int partial_kw(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct kw_walk *w = arg;
	const char *why, *k;
	if (sb_full(&w->r->b))
		return 1;
	if (py_type_of(c, key, NULL) != PYT_STR || !(k = py_str_utf8(c, key, PY_MAX_NAME, &why))) {
		w->ok = false;
		return 1;
	}
	sb_puts(&w->r->b, ", ");
	sb_utf8(&w->r->b, k);
	sb_puts(&w->r->b, "=");
	repr_item(w->r, value);
	return 0;
}

static bool repr_partial(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint64_t f[3];
	int64_t n;
	if (dump_read(c->d, addr + hdr(c), f, sizeof(f)) != PC_OK || py_type_of(c, f[1], NULL) != PYT_TUPLE ||
	    py_rd_i64(c, f[1] + c->L->var_size, &n) != 0 || n < 0 ||
	    (f[2] && py_type_of(c, f[2], NULL) != PYT_DICT))
		return false;
	if (!guard(r, addr, "..."))
		return true;
	sb_puts(&r->b, "functools.partial(");
	repr_item(r, f[0]);
	for (int64_t i = 0; i < n && !sb_full(&r->b); i++) {
		uint64_t item;
		if (!rd_ptr(c, f[1] + c->L->tuple_item + 8 * (uint64_t)i, &item)) {
			repr_fail(r, "partial's arguments not captured");
			break;
		}
		sb_puts(&r->b, ", ");
		repr_item(r, item);
	}
	struct kw_walk w = { r, true };
	if (f[2] && py_dict_items(c, f[2], partial_kw, &w) != 0)
		repr_fail(r, "partial's keywords not captured");
	if (!w.ok)
		repr_fail_as(r, PC_ECORRUPT, "partial has a keyword that is not a str");
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}

/* ", tzinfo=%R" and ", fold=1" before the closing parenthesis. */
static void time_tail(struct rctx *r, uint64_t addr, uint64_t at, int fold)
{
	struct py_ctx *c = r->c;
	uint8_t has;
	uint64_t tz;
	if (dump_read(c->d, addr + hdr(c) + 8, &has, 1) == PC_OK && has && rd_ptr(c, addr + at, &tz) &&
	    !is_none(c, tz)) {
		sb_puts(&r->b, ", tzinfo=");
		repr_item(r, tz);
	}
	if (fold)
		sb_puts(&r->b, ", fold=1");
	sb_puts(&r->b, ")");
}

static bool repr_datetime(struct rctx *r, uint64_t addr, uint64_t type, const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t h = addr + hdr(c);
	uint8_t d[11];
	if (type == s->date) {
		if (dump_read(c->d, h + 9, d, 4) != PC_OK)
			return false;
		sb_printf(&r->b, "datetime.date(%d, %d, %d)", d[0] << 8 | d[1], d[2], d[3]);
	} else if (type == s->time) {
		/* data[6] at 9, fold at 15, tzinfo at 16 */
		if (dump_read(c->d, h + 9, d, 7) != PC_OK)
			return false;
		int us = d[3] << 16 | d[4] << 8 | d[5];
		sb_printf(&r->b, "datetime.time(%d, %d", d[0], d[1]);
		if (us)
			sb_printf(&r->b, ", %d, %d", d[2], us);
		else if (d[2])
			sb_printf(&r->b, ", %d", d[2]);
		time_tail(r, addr, hdr(c) + 16, d[6]);
	} else if (type == s->datetime) {
		/* data[10] at 9, fold at 19, tzinfo at 24 */
		if (dump_read(c->d, h + 9, d, 11) != PC_OK)
			return false;
		int us = d[7] << 16 | d[8] << 8 | d[9];
		sb_printf(&r->b, "datetime.datetime(%d, %d, %d, %d, %d", d[0] << 8 | d[1], d[2], d[3], d[4], d[5]);
		if (us)
			sb_printf(&r->b, ", %d, %d", d[6], us);
		else if (d[6])
			sb_printf(&r->b, ", %d", d[6]);
		time_tail(r, addr, hdr(c) + 24, d[10]);
	} else if (type == s->timedelta) {
		int32_t v[3];
		if (dump_read(c->d, h + 8, v, sizeof(v)) != PC_OK)
			return false;
		if (c->L->minor <= 6) {
			sb_printf(&r->b, "datetime.timedelta(%d", v[0]);
			if (v[2])
				sb_printf(&r->b, ", %d, %d", v[1], v[2]);
			else if (v[1])
				sb_printf(&r->b, ", %d", v[1]);
			sb_puts(&r->b, ")");
			return true;
		}
		static const char *const names[] = { "days", "seconds", "microseconds" };
		sb_puts(&r->b, "datetime.timedelta(");
		bool any = false;
		for (int i = 0; i < 3; i++)
			if (v[i]) {
				sb_printf(&r->b, "%s%s=%d", any ? ", " : "", names[i], v[i]);
				any = true;
			}
		sb_puts(&r->b, any ? ")" : "0)");
	} else if (type == s->timezone) {
		uint64_t f[2];
		if (addr == s->utc) {
			sb_puts(&r->b, "datetime.timezone.utc");
			return true;
		}
		if (dump_read(c->d, h, f, sizeof(f)) != PC_OK)
			return false;
		sb_puts(&r->b, "datetime.timezone(");
		repr_item(r, f[0]);
		if (f[1]) {
			sb_puts(&r->b, ", ");
			repr_item(r, f[1]);
		}
		sb_puts(&r->b, ")");
	} else {
		return false;
	}
	return true;
}

/* Enum.__repr__: "<%s.%s: %r>"; from 3.12 the value through the class's
 * _value_repr_, which must then be None or the value's own type's repr. */
static bool repr_enum(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *cls = short_name(c, type), *why, *name;
	uint64_t n = attr(c, addr, type, "_name_"), v = attr(c, addr, type, "_value_");
	if (!cls || !n || !v || py_type_of(c, n, NULL) != PYT_STR || !(name = py_str_utf8(c, n, PY_MAX_NAME, &why)))
		return false;
	uint64_t vr = c->L->minor >= 12 ? mro_lookup(c, type, "_value_repr_", NULL) : 0;
	if (vr && !is_none(c, vr)) {
		/* a C type's own __repr__ (int.__repr__) prints a value of
		 * that built-in type as repr() does; anything else is code */
		enum py_type vt = py_type_of(c, v, NULL);
		if (py_type_of(c, vr, NULL) != PYT_OTHER ||
		    !(vt == PYT_INT || vt == PYT_BOOL || vt == PYT_FLOAT || vt == PYT_STR))
			return false;
	}
	sb_puts(&r->b, "<");
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, ".");
	sb_utf8(&r->b, name);
	sb_puts(&r->b, ": ");
	repr_item(r, v);
	sb_puts(&r->b, ">");
	return true;
}

static bool repr_uuid(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t v = attr(c, addr, type, "int");
	uint32_t digits[5] = { 0 };
	int64_t nd;
	bool neg;
	if (!v || py_type_of(c, v, NULL) != PYT_INT || py_long_digits(c, v, digits, 5, &nd, &neg) != PY_LONG_OK ||
	    neg || nd > 5)
		return false;
	/* 128 bits from 30-bit digits, least significant first */
	uint8_t bytes[16] = { 0 };
	for (int bit = 0; bit < 150; bit++) {
		if (!(digits[bit / 30] >> (bit % 30) & 1))
			continue;
		if (bit >= 128)
			return false;
		bytes[15 - bit / 8] |= (uint8_t)(1u << (bit % 8));
	}
	const char *cls = short_name(c, type);
	if (!cls)
		return false;
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, "('");
	for (int i = 0; i < 16; i++)
		sb_printf(&r->b, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", bytes[i]);
	sb_puts(&r->b, "')");
	return true;
}

static bool repr_fraction(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t n = attr(c, addr, type, "_numerator"), d = attr(c, addr, type, "_denominator");
	const char *cls = short_name(c, type);
	if (!cls || !n || !d || py_type_of(c, n, NULL) != PYT_INT || py_type_of(c, d, NULL) != PYT_INT)
		return false;
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, "(");
	repr_item(r, n);
	sb_puts(&r->b, ", ");
	repr_item(r, d);
	sb_puts(&r->b, ")");
	return true;
}

/* decimal.Decimal (the C _decimal): PyDecObject {HEAD, hash, mpd_t} with
 * mpd_t {uint8_t flags, exp, digits, len, alloc, data} (Modules/_decimal/
 * libmpdec/mpdecimal.h; 64-bit words of 19 decimal digits, least
 * significant first).  dec_repr prints "Decimal('%s')" of mpd_to_sci with
 * the thread's context's capitals, which only an exponent shows: values
 * that need one keep the fallback. */
#define MPD_NEG   1
#define MPD_INF   2
#define MPD_NAN   4
#define MPD_SNAN  8
#define MPD_RDIGITS 19
#define MAX_DECIMAL_WORDS 64

static bool repr_decimal(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint8_t flags;
	int64_t f[4];   /* exp, digits, len, alloc */
	uint64_t data;
	uint64_t words[MAX_DECIMAL_WORDS];
	uint64_t m = addr + hdr(c) + 8;
	if (dump_read(c->d, m, &flags, 1) != PC_OK || dump_read(c->d, m + 8, f, sizeof(f)) != PC_OK ||
	    !rd_ptr(c, m + 40, &data) || f[2] < 0 || f[2] > MAX_DECIMAL_WORDS || f[1] < 0 ||
	    f[1] > f[2] * MPD_RDIGITS || (f[2] && dump_read(c->d, data, words, 8 * (size_t)f[2]) != PC_OK))
		return false;
	bool special = flags & (MPD_INF | MPD_NAN | MPD_SNAN);
	if (!special && f[2] < 1)
		return false;
	/* a special value without a payload has no words (mpd_setspecial) */
	char digits[MAX_DECIMAL_WORDS * MPD_RDIGITS + 2] = "0";
	size_t n = 0;
	for (int64_t i = f[2]; i-- > 0;) {
		if (words[i] >= 10000000000000000000ull)
			return false;
		n += (size_t)snprintf(digits + n, sizeof(digits) - n, i == f[2] - 1 ? "%llu" : "%019llu",
				      (unsigned long long)words[i]);
	}
	int64_t exp = f[0];
	if (!special && (int64_t)n != f[1])
		return false;
	sb_puts(&r->b, "Decimal('");
	if (flags & MPD_NEG)
		sb_puts(&r->b, "-");
	if (flags & MPD_INF) {
		sb_puts(&r->b, "Infinity");
	} else if (flags & (MPD_NAN | MPD_SNAN)) {
		sb_puts(&r->b, flags & MPD_SNAN ? "sNaN" : "NaN");
		if (strcmp(digits, "0") != 0)
			sb_puts(&r->b, digits);   /* the payload */
	} else {
		int64_t nd = (int64_t)n, adjusted = exp + nd - 1;
		if (exp > 0 || adjusted < -6)
			return false;   /* scientific notation: E or e, by the context */
		if (exp == 0) {
			sb_puts(&r->b, digits);
		} else if (nd > -exp) {
			char *point = digits + nd + exp;
			char keep = *point;
			*point = '\0';
			sb_puts(&r->b, digits);
			sb_puts(&r->b, ".");
			*point = keep;
			sb_puts(&r->b, point);
		} else {
			sb_puts(&r->b, "0.");
			for (int64_t i = 0; i < -exp - nd; i++)
				sb_puts(&r->b, "0");
			sb_puts(&r->b, digits);
		}
	}
	sb_puts(&r->b, "')");
	return true;
}

/* A dataclass's generated __repr__ (Lib/dataclasses.py _process_class):
 * "self.__class__.__qualname__(name=repr, ...)" over the fields of the
 * class that made it (its __dataclass_fields__ whose _field_type is
 * _FIELD and repr true, in order), wrapped against recursion ("..."): by
 * dataclasses._recursive_repr (3.7-3.12; the wrapper's __globals__ are
 * dataclasses') or reprlib.recursive_repr (3.13+).  Generated, not
 * written: the function it wraps (__wrapped__) was compiled from
 * "<string>" by exec. */
static bool dataclass_repr_fn(struct py_ctx *c, const struct py_stdlib *s, uint64_t fn, uint64_t owner)
{
	uint64_t wrapped, code;
	uint64_t globals = c->L->minor <= 12 ? s->dataclasses : s->reprlib;
	if (!fn || !owner || !s->field_marker || !function_is(c, fn, globals, ".__repr__") ||
	    !(wrapped = attr(c, fn, c->type_addr[PYT_FUNCTION], "__wrapped__")) ||
	    py_type_of(c, wrapped, NULL) != PYT_FUNCTION ||
	    !rd_ptr(c, wrapped + hdr(c) + (c->L->minor <= 9 ? 0 : 32), &code))
		return false;
	const struct py_code *pc = py_code_get(c, code);
	return pc && !pc->error && pc->filename && strcmp(pc->filename, "<string>") == 0 &&
	       pc->name && strcmp(pc->name, "__repr__") == 0;
}

struct dc_walk {
	struct rctx *r;
	const struct py_stdlib *s;
	uint64_t obj, type;
	size_t n;
	bool ok;
};

static int dc_field(struct py_ctx *c, uint64_t key, uint64_t field, void *arg)
{
	struct dc_walk *w = arg;
	uint64_t ftype;
	int64_t on;
	const char *why, *name;
	if (sb_full(&w->r->b))
		return 1;
	if (py_type_of(c, field, &ftype) != PYT_OTHER || py_type_of(c, key, NULL) != PYT_STR ||
	    !(name = py_str_utf8(c, key, PY_MAX_NAME, &why))) {
		w->ok = false;
		return 1;
	}
	uint64_t kind = attr(c, field, ftype, "_field_type"), repr = attr(c, field, ftype, "repr");
	if (!kind || !repr || py_type_of(c, repr, NULL) != PYT_BOOL || py_long_i64(c, repr, &on) != 0) {
		w->ok = false;
		return 1;
	}
	if (kind != w->s->field_marker || !on)
		return 0;
	uint64_t value = attr(c, w->obj, w->type, name);
	if (!value) {
		w->ok = false;   /* Python would raise AttributeError */
		return 1;
	}
	if (w->n++)
		sb_puts(&w->r->b, ", ");
	sb_utf8(&w->r->b, name);
	sb_puts(&w->r->b, "=");
	repr_item(w->r, value);
	return 0;
}

static bool repr_dataclass(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner,
			   const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t dict, fields;
	const char *mod, *qual;
	py_type_qualname(c, type, &mod, &qual);
	if (!qual || !rd_ptr(c, owner + c->L->type_dict, &dict) ||
	    !(fields = dict_get(c, dict, "__dataclass_fields__")) || py_type_of(c, fields, NULL) != PYT_DICT)
		return false;
	if (!guard(r, addr, "..."))
		return true;
	sb_utf8(&r->b, qual);
	sb_puts(&r->b, "(");
	struct dc_walk w = { r, s, addr, type, 0, true };
	bool ok = py_dict_items(c, fields, dc_field, &w) == 0 && w.ok;
	sb_puts(&r->b, ")");
	r->depth--;
	return ok;
}

/* pathlib (Lib/pathlib.py, 3.13+ Lib/pathlib/_local.py): PurePath.__repr__
 * is "{}({!r})" of the class's __name__ and as_posix(), which on a POSIX
 * path is str(self): the _str slot, once str() ran (open(), os.fspath(),
 * printing it, ...).  A path never turned into a str, or a Windows one,
 * keeps the fallback. */
static bool mro_has(struct py_ctx *c, uint64_t type, const char *qualname)
{
	const struct py_layout *L = c->L;
	uint64_t mro, t;
	int64_t n;
	if (!rd_ptr(c, type + L->type_dict + 80, &mro) || py_type_of(c, mro, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, mro + L->var_size, &n) != 0 || n < 1 || n > 256)
		return false;
	for (int64_t i = 0; i < n; i++) {
		const char *mod, *qual;
		if (!rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)i, &t))
			return false;
		py_type_qualname(c, t, &mod, &qual);
		if (qual && strcmp(qual, qualname) == 0)
			return true;
	}
	return false;
}

static bool repr_path(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *name = short_name(c, type);
	if (!name || !mro_has(c, type, "PurePosixPath") || mro_has(c, type, "PureWindowsPath"))
		return false;
	uint64_t str = attr(c, addr, type, "_str");
	if (str && py_type_of(c, str, NULL) == PYT_STR) {
		sb_utf8(&r->b, name);
		sb_puts(&r->b, "(");
		repr_item(r, str);
		sb_puts(&r->b, ")");
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * The driver
 * ------------------------------------------------------------------------ */

/* A class defined in Python (and Counter, UUID, Fraction): told by the
 * __repr__ its MRO gives, looked up once, and the class that defines it. */
static bool repr_python_class(struct rctx *r, uint64_t addr, uint64_t type, uint64_t flags,
			      const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t owner = 0;
	uint64_t fn = mro_lookup(c, type, "__repr__", &owner);
	if (!fn)
		return false;
	if (type == s->counter && function_is(c, fn, s->collections, "Counter.__repr__"))
		return repr_counter(r, addr, type);
	if (type == s->uuid && function_is(c, fn, s->uuid_mod, "UUID.__repr__"))
		return repr_uuid(r, addr, type);
	if (type == s->fraction && function_is(c, fn, s->fractions_mod, "Fraction.__repr__"))
		return repr_fraction(r, addr, type);
	if (!(flags & TPFLAGS_HEAPTYPE))
		return false;
	if (function_is(c, fn, s->enum_mod, "Enum.__repr__"))
		return repr_enum(r, addr, type);
	if (c->L->minor >= 7 && owner && function_is(c, fn, s->collections, ".__repr__"))
		return repr_namedtuple(r, addr, type, owner);
	if (function_is(c, fn, s->pathlib, "PurePath.__repr__"))
		return repr_path(r, addr, type);
	if (c->L->minor >= 7 && dataclass_repr_fn(c, s, fn, owner))
		return repr_dataclass(r, addr, type, owner, s);
	return false;
}

bool repr_stdlib(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const struct py_stdlib *s = stdlib_modules(c);
	uint64_t tp_repr = 0, flags = 0;
	struct rctx saved = *r;   /* what an attempt that fails must leave as it was */
	const char *note = NULL;  /* what the fallback is, when the attempt knows */
	bool done = false;
	if (!s)
		return false;
	rd_ptr(c, type + c->L->type_repr, &tp_repr);
	rd_ptr(c, type + c->L->type_flags, &flags);
	if (type == s->deque)
		done = repr_deque(r, addr);
	else if (type == s->defaultdict)
		done = repr_defaultdict(r, addr);
	else if (type == s->odict)
		done = repr_odict(r, addr);
	else if (type == s->partial)
		done = repr_partial(r, addr);
	else if (type == s->decimal)
		done = repr_decimal(r, addr);
	else if (type && (type == s->date || type == s->time || type == s->datetime || type == s->timedelta ||
			  type == s->timezone))
		done = repr_datetime(r, addr, type, s);
	else if (tp_repr && tp_repr == s->exc_repr)
		done = repr_exception(r, addr, type);
	else if (tp_repr && tp_repr == s->structseq_repr)
		done = repr_structseq(r, addr, type);
	else if ((flags & TPFLAGS_HEAPTYPE) || type == s->counter || type == s->uuid || type == s->fraction)
		done = repr_python_class(r, addr, type, flags, s);
	else
		done = repr_generator(r, addr, type) || repr_numpy_array(r, addr, type, &note);
	if (!done && !r->b.oom) {
		/* take back anything a partial attempt printed or noted (the
		 * buffer itself may have moved) */
		r->b.n = saved.b.n;
		r->b.chars = saved.b.chars;
		r->b.cut = saved.b.cut;
		if (r->b.p)
			r->b.p[r->b.n] = '\0';
		r->error = saved.error;
		r->limit_why = saved.limit_why;
		r->damaged = saved.damaged;
		r->approx = saved.approx ? saved.approx : note;
	}
	return done;
}

int64_t py_stdlib_len(struct py_ctx *c, uint64_t addr, uint64_t type)
{
	const struct py_stdlib *s = stdlib_modules(c);
	int64_t n, maxlen;
	if (s && type == s->deque && deque_items(c, addr, &n, &maxlen, NULL, NULL))
		return n;
	if (s && type && (type == s->defaultdict || type == s->odict || type == s->counter) &&
	    py_rd_i64(c, addr + c->L->dict_used, &n) == 0 && n >= 0)
		return n;
	return -1;
}

int py_exception_str_kind(struct py_ctx *c, uint64_t type)
{
	const struct py_stdlib *s = stdlib(c);
	uint64_t tp_str;
	if (!s || !s->exc_str || !rd_ptr(c, type + c->L->type_repr + TP_STR_FROM_REPR, &tp_str))
		return -2;
	if (tp_str == s->exc_str)
		return 0;
	return tp_str == s->keyerror_str ? 1 : -1;
}
