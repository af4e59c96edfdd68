/* Frames as Python's tracebacks show them: a Python frame's "File ..., line
 * N, in f" with its source line and carets, native frames, the locals under
 * a frame, a recursion collapsed as Python collapses it, and the exception a
 * thread handles with its traceback and chain. */
#include "report/text_int.h"
#include "report/source.h"
#include "report/args_text.h"

#include <stdlib.h>
#include <string.h>

/* What len() counts of a value of TYPE: characters, bytes or items. */
static const char *length_unit(const char *type, int64_t n)
{
	if (type && strcmp(type, "str") == 0)
		return n == 1 ? "character" : "characters";
	if (type && (strcmp(type, "bytes") == 0 || strcmp(type, "bytearray") == 0))
		return n == 1 ? "byte" : "bytes";
	return n == 1 ? "item" : "items";
}

/* "    name = repr", and an instance's attributes below it as ".name". */
static void write_locals(FILE *out, const struct ptrvec *v, const char *indent, const char *dot)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct model_local *l = v->items[i];
		fprintf(out, "%s%s", indent, dot);
		tx_put(out, l->name);
		if (l->repr) {
			fputs(" = ", out);
			tx_put(out, l->repr);
			if (l->has_length)
				fprintf(out, " (%lld %s)", (long long)l->length, length_unit(l->type, l->length));
			if (l->error) {
				fputs("  [", out);
				tx_put(out, l->error);
				fputs("]", out);
			}
		} else {
			fputs(": <", out);
			tx_put(out, l->error ? l->error : "unreadable");
			fputs(">", out);
		}
		fputs("\n", out);
		if (l->has_attributes)
			write_locals(out, &l->attributes, "        ", ".");
		if (l->attributes_elsewhere && l->attributes_at) {
			const struct model_frame *f = l->attributes_at;
			fprintf(out, "        (attributes listed with thread %lld, \"", (long long)l->attributes_thread);
			tx_put(out, f->file ? f->file : "?");
			fprintf(out, "\", line %d, in ", f->line);
			tx_put(out, f->function ? f->function : "?");
			fputs(")\n", out);
		}
	}
}

/* The columns of the first N bytes of S as the text shows them (a
 * character printed as an escape, \x1b or \t, takes the escape's). */
static size_t chars(const char *s, size_t n)
{
	return report_escaped_width(s, n);
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* Under a Python frame, as Python's tracebacks show it: its source line
 * without the indentation, and from 3.11 on a line of carets under the
 * instruction's range (to the end of the line when the range goes on to
 * other lines) unless the range is the whole line.  Columns are byte
 * offsets; carets count the columns the characters take as printed
 * (escapes included, so that they stay under what they mark).  Python draws the operator of a
 * binary operation or a subscript with ^ and the rest with ~: here all of
 * the range is ^. */
static void write_source(const struct tx *x, const char *indent, const struct model_frame *f)
{
	const char *line = x->src ? source_line(x->src, f->file, f->line) : NULL;
	if (!line)
		return;
	size_t len = strlen(line), lead = 0;
	while (lead < len && blank(line[lead]))
		lead++;
	while (len > lead && blank(line[len - 1]))
		len--;
	if (len == lead)
		return;
	char *text = strndup(line + lead, len - lead);
	if (!text)
		return;
	fprintf(x->out, "%s  ", indent);
	tx_put(x->out, text);
	fputs("\n", x->out);
	free(text);
	if (!f->has_position || f->column < 0 || f->end_column < 0 || f->end_line < f->line ||
	    (size_t)f->column < lead || (size_t)f->column >= len)
		return;
	size_t start = chars(line, (size_t)f->column);
	size_t end = chars(line, f->end_line == f->line && (size_t)f->end_column < len ? (size_t)f->end_column : len);
	size_t shown = chars(line + lead, len - lead), skip = chars(line, lead);
	if (end <= start || end - start >= shown)
		return;
	fprintf(x->out, "%s  %*s", indent, (int)(start - skip), "");
	tx_color(x, C_RED);
	for (size_t k = start; k < end; k++)
		fputc('^', x->out);
	tx_color(x, C_RESET);
	fputs("\n", x->out);
}

/* A Python frame's line of a traceback, INDENT before it, and its source. */
void tx_python_frame(const struct tx *x, const char *indent, const struct model_frame *f)
{
	FILE *out = x->out;
	fprintf(out, "%sFile \"", indent);
	tx_put_colored(x, C_MAGENTA, f->file);
	fputs("\", line ", out);
	tx_color(x, C_MAGENTA);
	if (f->line > 0)
		fprintf(out, "%d", f->line);
	else
		fprintf(out, "?");
	tx_color(x, C_RESET);
	fputs(", in ", out);
	tx_put_colored(x, C_MAGENTA, f->function);
	fputs(f->recovered ? "  [recovered from the data stack]\n" : "\n", out);
	write_source(x, indent, f);
}

static void write_frame(const struct tx *x, const struct model_frame *f)
{
	FILE *out = x->out;
	if (f->kind == FRAME_PYTHON) {
		tx_python_frame(x, "  ", f);
	} else if (f->kind == FRAME_GC) {
		fprintf(out, "  <garbage collection>\n");
	} else {
		fprintf(out, "  (native) 0x%llx ", (unsigned long long)f->address);
		tx_put(out, f->function ? f->function : "??");
		char *args = report_args_text(f);
		if (args)
			tx_put(out, args);
		free(args);
		fputs(" in ", out);
		tx_put(out, f->file);
		if (f->source_file) {
			fputs(" at ", out);
			tx_put(out, f->source_file);
			fprintf(out, ":%d", f->line);
		}
		fputs(f->inlined ? " (inlined)" : "", out);
		fputs(f->tail_call ? " (tail call)" : "", out);
		if (f->found_by)
			fprintf(out, " [by %s]", f->found_by);
		if (f->greenlet)
			fprintf(out, " [greenlet 0x%llx]", (unsigned long long)f->greenlet);
		fputc('\n', out);
	}
	if (f->has_locals)
		write_locals(out, &f->locals, "    ", "");
}

bool tx_same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Python's test for a repeated line of a traceback: the same file, line
 * and function. */
static bool same_line(const struct model_frame *a, const struct model_frame *b)
{
	return a->kind == FRAME_PYTHON && b->kind == FRAME_PYTHON && a->line == b->line &&
	       tx_same_str(a->file, b->file) && tx_same_str(a->function, b->function);
}

/* Python's tracebacks show a line repeated this many times, then say how
 * many more times it was (traceback.py's _RECURSIVE_CUTOFF). */
#define RECURSIVE_CUTOFF 3

static void write_repeated(const struct tx *x, size_t count)
{
	if (count > RECURSIVE_CUTOFF && !x->o->all_frames)
		fprintf(x->out, "  [Previous line repeated %zu more time%s]\n", count - RECURSIVE_CUTOFF,
			count - RECURSIVE_CUTOFF > 1 ? "s" : "");
}

/* FRAMES (innermost first) outermost first, a recursion collapsed as
 * Python collapses it. */
void tx_frames(const struct tx *x, const struct ptrvec *frames)
{
	tx_stack(x, frames, 0);
}

void tx_stack(const struct tx *x, const struct ptrvec *frames, size_t fault_frame)
{
	const struct model_frame *last = NULL;
	size_t count = 0;
	for (size_t j = frames->n; j-- > 0;) {
		const struct model_frame *f = frames->items[j];
		if (fault_frame && j + 1 == fault_frame - 1) {
			write_repeated(x, count);
			last = NULL;
			count = 0;
			tx_color(x, C_RED);
			fputs("  --- the fault; a signal handler's frames follow ---", x->out);
			tx_color(x, C_RESET);
			fputs("\n", x->out);
		}
		if (!last || !same_line(last, f)) {
			write_repeated(x, count);
			last = f;
			count = 0;
		}
		if (++count <= RECURSIVE_CUTOFF || x->o->all_frames)
			write_frame(x, f);
	}
	write_repeated(x, count);
}

void tx_exception(const struct tx *x, const struct model_exception *e)
{
	FILE *out = x->out;
	if (!e->relation)
		fputs("  while handling ", out);
	else if (strcmp(e->relation, "cause") == 0)
		fputs("  raised from ", out);
	else
		fputs("  raised while handling ", out);
	tx_put(out, e->type ? e->type : "an exception");
	if (e->message && *e->message) {
		fputs(": ", out);
		tx_put(out, e->message);
	}
	fputs("\n", out);
	for (size_t j = e->traceback.n; j-- > 0;)
		tx_python_frame(x, "    ", e->traceback.items[j]);
	if (e->error) {
		fputs("    [incomplete: ", out);
		tx_put(out, e->error);
		fputs("]\n", out);
	}
	for (size_t i = 0; i < e->chain.n; i++)
		tx_exception(x, e->chain.items[i]);
}
