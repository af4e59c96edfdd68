/* Interpreters and their threads: the runtime's interpreter list, each
 * interpreter's thread states, who holds the GIL, whether a collection
 * runs; each thread's frames are frames.c's. */
#include "util/addrtab.h"
#include "python/walk/walk.h"

#include <string.h>

struct gil {
	bool known;
	bool disabled;       /* a free-threaded build running without it */
	bool locked;
	uint64_t holder;     /* the PyThreadState holding it */
};

/* 3.12+: the shim frame an eval loop call begins with lives on the C stack
 * of the OS thread running it (frames.c).  A thread state whose frames run
 * on another thread's stack (CPython may leave on a subinterpreter's thread
 * state the id of the thread that created it) is that thread's. */
static void check_tid(struct py_ctx *c, const struct model_interp *mi, struct model_thread *t)
{
	for (size_t i = 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (!f->entry_frame)
			continue;
		int64_t tid = dump_tid_of_stack_address(c->d, f->entry_frame);
		if (tid >= 0 && tid != t->tid) {
			model_warn(c->r, "a thread state of interpreter %lld names OS thread %lld, but its "
				   "frames run on the stack of thread %lld: reported as thread %lld",
				   (long long)mi->id, (long long)t->tid, (long long)tid, (long long)tid);
			t->tid = tid;
			t->crashed = tid == py_crash_tid(c);
		}
		return;
	}
}

/* Whether every thread of the dump has its thread pointer. */
static bool thread_pointers(const struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (!d->threads[i].regs.tp)
			return false;
	return d->nthreads > 0;
}

static bool tid_in_dump(const struct dump *d, int64_t tid)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].tid == tid)
			return true;
	return false;
}

/* Thread states fork() left: the parent's threads are gone from the
 * child, their thread states not (a C-level fork, or a server's that
 * does not tell the interpreter).  One whose ident no thread pointer
 * gives is stale already (walk_thread).  A new thread of the child may
 * get a dead one's stack and struct pthread back from glibc's cache, and
 * so its ident: of two thread states of one OS thread, the one whose
 * recorded tid is that thread's is its own, the other stale.  (The
 * thread that forked keeps its thread state, with the parent's tid.)
 * The stale ones go to MI's stale_threads, kept apart, and a warning
 * says so.
 *
 * A thread not started yet is kept apart too: up to 3.11 a new thread's
 * state is made by its creator with the creator's ident and native id
 * (init_threadstate in CPython's Python/pystate.c calls
 * PyThread_get_thread_ident()), which the new thread replaces with its
 * own once it runs (t_bootstrap, Modules/_threadmodule.c).  A read in
 * between sees two thread states of one OS thread, the new one without a
 * frame: it is no second thread of its creator's. */
static bool set_stale_apart(struct py_ctx *c, struct model_interp *mi)
{
	size_t unstarted = 0;
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (t->stale || t->tid < 0 || t->frames.n || t->holds_gil)
			continue;
		for (size_t k = 0; k < mi->threads.n && !t->stale; k++) {
			const struct model_thread *o = mi->threads.items[k];
			t->stale = o != t && !o->stale && o->tid == t->tid && o->ident == t->ident && o->frames.n;
		}
		unstarted += t->stale;
	}
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (t->stale || t->tid < 0 || t->recorded_tid < 0 || t->recorded_tid == t->tid)
			continue;
		for (size_t k = 0; k < mi->threads.n && !t->stale; k++) {
			const struct model_thread *o = mi->threads.items[k];
			t->stale = o != t && !o->stale && o->tid == t->tid && o->recorded_tid == o->tid;
		}
	}
	struct ptrvec live = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (!t->stale) {
			ptrvec_push(c->a, &live, t);
			continue;
		}
		t->tid = t->recorded_tid;
		t->crashed = t->holds_gil = false;
		ptrvec_push(c->a, &mi->stale_threads, t);
		n++;
	}
	if (!n)
		return false;
	mi->threads = live;
	if (unstarted)
		model_warn(c->r, "interpreter %lld: %zu thread state%s of a thread not started yet (holding its "
			   "creator's ident until it runs), kept apart", (long long)mi->id, unstarted,
			   unstarted == 1 ? "" : "s");
	n -= unstarted;
	if (!n)
		return true;
	/* a kernel's core and a live process list every thread; a minidump's
	 * writer may have missed one (lldb did, attached to a loaded process) */
	if (c->d->format && strcmp(c->d->format, "minidump") == 0)
		model_warn(c->r, "interpreter %lld: %zu thread state%s of no thread in this minidump (left by "
			   "fork, or a thread its writer did not capture), kept apart", (long long)mi->id, n,
			   n == 1 ? "" : "s");
	else
		model_warn(c->r, "interpreter %lld: %zu thread state%s of no thread of this process (left by "
			   "fork: threads of the parent), kept apart", (long long)mi->id, n, n == 1 ? "" : "s");
	return true;
}

static void walk_thread(struct py_ctx *c, struct model_interp *mi, uint64_t ts, const struct gil *gil)
{
	const struct py_layout *L = c->L;
	struct model_thread *t = arena_alloc(c->a, sizeof(*t));
	if (!t || ptrvec_push(c->a, &mi->threads, t) != 0)
		return;
	t->tid = -1;
	uint64_t ident = 0;
	if (py_rd_ptr(c, ts + L->tstate_thread_id, &ident) != 0) {
		py_thread_error(c, t, model_err_at(PC_ENOTCAPTURED, ts), arena_printf(c->a, "thread state at 0x%llx not captured",
						   (unsigned long long)ts));
		return;
	}
	t->ident = ident;
	t->recorded_tid = -1;
	if (L->tstate_native_thread_id >= 0) {
		int64_t tid;
		if (dump_read(c->d, ts + L->tstate_native_thread_id, &tid, 8) == PC_OK && tid > 0)
			t->recorded_tid = tid;
	}
	/* the OS thread is the one the ident proves (its thread pointer is
	 * the pthread_t); the recorded tid alone is believed only where the
	 * dump cannot prove (no thread pointers), and only when it is one of
	 * the dump's threads */
	t->tid = dump_tid_of_pthread(c->d, ident);
	if (t->tid < 0 && t->recorded_tid >= 0) {
		if (!thread_pointers(c->d) && tid_in_dump(c->d, t->recorded_tid))
			t->tid = t->recorded_tid;
		else
			t->stale = true;
	} else if (t->tid < 0 && ident && thread_pointers(c->d)) {
		t->stale = true;
	}
	t->crashed = !t->stale && t->tid >= 0 && t->tid == py_crash_tid(c);
	t->holds_gil = gil->known && gil->locked && gil->holder == ts;

	uint64_t frame = 0, cframe = 0, at;
	enum pc_code rc;
	if (L->tstate_frame >= 0) {
		rc = py_rd_ptr(c, at = ts + L->tstate_frame, &frame);
	} else if (L->tstate_current_frame >= 0) {
		rc = py_rd_ptr(c, at = ts + L->tstate_current_frame, &frame);
	} else {
		rc = py_rd_ptr(c, at = ts + L->tstate_cframe, &cframe);
		if (rc == PC_OK && cframe)
			rc = py_rd_ptr(c, at = cframe + L->cframe_current_frame, &frame);
	}
	if (rc != PC_OK) {
		/* 3.11 and 3.12 keep the pointer in a _PyCFrame on the C stack,
		 * where a truncated core ends first; its frames are still
		 * on the thread's data stack */
		py_recover_thread(c, t, ts, model_err_at(PC_ENOTCAPTURED, at), arena_printf(c->a, "current frame not captured (its pointer, at 0x%llx, "
							 "is not in the dump)", (unsigned long long)at));
		return;
	}
	py_walk_frames(c, t, ts, frame, cframe);
	check_tid(c, mi, t);
	py_thread_exception(c, ts, t);
}

static void read_gil(struct py_ctx *c, uint64_t runtime, uint64_t interp, uint64_t tstate_current,
		     struct gil *g)
{
	const struct py_layout *L = c->L;
	memset(g, 0, sizeof(*g));
	uint64_t gil = 0;
	if (L->minor == 6) {
		/* 3.6: _PyThreadState_Current is the thread holding the GIL */
		g->known = tstate_current != 0 && py_rd_ptr(c, tstate_current, &g->holder) == 0;
		g->locked = g->holder != 0;
		return;
	}
	if (L->interp_ceval_gil >= 0) {
		if (py_rd_ptr(c, interp + L->interp_ceval_gil, &gil) != 0 || gil == 0)
			return;
	} else if (L->runtime_ceval_gil >= 0) {
		gil = runtime + (uint64_t)L->runtime_ceval_gil;
	} else {
		return;
	}
	if (L->gil_enabled >= 0) {
		/* free-threaded: a GIL exists, and is used only while enabled
		 * (an extension that needs it turns it on) */
		int32_t enabled;
		if (py_rd_i32(c, gil + L->gil_enabled, &enabled) != 0)
			return;
		if (enabled == 0) {
			g->known = g->disabled = true;
			return;
		}
	}
	int32_t locked;
	if (py_rd_i32(c, gil + L->gil_locked, &locked) != 0 ||
	    py_rd_ptr(c, gil + L->gil_last_holder, &g->holder) != 0)
		return;
	g->locked = locked != 0;
	g->known = true;
}

/* The <GC> marker, into T's frames at index AT (0: on top). */
static void insert_gc(struct py_ctx *c, struct model_thread *t, size_t at)
{
	struct model_frame *f = arena_alloc(c->a, sizeof(*f));
	if (!f)
		return;
	f->kind = FRAME_GC;
	f->function = "<GC>";
	struct ptrvec v = { 0 };
	for (size_t k = 0; k <= t->frames.n; k++) {
		if (k == at)
			ptrvec_push(c->a, &v, f);
		if (k < t->frames.n)
			ptrvec_push(c->a, &v, t->frames.items[k]);
	}
	t->frames = v;
}

/* A collection runs holding the GIL: CPython up to 3.13 records no frame
 * for it, so the <GC> marker goes on top of the thread holding the GIL
 * (CPython's own unwinder does the same from 3.14 on, at gc.frame).  When
 * no thread holds it (a finalizer released it, or a free-threaded build
 * runs without one), the native stacks tell, with --native: the thread
 * whose stack runs the collector (native.c notes where); else a warning
 * says which thread is not known. */
static void mark_gc(struct py_ctx *c, struct model_interp *mi, bool after_native)
{
	if (mi->gc_collecting != 1)
		return;
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (!after_native && t->holds_gil) {
			insert_gc(c, t, 0);
			return;
		}
		for (size_t k = 0; k < t->frames.n; k++)
			if (((struct model_frame *)t->frames.items[k])->kind == FRAME_GC)
				return; /* placed already */
	}
	if (c->opt->native && !after_native)
		return; /* the native stacks may tell: py_gc_after_native */
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (t->gc_native) {
			insert_gc(c, t, t->gc_native - 1);
			return;
		}
	}
	if (mi->gil_enabled == 0)
		model_warn(c->r, "interpreter %lld was collecting garbage; its GIL is disabled (a "
			   "free-threaded build): which thread collects is not known%s", (long long)mi->id,
			   c->opt->native ? " (no native stack runs the collector)" : "");
	else
		model_warn(c->r, "interpreter %lld was collecting garbage, in a thread that had released "
			   "the GIL (a finalizer): which thread is not known%s", (long long)mi->id,
			   c->opt->native ? " (no native stack runs the collector)" : "");
}

void py_gc_after_native(struct py_ctx *c)
{
	for (size_t i = 0; i < c->r->interps.n; i++)
		mark_gc(c, c->r->interps.items[i], true);
}

void py_walk_interpreters(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t tstate_current)
{
	const struct py_layout *L = c->L;
	struct addrtab seen_interps = ADDRTAB_INIT(uint64_t), seen_threads = ADDRTAB_INIT(uint64_t);
	uint64_t interp = head;
	for (int n = 0; interp; n++) {
		if (n >= PY_MAX_INTERPRETERS || addrtab_add(&seen_interps, interp) != 0) {
			model_warn(c->r, "interpreter list is corrupt (loops or exceeds %d entries)",
				   PY_MAX_INTERPRETERS);
			c->r->incomplete = true;
			break;
		}
		struct model_interp *mi = arena_alloc(c->a, sizeof(*mi));
		if (!mi || ptrvec_push(c->a, &c->r->interps, mi) != 0)
			break;
		mi->id = n;
		if (L->interp_id >= 0) {
			int64_t id;
			if (dump_read(c->d, interp + L->interp_id, &id, 8) == PC_OK)
				mi->id = id;
		}
		c->interp = interp;
		struct gil gil;
		read_gil(c, runtime, interp, tstate_current, &gil);
		mi->gil_enabled = gil.known ? !gil.disabled : -1;
		int32_t collecting;
		mi->gc_collecting = -1;
		if (L->interp_gc_collecting >= 0 &&
		    dump_read(c->d, interp + L->interp_gc_collecting, &collecting, 4) == PC_OK)
			mi->gc_collecting = collecting != 0;
		else if (L->runtime_gc_collecting >= 0 && runtime &&
			 dump_read(c->d, runtime + L->runtime_gc_collecting, &collecting, 4) == PC_OK)
			mi->gc_collecting = collecting != 0;
		uint64_t ts = 0;
		bool incomplete_before = c->r->incomplete, list_broken = false;
		if (py_rd_ptr(c, interp + L->interp_tstate_head, &ts) != 0) {
			model_warn(c->r, "interpreter %lld: thread list not captured (the interpreter state at "
				   "0x%llx is not in the dump)", (long long)mi->id, (unsigned long long)interp);
			c->r->incomplete = list_broken = true;
		}
		for (int k = 0; ts; k++) {
			if (k >= PY_MAX_THREADS || addrtab_add(&seen_threads, ts) != 0) {
				model_warn(c->r, "interpreter %lld: thread list is corrupt (loops or exceeds %d entries)",
					   (long long)mi->id, PY_MAX_THREADS);
				c->r->incomplete = list_broken = true;
				break;
			}
			if (py_out_of_time(c))
				break;
			/* (what a stale thread state lacks leaves the report whole) */
			bool before = c->r->incomplete;
			c->r->incomplete = false;
			walk_thread(c, mi, ts, &gil);
			if (mi->threads.n && c->r->incomplete)
				((struct model_thread *)mi->threads.items[mi->threads.n - 1])->walk_incomplete = true;
			c->r->incomplete |= before;
			if (py_rd_ptr(c, ts + L->tstate_next, &ts) != 0) {
				model_warn(c->r, "interpreter %lld: thread list breaks after %d threads (the link after "
					   "the thread state at 0x%llx is not captured)", (long long)mi->id, k + 1,
					   (unsigned long long)ts);
				c->r->incomplete = list_broken = true;
				break;
			}
		}
		if (set_stale_apart(c, mi) && !incomplete_before) {
			bool inc = false;
			for (size_t k = 0; k < mi->threads.n; k++)
				inc |= ((struct model_thread *)mi->threads.items[k])->walk_incomplete;
			c->r->incomplete = inc || list_broken;
		}
		py_thread_names(c, interp, mi);
		py_thread_syscalls(c, mi);
		py_lock_waits(c, mi);
		mark_gc(c, mi, false);
		if (!py_out_of_time(c))
			py_asyncio(c, interp, mi);
		if (!py_out_of_time(c))
			py_greenlets(c, interp, mi);
		if (py_rd_ptr(c, interp + L->interp_next, &interp) != 0) {
			model_warn(c->r, "interpreter list breaks after %d interpreters", n + 1);
			c->r->incomplete = true;
			break;
		}
	}
	addrtab_free(&seen_interps);
	addrtab_free(&seen_threads);
}
