/* pycore batch's warm processes: one per interpreter build (batch_key.h),
 * each a process forked from the batch that analyzed a dump of its build
 * itself (the build's second: batch.c) and so holds what every dump of
 * that build needs again (the symbol look-ups of its files,
 * symbols/warm.h); each later dump of the build is analyzed in a worker
 * forked from it, copy-on-write, so a dump that crashes or hangs its
 * worker still costs only its own record.
 *
 * Contract: the batch talks to a warm process over a socket of its own
 * (SOCK_SEQPACKET): WARM_START (an item, its path, and the write end of
 * the pipe for its record, passed as SCM_RIGHTS) and WARM_KILL (the
 * item's worker, past --timeout); the warm process answers WARM_DONE once
 * (its own first analysis: the status its exit would have had), then
 * WARM_ENDED for each worker (waitpid's status) or WARM_NOFORK (errno).
 * A warm process ends when its socket closes and its workers have ended,
 * or with the batch (PR_SET_PDEATHSIG); its workers end with it. */
#ifndef PYCORE_CLI_BATCH_WARM_H
#define PYCORE_CLI_BATCH_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum warm_type { WARM_START = 1, WARM_KILL, WARM_DONE, WARM_ENDED, WARM_NOFORK };

struct warm_msg {
	int32_t type;
	uint32_t item;
	int32_t status;              /* WARM_DONE, WARM_ENDED: a wait status; WARM_NOFORK: errno */
};

/* One dump's analysis in a worker: its exit code (batch.c). */
typedef int (*warm_analyze_fn)(const char *path, int fd, void *arg);

/* The warm process's life after its first analysis, whose exit code was
 * RC: answers the batch on CTL, forking a worker running FN for each
 * dump, TIDY (may be NULL) called once before the first.  Never returns. */
void warm_serve(int ctl, int rc, warm_analyze_fn fn, void (*tidy)(void *arg), void *arg)
	__attribute__((noreturn));

/* The batch's side: 0 sent, or -1 (errno). */
int warm_send_start(int ctl, size_t item, const char *path, int fd);
int warm_send_kill(int ctl, size_t item);
/* One answer: 1, 0 at end (the warm process is gone), -1 none yet or an error. */
int warm_recv(int ctl, struct warm_msg *m);
/* PID's resident memory in bytes (/proc/PID/statm), 0 unknown. */
size_t warm_resident(pid_t pid);

#endif
