/* Proof before belief: a runtime found (by symbol, debug offsets or a
 * scan) is used only once it agrees with itself, and an empty result
 * where the dump shows Python ran is a failed read, never a report.
 *
 * What a runtime must show (CPython's own invariants, 3.6-3.15): every
 * interpreter in its list is an aligned, readable PyInterpreterState,
 * not its own successor, that points back to the runtime (3.9+: its
 * .runtime, set to &_PyRuntime when the interpreter is made, in
 * init_interpreter of CPython's Python/pystate.c), whose thread states
 * (tstate_head, then each's next) are aligned and point back to it
 * (PyThreadState.interp, set by new_threadstate and never changed).
 * Thread states whose thread id is no thread of the dump are the walk's
 * to mark stale (a child forked from C keeps its parent's), not a
 * refusal.  A symbol read at the wrong place (a module misplaced), a
 * patched or scribbled word, a scan's false hit: each fails one of
 * these. */
#include "python/walk/walk.h"

#include <string.h>

#define PROOF_MAX_INTERPS 64
#define PROOF_MAX_TSTATES 1024

const char *py_runtime_refusal(struct py_ctx *c, uint64_t runtime, uint64_t head)
{
	const struct py_layout *L = c->L;
	uint64_t interp = head;
	for (int n = 0; interp && n < PROOF_MAX_INTERPS; n++) {
		uint64_t ts, next;
		if (interp % 8)
			return arena_printf(c->a, "its interpreter %d is at 0x%llx, not a pointer's alignment", n,
					    (unsigned long long)interp);
		if (py_rd_ptr(c, interp + L->interp_tstate_head, &ts) != PC_OK ||
		    py_rd_ptr(c, interp + L->interp_next, &next) != PC_OK)
			return NULL;   /* not captured: the walk says what is missing */
		uint64_t back_rt;
		if (runtime && L->interp_runtime >= 0 &&
		    py_rd_ptr(c, interp + L->interp_runtime, &back_rt) == PC_OK && back_rt != runtime)
			return arena_printf(c->a, "its interpreter at 0x%llx points to the runtime 0x%llx",
					    (unsigned long long)interp, (unsigned long long)back_rt);
		for (int k = 0; ts && k < PROOF_MAX_TSTATES; k++) {
			uint64_t back;
			if (ts % 8)
				return arena_printf(c->a, "a thread state of its interpreter at 0x%llx is at 0x%llx, "
						    "not a pointer's alignment", (unsigned long long)interp,
						    (unsigned long long)ts);
			if (py_rd_ptr(c, ts + L->tstate_interp, &back) != PC_OK)
				break;
			if (back != interp)
				return arena_printf(c->a, "the thread state at 0x%llx of the interpreter at 0x%llx points "
						    "to the interpreter 0x%llx", (unsigned long long)ts,
						    (unsigned long long)interp, (unsigned long long)back);
			if (py_rd_ptr(c, ts + L->tstate_next, &ts) != PC_OK)
				break;
		}
		if (next == interp)
			return arena_printf(c->a, "its interpreter at 0x%llx is its own next",
					    (unsigned long long)interp);
		interp = next;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Did Python run? The native stacks say
 * ------------------------------------------------------------------------ */

#define EVIDENCE_MAX_THREADS 256
#define EVIDENCE_MAX_FRAMES 256

struct eval_seen {
	int frames;
	bool eval;
};

static int look_for_eval(const struct native_frame *f, void *arg)
{
	struct eval_seen *e = arg;
	e->eval = py_is_eval_loop(f->function);
	return e->eval || ++e->frames >= EVIDENCE_MAX_FRAMES;
}

static size_t python_threads(const struct model_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->interps.n; i++)
		n += ((const struct model_interp *)r->interps.items[i])->threads.n;
	return n;
}

void py_check_python_ran(struct py_ctx *c, struct symbols *s, const char *why)
{
	struct model_report *r = c->r;
	if (python_threads(r) || !s)
		return;
	int64_t tid = -1;
	for (size_t i = 0; i < c->d->nthreads && i < EVIDENCE_MAX_THREADS && tid < 0; i++) {
		struct eval_seen e = { 0, false };
		symbols_native_names(s, c->d->threads[i].tid, look_for_eval, &e);
		if (e.eval)
			tid = c->d->threads[i].tid;
	}
	if (tid < 0)
		return;
	model_warn(r, "no Python thread was read, but thread %lld runs the eval loop (_PyEval_EvalFrameDefault): "
		   "the interpreter's state was not read (%s)", (long long)tid,
		   why ? why : "the runtime's interpreter list is empty");
	r->incomplete = true;
}
