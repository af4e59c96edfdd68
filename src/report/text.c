/* The text report: the summary and a header about the process, then each
 * thread's stack in the style of a Python traceback (most recent call
 * last), the asyncio tasks, what was redacted, a crash reporter's notes,
 * the modules' files (--verbose) and the warnings, in that order (this
 * file writes the last four).  Every
 * string that comes from the dump goes through report_put_escaped. */
#include "report/samples.h"
#include "report/text_int.h"
#include "report/source.h"
#include "model/redact.h"

#include <stdlib.h>
#include <string.h>

/* The frames a redaction's "in" and thread or task name. */
static const struct ptrvec *redaction_frames(const struct model_report *r, const struct model_redaction *e)
{
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; strcmp(e->in, "greenlet") == 0 && k <= mi->threads.n; k++) {
			const struct ptrvec *v = k < mi->threads.n
				? &((const struct model_thread *)mi->threads.items[k])->greenlets : &mi->greenlets;
			for (size_t j = 0; j < v->n; j++)
				if (((const struct model_greenlet *)v->items[j])->address == e->greenlet)
					return &((const struct model_greenlet *)v->items[j])->stack;
		}
		for (size_t k = 0; strcmp(e->in, "task") != 0 && strcmp(e->in, "greenlet") != 0 && k < mi->threads.n; k++) {
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
		if (strcmp(e->in, "greenlet") == 0)
			fprintf(out, ", greenlet 0x%llx", (unsigned long long)e->greenlet);
		const struct ptrvec *frames = e->frame >= 0 ? redaction_frames(r, e) : NULL;
		if (frames && (size_t)e->frame < frames->n) {
			const struct model_frame *f = frames->items[e->frame];
			fputs(", in ", out);
			tx_put(out, f->function);
		}
		fputs(": ", out);
		if (e->name) {
			tx_put(out, e->name);
			if (e->attribute) {
				fputs(".", out);
				tx_put(out, e->attribute);
			}
		} else {
			fputs(strcmp(e->in, "task") == 0 ? "its result or message" : "its message", out);
		}
		fprintf(out, " (%s)\n", strcmp(e->reason, "name") == 0 ? "the name looks secret"
			: strcmp(e->reason, "secret-value") == 0 ? "holds a value redacted elsewhere" : e->reason);
	}
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
			tx_put(out, n->module);
			fputs(": ", out);
		}
		if (n->name) {
			tx_put(out, n->name);
			fputs(" = ", out);
		}
		if (n->value)
			tx_put(out, n->value);
		else
			fputs("(not text)", out);
		fputs("\n", out);
	}
}

/* How a module's file was found (model_module.found_by), in words. */
static const char *found_by_words(const char *how)
{
	static const char *const words[][2] = {
		{ "recorded", "the path the dump records" },
		{ "executable", "--executable" },
		{ "sysroot", "under --sysroot" },
		{ "search-path", "in a --search-path directory" },
		{ "build-id-tree", "in a build-id tree" },
		{ "debuginfod", "from debuginfod" },
		{ "loader-path", "in the dynamic loader's directories" },
	};
	for (size_t i = 0; how && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(how, words[i][0]) == 0)
			return words[i][1];
	return how ? how : "how unknown";
}

/* How a module's base was found (dump.h's base_from), in words. */
static const char *base_from_words(const char *how)
{
	if (!how)
		return "an unknown source";
	if (strcmp(how, "link_map") == 0)
		return "the dynamic linker's list";
	if (strcmp(how, "module list") == 0)
		return "the minidump's module list";
	return "the file's mapping at offset 0";
}

/* --verbose: "  /usr/lib/libpython3.11.so.1.0: /srv/root/usr/lib/...
 * (under --sysroot)" for each module, "not read" for those without a file. */
static void write_modules(FILE *out, const struct model_report *r)
{
	fprintf(out, "\nModules (the file read for each, and how it was found):\n");
	if (!r->modules.n)
		fprintf(out, "  (none)\n");
	for (size_t i = 0; i < r->modules.n; i++) {
		const struct model_module *m = r->modules.items[i];
		fputs("  ", out);
		tx_put(out, m->path);
		if (m->file) {
			fputs(": ", out);
			tx_put(out, m->file);
			fprintf(out, " (%s", found_by_words(m->found_by));
			if (m->verified_by && strcmp(m->verified_by, "bytes") == 0)
				fprintf(out, "; no build-id: verified by its bytes, %llu compared with the dump's",
					(unsigned long long)m->verified_bytes);
			fputs(")\n", out);
		} else if (m->refused) {
			fputs(": not read: ", out);
			tx_put(out, m->refused);
			fputs("\n", out);
		} else {
			fputs(": not read\n", out);
		}
		if (m->base)
			fprintf(out, "    base 0x%llx, from %s%s\n", (unsigned long long)m->base, base_from_words(m->base_from),
				m->base_verified ? "" : " (its ELF header not in the dump)");
	}
}

int report_text_write_options(FILE *out, const struct model_report *r, const struct report_text_options *o)
{
	struct tx x = { out, r, o, o->source ? source_cache_new(o->files) : NULL };
	tx_header(&x);
	if (r->samples) {
		fputs("\n", out);
		report_samples_text(out, r->samples);
	}
	tx_threads(&x);
	if (o->tasks)
		tx_tasks(&x);
	write_redacted(out, r);
	write_annotations(out, r);
	if (o->modules)
		write_modules(out, r);
	if (r->warnings.n) {
		fprintf(out, "\nWarnings:\n");
		for (size_t i = 0; i < r->warnings.n; i++) {
			fputs("  ", out);
			tx_put(out, r->warnings.items[i]);
			fputs("\n", out);
		}
	}
	source_cache_free(x.src);
	return ferror(out) ? -1 : 0;
}

int report_text_write(FILE *out, const struct model_report *r)
{
	struct report_text_options o = { .source = true };
	return report_text_write_options(out, r, &o);
}
