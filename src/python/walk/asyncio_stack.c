/* A task's coroutine stack: the chain of coroutines it awaits, read from
 * each suspended one's frame, or, while it runs, the frames of the
 * thread that runs it.
 *
 * Facts used, by version (CPython 3.8 to 3.15; Include/cpython/genobject.h,
 * Include/internal/pycore_frame.h, Include/opcode.h of each version):
 * - a coroutine or generator object (aio_gen_layouts below, from PyGenObject
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
#include "python/walk/asyncio.h"

#define MAX_CHAIN         1024     /* coroutines awaiting one another */

const struct gen_layout aio_gen_layouts[16] = {
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

void aio_coroutine_stack(struct aio *w, struct model_task *m, uint64_t coro, bool *running)
{
	struct py_ctx *c = w->c;
	struct model_thread chain = { .tid = -1 };
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	*running = false;
	for (int n = 0; coro && n < MAX_CHAIN && aio_kind_of(w, coro) == K_CORO; n++) {
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
