/* repr() of objects in a dump, exactly as CPython prints it for the
 * built-in types, with hard limits on length, items and depth: the
 * containers, other objects and the driver.  The scalars (int, float, str,
 * bytes) are in scalar.c, the other built-in types in builtins.c, the
 * standard library's in stdlib.c; the output buffer is buffer.c's.
 *
 * Facts from CPython's Objects/: Py_ReprEnter's "..." for containers met
 * again while being printed, object_repr's
 * "<module.QualName object at 0x...>".
 */
#include "python/repr/repr_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Containers
 * ------------------------------------------------------------------------ */

static void repr_sequence(struct rctx *r, uint64_t addr, bool tuple)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t items;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0 || size < 0)
		return repr_fail(r, "sequence not captured");
	if (tuple) {
		items = addr + (uint64_t)c->L->tuple_item;
	} else if (py_rd_ptr(c, addr + c->L->list_item, &items) != 0) {
		return repr_fail(r, "list not captured");
	}
	const char *open = tuple ? "(" : "[", *close = tuple ? ")" : "]";
	if (size == 0) {
		sb_puts(&r->b, tuple ? "()" : "[]");
		return;
	}
	if (repr_reentered(r, addr)) {
		sb_puts(&r->b, tuple ? "(...)" : "[...]");
		return;
	}
	if (!repr_enter(r, addr))
		return;
	sb_puts(&r->b, open);
	for (int64_t i = 0; i < size && !sb_full(&r->b); i++) {
		if ((size_t)i >= r->lim->max_items) {
			repr_limit(r, "more items than the item limit");
			break;
		}
		uint64_t item;
		if (i)
			sb_puts(&r->b, ", ");
		if (py_rd_ptr(c, items + 8 * (uint64_t)i, &item) != 0) {
			repr_fail(r, "item not captured");
			break;
		}
		repr_item(r, item);
	}
	if (tuple && size == 1)
		sb_puts(&r->b, ",");
	sb_puts(&r->b, close);
	r->depth--;
}

struct dict_walk {
	struct rctx *r;
	size_t n;
};

static int dict_item(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	(void)c;
	struct dict_walk *w = arg;
	struct rctx *r = w->r;
	if (sb_full(&r->b))
		return 1;
	if (w->n >= r->lim->max_items) {
		repr_limit(r, "more items than the item limit");
		return 1;
	}
	if (w->n++)
		sb_puts(&r->b, ", ");
	repr_item(r, key);
	sb_puts(&r->b, ": ");
	repr_item(r, value);
	return 0;
}

void repr_dict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t used;
	if (py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0)
		return repr_fail(r, "dict not captured");
	if (used == 0) {
		sb_puts(&r->b, "{}");
		return;
	}
	if (repr_reentered(r, addr)) {
		sb_puts(&r->b, "{...}");
		return;
	}
	if (!repr_enter(r, addr))
		return;
	sb_puts(&r->b, "{");
	struct dict_walk w = { r, 0 };
	int rc = py_dict_items(c, addr, dict_item, &w);
	if (rc == -2)
		repr_limit(r, "a dict table larger than pycore reads");
	else if (rc != 0)
		repr_fail(r, "dict table unreadable");
	sb_puts(&r->b, "}");
	r->depth--;
}

struct set_walk {
	struct rctx *r;
	size_t n;
};

static int set_item(struct py_ctx *c, uint64_t key, uint64_t unused, void *arg)
{
	struct set_walk *s = arg;
	struct rctx *r = s->r;
	(void)c;
	(void)unused;
	if (sb_full(&r->b))
		return 1;
	if (s->n >= r->lim->max_items) {
		repr_limit(r, "more items than the item limit");
		return 1;
	}
	if (s->n++)
		sb_puts(&r->b, ", ");
	repr_item(r, key);
	return 0;
}

static void repr_set(struct rctx *r, uint64_t addr, bool frozen)
{
	struct py_ctx *c = r->c;
	int64_t used;
	if (py_rd_i64(c, addr + c->L->set_used, &used) != 0 || used < 0)
		return repr_fail(r, "set not captured or corrupt");
	const char *name = frozen ? "frozenset" : "set";
	if (used == 0) {
		sb_printf(&r->b, "%s()", name);
		return;
	}
	if (repr_reentered(r, addr)) {
		sb_printf(&r->b, "%s(...)", name);
		return;
	}
	if (!repr_enter(r, addr))
		return;
	if (frozen)
		sb_puts(&r->b, "frozenset(");
	sb_puts(&r->b, "{");
	struct set_walk s = { r, 0 };
	if (py_set_items(c, addr, SIZE_MAX, set_item, &s) != 0)
		repr_fail(r, "set not captured or corrupt");
	sb_puts(&r->b, "}");
	if (frozen)
		sb_puts(&r->b, ")");
	r->depth--;
}

/* ------------------------------------------------------------------------
 * Everything else
 * ------------------------------------------------------------------------ */

/* Does TYPE print with object.__repr__ (its tp_repr is object's)? */
static bool default_repr(struct py_ctx *c, uint64_t type)
{
	uint64_t mine, base;
	uint64_t object = c->type_addr[PYT_OBJECT];
	return object && py_rd_ptr(c, type + c->L->type_repr, &mine) == 0 &&
	       py_rd_ptr(c, object + c->L->type_repr, &base) == 0 && mine == base;
}

static void put_name(struct sbuf *b, const char *mod, const char *qual)
{
	if (mod && strcmp(mod, "builtins") != 0) {
		sb_utf8(b, mod);
		sb_puts(b, ".");
	}
	sb_utf8(b, qual);
}

/* type.__repr__: <class 'module.QualName'> */
static void repr_class(struct rctx *r, uint64_t addr)
{
	const char *mod, *qual;
	py_type_qualname(r->c, addr, &mod, &qual);
	if (!qual)
		return repr_fail(r, "class name not captured");
	sb_puts(&r->b, "<class '");
	put_name(&r->b, mod, qual);
	sb_puts(&r->b, "'>");
}

/* function.__repr__: <function QualName at 0x...> */
static void repr_function(struct rctx *r, uint64_t addr)
{
	uint64_t q;
	const char *why, *qual = NULL;
	if (py_rd_ptr(r->c, addr + r->c->L->function_qualname, &q) == 0)
		qual = py_str_utf8(r->c, q, PY_MAX_NAME, &why);
	if (!qual)
		return repr_fail(r, "function name not captured");
	sb_puts(&r->b, "<function ");
	sb_utf8(&r->b, qual);
	sb_printf(&r->b, " at 0x%llx>", (unsigned long long)addr);
}

static void repr_other(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *numpy = py_numpy_repr(c, addr, type);
	if (numpy) {
		sb_puts(&r->b, numpy);
		return;
	}
	if (repr_stdlib(r, addr, type))
		return;
	const char *mod, *qual;
	py_type_qualname(c, type, &mod, &qual);
	if (!qual)
		return repr_fail(r, "type name not captured");
	/* a function whose type pycore has no symbol for (PyFunction_Type
	 * not found): its type names it, function.__repr__ needs no more */
	if (strcmp(qual, "function") == 0 && (!mod || strcmp(mod, "builtins") == 0) && !c->type_addr[PYT_FUNCTION])
		return repr_function(r, addr);
	/* Only object.__repr__ can be formed without running Python code;
	 * other types are shown the same way, and the repr says so. */
	if (!r->approx && !c->type_addr[PYT_OBJECT])
		r->approx = "whether its type defines __repr__ is unknown (no symbols for object): "
			    "shown as object.__repr__";
	else if (!r->approx && !default_repr(c, type))
		r->approx = arena_printf(c->a, "%s%s%s defines __repr__, not run: shown as object.__repr__",
					 mod && strcmp(mod, "builtins") ? mod : "",
					 mod && strcmp(mod, "builtins") ? "." : "", qual);
	sb_puts(&r->b, "<");
	put_name(&r->b, mod, qual);
	sb_printf(&r->b, " object at 0x%llx>", (unsigned long long)addr);
}

static void repr_obj_at(struct rctx *r, uint64_t addr);

void repr_obj(struct rctx *r, uint64_t addr)
{
	uint64_t outer = r->at;
	r->at = addr;
	repr_obj_at(r, addr);
	r->at = outer;
}

static void repr_obj_at(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	if (sb_full(&r->b))
		return;
	if (addr == 0) {
		repr_fail_as(r, PC_ECORRUPT, "NULL object");
		sb_puts(&r->b, "<NULL>");
		return;
	}
	uint64_t type = 0;
	enum py_type t = py_type_of(c, addr, &type);
	switch (t) {
	case PYT_UNREADABLE:
		repr_fail(r, "object not captured");
		sb_printf(&r->b, "<unreadable object at 0x%llx>", (unsigned long long)addr);
		return;
	case PYT_NONE: sb_puts(&r->b, "None"); return;
	case PYT_ELLIPSIS: sb_puts(&r->b, "Ellipsis"); return;
	case PYT_BOOL: {
		int64_t v;
		if (py_long_i64(c, addr, &v) != 0)
			return repr_fail(r, "bool not captured");
		sb_puts(&r->b, v ? "True" : "False");
		return;
	}
	case PYT_INT: repr_long(r, addr); return;
	case PYT_FLOAT: repr_float(r, addr); return;
	case PYT_STR: repr_str(r, addr); return;
	case PYT_BYTES: repr_bytes(r, addr); return;
	case PYT_BYTEARRAY: repr_bytearray(r, addr); return;
	case PYT_LIST: repr_sequence(r, addr, false); return;
	case PYT_TUPLE: repr_sequence(r, addr, true); return;
	case PYT_DICT: repr_dict(r, addr); return;
	case PYT_SET: repr_set(r, addr, false); return;
	case PYT_FROZENSET: repr_set(r, addr, true); return;
	case PYT_TYPE: repr_class(r, addr); return;
	case PYT_FUNCTION: repr_function(r, addr); return;
	case PYT_COMPLEX: repr_complex(r, addr); return;
	case PYT_RANGE: repr_range(r, addr); return;
	case PYT_SLICE: repr_slice(r, addr); return;
	case PYT_MODULE: repr_module(r, addr); return;
	default: repr_other(r, addr, type); return;
	}
}

void repr_item(struct rctx *r, uint64_t addr)
{
	const char *outer = r->error;
	struct model_error_info outer_info = r->error_info;
	size_t n = r->b.n, chars = r->b.chars;
	r->error = NULL;
	repr_obj(r, addr);
	const char *why = r->error;
	struct model_error_info why_info = r->error_info;
	r->error = outer;
	r->error_info = outer_info;
	if (!why || r->b.oom)
		return;
	/* take back what the item printed and show it as Python's own
	 * PyObject_Repr shows NULL ("<NULL>"), or as an invalid object */
	r->b.n = n;
	r->b.chars = chars;
	if (r->b.p)
		r->b.p[n] = '\0';
	if (addr)
		sb_printf(&r->b, "<invalid object at 0x%llx>", (unsigned long long)addr);
	else
		sb_puts(&r->b, "<NULL>");
	if (!r->damaged) {
		r->damaged_info = why_info;
		r->damaged = arena_printf(r->c->a, "an item could not be read (%s): shown as %s", why,
					  addr ? "<invalid object at 0x...>" : "<NULL>");
	}
}

int64_t py_len(struct py_ctx *c, uint64_t addr)
{
	const struct py_layout *L = c->L;
	int64_t n = -1;
	uint64_t type, v;
	int64_t off = -1;
	switch (py_type_of(c, addr, &type)) {
	case PYT_STR: off = L->unicode_length; break;
	case PYT_BYTES: case PYT_BYTEARRAY: case PYT_LIST: case PYT_TUPLE: off = L->var_size; break;
	case PYT_DICT: off = L->dict_used; break;
	case PYT_SET: case PYT_FROZENSET: off = L->set_used; break;
	case PYT_RANGE:
		/* rangeobject: start, stop, step, length (an int) */
		if (py_rd_ptr(c, addr + (uint64_t)L->object_type + 8 + 24, &v) != 0 ||
		    py_long_i64(c, v, &n) != 0)
			return -1;
		return n;
	case PYT_OTHER:
		return py_stdlib_len(c, addr, type);
	default: return -1;
	}
	if (off < 0 || py_rd_i64(c, addr + (uint64_t)off, &n) != 0 || n < 0)
		return -1;
	return n;
}

const char *py_repr_len(struct py_ctx *c, uint64_t addr, const struct repr_limits *lim,
			const char **error, int64_t *length)
{
	struct rctx r = { .c = c, .lim = lim };
	r.b.limit = lim->max_repr;
	if (length)
		*length = -1;
	repr_obj(&r, addr);
	if (r.b.oom || r.error) {
		free(r.b.p);
		*error = r.b.oom ? "out of memory" : r.error;
		c->why_info = r.b.oom ? model_err(PC_ENOMEM) : r.error_info;
		return NULL;
	}
	const char *why = NULL;
	if (r.b.cut) {
		/* the whole repr, "..." included, is at most max_repr
		 * characters: drop whole characters to make room */
		size_t room = lim->max_repr > 3 ? lim->max_repr - 3 : 0;
		while (r.b.chars > room && r.b.n > 0) {
			do
				r.b.n--;
			while (r.b.n > 0 && (r.b.p[r.b.n] & 0xc0) == 0x80);
			r.b.chars--;
		}
		if (r.b.p)
			r.b.p[r.b.n] = '\0';
		sb_raw(&r.b, "...", lim->max_repr < 3 ? lim->max_repr : 3);
		why = r.limit_why ? arena_printf(c->a, "repr cut: %s", r.limit_why)
		      : arena_printf(c->a, "repr cut at %zu characters", lim->max_repr);
		if (length)
			*length = py_len(c, addr);
	}
	const char *notes[] = { r.damaged, r.approx };
	for (size_t i = 0; i < 2; i++)
		if (notes[i])
			why = why ? arena_printf(c->a, "%s; %s", why, notes[i]) : notes[i];
	*error = why;
	/* the kind: an item's failure before a limit, a limit before a type
	 * whose own __repr__ pycore cannot run */
	c->why_info = r.damaged ? r.damaged_info : r.b.cut ? model_err_at(PC_ELIMIT, addr)
		      : model_err_at(PC_EUNSUPPORTED, addr);
	const char *out = arena_strdup(c->a, r.b.p ? r.b.p : "");
	free(r.b.p);
	return out;
}

const char *py_repr(struct py_ctx *c, uint64_t addr, const struct repr_limits *lim,
		    const char **error)
{
	return py_repr_len(c, addr, lim, error, NULL);
}
