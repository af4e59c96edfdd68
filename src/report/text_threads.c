/* The thread sections of the text report: each thread's header, stack,
 * wait and error, identical stacks shown once for all the threads that have
 * them, and the order: the thread that received the signal first, then the
 * one holding the GIL, then the others in the dump's order. */
#include "report/text_int.h"
#include "report/stackgroup.h"

#include <stdlib.h>
#include <string.h>

static void thread_header(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	tx_color(x, C_BOLD);
	fprintf(out, "Thread ");
	tx_put_thread(out, t, NULL);
	fprintf(out, " (ident 0x%llx", (unsigned long long)t->ident);
	if (t->name) {
		fputs(", \"", out);
		tx_put(out, t->name);
		fputs("\"", out);
	}
	if (x->r->interps.n > 1)
		fprintf(out, ", interpreter %lld", (long long)mi->id);
	if (t->holds_gil)
		fprintf(out, ", holds the GIL");
	if (t->crashed) {
		fputs(", ", out);
		tx_color(x, C_RED);
		fputs("crashed", out);
		tx_color(x, C_RESET);
		tx_color(x, C_BOLD);
	}
	fprintf(out, ")");
	tx_color(x, C_RESET);
	fprintf(out, "\n");
}


static void write_wait(FILE *out, const struct model_wait *w)
{
	fputs("  waiting for <", out);
	tx_put(out, w->type);
	fprintf(out, " object at 0x%llx", (unsigned long long)w->address);
	if (w->owner >= 0) {
		fputs(w->joins ? " to end: " : " owned by ", out);
		tx_thread_ref(out, w->owner, w->owner_name);
	} else if (!w->joins && w->owner_ident_known && w->owner_elsewhere) {
		fprintf(out, " owned by ident 0x%llx, not a thread of this process (left by fork?)",
			(unsigned long long)w->owner_ident);
	}
	if (w->count > 0)
		fprintf(out, " (%lld level%s)", (long long)w->count, w->count == 1 ? "" : "s");
	fputs(">\n", out);
}

/* Greenlets V (struct model_greenlet), each with its stack when suspended. */
static void write_greenlets(const struct tx *x, const struct ptrvec *v)
{
	FILE *out = x->out;
	for (size_t i = 0; i < v->n; i++) {
		const struct model_greenlet *g = v->items[i];
		fprintf(out, "Greenlet 0x%llx <", (unsigned long long)g->address);
		tx_put(out, g->type);
		fputs(">", out);
		if (g->main)
			fputs(" main", out);
		if (g->hub)
			fputs(" gevent hub", out);
		fprintf(out, ", %s", g->state);
		if (g->run) {
			fputs(", runs ", out);
			tx_put(out, g->run);
		}
		if (strcmp(g->state, "running") == 0)
			fputs(" (its stack is the thread's, above)", out);
		fputs(g->stack.n ? ":\n" : "\n", out);
		tx_frames(x, &g->stack);
		if (g->error) {
			fputs("  [incomplete: ", out);
			tx_put(out, g->error);
			fputs("]\n", out);
		}
	}
}

/* T's stack and what goes with it, under its header. */
static void write_stack(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	tx_stack(x, &t->frames, t->fault_frame);
	if (t->frames.n == 0)
		fprintf(out, mi ? "  (no Python frames)\n" : "  (no frames)\n");
	if (t->waiting_on)
		write_wait(out, t->waiting_on);
	if (t->error) {
		fputs("  [incomplete: ", out);
		tx_put(out, t->error);
		fputs("]\n", out);
	}
	if (t->exception)
		tx_exception(x, t->exception);
	if (t->greenlets.n) {
		fprintf(out, "Greenlets of thread %lld (%zu, greenlet %s):\n", (long long)t->tid, t->greenlets.n,
			mi && mi->greenlet_version ? mi->greenlet_version : "?");
		write_greenlets(x, &t->greenlets);
	}
}

static void write_thread(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	fprintf(out, "\n");
	if (mi) {
		thread_header(x, mi, t);
		fprintf(out, "Traceback (most recent call last):\n");
	} else {
		tx_color(x, C_BOLD);
		fprintf(out, "Thread %lld (%s%s)", (long long)t->tid,
			x->r->state_missing ? "Python state not in the dump" : "no Python thread state",
			t->crashed ? ", crashed" : "");
		tx_color(x, C_RESET);
		fprintf(out, "\nNative stack (most recent call last):\n");
	}
	write_stack(x, mi, t);
}

/* A thread state no thread of the process has (model_thread's stale):
 * apart, after every thread, what it holds. */
static void write_stale(const struct tx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	fprintf(out, "\n");
	tx_color(x, C_BOLD);
	fprintf(out, "%s (ident 0x%llx", report_stale_heading(x->r), (unsigned long long)t->ident);
	if (t->tid >= 0)
		fprintf(out, ", recorded tid %lld", (long long)t->tid);
	if (x->r->interps.n > 1)
		fprintf(out, ", interpreter %lld", (long long)mi->id);
	fputs(")", out);
	tx_color(x, C_RESET);
	fprintf(out, "\nWhat it holds (most recent call last):\n");
	write_stack(x, mi, t);
}

/* ------------------------------------------------------------------------
 * Identical stacks, shown once for all the threads that have them
 * ------------------------------------------------------------------------ */

/* Thread K of MI, and (unless --all-threads) the later threads of MI with
 * its stack, which DONE then marks: one section for them all. */
static void write_thread_or_group(const struct tx *x, const struct model_interp *mi, size_t k, bool *done)
{
	const struct model_thread *t = mi->threads.items[k];
	size_t n = 1;
	for (size_t i = k + 1; !x->o->all_threads && report_stack_groupable(t) && i < mi->threads.n; i++)
		n += !done[i] && report_stack_groupable(mi->threads.items[i]) && report_same_stack(t, mi->threads.items[i]);
	if (n == 1) {
		write_thread(x, mi, t);
		return;
	}
	FILE *out = x->out;
	fprintf(out, "\n");
	tx_color(x, C_BOLD);
	fprintf(out, "%zu threads with this stack:", n);
	tx_color(x, C_RESET);
	const char *sep = " ";
	for (size_t i = k; i < mi->threads.n; i++) {
		const struct model_thread *u = mi->threads.items[i];
		if (i > k && (done[i] || !report_stack_groupable(u) || !report_same_stack(t, u)))
			continue;
		done[i] = true;
		fputs(sep, out);
		sep = ", ";
		tx_put_thread(out, u, " ");
	}
	if (x->r->interps.n > 1)
		fprintf(out, " (interpreter %lld)", (long long)mi->id);
	fprintf(out, "\nTraceback (most recent call last):\n");
	write_stack(x, mi, t);
}

/* report_threads_in_order's visitor: thread K of MI (MI NULL: an OS
 * thread without Python, T), alone, or with DONE those sharing its stack. */
static void visit_thread(void *arg, const struct model_interp *mi, const struct model_thread *t, size_t k,
			 bool *done)
{
	const struct tx *x = arg;
	if (done)
		write_thread_or_group(x, mi, k, done);
	else
		write_thread(x, mi, t);
}

/* The threads in the order the text shows them: the one that received
 * the signal, the one holding the GIL, then the rest as the dump has them
 * (those with one stack in one section), then (--native) the OS threads
 * that run no Python; a crashed one of those first of all. */
void tx_threads(const struct tx *x)
{
	const struct model_report *r = x->r;
	report_threads_in_order(r, visit_thread, (void *)x);
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		if (!mi->greenlets.n)
			continue;
		fprintf(x->out, "\nGreenlets of interpreter %lld whose thread the dump does not prove (%zu, greenlet %s):\n",
			(long long)mi->id, mi->greenlets.n, mi->greenlet_version ? mi->greenlet_version : "?");
		write_greenlets(x, &mi->greenlets);
	}
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		if (!t->crashed)
			write_thread(x, NULL, t);
	}
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->stale_threads.n; k++)
			write_stale(x, mi, mi->stale_threads.items[k]);
	}
}
