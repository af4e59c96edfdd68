/* repr() of the standard library's types that real services hold, formed
 * from memory exactly as Python prints them, or not at all (the caller
 * then shows object.__repr__ and says so).  A type counts as the standard
 * library's only when memory proves it: it is the very object its module
 * exports (sys.modules[...].__dict__[name]) with the expected tp_name, and
 * for classes written in Python, the __repr__ found along the MRO is a
 * function of that module (its __globals__ is the module's dict) with the
 * expected __qualname__.
 *
 * Each kind's repr is in builtins.c (tp_repr of BaseException, of struct
 * sequences; generators), collections.c, datatypes.c; this file proves
 * which kind a type is and calls it.
 */
#include "python/repr/stdlib.h"

#include <string.h>

#define TP_STR_FROM_REPR 48   /* tp_str is six words after tp_repr in PyTypeObject */

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

/* ------------------------------------------------------------------------
 * The driver
 * ------------------------------------------------------------------------ */

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
	    !(wrapped = py_instance_attr(c, fn, c->type_addr[PYT_FUNCTION], "__wrapped__")) ||
	    py_type_of(c, wrapped, NULL) != PYT_FUNCTION ||
	    !rd_ptr(c, wrapped + hdr(c) + (c->L->minor <= 9 ? 0 : 32), &code))
		return false;
	const struct py_code *pc = py_code_get(c, code);
	return pc && !pc->error && pc->filename && strcmp(pc->filename, "<string>") == 0 &&
	       pc->name && strcmp(pc->name, "__repr__") == 0;
}

/* A class defined in Python (and Counter, UUID, Fraction): told by the
 * __repr__ its MRO gives, looked up once, and the class that defines it. */
static bool repr_python_class(struct rctx *r, uint64_t addr, uint64_t type, uint64_t flags,
			      const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t owner = 0;
	uint64_t fn = py_mro_lookup(c, type, "__repr__", &owner);
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
	if (s && type == s->deque && stdlib_deque_items(c, addr, &n, &maxlen, NULL, NULL))
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
