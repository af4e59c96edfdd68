/* The native frames that only carry a crash to its end: the C library's
 * abort and signal functions, its assertion and heap-check reporters,
 * CPython's fatal-error path, faulthandler's handler, C++'s terminate,
 * the signal trampolines.  One table, read by the summary and the
 * fingerprint alike (as Socorro's signature lists skip such frames).
 *
 * Contract: model_is_machinery(FUNCTION) says whether a native frame of
 * that symbol (as the unwinder names it: demangled, clone suffixes and
 * glibc's internal aliases allowed) is one; NULL is not. */
#ifndef PYCORE_MODEL_MACHINERY_H
#define PYCORE_MODEL_MACHINERY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

bool model_is_machinery(const char *function);

/* Whether T's frame I, native and unnamed, is part of the machinery all
 * the same: a signal trampoline known by its code, or a function no
 * symbol names whose next named frame out, in the same file, is
 * machinery (musl's raise calls its hidden __restore_sigs, where the
 * signal arrives). */
bool model_inside_machinery(const struct model_thread *t, size_t i);

#endif
