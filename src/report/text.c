/* The text report: the summary and a header about the process, then each
 * thread's stack in the style of a Python traceback (most recent call
 * last), the thread that received the signal first, then the one holding
 * the GIL, then the others in the dump's order.  Every string that comes
 * from the dump goes through report_put_escaped. */
#include "report/report.h"
#include "report/source.h"
#include "model/redact.h"

#include <stdlib.h>
#include <string.h>

/* "%s" of a dump string, escaped; "?" for NULL. */
static void put(FILE *out, const char *s)
{
	report_put_escaped(out, s ? s : "?");
}

/* What the thread sections are written with. */
struct tx {
	FILE *out;
	const struct model_report *r;
	const struct report_text_options *o;
	struct source_cache *src;    /* NULL: no source lines */
};

/* ANSI colours, only with --color (a terminal) */
#define C_BOLD    "\033[1m"
#define C_RED     "\033[1;31m"
#define C_MAGENTA "\033[35m"
#define C_RESET   "\033[0m"

static void color(const struct tx *x, const char *code)
{
	if (x->o->color)
		fputs(code, x->out);
}

/* S escaped, in colour CODE. */
static void put_colored(const struct tx *x, const char *code, const char *s)
{
	color(x, code);
	put(x->out, s);
	color(x, C_RESET);
}

/* T's tid, then SEP and its name quoted, when it has one (SEP NULL: not
 * its name). */
static void put_thread(FILE *out, const struct model_thread *t, const char *sep)
{
	if (t->tid >= 0)
		fprintf(out, "%lld", (long long)t->tid);
	else
		fprintf(out, "(tid unknown)");
	if (t->name && sep) {
		fprintf(out, "%s\"", sep);
		put(out, t->name);
		fputs("\"", out);
	}
}

static void thread_header(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	color(x, C_BOLD);
	fprintf(out, "Thread ");
	put_thread(out, t, NULL);
	fprintf(out, " (ident 0x%llx", (unsigned long long)t->ident);
	if (t->name) {
		fputs(", \"", out);
		put(out, t->name);
		fputs("\"", out);
	}
	if (x->r->interps.n > 1)
		fprintf(out, ", interpreter %lld", (long long)mi->id);
	if (t->holds_gil)
		fprintf(out, ", holds the GIL");
	if (t->crashed) {
		fputs(", ", out);
		color(x, C_RED);
		fputs("crashed", out);
		color(x, C_RESET);
		color(x, C_BOLD);
	}
	fprintf(out, ")");
	color(x, C_RESET);
	fprintf(out, "\n");
}

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
		put(out, l->name);
		if (l->repr) {
			fputs(" = ", out);
			put(out, l->repr);
			if (l->has_length)
				fprintf(out, " (%lld %s)", (long long)l->length, length_unit(l->type, l->length));
			if (l->error) {
				fputs("  [", out);
				put(out, l->error);
				fputs("]", out);
			}
		} else {
			fputs(": <", out);
			put(out, l->error ? l->error : "unreadable");
			fputs(">", out);
		}
		fputs("\n", out);
		if (l->has_attributes)
			write_locals(out, &l->attributes, "        ", ".");
		if (l->attributes_elsewhere && l->attributes_at) {
			const struct model_frame *f = l->attributes_at;
			fprintf(out, "        (attributes listed with thread %lld, \"", (long long)l->attributes_thread);
			put(out, f->file ? f->file : "?");
			fprintf(out, "\", line %d, in ", f->line);
			put(out, f->function ? f->function : "?");
			fputs(")\n", out);
		}
	}
}

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

/* Under a Python frame, as Python's tracebacks show it: its source line
 * without the indentation, and from 3.11 on a line of carets under the
 * instruction's range (to the end of the line when the range goes on to
 * other lines) unless the range is the whole line.  Columns are byte
 * offsets; carets count characters.  Python draws the operator of a
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
	put(x->out, text);
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
	color(x, C_RED);
	for (size_t k = start; k < end; k++)
		fputc('^', x->out);
	color(x, C_RESET);
	fputs("\n", x->out);
}

/* A Python frame's line of a traceback, INDENT before it, and its source. */
static void write_python_frame(const struct tx *x, const char *indent, const struct model_frame *f)
{
	FILE *out = x->out;
	fprintf(out, "%sFile \"", indent);
	put_colored(x, C_MAGENTA, f->file);
	fputs("\", line ", out);
	color(x, C_MAGENTA);
	if (f->line > 0)
		fprintf(out, "%d", f->line);
	else
		fprintf(out, "?");
	color(x, C_RESET);
	fputs(", in ", out);
	put_colored(x, C_MAGENTA, f->function);
	fputs(f->recovered ? "  [recovered from the data stack]\n" : "\n", out);
	write_source(x, indent, f);
}

static void write_frame(const struct tx *x, const struct model_frame *f)
{
	FILE *out = x->out;
	if (f->kind == FRAME_PYTHON) {
		write_python_frame(x, "  ", f);
	} else if (f->kind == FRAME_GC) {
		fprintf(out, "  <garbage collection>\n");
	} else {
		fprintf(out, "  (native) 0x%llx ", (unsigned long long)f->address);
		put(out, f->function ? f->function : "??");
		fputs(" in ", out);
		put(out, f->file);
		if (f->source_file) {
			fputs(" at ", out);
			put(out, f->source_file);
			fprintf(out, ":%d", f->line);
		}
		fprintf(out, "%s\n", f->inlined ? " (inlined)" : "");
	}
	if (f->has_locals)
		write_locals(out, &f->locals, "    ", "");
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Python's test for a repeated line of a traceback: the same file, line
 * and function. */
static bool same_line(const struct model_frame *a, const struct model_frame *b)
{
	return a->kind == FRAME_PYTHON && b->kind == FRAME_PYTHON && a->line == b->line &&
	       same_str(a->file, b->file) && same_str(a->function, b->function);
}

/* Python's tracebacks show a line repeated this many times, then say how
 * many more times it was (traceback.py's _RECURSIVE_CUTOFF). */
#define RECURSIVE_CUTOFF 3

static void write_repeated(const struct tx *x, size_t count)
{
	if (count > RECURSIVE_CUTOFF)
		fprintf(x->out, "  [Previous line repeated %zu more time%s]\n", count - RECURSIVE_CUTOFF,
			count - RECURSIVE_CUTOFF > 1 ? "s" : "");
}

/* FRAMES (innermost first) outermost first, a recursion collapsed as
 * Python collapses it. */
static void write_frames(const struct tx *x, const struct ptrvec *frames)
{
	const struct model_frame *last = NULL;
	size_t count = 0;
	for (size_t j = frames->n; j-- > 0;) {
		const struct model_frame *f = frames->items[j];
		if (!last || !same_line(last, f)) {
			write_repeated(x, count);
			last = f;
			count = 0;
		}
		if (++count <= RECURSIVE_CUTOFF)
			write_frame(x, f);
	}
	write_repeated(x, count);
}

static void write_exception(const struct tx *x, const struct model_exception *e)
{
	FILE *out = x->out;
	if (!e->relation)
		fputs("  while handling ", out);
	else if (strcmp(e->relation, "cause") == 0)
		fputs("  raised from ", out);
	else
		fputs("  raised while handling ", out);
	put(out, e->type ? e->type : "an exception");
	if (e->message && *e->message) {
		fputs(": ", out);
		put(out, e->message);
	}
	fputs("\n", out);
	for (size_t j = e->traceback.n; j-- > 0;)
		write_python_frame(x, "    ", e->traceback.items[j]);
	if (e->error) {
		fputs("    [incomplete: ", out);
		put(out, e->error);
		fputs("]\n", out);
	}
	for (size_t i = 0; i < e->chain.n; i++)
		write_exception(x, e->chain.items[i]);
}

/* 'thread 123 "writer"' */
static void thread_ref(FILE *out, int64_t tid, const char *name)
{
	fprintf(out, "thread %lld", (long long)tid);
	if (name) {
		fputs(" \"", out);
		put(out, name);
		fputs("\"", out);
	}
}

static void write_wait(FILE *out, const struct model_wait *w)
{
	fputs("  waiting for <", out);
	put(out, w->type);
	fprintf(out, " object at 0x%llx", (unsigned long long)w->address);
	if (w->owner >= 0) {
		fputs(w->joins ? " to end: " : " owned by ", out);
		thread_ref(out, w->owner, w->owner_name);
	}
	if (w->count > 0)
		fprintf(out, " (%lld level%s)", (long long)w->count, w->count == 1 ? "" : "s");
	fputs(">\n", out);
}

/* "Deadlock: thread 1 "a" waits for thread 2 "b", which waits for thread 1 "a"" */
static void write_deadlock(FILE *out, const struct report_summary *s)
{
	for (size_t i = 0; i < s->ndeadlock;) {
		size_t start = i;
		fputs("Deadlock: ", out);
		thread_ref(out, s->deadlock[i]->tid, s->deadlock[i]->name);
		for (;;) {
			const struct model_thread *t = s->deadlock[i];
			bool more = i + 1 < s->ndeadlock && s->deadlock[i + 1]->tid == t->waiting_on->owner;
			const struct model_thread *next = more ? s->deadlock[i + 1] : s->deadlock[start];
			fputs(i == start ? " waits for " : ", which waits for ", out);
			thread_ref(out, next->tid, next->name);
			i++;
			if (!more)
				break;
		}
		fputs("\n", out);
	}
}

/* T's stack and what goes with it, under its header. */
static void write_stack(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	write_frames(x, &t->frames);
	if (t->frames.n == 0)
		fprintf(out, mi ? "  (no Python frames)\n" : "  (no frames)\n");
	if (t->waiting_on)
		write_wait(out, t->waiting_on);
	if (t->error) {
		fputs("  [incomplete: ", out);
		put(out, t->error);
		fputs("]\n", out);
	}
	if (t->exception)
		write_exception(x, t->exception);
}

static void write_thread(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	fprintf(out, "\n");
	if (mi) {
		thread_header(x, mi, t);
		fprintf(out, "Traceback (most recent call last):\n");
	} else {
		color(x, C_BOLD);
		fprintf(out, "Thread %lld (%s%s)", (long long)t->tid,
			x->r->state_missing ? "Python state not in the dump" : "no Python thread state",
			t->crashed ? ", crashed" : "");
		color(x, C_RESET);
		fprintf(out, "\nNative stack (most recent call last):\n");
	}
	write_stack(x, mi, t);
}

/* ------------------------------------------------------------------------
 * Identical stacks, shown once for all the threads that have them
 * ------------------------------------------------------------------------ */

/* A thread that may share its section: one whose section would hold
 * nothing but its stack (and a wait other threads share, same_stack). */
static bool groupable(const struct model_thread *t)
{
	if (t->crashed || t->holds_gil || t->exception || t->error || t->frames.n == 0)
		return false;
	for (size_t i = 0; i < t->frames.n; i++)
		if (((const struct model_frame *)t->frames.items[i])->has_locals)
			return false;
	return true;
}

static bool same_frame(const struct model_frame *a, const struct model_frame *b)
{
	return a->kind == b->kind && a->line == b->line && a->address == b->address &&
	       a->recovered == b->recovered && a->inlined == b->inlined &&
	       a->has_position == b->has_position && a->column == b->column &&
	       a->end_line == b->end_line && a->end_column == b->end_column &&
	       same_str(a->file, b->file) && same_str(a->function, b->function) &&
	       same_str(a->source_file, b->source_file);
}

/* The same frames, and waiting for the same object (or neither waits). */
static bool same_stack(const struct model_thread *a, const struct model_thread *b)
{
	const struct model_wait *wa = a->waiting_on, *wb = b->waiting_on;
	if (a->frames.n != b->frames.n || !wa != !wb ||
	    (wa && (wa->address != wb->address || wa->owner != wb->owner || wa->count != wb->count ||
		    wa->joins != wb->joins)))
		return false;
	for (size_t i = 0; i < a->frames.n; i++)
		if (!same_frame(a->frames.items[i], b->frames.items[i]))
			return false;
	return true;
}

/* Thread K of MI, and (unless --all-threads) the later threads of MI with
 * its stack, which DONE then marks: one section for them all. */
static void write_thread_or_group(const struct tx *x, const struct model_interp *mi, size_t k, bool *done)
{
	const struct model_thread *t = mi->threads.items[k];
	size_t n = 1;
	for (size_t i = k + 1; !x->o->all_threads && groupable(t) && i < mi->threads.n; i++)
		n += !done[i] && groupable(mi->threads.items[i]) && same_stack(t, mi->threads.items[i]);
	if (n == 1) {
		write_thread(x, mi, t);
		return;
	}
	FILE *out = x->out;
	fprintf(out, "\n");
	color(x, C_BOLD);
	fprintf(out, "%zu threads with this stack:", n);
	color(x, C_RESET);
	const char *sep = " ";
	for (size_t i = k; i < mi->threads.n; i++) {
		const struct model_thread *u = mi->threads.items[i];
		if (i > k && (done[i] || !groupable(u) || !same_stack(t, u)))
			continue;
		done[i] = true;
		fputs(sep, out);
		sep = ", ";
		put_thread(out, u, " ");
	}
	if (x->r->interps.n > 1)
		fprintf(out, " (interpreter %lld)", (long long)mi->id);
	fprintf(out, "\nTraceback (most recent call last):\n");
	write_stack(x, mi, t);
}

/* The threads in the order the text shows them: the one that received
 * the signal, the one holding the GIL, then the rest as the dump has them
 * (those with one stack in one section), then (--native) the OS threads
 * that run no Python; a crashed one of those first of all. */
static void write_threads(const struct tx *x)
{
	const struct model_report *r = x->r;
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; rank == 0 && i < r->native_threads.n; i++) {
			const struct model_thread *t = r->native_threads.items[i];
			if (t->crashed)
				write_thread(x, NULL, t);
		}
		for (size_t i = 0; i < r->interps.n; i++) {
			const struct model_interp *mi = r->interps.items[i];
			bool *done = calloc(mi->threads.n ? mi->threads.n : 1, sizeof(*done));
			for (size_t k = 0; k < mi->threads.n; k++) {
				const struct model_thread *t = mi->threads.items[k];
				int mine = t->crashed ? 0 : t->holds_gil ? 1 : 2;
				if (mine != rank || (done && done[k]))
					continue;
				if (rank == 2 && done)
					write_thread_or_group(x, mi, k, done);
				else
					write_thread(x, mi, t);
			}
			free(done);
		}
	}
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		if (!t->crashed)
			write_thread(x, NULL, t);
	}
}

/* "systemd-coredump: comm python3, exe /usr/bin/python3.11, uid 1000,
 * gid 1000, signal 11, at 2026-11-23T17:49:26Z on web-3": what it knows */
static void write_coredump(FILE *out, const struct model_coredump *c)
{
	fputs("systemd-coredump:", out);
	const char *sep = " ";
	if (c->comm) {
		fprintf(out, "%scomm ", sep);
		put(out, c->comm);
		sep = ", ";
	}
	if (c->exe) {
		fprintf(out, "%sexe ", sep);
		put(out, c->exe);
		sep = ", ";
	}
	const char *names[] = { "uid", "gid", "signal" };
	const int64_t values[] = { c->uid, c->gid, c->signal };
	for (size_t i = 0; i < 3; i++) {
		if (values[i] >= 0) {
			fprintf(out, "%s%s %lld", sep, names[i], (long long)values[i]);
			sep = ", ";
		}
	}
	char when[32];
	if (report_iso8601(c->timestamp, when, sizeof(when))) {
		fprintf(out, "%sat %s", sep, when);
		sep = ", ";
	}
	if (c->hostname) {
		fputs(" on ", out);
		put(out, c->hostname);
	}
	fputs("\n", out);
}

/* The letters of /proc/PID/stat's state (proc(5)). */
static const char *state_name(char c)
{
	switch (c) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'W': return "paging";
	default: return NULL;
	}
}

/* "Parent 1, uid 1000, gid 1000, state S (sleeping)": what the dump
 * says of them; nothing when it says nothing. */
static void write_owner(FILE *out, const struct model_report *r)
{
	const char *sep = "";
	if (r->ppid >= 0) {
		fprintf(out, "Parent pid %lld", (long long)r->ppid);
		sep = ", ";
	}
	if (r->uid >= 0) {
		fprintf(out, "%s%s %lld", sep, *sep ? "uid" : "Uid", (long long)r->uid);
		sep = ", ";
	}
	if (r->gid >= 0) {
		fprintf(out, "%s%s %lld", sep, *sep ? "gid" : "Gid", (long long)r->gid);
		sep = ", ";
	}
	if (r->state) {
		const char *name = state_name(r->state);
		fprintf(out, "%s%s %c", sep, *sep ? "state" : "State", r->state);
		if (name)
			fprintf(out, " (%s)", name);
		sep = ", ";
	}
	if (*sep)
		fputs("\n", out);
}

static void write_header(const struct tx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	put(out, r->input_path);
	fprintf(out, ": %s", r->input_format && strcmp(r->input_format, "elf-core") == 0 ? "ELF core"
		: r->input_format ? r->input_format : "dump");
	if (r->input_compression)
		fprintf(out, " (%s-compressed)", r->input_compression);
	fprintf(out, ", %llu bytes\n", (unsigned long long)r->input_size);

	struct report_summary s;
	report_summary(r, &s);
	color(x, C_BOLD);
	fputs("Summary: ", out);
	put(out, s.text ? s.text : "(out of memory)");
	color(x, C_RESET);
	fputs("\n", out);
	write_deadlock(out, &s);
	report_summary_free(&s);

	fprintf(out, "Process ");
	if (r->pid >= 0)
		fprintf(out, "%lld", (long long)r->pid);
	else
		fprintf(out, "(pid unknown)");
	if (r->argv) {
		fprintf(out, ":");
		for (const char **a = r->argv; *a; a++) {
			fputs(" ", out);
			put(out, *a);
		}
	} else if (r->executable) {
		fputs(": ", out);
		put(out, r->executable);
	}
	fprintf(out, "\n");
	if (r->coredump)
		write_coredump(out, r->coredump);
	write_owner(out, r);
	if (r->has_python) {
		fprintf(out, "Python %s", r->version ? r->version : "(version unknown)");
		if (r->free_threaded) {
			/* the GIL of each interpreter: disabled, unless an extension
			 * that needs it turned it on */
			size_t on = 0, off = 0;
			for (size_t i = 0; i < r->interps.n; i++) {
				const struct model_interp *mi = r->interps.items[i];
				on += mi->gil_enabled == 1;
				off += mi->gil_enabled == 0;
			}
			fprintf(out, " free-threaded%s", on && !off ? ", GIL enabled" : off && !on ? ", GIL disabled"
				: on && off ? ", GIL enabled in some interpreters" : "");
		}
		if (r->binary_path) {
			fputs(" (", out);
			put(out, r->binary_path);
			fputs(")", out);
		}
		fprintf(out, "\n");
	}
	if (r->has_signal) {
		char line[256];
		report_signal_line(r, line, sizeof(line));
		fprintf(out, "Signal: %s", line);
		if (r->crashed_tid >= 0)
			fprintf(out, ", received by thread %lld", (long long)r->crashed_tid);
		fprintf(out, "\n");
	} else {
		fprintf(out, "Signal: none (a snapshot, not a crash)\n");
	}
	if (r->fingerprint) {
		const struct model_fingerprint *fp = r->fingerprint;
		fprintf(out, "Fingerprint: %s (", fp->hash);
		put(out, fp->kind);
		for (size_t i = 0; i < fp->nframes; i++) {
			fputs(i ? " < " : ": ", out);
			put(out, fp->frames[i]);
		}
		fprintf(out, ")\n");
	}
}

/* ------------------------------------------------------------------------
 * asyncio tasks: a tree like asyncio's pstree, each task under the tasks
 * that await it
 * ------------------------------------------------------------------------ */

#define MAX_TREE_DEPTH 64

struct tree {
	FILE *out;
	const struct tx *x;
	const struct model_task *path[MAX_TREE_DEPTH];
	const struct model_task **shown;     /* printed with their subtrees */
	size_t nshown, cap;
};

static bool tree_shown(const struct tree *w, const struct model_task *t)
{
	for (size_t i = 0; i < w->nshown; i++)
		if (w->shown[i] == t)
			return true;
	return false;
}

static void tree_mark(struct tree *w, const struct model_task *t)
{
	if (w->nshown == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		const struct model_task **n = realloc(w->shown, cap * sizeof(*n));
		if (!n)
			return;
		w->shown = n;
		w->cap = cap;
	}
	w->shown[w->nshown++] = t;
}

static void write_task(struct tree *w, const struct model_task *t, int depth)
{
	FILE *out = w->out;
	int ind = 2 + 4 * depth;
	fprintf(out, "%*s%s", ind, "", depth ? "awaits " : "");
	put(out, t->name ? t->name : "(name unknown)");
	fprintf(out, " (0x%llx) %s", (unsigned long long)t->address, t->state ? t->state : "(state unknown)");
	for (int i = 0; i < depth; i++) {
		if (w->path[i] == t) {
			fprintf(out, ": a cycle of awaits back to it\n");
			return;
		}
	}
	if (tree_shown(w, t)) {
		fprintf(out, ", shown above\n");
		return;
	}
	tree_mark(w, t);
	if (t->running)
		fprintf(out, ", running");
	if (t->coroutine) {
		fputs(", coroutine ", out);
		put(out, t->coroutine);
	}
	if (t->result) {
		fputs(", result ", out);
		put(out, t->result);
	}
	if (t->exception_type) {
		fputs(", raised ", out);
		put(out, t->exception_type);
		if (t->exception_message && *t->exception_message) {
			fputs(": ", out);
			put(out, t->exception_message);
		}
	}
	if (t->waiter) {
		fputs(", waiting on ", out);
		put(out, t->waiter_type ? t->waiter_type : "?");
		fprintf(out, " 0x%llx", (unsigned long long)t->waiter);
	}
	fprintf(out, "\n");
	char indent[4 * MAX_TREE_DEPTH + 8];
	snprintf(indent, sizeof(indent), "%*s", ind + 2, "");
	for (size_t j = t->stack.n; j-- > 0;)
		write_python_frame(w->x, indent, t->stack.items[j]);
	if (t->error) {
		fprintf(out, "%s[incomplete: ", indent);
		put(out, t->error);
		fputs("]\n", out);
	}
	if (depth + 1 >= MAX_TREE_DEPTH) {
		if (t->awaiting.n)
			fprintf(out, "%s(awaits more, nested too deep to show)\n", indent);
		return;
	}
	w->path[depth] = t;
	for (size_t k = 0; k < t->awaiting.n; k++)
		write_task(w, t->awaiting.items[k], depth + 1);
}

static void write_tasks(const struct tx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		if (!mi->asyncio_read) {
			fprintf(out, "\nTasks of interpreter %lld: not read (the warnings say why)\n", (long long)mi->id);
			continue;
		}
		if (mi->loops.n == 0)
			fprintf(out, "\nTasks of interpreter %lld: no asyncio tasks\n", (long long)mi->id);
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			fprintf(out, "\nTasks of loop 0x%llx", (unsigned long long)l->address);
			if (r->interps.n > 1)
				fprintf(out, ", interpreter %lld", (long long)mi->id);
			if (l->thread >= 0)
			{
				fprintf(out, ", run by thread %lld", (long long)l->thread);
				if (l->thread_name) {
					fputs(" \"", out);
					put(out, l->thread_name);
					fputs("\"", out);
				}
			}
			else
				fprintf(out, ", not running");
			fprintf(out, " (%zu tasks; each awaited task under the tasks awaiting it):\n", l->tasks.n);
			struct tree w = { .out = out, .x = x };
			/* the tasks no task awaits first, then what is left (cycles) */
			for (int pass = 0; pass < 2; pass++) {
				for (size_t j = 0; j < l->tasks.n; j++) {
					const struct model_task *t = l->tasks.items[j];
					if ((pass == 0 && t->awaited_by.n) || tree_shown(&w, t))
						continue;
					write_task(&w, t, 0);
				}
			}
			free(w.shown);
		}
	}
}

/* The frames a redaction's "in" and thread or task name. */
static const struct ptrvec *redaction_frames(const struct model_report *r, const struct model_redaction *e)
{
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; strcmp(e->in, "task") != 0 && k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (t->tid == e->thread)
				return strcmp(e->in, "stack") == 0 ? &t->frames
				       : t->exception ? &t->exception->traceback : NULL;
		}
		for (size_t k = 0; strcmp(e->in, "task") == 0 && k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			for (size_t j = 0; j < l->tasks.n; j++) {
				const struct model_task *t = l->tasks.items[j];
				if (t->address == e->task)
					return &t->stack;
			}
		}
	}
	return NULL;
}

/* One line per value redact.c replaced; with --redact and nothing found,
 * a line saying so. */
static void write_redacted(FILE *out, const struct model_report *r)
{
	if (!r->redact)
		return;
	if (!r->redactions.n) {
		fprintf(out, "\nRedacted: nothing (no name or value looked secret)\n");
		return;
	}
	fprintf(out, "\nRedacted (values replaced by their type and length):\n");
	for (size_t i = 0; i < r->redactions.n; i++) {
		const struct model_redaction *e = r->redactions.items[i];
		fputs("  ", out);
		if (strcmp(e->in, "task") == 0)
			fprintf(out, "task 0x%llx", (unsigned long long)e->task);
		else if (e->thread >= 0)
			fprintf(out, "thread %lld", (long long)e->thread);
		else
			fputs("thread (tid unknown)", out);
		if (strcmp(e->in, "exception") == 0)
			fputs(", the exception it handles", out);
		const struct ptrvec *frames = e->frame >= 0 ? redaction_frames(r, e) : NULL;
		if (frames && (size_t)e->frame < frames->n) {
			const struct model_frame *f = frames->items[e->frame];
			fputs(", in ", out);
			put(out, f->function);
		}
		fputs(": ", out);
		if (e->name) {
			put(out, e->name);
			if (e->attribute) {
				fputs(".", out);
				put(out, e->attribute);
			}
		} else {
			fputs(strcmp(e->in, "task") == 0 ? "its result or message" : "its message", out);
		}
		fprintf(out, " (%s)\n", strcmp(e->reason, "name") == 0 ? "the name looks secret"
			: strcmp(e->reason, "secret-value") == 0 ? "holds a value redacted elsewhere" : e->reason);
	}
}

int report_text_write(FILE *out, const struct model_report *r)
{
	return report_text_write_tasks(out, r, false);
}

/* A crash reporter's notes (Crashpad's annotations): "module: name = value". */
static void write_annotations(FILE *out, const struct model_report *r)
{
	if (!r->nannotations)
		return;
	fprintf(out, "\nAnnotations:\n");
	for (size_t i = 0; i < r->nannotations; i++) {
		const struct model_annotation *n = &r->annotations[i];
		fputs("  ", out);
		if (n->module) {
			put(out, n->module);
			fputs(": ", out);
		}
		if (n->name) {
			put(out, n->name);
			fputs(" = ", out);
		}
		if (n->value)
			put(out, n->value);
		else
			fputs("(not text)", out);
		fputs("\n", out);
	}
}


int report_text_write_tasks(FILE *out, const struct model_report *r, bool tasks)
{
	struct report_text_options o = { .tasks = tasks, .source = true };
	return report_text_write_options(out, r, &o);
}

int report_text_write_options(FILE *out, const struct model_report *r, const struct report_text_options *o)
{
	struct tx x = { out, r, o, o->source ? source_cache_new(o->sysroot) : NULL };
	write_header(&x);
	write_threads(&x);
	if (o->tasks)
		write_tasks(&x);
	write_redacted(out, r);
	write_annotations(out, r);
	if (r->warnings.n) {
		fprintf(out, "\nWarnings:\n");
		for (size_t i = 0; i < r->warnings.n; i++) {
			fputs("  ", out);
			put(out, r->warnings.items[i]);
			fputs("\n", out);
		}
	}
	source_cache_free(x.src);
	return ferror(out) ? -1 : 0;
}
