/* What a thread is besides its stack: the name the threading module gave
 * it, and the exception it is handling.
 *
 * Names: sys.modules['threading']._active maps threading.get_ident() values
 * to Thread objects, whose _name attribute is the name.
 * Exceptions (Include/cpython/pystate.h of each version): 3.6 keeps the
 * handled exception in tstate->exc_value, 3.7+ in tstate->exc_info->
 * exc_value (a stack of _PyErr_StackItem; the top is the innermost except
 * block).  An exception's args are at PyBaseExceptionObject.args, its
 * traceback at .traceback: PyTracebackObject chains (tb_next, tb_frame,
 * tb_lasti, tb_lineno; 3.11+ computes tb_lineno lazily and leaves -1).
 */
#include "python/walk/walk.h"

#include <string.h>

#include "python/objects/linetable.h"

#define MAX_TRACEBACK 1000
#define MAX_CHAIN     32       /* exceptions followed by __cause__ / __context__ */

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------ */

static int take_name(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	const char **out = arg;
	const char *why;
	if (strcmp(name, "_name") != 0 || py_type_of(c, value, NULL) != PYT_STR)
		return 0;
	*out = py_str_utf8(c, value, PY_MAX_NAME, &why);
	return 1;
}

struct names_walk {
	struct model_interp *mi;
};

static int active_thread(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct names_walk *w = arg;
	int64_t ident;
	uint64_t type;
	if (py_long_i64(c, key, &ident) != 0 || py_type_of(c, value, &type) == PYT_UNREADABLE)
		return 0;
	for (size_t i = 0; i < w->mi->threads.n; i++) {
		struct model_thread *t = w->mi->threads.items[i];
		if (t->ident != (uint64_t)ident || t->name)
			continue;
		const char *name = NULL;
		py_instance_attr_named(c, value, type, "_name", take_name, &name);
		t->name = name;
	}
	return 0;
}

void py_thread_names(struct py_ctx *c, uint64_t interp, struct model_interp *mi)
{
	uint64_t dict, active;
	if (py_module_dict(c, interp, "threading", &dict) != 0 ||
	    py_dict_get_str(c, dict, "_active", &active) != 0)
		return; /* no threading module: threads have no names */
	struct names_walk w = { mi };
	py_dict_items(c, active, active_thread, &w);
}

/* ------------------------------------------------------------------------
 * Exceptions
 * ------------------------------------------------------------------------ */

/* str(exc) as BaseException_str forms it: '' for no args, str(arg) for
 * one (the text itself for a str), str(args) for more; KeyError_str
 * gives repr(arg) for one.  Types with a __str__ of their own (OSError's
 * "[Errno 2] ...") get none: an error says so. */
const char *py_exception_message(struct py_ctx *c, uint64_t exc, const char **error)
{
	uint64_t args, arg, type;
	int64_t n;
	static const struct repr_limits lim = { 1024, 100, 8 };
	int kind = py_type_of(c, exc, &type) == PYT_UNREADABLE ? -2 : py_exception_str_kind(c, type);
	if (kind == -1) {
		*error = "its type's __str__ is its own: not run";
		c->why_info = model_err_at(PC_EUNSUPPORTED, exc);
		return NULL;
	}
	if (py_rd_ptr(c, exc + c->L->exc_args, &args) != 0 || !args ||
	    dump_read(c->d, args + c->L->var_size, &n, 8) != PC_OK || n < 0) {
		*error = "the exception's args are not captured";
		c->why_info = model_err_at(PC_ENOTCAPTURED, exc);
		return NULL;
	}
	if (n == 0)
		return "";
	if (n > 1)
		return py_repr(c, args, &lim, error);
	if (py_rd_ptr(c, args + c->L->tuple_item, &arg) != 0) {
		*error = "the exception's args are not captured";
		c->why_info = model_err_at(PC_ENOTCAPTURED, args);
		return NULL;
	}
	if (kind == 1)
		return py_repr(c, arg, &lim, error);
	if (py_type_of(c, arg, NULL) == PYT_STR) {
		const char *why;
		const char *s = py_str_utf8(c, arg, 4096, &why);
		if (!s)
			*error = why;
		return s;
	}
	return py_repr(c, arg, &lim, error);
}

/* The code object and line of a traceback entry's frame. */
static int tb_entry(struct py_ctx *c, uint64_t tb, uint64_t *code, int *lasti, int *lineno)
{
	const struct py_layout *L = c->L;
	uint64_t frame;
	int32_t li, ln;
	if (py_rd_ptr(c, tb + L->tb_frame, &frame) != 0 || !frame ||
	    dump_read(c->d, tb + L->tb_lasti, &li, 4) != PC_OK ||
	    dump_read(c->d, tb + L->tb_lineno, &ln, 4) != PC_OK)
		return -1;
	if (L->frame_code >= 0) {
		if (py_rd_ptr(c, frame + L->frame_code, code) != 0)
			return -1;
	} else {
		uint64_t iframe;
		if (py_rd_ptr(c, frame + L->frame_frame, &iframe) != 0 || !iframe ||
		    py_rd_ptr(c, iframe + L->iframe_code, code) != 0)
			return -1;
		*code = py_stackref_obj(c, *code);
	}
	*lasti = li;
	*lineno = ln;
	return 0;
}

static int tb_line(struct py_ctx *c, const struct py_code *pc, int lasti)
{
	/* tb_lasti counts bytes up to 3.9; code units in 3.10 (f_lasti's unit)
	 * and bytes again from 3.11 (the LASTI of the frame, times 2) */
	if (!pc->table)
		return 0;
	if (c->L->minor <= 9)
		return py_line_lnotab(pc->table, pc->table_len, pc->firstlineno, lasti);
	if (c->L->minor == 10)
		return py_line_linetable310(pc->table, pc->table_len, pc->firstlineno, lasti * 2);
	return py_line_locations(pc->table, pc->table_len, pc->firstlineno, lasti < 0 ? -1 : lasti / 2);
}

/* The type, str(), repr() and traceback of the exception object EXC
 * (readable: its type is known) into E. */
static void read_exception(struct py_ctx *c, uint64_t exc, uint64_t type, struct model_exception *e)
{
	const struct py_layout *L = c->L;
	static const struct repr_limits lim = { 1024, 100, 8 };
	const char *why;
	e->type = py_type_name(c, type);
	e->message = py_exception_message(c, exc, &e->error);
	if (e->error)
		e->error_info = c->why_info;
	e->repr = py_repr(c, exc, &lim, &why);
	if (why)
		e->repr = NULL;   /* only Python's own repr, never an approximation */
	uint64_t tb;
	if (py_rd_ptr(c, exc + L->exc_traceback, &tb) != 0)
		return;
	/* the chain runs outermost first; the report wants innermost first */
	struct ptrvec outer_first = { 0 };
	for (int n = 0; tb && n < MAX_TRACEBACK; n++) {
		uint64_t code, next;
		int lasti, lineno;
		if (py_type_of(c, tb, NULL) == PYT_NONE)
			break;
		if (tb_entry(c, tb, &code, &lasti, &lineno) != 0 || py_rd_ptr(c, tb + L->tb_next, &next) != 0) {
			e->error = "the traceback is not captured whole";
			e->error_info = model_err_at(PC_ENOTCAPTURED, tb);
			break;
		}
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error) {
			e->error = pc ? pc->error : "out of memory";
			e->error_info = pc ? pc->error_info : model_err(PC_ENOMEM);
			break;
		}
		struct model_frame *f = arena_alloc(c->a, sizeof(*f));
		if (!f || ptrvec_push(c->a, &outer_first, f) != 0)
			break;
		f->kind = FRAME_PYTHON;
		f->function = pc->name;
		f->qualname = pc->qualname;
		f->file = pc->filename;
		f->line = lineno > 0 ? lineno : tb_line(c, pc, lasti);
		if (c->L->minor >= 11 && lasti >= 0) {
			/* the columns of the instruction, where its line is the one
			 * the traceback says */
			int line = f->line;
			py_code_locate(c, pc, lasti / 2, f);
			if (f->line != line) {
				f->line = line;
				f->has_position = false;
			}
		}
		tb = next;
	}
	for (size_t i = outer_first.n; i-- > 0;)
		ptrvec_push(c->a, &e->traceback, outer_first.items[i]);
}

/* The exception EXC came from, as Python's traceback module follows it:
 * __cause__ when set ("cause"), else __context__ unless
 * __suppress_context__ ("context").  PyBaseExceptionObject keeps context,
 * cause and suppress_context (a char) right after traceback in every
 * version (Include/cpython/pyerrors.h).  0 when none or unreadable. */
static uint64_t exception_from(struct py_ctx *c, uint64_t exc, const char **relation)
{
	uint64_t at = exc + (uint64_t)c->L->exc_traceback, context, cause;
	uint8_t suppress;
	if (py_rd_ptr(c, at + 8, &context) != 0 || py_rd_ptr(c, at + 16, &cause) != 0 ||
	    dump_read(c->d, at + 24, &suppress, 1) != PC_OK)
		return 0;
	if (cause && py_type_of(c, cause, NULL) != PYT_NONE) {
		*relation = "cause";
		return cause;
	}
	if (context && !suppress && py_type_of(c, context, NULL) != PYT_NONE) {
		*relation = "context";
		return context;
	}
	return 0;
}

void py_thread_exception(struct py_ctx *c, uint64_t ts, struct model_thread *t)
{
	const struct py_layout *L = c->L;
	uint64_t exc = 0;
	if (L->tstate_exc_info >= 0) {
		uint64_t info;
		if (py_rd_ptr(c, ts + L->tstate_exc_info, &info) != 0 || !info ||
		    py_rd_ptr(c, info + L->stackitem_exc_value, &exc) != 0)
			return;
	} else if (L->tstate_exc_value < 0 || py_rd_ptr(c, ts + L->tstate_exc_value, &exc) != 0) {
		return;
	}
	uint64_t type;
	enum py_type pt = exc ? py_type_of(c, exc, &type) : PYT_NONE;
	if (pt == PYT_NONE || !exc)
		return;
	struct model_exception *e = arena_alloc(c->a, sizeof(*e));
	if (!e)
		return;
	t->exception = e;
	if (pt == PYT_UNREADABLE) {
		e->error = "the exception object is not captured";
		e->error_info = model_err_at(PC_ENOTCAPTURED, exc);
		return;
	}
	read_exception(c, exc, type, e);
	uint64_t seen[MAX_CHAIN + 1] = { exc };
	const char *relation;
	for (int n = 1; (exc = exception_from(c, exc, &relation)) != 0; n++) {
		bool again = false;
		for (int i = 0; i < n; i++)
			again |= seen[i] == exc;
		if (again)
			break; /* a cycle: Python's traceback stops there too */
		struct model_exception *link = n <= MAX_CHAIN ? arena_alloc(c->a, sizeof(*link)) : NULL;
		if (!link || ptrvec_push(c->a, &e->chain, link) != 0) {
			if (!e->error) {
				e->error = "its chain of causes is longer than pycore follows";
				e->error_info = model_err(PC_ELIMIT);
			}
			break;
		}
		seen[n] = exc;
		link->relation = relation;
		if (py_type_of(c, exc, &type) == PYT_UNREADABLE) {
			link->error = "the exception object is not captured";
			link->error_info = model_err_at(PC_ENOTCAPTURED, exc);
			break;
		}
		read_exception(c, exc, type, link);
	}
}
