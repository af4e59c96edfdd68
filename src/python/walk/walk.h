/* The walkers: interpreters, threads, frames, locals, native stacks, asyncio
 * tasks and lock waits into the model; only walk.c is called from outside. */
#ifndef PYCORE_PYTHON_WALK_H
#define PYCORE_PYTHON_WALK_H

#include "python/repr/repr.h"

/* ---- interp.c ---- */

/* Every interpreter from HEAD on, with its threads, into c->r. */
void py_walk_interpreters(struct py_ctx *c, uint64_t runtime, uint64_t head, uint64_t tstate_current);
/* With --native, after weaving: the <GC> marker on the thread whose native
 * stack runs the collector, where no thread holds the GIL. */
void py_gc_after_native(struct py_ctx *c);

/* ---- frames.c ---- */

/* One thread's Python frames from FRAME (the newest) outwards, TS its
 * thread state (3.11+: where the chain must end is checked), VIA where
 * FRAME was read from when that is not the thread state itself (3.11,
 * 3.12: the _PyCFrame), else 0. */
void py_walk_frames(struct py_ctx *c, struct model_thread *t, uint64_t ts, uint64_t frame, uint64_t via);
/* A thread whose current frame cannot be had (WHY says how, INFO its
 * kind and address): the error WHY, and (3.11+) the frames on its data stack, from the bottom to the
 * top its thread state records, appended (innermost first) marked
 * recovered when that walk meets the top exactly; the error counts them. */
void py_recover_thread(struct py_ctx *c, struct model_thread *t, uint64_t ts, struct model_error_info info,
		       const char *why);
/* The frames from FRAME outwards, appended to T, where no thread state
 * tells where the chain ends (a suspended greenlet's). */
void py_walk_frame_chain(struct py_ctx *c, struct model_thread *t, uint64_t frame);
/* The one Python frame FRAME (a generator's or coroutine's), appended to
 * T's frames; a shim frame adds none. */
void py_read_frame(struct py_ctx *c, struct model_thread *t, uint64_t frame);
/* FRAME's first argument (fast local 0, through its cell; a method's
 * self), 0 when unreadable. */
uint64_t py_frame_arg0(struct py_ctx *c, uint64_t frame);

/* ---- threads.c ---- */

/* Name the threads of MI from threading._active of interpreter INTERP. */
void py_thread_names(struct py_ctx *c, uint64_t interp, struct model_interp *mi);

/* T->exception from thread state TS, when it is inside an except block. */
void py_thread_exception(struct py_ctx *c, uint64_t ts, struct model_thread *t);

/* str(EXC) of an exception object; NULL with *ERROR set when unreadable. */
const char *py_exception_message(struct py_ctx *c, uint64_t exc, const char **error);

/* ---- locals.c ---- */

/* Fill F's locals from FRAME (a PyFrameObject up to 3.10, an
 * _PyInterpreterFrame from 3.11) running CODE.  Returns NULL, or why the
 * list is incomplete. */
const char *py_frame_locals(struct py_ctx *c, struct model_frame *f, uint64_t frame,
			    uint64_t code, const struct repr_limits *lim);

/* ---- native_args.c ---- */

/* NF's arguments (as the unwinder evaluated them) into native frame F. */
void py_native_args(struct py_ctx *c, struct model_frame *f, const struct native_frame *nf);

/* ---- native.c ---- */


/* Whether INTERP_MODULE is a static executable the C library is linked
 * into: its frames cannot be told from the C library's, and --native
 * keeps them (a warning says so, unless they are kept anyway). */
bool py_native_linked_in(struct py_ctx *c, const struct dump_module *interp_module);
/* T's native stack, its Python frames woven in where that is proven;
 * frames of INTERP_MODULE are left out unless --native-all.  SHARED: another
 * Python thread state runs on T's OS thread too. */
void py_weave_native(struct py_ctx *c, struct symbols *s, struct model_thread *t,
		     struct dump_module *interp_module, bool shared);
/* 3.12+: the thread states TS[0..N) of several interpreters that run on
 * one OS thread, one inside the other: each gets its own slice of that
 * thread's native stack (the innermost one's the top of it). */
void py_weave_native_shared(struct py_ctx *c, struct symbols *s, struct model_thread **ts, size_t n,
			    struct dump_module *interp_module);
/* Every OS thread of the dump without a Python thread state, with its
 * native stack, into c->r->native_threads. */
void py_native_threads(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module);

/* ---- fault.c ---- */

/* When the core's signal is one the process sent itself: the fault a
 * handler caught before it re-raised it, from the kernel's signal frame
 * on the faulting thread's stack, into c->r->fault. */
void py_find_fault(struct py_ctx *c, struct symbols *s);
/* Name the fault's handler faulthandler when INTERP_MODULE's own table
 * proves it (its handler's frame being gone: a tail call). */
void py_fault_handler(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module);
/* Whether the frame of FUNCTION (NULL: no symbol) at PC is the
 * platform's signal trampoline: by its name, or by its code. */
bool py_sigreturn_at(struct py_ctx *c, const char *function, uint64_t pc, bool by_code);
/* The thread the report calls crashed: the fault's, else the one that
 * received the core's signal; -1 none. */
int64_t py_crash_tid(const struct py_ctx *c);

/* ---- abort.c ---- */

/* When the crash is an abort: the message the C library kept of why
 * (glibc's __abort_msg), into c->r->abort; Python need not be found. */
void py_find_abort(struct py_ctx *c, struct symbols *s);
/* The module whose symbols hold glibc's own state (__abort_msg,
 * main_arena): libc.so.6, or a static executable glibc is linked into
 * (*DYNAMIC false); NULL when the C library is not glibc. */
struct dump_module *py_glibc_module(struct dump *d, bool *dynamic);

/* ---- fatal_error.c ---- */

/* CPython's fatal error ("Fatal Python error: ..."), from the crashed
 * thread's native frames' arguments (after --native's stacks), into
 * c->r->abort when nothing else said why it aborted. */
void py_find_fatal_error(struct py_ctx *c);

/* ---- abort_cxx.c ---- */

/* The uncaught C++ exception std::terminate ran for, found on the stack
 * from SP (abort()'s frame's) up, into c->r->abort: its type, and its
 * what() where libstdc++ keeps it; false (warned) when none is proven. */
bool py_find_cxx_abort(struct py_ctx *c, struct symbols *s, uint64_t sp);

/* ---- asyncio.c ---- */

/* The event loops and tasks of interpreter INTERP into MI (after its
 * threads were walked). */
void py_asyncio(struct py_ctx *c, uint64_t interp, struct model_interp *mi);

/* ---- greenlet.c ---- */

/* The greenlets of interpreter INTERP (greenlet imported there), each
 * under the thread of MI that runs it (after its threads were walked). */
void py_greenlets(struct py_ctx *c, uint64_t interp, struct model_interp *mi);

/* ---- waits.c ---- */

/* What each blocked thread of MI waits on (threads[].waiting_on). */
void py_lock_waits(struct py_ctx *c, struct model_interp *mi);
/* Which of MI's threads the dump shows inside a system call (every
 * version; the samples tell running from blocked by it). */
void py_thread_syscalls(struct py_ctx *c, struct model_interp *mi);

/* ---- proof.c ---- */

/* Why the runtime at RUNTIME (0: 3.6's interp_head, no runtime) whose
 * interpreter list starts at HEAD cannot be believed (an interpreter or
 * thread state misaligned, an interpreter its own next or pointing to
 * another runtime, a thread state that points to another interpreter),
 * or NULL: it agrees with itself, as far as the dump holds it. */
const char *py_runtime_refusal(struct py_ctx *c, uint64_t runtime, uint64_t head);
/* When no Python thread was read but a native stack runs the eval loop:
 * a warning naming that thread and WHY (NULL: the list was empty), and
 * the report incomplete. */
void py_check_python_ran(struct py_ctx *c, struct symbols *s, const char *why);

/* ---- budget.c ---- */

/* True once the time budget (--timeout) is spent; the walk then stops
 * where it is and says so. */
bool py_out_of_time(struct py_ctx *c);
/* Mark T incomplete with MSG, of kind WHY (the first reason is kept). */
void py_thread_error(struct py_ctx *c, struct model_thread *t, struct model_error_info why, const char *msg);
/* CLOCK_MONOTONIC, in nanoseconds. */
uint64_t py_now_ns(void);

#endif
