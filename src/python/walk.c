/* Finding the CPython runtime and walking interpreters, threads and frames.
 *
 * Facts used here, by version (from CPython's own headers of each version,
 * Include/internal/pycore_frame.h and pycore_runtime.h among them):
 * - up to 3.10 a thread's stack is a chain of PyFrameObject through f_back;
 *   f_lasti counts bytes up to 3.9 and code units in 3.10;
 * - from 3.11 it is a chain of _PyInterpreterFrame through `previous`, reached
 *   through tstate->cframe->current_frame (3.11, 3.12) or
 *   tstate->current_frame (3.13+); the shim frame each eval loop call
 *   pushes first (owner FRAME_OWNED_BY_CSTACK, 3, in 3.12 and 3.13;
 *   FRAME_OWNED_BY_INTERPRETER, also 3, in 3.14 and 3.15, whose 3.14
 *   FRAME_OWNED_BY_CSTACK, 4, is assigned nowhere; 3.15 also ends every
 *   thread's chain with such a base frame) is never shown by
 *   sys._current_frames(), nor are "incomplete" frames whose instruction
 *   pointer has not reached _co_firsttraceable yet;
 * - the instruction pointer (prev_instr up to 3.12, instr_ptr from 3.13)
 *   points into co_code_adaptive; its code-unit index selects the location
 *   entry;
 * - from 3.14 f_executable and localsplus are _PyStackRef: tagged words
 *   (py_stackref_obj, python_int.h);
 * - 3.13+ starts _PyRuntime with _Py_DebugOffsets (cookie "xdebugpy").
 */
#include "python/python.h"
#include "python/debug_offsets.h"
#include "python/dwarf_layout.h"
#include "python/linetable.h"
#include "python/locals.h"
#include "python/threads.h"
#include "python/python_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FRAME_OWNED_BY_GENERATOR 1
#define FRAME_OWNED_BY_SHIM      3   /* CSTACK in 3.12, 3.13; INTERPRETER in 3.14, 3.15 */

/* The highest owner value a version defines. */
static unsigned max_owner(unsigned minor)
{
	return minor == 14 ? 4 : 3;
}

/* ------------------------------------------------------------------------
 * A small set of addresses, for cycle detection
 * ------------------------------------------------------------------------ */

struct addrset {
	uint64_t *slots;
	size_t n, cap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* Returns 1 if ADDR was already there, 0 if added, -1 when out of memory. */
static int addrset_add(struct addrset *s, uint64_t addr)
{
	if (s->n * 2 >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			size_t j = mix(s->slots[i]) & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = s->slots[i];
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	size_t j = mix(addr) & (s->cap - 1);
	while (s->slots[j]) {
		if (s->slots[j] == addr)
			return 1;
		j = (j + 1) & (s->cap - 1);
	}
	s->slots[j] = addr;
	s->n++;
	return 0;
}

static void addrset_clear(struct addrset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------------
 * Code objects, cached by address
 * ------------------------------------------------------------------------ */

static struct py_code *code_slot(struct py_ctx *c, uint64_t addr)
{
	if (c->ncodes * 2 >= c->codes_cap) {
		size_t cap = c->codes_cap ? c->codes_cap * 2 : 256;
		struct py_code *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < c->codes_cap; i++) {
			if (!c->codes[i].addr)
				continue;
			size_t j = mix(c->codes[i].addr) & (cap - 1);
			while (n[j].addr)
				j = (j + 1) & (cap - 1);
			n[j] = c->codes[i];
		}
		free(c->codes);
		c->codes = n;
		c->codes_cap = cap;
	}
	size_t j = mix(addr) & (c->codes_cap - 1);
	while (c->codes[j].addr && c->codes[j].addr != addr)
		j = (j + 1) & (c->codes_cap - 1);
	return &c->codes[j];
}

/* Read what the report needs of a code object.  The result stays valid until
 * the next call. */
const struct py_code *py_code_get(struct py_ctx *c, uint64_t addr)
{
	struct py_code *pc = code_slot(c, addr);
	if (!pc)
		return NULL;
	if (pc->addr == addr)
		return pc;
	memset(pc, 0, sizeof(*pc));
	pc->addr = addr;
	c->ncodes++;

	const struct py_layout *L = c->L;
	const char *why = NULL;
	uint64_t type, name, filename, qualname = 0, table;
	int32_t first = 0;
	if (py_rd_ptr(c, addr + L->object_type, &type) != 0) {
		pc->error = "code object not captured";
		return pc;
	}
	if (c->code_type && type != c->code_type) {
		pc->error = arena_printf(c->a, "object at 0x%llx is not a code object",
					 (unsigned long long)addr);
		return pc;
	}
	if (py_rd_ptr(c, addr + L->code_name, &name) != 0 ||
	    py_rd_ptr(c, addr + L->code_filename, &filename) != 0 ||
	    (L->code_qualname >= 0 && py_rd_ptr(c, addr + L->code_qualname, &qualname) != 0) ||
	    py_rd_i32(c, addr + L->code_firstlineno, &first) != 0) {
		pc->error = "code object not captured";
		return pc;
	}
	pc->firstlineno = first;
	pc->name = py_str_utf8(c, name, PY_MAX_NAME, &why);
	if (!pc->name) {
		pc->error = arena_printf(c->a, "code object's name: %s", why);
		return pc;
	}
	pc->filename = py_str_utf8(c, filename, PY_MAX_NAME, &why);
	if (!pc->filename) {
		pc->error = arena_printf(c->a, "code object's file name: %s", why);
		return pc;
	}
	if (qualname)
		pc->qualname = py_str_utf8(c, qualname, PY_MAX_NAME, &why);
	if (L->code_firsttraceable >= 0) {
		int32_t ft;
		if (py_rd_i32(c, addr + L->code_firsttraceable, &ft) == 0 && ft >= 0)
			pc->firsttraceable = ft;
	}
	int64_t tab_ofs = L->code_lnotab >= 0 ? L->code_lnotab : L->code_linetable;
	if (py_rd_ptr(c, addr + tab_ofs, &table) == 0)
		pc->table = py_bytes(c, table, PY_MAX_TABLE, &pc->table_len, &why);
	return pc;
}

/* The line a frame is at, from its code object and its position in the
 * bytecode (bytes for <=3.9, code units otherwise); 0 when unknown. */
static int code_line(const struct py_ctx *c, const struct py_code *pc, int64_t pos)
{
	if (!pc->table)
		return 0;
	int line;
	if (c->L->minor <= 9)
		line = py_line_lnotab(pc->table, pc->table_len, pc->firstlineno, (int)pos);
	else if (c->L->minor == 10)
		line = py_line_linetable310(pc->table, pc->table_len, pc->firstlineno,
					    pos < 0 ? -1 : (int)(pos * 2));
	else
		line = py_line_locations(pc->table, pc->table_len, pc->firstlineno, (int)pos);
	return line > 0 ? line : 0;
}

/* ------------------------------------------------------------------------
 * Frames
 * ------------------------------------------------------------------------ */

static struct model_frame *add_frame(struct py_ctx *c, struct model_thread *t,
				     const struct py_code *pc, int line)
{
	struct model_frame *f = arena_alloc(c->a, sizeof(*f));
	if (!f || ptrvec_push(c->a, &t->frames, f) != 0)
		return NULL;
	f->kind = FRAME_PYTHON;
	f->function = pc->name;
	f->qualname = pc->qualname;
	f->file = pc->filename;
	f->line = line;
	return f;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool py_out_of_time(struct py_ctx *c)
{
	if (!c->timed_out && c->deadline_ns && now_ns() > c->deadline_ns) {
		c->timed_out = true;
		model_warn(c->r, "the time budget (--timeout %g s) ran out: the report stops where the walk was",
			   c->opt->timeout);
		c->r->incomplete = true;
	}
	return c->timed_out;
}

static void thread_error(struct py_ctx *c, struct model_thread *t, const char *msg)
{
	if (!t->error)
		t->error = msg;
	c->r->incomplete = true;
}

/* With --locals: the frame's variables; a failure is warned about, and the
 * variables read so far are kept. */
static void frame_locals(struct py_ctx *c, struct model_thread *t, struct model_frame *f,
			 uint64_t frame, uint64_t code)
{
	if (!c->opt->locals || py_out_of_time(c))
		return;
	struct repr_limits lim = { c->opt->max_repr, c->opt->max_items, c->opt->max_depth };
	const char *why = py_frame_locals(c, f, frame, code, &lim);
	if (why) {
		model_warn(c->r, "thread %lld, frame %s: variables incomplete: %s", (long long)t->tid,
			   f->function ? f->function : "?", why);
		c->r->incomplete = true;
	}
}

/* Every frame chain's guards: the time budget, the frame cap, and a frame
 * met twice.  False when the walk must stop (the thread says why). */
static bool frame_visit(struct py_ctx *c, struct model_thread *t, struct addrset *seen, uint64_t frame)
{
	if (py_out_of_time(c)) {
		thread_error(c, t, "the time budget ran out here");
		return false;
	}
	if (t->frames.n >= PY_MAX_FRAMES) {
		thread_error(c, t, arena_printf(c->a, "stack cut at %d frames", PY_MAX_FRAMES));
		return false;
	}
	if (addrset_add(seen, frame) != 0) {
		thread_error(c, t, arena_printf(c->a, "frame chain loops back to 0x%llx",
						(unsigned long long)frame));
		return false;
	}
	return true;
}

/* Up to 3.10: PyFrameObject chains. */
static void walk_frame_objects(struct py_ctx *c, struct model_thread *t, uint64_t frame)
{
	const struct py_layout *L = c->L;
	struct addrset seen = { 0 };
	while (frame) {
		if (!frame_visit(c, t, &seen, frame))
			break;
		uint64_t code, back;
		int32_t lasti;
		if (py_rd_ptr(c, frame + L->frame_code, &code) != 0 ||
		    py_rd_ptr(c, frame + L->frame_back, &back) != 0 ||
		    py_rd_i32(c, frame + L->frame_lasti, &lasti) != 0) {
			thread_error(c, t, arena_printf(c->a, "frame at 0x%llx not captured",
							(unsigned long long)frame));
			break;
		}
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error) {
			thread_error(c, t, arena_printf(c->a, "frame at 0x%llx: %s", (unsigned long long)frame,
							pc ? pc->error : "out of memory"));
			break;
		}
		struct model_frame *f = add_frame(c, t, pc, code_line(c, pc, lasti));
		if (!f)
			break;
		f->eval_entry = true; /* up to 3.10, one eval loop call per frame */
		frame_locals(c, t, f, frame, code);
		frame = back;
	}
	addrset_clear(&seen);
}

/* Where the bytecode a frame runs starts: the code's own co_code_adaptive,
 * or, in 3.14+ free-threaded builds, the thread's copy of it that
 * tlbc_index selects in co_tlbc->entries[] (entry 0 is co_code_adaptive
 * itself; Include/cpython/code.h, _PyCodeArray). */
static uint64_t bytecode_start(struct py_ctx *c, uint64_t frame, uint64_t code)
{
	const struct py_layout *L = c->L;
	uint64_t own = code + (uint64_t)L->code_code_adaptive;
	int32_t index;
	uint64_t tlbc, copy;
	int64_t size;
	if (L->iframe_tlbc_index < 0 || L->code_tlbc < 0 ||
	    py_rd_i32(c, frame + L->iframe_tlbc_index, &index) != 0 || index <= 0 ||
	    py_rd_ptr(c, code + L->code_tlbc, &tlbc) != 0 || !tlbc ||
	    py_rd_i64(c, tlbc, &size) != 0 || index >= size ||
	    py_rd_ptr(c, tlbc + 8 + 8 * (uint64_t)index, &copy) != 0 || !copy)
		return own;
	return copy;
}

/* 3.11+: _PyInterpreterFrame chains. */
static void walk_interpreter_frames(struct py_ctx *c, struct model_thread *t, uint64_t frame)
{
	const struct py_layout *L = c->L;
	struct addrset seen = { 0 };
	while (frame) {
		if (!frame_visit(c, t, &seen, frame))
			break;
		uint64_t code, prev, instr;
		uint8_t owner;
		if (py_rd_ptr(c, frame + L->iframe_previous, &prev) != 0 ||
		    py_rd_ptr(c, frame + L->iframe_code, &code) != 0 ||
		    py_rd_ptr(c, frame + L->iframe_instr, &instr) != 0 ||
		    dump_read(c->d, frame + L->iframe_owner, &owner, 1) != DUMP_OK) {
			thread_error(c, t, arena_printf(c->a, "interpreter frame at 0x%llx not captured",
							(unsigned long long)frame));
			break;
		}
		code = py_stackref_obj(c, code);
		if (L->minor >= 12 && owner >= FRAME_OWNED_BY_SHIM && owner <= max_owner(L->minor)) {
			/* the shim an eval loop call starts with: the frame inside it
			 * is the first that call ran */
			if (t->frames.n)
				((struct model_frame *)t->frames.items[t->frames.n - 1])->eval_entry = true;
			frame = prev;
			continue;
		}
		if (owner > max_owner(L->minor)) {
			thread_error(c, t, arena_printf(c->a, "interpreter frame at 0x%llx has unknown owner %u",
							(unsigned long long)frame, owner));
			break;
		}
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error) {
			thread_error(c, t, arena_printf(c->a, "interpreter frame at 0x%llx: %s",
							(unsigned long long)frame,
							pc ? pc->error : "out of memory"));
			break;
		}
		uint64_t start = bytecode_start(c, frame, code);
		int64_t unit = instr >= start ? (int64_t)((instr - start) / 2) : -1;
		/* Frames still setting up are not on the stack yet as Python sees it. */
		if (owner != FRAME_OWNED_BY_GENERATOR && unit < pc->firsttraceable) {
			frame = prev;
			continue;
		}
		struct model_frame *f = add_frame(c, t, pc, code_line(c, pc, unit));
		if (!f)
			break;
		if (L->iframe_is_entry >= 0) {
			uint8_t entry = 0;
			dump_read(c->d, frame + L->iframe_is_entry, &entry, 1);
			f->eval_entry = entry != 0;
		}
		frame_locals(c, t, f, frame, code);
		frame = prev;
	}
	addrset_clear(&seen);
}

/* ------------------------------------------------------------------------
 * Threads and interpreters
 * ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------
 * Native frames, with the Python frames woven in at the eval loop
 * ------------------------------------------------------------------------ */

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

static void weave_native(struct py_ctx *c, struct symbols *s, struct model_thread *t,
			 struct dump_module *interp_module)
{
	if (t->tid < 0) {
		thread_error(c, t, "no OS thread for this Python thread: no native stack");
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

struct gil {
	bool known;
	bool disabled;       /* a free-threaded build running without it */
	bool locked;
	uint64_t holder;     /* the PyThreadState holding it */
};

static int64_t tid_for_ident(struct dump *d, uint64_t ident)
{
	/* On x86_64 glibc, pthread_self() is the thread pointer, fs_base. */
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].regs.fs_base == ident)
			return d->threads[i].tid;
	return -1;
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
		thread_error(c, t, arena_printf(c->a, "thread state at 0x%llx not captured",
						(unsigned long long)ts));
		return;
	}
	t->ident = ident;
	if (L->tstate_native_thread_id >= 0) {
		int64_t tid;
		if (dump_read(c->d, ts + L->tstate_native_thread_id, &tid, 8) == DUMP_OK && tid > 0)
			t->tid = tid;
	}
	if (t->tid < 0)
		t->tid = tid_for_ident(c->d, ident);
	t->crashed = t->tid >= 0 && t->tid == c->d->crashed_tid;
	t->holds_gil = gil->known && gil->locked && gil->holder == ts;

	uint64_t frame = 0;
	int rc;
	if (L->tstate_frame >= 0) {
		rc = py_rd_ptr(c, ts + L->tstate_frame, &frame);
	} else if (L->tstate_current_frame >= 0) {
		rc = py_rd_ptr(c, ts + L->tstate_current_frame, &frame);
	} else {
		uint64_t cframe = 0;
		rc = py_rd_ptr(c, ts + L->tstate_cframe, &cframe);
		if (rc == 0 && cframe)
			rc = py_rd_ptr(c, cframe + L->cframe_current_frame, &frame);
	}
	if (rc != 0) {
		thread_error(c, t, "current frame not captured");
		return;
	}
	if (L->minor <= 10)
		walk_frame_objects(c, t, frame);
	else
		walk_interpreter_frames(c, t, frame);
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

/* A collection runs holding the GIL: CPython up to 3.13 records no frame
 * for it, so the <GC> marker goes on top of the thread holding the GIL
 * (CPython's own unwinder does the same from 3.14 on, at gc.frame).  When
 * no thread holds it (a finalizer released it), say so instead. */
static void mark_gc(struct py_ctx *c, struct model_interp *mi)
{
	if (mi->gc_collecting != 1)
		return;
	for (size_t i = 0; i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (!t->holds_gil)
			continue;
		struct model_frame *f = arena_alloc(c->a, sizeof(*f));
		if (!f)
			return;
		f->kind = FRAME_GC;
		f->function = "<GC>";
		struct ptrvec v = { 0 };
		ptrvec_push(c->a, &v, f);
		for (size_t k = 0; k < t->frames.n; k++)
			ptrvec_push(c->a, &v, t->frames.items[k]);
		t->frames = v;
		return;
	}
	if (mi->gil_enabled == 0)
		model_warn(c->r, "interpreter %lld was collecting garbage; its GIL is disabled (a "
			   "free-threaded build): which thread collects is not known", (long long)mi->id);
	else
		model_warn(c->r, "interpreter %lld was collecting garbage, in a thread that had released "
			   "the GIL (a finalizer): which thread is not known", (long long)mi->id);
}

static void walk_interpreters(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t tstate_current)
{
	const struct py_layout *L = c->L;
	struct addrset seen_interps = { 0 }, seen_threads = { 0 };
	uint64_t interp = head;
	for (int n = 0; interp; n++) {
		if (n >= PY_MAX_INTERPRETERS || addrset_add(&seen_interps, interp) != 0) {
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
			if (dump_read(c->d, interp + L->interp_id, &id, 8) == DUMP_OK)
				mi->id = id;
		}
		c->interp = interp;
		struct gil gil;
		read_gil(c, runtime, interp, tstate_current, &gil);
		mi->gil_enabled = gil.known ? !gil.disabled : -1;
		int32_t collecting;
		mi->gc_collecting = -1;
		if (L->interp_gc_collecting >= 0 &&
		    dump_read(c->d, interp + L->interp_gc_collecting, &collecting, 4) == DUMP_OK)
			mi->gc_collecting = collecting != 0;
		else if (L->runtime_gc_collecting >= 0 && runtime &&
			 dump_read(c->d, runtime + L->runtime_gc_collecting, &collecting, 4) == DUMP_OK)
			mi->gc_collecting = collecting != 0;
		uint64_t ts = 0;
		if (py_rd_ptr(c, interp + L->interp_tstate_head, &ts) != 0) {
			model_warn(c->r, "interpreter %lld: thread list not captured", (long long)mi->id);
			c->r->incomplete = true;
		}
		for (int k = 0; ts; k++) {
			if (k >= PY_MAX_THREADS || addrset_add(&seen_threads, ts) != 0) {
				model_warn(c->r, "interpreter %lld: thread list is corrupt (loops or exceeds %d entries)",
					   (long long)mi->id, PY_MAX_THREADS);
				c->r->incomplete = true;
				break;
			}
			if (py_out_of_time(c))
				break;
			walk_thread(c, mi, ts, &gil);
			if (py_rd_ptr(c, ts + L->tstate_next, &ts) != 0) {
				model_warn(c->r, "interpreter %lld: thread list breaks after %d threads",
					   (long long)mi->id, k + 1);
				c->r->incomplete = true;
				break;
			}
		}
		py_thread_names(c, interp, mi);
		mark_gc(c, mi);
		if (py_rd_ptr(c, interp + L->interp_next, &interp) != 0) {
			model_warn(c->r, "interpreter list breaks after %d interpreters", n + 1);
			c->r->incomplete = true;
			break;
		}
	}
	addrset_clear(&seen_interps);
	addrset_clear(&seen_threads);
}

/* ------------------------------------------------------------------------
 * Finding the runtime
 * ------------------------------------------------------------------------ */

enum {
	SYM_RUNTIME, SYM_INTERP_HEAD, SYM_VERSION, SYM_CODE_TYPE, SYM_TSTATE_CURRENT, SYM_TYPE_TYPE,
	NSYMS
};

static const char *const sym_names[NSYMS] = {
	"_PyRuntime", "interp_head", "Py_Version", "PyCode_Type", "_PyThreadState_Current",
	"PyType_Type",
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* "python3.12" or "libpython3.6m.so" -> 12 or 6; 0 when the name says nothing. */
static unsigned minor_from_name(const char *path)
{
	const char *b = base_name(path);
	const char *p = strstr(b, "python3.");
	if (!p || !isdigit((unsigned char)p[8]))
		return 0;
	return (unsigned)strtoul(p + 8, NULL, 10);
}

static const char *version_string(struct arena *a, uint64_t hex)
{
	unsigned major = (hex >> 24) & 0xff, minor = (hex >> 16) & 0xff, micro = (hex >> 8) & 0xff;
	unsigned level = (hex >> 4) & 0xf, serial = hex & 0xf;
	const char *lv = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
	if (level == 0xf)
		return arena_printf(a, "%u.%u.%u", major, minor, micro);
	return arena_printf(a, "%u.%u.%u%s%u", major, minor, micro, lv, serial);
}

/* 3.13+: _Py_DebugOffsets at the start of _PyRuntime (debug_offsets.c),
 * read before the table is chosen (its free-threaded flag picks the table)
 * and applied after: its offsets replace the table's; if they differ, the
 * build is not the one the table was made from, and for a pre-release that
 * means its other fields cannot be trusted either. */
struct dof_read {
	int rc;                      /* py_debug_offsets_read's */
	char why[256];
	struct py_debug_offsets o;
};

static int apply_debug_offsets(struct py_ctx *c, struct py_layout *L, const struct dof_read *dr,
			       const char **why)
{
	const struct py_debug_offsets *o = &dr->o;
	if (dr->rc == -1) {
		*why = arena_printf(c->a, "%s: not supported (--layout=dwarf reads a build with debug "
				    "info from its DWARF instead)", dr->why);
		return -1;
	}
	if (dr->rc != 0) {
		*why = arena_strdup(c->a, dr->why);
		return dr->rc;
	}
	if (o->free_threaded != py_layout_free_threaded(L)) {
		*why = arena_printf(c->a, "CPython %s's debug offsets say it is %s build, but the layout "
				    "pycore has for it (%s) is of %s build",
				    version_string(c->a, o->version),
				    o->free_threaded ? "a free-threaded" : "a default (GIL)", L->source,
				    py_layout_free_threaded(L) ? "a free-threaded" : "a default (GIL)");
		return -1;
	}
	struct py_layout before = *L;
	py_debug_offsets_apply(o, L);
	if (memcmp(&before, L, sizeof(before)) != 0) {
		if (((o->version >> 4) & 0xf) != 0xf) {
			*why = arena_printf(c->a, "CPython %s is a pre-release whose layout differs from "
					    "3.%u%s's release: not supported (--layout=dwarf reads it from "
					    "its own debug info)", version_string(c->a, o->version), L->minor,
					    o->free_threaded ? "t" : "");
			return -1;
		}
		model_warn(c->r, "this CPython %s build's layout differs from pycore's table; "
			   "its own debug offsets are used, other fields may be wrong",
			   version_string(c->a, o->version));
	}
	return 0;
}

/* Look for "xdebugpy" followed by a plausible _Py_DebugOffsets: a 3.13+
 * version and struct sizes that make sense.  Captured memory of modules
 * named like python is searched first (where _PyRuntime lives), then all
 * captured memory.  Returns the module holding it (or NULL). */
struct offsets_scan {
	bool pythonish;          /* this pass: modules named like python, or the rest */
	uint64_t version;
};

static bool scan_keep(struct dump *d, uint64_t start, void *arg)
{
	struct offsets_scan *sc = arg;
	struct dump_module *m = dump_module_at(d, start);
	return (m && strstr(base_name(m->path), "python")) == sc->pythonish;
}

static bool scan_found(struct dump *d, uint64_t at, void *arg)
{
	struct offsets_scan *sc = arg;
	return at % 8 == 0 && py_debug_offsets_plausible(d, at, &sc->version);
}

static struct dump_module *scan_debug_offsets(struct dump *d, uint64_t *runtime, uint64_t *version)
{
	static const char cookie[8] = { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' };
	for (int pass = 0; pass < 2; pass++) {
		struct offsets_scan sc = { pass == 0, 0 };
		uint64_t at = dump_search(d, cookie, sizeof(cookie), scan_keep, scan_found, &sc);
		if (!at)
			continue;
		*runtime = at;
		*version = sc.version;
		struct dump_module *owner = dump_module_at(d, at);
		if (owner)
			return owner;
		/* anonymous memory: name the first module that looks like python */
		for (size_t k = 0; k < d->nmodules; k++)
			if (strstr(base_name(d->modules[k].path), "python"))
				return &d->modules[k];
		return NULL;
	}
	return NULL;
}

/* Does the table fit this build?  The type of PyCode_Type must be
 * PyType_Type when read at the table's ob_type offset (a build with
 * another object header, such as Py_TRACE_REFS, fails this). */
static bool table_fits(struct py_ctx *c, const struct py_layout *L, uint64_t code_type, uint64_t type_type)
{
	uint64_t t;
	if (!code_type || !type_type)
		return true; /* nothing to check against */
	if (L->object_type < 0)
		return false;
	if (py_rd_ptr(c, code_type + (uint64_t)L->object_type, &t) != 0)
		return true; /* not in the dump (a stack-only minidump): cannot tell */
	return t == type_type;
}

/* 3.6-3.12 without symbols: look through the captured writable memory of
 * a module named like python for the word that holds the interpreter list
 * (_PyRuntime.interpreters.head; 3.6: interp_head), trying each plausible
 * version's table.  A candidate is believed only if it points to an
 * interpreter whose newest thread state points back to it and belongs to
 * one of the dump's threads (its thread_id is that thread's pthread_t,
 * which on x86_64 is its fs_base). */
static bool plausible_interp(struct dump *d, const struct py_layout *L, uint64_t interp)
{
	uint64_t ts, back, ident;
	if (!interp || interp % 8 ||
	    dump_read_u64(d, interp + L->interp_tstate_head, &ts) != DUMP_OK || !ts || ts % 8 ||
	    dump_read_u64(d, ts + L->tstate_interp, &back) != DUMP_OK || back != interp ||
	    dump_read_u64(d, ts + L->tstate_thread_id, &ident) != DUMP_OK || !ident)
		return false;
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].regs.fs_base == ident)
			return true;
	return false;
}

#define SCAN_BSS_BYTES (4u << 20)
/* What one mapping's scan reads at most: a libpython's writable data and
 * .bss are a few MB; a crafted dump's module can claim terabytes. */
#define SCAN_MAX_BYTES (64u << 20)
/* ... and the whole scan, over every module and version. */
#define SCAN_TOTAL_BYTES (1ull << 30)

static struct dump_module *scan_interp_list(struct dump *d, uint64_t *where, unsigned *minor_out)
{
	uint64_t buf[512], total = SCAN_TOTAL_BYTES;
	/* The version the file names say (python3.X, libpython3.X...): only
	 * that table is tried then; all of them only when no name says. */
	unsigned named = 0;
	for (size_t i = 0; i < d->nmodules && !named; i++)
		named = minor_from_name(d->modules[i].path);
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		const char *b = base_name(m->path);
		if (strncmp(b, "libpython", 9) != 0 && strncmp(b, "python", 6) != 0 &&
		    !(d->executable && strcmp(m->path, d->executable) == 0))
			continue;
		for (unsigned minor = 12; minor >= 6; minor--) {
			if (named && minor != named)
				continue;
			const struct py_layout *L = py_layout_for(minor, false);
			int64_t head_ofs = minor == 6 ? 0 : L->runtime_interpreters_head;
			/* the module's mappings, and the anonymous .bss that follows
			 * its last one (zero-initialized globals such as 3.6's
			 * interp_head or 3.7-3.9's _PyRuntime live there) */
			for (size_t k = 0; k <= m->nmaps; k++) {
				uint64_t start = k < m->nmaps ? m->maps[k].start : m->end;
				uint64_t end = k < m->nmaps ? m->maps[k].end : m->end + SCAN_BSS_BYTES;
				if (k == m->nmaps && dump_module_at(d, m->end))
					continue;
				uint64_t budget = SCAN_MAX_BYTES, held_end = 0, n = 0;
				for (uint64_t a = start; a < end && budget && total; a += n) {
					/* step over what the dump does not hold */
					if (a >= held_end) {
						a = dump_next_held(d, a, &held_end);
						if (!a || a >= end)
							break;
					}
					n = end - a < sizeof(buf) ? end - a : sizeof(buf);
					if (held_end - a < n)
						n = held_end - a;
					budget = budget > n ? budget - n : 0;
					total = total > n ? total - n : 0;
					if (dump_read(d, a, buf, n) != DUMP_OK)
						continue;
					for (uint64_t w = 0; w < n / 8; w++) {
						if (!plausible_interp(d, L, buf[w]))
							continue;
						*where = a + 8 * w - (uint64_t)head_ofs;
						*minor_out = minor;
						return m;
					}
				}
			}
		}
	}
	return NULL;
}

struct candidate;
static int choose_layout(struct py_ctx *c, struct symbols *s, struct dump_module *m,
			 const struct candidate *cand, unsigned minor, struct py_layout *L,
			 const char **why);

struct candidate {
	struct dump_module *mod;
	struct symbol_want syms[NSYMS];
};

/* Is this module a CPython interpreter?  Fills cand->syms. */
static bool probe_module(struct symbols *s, struct dump_module *m, struct candidate *cand)
{
	cand->mod = m;
	for (int i = 0; i < NSYMS; i++)
		cand->syms[i] = (struct symbol_want){ sym_names[i], 0, 0 };
	if (symbols_lookup(s, m, cand->syms, NSYMS) < 0)
		return false;
	return cand->syms[SYM_RUNTIME].addr ||
	       (cand->syms[SYM_INTERP_HEAD].addr && cand->syms[SYM_CODE_TYPE].addr);
}

static bool python_named(const struct dump_module *m)
{
	return strstr(base_name(m->path), "python") != NULL;
}

/* Without symbols, the built-in types are still where Python code finds
 * them: in the interpreter's builtins dict, by name (None and Ellipsis by
 * the types of their objects). */
static void find_types_in_builtins(struct py_ctx *c, uint64_t interp)
{
	uint64_t builtins = 0, v;
	if (c->L->interp_builtins < 0 || py_rd_ptr(c, interp + c->L->interp_builtins, &builtins) != 0 ||
	    !builtins)
		return;
	static const struct { int t; const char *name; bool instance; } names[] = {
		{ PYT_INT, "int", false }, { PYT_BOOL, "bool", false }, { PYT_FLOAT, "float", false },
		{ PYT_STR, "str", false }, { PYT_BYTES, "bytes", false },
		{ PYT_BYTEARRAY, "bytearray", false }, { PYT_LIST, "list", false },
		{ PYT_TUPLE, "tuple", false }, { PYT_DICT, "dict", false }, { PYT_SET, "set", false },
		{ PYT_FROZENSET, "frozenset", false }, { PYT_COMPLEX, "complex", false },
		{ PYT_OBJECT, "object", false }, { PYT_TYPE, "type", false },
		{ PYT_NONE, "None", true }, { PYT_ELLIPSIS, "Ellipsis", true },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (c->type_addr[names[i].t] || py_dict_get_str(c, builtins, names[i].name, &v) != 0)
			continue;
		if (names[i].instance && py_rd_ptr(c, v + c->L->object_type, &v) != 0)
			continue;
		c->type_addr[names[i].t] = v;
	}
}

/* The built-in type objects, for repr(), and the set's dummy key. */
static void find_types(struct py_ctx *c, struct symbols *s, struct dump_module *m)
{
	struct symbol_want w[PYT_COUNT + 1];
	for (int i = 0; i < PYT_COUNT; i++)
		w[i] = (struct symbol_want){ py_type_symbols[i], 0, 0 };
	w[PYT_COUNT] = (struct symbol_want){ "_PySet_Dummy", 0, 0 };
	if (symbols_lookup(s, m, w, PYT_COUNT + 1) < 0)
		return;
	for (int i = 0; i < PYT_COUNT; i++)
		c->type_addr[i] = w[i].addr;
	if (w[PYT_COUNT].addr)
		py_rd_ptr(c, w[PYT_COUNT].addr, &c->set_dummy);
}

/* The table, or the interpreter's own DWARF: always with --layout=dwarf;
 * with auto, when there is no table or it does not fit this build. */
static int choose_layout(struct py_ctx *c, struct symbols *s, struct dump_module *m,
			 const struct candidate *cand, unsigned minor, struct py_layout *L,
			 const char **why)
{
	bool have_table = L->minor != 0;
	bool fits = have_table && table_fits(c, L, cand->syms[SYM_CODE_TYPE].addr,
					     cand->syms[SYM_TYPE_TYPE].addr);
	if (c->opt->layout == LAYOUT_TABLE || (c->opt->layout == LAYOUT_AUTO && fits)) {
		if (!have_table) {
			*why = arena_printf(c->a, "no layout table for CPython 3.%u", minor);
			return -1;
		}
		return 0;
	}
	Dwarf *dw = symbols_dwarf(s, m);
	struct py_layout from;
	const char *dwhy = "the interpreter has no DWARF (debug info)";
	if (dw && py_layout_from_dwarf(dw, minor, &from, &dwhy) == 0) {
		*L = from;
		c->layout_from_dwarf = true;
		if (c->opt->layout == LAYOUT_AUTO)
			model_warn(c->r, "pycore's 3.%u table does not fit this build: its layout was read "
				   "from the interpreter's own DWARF", minor);
		return 0;
	}
	if (c->opt->layout == LAYOUT_DWARF || !have_table) {
		*why = arena_printf(c->a, "cannot take CPython 3.%u's layout from %s: %s", minor, m->path, dwhy);
		return -1;
	}
	model_warn(c->r, "pycore's 3.%u table does not fit this build and %s: the report may be wrong",
		   minor, dwhy);
	c->r->incomplete = true;
	return 0;
}

enum py_status py_analyze(struct dump *d, struct symbols *s, const struct py_options *opt,
			  struct model_report *r, const char **why)
{
	struct candidate cand;
	struct dump_module *found = NULL;
	const char *refused = NULL;

	/* libpython first (the executable of a shared build only links it),
	 * then the main program, then anything else named like python. */
	for (int pass = 0; pass < 3 && !found; pass++) {
		for (size_t i = 0; i < d->nmodules && !found; i++) {
			struct dump_module *m = &d->modules[i];
			bool lib = strncmp(base_name(m->path), "libpython", 9) == 0;
			bool exe = d->executable && strcmp(m->path, d->executable) == 0;
			if ((pass == 0 && !lib) || (pass == 1 && (!exe || lib)) ||
			    (pass == 2 && (lib || exe || !python_named(m))))
				continue;
			if (probe_module(s, m, &cand))
				found = m;
			else if (!refused && m->file_error && (lib || exe || python_named(m)))
				refused = m->file_error;
		}
	}
	bool scanned = false, heuristic = false;
	unsigned scanned_minor = 0;
	if (!found) {
		/* No symbols: 3.13+ carries _Py_DebugOffsets at the start of
		 * _PyRuntime, findable by its cookie. */
		uint64_t runtime, version;
		found = scan_debug_offsets(d, &runtime, &version);
		if (found) {
			scanned = true;
			memset(&cand, 0, sizeof(cand));
			cand.mod = found;
			cand.syms[SYM_RUNTIME].addr = runtime;
			model_warn(r, "no usable symbols (%s): the runtime was found by its debug-offsets "
				   "cookie; types are recognized by name",
				   refused ? refused : "no module defines _PyRuntime");
			(void)version;
		}
	}
	if (!found) {
		/* Older versions: a bounded scan, validated by walking. */
		uint64_t where;
		found = scan_interp_list(d, &where, &scanned_minor);
		if (found) {
			scanned = heuristic = true;
			memset(&cand, 0, sizeof(cand));
			cand.mod = found;
			cand.syms[scanned_minor == 6 ? SYM_INTERP_HEAD : SYM_RUNTIME].addr = where;
			model_warn(r, "no usable symbols (%s): the interpreter list was found by scanning "
				   "the interpreter's memory (CPython 3.%u layout)",
				   refused ? refused : "no module defines _PyRuntime", scanned_minor);
		}
	}
	if (!found) {
		if (refused)
			*why = arena_printf(r->arena, "cannot read the interpreter's symbols: %s; no "
					    "_Py_DebugOffsets (3.13+) in memory, and no interpreter state found "
					    "by scanning", refused);
		else
			*why = "not a CPython process: no loaded module defines _PyRuntime, no "
			       "_Py_DebugOffsets (3.13+) is in memory, and a scan found no interpreter state";
		return PY_ENOTPYTHON;
	}

	struct py_ctx c = { .d = d, .opt = opt, .r = r, .a = r->arena };
	if (opt->timeout > 0)
		c.deadline_ns = now_ns() + (uint64_t)(opt->timeout * 1e9);
	c.code_type = cand.syms[SYM_CODE_TYPE].addr;
	uint64_t hex = 0;
	if (scanned && !heuristic)
		dump_read_u64(d, cand.syms[SYM_RUNTIME].addr + 8, &hex);
	if (cand.syms[SYM_VERSION].addr) {
		uint32_t v;
		if (dump_read_u32(d, cand.syms[SYM_VERSION].addr, &v) == DUMP_OK)
			hex = v;
	}
	unsigned minor = hex ? (unsigned)((hex >> 16) & 0xff)
			 : heuristic ? scanned_minor : minor_from_name(found->path);
	if (!minor && d->executable)
		minor = minor_from_name(d->executable);
	if (!minor) {
		*why = arena_printf(r->arena, "%s defines _PyRuntime but its Python version cannot be told",
				    found->path);
		return PY_EUNSUPPORTED;
	}
	struct dof_read dr = { .rc = 0 };
	if (minor >= 13)
		dr.rc = py_debug_offsets_read(d, cand.syms[SYM_RUNTIME].addr, hex, &dr.o, dr.why,
					      sizeof(dr.why));
	bool ft = minor >= 13 && dr.rc == 0 && dr.o.free_threaded;
	const struct py_layout *table = py_layout_for(minor, ft);
	static const struct py_layout none = { .object_tid = -1 };
	if (!table && (minor < 6 || minor > 15)) {
		*why = arena_printf(r->arena, "CPython 3.%u is not supported (pycore reads 3.6 to 3.15)", minor);
		return PY_EUNSUPPORTED;
	}
	if (!table)
		table = &none;
	struct py_layout L = *table;
	c.L = &L;
	if (choose_layout(&c, s, found, &cand, minor, &L, why) != 0)
		return PY_EUNSUPPORTED;

	r->has_python = true;
	r->binary_path = arena_strdup(r->arena, found->file_path ? found->file_path : found->path);
	if (found->build_id_len) {
		char hexid[129];
		dump_hex(found->build_id, found->build_id_len, hexid);
		r->binary_build_id = arena_strdup(r->arena, hexid);
	}
	r->located_by = heuristic ? "scan" : scanned ? "debug-offsets" : "symbol";

	uint64_t runtime = cand.syms[SYM_RUNTIME].addr, head = 0;
	r->free_threaded = py_layout_free_threaded(&L);
	if (minor >= 13 && dr.rc == -1 && c.layout_from_dwarf) {
		/* a pre-release's own DWARF knows its layout better than a
		 * _Py_DebugOffsets pycore has no description of */
		model_warn(r, "_Py_DebugOffsets not used (%s): the layout is the interpreter's own DWARF's",
			   dr.why);
	} else if (minor >= 13) {
		int rc = apply_debug_offsets(&c, &L, &dr, why);
		if (rc == -2) {
			model_warn(r, "%s: no interpreter can be read", *why);
			r->incomplete = true;
			return PY_OK;
		}
		if (rc != 0)
			return PY_EUNSUPPORTED;
	}
	if (minor == 6) {
		runtime = 0;
		if (py_rd_ptr(&c, cand.syms[SYM_INTERP_HEAD].addr, &head) != 0) {
			model_warn(r, "interp_head (0x%llx, 8 bytes) is not in the dump: no interpreter can be read",
				   (unsigned long long)cand.syms[SYM_INTERP_HEAD].addr);
			r->incomplete = true;
			return PY_OK;
		}
		r->runtime_address = cand.syms[SYM_INTERP_HEAD].addr;
	} else {
		r->runtime_address = runtime;
		if (py_rd_ptr(&c, runtime + L.runtime_interpreters_head, &head) != 0) {
			/* a dump without the interpreter's data (a stack-only minidump):
			 * the report keeps what the dump does hold */
			model_warn(r, "_PyRuntime.interpreters.head (0x%llx, 8 bytes) is not in the dump: "
				   "no interpreter can be read",
				   (unsigned long long)(runtime + (uint64_t)L.runtime_interpreters_head));
			r->incomplete = true;
			return PY_OK;
		}
	}
	if (!head)
		model_warn(r, "the interpreter list is empty (not initialized yet, or already finalized)");

	/* Up to 3.10 there is no Py_Version (and without symbols it cannot be
	 * read): ask sys.hexversion. */
	if (!hex && head && L.interp_sysdict >= 0) {
		uint64_t sysdict, v;
		int64_t h;
		if (py_rd_ptr(&c, head + L.interp_sysdict, &sysdict) == 0 && sysdict &&
		    py_dict_get_str(&c, sysdict, "hexversion", &v) == 0 &&
		    py_long_i64(&c, v, &h) == 0 && ((uint64_t)h >> 16) == (0x0300u | minor))
			hex = (uint64_t)h;
	}
	if (hex) {
		r->hexversion = hex;
		r->version = version_string(r->arena, hex);
	} else {
		r->version = arena_printf(r->arena, "3.%u", minor);
		model_warn(r, "only the minor version 3.%u could be told from %s", minor, found->path);
	}

	/* types: for reprs, thread names and exceptions */
	if (!scanned)
		find_types(&c, s, found);
	if (head)
		find_types_in_builtins(&c, head);
	walk_interpreters(&c, runtime, head, cand.syms[SYM_TSTATE_CURRENT].addr);
	if (opt->native) {
		for (size_t i = 0; i < r->interps.n; i++) {
			struct model_interp *mi = r->interps.items[i];
			for (size_t k = 0; k < mi->threads.n && !py_out_of_time(&c); k++)
				weave_native(&c, s, mi->threads.items[k], found);
		}
	}
	free(c.codes);
	return PY_OK;
}
