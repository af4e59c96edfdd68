/* The HTML report's stacks: each frame as a traceback line (Python) or a
 * native frame line, the source line under a Python frame with its
 * 3.11+ range highlighted and a line of carets, the frame's variables as a
 * collapsible table, and the exception a thread handles with its chain.
 * Every string from the dump goes through html_text. */
#include "report/html_int.h"
#include "report/args_text.h"

#include <stdlib.h>
#include <string.h>

void html_text(FILE *out, const char *s)
{
	report_html_escape(out, s ? s : "?", true);
}

void html_thread_ref(FILE *out, int64_t tid, const char *name)
{
	if (tid >= 0)
		fprintf(out, "thread %lld", (long long)tid);
	else
		fputs("thread (tid unknown)", out);
	if (name) {
		fputs(" &quot;", out);
		html_text(out, name);
		fputs("&quot;", out);
	}
}

/* The N bytes at S as text (N may cut S anywhere: each piece is escaped
 * on its own, and a cut inside a character shows its bytes as \xNN). */
static void text_n(FILE *out, const char *s, size_t n)
{
	char *piece = strndup(s, n);
	if (piece)
		html_text(out, piece);
	free(piece);
}

/* ------------------------------------------------------------------------
 * Source lines
 * ------------------------------------------------------------------------ */

/* Characters (code points) in the first N bytes of S (UTF-8). */
static size_t chars(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* As the text report shows it: the line without its indentation, and
 * from 3.11 on the instruction's range (to the end of the line when it
 * goes on) highlighted and underlined with carets, unless it is the whole
 * line.  Columns are byte offsets; carets count characters. */
static void write_source(const struct hx *x, const struct model_frame *f)
{
	const char *line = x->src && f->file ? source_line(x->src, f->file, f->line) : NULL;
	if (!line)
		return;
	FILE *out = x->out;
	size_t len = strlen(line), lead = 0;
	while (lead < len && blank(line[lead]))
		lead++;
	while (len > lead && blank(line[len - 1]))
		len--;
	if (len == lead)
		return;
	bool range = f->has_position && f->column >= 0 && f->end_column >= 0 && f->end_line >= f->line &&
		     (size_t)f->column >= lead && (size_t)f->column < len;
	size_t from = range ? (size_t)f->column : len;
	size_t to = range && f->end_line == f->line && (size_t)f->end_column < len ? (size_t)f->end_column : len;
	if (to <= from || (from == lead && to == len))
		range = false;
	fputs("<pre class=\"src\">", out);
	if (!range) {
		text_n(out, line + lead, len - lead);
		fputs("</pre>\n", out);
		return;
	}
	text_n(out, line + lead, from - lead);
	fputs("<span class=\"hl\">", out);
	text_n(out, line + from, to - from);
	fputs("</span>", out);
	text_n(out, line + to, len - to);
	fprintf(out, "\n%*s<span class=\"caret\">", (int)(chars(line, from) - chars(line, lead)), "");
	for (size_t k = chars(line, from); k < chars(line, to); k++)
		fputc('^', out);
	fputs("</span></pre>\n", out);
}

/* ------------------------------------------------------------------------
 * Variables
 * ------------------------------------------------------------------------ */

static const char *length_unit(const char *type, int64_t n)
{
	if (type && strcmp(type, "str") == 0)
		return n == 1 ? "character" : "characters";
	if (type && (strcmp(type, "bytes") == 0 || strcmp(type, "bytearray") == 0))
		return n == 1 ? "byte" : "bytes";
	return n == 1 ? "item" : "items";
}

static void local_rows(FILE *out, const struct ptrvec *v, int depth)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct model_local *l = v->items[i];
		fprintf(out, "<tr class=\"%s\"><td class=\"name\">%s", depth ? "attr" : "local", depth ? "." : "");
		html_text(out, l->name);
		fputs("</td><td class=\"type\">", out);
		html_text(out, l->type);
		fputs("</td><td class=\"repr\">", out);
		if (l->repr)
			html_text(out, l->repr);
		else
			fputs("<span class=\"err\">(no value)</span>", out);
		fputs("</td><td class=\"notes\">", out);
		if (l->kind && strcmp(l->kind, "local") != 0 && strcmp(l->kind, "attribute") != 0) {
			fputs("<span class=\"mark\">", out);
			html_text(out, l->kind);
			fputs("</span>", out);
		}
		if (l->redacted)
			fputs("<span class=\"mark redacted\">redacted</span>", out);
		else if (l->has_length)
			fprintf(out, "<span class=\"mark cut\">cut: %lld %s</span>", (long long)l->length,
				length_unit(l->type, l->length));
		if (l->error) {
			fputs("<span class=\"mark error\">", out);
			html_text(out, l->error);
			fputs("</span>", out);
		}
		if (l->attributes_elsewhere && l->attributes_at) {
			const struct model_frame *f = l->attributes_at;
			fprintf(out, "<span class=\"mark\">attributes listed with thread %lld, ",
				(long long)l->attributes_thread);
			html_text(out, f->function);
			fprintf(out, " line %d</span>", f->line);
		}
		fputs("</td></tr>\n", out);
		if (l->has_attributes && depth < 64)
			local_rows(out, &l->attributes, depth + 1);
	}
}

static void write_locals(FILE *out, const struct model_frame *f, bool open)
{
	fprintf(out, "<details class=\"locals\"%s><summary>%zu variable%s</summary>\n"
		"<table><thead><tr><th>name</th><th>type</th><th>value (repr)</th><th>notes</th></tr></thead>"
		"<tbody>\n", open ? " open" : "", f->locals.n, f->locals.n == 1 ? "" : "s");
	local_rows(out, &f->locals, 0);
	fputs("</tbody></table></details>\n", out);
}

/* ------------------------------------------------------------------------
 * Frames
 * ------------------------------------------------------------------------ */

static void python_line(const struct hx *x, const struct model_frame *f)
{
	FILE *out = x->out;
	fputs("File &quot;<span class=\"file\">", out);
	html_text(out, f->file);
	fputs("</span>&quot;, line <span class=\"lineno\">", out);
	if (f->line > 0)
		fprintf(out, "%d", f->line);
	else
		fputs("?", out);
	fputs("</span>, in <span class=\"func\">", out);
	html_text(out, f->function);
	fputs("</span>", out);
	if (f->recovered)
		fputs("<span class=\"mark\">recovered from the data stack</span>", out);
	fputs("\n", out);
	write_source(x, f);
}

void html_python_frame(const struct hx *x, const struct model_frame *f)
{
	fputs("<li class=\"frame python\">", x->out);
	python_line(x, f);
	fputs("</li>\n", x->out);
}

static void write_frame(const struct hx *x, const struct model_frame *f, bool innermost)
{
	FILE *out = x->out;
	if (f->kind == FRAME_PYTHON) {
		fputs("<li class=\"frame python\">", out);
		python_line(x, f);
	} else if (f->kind == FRAME_GC) {
		fputs("<li class=\"frame gc\">&lt;garbage collection&gt;", out);
	} else {
		fprintf(out, "<li class=\"frame native\"><span class=\"mark\">native</span> "
			"<span class=\"mono\">0x%llx</span> <span class=\"func\">", (unsigned long long)f->address);
		html_text(out, f->function ? f->function : "??");
		char *args = report_args_text(f);
		if (args && *args) {
			fputs("</span><span class=\"args\">", out);
			html_text(out, args);
		}
		free(args);
		fputs("</span> in <span class=\"file\">", out);
		html_text(out, f->file);
		fputs("</span>", out);
		if (f->source_file) {
			fputs(" at ", out);
			html_text(out, f->source_file);
			fprintf(out, ":%d", f->line);
		}
		if (f->inlined)
			fputs(" <span class=\"mark\">inlined</span>", out);
		if (f->tail_call)
			fputs(" <span class=\"mark\">tail call</span>", out);
		if (f->found_by) {
			fputs(" <span class=\"mark found-by\">by ", out);
			html_text(out, f->found_by);
			fputs("</span>", out);
		}
		if (f->greenlet)
			fprintf(out, " <span class=\"mark greenlet\">greenlet <span class=\"mono\">0x%llx</span></span>",
				(unsigned long long)f->greenlet);
	}
	if (f->has_locals)
		write_locals(out, f, innermost);
	fputs("</li>\n", out);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_line(const struct model_frame *a, const struct model_frame *b)
{
	return a->kind == FRAME_PYTHON && b->kind == FRAME_PYTHON && a->line == b->line &&
	       same_str(a->file, b->file) && same_str(a->function, b->function);
}

/* traceback.py's _RECURSIVE_CUTOFF */
#define RECURSIVE_CUTOFF 3

void html_frames(const struct hx *x, const struct ptrvec *frames)
{
	FILE *out = x->out;
	const struct model_frame *inner_py = NULL;
	for (size_t i = 0; i < frames->n && !inner_py; i++)
		if (((const struct model_frame *)frames->items[i])->kind == FRAME_PYTHON)
			inner_py = frames->items[i];
	fputs("<ol class=\"frames\">\n", out);
	for (size_t j = frames->n; j-- > 0;) {
		/* the run of frames from J inwards with J's line: [end, j] */
		size_t end = j;
		while (end > 0 && same_line(frames->items[j], frames->items[end - 1]))
			end--;
		size_t count = j - end + 1;
		for (size_t k = 0; k < count && k < RECURSIVE_CUTOFF; k++)
			write_frame(x, frames->items[j - k], frames->items[j - k] == inner_py);
		if (count > RECURSIVE_CUTOFF) {
			fprintf(out, "<li class=\"repeat\"><details><summary>Previous line repeated %zu more time%s"
				"</summary><ol class=\"frames\">\n", count - RECURSIVE_CUTOFF,
				count - RECURSIVE_CUTOFF == 1 ? "" : "s");
			for (size_t k = RECURSIVE_CUTOFF; k < count; k++)
				write_frame(x, frames->items[j - k], frames->items[j - k] == inner_py);
			fputs("</ol></details></li>\n", out);
		}
		j = end;
	}
	fputs("</ol>\n", out);
}

/* ------------------------------------------------------------------------
 * Exceptions
 * ------------------------------------------------------------------------ */

void html_exception(const struct hx *x, const struct model_exception *e)
{
	FILE *out = x->out;
	fprintf(out, "<div class=\"exc\"><div class=\"exc-head\">%s <span class=\"func exc-type\">",
		!e->relation ? "While handling" : strcmp(e->relation, "cause") == 0 ? "Raised from"
		: "Raised while handling");
	html_text(out, e->type ? e->type : "an exception");
	fputs("</span>", out);
	if (e->message && *e->message) {
		fputs(": <span class=\"exc-msg\">", out);
		html_text(out, e->message);
		fputs("</span>", out);
	}
	fputs("</div>\n<ol class=\"frames\">\n", out);
	for (size_t j = e->traceback.n; j-- > 0;)
		html_python_frame(x, e->traceback.items[j]);
	fputs("</ol>\n", out);
	if (e->error) {
		fputs("<div class=\"err\">incomplete: ", out);
		html_text(out, e->error);
		fputs("</div>\n", out);
	}
	fputs("</div>\n", out);
	for (size_t i = 0; i < e->chain.n; i++)
		html_exception(x, e->chain.items[i]);
}

void html_greenlets(const struct hx *x, const struct ptrvec *v)
{
	FILE *out = x->out;
	if (!v->n)
		return;
	fprintf(out, "<details class=\"greenlets\"><summary>%zu greenlet%s</summary>\n<ul>\n", v->n, v->n == 1 ? "" : "s");
	for (size_t i = 0; i < v->n; i++) {
		const struct model_greenlet *g = v->items[i];
		fprintf(out, "<li>Greenlet 0x%llx &lt;", (unsigned long long)g->address);
		html_text(out, g->type);
		fprintf(out, "&gt;%s%s, %s", g->main ? " main" : "", g->hub ? " gevent hub" : "", g->state);
		if (g->run) {
			fputs(", runs ", out);
			html_text(out, g->run);
		}
		if (strcmp(g->state, "running") == 0)
			fputs(" (the thread's stack)", out);
		fputs("\n", out);
		if (g->stack.n)
			html_frames(x, &g->stack);
		if (g->error) {
			fputs("<div class=\"err\">incomplete: ", out);
			html_text(out, g->error);
			fputs("</div>\n", out);
		}
		fputs("</li>\n", out);
	}
	fputs("</ul></details>\n", out);
}
