/* Native frames, with the Python frames woven in where the eval loop ran
 * them, but only where that can be proven.
 *
 * Each call of the eval loop (_PyEval_EvalFrameDefault) runs a group of
 * Python frames: from the one after the previous group up to the first
 * that entered it (eval_entry).  From 3.12 every such call begins with a
 * shim frame (entry_frame) that lives in the eval loop's own C stack frame
 * (Python/ceval.c of 3.12-3.15: `_PyInterpreterFrame entry_frame;` is a
 * local of _PyEval_EvalFrameDefault), so a group belongs to the eval loop
 * frame whose stack range [its sp, its caller's sp) holds the group's shim:
 * several interpreters on one OS thread, or a coroutine run from a
 * destructor, cannot be confused.  Up to 3.11 there is no such address:
 * groups are matched to eval loop frames one for one, and only when their
 * numbers agree and no other Python thread state runs on this OS thread.
 * What cannot be placed is listed after the native stack, with a warning
 * that says why, never woven in as if it were known. */
#include "python/walk/walk.h"

#include <stdlib.h>
#include <string.h>

/* greenlets' slices followed up one OS thread's stack, at most; bytes of
 * a greenlet's stack copy put back for its unwinding, at most */
#define MAX_GREENLET_DEPTH 64
#define MAX_GREENLET_COPY  (64u << 20)
/* suspended greenlets whose native stacks are unwound, per OS thread */
#define MAX_GREENLET_STACKS 1000u

struct nframe {
	struct model_frame *f;
	uint64_t sp;                 /* 0: unknown */
	bool eval;                   /* a call of the eval loop */
};

struct unwind_into {
	struct py_ctx *c;
	struct dump_module *interp_module;
	struct nframe *v;
	size_t n, cap;
};

/* _PyEval_EvalFrameDefault, or a part GCC split off it
 * ("_PyEval_EvalFrameDefault.cold" holds the return address of calls made
 * from its unlikely paths; ".constprop.N" and the like are its clones). */
bool py_is_eval_loop(const char *fn)
{
	static const char name[] = "_PyEval_EvalFrameDefault";
	return fn && strncmp(fn, name, sizeof(name) - 1) == 0 &&
	       (fn[sizeof(name) - 1] == '\0' || fn[sizeof(name) - 1] == '.');
}

static int collect_frame(const struct native_frame *nf, void *arg)
{
	struct unwind_into *u = arg;
	struct py_ctx *c = u->c;
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct nframe *v = arena_alloc(c->a, cap * sizeof(*v));
		if (!v)
			return 1;
		if (u->n)
			memcpy(v, u->v, u->n * sizeof(*v));
		u->v = v;
		u->cap = cap;
	}
	struct model_frame *f = arena_alloc(c->a, sizeof(*f));
	if (!f)
		return 1;
	f->kind = FRAME_NATIVE;
	f->function = arena_strdup(c->a, nf->function);
	f->file = arena_strdup(c->a, nf->module_path ? nf->module_path : nf->module ? nf->module->path : NULL);
	f->address = nf->pc;
	f->line = nf->file ? nf->line : 0;
	f->source_file = arena_strdup(c->a, nf->file);
	f->inlined = nf->inlined;
	f->tail_call = nf->tail_call;
	f->interpreter = nf->module && nf->module == u->interp_module;
	f->sigreturn = nf->sigreturn;
	f->found_by = nf->found_by;
	py_native_args(c, f, nf);
	u->v[u->n++] = (struct nframe){
		.f = f,
		.sp = nf->sp,
		.eval = !nf->inlined && !nf->tail_call && py_is_eval_loop(nf->function),
	};
	return 0;
}

static bool any_function(const char *fn)
{
	(void)fn;
	return true;
}

/* Which of the interpreter's frames are described by their symbol alone
 * (Q filled for its module M): with --native-all, none; else those
 * --native does not show (shown(): from the first eval loop call on) and,
 * but on the thread that crashed (CRASHED), those it shows by their name
 * too: a thread's frames in libpython above its Python frames are named
 * on every thread, and with their lines and inlined calls where the crash
 * is (reading libpython's line tables and debug information costs a
 * third of a --native analysis of a core of few threads). */
static const struct symbols_quiet *quiet_rule(const struct py_ctx *c, struct symbols_quiet *q,
					      const struct dump_module *m, bool crashed)
{
	if (c->opt->native >= 2 || c->keep_internal || !m)
		return NULL;
	*q = (struct symbols_quiet){ .module = m, .from = crashed ? py_is_eval_loop : any_function };
	return q;
}

/* The index of U's first eval loop frame from FROM on; U->n when none:
 * the interpreter's frames before it are where the thread is (a crash in
 * libpython, a wait in its locks), never hidden; after it, --native
 * shows only the frames of other modules. */
static size_t first_eval(const struct unwind_into *u, size_t from)
{
	while (from < u->n && !u->v[from].eval)
		from++;
	return from;
}

/* Whether U's frame K is shown: every frame but the interpreter's own
 * past TOP (first_eval), which --native-all adds. */
static bool shown(const struct py_ctx *c, const struct unwind_into *u, size_t k, size_t top)
{
	return !u->v[k].f->interpreter || k < top || c->opt->native >= 2 || c->keep_internal;
}

/* The collector's own functions in CPython 3.6-3.15 (Modules/gcmodule.c,
 * Python/gc.c, Python/gc_free_threading.c): a frame of one, in the
 * interpreter's module, is a collection in progress. */
static bool is_gc_function(const char *fn)
{
	static const char *const names[] = {
		"collect", "collect_with_callback", "collect_generations", "gc_collect_main",
		"gc_collect_with_callback", "gc_collect_generations", "gc_collect_full",
		"gc_collect_young", "gc_collect_increment", "gc_collect_region", "finalize_garbage",
		"delete_garbage", "_PyGC_Collect",
	};
	if (!fn)
		return false;
	size_t n = strcspn(fn, "."); /* a GCC clone: gc_collect_main.constprop.0 */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncmp(fn, names[i], n) == 0)
			return true;
	return false;
}

/* The groups of T's frames (innermost first): group g is
 * frames[start[g] .. start[g + 1]). */
static size_t group_frames(struct py_ctx *c, const struct ptrvec *frames, size_t **start)
{
	size_t n = 0;
	*start = arena_alloc(c->a, (frames->n + 1) * sizeof(**start));
	if (!*start)
		return 0;
	size_t from = 0;
	for (size_t i = 0; i < frames->n; i++) {
		const struct model_frame *f = frames->items[i];
		if (f->kind == FRAME_PYTHON && f->eval_entry) {
			(*start)[n++] = from;
			from = i + 1;
		}
	}
	if (from < frames->n)
		(*start)[n++] = from; /* frames no eval loop call is known to have run */
	(*start)[n] = frames->n;
	return n;
}

/* The eval loop frame, after AFTER (or from the first when AFTER is
 * SIZE_MAX), whose stack range holds ADDR; SIZE_MAX when none does. */
static size_t eval_holding(const struct unwind_into *u, size_t after, uint64_t addr)
{
	for (size_t k = after == SIZE_MAX ? 0 : after + 1; k < u->n; k++) {
		if (!u->v[k].eval || !u->v[k].sp)
			continue;
		uint64_t hi = k + 1 < u->n && u->v[k + 1].sp ? u->v[k + 1].sp : 0;
		if (addr >= u->v[k].sp && hi && addr < hi)
			return k;
	}
	return SIZE_MAX;
}

/* Place groups on eval loop frames: at[g] is the native frame index of
 * group g, SIZE_MAX from the first group that cannot be placed on.
 * Returns how many groups were placed, and *WHY why the rest were not. */
static size_t place_groups(struct py_ctx *c, const struct unwind_into *u, const struct ptrvec *frames,
			   const size_t *start, size_t ngroups, bool shared, size_t *at, const char **why)
{
	size_t nevals = 0, placed = 0;
	for (size_t k = 0; k < u->n; k++)
		nevals += u->v[k].eval;
	for (size_t g = 0; g < ngroups; g++)
		at[g] = SIZE_MAX;
	if (ngroups == 0)
		return 0; /* (no layout is known when the dump lacks the state) */
	if (c->L->minor >= 12) {
		size_t prev = SIZE_MAX;
		for (; placed < ngroups; placed++) {
			const struct model_frame *last = frames->items[start[placed + 1] - 1];
			size_t k = last->entry_frame ? eval_holding(u, prev, last->entry_frame) : SIZE_MAX;
			if (k == SIZE_MAX) {
				*why = !last->eval_entry ? "no eval loop call is known to have run them"
				       : "no eval loop frame on the native stack holds their entry frame";
				break;
			}
			at[placed] = prev = k;
		}
		return placed;
	}
	if (shared) {
		*why = "another interpreter's thread runs on this OS thread too, and up to 3.11 eval loop "
		       "calls cannot be told apart";
		return 0;
	}
	if (nevals != ngroups) {
		*why = arena_printf(c->a, "the native stack has %zu eval loop frames for %zu eval loop calls",
				    nevals, ngroups);
		return 0;
	}
	for (size_t k = 0; k < u->n; k++)
		if (u->v[k].eval)
			at[placed++] = k;
	return placed;
}

/* On the faulting thread of a re-raised signal (fault.c): the index of
 * the signal trampoline's frame in U, SIZE_MAX when none.  The frames
 * after it are the stack at the fault: when the unwinder did not go on
 * from the trampoline to the fault's pc (no CFI for it: a trampoline in a
 * vdso the dump does not name a file for), they are unwound again from
 * the registers the signal frame saved. */
static size_t fault_trampoline(struct py_ctx *c, struct symbols *s, struct model_thread *t,
			       struct unwind_into *u, struct dump_module *interp_module)
{
	const struct model_fault *f = c->r->fault;
	if (!f || f->tid != t->tid)
		return SIZE_MAX;
	size_t k = 0;
	while (k < u->n && !(u->v[k].sp == f->sp_frame && py_sigreturn_at(c, u->v[k].f->function, u->v[k].f->address, u->v[k].f->sigreturn)))
		k++;
	if (k == u->n)
		return SIZE_MAX;
	if (k + 1 < u->n && u->v[k + 1].f->address == f->pc)
		return k;
	u->n = k + 1;
	const char *why = NULL;
	struct platform_regs regs;
	struct symbols_quiet q;
	struct dump_signal sig;
	/* (the saved registers; its siginfo may be unwritten, fault.c) */
	if (dump_signal_frame(c->d, f->sp_frame, &sig, &regs) != PC_OK ||
	    symbols_native_stack_at(s, t->tid, &regs, quiet_rule(c, &q, interp_module, true), collect_frame, u,
				    &why) < 0)
		model_warn(c->r, "thread %lld: the stack at the fault cannot be unwound from its signal frame: %s",
			   (long long)t->tid, why ? why : "not captured");
	return k;
}

/* A stack that ends in a module whose file was deleted after the process
 * mapped it ("/usr/bin/python3.11 (deleted)", as the kernel names it) and
 * for which no file was read (a frame names the file read, else the
 * dump's path): unwinding needs that file's CFI, so say why it stops. */
static void stops_at_deleted(struct py_ctx *c, const struct model_thread *t, const struct unwind_into *u)
{
	static const char deleted[] = " (deleted)";
	const char *file = u->n ? u->v[u->n - 1].f->file : NULL;
	size_t n = file ? strlen(file) : 0, k = sizeof(deleted) - 1;
	if (n > k && strcmp(file + n - k, deleted) == 0)
		model_warn(c->r, "thread %lld: the native stack stops in %s: its file was deleted after the "
			   "process mapped it, and no file with its build-id was found to unwind through "
			   "(--executable, --search-path or --sysroot can name one)", (long long)t->tid, file);
}

/* T's frames: the native frames [LO, HI) of U with T's groups woven in
 * where they were placed (AT), the groups left after them. */
static void weave(struct py_ctx *c, struct model_thread *t, const struct unwind_into *u, size_t lo, size_t hi,
		  const size_t *start, size_t ngroups, const size_t *at, size_t placed, const char *unplaced,
		  const char *why, int n, size_t tramp)
{
	struct ptrvec out = { 0 };
	size_t g = 0, from = tramp != SIZE_MAX ? tramp + 1 : 0, top = first_eval(u, from);
	for (size_t k = lo; k < hi; k++) {
		if (tramp != SIZE_MAX && k == tramp + 1)
			t->fault_frame = out.n + 1;
		/* the crash in the eval loop itself (its pc is the crashed
		 * thread's, at the fault): that frame is the crash site, shown
		 * inside its Python frames, not merged into them */
		bool here = t->crashed && u->v[k].eval && from < u->n && u->v[k].f->address == u->v[from].f->address;
		if (here)
			ptrvec_push(c->a, &out, u->v[k].f);
		if (g < placed && at[g] == k) {
			for (size_t i = start[g]; i < start[g + 1]; i++)
				ptrvec_push(c->a, &out, t->frames.items[i]);
			g++;
		}
		if (!t->gc_native && u->v[k].f->interpreter && !u->v[k].f->inlined && is_gc_function(u->v[k].f->function))
			t->gc_native = out.n + 1;
		if (!here && shown(c, u, k, top))
			ptrvec_push(c->a, &out, u->v[k].f);
	}
	if (placed < ngroups) {
		size_t left = t->frames.n - start[placed];
		if (why)
			unplaced = why; /* the unwinder stopped early: that says more */
		model_warn(c->r, "thread %lld: %zu Python frames placed after the native stack: %s",
			   (long long)t->tid, left, unplaced ? unplaced : "they could not be placed");
		for (size_t i = start[placed]; i < t->frames.n; i++)
			ptrvec_push(c->a, &out, t->frames.items[i]);
	} else if (why && n < 2) {
		model_warn(c->r, "thread %lld: native stack incomplete: %s", (long long)t->tid, why);
	}
	t->frames = out;
}

/* A thread switching greenlets (python/walk/greenlet.c): each runs on its
 * own slice of the OS thread's C stack, from its stack_start (where it
 * was switched out) up to its stack_stop (set when it started, below the
 * frames of the greenlet that started it: greenlet's StackState,
 * greenlet_greenlet.hpp 2.0, TGreenlet.hpp 3.x); the part of a suspended
 * one's slice that another greenlet needed was copied to the heap
 * (stack_copy, stack_saved bytes).  The thread's registers unwind the
 * running greenlet's slice; above its stack_stop, the frames the unwinder
 * finds by going on are not the ones there now when the greenlet that
 * started it has run since (its frames where the return addresses were).
 * So the stack above a slice is the next suspended greenlet's: the one
 * whose part still in place, [stack_start + stack_saved, stack_stop),
 * begins lowest at or above that stack_stop, unwound from its own
 * stack_start (its copy put back in place for it), by a scan for its
 * first return address, up to its own stack_stop; and so on up to the
 * main greenlet's, which holds the rest of the stack.  Each such frame is
 * marked with its greenlet. */
static const struct model_greenlet *running_greenlet(const struct model_thread *t)
{
	for (size_t i = 0; i < t->greenlets.n; i++) {
		const struct model_greenlet *g = t->greenlets.items[i];
		if (!g->main && strcmp(g->state, "running") == 0 && g->stack_stop && g->stack_stop != UINT64_MAX)
			return g;
	}
	return NULL;
}

/* The suspended greenlet of T whose slice lies next above STOP, or NULL. */
static const struct model_greenlet *next_above(const struct model_thread *t, uint64_t stop)
{
	const struct model_greenlet *best = NULL;
	uint64_t best_lo = 0;
	for (size_t i = 0; i < t->greenlets.n; i++) {
		const struct model_greenlet *g = t->greenlets.items[i];
		uint64_t lo = g->stack_start + g->stack_saved;
		if (strcmp(g->state, "suspended") != 0 || !g->stack_start || lo < g->stack_start || lo < stop ||
		    lo >= g->stack_stop)
			continue;
		if (!best || lo < best_lo)
			best = g, best_lo = lo;
	}
	return best;
}

/* G's frames, from its stack_start up to its stack_stop, appended to U
 * (with MARK, each marked with G); false when none could be unwound. */
static bool unwind_greenlet(struct py_ctx *c, struct symbols *s, const struct model_thread *t,
			    const struct model_greenlet *g, struct unwind_into *u, bool mark)
{
	uint64_t saved = g->stack_saved;
	void *copy = NULL, *old = NULL;
	if (saved && (saved > MAX_GREENLET_COPY || !g->stack_copy || !(copy = malloc(saved)) || !(old = malloc(saved)) ||
		      dump_read(c->d, g->stack_copy, copy, saved) != PC_OK ||
		      dump_patch(c->d, g->stack_start, copy, saved, old) != PC_OK)) {
		free(copy);
		free(old);
		return false;
	}
	size_t from = u->n;
	const char *why = NULL;
	struct symbols_quiet q;
	int n = symbols_native_stack_scan(s, t->tid, g->stack_start, quiet_rule(c, &q, u->interp_module, false),
					  collect_frame, u, &why);
	if (saved)
		dump_patch(c->d, g->stack_start, old, saved, copy);
	free(copy);
	free(old);
	size_t k = from;
	while (n >= 0 && k < u->n && !(u->v[k].sp && u->v[k].sp >= g->stack_stop))
		u->v[k++].f->greenlet = mark ? g->address : 0;
	u->n = k;
	return k > from;
}

/* U cut at the top of T's running greenlet's slice, the slices of the
 * suspended greenlets above it appended; how many of U's frames are the
 * running greenlet's (all of them on a thread without greenlets, or
 * running its main greenlet, whose slice is the whole stack). */
static size_t greenlet_slice(struct py_ctx *c, struct symbols *s, const struct model_thread *t,
			     struct unwind_into *u)
{
	const struct model_greenlet *g = running_greenlet(t);
	if (!g)
		return u->n;
	size_t mine = 0;
	while (mine < u->n && !(u->v[mine].sp && u->v[mine].sp >= g->stack_stop))
		mine++;
	u->n = mine;
	for (int i = 0; i < MAX_GREENLET_DEPTH && g->stack_stop != UINT64_MAX; i++) {
		const struct model_greenlet *up = next_above(t, g->stack_stop);
		if (!up || !unwind_greenlet(c, s, t, up, u, true)) {
			model_warn(c->r, "thread %lld: the native stack above greenlet 0x%llx's slice is not known: %s",
				   (long long)t->tid, (unsigned long long)g->address,
				   up ? "the greenlet there cannot be unwound from its saved stack pointer"
				   : "no suspended greenlet's slice lies there");
			break;
		}
		g = up;
	}
	return mine;
}

/* From 3.12 a suspended greenlet's frames lead to no entry frame: while
 * it is switched out, greenlet 3 links each of its frames past the entry
 * frames of the C stack (Greenlet::expose_frames in TGreenlet.cpp, undone
 * by PythonState::unexpose_frames on the way back in), so its frames make
 * one group that no address places.  Its last group is the one the
 * outermost eval loop call of the greenlet's own stack runs: placed there
 * (1) when that is the only eval loop frame after the group before it;
 * with more, which runs which cannot be told (0). */
static size_t outermost_group(const struct unwind_into *u, const struct ptrvec *frames, const size_t *start,
			      size_t ngroups, size_t placed, size_t *at)
{
	const struct model_frame *last = frames->items[start[ngroups] - 1];
	if (last->eval_entry || u->c->L->minor < 12)
		return 0;
	size_t k = placed ? at[placed - 1] + 1 : 0, found = SIZE_MAX, n = 0;
	for (; k < u->n; k++)
		if (u->v[k].eval)
			found = k, n++;
	if (n != 1)
		return 0;
	at[placed] = found;
	return 1;
}

/* Each suspended greenlet's own stack (--native): its native frames, from
 * its stack_start up to its stack_stop, with its Python frames woven in
 * where its eval loop calls ran them; left as its Python frames, with a
 * warning, where they cannot all be placed. */
static void greenlet_stacks(struct py_ctx *c, struct symbols *s, struct model_thread *t,
			    struct dump_module *interp_module)
{
	size_t done = 0;
	for (size_t i = 0; i < t->greenlets.n && !py_out_of_time(c); i++) {
		struct model_greenlet *g = t->greenlets.items[i];
		if (strcmp(g->state, "suspended") != 0 || !g->stack_start)
			continue;
		if (done++ == MAX_GREENLET_STACKS) {
			model_warn(c->r, "thread %lld: the native stacks of its greenlets after the first %u are not "
				   "shown", (long long)t->tid, MAX_GREENLET_STACKS);
			break;
		}
		struct unwind_into u = { .c = c, .interp_module = interp_module };
		size_t *start, ngroups = group_frames(c, &g->stack, &start);
		size_t *at = arena_alloc(c->a, (ngroups + 1) * sizeof(*at));
		const char *why = NULL;
		if (!at)
			return;
		size_t placed = 0;
		if (!unwind_greenlet(c, s, t, g, &u, false))
			why = "it cannot be unwound from its saved stack pointer";
		else if ((placed = place_groups(c, &u, &g->stack, start, ngroups, false, at, &why)) + 1 == ngroups)
			placed += outermost_group(&u, &g->stack, start, ngroups, placed, at);
		if (placed == ngroups)
			why = NULL;
		else if (c->L->minor >= 12 && why && placed + 1 == ngroups)
			why = "greenlet links its Python frames past their eval loop calls' entry frames while it is "
			      "switched out, and its stack has more than one eval loop call they may have run in";
		else if (!why)
			why = "its Python frames could not be placed";
		if (why) {
			model_warn(c->r, "thread %lld: greenlet 0x%llx: its native stack is not shown: %s",
				   (long long)t->tid, (unsigned long long)g->address, why);
			continue;
		}
		struct ptrvec out = { 0 };
		size_t k = 0, top = first_eval(&u, 0);
		for (size_t j = 0; j < u.n; j++) {
			if (k < ngroups && at[k] == j) {
				for (size_t f = start[k]; f < start[k + 1]; f++)
					ptrvec_push(c->a, &out, g->stack.items[f]);
				k++;
			}
			if (shown(c, &u, j, top))
				ptrvec_push(c->a, &out, u.v[j].f);
		}
		g->stack = out;
	}
}

bool py_native_linked_in(struct py_ctx *c, const struct dump_module *interp_module)
{
	uint64_t entry = c->d->auxv_entry;
	if (!interp_module || !dump_libc_linked_in(c->d) ||
	    (entry && (entry < interp_module->start || entry >= interp_module->end)))
		return false;
	if (c->opt->native < 2 && !c->keep_internal)
		model_warn(c->r, "%s holds its C library (a static executable): --native keeps its frames, "
			   "the interpreter's own among them, as --native-all does", interp_module->path);
	return true;
}

/* T's native stack into U; the frame count, or -1 (warned). */
static int unwind(struct py_ctx *c, struct symbols *s, const struct model_thread *t,
		  struct dump_module *interp_module, struct unwind_into *u, const char **why)
{
	*u = (struct unwind_into){ .c = c, .interp_module = interp_module };
	*why = NULL;
	struct symbols_quiet q;
	int n = symbols_native_stack(s, t->tid, quiet_rule(c, &q, interp_module, t->crashed), collect_frame, u,
				     why);
	if (n < 0)
		model_warn(c->r, "thread %lld: no native stack: %s", (long long)t->tid, *why ? *why : "?");
	return n;
}

void py_weave_native(struct py_ctx *c, struct symbols *s, struct model_thread *t,
		     struct dump_module *interp_module, bool shared)
{
	if (t->tid < 0) {
		py_thread_error(c, t, model_err(PC_ENOTCAPTURED), "no OS thread for this Python thread: no native stack");
		return;
	}
	struct unwind_into u;
	const char *why;
	int n = unwind(c, s, t, interp_module, &u, &why);
	if (n < 0)
		return;
	size_t tramp = fault_trampoline(c, s, t, &u, interp_module);
	size_t *start, ngroups = group_frames(c, &t->frames, &start);
	size_t *at = arena_alloc(c->a, (ngroups + 1) * sizeof(*at));
	if (!at)
		return;
	const char *unplaced = NULL;
	/* the thread's Python frames are its running greenlet's: they are
	 * placed on the frames of that greenlet's slice of the stack only */
	struct unwind_into mine = u;
	mine.n = greenlet_slice(c, s, t, &u);
	size_t placed = place_groups(c, &mine, &t->frames, start, ngroups, shared, at, &unplaced);
	weave(c, t, &u, 0, u.n, start, ngroups, at, placed, unplaced, why, n, tramp);
	stops_at_deleted(c, t, &u);
	greenlet_stacks(c, s, t, interp_module);
}

/* One thread state's part of a shared OS thread's stack. */
struct share {
	struct model_thread *t;
	size_t *start, ngroups, *at, placed;
	const char *unplaced;
};

static int by_innermost(const void *a, const void *b)
{
	const struct share *x = a, *y = b;
	size_t i = x->placed ? x->at[0] : SIZE_MAX, j = y->placed ? y->at[0] : SIZE_MAX;
	return i < j ? -1 : i > j;
}

void py_weave_native_shared(struct py_ctx *c, struct symbols *s, struct model_thread **ts, size_t nts,
			    struct dump_module *interp_module)
{
	struct unwind_into u;
	const char *why;
	int n = unwind(c, s, ts[0], interp_module, &u, &why);
	if (n < 0)
		return;
	size_t tramp = fault_trampoline(c, s, ts[0], &u, interp_module);
	struct share *sh = arena_alloc(c->a, nts * sizeof(*sh));
	if (!sh)
		return;
	for (size_t i = 0; i < nts; i++) {
		struct share *x = &sh[i];
		x->t = ts[i];
		x->ngroups = group_frames(c, &x->t->frames, &x->start);
		if (!(x->at = arena_alloc(c->a, (x->ngroups + 1) * sizeof(*x->at))))
			return;
		x->placed = place_groups(c, &u, &x->t->frames, x->start, x->ngroups, true, x->at, &x->unplaced);
	}
	/* callees' slices first: the interpreter run innermost holds the top
	 * of the stack down to its outermost eval loop frame, the one that
	 * ran it the frames below that, down to its own, and the outermost
	 * one the rest */
	qsort(sh, nts, sizeof(*sh), by_innermost);
	size_t nplaced = 0;
	bool nested = true;
	for (; nplaced < nts && sh[nplaced].placed; nplaced++)
		if (nplaced && sh[nplaced].at[0] <= sh[nplaced - 1].at[sh[nplaced - 1].placed - 1])
			nested = false;
	if (!nested) {
		model_warn(c->r, "OS thread %lld: its interpreters' eval loop calls interleave on its stack: "
			   "each is shown with the whole native stack", (long long)ts[0]->tid);
		nplaced = 0;
	}
	size_t lo = 0;
	for (size_t i = 0; i < nts; i++) {
		struct share *x = &sh[i];
		if (i >= nplaced) {
			/* nothing of it placed: none of the stack when it has no
			 * Python frame and the others have their slices, else
			 * the whole stack (its frames after it, said) */
			size_t h = nplaced && !x->ngroups ? 0 : u.n;
			weave(c, x->t, &u, 0, h, x->start, x->ngroups, x->at, x->placed, x->unplaced, why, n, tramp);
			continue;
		}
		size_t hi = i + 1 == nplaced ? u.n : x->at[x->placed - 1] + 1;
		weave(c, x->t, &u, lo, hi, x->start, x->ngroups, x->at, x->placed, x->unplaced,
		      i + 1 == nplaced ? why : NULL, n, tramp);
		lo = hi;
	}
}

void py_native_threads(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct model_report *r = c->r;
	for (size_t i = 0; i < c->d->nthreads && !py_out_of_time(c); i++) {
		int64_t tid = c->d->threads[i].tid;
		bool python = false;
		for (size_t k = 0; k < r->interps.n && !python; k++) {
			const struct model_interp *mi = r->interps.items[k];
			for (size_t j = 0; j < mi->threads.n && !python; j++)
				python = ((const struct model_thread *)mi->threads.items[j])->tid == tid;
		}
		if (python)
			continue;
		struct model_thread *t = arena_alloc(c->a, sizeof(*t));
		if (!t || ptrvec_push(c->a, &r->native_threads, t) != 0)
			return;
		t->tid = tid;
		t->crashed = tid == py_crash_tid(c);
		py_weave_native(c, s, t, interp_module, false);
	}
}
