/* The walk's time budget (--timeout) and how a thread records why its
 * stack stops: shared by every walker, calling none of them. */
#include "python/walk/walk.h"

#include <time.h>

uint64_t py_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool py_out_of_time(struct py_ctx *c)
{
	if (!c->timed_out && c->deadline_ns && py_now_ns() > c->deadline_ns) {
		c->timed_out = true;
		model_warn(c->r, "the time budget (--timeout %g s) ran out: the report stops where the walk was",
			   c->opt->timeout);
		c->r->incomplete = true;
	}
	return c->timed_out;
}

void py_thread_error(struct py_ctx *c, struct model_thread *t, struct model_error_info why, const char *msg)
{
	if (!t->error) {
		t->error = msg;
		t->error_info = why;
	}
	c->r->incomplete = true;
}
