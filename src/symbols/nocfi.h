/* Unwinding on past a frame whose code has no call frame information
 * (hand-written assembly such as OpenBLAS's kernels, code of no module):
 * its caller found by its frame pointer, else by a scan of its stack for
 * a return address a call instruction precedes, as gdb and lldb go on. */
#ifndef PYCORE_SYMBOLS_NOCFI_H
#define PYCORE_SYMBOLS_NOCFI_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include "dump/dump.h"

/* Whether LOOKUP (a pc, or a return address less one) has call frame
 * information in its module (.eh_frame or .debug_frame). */
bool nocfi_has_cfi(Dwfl *dwfl, uint64_t lookup);

/* Whether PC, a return address, is the first instruction of the
 * platform's signal trampoline by its code (the dump's copy, else the
 * module's file): where a handler returns, musl's __restore_rt having
 * neither a symbol nor call frame information. */
bool nocfi_trampoline(Dwfl *dwfl, struct dump *d, uint64_t pc);

/* The caller of the frame at PC whose registers are REGS (sp, the frame
 * pointer; ACTIVATION: PC is executing, else it is a return address),
 * into CALLER (pc, sp, frame pointer; the other registers REGS's): by
 * the frame record the frame pointer points at, else by a scan of the
 * frame's stack.  A return address is accepted only when the
 * instruction before it is a call, and a call that names its target
 * calls PC's function (directly or through a PLT stub).  FIRST_SP, the
 * stack pointer of the unwind's first frame, bounds where the frames of
 * PC's callees lie (a caller's frame pointer may be saved there).
 * Returns "frame pointer", "scan", or NULL when neither finds one. */
const char *nocfi_step(Dwfl *dwfl, struct dump *d, uint64_t pc, bool activation, const struct platform_regs *regs,
		       uint64_t first_sp, struct platform_regs *caller);

/* The first caller found by a scan from REGS's stack pointer up, of
 * code unknown (a stack switched out: no pc): a return address accepted
 * when a call precedes it that names the start of a function, or names
 * none; into CALLER.  False when none is found. */
bool nocfi_scan(Dwfl *dwfl, struct dump *d, const struct platform_regs *regs, struct platform_regs *caller);

#endif
