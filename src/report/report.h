/* Renderers of the model: text for people, JSON (pycore-report/1) for
 * machines.  They never read a dump. */
#ifndef PYCORE_REPORT_REPORT_H
#define PYCORE_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model/fingerprint.h"
#include "model/model.h"

struct locate_policy;

#define REPORT_SCHEMA "pycore-report/1"

/* How the text report is written. */
struct report_text_options {
	bool tasks;                  /* a section per event loop: its tasks as a tree,
					each awaited task under the tasks awaiting it */
	bool source;                 /* the source line (and the 3.11+ caret range)
					under each Python frame, when its file is readable */
	const struct locate_policy *files; /* where source files are found
					      (locate.h's locate_source_map);
					      NULL: at the paths recorded */
	bool modules;                /* a section listing every module, the file read
					for it and how that file was found (--verbose) */
	bool all_threads;            /* every thread on its own: identical stacks
					are not grouped */
	bool all_frames;             /* a recursion's frames all shown, not folded */
	bool color;                  /* ANSI colours (for a terminal) */
};

/* All return 0, or -1 when writing failed. */
int report_json_write(FILE *out, const struct model_report *r, bool pretty);
int report_text_write_options(FILE *out, const struct model_report *r, const struct report_text_options *o);
/* The text with source lines (from the host's files), no colours and
 * identical stacks grouped, no asyncio section. */
int report_text_write(FILE *out, const struct model_report *r);
/* The folded-stack format of flame-graph tools: a line per distinct
 * stack, "frame;frame;...;frame COUNT", outermost frame first, COUNT the
 * threads with that stack. */
int report_collapsed_write(FILE *out, const struct model_report *r);

/* An error record: the line batch mode (and the coredump hook) writes for
 * a dump that has no report, {"schema", "tool", "input": {"path"},
 * "error": {"code", "message", "kind", "address"}} (README, "Batch mode"):
 * kind is E's code's name (error.h's one table), code the same unless the
 * caller passes another (the hook's older names); 0, or -1 when writing
 * failed. */
int report_json_error_write(FILE *out, const char *path, const char *code, const struct pc_error *e);

/* "SIGSEGV" for 11; NULL when the number has no name. */
const char *report_signal_name(int number);
/* "SEGV_MAPERR" for SIGSEGV's si_code 1, "SI_USER" for 0 (any signal);
 * NULL for a code the kernel does not define. */
const char *report_signal_code_name(int signo, int code);
/* What R's signal was, in one line: "SIGSEGV (11), SEGV_MAPERR (address
 * not mapped), fault address 0x0", "SIGTERM (15) sent by pid 4242 (uid 0)
 * with kill".  R must have a signal. */
void report_signal_line(const struct model_report *r, char *buf, size_t size);
/* The same for any signal SG of process PID. */
void report_signal_text(const struct model_signal *sg, int64_t pid, char *buf, size_t size);
/* The re-raise of R's fault (R->fault non-NULL), in one line: "re-raised
 * by faulthandler (raise) in thread 12 as SIGSEGV, received by thread 9". */
void report_reraise_line(const struct model_report *r, char *buf, size_t size);
/* What r->fault's handler caught, and from where: its signal line, or,
 * nothing recording it, that its origin is unrecorded. */
void report_caught_text(const struct model_report *r, char *buf, size_t size);

/* USEC microseconds since the epoch as ISO-8601 UTC to the second,
 * "2026-11-23T17:49:26Z", into BUF (at least 32 bytes); false when it is
 * out of range. */
bool report_iso8601(int64_t usec, char *buf, size_t size);

/* Write S (from a dump: any bytes) to OUT escaped as escape.c says, so
 * that no control character reaches a terminal.  0, or -1 on a write error. */
int report_put_escaped(FILE *out, const char *s);
/* The columns the first N bytes of S take once so written (a printable
 * character one, an escape its length): what lines up under them. */
size_t report_escaped_width(const char *s, size_t n);

/* The answer first: what happened, in which thread, where. */
struct report_summary {
	const char *kind;                      /* "crash", "signal-sent", "snapshot" */
	int64_t tid;                           /* the thread it names, -1: none */
	const struct model_thread *thread;     /* its Python thread, NULL if none */
	const struct model_frame *python_frame;  /* innermost Python frame */
	const struct model_frame *native_frame;  /* innermost native frame (--native) */
	/* when native_frame is the crash machinery's (abort, raise, assert's
	 * reporter: model/machinery.h), the first frame out from it that is
	 * not, before any Python frame: what called it; else NULL */
	const struct model_frame *native_caller;
	const struct model_exception *exception; /* the exception it handles */
	char *text;                            /* one line (malloc'd; NULL when out of memory) */
	const struct model_thread **deadlock;  /* the threads of each wait cycle, each cycle in wait
						  order (malloc'd); NULL: none */
	size_t ndeadlock;
};
void report_summary(const struct model_report *r, struct report_summary *s);
void report_summary_free(struct report_summary *s);

#endif
