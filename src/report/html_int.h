/* The pieces of the HTML report (html.c: the page; html_stack.c: frames,
 * source lines, locals, exceptions; html_svg.c: the pictures of lock
 * waits and asyncio tasks). */
#ifndef PYCORE_REPORT_HTML_INT_H
#define PYCORE_REPORT_HTML_INT_H

#include "report/html.h"
#include "report/report.h"
#include "report/source.h"
#include "report/stackgroup.h"

struct hx {
	FILE *out;
	const struct model_report *r;
	const struct report_html_options *o;
	struct source_cache *src;    /* NULL: no source lines */
	bool fold;                   /* past HTML_FOLD_THREADS threads: each one's stack folded */
};

/* Past this many threads a page opens with every thread's stack folded
 * (<details>) but the crashed thread's and the GIL holder's: the browser
 * lays out only their headings until one is opened. */
#define HTML_FOLD_THREADS 50

/* A dump's string as marked HTML text; "?" for NULL. */
void html_text(FILE *out, const char *s);

/* FRAMES (innermost first) as a list, outermost first; a line repeated
 * more than 3 times (recursion) shows its further repeats folded. */
void html_frames(const struct hx *x, const struct ptrvec *frames);
/* One Python frame's line and its source, for tracebacks of exceptions
 * and tasks. */
void html_python_frame(const struct hx *x, const struct model_frame *f);
void html_exception(const struct hx *x, const struct model_exception *e);
/* A thread's greenlets (struct model_greenlet), each with its stack. */
void html_greenlets(const struct hx *x, const struct ptrvec *greenlets);
/* 'thread 12 "name"' */
void html_thread_ref(FILE *out, int64_t tid, const char *name);

/* The lock-wait graph (threads and the owners they wait for), each cycle
 * of S marked; nothing when no thread waits on an owned object. */
void html_waits(const struct hx *x, const struct report_summary *s);
/* Every event loop's tasks: a tree picture and each task's stack. */
void html_tasks(const struct hx *x);


#endif
