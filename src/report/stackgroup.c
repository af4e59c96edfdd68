/* Which threads share one section of a report: those whose section would
 * hold nothing but a stack, with the same frames and the same wait (the
 * text report's "N threads with this stack"; the HTML page groups the
 * same way). */
#include "report/stackgroup.h"

#include <stdlib.h>
#include <string.h>

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool report_stack_groupable(const struct model_thread *t)
{
	if (t->crashed || t->holds_gil || t->exception || t->error || t->frames.n == 0 || t->greenlets.n)
		return false;
	for (size_t i = 0; i < t->frames.n; i++)
		if (((const struct model_frame *)t->frames.items[i])->has_locals)
			return false;
	return true;
}

static bool same_frame(const struct model_frame *a, const struct model_frame *b)
{
	return a->kind == b->kind && a->line == b->line && a->address == b->address &&
	       a->recovered == b->recovered && a->inlined == b->inlined && a->tail_call == b->tail_call &&
	       a->has_position == b->has_position && a->column == b->column &&
	       a->end_line == b->end_line && a->end_column == b->end_column &&
	       same_str(a->file, b->file) && same_str(a->function, b->function) &&
	       same_str(a->source_file, b->source_file) && same_str(a->found_by, b->found_by) &&
	       a->greenlet == b->greenlet;
}

bool report_same_stack(const struct model_thread *a, const struct model_thread *b)
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

void report_threads_in_order(const struct model_report *r, report_thread_fn fn, void *arg)
{
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; rank == 0 && i < r->native_threads.n; i++) {
			const struct model_thread *t = r->native_threads.items[i];
			if (t->crashed)
				fn(arg, NULL, t, i, NULL);
		}
		for (size_t i = 0; i < r->interps.n; i++) {
			const struct model_interp *mi = r->interps.items[i];
			bool *done = calloc(mi->threads.n ? mi->threads.n : 1, sizeof(*done));
			for (size_t k = 0; k < mi->threads.n; k++) {
				const struct model_thread *t = mi->threads.items[k];
				int mine = t->crashed ? 0 : t->holds_gil ? 1 : 2;
				if (mine != rank || (done && done[k]))
					continue;
				fn(arg, mi, t, k, rank == 2 ? done : NULL);
			}
			free(done);
		}
	}
}

const char *report_stale_heading(const struct model_report *r)
{
	if (r->input_format && strcmp(r->input_format, "minidump") == 0)
		return "Thread state of no thread in this minidump (left by fork, or a thread its writer did "
		       "not capture)";
	return "Thread state left by fork: not a thread of this process";
}
