/* The summary both reports open with: what happened (the signal and what
 * it means, or a snapshot), in which thread, at which Python line and in
 * which native function, and the exception that thread was handling. */
#include "report/report.h"
#include "model/machinery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The thread the summary is about: the one that received the signal, or
 * in a snapshot the one holding the GIL (the one running Python code). */
static const struct model_thread *pick_thread(const struct model_report *r)
{
	const struct model_thread *gil = NULL;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if ((r->has_signal || r->fault) &&
			    (t->crashed || (!r->fault && t->tid >= 0 && t->tid == r->crashed_tid)))
				return t;
			if (t->holds_gil && !gil)
				gil = t;
		}
	}
	return r->has_signal || r->fault ? NULL : gil;
}

/* The innermost frame of KIND at the crash: below a handler's signal
 * frame, when T took the fault a handler re-raised. */
static const struct model_frame *innermost(const struct model_thread *t, enum frame_kind kind)
{
	for (size_t i = t && t->fault_frame ? t->fault_frame - 1 : 0; t && i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind == kind)
			return f;
	}
	return NULL;
}

/* The first native frame of T out from NF that is not the crash
 * machinery, before any Python frame; NULL when NF is not machinery. */
static const struct model_frame *machinery_caller(const struct model_thread *t, const struct model_frame *nf)
{
	if (!t || !nf)
		return NULL;
	size_t i = 0;
	while (i < t->frames.n && t->frames.items[i] != nf)
		i++;
	if (i == t->frames.n || !(model_is_machinery(nf->function) || model_inside_machinery(t, i)))
		return NULL;
	for (; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			return NULL;
		if (!model_is_machinery(f->function) && !model_inside_machinery(t, i))
			return f;
	}
	return NULL;
}

/* Native frame F as "IN_FUNCTION (library)", or "AT_0xADDRESS (library)"
 * when it has no symbol. */
static void put_native(FILE *m, const struct model_frame *f, const char *in, const char *at)
{
	const char *lib = f->file ? strrchr(f->file, '/') : NULL;
	lib = lib ? lib + 1 : f->file;
	if (f->function)
		fprintf(m, "%s%s", in, f->function);
	else
		fprintf(m, "%s0x%llx", at, (unsigned long long)f->address);
	if (lib)
		fprintf(m, " (%s)", lib);
}

/* At most MAX bytes of S, cut on a character boundary, "..." when cut. */
static void put_cut(FILE *m, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max) {
		fputs(s, m);
		return;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	fwrite(s, 1, max, m);
	fputs("...", m);
}

/* The thread T waits for: the owner of what it waits on. */
static const struct model_thread *waits_for(const struct model_report *r, const struct model_thread *t)
{
	if (!t->waiting_on || t->waiting_on->owner < 0 || t->waiting_on->owner == t->tid)
		return NULL;
	return model_find_thread(r, t->waiting_on->owner, 0);
}

/* Cycles of waits: each thread waits for at most one other, so following
 * the waits from every thread either ends or enters a cycle; each cycle is
 * taken once, from its thread seen first. */
static void find_deadlocks(const struct model_report *r, struct report_summary *s)
{
	size_t n = 0;
	for (size_t i = 0; i < r->interps.n; i++)
		n += ((const struct model_interp *)r->interps.items[i])->threads.n;
	const struct model_thread **all = calloc(n ? n : 1, sizeof(*all));
	int *mark = calloc(n ? n : 1, sizeof(*mark));   /* 0 new, walk number, -1 done */
	s->deadlock = calloc(n ? n : 1, sizeof(*s->deadlock));
	if (!all || !mark || !s->deadlock) {
		free(s->deadlock);
		s->deadlock = NULL;
		goto out;
	}
	n = 0;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++)
			all[n++] = mi->threads.items[k];
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = i;
		int walk = (int)i + 1;
		/* follow the waits, marking this walk, until a thread seen before */
		while (mark[at] == 0) {
			mark[at] = walk;
			const struct model_thread *next = waits_for(r, all[at]);
			size_t j = n;
			for (size_t q = 0; next && q < n; q++)
				if (all[q] == next)
					j = q;
			if (j == n)
				break;
			at = j;
		}
		if (mark[at] == walk && waits_for(r, all[at])) {
			/* a cycle of this walk, entered at AT */
			size_t start = at;
			do {
				s->deadlock[s->ndeadlock++] = all[at];
				const struct model_thread *next = waits_for(r, all[at]);
				for (size_t q = 0; q < n; q++)
					if (all[q] == next)
						at = q;
			} while (at != start && s->ndeadlock < n);
		}
		for (size_t q = 0; q < n; q++)
			if (mark[q] == walk)
				mark[q] = -1;
	}
	if (!s->ndeadlock) {
		free(s->deadlock);
		s->deadlock = NULL;
	}
out:
	free(all);
	free(mark);
}

void report_summary(const struct model_report *r, struct report_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = !r->has_signal ? "snapshot"
		  : !r->fault && r->signal_has_sender && r->sender_pid != r->pid ? "signal-sent"
		  : r->fault && r->fault->signal.has_sender && r->fault->signal.sender_pid != r->pid ? "signal-sent"
		  : "crash";
	s->thread = pick_thread(r);
	int64_t crashed = r->fault ? r->fault->tid : r->crashed_tid;
	s->tid = s->thread ? s->thread->tid : r->has_signal || r->fault ? crashed : -1;
	s->python_frame = innermost(s->thread, FRAME_PYTHON);
	s->native_frame = innermost(s->thread, FRAME_NATIVE);
	s->native_caller = machinery_caller(s->thread, s->native_frame);
	s->exception = s->thread ? s->thread->exception : NULL;
	find_deadlocks(r, s);

	size_t size = 0;
	FILE *m = open_memstream(&s->text, &size);
	if (!m) {
		s->text = NULL;
		return;
	}
	/* a handler's re-raise: the fault it caught first */
	bool sent = r->has_signal && !r->fault && r->signal_has_sender;
	if (r->fault) {
		char line[320];
		report_caught_text(r, line, sizeof(line));
		fputs(line, m);
	} else if (r->has_signal) {
		char line[256];
		report_signal_line(r, line, sizeof(line));
		fputs(line, m);
	} else {
		fputs("snapshot (no signal)", m);
	}
	if (s->thread) {
		fprintf(m, !r->has_signal && !r->fault ? ": thread " : sent ? ", received by thread " : " in thread ");
		if (s->tid >= 0)
			fprintf(m, "%lld", (long long)s->tid);
		else
			fprintf(m, "(tid unknown)");
		if (s->thread->name)
			fprintf(m, " \"%s\"", s->thread->name);
		if (!r->has_signal && !r->fault)
			fprintf(m, " holds the GIL");
	} else if ((r->has_signal || r->fault) && crashed >= 0) {
		fprintf(m, "%s thread %lld (no Python thread state)", sent ? ", received by" : " in",
			(long long)crashed);
	} else if (!r->has_signal && !r->fault) {
		fprintf(m, r->free_threaded ? ": no GIL (free-threaded)" : ": no thread holds the GIL");
	}
	const struct model_frame *pf = s->python_frame, *nf = s->native_frame;
	if (pf) {
		fprintf(m, ": %s:", pf->file ? pf->file : "?");
		if (pf->line > 0)
			fprintf(m, "%d", pf->line);
		else
			fprintf(m, "?");
		fprintf(m, " %s", pf->function ? pf->function : "?");
	} else if (s->thread) {
		fprintf(m, ": no Python frame");
	}
	if (nf) {
		put_native(m, nf, ", in ", ", at ");
		if (s->native_caller)
			put_native(m, s->native_caller, ", called from ", ", called from ");
	}
	if (r->abort && (r->abort->message || r->abort->exception_type)) {
		/* the abort's own words (the text report's tx_put escapes them) */
		fputs(", abort: ", m);
		if (r->abort->exception_type) {
			fputs("uncaught ", m);
			put_cut(m, r->abort->exception_type, 120);
			fputs(r->abort->message ? ": " : "", m);
		}
		if (r->abort->message) {
			fputs("\"", m);
			put_cut(m, r->abort->message, 200);
			fputs("\"", m);
		}
	}
	if (s->exception) {
		fprintf(m, ", while handling %s", s->exception->type ? s->exception->type : "an exception");
		if (s->exception->message && *s->exception->message) {
			fputs(": ", m);
			put_cut(m, s->exception->message, 160);
		}
	}
	if (r->fault) {
		char line[256];
		report_reraise_line(r, line, sizeof(line));
		fprintf(m, "; %s", line);
	}
	if (fclose(m) != 0) {
		free(s->text);
		s->text = NULL;
	}
}

void report_summary_free(struct report_summary *s)
{
	free(s->text);
	s->text = NULL;
	free(s->deadlock);
	s->deadlock = NULL;
	s->ndeadlock = 0;
}

bool report_iso8601(int64_t usec, char *buf, size_t size)
{
	/* up to the year 9999: gmtime_r and %Y stay four digits */
	if (usec < 0 || usec / 1000000 > 253402300799LL)
		return false;
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;
	return gmtime_r(&t, &tm) && strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}
