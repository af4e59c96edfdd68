/* Private to dump/'s live reader (live.c, live_stop.c): a running
 * process's state, shared by its two files.
 * Contract: live.c opens the process and reads its memory; live_stop.c
 * stops and lets go its threads; live_refuse.c says why the kernel
 * refused.  Calls run live_stop.c -> live.c -> live_refuse.c; none is
 * called from outside dump/ but through dump.h. */
#ifndef PYCORE_DUMP_LIVE_H
#define PYCORE_DUMP_LIVE_H

#include <time.h>

#include "dump_int.h"

#define LIVE_PAGE   4096u
#define LIVE_CACHE  256u          /* pages kept: 1 MiB, whatever the process's size */

/* A thread pycore stopped (ptrace-seized). */
struct live_stopped {
	int64_t tid;
	bool seized;                 /* PTRACE_SEIZE took it */
	bool stopped;                /* in a ptrace stop now: detach it */
	int signal;                  /* a signal it was about to receive: passed on at detach */
	bool gone;                   /* exited while it was stopped */
	int late;                    /* rounds it was waited for without stopping */
};

struct dump_live {
	int64_t pid;
	char proc[40];               /* "/proc/PID" */
	int mem_fd;                  /* /proc/PID/mem, -1 until process_vm_readv is refused */
	bool use_mem;
	bool gone;                   /* a read found the process gone */
	/* the page cache: slot i holds the page tag[i] when valid[i] */
	uint8_t *pages;
	uint64_t tag[LIVE_CACHE];
	bool valid[LIVE_CACHE];
	/* what reads asked for (dump_ranges_read), in the order asked */
	struct dump_range *ranges;
	size_t nranges, cap;
	bool merged;                 /* ranges is sorted and merged */
	/* the threads stopped (live_stop.c) */
	struct live_stopped *stopped;
	size_t nstopped;
	struct timespec stop_start;
	bool stopping;
};

/* Why pycore may not read or stop the process (ERR: the errno of what
 * failed, WHAT: that step): d's error set, naming what is missing, and
 * PC_EDENIED; PC_EGONE when the process is gone. */
enum pc_code live_refused(struct dump *d, const char *what, int err);
/* Read the process's memory map again (its segments; the modules stay
 * as opened): after its threads stopped, memory mapped since (a new
 * thread's stack) is readable.  PC_OK, or the error (the map as before). */
enum pc_code live_refresh_segments(struct dump *d);
/* Whether this process has CAP_SYS_PTRACE in effect. */
bool live_has_cap_ptrace(void);
/* The state letter of /proc/PID/task/TID/stat (TID 0: /proc/PID/stat);
 * 0 when it cannot be read (the thread is gone). */
char live_task_state(const struct dump_live *l, int64_t tid);
/* An exiting task (STATE 0, 'Z' or 'X'): the kernel refuses to trace it
 * (EPERM), as it would one that is gone. */
bool live_exiting(char state);
/* Close the reader and free it (live.c; dump_close's, through
 * d->p->live_free): the process is let go before, by live_stop.c's
 * own free once it stopped threads. */
void live_close(struct dump *d);

#endif
