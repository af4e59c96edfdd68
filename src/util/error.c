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

const char *pc_code_str(enum pc_code code)
{
	switch (code) {
	case PC_OK: return "ok";
	case PC_ENOTCAPTURED: return "memory not captured in the dump";
	case PC_EIO: return "cannot read";
	case PC_EFORMAT: return "not a supported dump";
	case PC_ECORRUPT: return "corrupt dump";
	case PC_ENOMEM: return "out of memory";
	case PC_ETRUNCATED: return "truncated beyond use";
	case PC_ENOTPYTHON: return "not a CPython process";
	case PC_EUNSUPPORTED: return "a CPython pycore cannot read";
	}
	return "unknown error";
}

const char *pc_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}
