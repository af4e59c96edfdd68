/* Tail calls between a frame and its caller: the functions that ran
 * between them and left no frame (each jumped to the next), inferred from
 * the call sites the DWARF describes, as gdb infers them.  Internal to
 * symbols/. */
#ifndef PYCORE_SYMBOLS_TAILCALL_H
#define PYCORE_SYMBOLS_TAILCALL_H

#include "symbols/args.h"

/* The most tail-call frames shown between two frames */
#define MAX_TAIL_FRAMES 16

/* The return addresses of the tail calls between frame F and CALLER,
 * F's side first, into PCS (at most MAX_TAIL_FRAMES): a frame each, its
 * function the one holding the call (its lookup: the address less one).
 * Their number: 0 when F's function is what CALLER's call site calls,
 * and when the DWARF does not determine the chain (an indirect call, no
 * call site, two chains that part). */
size_t tailcall_chain(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, uint64_t *pcs);

/* A function's verdict (symbols' reentry table, by entry address) */
struct reentry {
	uint64_t entry;
	bool may;
};

/* Whether the function entered at ENTRY may be entered again by a chain of
 * tail calls from itself, or that is not known (a tail call whose target
 * is not known, a target where no function the DWARF describes starts):
 * gdb's func_verify_no_selftailcall (gdb/dwarf2/loc.c), which then
 * resolves none of its entry values, for its caller's call site may be
 * an earlier run's.  Kept for the session. */
bool tailcall_may_reenter(struct symbols *s, uint64_t entry);

#endif
