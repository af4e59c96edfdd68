/* Which threads share one section of a report (stackgroup.c): the text
 * report's and the HTML page's grouping of identical stacks. */
#ifndef PYCORE_REPORT_STACKGROUP_H
#define PYCORE_REPORT_STACKGROUP_H

#include <stdbool.h>

#include "model/model.h"

/* Whether T's section would hold nothing but its stack (so that threads
 * with the same stack can share one), and whether A and B have the same
 * stack and wait. */
bool report_stack_groupable(const struct model_thread *t);
bool report_same_stack(const struct model_thread *a, const struct model_thread *b);

/* The threads in the order both reports show them: a crashed OS thread
 * without Python, then each interpreter's crashed thread, its GIL holder,
 * then its other threads (DONE non-NULL: FN may show those sharing the
 * thread's stack with it, and marks them so that they are not visited
 * again; NULL when out of memory or for the first two).  The OS threads
 * without Python that did not crash are the caller's to show. */
typedef void (*report_thread_fn)(void *arg, const struct model_interp *mi, const struct model_thread *t,
				 size_t k, bool *done);
void report_threads_in_order(const struct model_report *r, report_thread_fn fn, void *arg);

/* The heading of a thread state no thread of the dump has (model_thread's
 * stale), the same in text and HTML: a kernel's core or a live process
 * lists every thread, so it was left by fork; a minidump's writer may
 * have missed the thread. */
const char *report_stale_heading(const struct model_report *r);

#endif
