/* The Python layer: find the CPython runtime in a dump and walk every
 * interpreter, thread and frame into the model. */
#ifndef PYCORE_PYTHON_PYTHON_H
#define PYCORE_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

#include "dump/dump.h"
#include "locate/locate.h"
#include "model/model.h"
#include "symbols/symbols.h"

struct py_options {
	bool locals;             /* read every frame's arguments and variables */
	bool deep;               /* and the attributes of instances among them */
	size_t max_repr;         /* characters of one repr before it is cut */
	size_t max_items;        /* items of one container shown */
	int max_depth;           /* containers inside containers */
	enum { LAYOUT_AUTO, LAYOUT_TABLE, LAYOUT_DWARF } layout;
	double timeout;          /* seconds for one dump's walk; 0: none */
	int native;              /* 0 Python frames only; 1 with native frames; 2 all native */
	bool heap;               /* and the heap's census (pycore heap: the report's heap) */
	/* heap --diff: the census also gives the sizes of the objects at
	 * these addresses (the newer dump's largest) in heap->watched */
	const uint64_t *heap_watch;
	size_t heap_nwatch;
};

/* Fill R's python and interpreters parts.  NULL, or the error: code
 * PC_ENOTPYTHON (no interpreter found) or PC_EUNSUPPORTED (one pycore
 * cannot read), its message one line saying what was missing.  A report
 * that stands but lacks parts returns NULL with R->incomplete set. */
struct pc_error *py_analyze(struct dump *d, const struct locate *loc, struct symbols *s,
			    const struct py_options *opt, struct model_report *r);

/* Whether FUNCTION, a native frame's name, is the eval loop:
 * _PyEval_EvalFrameDefault, or a part GCC split off it. */
bool py_is_eval_loop(const char *function);

#endif
