/* How every section of the text report writes: strings from the dump
 * escaped (report_put_escaped), ANSI colours only with --color, threads
 * named the same way everywhere. */
#include "report/text_int.h"

#include <stdlib.h>
#include <string.h>

/* "%s" of a dump string, escaped; "?" for NULL. */
void tx_put(FILE *out, const char *s)
{
	report_put_escaped(out, s ? s : "?");
}

void tx_color(const struct tx *x, const char *code)
{
	if (x->o->color)
		fputs(code, x->out);
}

/* S escaped, in colour CODE. */
void tx_put_colored(const struct tx *x, const char *code, const char *s)
{
	tx_color(x, code);
	tx_put(x->out, s);
	tx_color(x, C_RESET);
}

/* T's tid, then SEP and its name quoted, when it has one (SEP NULL: not
 * its name). */
void tx_put_thread(FILE *out, const struct model_thread *t, const char *sep)
{
	if (t->tid >= 0)
		fprintf(out, "%lld", (long long)t->tid);
	else
		fprintf(out, "(tid unknown)");
	if (t->name && sep) {
		fprintf(out, "%s\"", sep);
		tx_put(out, t->name);
		fputs("\"", out);
	}
}

/* 'thread 123 "writer"' */
void tx_thread_ref(FILE *out, int64_t tid, const char *name)
{
	fprintf(out, "thread %lld", (long long)tid);
	if (name) {
		fputs(" \"", out);
		tx_put(out, name);
		fputs("\"", out);
	}
}
