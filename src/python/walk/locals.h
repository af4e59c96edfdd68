/* A frame's arguments and local variables, with their reprs. */
#ifndef PYCORE_PYTHON_LOCALS_H
#define PYCORE_PYTHON_LOCALS_H

#include "python/repr/repr.h"

/* Fill F's locals from FRAME (a PyFrameObject up to 3.10, an
 * _PyInterpreterFrame from 3.11) running CODE.  Returns NULL, or why the
 * list is incomplete. */
const char *py_frame_locals(struct py_ctx *c, struct model_frame *f, uint64_t frame,
			    uint64_t code, const struct repr_limits *lim);

#endif
