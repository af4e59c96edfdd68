/* A live process read several times apart (analyze --pid --samples):
 * each read is analysis_run_process's, one stop as short as one read's,
 * and what each thread did across the reads is classified with its
 * evidence (model_samples, model_hang_thread).
 *
 * Contract: analysis_sample_process reads process PID SO->count times,
 * SO->interval_s from one read's start to the next's, and returns the last
 * read's analysis in *OUT, its report carrying every read's classes
 * (report->samples).  The first read's error is returned as
 * analysis_run_process's; a later one ends the sampling, the reads taken
 * kept and why it ended said (samples->ended).  With FOLDED, *FOLDED is
 * the reads' folded stacks summed (report_collapsed_write's lines, each
 * count the reads' total), malloc'd. */
#ifndef PYCORE_ANALYSIS_SAMPLES_H
#define PYCORE_ANALYSIS_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"

struct samples_options {
	size_t count;                /* reads, at least 1 */
	double interval_s;           /* from one read's start to the next's */
	bool stop;                   /* stop the threads for each read (not --no-stop) */
};

struct pc_error *analysis_sample_process(int64_t pid, const struct analysis_options *opt,
					 const struct samples_options *so, struct analysis **out, char **folded);

/* Dumps of one process taken apart (analyze --compare: gcore run twice,
 * systemd-coredump's stored dumps), read as samples: each analysis_run's,
 * ordered by the time systemd-coredump recorded, else the files'
 * modification times, else as given (samples->ordered_by says which);
 * *OUT the latest dump's analysis, its report carrying the classes.
 * Dumps of different processes are refused (PC_EFORMAT, one line naming
 * both pids); the first dump that cannot be read, its error. */
struct pc_error *analysis_compare_dumps(char *const *paths, size_t n, const struct analysis_options *opt,
					struct analysis **out, char **folded);

/* The classes of SAMPLES's threads and the process's findings, from
 * their per-read records (samples.c's); for the unit test.  */
struct sample_thread {
	int64_t tid;
	const char *name;
	const char *stack;           /* its Python frames, a key: equal strings, equal stacks */
	const char *where;           /* innermost Python frame, "function (file:line)"; NULL none */
	bool holds_gil;
	const char *wait;            /* what it waits on (type, repr); NULL none known */
	const char *wait_key;        /* the object waited on, its type and address: a key */
	int64_t wait_owner;          /* -1 none known */
	const char *wait_owner_name;
	bool deadlocked;             /* in a wait cycle in this read */
	bool waits_gil;              /* in take_gil (--native): wait is "the GIL" */
	/* the frame records each instruction it runs (3.10+): a loop on one
	 * line moves its stack; 3.9 and older update f_lasti only at some */
	bool instruction_known;
	/* with native frames (--native): *NATIVE_KNOWN; the C function its
	 * innermost Python frame called (the outermost native frame below
	 * it), and the innermost, both NULL when it runs bytecode */
	bool native_known;
	const char *c_entry, *c_inner;
	/* the asyncio task its event loop runs now (name and address), and
	 * that task's innermost frame; NULL: none running */
	const char *task, *task_where;
	int64_t cpu_ns;              /* the CPU time it had used, read after the read; -1 unknown */
	bool in_syscall, syscall_known;   /* in a system call, when the read says */
};

struct sample {
	struct sample_thread *threads;
	size_t n;
	double stopped_ms;           /* < 0 not stopped */
	double at_ms;                /* when it was read (a monotonic clock); < 0 unknown (a dump) */
};

/* Into S (in R's arena): the threads' classes and the findings of READS
 * (N of them). */
void samples_classify(struct model_report *r, struct model_samples *s, const struct sample *reads, size_t n);

#endif
