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

#endif
