/* The folded-stack ("collapsed") format that flame-graph tools read
 * (flamegraph.pl, inferno, speedscope): a line per distinct stack,
 * "frame;frame;...;frame COUNT", the outermost frame first, COUNT the
 * threads that have that stack.  Every Python thread has a line, and with
 * --native every OS thread without Python; a thread without frames is
 * "(no frames)".  A suspended greenlet's stack (its frames apart from its
 * thread's) has a line of its own, counted like a thread's; a running
 * one's is its thread's.
 *
 * A Python frame is "function (file:line)", a native one "function
 * (module)" (the address when it has no name); the garbage collector
 * "<garbage collection>".  Strings from the dump are escaped as in the
 * text report, and the format's separator ';' inside them becomes ',' so
 * that no name splits a frame in two. */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* S escaped (report_put_escaped), ';' made ','. */
static void put_name(FILE *out, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	report_put_escaped(m, s ? s : "?");
	if (fclose(m) != 0) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] == ';')
			buf[i] = ',';
	fwrite(buf, 1, len, out);
	free(buf);
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

static void put_frame(FILE *out, const struct model_frame *f)
{
	if (f->kind == FRAME_GC) {
		fputs("<garbage collection>", out);
		return;
	}
	if (f->kind == FRAME_NATIVE && !f->function)
		fprintf(out, "0x%llx", (unsigned long long)f->address);
	else
		put_name(out, f->function);
	fputs(" (", out);
	put_name(out, f->kind == FRAME_NATIVE ? basename_of(f->file) : f->file);
	if (f->kind == FRAME_PYTHON && f->line > 0)
		fprintf(out, ":%d", f->line);
	fputs(")", out);
}

/* The line of FRAMES, without its count (malloc'd; NULL when out of
 * memory). */
static char *stack_line(const struct ptrvec *frames)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	for (size_t j = frames->n; j-- > 0;) {
		put_frame(m, frames->items[j]);
		if (j)
			fputc(';', m);
	}
	if (frames->n == 0)
		fputs("(no frames)", m);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

struct stacks {
	char **lines;
	size_t *counts;
	size_t n, cap;
};

static int add_stack(struct stacks *s, const struct ptrvec *frames)
{
	char *line = stack_line(frames);
	if (!line)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->lines[i], line) == 0) {
			s->counts[i]++;
			free(line);
			return 0;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **l = realloc(s->lines, cap * sizeof(*l));
		if (l)
			s->lines = l;
		size_t *c = l ? realloc(s->counts, cap * sizeof(*c)) : NULL;
		if (!c) {
			free(line);
			return -1;
		}
		s->counts = c;
		s->cap = cap;
	}
	s->lines[s->n] = line;
	s->counts[s->n++] = 1;
	return 0;
}

int report_collapsed_write(FILE *out, const struct model_report *r)
{
	struct stacks s = { 0 };
	int rc = 0;
	for (size_t i = 0; i < r->interps.n && rc == 0; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n && rc == 0; k++) {
			const struct model_thread *t = mi->threads.items[k];
			rc = add_stack(&s, &t->frames);
			for (size_t g = 0; g < t->greenlets.n && rc == 0; g++) {
				const struct model_greenlet *gl = t->greenlets.items[g];
				if (gl->stack.n)
					rc = add_stack(&s, &gl->stack);
			}
		}
		for (size_t g = 0; g < mi->greenlets.n && rc == 0; g++) {
			const struct model_greenlet *gl = mi->greenlets.items[g];
			if (gl->stack.n)
				rc = add_stack(&s, &gl->stack);
		}
	}
	for (size_t i = 0; i < r->native_threads.n && rc == 0; i++)
		rc = add_stack(&s, &((const struct model_thread *)r->native_threads.items[i])->frames);
	for (size_t i = 0; i < s.n; i++) {
		if (rc == 0)
			fprintf(out, "%s %zu\n", s.lines[i], s.counts[i]);
		free(s.lines[i]);
	}
	free(s.lines);
	free(s.counts);
	if (rc != 0)
		errno = ENOMEM;
	return rc != 0 || ferror(out) ? -1 : 0;
}
