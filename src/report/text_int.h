/* Inside the text report (report.h's report_text_write_options): the
 * state its sections are written with, and what one section uses of
 * another.  Every string from the dump is written with tx_put. */
#ifndef PYCORE_REPORT_TEXT_INT_H
#define PYCORE_REPORT_TEXT_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "report/report.h"

struct source_cache;

/* What the sections are written with. */
struct tx {
	FILE *out;
	const struct model_report *r;
	const struct report_text_options *o;
	struct source_cache *src;    /* NULL: no source lines */
};

/* ANSI colours, only with --color (a terminal) */
#define C_BOLD    "\033[1m"
#define C_RED     "\033[1;31m"
#define C_MAGENTA "\033[35m"
#define C_RESET   "\033[0m"

/* text_out.c: S escaped ("?" for NULL); CODE when colours are on; S
 * escaped in colour CODE; a thread's tid, then SEP and its quoted name
 * (SEP NULL: no name); 'thread 123 "writer"'. */
void tx_put(FILE *out, const char *s);
void tx_color(const struct tx *x, const char *code);
void tx_put_colored(const struct tx *x, const char *code, const char *s);
void tx_put_thread(FILE *out, const struct model_thread *t, const char *sep);
void tx_thread_ref(FILE *out, int64_t tid, const char *name);

/* text_frames.c: one Python frame's traceback line (and source) after
 * INDENT; FRAMES (innermost first) outermost first, recursion collapsed;
 * the exception a thread handles and its chain; whether two strings
 * (either NULL) are equal. */
void tx_python_frame(const struct tx *x, const char *indent, const struct model_frame *f);
void tx_frames(const struct tx *x, const struct ptrvec *frames);
/* The same for a thread's stack, a line marking where a signal handler's
 * frames begin above FAULT_FRAME (model_thread's; 0: none). */
void tx_stack(const struct tx *x, const struct ptrvec *frames, size_t fault_frame);
void tx_exception(const struct tx *x, const struct model_exception *e);
bool tx_same_str(const char *a, const char *b);

/* The sections, in the order text.c writes them. */
void tx_header(const struct tx *x);    /* text_header.c */
void tx_threads(const struct tx *x);   /* text_threads.c */
void tx_tasks(const struct tx *x);     /* text_tasks.c */

#endif
