/* Thread names and the exceptions threads are handling. */
#ifndef PYCORE_PYTHON_THREADS_H
#define PYCORE_PYTHON_THREADS_H

#include "python/repr/repr.h"

/* Name the threads of MI from threading._active of interpreter INTERP. */
void py_thread_names(struct py_ctx *c, uint64_t interp, struct model_interp *mi);

/* T->exception from thread state TS, when it is inside an except block. */
void py_thread_exception(struct py_ctx *c, uint64_t ts, struct model_thread *t);

/* str(EXC) of an exception object; NULL with *ERROR set when unreadable. */
const char *py_exception_message(struct py_ctx *c, uint64_t exc, const char **error);

#endif
