/* asyncio: every event loop's tasks, each one's coroutine stack, and who
 * awaits whom, read without running anything.
 *
 * Facts used, by version (CPython 3.8 to 3.15; Lib/asyncio/ and
 * Modules/_asynciomodule.c, Include/cpython/genobject.h,
 * Include/internal/pycore_frame.h, Include/opcode.h of each version):
 * - the tasks: asyncio.tasks._all_tasks (3.8-3.11) or _scheduled_tasks
 *   (3.12, 3.13), a weakref.WeakSet whose instance attribute `data` is a
 *   set of weak references (PyWeakReference.wr_object is the first field
 *   after the object header; a dead one holds None), plus
 *   asyncio.tasks._eager_tasks (3.12, 3.13), a set of tasks;
 *   asyncio.tasks._current_tasks maps each loop to the task it runs now.
 *   The C module shares these very objects (tasks.py imports them from
 *   _asyncio), so C and pure-Python tasks are found alike up to 3.13;
 *   from 3.14 the C tasks are in per-thread lists instead (task_lists
 *   below), linked while pending (a done task is unlinked: the registry is
 *   what all_tasks() gives), and _scheduled_tasks holds the others;
 * - a C Task or Future (FutureObj_HEAD, then TaskObj's own fields) is the
 *   table `fut_layouts` below: offsets after the object header, from the
 *   field order of each version's _asynciomodule.c and checked against the
 *   DWARF of those builds' _asyncio modules (gdb: ptype /o TaskObj).
 *   fut_state: 0 pending, 1 cancelled, 2 finished.  From 3.13 the task's
 *   name may be an int n standing for "Task-n".  3.11+ count cancel()
 *   requests (task_num_cancels_requested: Task.cancelling());
 * - a pure-Python Future or Task keeps the same as instance attributes
 *   (_state 'PENDING' 'CANCELLED' 'FINISHED', _loop, _result, _exception,
 *   _fut_waiter, _coro, _name, _must_cancel, _num_cancels_requested);
 * - the future a task waits on is its _fut_waiter; gather's future keeps
 *   its children in the attribute _children; a task whose coroutine waits
 *   in TaskGroup.__aexit__ (or _aexit, 3.13+) awaits the group's children,
 *   the set _tasks of that frame's self; a C Future's __await__
 *   iterator (_asyncio.FutureIter) holds the future right after its header;
 * - the loop's thread: BaseEventLoop.run_forever sets the loop's
 *   attribute _thread_id to threading.get_ident() while it runs, None after;
 * - a coroutine or generator object (gen_layouts below, from PyGenObject
 *   of each version and checked with gdb: ptype /o PyGenObject): up to 3.10
 *   gi_frame points to its PyFrameObject; from 3.11 the frame is embedded
 *   (gi_iframe) and gi_frame_state says whether it is suspended;
 * - what a suspended coroutine awaits (cr_await, Objects/genobject.c
 *   _PyGen_yf) is the top of its frame's value stack when it stopped in a
 *   yield from / await: up to 3.10 when the next instruction is YIELD_FROM
 *   (72; f_lasti counts bytes up to 3.9, code units in 3.10), the stack's
 *   top being f_stacktop[-1] (3.8, 3.9; NULL while not suspended) or
 *   f_valuestack[f_stackdepth - 1] (3.10); in 3.11 and 3.12 when the next
 *   instruction is RESUME (3.11: 151, or its quickened form 150; 3.12: 151,
 *   or INSTRUMENTED_RESUME 240) with an oparg of 2 or more; in 3.13 when
 *   gi_frame_state is FRAME_SUSPENDED_YIELD_FROM (frame_states below); the
 *   top is then localsplus[stacktop - 1], from 3.14 stackpointer[-1], and
 *   in 3.15 stackpointer[-2] (a NULL is pushed above the awaitable).
 * A running task's coroutine is executing: its stack is the frames of the
 * loop's thread from the innermost out to the coroutine's own frame.
 */
#include "python/attrs.h"
#include "python/dwarf_layout.h"
#include "python/python_int.h"
#include "python/repr.h"
#include "python/threads.h"

#include <stddef.h>
#include <string.h>

#define MAX_TASKS         100000
#define MAX_CHAIN         1024     /* coroutines awaiting one another */
#define MAX_GATHER_DEPTH  32
#define MAX_CHILDREN      100000

enum { FUT_PENDING = 0, FUT_CANCELLED = 1, FUT_FINISHED = 2 };

/* Offsets after the object header (PyObject_HEAD) of FutureObj/TaskObj. */
struct fut_layout {
	int loop, exception, result, state;
	int fut_waiter, coro, name;
	int must_cancel, must_cancel_bit;   /* bit -1: a whole int */
	int num_cancels;                    /* -1 before 3.11 */
};

static const struct fut_layout fut_layouts[] = {
	[8] = { 0, 32, 40, 56, 88, 96, 104, 120, -1, -1 },
	[9] = { 0, 32, 40, 64, 128, 136, 144, 160, -1, -1 },
	[10] = { 0, 32, 48, 72, 136, 144, 152, 168, -1, -1 },
	[11] = { 0, 32, 48, 72, 112, 120, 128, 144, -1, 152 },
	[12] = { 0, 32, 48, 72, 112, 120, 128, 144, -1, 152 },
	[13] = { 0, 32, 48, 80, 96, 104, 112, 84, 2, 88 },
	[14] = { 0, 32, 48, 88, 104, 112, 120, 94, 2, 96 },
	[15] = { 0, 32, 48, 88, 104, 112, 120, 94, 2, 96 },
};

/* Offsets after the object header of PyGenObject (and PyCoroObject). */
struct gen_layout {
	int frame;           /* <=3.10: gi_frame (a pointer); 3.11+: gi_iframe (inline) */
	int qualname;
	int frame_state;     /* 3.11+: int8 */
};

static const struct gen_layout gen_layouts[] = {
	[8] = { 0, 40, -1 }, [9] = { 0, 40, -1 }, [10] = { 0, 32, -1 },
	[11] = { 64, 24, 59 }, [12] = { 56, 16, 51 }, [13] = { 56, 16, 51 },
	[14] = { 56, 16, 51 }, [15] = { 56, 16, 51 },
};

/* A generator frame's states (3.11+: gi_frame_state; Include/internal/
 * pycore_frame.h): up to 3.12 no state of its own for a yield from (the
 * next instruction tells); 3.15 renumbered them and added one for a yield
 * from whose generator another thread holds (free-threaded builds). */
struct frame_states {
	int8_t suspended, yield_from, yield_from_locked, executing, finished;  /* finished: >= */
	int8_t awaited_depth;  /* the awaited object's slot below the stack top: 3.15
				  pushes a NULL above it (dis: GET_AWAITABLE, PUSH_NULL) */
};

static const struct frame_states frame_states[] = {
	[11] = { -1, -1, -1, 0, 1, 1 }, [12] = { -1, -1, -1, 0, 1, 1 },
	[13] = { -2, -1, -1, 0, 1, 1 }, [14] = { -2, -1, -1, 0, 1, 1 },
	[15] = { 1, 2, 3, 4, 5, 2 },
};

/* The states a coroutine frame's STATE is counted in.  Pre-releases of 3.15
 * before the renumbering keep 3.14's (and no NULL above the awaitable:
 * checked by hand on a free-threaded 3.15.0a0 of May 2025, whose dis shows
 * GET_AWAITABLE, LOAD_CONST, SEND); a negative state says so, as 3.15's own
 * has none. */
static const struct frame_states *states_of(unsigned minor, int8_t state)
{
	return minor == 15 && state < 0 ? &frame_states[14] : &frame_states[minor];
}

/* 3.14+ (Modules/_asynciomodule.c, Include/internal/pycore_tstate.h): every
 * C task is linked, from its creation until it is freed, into the list of
 * the thread that made it (_PyThreadStateImpl.asyncio_tasks_head), or of
 * the interpreter once that thread is gone (PyInterpreterState.
 * asyncio_tasks_head); TaskObj.task_node links it (struct llist_node:
 * next, prev), and asyncio_running_task is the task the thread runs now.
 * The module's own debug offsets (_AsyncioDebug: struct py_asyncio_offsets)
 * give these where its file is at hand, and are checked against the task
 * layout below; else these tables.  Default builds: from the DWARF of
 * Debian's builds (gdb: print &((_PyThreadStateImpl *)0)->asyncio_tasks_head),
 * equal to their _AsyncioDebug.  Free-threaded builds: offsetof in Debian's
 * libpython3.X-dev headers compiled with Py_GIL_DISABLED (as versions/
 * 3.14t.h are made; the same headers without it give the default entries
 * exactly): the thread state's fields are where the default build has
 * them, the interpreter's list is further on; TaskObj has no field of a
 * free-threaded build's own, so after the (larger) header task_node is
 * where the default build has it. */
struct task_lists {
	int task_node;         /* after the object header */
	int tstate_head, tstate_running_task, interp_head;
};

static const struct task_lists task_lists[] = {
	[14] = { 136, 0x370, 0x368, 0x2a80 },
	[15] = { 136, 0x418, 0x408, 0x2a68 },
};

static const struct task_lists task_lists_ft[] = {
	[14] = { 136, 0x370, 0x368, 0x4398 },
	[15] = { 136, 0x418, 0x408, 0x4368 },
};

/* PyFrameObject (3.8-3.10): f_valuestack, and f_stacktop (3.8, 3.9) or
 * f_stackdepth (3.10), f_state (3.10), as offsets from f_back; PyCodeObject
 * co_code (3.8-3.10: 48). */
#define FRAME_VALUESTACK_FROM_BACK 40
#define FRAME_STACKTOP_FROM_BACK   48
#define FRAME_STACKDEPTH_FROM_BACK 56
#define FRAME_STATE_FROM_BACK      84
#define CODE_CO_CODE               48
#define FRAME_SUSPENDED_310        (-1)
#define YIELD_FROM                 72

enum kind { K_OTHER, K_C_FUTURE, K_C_TASK, K_PY_FUTURE, K_PY_TASK, K_CORO, K_FUTURE_ITER };

/* What the walk knows of one future or task. */
struct fut {
	enum kind kind;
	uint64_t addr, loop, result, exception, fut_waiter, coro, name;
	int state;           /* FUT_*, -1 unknown */
	int64_t cancels;     /* cancel() requests not yet delivered (must_cancel, num_cancels) */
	bool has_result;     /* result is meaningful (may be None) */
};

struct aio {
	struct py_ctx *c;
	struct model_interp *mi;
	uint64_t hdr;        /* bytes of the object header */
	const struct fut_layout *fl;
	const struct gen_layout *gl;
	struct addrtab tasks_at;  /* struct by_addr: task by address */
	struct addrtab loops_at;  /* struct by_addr: loop by address */
	struct addrtab kinds;     /* struct type_kind: kind by type */
	struct addrtab frames_at; /* struct by_addr: thread frame by frame address */
	bool frames_indexed;
	struct ptrvec tasks;      /* of struct task */
	bool capped;
	struct task_lists tl;     /* 3.14+ */
};

struct task {
	struct fut f;
	uint64_t group;      /* the TaskGroup in whose __aexit__ its coroutine waits */
	struct model_task *m;
	struct model_loop *loop;
	bool current;        /* its loop's entry of _current_tasks */
};

struct by_addr {
	uint64_t addr;
	void *p;
	size_t index;
};

struct type_kind {
	uint64_t type;
	enum kind kind;
};

/* ------------------------------------------------------------------------
 * Kinds of objects, by their types' names
 * ------------------------------------------------------------------------ */

static enum kind kind_of_type(struct aio *w, uint64_t type);

static enum kind kind_of(struct aio *w, uint64_t obj)
{
	uint64_t type;
	if (!obj || py_type_of(w->c, obj, &type) != PYT_OTHER)
		return K_OTHER;
	bool found;
	struct type_kind *tk = addrtab_get(&w->kinds, type, &found);
	if (tk && found)
		return tk->kind;
	enum kind k = kind_of_type(w, type);
	/* the entry may have moved while the names were read */
	tk = addrtab_get(&w->kinds, type, &found);
	if (tk)
		tk->kind = k;
	return k;
}

/* The kind of objects of TYPE, by its own name and its bases'. */
static enum kind kind_of_type(struct aio *w, uint64_t type)
{
	struct py_ctx *c = w->c;
	for (int depth = 0; type && depth < 64; depth++) {
		const char *n = py_type_name(c, type);
		if (n) {
			if (strcmp(n, "_asyncio.Task") == 0)
				return K_C_TASK;
			if (strcmp(n, "_asyncio.Future") == 0)
				return K_C_FUTURE;
			if (strcmp(n, "asyncio.tasks.Task") == 0)
				return K_PY_TASK;
			if (strcmp(n, "asyncio.futures.Future") == 0)
				return K_PY_FUTURE;
			if (depth == 0 && (strcmp(n, "coroutine") == 0 || strcmp(n, "generator") == 0))
				return K_CORO;
			if (depth == 0 && strcmp(n, "_asyncio.FutureIter") == 0)
				return K_FUTURE_ITER;
		}
		if (py_rd_ptr(c, type + c->L->type_base, &type) != 0)
			break;
	}
	return K_OTHER;
}

static bool is_task(enum kind k)
{
	return k == K_C_TASK || k == K_PY_TASK;
}

static bool is_future(enum kind k)
{
	return k == K_C_TASK || k == K_PY_TASK || k == K_C_FUTURE || k == K_PY_FUTURE;
}

/* ------------------------------------------------------------------------
 * Reading a future or task
 * ------------------------------------------------------------------------ */

static int64_t small_int(struct py_ctx *c, uint64_t obj)
{
	int64_t v;
	enum py_type t = py_type_of(c, obj, NULL);
	if ((t != PYT_INT && t != PYT_BOOL) || py_long_i64(c, obj, &v) != 0)
		return 0;
	return v;
}

static int py_future_attr(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	struct fut *f = arg;
	const char *why;
	if (strcmp(name, "_state") == 0 && py_type_of(c, value, NULL) == PYT_STR) {
		const char *s = py_str_utf8(c, value, 16, &why);
		f->state = !s ? -1 : strcmp(s, "PENDING") == 0 ? FUT_PENDING
			   : strcmp(s, "CANCELLED") == 0 ? FUT_CANCELLED
			   : strcmp(s, "FINISHED") == 0 ? FUT_FINISHED : -1;
	} else if (strcmp(name, "_must_cancel") == 0 || strcmp(name, "_num_cancels_requested") == 0) {
		f->cancels += small_int(c, value);
	}
	static const struct { const char *name; size_t at; } objects[] = {
		{ "_loop", offsetof(struct fut, loop) }, { "_result", offsetof(struct fut, result) },
		{ "_exception", offsetof(struct fut, exception) },
		{ "_fut_waiter", offsetof(struct fut, fut_waiter) },
		{ "_coro", offsetof(struct fut, coro) }, { "_name", offsetof(struct fut, name) },
	};
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		if (strcmp(name, objects[i].name) == 0)
			memcpy((char *)f + objects[i].at, &value, sizeof(value));
	return 0;
}

/* Read the future or task OBJ of kind K into *F; -1 when not captured. */
static int read_future(struct aio *w, uint64_t obj, enum kind k, struct fut *f)
{
	struct py_ctx *c = w->c;
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->addr = obj;
	f->state = -1;
	if (k == K_PY_FUTURE || k == K_PY_TASK) {
		/* the class attribute Future._state is 'PENDING': an instance has
		 * its own only once it changed */
		f->state = FUT_PENDING;
		uint64_t type;
		if (py_type_of(c, obj, &type) == PYT_UNREADABLE ||
		    py_instance_attrs(c, obj, type, py_future_attr, f) != 0)
			return -1;
	} else {
		const struct fut_layout *fl = w->fl;
		uint64_t b = obj + w->hdr;
		int32_t state;
		if (py_rd_ptr(c, b + (uint64_t)fl->loop, &f->loop) != 0 ||
		    py_rd_ptr(c, b + (uint64_t)fl->exception, &f->exception) != 0 ||
		    py_rd_ptr(c, b + (uint64_t)fl->result, &f->result) != 0 ||
		    py_rd_i32(c, b + (uint64_t)fl->state, &state) != 0)
			return -1;
		f->state = state >= FUT_PENDING && state <= FUT_FINISHED ? state : -1;
		if (k == K_C_TASK) {
			int32_t mc = 0, n = 0;
			if (py_rd_ptr(c, b + (uint64_t)fl->fut_waiter, &f->fut_waiter) != 0 ||
			    py_rd_ptr(c, b + (uint64_t)fl->coro, &f->coro) != 0 ||
			    py_rd_ptr(c, b + (uint64_t)fl->name, &f->name) != 0 ||
			    py_rd_i32(c, b + (uint64_t)fl->must_cancel, &mc) != 0 ||
			    (fl->num_cancels >= 0 && py_rd_i32(c, b + (uint64_t)fl->num_cancels, &n) != 0))
				return -1;
			if (fl->must_cancel_bit >= 0)
				mc = (mc >> fl->must_cancel_bit) & 1;
			f->cancels = (mc != 0) + (n > 0 ? n : 0);
		}
	}
	f->has_result = f->state == FUT_FINISHED && (!f->exception || py_type_of(c, f->exception, NULL) == PYT_NONE);
	return 0;
}

/* ------------------------------------------------------------------------
 * Coroutine stacks
 * ------------------------------------------------------------------------ */

/* The frame of coroutine or generator GEN: a PyFrameObject (<=3.10, 0 once
 * finished) or its embedded _PyInterpreterFrame; *SUSPENDED when it is
 * stopped at a yield (not running, not finished). */
static uint64_t gen_frame(struct aio *w, uint64_t gen, bool *suspended, int8_t *state)
{
	struct py_ctx *c = w->c;
	uint64_t b = gen + w->hdr;
	*suspended = false;
	*state = 0;
	if (w->gl->frame_state < 0) {
		uint64_t frame;
		if (py_rd_ptr(c, b + (uint64_t)w->gl->frame, &frame) != 0 || !frame)
			return 0;
		uint64_t back = frame + (uint64_t)c->L->frame_back;
		if (c->L->minor <= 9) {
			uint64_t top;
			*suspended = py_rd_ptr(c, back + FRAME_STACKTOP_FROM_BACK, &top) == 0 && top;
		} else {
			*suspended = dump_read(c->d, back + FRAME_STATE_FROM_BACK, state, 1) == PC_OK &&
				     *state == FRAME_SUSPENDED_310;
		}
		return frame;
	}
	if (dump_read(c->d, b + (uint64_t)w->gl->frame_state, state, 1) != PC_OK)
		return 0;
	const struct frame_states *fs = states_of(c->L->minor, *state);
	if (*state >= fs->finished)
		return 0;
	*suspended = *state == fs->suspended || *state == fs->yield_from || *state == fs->yield_from_locked;
	return b + (uint64_t)w->gl->frame;
}

/* What the suspended coroutine whose frame is FRAME awaits (cr_await), 0
 * when nothing. */
static uint64_t awaited(struct aio *w, uint64_t frame, int8_t state)
{
	struct py_ctx *c = w->c;
	const struct py_layout *L = c->L;
	uint64_t top = 0;
	if (L->minor <= 10) {
		uint64_t code, co_code, back = frame + (uint64_t)L->frame_back;
		int32_t lasti;
		uint8_t op;
		if (py_rd_ptr(c, frame + L->frame_code, &code) != 0 ||
		    py_rd_ptr(c, code + CODE_CO_CODE, &co_code) != 0 ||
		    py_rd_i32(c, frame + L->frame_lasti, &lasti) != 0 || lasti < 0)
			return 0;
		uint64_t next = L->minor <= 9 ? (uint64_t)lasti + 2 : ((uint64_t)lasti + 1) * 2;
		if (dump_read(c->d, co_code + (uint64_t)L->bytes_sval + next, &op, 1) != PC_OK || op != YIELD_FROM)
			return 0;
		if (L->minor <= 9) {
			uint64_t sp;
			if (py_rd_ptr(c, back + FRAME_STACKTOP_FROM_BACK, &sp) != 0 || !sp ||
			    py_rd_ptr(c, sp - 8, &top) != 0)
				return 0;
		} else {
			uint64_t vs;
			int32_t depth;
			if (py_rd_ptr(c, back + FRAME_VALUESTACK_FROM_BACK, &vs) != 0 ||
			    py_rd_i32(c, back + FRAME_STACKDEPTH_FROM_BACK, &depth) != 0 || depth <= 0 ||
			    depth > (1 << 20) || py_rd_ptr(c, vs + 8 * (uint64_t)(depth - 1), &top) != 0)
				return 0;
		}
		return top;
	}
	if (L->minor <= 12) {
		uint64_t prev;
		uint8_t next[2];
		if (py_rd_ptr(c, frame + L->iframe_instr, &prev) != 0 ||
		    dump_read(c->d, prev + 2, next, 2) != PC_OK)
			return 0;
		bool resume = L->minor == 11 ? next[0] == 151 || next[0] == 150 : next[0] == 151 || next[0] == 240;
		if (!resume || next[1] < 2)
			return 0;
	} else if (state != states_of(L->minor, state)->yield_from &&
		   state != states_of(L->minor, state)->yield_from_locked) {
		return 0;
	}
	if (L->minor >= 14) {
		/* a suspended frame keeps its stack pointer */
		uint64_t sp;
		uint64_t depth = (uint64_t)states_of(L->minor, state)->awaited_depth;
		if (L->iframe_stackpointer < 0 || py_rd_ptr(c, frame + L->iframe_stackpointer, &sp) != 0 ||
		    sp < frame + (uint64_t)L->iframe_localsplus + 8 * depth || py_rd_ptr(c, sp - 8 * depth, &top) != 0)
			return 0;
		return py_stackref_obj(c, top);
	}
	int32_t stacktop;
	if (L->iframe_stacktop < 0 || py_rd_i32(c, frame + L->iframe_stacktop, &stacktop) != 0 ||
	    stacktop <= 0 || stacktop > (1 << 20) ||
	    py_rd_ptr(c, frame + L->iframe_localsplus + 8 * (uint64_t)(stacktop - 1), &top) != 0)
		return 0;
	return py_stackref_obj(c, top);
}

/* The running coroutine's stack: the frames of a thread of the interpreter
 * from the innermost out to FRAME.  False when no thread runs it. */
static bool running_stack(struct aio *w, struct model_task *m, uint64_t frame)
{
	bool found;
	if (!w->frames_indexed) {
		w->frames_indexed = true;
		for (size_t i = 0; i < w->mi->threads.n; i++) {
			struct model_thread *t = w->mi->threads.items[i];
			for (size_t k = 0; k < t->frames.n; k++) {
				struct model_frame *f = t->frames.items[k];
				if (f->kind != FRAME_PYTHON || !f->frame_address)
					continue;
				struct by_addr *e = addrtab_get(&w->frames_at, f->frame_address, &found);
				if (e && !found) {
					e->p = t;
					e->index = k;
				}
			}
		}
	}
	struct by_addr *e = addrtab_get(&w->frames_at, frame, &found);
	if (!e || !found)
		return false;
	struct model_thread *t = e->p;
	for (size_t j = 0; j <= e->index; j++)
		if (((struct model_frame *)t->frames.items[j])->kind == FRAME_PYTHON)
			ptrvec_push(w->c->a, &m->stack, t->frames.items[j]);
	return true;
}

/* The coroutine chain from CORO inwards into M's stack, innermost first;
 * *RUNNING when the outermost coroutine is executing. */
static void coroutine_stack(struct aio *w, struct model_task *m, uint64_t coro, bool *running)
{
	struct py_ctx *c = w->c;
	struct model_thread chain = { .tid = -1 };
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	*running = false;
	for (int n = 0; coro && n < MAX_CHAIN && kind_of(w, coro) == K_CORO; n++) {
		if (addrtab_add(&seen, coro) != 0) {
			m->error = "the chain of awaited coroutines loops";
			m->error_info = model_err_at(PC_ECORRUPT, coro);
			break;
		}
		bool suspended;
		int8_t state;
		uint64_t frame = gen_frame(w, coro, &suspended, &state);
		if (!frame)
			break;
		if (!suspended) {
			/* executing (3.8, 3.9: no f_stacktop; later: state 0): the
			 * thread running it holds the rest of the stack; else just
			 * created, awaiting nothing yet (3.15: state 0 is created,
			 * or executing in a pre-release counting as 3.14 does; a
			 * created frame is on no thread's stack) */
			bool executing = c->L->minor <= 9 || state == 0 ||
					 (c->L->minor >= 11 && state == states_of(c->L->minor, state)->executing);
			if (n == 0 && executing && running_stack(w, m, frame))
				*running = true;
			else
				py_read_frame(c, &chain, frame);
			break;
		}
		py_read_frame(c, &chain, frame);
		coro = awaited(w, frame, state);
	}
	addrtab_free(&seen);
	if (chain.error && !m->error) {
		m->error = chain.error;
		m->error_info = chain.error_info;
	}
	for (size_t i = chain.frames.n; i-- > 0;)
		ptrvec_push(c->a, &m->stack, chain.frames.items[i]);
}

/* ------------------------------------------------------------------------
 * The registries
 * ------------------------------------------------------------------------ */

static struct model_loop *loop_of(struct aio *w, uint64_t loop)
{
	struct py_ctx *c = w->c;
	bool found;
	struct by_addr *e = loop ? addrtab_get(&w->loops_at, loop, &found) : NULL;
	if (e && found)
		return e->p;
	struct model_loop *l = arena_alloc(c->a, sizeof(*l));
	if (!l || ptrvec_push(c->a, &w->mi->loops, l) != 0)
		return NULL;
	l->address = loop;
	l->thread = -1;
	if (e)
		e->p = l;
	return l;
}

static struct task *task_at(struct aio *w, uint64_t addr)
{
	bool found;
	struct by_addr *e = addrtab_get(&w->tasks_at, addr, &found);
	return e && found ? e->p : NULL;
}

static int add_task(struct py_ctx *c, uint64_t obj, uint64_t unused, void *arg)
{
	struct aio *w = arg;
	(void)unused;
	enum kind k = kind_of(w, obj);
	if (!is_task(k))
		return 0;
	if (w->tasks.n >= MAX_TASKS) {
		w->capped = true;
		return 1;
	}
	bool found;
	struct by_addr *e = addrtab_get(&w->tasks_at, obj, &found);
	if (!e || found)
		return 0;
	struct task *t = arena_alloc(c->a, sizeof(*t));
	struct model_task *m = arena_alloc(c->a, sizeof(*m));
	if (!t || !m || ptrvec_push(c->a, &w->tasks, t) != 0)
		return 1;
	e->p = t;
	t->m = m;
	m->address = obj;
	if (read_future(w, obj, k, &t->f) != 0) {
		m->error = "the task object is not captured";
		m->error_info = model_err_at(PC_ENOTCAPTURED, obj);
		m->state = NULL;
	}
	t->loop = loop_of(w, t->f.loop);
	if (t->loop)
		ptrvec_push(c->a, &t->loop->tasks, m);
	return 0;
}

/* A weak reference in a WeakSet's data: its referent. */
static int add_weak_task(struct py_ctx *c, uint64_t ref, uint64_t unused, void *arg)
{
	struct aio *w = arg;
	uint64_t obj;
	(void)unused;
	if (py_rd_ptr(c, ref + w->hdr, &obj) != 0 || !obj)
		return 0;
	return add_task(c, obj, 0, arg);
}

/* The tasks of weakref.WeakSet WS. */
static void weakset_tasks(struct aio *w, uint64_t ws)
{
	struct py_ctx *c = w->c;
	uint64_t data = py_attr(c, ws, "data");
	if (!data || py_type_of(c, data, NULL) != PYT_SET || py_set_items(c, data, MAX_TASKS, add_weak_task, w) != 0) {
		model_warn(c->r, "interpreter %lld: asyncio's task registry is not captured whole",
			   (long long)w->mi->id);
		c->r->incomplete = true;
	}
}

/* _current_tasks: loop -> the task it runs now. */
static int current_task(struct py_ctx *c, uint64_t loop, uint64_t task, void *arg)
{
	struct aio *w = arg;
	add_task(c, task, 0, w);
	struct task *t = task_at(w, task);
	if (t && t->f.loop == loop)
		t->current = true;
	return 0;
}

/* 3.14+: the C tasks linked into the list whose head node is at HEAD. */
static void linked_tasks(struct aio *w, uint64_t head, const char *whose)
{
	struct py_ctx *c = w->c;
	uint64_t node_at = w->hdr + (uint64_t)w->tl.task_node, node, prev = head;
	if (py_rd_ptr(c, head, &node) != 0)
		goto broken;
	for (size_t n = 0; node != head; n++) {
		uint64_t back, task = node - node_at;
		/* each node's prev is the one before: the list is whole */
		if (n >= MAX_TASKS || !node || py_rd_ptr(c, node + 8, &back) != 0 || back != prev ||
		    !is_task(kind_of(w, task)))
			goto broken;
		if (add_task(c, task, 0, w) != 0)
			return;
		prev = node;
		if (py_rd_ptr(c, node, &node) != 0)
			goto broken;
	}
	return;
broken:
	model_warn(c->r, "interpreter %lld: the asyncio task list of %s is not captured whole",
		   (long long)w->mi->id, whose);
	c->r->incomplete = true;
}

/* 3.14+: every thread's C tasks, and those of threads gone. */
static void thread_task_lists(struct aio *w, uint64_t interp)
{
	struct py_ctx *c = w->c;
	const struct py_layout *L = c->L;
	const struct task_lists *tl = &w->tl;
	uint64_t ts;
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	if (py_rd_ptr(c, interp + L->interp_tstate_head, &ts) != 0)
		ts = 0;
	for (int k = 0; ts && k < PY_MAX_THREADS && addrtab_add(&seen, ts) == 0; k++) {
		uint64_t running;
		linked_tasks(w, ts + (uint64_t)tl->tstate_head, "a thread");
		if (py_rd_ptr(c, ts + (uint64_t)tl->tstate_running_task, &running) == 0 && running) {
			struct task *t = task_at(w, running);
			if (t)
				t->current = true;
		}
		if (py_rd_ptr(c, ts + L->tstate_next, &ts) != 0)
			break;
	}
	addrtab_free(&seen);
	linked_tasks(w, interp + (uint64_t)tl->interp_head, "the interpreter");
}

/* Which thread runs loop L: its _thread_id, an ident. */
static void loop_thread(struct aio *w, struct model_loop *l)
{
	struct py_ctx *c = w->c;
	uint64_t id = py_attr(c, l->address, "_thread_id");
	int64_t ident;
	if (!id || py_type_of(c, id, NULL) != PYT_INT || py_long_i64(c, id, &ident) != 0 || !ident)
		return;
	for (size_t i = 0; i < w->mi->threads.n; i++) {
		const struct model_thread *t = w->mi->threads.items[i];
		if (t->ident == (uint64_t)ident) {
			l->thread = t->tid;
			l->thread_name = t->name;
			return;
		}
	}
}

/* ------------------------------------------------------------------------
 * Who awaits whom
 * ------------------------------------------------------------------------ */

static void link(struct aio *w, struct task *waiter, uint64_t addr, struct addrtab *linked)
{
	struct task *t = task_at(w, addr);
	if (!t || addrtab_add(linked, addr) != 0)
		return;
	ptrvec_push(w->c->a, &waiter->m->awaiting, t->m);
	ptrvec_push(w->c->a, &t->m->awaited_by, waiter->m);
}

/* The tasks FUT stands for: itself, or (gather) its children's. */
static void awaits(struct aio *w, struct task *waiter, uint64_t fut, int depth, size_t *budget,
		   struct addrtab *linked)
{
	struct py_ctx *c = w->c;
	enum kind k = kind_of(w, fut);
	if (is_task(k)) {
		link(w, waiter, fut, linked);
		return;
	}
	if (!is_future(k) || depth >= MAX_GATHER_DEPTH)
		return;
	uint64_t list = py_attr(c, fut, "_children"), items;
	int64_t n;
	if (!list || py_type_of(c, list, NULL) != PYT_LIST ||
	    py_rd_i64(c, list + c->L->var_size, &n) != 0 || n < 0 ||
	    py_rd_ptr(c, list + c->L->list_item, &items) != 0)
		return;
	for (int64_t i = 0; i < n && *budget; i++, (*budget)--) {
		uint64_t child;
		if (py_rd_ptr(c, items + 8 * (uint64_t)i, &child) != 0)
			return;
		awaits(w, waiter, child, depth + 1, budget, linked);
	}
}

/* The TaskGroup whose __aexit__ (3.11, 3.12; _aexit from 3.13, called by
 * it; Lib/asyncio/taskgroups.py) one of M's frames runs: that frame's self,
 * a TaskGroup waiting for its children, the set _tasks.  0 none. */
static uint64_t task_group(struct aio *w, const struct model_task *m)
{
	struct py_ctx *c = w->c;
	for (size_t i = 0; c->L->minor >= 11 && i < m->stack.n; i++) {
		const struct model_frame *f = m->stack.items[i];
		uint64_t self, type;
		if (!f->file || !f->function || !f->frame_address || strcmp(pc_basename(f->file), "taskgroups.py") != 0 ||
		    (strcmp(f->function, "__aexit__") != 0 && strcmp(f->function, "_aexit") != 0))
			continue;
		self = py_frame_arg0(c, f->frame_address);
		const char *tn = self && py_type_of(c, self, &type) == PYT_OTHER ? py_type_name(c, type) : NULL;
		if (tn && strcmp(tn, "asyncio.taskgroups.TaskGroup") == 0)
			return self;
	}
	return 0;
}

struct group_link {
	struct aio *w;
	struct task *parent;
	struct addrtab *linked;
};

static int group_child(struct py_ctx *c, uint64_t child, uint64_t unused, void *arg)
{
	struct group_link *g = arg;
	(void)c;
	(void)unused;
	link(g->w, g->parent, child, g->linked);
	return 0;
}

/* ------------------------------------------------------------------------
 * Each task
 * ------------------------------------------------------------------------ */

static void describe(struct aio *w, struct task *t)
{
	struct py_ctx *c = w->c;
	struct model_task *m = t->m;
	const struct fut *f = &t->f;
	const char *why;
	if (f->name) {
		int64_t n;
		enum py_type pt = py_type_of(c, f->name, NULL);
		if (pt == PYT_STR)
			m->name = py_str_utf8(c, f->name, PY_MAX_NAME, &why);
		else if (pt == PYT_INT && py_long_i64(c, f->name, &n) == 0)
			m->name = arena_printf(c->a, "Task-%lld", (long long)n);
	}
	switch (f->state) {
	case FUT_PENDING: {
		bool cancelling = f->cancels > 0;
		if (!cancelling && c->L->minor <= 10 && f->fut_waiter) {
			/* before 3.11 cancel() of a waiting task cancels only the future
			 * it waits on */
			struct fut wf;
			enum kind k = kind_of(w, f->fut_waiter);
			cancelling = is_future(k) && read_future(w, f->fut_waiter, k, &wf) == 0 &&
				     wf.state == FUT_CANCELLED;
		}
		m->state = cancelling ? "cancelling" : "pending";
		break;
	}
	case FUT_CANCELLED: m->state = "cancelled"; break;
	case FUT_FINISHED: m->state = "done"; break;
	default:
		if (!m->error) {
			m->error = "the task's state is not one asyncio writes";
			m->error_info = model_err_at(PC_ECORRUPT, m->address);
		}
	}
	if (f->state == FUT_FINISHED) {
		static const struct repr_limits lim = { 256, 100, 8 };
		uint64_t type;
		if (f->has_result && f->result) {
			const char *err = NULL;
			m->result = py_repr(c, f->result, &lim, &err);
		} else if (py_type_of(c, f->exception, &type) == PYT_OTHER) {
			const char *err = NULL;
			m->exception_type = py_type_name(c, type);
			m->exception_message = py_exception_message(c, f->exception, &err);
		}
	}
	if (f->fut_waiter && py_type_of(c, f->fut_waiter, NULL) != PYT_NONE) {
		uint64_t type;
		if (py_type_of(c, f->fut_waiter, &type) != PYT_UNREADABLE) {
			m->waiter = f->fut_waiter;
			m->waiter_type = py_type_name(c, type);
		}
	}
	uint64_t q;
	if (f->coro && kind_of(w, f->coro) == K_CORO &&
	    py_rd_ptr(c, f->coro + w->hdr + (uint64_t)w->gl->qualname, &q) == 0)
		m->coroutine = py_str_utf8(c, q, PY_MAX_NAME, &why);
	if (f->state == FUT_PENDING && f->coro) {
		bool running;
		coroutine_stack(w, m, f->coro, &running);
		m->running = running || t->current;
		t->group = task_group(w, m);
	}
}

void py_find_asyncio_offsets(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct py_asyncio_offsets o;
	if (c->L->minor < 14)
		return;
	for (size_t i = 0; i <= c->d->nmodules; i++) {
		struct dump_module *m = i < c->d->nmodules ? &c->d->modules[i] : interp_module;
		const char *slash = m && m->path ? strrchr(m->path, '/') : NULL;
		const char *base = slash ? slash + 1 : m ? m->path : NULL;
		if (i < c->d->nmodules && (!base || strncmp(base, "_asyncio.", 9) != 0))
			continue;
		if (m && symbols_section(s, m, ".AsyncioDebug", &o, sizeof(o)) == (long)sizeof(o)) {
			c->aio_offsets = arena_alloc(c->a, sizeof(o));
			if (c->aio_offsets)
				*c->aio_offsets = o;
			return;
		}
	}
	/* a build pycore's tables do not describe (a pre-release): its DWARF */
	static const char *const alts[] = {
		"_PyThreadStateImpl:asyncio_tasks_head|struct _PyThreadStateImpl:asyncio_tasks_head",
		"_PyThreadStateImpl:asyncio_running_task|struct _PyThreadStateImpl:asyncio_running_task",
		"struct _is:asyncio_tasks_head",
	};
	int64_t v[3];
	struct Dwarf *dw = c->layout_from_dwarf && interp_module ? symbols_dwarf(s, interp_module) : NULL;
	if (!dw || py_dwarf_values(dw, alts, 3, v) != 0 || v[0] < 0 || v[1] < 0 || v[2] < 0 ||
	    v[0] > (1 << 20) || v[1] > (1 << 20) || v[2] > (1 << 24))
		return;
	c->aio_dwarf = arena_alloc(c->a, sizeof(*c->aio_dwarf));
	if (c->aio_dwarf)
		*c->aio_dwarf = (struct py_aio_lists){ v[0], v[1], v[2] };
}

/* 3.14+: where the task lists are (W->tl): the module's debug offsets when
 * found, if they agree with fut_layouts on where a task's coroutine and
 * name are; else the table, its thread and interpreter state offsets from
 * the interpreter's DWARF where pycore's layout is that DWARF's.  Returns -1 when they disagree. */
static int task_lists_of(struct aio *w)
{
	const struct py_asyncio_offsets *o = w->c->aio_offsets;
	unsigned minor = w->c->L->minor;
	if (!o) {
		w->tl = py_layout_free_threaded(w->c->L) ? task_lists_ft[minor] : task_lists[minor];
		const struct py_aio_lists *d = w->c->aio_dwarf;
		if (d) {
			w->tl.tstate_head = (int)d->tstate_head;
			w->tl.tstate_running_task = (int)d->tstate_running_task;
			w->tl.interp_head = (int)d->interp_head;
		}
		return 0;
	}
	if (o->task_coro != w->hdr + (uint64_t)w->fl->coro || o->task_name != w->hdr + (uint64_t)w->fl->name ||
	    o->task_node < w->hdr || o->task_node + 16 > o->task_size || o->task_size > 4096 ||
	    o->tstate_tasks_head + 16 > o->tstate_size || o->tstate_running_task + 8 > o->tstate_size ||
	    o->tstate_size > (1 << 20) || o->interp_tasks_head + 16 > o->interp_size || o->interp_size > (1 << 24))
		return -1;
	w->tl = (struct task_lists){ (int)(o->task_node - w->hdr), (int)o->tstate_tasks_head,
				     (int)o->tstate_running_task, (int)o->interp_tasks_head };
	return 0;
}

void py_asyncio(struct py_ctx *c, uint64_t interp, struct model_interp *mi)
{
	const struct py_layout *L = c->L;
	uint64_t dict, set, current;
	if (py_module_dict(c, interp, "asyncio.tasks", &dict) != 0) {
		mi->asyncio_read = true; /* asyncio not imported: no loops */
		return;
	}
	if (L->minor < 8 || L->minor > 15) {
		model_warn(c->r, "interpreter %lld: asyncio tasks are not read for Python 3.%u", (long long)mi->id,
			   L->minor);
		return;
	}
	struct aio w = { .c = c, .mi = mi, .hdr = (uint64_t)L->object_type + 8, .fl = &fut_layouts[L->minor],
			 .gl = &gen_layouts[L->minor], .tasks_at = ADDRTAB_INIT(struct by_addr),
			 .loops_at = ADDRTAB_INIT(struct by_addr), .kinds = ADDRTAB_INIT(struct type_kind),
			 .frames_at = ADDRTAB_INIT(struct by_addr) };
	if (L->minor >= 14 && task_lists_of(&w) != 0) {
		model_warn(c->r, "interpreter %lld: asyncio tasks are not read: the _asyncio module's debug "
			   "offsets do not describe the task layout pycore knows for 3.%u", (long long)mi->id, L->minor);
		return;
	}
	mi->asyncio_read = true;
	/* the module's registries, in one pass over its dict */
	const char *names[3] = { L->minor <= 11 ? "_all_tasks" : "_scheduled_tasks", "_current_tasks",
				 "_eager_tasks" };
	uint64_t reg[3];
	py_dict_get_strs(c, dict, names, reg, L->minor >= 12 ? 3 : 2);
	if ((set = reg[0]) != 0)
		weakset_tasks(&w, set);
	if (L->minor >= 12 && (set = reg[2]) != 0 && py_type_of(c, set, NULL) == PYT_SET)
		py_set_items(c, set, MAX_TASKS, add_task, &w);
	if (L->minor >= 14)
		thread_task_lists(&w, interp);
	if ((current = reg[1]) != 0 && py_type_of(c, current, NULL) == PYT_DICT)
		py_dict_items(c, current, current_task, &w);
	if (w.capped)
		model_warn(c->r, "interpreter %lld: more than %d asyncio tasks; the rest are left out",
			   (long long)mi->id, MAX_TASKS);
	for (size_t i = 0; i < mi->loops.n; i++)
		loop_thread(&w, mi->loops.items[i]);
	size_t budget = MAX_CHILDREN;
	for (size_t i = 0; i < w.tasks.n && !py_out_of_time(c); i++) {
		struct task *t = w.tasks.items[i];
		describe(&w, t);
		struct addrtab linked = ADDRTAB_INIT(uint64_t);
		if (t->f.state == FUT_PENDING && t->f.fut_waiter)
			awaits(&w, t, t->f.fut_waiter, 0, &budget, &linked);
		uint64_t children = t->group ? py_attr(c, t->group, "_tasks") : 0;
		if (children && py_type_of(c, children, NULL) == PYT_SET) {
			struct group_link g = { &w, t, &linked };
			py_set_items(c, children, MAX_CHILDREN, group_child, &g);
		}
		addrtab_free(&linked);
	}
	addrtab_free(&w.tasks_at);
	addrtab_free(&w.loops_at);
	addrtab_free(&w.kinds);
	addrtab_free(&w.frames_at);
}
