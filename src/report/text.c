/* The text report: the summary and a header about the process, then each
 * thread's stack in the style of a Python traceback (most recent call
 * last), the thread that received the signal first, then the one holding
 * the GIL, then the others in the dump's order.  Every string that comes
 * from the dump goes through report_put_escaped. */
#include "report/report.h"
#include "model/redact.h"

#include <stdlib.h>
#include <string.h>

/* "%s" of a dump string, escaped; "?" for NULL. */
static void put(FILE *out, const char *s)
{
	report_put_escaped(out, s ? s : "?");
}

static void thread_header(FILE *out, const struct model_report *r, const struct model_interp *mi,
			  const struct model_thread *t)
{
	fprintf(out, "Thread ");
	if (t->tid >= 0)
		fprintf(out, "%lld", (long long)t->tid);
	else
		fprintf(out, "(tid unknown)");
	fprintf(out, " (ident 0x%llx", (unsigned long long)t->ident);
	if (t->name) {
		fputs(", \"", out);
		put(out, t->name);
		fputs("\"", out);
	}
	if (r->interps.n > 1)
		fprintf(out, ", interpreter %lld", (long long)mi->id);
	if (t->holds_gil)
		fprintf(out, ", holds the GIL");
	if (t->crashed)
		fprintf(out, ", crashed");
	fprintf(out, ")\n");
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
	}
}

/* A Python frame's line of a traceback, INDENT before it. */
static void write_python_frame(FILE *out, const char *indent, const struct model_frame *f)
{
	fprintf(out, "%sFile \"", indent);
	put(out, f->file);
	fputs("\", line ", out);
	if (f->line > 0)
		fprintf(out, "%d", f->line);
	else
		fprintf(out, "?");
	fputs(", in ", out);
	put(out, f->function);
	fputs(f->recovered ? "  [recovered from the data stack]\n" : "\n", out);
}

static void write_frame(FILE *out, const struct model_frame *f)
{
	if (f->kind == FRAME_PYTHON) {
		write_python_frame(out, "  ", f);
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

static void write_exception(FILE *out, const struct model_exception *e)
{
	fputs("  while handling ", out);
	put(out, e->type ? e->type : "an exception");
	if (e->message && *e->message) {
		fputs(": ", out);
		put(out, e->message);
	}
	fputs("\n", out);
	for (size_t j = e->traceback.n; j-- > 0;) {
		const struct model_frame *f = e->traceback.items[j];
		fputs("    File \"", out);
		put(out, f->file);
		fprintf(out, "\", line %d, in ", f->line);
		put(out, f->function);
		fputs("\n", out);
	}
	if (e->error) {
		fputs("    [incomplete: ", out);
		put(out, e->error);
		fputs("]\n", out);
	}
}

static void write_thread(FILE *out, const struct model_report *r, const struct model_interp *mi,
			 const struct model_thread *t)
{
	fprintf(out, "\n");
	if (mi) {
		thread_header(out, r, mi, t);
		fprintf(out, "Traceback (most recent call last):\n");
	} else {
		fprintf(out, "Thread %lld (%s%s)\n", (long long)t->tid,
			r->state_missing ? "Python state not in the dump" : "no Python thread state",
			t->crashed ? ", crashed" : "");
		fprintf(out, "Native stack (most recent call last):\n");
	}
	for (size_t j = t->frames.n; j-- > 0;)
		write_frame(out, t->frames.items[j]);
	if (t->frames.n == 0)
		fprintf(out, mi ? "  (no Python frames)\n" : "  (no frames)\n");
	if (t->error) {
		fputs("  [incomplete: ", out);
		put(out, t->error);
		fputs("]\n", out);
	}
	if (t->exception)
		write_exception(out, t->exception);
}

/* The threads in the order the text shows them: the one that received
 * the signal, the one holding the GIL, then the rest as the dump has them,
 * then (--native) the OS threads that run no Python; a crashed one of
 * those first of all. */
static void write_threads(FILE *out, const struct model_report *r)
{
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; rank == 0 && i < r->native_threads.n; i++) {
			const struct model_thread *t = r->native_threads.items[i];
			if (t->crashed)
				write_thread(out, r, NULL, t);
		}
		for (size_t i = 0; i < r->interps.n; i++) {
			const struct model_interp *mi = r->interps.items[i];
			for (size_t k = 0; k < mi->threads.n; k++) {
				const struct model_thread *t = mi->threads.items[k];
				int mine = t->crashed ? 0 : t->holds_gil ? 1 : 2;
				if (mine == rank)
					write_thread(out, r, mi, t);
			}
		}
	}
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		if (!t->crashed)
			write_thread(out, r, NULL, t);
	}
}

static void write_header(FILE *out, const struct model_report *r)
{
	put(out, r->input_path);
	fprintf(out, ": %s", r->input_format && strcmp(r->input_format, "elf-core") == 0 ? "ELF core"
		: r->input_format ? r->input_format : "dump");
	if (r->input_compression)
		fprintf(out, " (%s-compressed)", r->input_compression);
	fprintf(out, ", %llu bytes\n", (unsigned long long)r->input_size);

	struct report_summary s;
	report_summary(r, &s);
	fputs("Summary: ", out);
	put(out, s.text ? s.text : "(out of memory)");
	fputs("\n", out);
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
		write_python_frame(out, indent, t->stack.items[j]);
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

static void write_tasks(FILE *out, const struct model_report *r)
{
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
			struct tree w = { .out = out };
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
	write_header(out, r);
	write_threads(out, r);
	if (tasks)
		write_tasks(out, r);
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
	return ferror(out) ? -1 : 0;
}
