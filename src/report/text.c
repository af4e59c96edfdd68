/* The text report: a header about the process, then each thread's stack in
 * the style of a Python traceback (most recent call last). */
#include "report/report.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *report_signal_name(int n)
{
	/* Linux x86_64 numbering */
	static const char *const names[] = {
		NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
		"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
		"SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN",
		"SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
		"SIGIO", "SIGPWR", "SIGSYS",
	};
	if (n > 0 && (size_t)n < sizeof(names) / sizeof(names[0]))
		return names[n];
	return NULL;
}

static void write_native_frame(FILE *out, const struct model_frame *f)
{
	fprintf(out, "  (native) 0x%llx %s in %s", (unsigned long long)f->address,
		f->function ? f->function : "??", f->file ? f->file : "?");
	if (f->source_file)
		fprintf(out, " at %s:%d", f->source_file, f->line);
	fprintf(out, "%s\n", f->inlined ? " (inlined)" : "");
}

/* A thread with no Python frames: its native stack, most recent call last. */
static void write_native_stack(FILE *out, const struct model_thread *t)
{
	fprintf(out, "Native stack (most recent call last):\n");
	for (size_t j = t->frames.n; j-- > 0;)
		write_native_frame(out, t->frames.items[j]);
	if (t->frames.n == 0)
		fprintf(out, "  (no frames)\n");
	if (t->error)
		fprintf(out, "  [incomplete: %s]\n", t->error);
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
	if (t->name)
		fprintf(out, ", \"%s\"", t->name);
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
		if (l->repr)
			fprintf(out, "%s%s%s = %s%s%s%s\n", indent, dot, l->name, l->repr,
				l->error ? "  [" : "", l->error ? l->error : "", l->error ? "]" : "");
		else
			fprintf(out, "%s%s%s: <%s>\n", indent, dot, l->name, l->error ? l->error : "unreadable");
		if (l->has_attributes)
			write_locals(out, &l->attributes, "        ", ".");
	}
}

static void write_python_frame(FILE *out, const char *indent, const struct model_frame *f)
{
	fprintf(out, "%sFile \"%s\", line ", indent, f->file ? f->file : "?");
	if (f->line > 0)
		fprintf(out, "%d", f->line);
	else
		fprintf(out, "?");
	fprintf(out, ", in %s\n", f->function ? f->function : "?");
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
	fprintf(out, "%*s%s%s (0x%llx) %s", ind, "", depth ? "awaits " : "", t->name ? t->name : "(name unknown)",
		(unsigned long long)t->address, t->state ? t->state : "(state unknown)");
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
	if (t->coroutine)
		fprintf(out, ", coroutine %s", t->coroutine);
	if (t->result)
		fprintf(out, ", result %s", t->result);
	if (t->exception_type)
		fprintf(out, ", raised %s%s%s", t->exception_type, t->exception_message && *t->exception_message
			? ": " : "", t->exception_message ? t->exception_message : "");
	if (t->waiter)
		fprintf(out, ", waiting on %s 0x%llx", t->waiter_type ? t->waiter_type : "?",
			(unsigned long long)t->waiter);
	fprintf(out, "\n");
	char indent[4 * MAX_TREE_DEPTH + 8];
	snprintf(indent, sizeof(indent), "%*s", ind + 2, "");
	for (size_t j = t->stack.n; j-- > 0;)
		write_python_frame(out, indent, t->stack.items[j]);
	if (t->error)
		fprintf(out, "%s[incomplete: %s]\n", indent, t->error);
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
				fprintf(out, ", run by thread %lld%s%s%s", (long long)l->thread, l->thread_name ? " \"" : "",
					l->thread_name ? l->thread_name : "", l->thread_name ? "\"" : "");
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

int report_text_write(FILE *out, const struct model_report *r)
{
	return report_text_write_tasks(out, r, false);
}

int report_text_write_tasks(FILE *out, const struct model_report *r, bool tasks)
{
	fprintf(out, "%s: %s", r->input_path ? r->input_path : "?",
		r->input_format && strcmp(r->input_format, "elf-core") == 0 ? "ELF core"
		: r->input_format ? r->input_format : "dump");
	if (r->input_compression)
		fprintf(out, " (%s-compressed)", r->input_compression);
	fprintf(out, ", %llu bytes\n", (unsigned long long)r->input_size);

	fprintf(out, "Process ");
	if (r->pid >= 0)
		fprintf(out, "%lld", (long long)r->pid);
	else
		fprintf(out, "(pid unknown)");
	if (r->argv) {
		fprintf(out, ":");
		for (const char **a = r->argv; *a; a++)
			fprintf(out, " %s", *a);
	} else if (r->executable) {
		fprintf(out, ": %s", r->executable);
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
		if (r->binary_path)
			fprintf(out, " (%s)", r->binary_path);
		fprintf(out, "\n");
	}
	if (r->has_signal) {
		fprintf(out, "Signal: %s (%d), code %d", r->signal_name ? r->signal_name : "signal",
			r->signal_number, r->signal_code);
		if (r->signal_has_address)
			fprintf(out, ", fault address 0x%llx", (unsigned long long)r->signal_address);
		if (r->crashed_tid >= 0)
			fprintf(out, ", received by thread %lld", (long long)r->crashed_tid);
		fprintf(out, "\n");
	} else {
		fprintf(out, "Signal: none (a snapshot, not a crash)\n");
	}
	if (r->fingerprint) {
		const struct model_fingerprint *fp = r->fingerprint;
		fprintf(out, "Fingerprint: %s (%s", fp->hash, fp->kind);
		for (size_t i = 0; i < fp->nframes; i++)
			fprintf(out, "%s%s", i ? " < " : ": ", fp->frames[i]);
		fprintf(out, ")\n");
	}

	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			fprintf(out, "\n");
			thread_header(out, r, mi, t);
			fprintf(out, "Traceback (most recent call last):\n");
			for (size_t j = t->frames.n; j-- > 0;) {
				const struct model_frame *f = t->frames.items[j];
				if (f->kind == FRAME_PYTHON) {
					write_python_frame(out, "  ", f);
				} else if (f->kind == FRAME_GC) {
					fprintf(out, "  <garbage collection>\n");
				} else {
					write_native_frame(out, f);
				}
				if (f->has_locals)
					write_locals(out, &f->locals, "    ", "");
			}
			if (t->frames.n == 0)
				fprintf(out, "  (no Python frames)\n");
			if (t->error)
				fprintf(out, "  [incomplete: %s]\n", t->error);
			if (t->exception) {
				const struct model_exception *e = t->exception;
				fprintf(out, "  while handling %s%s%s\n", e->type ? e->type : "an exception",
					e->message && *e->message ? ": " : "", e->message ? e->message : "");
				for (size_t j = e->traceback.n; j-- > 0;) {
					const struct model_frame *f = e->traceback.items[j];
					fprintf(out, "    File \"%s\", line %d, in %s\n", f->file ? f->file : "?",
						f->line, f->function ? f->function : "?");
				}
				if (e->error)
					fprintf(out, "    [incomplete: %s]\n", e->error);
			}
		}
	}
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		fprintf(out, "\nThread %lld (no Python thread state%s)\n", (long long)t->tid,
			t->crashed ? ", crashed" : "");
		write_native_stack(out, t);
	}
	if (tasks)
		write_tasks(out, r);
	if (r->warnings.n) {
		fprintf(out, "\nWarnings:\n");
		for (size_t i = 0; i < r->warnings.n; i++)
			fprintf(out, "  %s\n", (const char *)r->warnings.items[i]);
	}
	return ferror(out) ? -1 : 0;
}
