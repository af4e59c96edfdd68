/* A frame's arguments and local variables.
 *
 * Up to 3.10 (Include/code.h, Objects/frameobject.c of those versions):
 * f_localsplus holds co_nlocals fast locals named by co_varnames (the first
 * co_argcount + co_kwonlyargcount [+ *args] [+ **kwargs] are arguments), then
 * one cell per co_cellvars name, then one per co_freevars name.
 * From 3.11 (Include/internal/pycore_code.h): localsplus is named by
 * co_localsplusnames with a kind byte each in co_localspluskinds:
 * CO_FAST_HIDDEN 0x10 (3.12+), CO_FAST_LOCAL 0x20, CO_FAST_CELL 0x40,
 * CO_FAST_FREE 0x80; a cell slot holds a cell object once MAKE_CELL ran.
 * Frames without CO_NEWLOCALS (module level, class bodies) keep their
 * variables in the f_locals dict instead.
 */
#include "python/walk/walk.h"
#include "python/python.h"

#include <string.h>

#define CO_NEWLOCALS   0x0002
#define CO_VARARGS     0x0004
#define CO_VARKEYWORDS 0x0008

#define CO_FAST_HIDDEN 0x10
#define CO_FAST_LOCAL  0x20
#define CO_FAST_CELL   0x40
#define CO_FAST_FREE   0x80

/* A cap on the variables of one frame (CPython's own limit is far lower in
 * practice; a corrupt count must not make us read megabytes). */
#define MAX_FRAME_LOCALS 65536

static struct model_local *new_local(struct py_ctx *c, struct ptrvec *into, const char *name,
				     const char *kind, uint64_t value, const struct repr_limits *lim);

struct attr_walk {
	struct model_local *owner;
	const struct repr_limits *lim;
	size_t n;
};

static int add_attr(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	struct attr_walk *w = arg;
	if (w->n++ >= 1024)
		return 1;
	new_local(c, &w->owner->attributes, name, "attribute", value, w->lim);
	return 0;
}

static void add_local(struct py_ctx *c, struct model_frame *f, const char *name,
		      const char *kind, uint64_t value, const struct repr_limits *lim)
{
	if (py_out_of_time(c))
		return;
	struct model_local *l = new_local(c, &f->locals, name, kind, value, lim);
	uint64_t type;
	uint64_t flags = 0;
	if (!l || !c->opt->deep || py_type_of(c, value, &type) != PYT_OTHER ||
	    dump_read(c->d, type + c->L->type_flags, &flags, 8) != PC_OK ||
	    !(flags & (1ul << 9)))      /* Py_TPFLAGS_HEAPTYPE: classes written in Python */
		return;
	l->has_attributes = true;
	struct attr_walk w = { l, lim, 0 };
	if (py_instance_attrs(c, value, type, add_attr, &w) != 0 && !l->error) {
		l->error = "its attributes could not all be read";
		l->error_info = model_err_at(PC_ENOTCAPTURED, value);
	}
}

static struct model_local *new_local(struct py_ctx *c, struct ptrvec *into, const char *name,
				     const char *kind, uint64_t value, const struct repr_limits *lim)
{
	struct model_local *l = arena_alloc(c->a, sizeof(*l));
	if (!l || ptrvec_push(c->a, into, l) != 0)
		return NULL;
	l->name = name;
	l->kind = kind;
	l->address = value;
	uint64_t type = 0;
	enum py_type t = py_type_of(c, value, &type);
	if (t == PYT_UNREADABLE) {
		l->error = "object not captured in the dump";
		l->error_info = model_err_at(PC_ENOTCAPTURED, value);
		return l;
	}
	l->type = py_type_name(c, type);
	int64_t length;
	l->repr = py_repr_len(c, value, lim, &l->error, &length);
	if (l->error)
		l->error_info = c->why_info;
	if (l->repr && length >= 0) {
		l->length = length;
		l->has_length = true;
	}
	return l;
}

/* A 3.14+ tagged int in a slot: an int without an object. */
static void add_tagged_int(struct py_ctx *c, struct model_frame *f, const char *name,
			   const char *kind, int64_t value)
{
	struct model_local *l = arena_alloc(c->a, sizeof(*l));
	if (!l || ptrvec_push(c->a, &f->locals, l) != 0)
		return;
	l->name = name;
	l->kind = kind;
	l->type = "int";
	l->repr = arena_printf(c->a, "%lld", (long long)value);
}

/* The object a cell or free variable's slot refers to.  MAKE_CELL and
 * COPY_FREE_VARS run before _co_firsttraceable, and frames before it are
 * never reported, so these slots always hold cells here. */
static int deref_cell(struct py_ctx *c, uint64_t slot_value, uint64_t *out)
{
	if (c->type_addr[PYT_CELL] && py_type_of(c, slot_value, NULL) != PYT_CELL)
		return -1;
	return py_rd_ptr(c, slot_value + c->L->cell_ref, out);
}

/* The name at index I of a tuple of str. */
static const char *tuple_name(struct py_ctx *c, uint64_t tuple, int64_t i)
{
	uint64_t item;
	const char *why;
	if (py_rd_ptr(c, tuple + c->L->tuple_item + 8 * (uint64_t)i, &item) != 0)
		return NULL;
	return py_str_utf8(c, item, PY_MAX_NAME, &why);
}

static int64_t tuple_size(struct py_ctx *c, uint64_t tuple)
{
	int64_t n;
	if (!tuple || dump_read(c->d, tuple + c->L->var_size, &n, 8) != PC_OK ||
	    n < 0 || n > MAX_FRAME_LOCALS)
		return -1;
	return n;
}

struct dict_locals {
	struct model_frame *f;
	const struct repr_limits *lim;
	size_t n;
};

static int dict_local(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct dict_locals *w = arg;
	const char *why;
	if (w->n++ >= MAX_FRAME_LOCALS)
		return 1;
	const char *name = py_str_utf8(c, key, PY_MAX_NAME, &why);
	if (name)
		add_local(c, w->f, name, "local", value, w->lim);
	return 0;
}

static const char *dict_locals(struct py_ctx *c, struct model_frame *f, uint64_t dict,
			       const struct repr_limits *lim)
{
	if (!dict)
		return NULL;
	struct dict_locals w = { f, lim, 0 };
	return py_dict_items(c, dict, dict_local, &w) == 0 ? NULL : "the frame's locals dict is unreadable";
}

/* Arguments come first among the fast locals. */
static int arg_count(struct py_ctx *c, uint64_t code, int32_t flags)
{
	int32_t argc = 0, kwonly = 0;
	if (py_rd_i32(c, code + c->L->code_argcount, &argc) != 0 ||
	    py_rd_i32(c, code + c->L->code_kwonlyargcount, &kwonly) != 0)
		return -1;
	return argc + kwonly + !!(flags & CO_VARARGS) + !!(flags & CO_VARKEYWORDS);
}

const char *py_frame_locals(struct py_ctx *c, struct model_frame *f, uint64_t frame,
			    uint64_t code, const struct repr_limits *lim)
{
	const struct py_layout *L = c->L;
	f->has_locals = true;
	int32_t flags;
	if (py_rd_i32(c, code + L->code_flags, &flags) != 0)
		return "code object not captured";
	bool old = L->minor <= 10;
	if (!(flags & CO_NEWLOCALS)) {
		uint64_t dict = 0;
		if (py_rd_ptr(c, frame + (old ? L->frame_locals : L->iframe_locals), &dict) != 0)
			return "frame not captured";
		return dict_locals(c, f, dict, lim);
	}
	int nargs = arg_count(c, code, flags);
	if (nargs < 0)
		return "code object not captured";

	if (!old) {
		uint64_t names, kinds;
		if (py_rd_ptr(c, code + L->code_localsplusnames, &names) != 0 ||
		    py_rd_ptr(c, code + L->code_localspluskinds, &kinds) != 0)
			return "code object not captured";
		int64_t n = tuple_size(c, names);
		size_t nk = 0;
		const char *why;
		uint8_t *k = n >= 0 ? py_bytes(c, kinds, MAX_FRAME_LOCALS, &nk, &why) : NULL;
		if (n < 0 || !k || (int64_t)nk != n)
			return "the code object's variable names are unreadable";
		uint64_t slots = frame + (uint64_t)L->iframe_localsplus;
		for (int64_t i = 0; i < n; i++) {
			if (k[i] & CO_FAST_HIDDEN)
				continue;
			uint64_t v;
			int64_t tagged;
			if (py_rd_ptr(c, slots + 8 * (uint64_t)i, &v) != 0)
				return "the frame's variables are not captured";
			const char *kind = i < nargs ? "argument" : "local";
			if (py_stackref_int(c, v, &tagged)) {
				/* 3.14+: a tagged int, no object (only the value stack
				 * holds these, but a slot is shown as it is) */
				const char *name = tuple_name(c, names, i);
				if (!name)
					return "the code object's variable names are unreadable";
				add_tagged_int(c, f, name, kind, tagged);
				continue;
			}
			v = py_stackref_obj(c, v);
			if (!v)
				continue; /* unbound */
			if (k[i] & (CO_FAST_CELL | CO_FAST_FREE)) {
				kind = (k[i] & CO_FAST_FREE) ? "free" : "cell";
				if (deref_cell(c, v, &v) != 0)
					return "a cell is not captured";
				if (!v)
					continue; /* empty cell: unbound */
			}
			const char *name = tuple_name(c, names, i);
			if (!name)
				return "the code object's variable names are unreadable";
			add_local(c, f, name, kind, v, lim);
		}
		return NULL;
	}

	uint64_t varnames, cellvars, freevars;
	int32_t nlocals;
	if (py_rd_i32(c, code + L->code_nlocals, &nlocals) != 0 ||
	    py_rd_ptr(c, code + L->code_varnames, &varnames) != 0 ||
	    py_rd_ptr(c, code + L->code_cellvars, &cellvars) != 0 ||
	    py_rd_ptr(c, code + L->code_freevars, &freevars) != 0)
		return "code object not captured";
	int64_t nvar = tuple_size(c, varnames), ncell = tuple_size(c, cellvars),
		nfree = tuple_size(c, freevars);
	if (nlocals < 0 || nvar < nlocals || ncell < 0 || nfree < 0)
		return "the code object's variable names are unreadable";
	uint64_t slots = frame + (uint64_t)L->frame_localsplus;
	int64_t total = nlocals + ncell + nfree;
	for (int64_t i = 0; i < total; i++) {
		uint64_t v;
		if (py_rd_ptr(c, slots + 8 * (uint64_t)i, &v) != 0)
			return "the frame's variables are not captured";
		if (!v)
			continue;
		const char *kind, *name;
		if (i < nlocals) {
			kind = i < nargs ? "argument" : "local";
			name = tuple_name(c, varnames, i);
		} else {
			bool cell = i < nlocals + ncell;
			kind = cell ? "cell" : "free";
			name = cell ? tuple_name(c, cellvars, i - nlocals)
				    : tuple_name(c, freevars, i - nlocals - ncell);
			if (py_rd_ptr(c, v + L->cell_ref, &v) != 0)
				return "a cell is not captured";
			if (!v)
				continue;
		}
		if (!name)
			return "the code object's variable names are unreadable";
		add_local(c, f, name, kind, v, lim);
	}
	return NULL;
}
