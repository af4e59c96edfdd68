/* A crash's fingerprint: what stays the same when the same bug crashes
 * again, in another process, at another path, on another CPython version;
 * reports with one fingerprint are one problem.  Computed from the model
 * alone (no dump, no I/O); the algorithm is in fingerprint.c and the README.
 *
 * Contract: model_fingerprint returns the fingerprint of R, allocated in
 * R's arena, or NULL when out of memory. */
#ifndef PYCORE_MODEL_FINGERPRINT_H
#define PYCORE_MODEL_FINGERPRINT_H

#include <stddef.h>

#include "model/model.h"

#define FINGERPRINT_VERSION 2
#define FINGERPRINT_PY_FRAMES 5      /* innermost Python frames kept */

struct model_fingerprint {
	char hash[17];               /* FNV-1a 64 of kind and frames, 16 hex digits */
	int version;                 /* FINGERPRINT_VERSION */
	const char *kind;            /* "SIGSEGV", "ValueError", "snapshot" */
	const char *frames[FINGERPRINT_PY_FRAMES + 1];   /* innermost first */
	size_t nframes;
	/* the abort's words (model_abort), numbers, addresses, directories
	 * and the program's name taken out; NULL: none */
	const char *message;
};

struct model_fingerprint *model_fingerprint(const struct model_report *r);

#endif
