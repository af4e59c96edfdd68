/* The text report: the summary and a header about the process, then each
 * thread's stack in the style of a Python traceback (most recent call
 * last), the thread that received the signal first, then the one holding
 * the GIL, then the others in the dump's order.  Every string that comes
 * from the dump goes through report_put_escaped. */
#include "report/report.h"

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

static void write_frame(FILE *out, const struct model_frame *f)
{
	if (f->kind == FRAME_PYTHON) {
		fputs("  File \"", out);
		put(out, f->file);
		fputs("\", line ", out);
		if (f->line > 0)
			fprintf(out, "%d", f->line);
		else
			fprintf(out, "?");
		fputs(", in ", out);
		put(out, f->function);
		fputs("\n", out);
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

int report_text_write(FILE *out, const struct model_report *r)
{
	write_header(out, r);
	write_threads(out, r);
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
