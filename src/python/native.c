/* Native frames, with the Python frames woven in: each call of the eval
 * loop (_PyEval_EvalFrameDefault) on the native stack ran the Python frames
 * from the next one up to the first that entered it (eval_entry). */
#include "python/python_int.h"

#include <string.h>

struct weave {
	struct py_ctx *c;
	struct model_thread *t;
	struct ptrvec out;
	struct ptrvec py;            /* the thread's Python frames, innermost first */
	size_t next_py;
	struct dump_module *interp_module;
};

static bool is_eval_loop(const char *fn)
{
	return fn && strcmp(fn, "_PyEval_EvalFrameDefault") == 0;
}

static int weave_frame(const struct native_frame *nf, void *arg)
{
	struct weave *w = arg;
	struct py_ctx *c = w->c;
	if (is_eval_loop(nf->function) && w->next_py < w->py.n) {
		/* the Python frames this eval loop call ran, innermost first */
		while (w->next_py < w->py.n) {
			struct model_frame *pf = w->py.items[w->next_py++];
			ptrvec_push(c->a, &w->out, pf);
			if (pf->eval_entry)
				break;
		}
	}
	bool internal = nf->module && nf->module == w->interp_module;
	if (internal && c->opt->native < 2)
		return 0;
	struct model_frame *f = arena_alloc(c->a, sizeof(*f));
	if (!f)
		return 1;
	f->kind = FRAME_NATIVE;
	f->function = arena_strdup(c->a, nf->function);
	f->file = arena_strdup(c->a, nf->module_path ? nf->module_path : nf->module ? nf->module->path : NULL);
	f->address = nf->pc;
	f->line = nf->file ? nf->line : 0;
	f->source_file = arena_strdup(c->a, nf->file);
	ptrvec_push(c->a, &w->out, f);
	return 0;
}

void py_weave_native(struct py_ctx *c, struct symbols *s, struct model_thread *t,
			 struct dump_module *interp_module)
{
	if (t->tid < 0) {
		py_thread_error(c, t, "no OS thread for this Python thread: no native stack");
		return;
	}
	struct weave w = { .c = c, .t = t, .py = t->frames, .interp_module = interp_module };
	const char *why = NULL;
	int n = symbols_native_stack(s, t->tid, weave_frame, &w, &why);
	if (n < 0) {
		model_warn(c->r, "thread %lld: no native stack: %s", (long long)t->tid, why ? why : "?");
		return;
	}
	if (w.next_py < w.py.n) {
		/* Python frames no eval loop frame was found for */
		if (!why)
			why = "the native stack has fewer eval loop frames than there are Python frames";
		model_warn(c->r, "thread %lld: %zu Python frames placed after the native stack: %s",
			   (long long)t->tid, w.py.n - w.next_py, why);
		while (w.next_py < w.py.n)
			ptrvec_push(c->a, &w.out, w.py.items[w.next_py++]);
	} else if (why && n < 2) {
		model_warn(c->r, "thread %lld: native stack incomplete: %s", (long long)t->tid, why);
	}
	t->frames = w.out;
}
