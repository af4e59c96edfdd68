/* The crash machinery's functions (machinery.h), by the names their
 * sources give them:
 *   glibc 2.31-2.40: abort (stdlib/abort.c), raise and gsignal
 *     (signal/raise.c, nptl), __pthread_kill_implementation,
 *     __pthread_kill_internal and __pthread_kill (nptl/pthread_kill.c),
 *     __assert_fail, __assert_fail_base and __assert_perror_fail
 *     (assert/assert.c, assert/assert-perr.c), __libc_message and
 *     __libc_fatal (sysdeps/posix/libc_fatal.c), malloc_printerr
 *     (malloc/malloc.c), __fortify_fail and __chk_fail (debug/),
 *     __stack_chk_fail (debug/stack_chk_fail.c), __restore_rt (the
 *     x86-64 signal trampoline);
 *   musl: abort, raise, __assert_fail, a_crash's callers have no frame;
 *   the kernel's arm64 trampoline: __kernel_rt_sigreturn;
 *   CPython 3.6-3.15 (Python/pylifecycle.c): Py_FatalError,
 *     _Py_FatalErrorFunc, _Py_FatalErrorFormat, fatal_error,
 *     fatal_error_exit, _PyObject_AssertFailed (Objects/object.c, which
 *     ends in fatal_error); faulthandler's fatal handler
 *     (Modules/faulthandler.c: faulthandler_fatal_error);
 *   libstdc++: std::terminate, __cxxabiv1::__terminate,
 *     __gnu_cxx::__verbose_terminate_handler, __cxa_throw, __cxa_rethrow
 *     (libsupc++/eh_terminate.cc, vterminate.cc, eh_throw.cc). */
#include "model/machinery.h"

#include <string.h>

static const char *const machinery[] = {
	"abort", "raise", "gsignal", "__pthread_kill_implementation", "__pthread_kill_internal", "__pthread_kill",
	"pthread_kill", "__assert_fail", "__assert_fail_base", "__assert_perror_fail", "__libc_message",
	"__libc_fatal", "malloc_printerr", "__fortify_fail", "__fortify_fail_abort", "__chk_fail",
	"__stack_chk_fail", "__stack_chk_fail_local", "__restore_rt", "__kernel_rt_sigreturn",
	"Py_FatalError", "_Py_FatalErrorFunc", "_Py_FatalErrorFormat", "fatal_error", "fatal_error_exit",
	"_PyObject_AssertFailed", "faulthandler_fatal_error",
	"std::terminate", "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler", "__cxa_throw",
	"__cxa_rethrow",
};

bool model_is_machinery(const char *fn)
{
	if (!fn)
		return false;
	/* glibc's internal aliases: __GI_abort, ___pthread_kill */
	if (strncmp(fn, "__GI_", 5) == 0)
		fn += 5;
	else if (strncmp(fn, "___", 3) == 0)
		fn += 1;
	/* the name up to a clone's suffix (.constprop.0, .cold) or a
	 * demangled name's parameters */
	size_t n = strcspn(fn, ".(");
	for (size_t i = 0; i < sizeof(machinery) / sizeof(machinery[0]); i++)
		if (strlen(machinery[i]) == n && strncmp(fn, machinery[i], n) == 0)
			return true;
	return false;
}

bool model_inside_machinery(const struct model_thread *t, size_t i)
{
	const struct model_frame *f = i < t->frames.n ? t->frames.items[i] : NULL;
	if (!f || f->kind != FRAME_NATIVE || f->function)
		return false;
	if (f->sigreturn)
		return true;
	for (size_t j = i + 1; f->file && j < t->frames.n; j++) {
		const struct model_frame *g = t->frames.items[j];
		if (g->kind != FRAME_NATIVE || !g->file || strcmp(g->file, f->file) != 0)
			return false;
		if (g->function)
			return model_is_machinery(g->function);
	}
	return false;
}
