/* The error type shared by every layer (error.h). */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pc_error nomem = { PC_ENOMEM, (char *)"out of memory", NULL, 0, false };

static struct pc_error *vnew(enum pc_code code, const char *file, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static struct pc_error *vnew(enum pc_code code, const char *file, const char *fmt, va_list ap)
{
	struct pc_error *e = calloc(1, sizeof(*e));
	if (!e)
		return &nomem;
	e->code = code;
	if (vasprintf(&e->message, fmt, ap) < 0)
		e->message = NULL;
	e->file = file ? strdup(file) : NULL;
	if (!e->message || (file && !e->file)) {
		pc_error_free(e);
		return &nomem;
	}
	return e;
}

struct pc_error *pc_error_new(enum pc_code code, const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct pc_error *e = vnew(code, file, fmt, ap);
	va_end(ap);
	return e;
}

struct pc_error *pc_error_at(enum pc_code code, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct pc_error *e = vnew(code, NULL, fmt, ap);
	va_end(ap);
	if (e != &nomem) {
		e->address = addr;
		e->has_address = true;
	}
	return e;
}

void pc_error_free(struct pc_error *e)
{
	if (!e || e == &nomem)
		return;
	free(e->message);
	free(e->file);
	free(e);
}

struct pc_error *pc_error_wrap(struct pc_error *cause, const char *fmt, ...)
{
	if (!cause || cause == &nomem)
		return cause;
	char *step = NULL, *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&step, fmt, ap) < 0)
		step = NULL;
	va_end(ap);
	if (step && asprintf(&msg, "%s: %s", step, cause->message) >= 0) {
		free(cause->message);
		cause->message = msg;
	}
	free(step);
	return cause;
}

/* The one code -> name table.  NAME is the JSON's (a contract: never
 * renamed); TEXT is for people. */
static const struct {
	const char *name, *text;
} codes[PC_NCODES] = {
	[PC_OK] = { NULL, "ok" },
	[PC_ENOTCAPTURED] = { "not-captured", "memory not captured in the dump" },
	[PC_EIO] = { "io", "cannot read" },
	[PC_EFORMAT] = { "format", "not a supported dump" },
	[PC_ECORRUPT] = { "corrupt", "corrupt dump" },
	[PC_ENOMEM] = { "out-of-memory", "out of memory" },
	[PC_ETRUNCATED] = { "truncated", "truncated beyond use" },
	[PC_ENOTPYTHON] = { "not-python", "not a CPython process" },
	[PC_EUNSUPPORTED] = { "unsupported", "a CPython pycore cannot read" },
	[PC_ETIMEOUT] = { "timeout", "the time budget ran out" },
	[PC_ELIMIT] = { "limit", "cut short by one of pycore's limits" },
	[PC_ECRASHED] = { "crashed", "pycore's worker crashed" },
	[PC_EWORKER] = { "worker-failed", "pycore's worker failed" },
	[PC_ENOTANALYZED] = { "not-analyzed", "not analyzed" },
	[PC_EBUSY] = { "busy", "too many analyses running" },
	[PC_EDENIED] = { "denied", "not permitted to read the process" },
	[PC_EGONE] = { "gone", "no such process" },
};

const char *pc_code_str(enum pc_code code)
{
	return (unsigned)code < PC_NCODES ? codes[code].text : "unknown error";
}

const char *pc_code_name(enum pc_code code)
{
	return (unsigned)code < PC_NCODES ? codes[code].name : NULL;
}

const char *pc_code_hook_name(enum pc_code code)
{
	switch (code) {
	case PC_ENOTPYTHON:
	case PC_EUNSUPPORTED:
		return "not-python";
	case PC_ENOMEM:
	case PC_ENOTANALYZED:
	case PC_EBUSY:
		return pc_code_name(code);
	default:
		return "bad-input";
	}
}

const char *pc_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}
