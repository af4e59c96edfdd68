/* A native frame's arguments as gdb's `bt` shows them: " (o=0x10,
 * msg=0x... \"text\", n=<optimized out>)", a char pointer's string quoted
 * as C quotes it, a PyObject's repr after its address.  Contract: the
 * text is malloc'd (free it), "" when no debug information describes the
 * function, NULL when out of memory; raw (a dump's bytes): escape it. */
#ifndef PYCORE_REPORT_ARGS_TEXT_H
#define PYCORE_REPORT_ARGS_TEXT_H

#include "model/model.h"

char *report_args_text(const struct model_frame *f);

#endif
