/* The frame walk: one thread's Python frames, innermost first.
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
 *   (py_stackref_obj, python_int.h).
 */
#include "util/addrtab.h"
#include "python/walk/walk.h"

#include <stdint.h>
#include <stdlib.h>

#define FRAME_OWNED_BY_GENERATOR 1
#define FRAME_OWNED_BY_SHIM      3   /* CSTACK in 3.12, 3.13; INTERPRETER in 3.14, 3.15 */

/* The highest owner value a version defines. */
static unsigned max_owner(unsigned minor)
{
	return minor == 14 ? 4 : 3;
}

static struct model_frame *add_frame(struct py_ctx *c, struct model_thread *t, uint64_t frame,
				     const struct py_code *pc, int64_t pos)
{
	struct model_frame *f = arena_alloc(c->a, sizeof(*f));
	if (!f || ptrvec_push(c->a, &t->frames, f) != 0)
		return NULL;
	f->kind = FRAME_PYTHON;
	f->function = pc->name;
	f->qualname = pc->qualname;
	f->file = pc->filename;
	py_code_locate(c, pc, pos, f);
	f->instruction = pos;
	f->frame_address = frame;
	return f;
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
static bool frame_visit(struct py_ctx *c, struct model_thread *t, struct addrtab *seen, uint64_t frame)
{
	if (py_out_of_time(c)) {
		py_thread_error(c, t, model_err(PC_ETIMEOUT), "the time budget ran out here");
		return false;
	}
	if (t->frames.n >= PY_MAX_FRAMES) {
		py_thread_error(c, t, model_err(PC_ELIMIT), arena_printf(c->a, "stack cut at %d frames", PY_MAX_FRAMES));
		return false;
	}
	if (addrtab_add(seen, frame) != 0) {
		py_thread_error(c, t, model_err_at(PC_ECORRUPT, frame), arena_printf(c->a, "frame chain loops back to 0x%llx",
						   (unsigned long long)frame));
		return false;
	}
	return true;
}

/* Up to 3.10: PyFrameObject chains. */
static void walk_frame_objects(struct py_ctx *c, struct model_thread *t, uint64_t frame, size_t max)
{
	const struct py_layout *L = c->L;
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	while (frame && t->frames.n < max) {
		if (!frame_visit(c, t, &seen, frame))
			break;
		uint64_t code, back;
		int32_t lasti;
		if (py_rd_ptr(c, frame + L->frame_code, &code) != 0 ||
		    py_rd_ptr(c, frame + L->frame_back, &back) != 0 ||
		    py_rd_i32(c, frame + L->frame_lasti, &lasti) != 0) {
			py_thread_error(c, t, model_err_at(PC_ENOTCAPTURED, frame), arena_printf(c->a, "frame at 0x%llx not captured",
							   (unsigned long long)frame));
			break;
		}
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error) {
			py_thread_error(c, t, pc ? pc->error_info : model_err(PC_ENOMEM), arena_printf(c->a, "frame at 0x%llx: %s", (unsigned long long)frame,
							   pc ? pc->error : "out of memory"));
			break;
		}
		struct model_frame *f = add_frame(c, t, frame, pc, lasti);
		if (!f)
			break;
		f->eval_entry = true; /* up to 3.10, one eval loop call per frame */
		frame_locals(c, t, f, frame, code);
		frame = back;
	}
	addrtab_free(&seen);
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

#define FRAME_OWNED_BY_THREAD 0   /* on the thread's data stack */

/* How a 3.11+ chain ended: its last frame on the data stack, and whether
 * it ended at a NULL link (rather than at a frame it could not read). */
struct walk_end {
	uint64_t last_data;
	bool natural;
	uint64_t zeroed;             /* an entry frame that reads as zeros, ending the chain */
};

/* 3.11+: _PyInterpreterFrame chains. */
static void walk_interpreter_frames(struct py_ctx *c, struct model_thread *t, uint64_t frame, size_t max,
				    struct walk_end *end)
{
	const struct py_layout *L = c->L;
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	*end = (struct walk_end){ 0, false, 0 };
	while (frame && t->frames.n < max) {
		if (!frame_visit(c, t, &seen, frame))
			break;
		uint64_t code, prev, instr;
		uint8_t owner;
		if (py_rd_ptr(c, frame + L->iframe_previous, &prev) != 0 ||
		    py_rd_ptr(c, frame + L->iframe_code, &code) != 0 ||
		    py_rd_ptr(c, frame + L->iframe_instr, &instr) != 0 ||
		    dump_read(c->d, frame + L->iframe_owner, &owner, 1) != PC_OK) {
			py_thread_error(c, t, model_err_at(PC_ENOTCAPTURED, frame), arena_printf(c->a, "interpreter frame at 0x%llx not captured",
							   (unsigned long long)frame));
			break;
		}
		if (!code && !prev && !instr && !owner) {
			/* 3.12+ keep each eval loop call's entry frame on the C
			 * stack: a dump that holds that stack as zeros (gdb's gcore
			 * of a process in another mount namespace writes such) ends
			 * the chain here; check_chain_end says what that costs */
			end->zeroed = frame;
			break;
		}
		code = py_stackref_obj(c, code);
		if (owner == FRAME_OWNED_BY_THREAD)
			end->last_data = frame;
		if (L->minor >= 12 && owner >= FRAME_OWNED_BY_SHIM && owner <= max_owner(L->minor)) {
			/* the shim an eval loop call starts with: the frame inside it
			 * is the first that call ran */
			if (t->frames.n) {
				struct model_frame *last = t->frames.items[t->frames.n - 1];
				last->eval_entry = true;
				/* the first shim after the group is its call's own
				 * (3.15's base frame follows the outermost one's) */
				if (!last->entry_frame)
					last->entry_frame = frame;
			}
			frame = prev;
			continue;
		}
		if (owner > max_owner(L->minor)) {
			py_thread_error(c, t, model_err_at(PC_ECORRUPT, frame), arena_printf(c->a, "interpreter frame at 0x%llx has unknown owner %u",
							   (unsigned long long)frame, owner));
			break;
		}
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error) {
			py_thread_error(c, t, pc ? pc->error_info : model_err(PC_ENOMEM), arena_printf(c->a, "interpreter frame at 0x%llx: %s",
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
		struct model_frame *f = add_frame(c, t, frame, pc, unit);
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
	end->natural = frame == 0;
	addrtab_free(&seen);
}

/* A thread's first frame is pushed at the bottom of its data stack: the
 * root chunk's data[1] (CPython's push_chunk keeps data[0] of the root
 * chunk unused, so that popping the first frame never frees the chunk;
 * _PyStackChunk is {previous, size, top, data[]}, Include/internal/
 * pycore_pystate.h, 3.11-3.15).  A chain that ends at a NULL link anywhere
 * else has lost its outer frames: memory the dump holds wrong, or a link
 * through a frame that was not captured as it was. */
#define STACK_CHUNK_DATA 24
#define MAX_STACK_CHUNKS 65536

#define MAX_RECOVERED 4096

/* The thread's data stack, bottom chunk first: CHUNKS[i] and where its
 * frames end, TOPS[i] (the current chunk's is the thread state's
 * datastack_top; an older chunk keeps its own top, in words from data[0]).
 * Returns the number of chunks, 0 when it cannot be read. */
static size_t stack_chunks(struct py_ctx *c, uint64_t ts, uint64_t *chunks, uint64_t *tops, size_t max)
{
	const struct py_layout *L = c->L;
	uint64_t chunk, top;
	size_t n = 0;
	if (L->tstate_datastack_chunk < 0 ||
	    py_rd_ptr(c, ts + (uint64_t)L->tstate_datastack_chunk, &chunk) != PC_OK || !chunk)
		return 0;
	while (chunk && n < max) {
		uint64_t prev, words;
		if (py_rd_ptr(c, chunk, &prev) != PC_OK)
			return 0;
		if (n == 0) {
			if (L->tstate_datastack_top < 0 ||
			    py_rd_ptr(c, ts + (uint64_t)L->tstate_datastack_top, &top) != PC_OK)
				top = 0; /* where the current chunk's frames end: unknown */
		} else if (py_rd_ptr(c, chunk + 16, &words) != PC_OK || words > (1u << 24)) {
			return 0;
		} else {
			top = chunk + STACK_CHUNK_DATA + 8 * words;
		}
		chunks[n] = chunk;
		tops[n++] = top;
		chunk = prev;
	}
	if (chunk)
		return 0;
	for (size_t i = 0; i < n / 2; i++) { /* bottom first */
		uint64_t a = chunks[i], b = tops[i];
		chunks[i] = chunks[n - 1 - i];
		tops[i] = tops[n - 1 - i];
		chunks[n - 1 - i] = a;
		tops[n - 1 - i] = b;
	}
	return n;
}

/* The words a frame of CODE takes on the data stack: co_framesize from
 * 3.12; in 3.11, which has no such field, what _PyFrame_PushUnchecked
 * bumps the stack by, co_nlocalsplus + co_stacksize + FRAME_SPECIALS_SIZE,
 * the last being the words of _PyInterpreterFrame before localsplus
 * (3.11's Include/internal/pycore_frame.h).  0 when it cannot be read. */
static int32_t frame_words(struct py_ctx *c, uint64_t code)
{
	const struct py_layout *L = c->L;
	int32_t words = 0, nlocalsplus, stacksize;
	if (L->code_framesize >= 0) {
		if (py_rd_i32(c, code + L->code_framesize, &words) != PC_OK)
			return 0;
	} else if (L->minor == 11 && L->code_nlocalsplus >= 0 && L->code_stacksize >= 0 &&
		   L->iframe_localsplus >= 0) {
		if (py_rd_i32(c, code + L->code_nlocalsplus, &nlocalsplus) != PC_OK ||
		    py_rd_i32(c, code + L->code_stacksize, &stacksize) != PC_OK || nlocalsplus < 0 ||
		    stacksize < 0 || nlocalsplus > (1 << 20) || stacksize > (1 << 20))
			return 0;
		words = (int32_t)(L->iframe_localsplus / 8) + nlocalsplus + stacksize;
	}
	return words > 0 && words <= (1 << 20) ? words : 0;
}

/* A thread's data stack as stack_chunks reads it: its NCHUNKS chunks,
 * bottom first, and where each one's frames end. */
struct data_stack {
	uint64_t chunks[64], tops[64];
	size_t nchunks;
};

/* 3.11+: the frames on the data stack S, from its bottom up to LAST, the
 * chain's last frame there (0: the chain gave none, so up to the top of the
 * stack): each frame's successor begins where its frame_words() end.  They
 * are appended (innermost first, marked recovered) when the walk reaches
 * LAST, or the stack's recorded top, exactly; else nothing is added.
 * Returns how many were. */
static size_t recover_outer(struct py_ctx *c, struct model_thread *t, const struct data_stack *s, uint64_t last)
{
	const struct py_layout *L = c->L;
	const uint64_t *chunks = s->chunks, *tops = s->tops;
	uint64_t found[MAX_RECOVERED];
	size_t nchunks = s->nchunks, n = 0;
	bool joined = false;
	for (size_t i = 0; i < nchunks && !joined; i++) {
		uint64_t f = chunks[i] + STACK_CHUNK_DATA + (i == 0 ? 8 : 0);
		uint64_t end = tops[i] ? tops[i] : chunks[i] + STACK_CHUNK_DATA + (1u << 20);
		if (!last && !tops[i])
			break; /* where the stack ends is unknown: nothing to join */
		while (n < MAX_RECOVERED) {
			if (last ? f == last : i + 1 == nchunks && f == end) {
				joined = true;
				break;
			}
			if (f >= end)
				break;
			uint64_t code;
			int32_t words;
			if (py_rd_ptr(c, f + L->iframe_code, &code) != PC_OK ||
			    !(words = frame_words(c, py_stackref_obj(c, code))))
				break; /* not a frame: the rest of this chunk is not used */
			found[n++] = f;
			f += 8 * (uint64_t)words;
		}
	}
	if (!joined)
		return 0;
	size_t added = 0;
	for (size_t k = n; k-- > 0;) {
		uint64_t code, instr;
		if (py_rd_ptr(c, found[k] + L->iframe_code, &code) != PC_OK ||
		    py_rd_ptr(c, found[k] + L->iframe_instr, &instr) != PC_OK)
			continue;
		code = py_stackref_obj(c, code);
		const struct py_code *pc = py_code_get(c, code);
		if (!pc || pc->error)
			continue;
		uint64_t start = bytecode_start(c, found[k], code);
		int64_t unit = instr >= start ? (int64_t)((instr - start) / 2) : -1;
		if (unit < pc->firsttraceable)
			continue; /* still setting up: not on the stack as Python sees it */
		struct model_frame *f = add_frame(c, t, found[k], pc, unit);
		if (!f)
			break;
		f->recovered = true;
		frame_locals(c, t, f, found[k], code);
		added++;
	}
	return added;
}

/* Where the chain ended, against where it must (the bottom of the data
 * stack): said, and what can be recovered, recovered. */
static void check_chain_end(struct py_ctx *c, struct model_thread *t, uint64_t ts, const struct walk_end *end)
{
	struct data_stack s;
	s.nchunks = end->last_data || end->zeroed ? stack_chunks(c, ts, s.chunks, s.tops, 64) : 0;
	uint64_t first = s.nchunks ? s.chunks[0] + STACK_CHUNK_DATA + 8 : 0;
	const char *why = NULL;
	struct model_error_info info = model_err(PC_ECORRUPT);
	if (end->zeroed) {
		info = model_err_at(PC_ENOTCAPTURED, end->zeroed);
		int64_t on = dump_tid_of_stack_address(c->d, end->zeroed);
		why = on >= 0 ? arena_printf(c->a, "interpreter frame at 0x%llx, on thread %lld's C stack, reads as "
					     "zeros: the dump does not hold that stack", (unsigned long long)end->zeroed,
					     (long long)on)
			      : arena_printf(c->a, "interpreter frame at 0x%llx reads as zeros",
					     (unsigned long long)end->zeroed);
		if (first && end->last_data == first) {
			/* the chain had reached the thread's first frame: no
			 * Python frame is missing, only the C stack is */
			model_warn(c->r, "thread %lld: %s; the chain had reached the thread's first frame, so "
				   "no Python frame is missing", (long long)t->tid, why);
			return;
		}
	} else if (!end->natural || !end->last_data || !first || end->last_data == first) {
		return; /* complete, stopped for a reason said already, or cannot tell */
	} else {
		info = model_err_at(PC_ECORRUPT, end->last_data);
		why = arena_printf(c->a, "the frame chain ends at 0x%llx, not at the thread's first frame "
				   "(0x%llx, the bottom of its data stack)", (unsigned long long)end->last_data,
				   (unsigned long long)first);
	}
	size_t got = first ? recover_outer(c, t, &s, end->last_data) : 0;
	py_thread_error(c, t, info, got ? arena_printf(c->a, "%s; %zu outer frames recovered from the thread's data "
						 "stack (marked recovered)", why, got)
				  : arena_printf(c->a, "%s: outer frames are missing", why));
}

/* The error WHY (of kind INFO) on T, and the frames of its data stack S
 * recovered. */
static void recover_thread(struct py_ctx *c, struct model_thread *t, const struct data_stack *s,
			   struct model_error_info info, const char *why)
{
	size_t got = s->nchunks ? recover_outer(c, t, s, 0) : 0;
	py_thread_error(c, t, info, got ? arena_printf(c->a, "%s; %zu frames recovered from the thread's data stack "
						 "(marked recovered; frames that generators and coroutines run "
						 "are kept outside it and cannot be)", why, got)
				  : arena_printf(c->a, "%s: its frames are missing", why));
}

void py_recover_thread(struct py_ctx *c, struct model_thread *t, uint64_t ts, struct model_error_info info,
		       const char *why)
{
	struct data_stack s;
	s.nchunks = c->L->minor >= 11 ? stack_chunks(c, ts, s.chunks, s.tops, 64) : 0;
	recover_thread(c, t, &s, info, why);
}

/* 3.11+: a thread whose current frame is NULL though its data stack holds
 * frames (3.11 and 3.12 reach the current frame through a _PyCFrame on the
 * C stack, at VIA: a dump that holds that stack as zeros reads NULL). */
static void check_null_start(struct py_ctx *c, struct model_thread *t, uint64_t ts, uint64_t via)
{
	struct data_stack s;
	size_t n = s.nchunks = stack_chunks(c, ts, s.chunks, s.tops, 64);
	if (!n || !s.tops[n - 1] || (n == 1 && s.tops[0] <= s.chunks[0] + STACK_CHUNK_DATA + 8))
		return; /* an empty data stack: no Python frame runs, as the NULL says */
	int64_t on = via ? dump_tid_of_stack_address(c->d, via) : -1;
	/* through VIA, a C stack the dump holds as zeros: not captured there;
	 * else a NULL over a data stack that holds frames: corrupt */
	struct model_error_info info = via ? model_err_at(PC_ENOTCAPTURED, via) : model_err(PC_ECORRUPT);
	recover_thread(c, t, &s, info, on >= 0 ? arena_printf(c->a, "the current frame, read through the _PyCFrame "
							   "at 0x%llx on thread %lld's C stack, is NULL, yet "
							   "the thread's data stack holds frames: the dump "
							   "does not hold that stack as it was",
							   (unsigned long long)via, (long long)on)
						 : "the current frame is NULL, yet the thread's data stack holds frames");
}

void py_walk_frames(struct py_ctx *c, struct model_thread *t, uint64_t ts, uint64_t frame, uint64_t via)
{
	struct walk_end end;
	if (c->L->minor <= 10) {
		walk_frame_objects(c, t, frame, SIZE_MAX);
		return;
	}
	if (!frame) {
		check_null_start(c, t, ts, via);
		return;
	}
	walk_interpreter_frames(c, t, frame, SIZE_MAX, &end);
	check_chain_end(c, t, ts, &end);
}

void py_walk_frame_chain(struct py_ctx *c, struct model_thread *t, uint64_t frame)
{
	if (c->L->minor <= 10)
		walk_frame_objects(c, t, frame, SIZE_MAX);
	else
		walk_interpreter_frames(c, t, frame, SIZE_MAX, &(struct walk_end){ 0, false, 0 });
}

void py_read_frame(struct py_ctx *c, struct model_thread *t, uint64_t frame)
{
	size_t max = t->frames.n + 1;
	if (c->L->minor <= 10)
		walk_frame_objects(c, t, frame, max);
	else
		walk_interpreter_frames(c, t, frame, max, &(struct walk_end){ 0, false, 0 });
}

/* The frame's first argument (fast local 0), through its cell. */
uint64_t py_frame_arg0(struct py_ctx *c, uint64_t frame)
{
	const struct py_layout *L = c->L;
	uint64_t v;
	int64_t off = L->frame_code >= 0 ? L->frame_localsplus : L->iframe_localsplus;
	if (py_rd_ptr(c, frame + (uint64_t)off, &v) != 0)
		return 0;
	v = L->frame_code >= 0 ? v : py_stackref_obj(c, v);
	if (v && py_type_of(c, v, NULL) == PYT_CELL && py_rd_ptr(c, v + L->cell_ref, &v) != 0)
		return 0;
	return v;
}
