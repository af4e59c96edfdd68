/* Redaction of secrets for reports that leave the machine: a pass over the
 * model alone (no dump, no I/O), run by the analysis when asked
 * (--redact).  The rules are in redact.c and the README ("Redaction").
 *
 * Contract: model_redact replaces, in R, the repr of every variable and
 * attribute whose name looks secret or whose value holds a well-known
 * secret format (and of every other one holding a value so redacted),
 * and the exception messages and task results holding such values, with
 * a placeholder that keeps the type and the length; each replacement is
 * listed in R->redactions.  Returns 0, or -1 when memory ran out (then
 * every value not yet checked is replaced, so that nothing leaks). */
#ifndef PYCORE_MODEL_REDACT_H
#define PYCORE_MODEL_REDACT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

struct model_redaction {
	int64_t thread;              /* OS thread id; -1: none (a task no thread runs) */
	const char *in;              /* "stack", "exception" (its traceback or message), "task",
					"greenlet" (a suspended greenlet's stack) */
	uint64_t task;               /* in "task": the task's address */
	uint64_t greenlet;           /* in "greenlet": the greenlet's address */
	int64_t frame;               /* index in that list of frames; -1: not in a frame */
	const char *name;            /* the variable; NULL for a message or a result */
	const char *attribute;       /* the attribute path below it ("api_token",
					"inner.key"); NULL: the variable itself */
	const char *reason;          /* "name", "aws-access-key-id", "private-key",
					"github-token", "slack-token", "jwt", "secret-value" */
};

int model_redact(struct model_report *r);

/* The reason VALUE (a repr, a message) holds a well-known secret format,
 * or NULL. */
const char *model_secret_format(const char *value);
/* Whether NAME (a variable's, an attribute's) looks like it names a secret. */
bool model_secret_name(const char *name);

#endif
