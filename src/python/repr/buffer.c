/* One repr being formed: its output buffer, which stops at the limit and
 * remembers it was cut, and its context (the first failure, the limit that
 * cut it, Py_ReprEnter's stack of the containers being printed). */
#include "python/repr/repr_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The output buffer: stops at the limit and remembers it was cut
 * ------------------------------------------------------------------------ */

void sb_raw(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* Append one character's UTF-8 bytes. */
void sb_char(struct sbuf *b, const char *utf8, size_t n)
{
	if (b->chars >= b->limit) {
		b->cut = true;
		return;
	}
	sb_raw(b, utf8, n);
	b->chars++;
}

void sb_puts(struct sbuf *b, const char *s)
{
	/* ASCII only: one byte, one character */
	for (; *s && !b->cut; s++)
		sb_char(b, s, 1);
}

/* Append a UTF-8 string (names read from the dump, already valid). */
void sb_utf8(struct sbuf *b, const char *s)
{
	while (*s && !b->cut) {
		size_t n = 1;
		while ((s[n] & 0xc0) == 0x80)
			n++;
		sb_char(b, s, n);
		s += n;
	}
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	sb_puts(b, tmp);
}

/* ------------------------------------------------------------------------
 * Context of one repr: limits and the containers being printed
 * ------------------------------------------------------------------------ */

/* A hard failure: the object cannot be printed truthfully. */
void repr_fail_as(struct rctx *r, enum pc_code code, const char *why)
{
	if (!r->error) {
		r->error = why;
		r->error_info = r->at ? model_err_at(code, r->at) : model_err(code);
	}
}

void repr_fail(struct rctx *r, const char *why)
{
	repr_fail_as(r, PC_ENOTCAPTURED, why);
}

/* A limit reached: stop here; what was printed is a true prefix. */
void repr_limit(struct rctx *r, const char *why)
{
	r->b.cut = true;
	if (!r->limit_why)
		r->limit_why = why;
}

/* Py_ReprEnter for a container's repr: true when the caller prints it
 * (and leaves with r->depth--); false when AGAIN was printed (it is being
 * printed further out) or the depth limit was reached. */
bool repr_guard(struct rctx *r, uint64_t addr, const char *again)
{
	if (repr_reentered(r, addr)) {
		sb_puts(&r->b, again);
		return false;
	}
	return repr_enter(r, addr);
}
