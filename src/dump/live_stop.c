/* A live process's threads: stopped with ptrace for the read and let go
 * at once (or left running, --no-stop), their registers, and why the
 * (dump.h's dump_process_stop, dump_process_resume).
 *
 * Facts used, from ptrace(2) and the kernel (kernel/ptrace.c):
 * - PTRACE_SEIZE attaches without stopping; PTRACE_INTERRUPT stops the
 *   thread, which waitpid(__WALL) then reports stopped, with
 *   PTRACE_EVENT_STOP in the status's bits 16-23 -- or, when a signal was
 *   about to be delivered first, in a signal-delivery-stop (those bits 0,
 *   the signal WSTOPSIG): that signal is passed on at PTRACE_DETACH, or
 *   the process would never receive it.  A thread that exits meanwhile is
 *   reported exited (or ESRCH).  A seized thread is not stopped by the
 *   threads its siblings create: the task list is read again until no new
 *   thread shows (stopped threads create none).
 * - PTRACE_GETREGSET NT_PRSTATUS fills the iovec with the thread's
 *   general registers, the bytes a core's NT_PRSTATUS holds at pr_reg
 *   (offset 112 of every 64-bit elf_prstatus): the platform parses them
 *   as it parses a core's note (x86-64's fs_base, the thread pointer,
 *   among them).
 * - /proc/PID/task/TID/syscall: "NR ARG1..ARG6 SP PC" in hex for a thread
 *   blocked in a system call, "-1 SP PC" for one blocked outside,
 *   "running" otherwise (proc(5)); it needs no stop.
 * - Why the kernel refuses: live_refuse.c.
 */
#include "live.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
#define PRSTATUS_PID   32
#define PRSTATUS_REGS  112
#define MAX_TASKS_ROUNDS 64
#define STOP_WAIT_NS   (1000L * 1000 * 1000)   /* one round's wait for the threads to stop */
#define STOP_LATE_ROUNDS 5                     /* a thread that does not stop in 5 rounds is read running */

/* ------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------ */

/* The thread ids in /proc/PID/task, ascending; -1 (errno) when the
 * directory cannot be read. */
static int list_tasks(const struct dump_live *l, int64_t **out, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "%s/task", l->proc);
	DIR *dir = opendir(path);
	*out = NULL;
	*n = 0;
	if (!dir)
		return -1;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL && *n < DUMP_MAX_THREADS) {
		char *end;
		long long tid = strtoll(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			int64_t *v = realloc(*out, cap * sizeof(*v));
			if (!v)
				break;
			*out = v;
		}
		(*out)[(*n)++] = tid;
	}
	closedir(dir);
	for (size_t i = 1; i < *n; i++)  /* a few hundred at most: insertion sort */
		for (size_t j = i; j > 0 && (*out)[j - 1] > (*out)[j]; j--) {
			int64_t t = (*out)[j];
			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = t;
		}
	return 0;
}

static struct dump_thread *add_thread(struct dump *d, int64_t tid)
{
	struct dump_thread *t = realloc(d->threads, (d->nthreads + 1) * sizeof(*t));
	if (!t)
		return NULL;
	d->threads = t;
	t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* --no-stop: what /proc/PID/task/TID/syscall says, without a stop. */
static void syscall_regs(struct dump *d, const struct dump_live *l, struct dump_thread *t)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "%s/task/%lld/syscall", l->proc, (long long)t->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	unsigned long long v[9];
	long long nr;
	char *ok = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!ok)
		return;
	if (sscanf(buf, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6], &v[7]) == 9) {
		t->regs.has_syscall = t->regs.has_syscall_arg0 = t->regs.syscall_known = true;
		t->regs.syscall = (uint64_t)nr;
		t->regs.syscall_arg0 = v[0];
		t->regs.sp = v[6];
		t->regs.pc = v[7];
	} else if (sscanf(buf, "%lld %llx %llx", &nr, &v[0], &v[1]) == 3 && nr == -1) {
		t->regs.syscall_known = true;
		t->regs.sp = v[0];
		t->regs.pc = v[1];
	} else {
		return;
	}
	if (d->platform->dwarf_sp < PLATFORM_DWARF_REGS)
		t->regs.dwarf[d->platform->dwarf_sp] = t->regs.sp;
}

/* The registers of stopped thread T. */
static int get_regs(struct dump *d, struct dump_thread *t)
{
	size_t size = d->platform->prstatus_size;
	uint8_t *buf = calloc(1, size);
	if (!buf || size <= PRSTATUS_REGS) {
		free(buf);
		return -1;
	}
	struct iovec iov = { buf + PRSTATUS_REGS, size - PRSTATUS_REGS };
	int rc = ptrace(PTRACE_GETREGSET, (pid_t)t->tid, (void *)(uintptr_t)NT_PRSTATUS, &iov);
	if (rc == 0) {
		int32_t tid = (int32_t)t->tid;
		memcpy(buf + PRSTATUS_PID, &tid, 4);
		d->platform->parse_prstatus(buf, &t->regs);
	}
	free(buf);
	/* the vector registers (floating-point arguments): not having them
	 * is no failure */
	uint8_t fp[1024];
	struct iovec fiov = { fp, d->platform->fpregs_size };
	if (rc == 0 && d->platform->parse_fpregs && d->platform->fpregs_size <= sizeof(fp) &&
	    ptrace(PTRACE_GETREGSET, (pid_t)t->tid, (void *)(uintptr_t)NT_PRFPREG, &fiov) == 0)
		d->platform->parse_fpregs(fp, fiov.iov_len, &t->regs);
	return rc;
}

static double elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Wait for seized thread S to stop after PTRACE_INTERRUPT: 1 stopped, 0
 * exited, -1 not stopped by DEADLINE. */
static int wait_stop(struct live_stopped *s, const struct timespec *deadline)
{
	for (;;) {
		int status;
		pid_t r = waitpid((pid_t)s->tid, &status, __WALL | WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return 0;        /* ECHILD: it is gone */
		if (r > 0 && WIFSTOPPED(status)) {
			if ((status >> 16) == 0)
				s->signal = WSTOPSIG(status);   /* a signal-delivery-stop: pass it on */
			return 1;
		}
		if (r > 0)
			return 0;        /* exited or killed */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (elapsed_ms(&now, deadline) < 0)
			return -1;
		struct timespec pause = { 0, 20 * 1000 };
		nanosleep(&pause, NULL);
	}
}

static bool known(const struct dump_live *l, int64_t tid)
{
	for (size_t i = 0; i < l->nstopped; i++)
		if (l->stopped[i].tid == tid)
			return true;
	return false;
}

/* Seize and interrupt every thread of the task list not yet seized,
 * then wait for those and for the ones seized before that have not
 * stopped yet (a loaded machine may not run a thread for a while; a
 * thread that runs on may create more): how many were new, *LATE how
 * many are still not stopped; -1 with d's error set when ptrace
 * refuses. */
static int seize_new(struct dump *d, struct dump_live *l, const int64_t *tids, size_t n, size_t *late)
{
	int added = 0;
	*late = 0;
	for (size_t i = 0; i < n; i++) {
		if (known(l, tids[i]))
			continue;
		struct live_stopped *v = realloc(l->stopped, (l->nstopped + 1) * sizeof(*v));
		if (!v)
			return -1;
		l->stopped = v;
		struct live_stopped *s = &l->stopped[l->nstopped];
		*s = (struct live_stopped){ tids[i], false, false, 0, false, 0 };
		if (ptrace(PTRACE_SEIZE, (pid_t)tids[i], NULL, NULL) != 0) {
			if (errno == ESRCH || (errno == EPERM && live_exiting(live_task_state(l, tids[i])))) {
				l->nstopped++;   /* remembered, so that it is not tried again */
				dump_note(d, "thread %lld exited while pycore stopped the process: it is left out",
					  (long long)tids[i]);
				continue;
			}
			live_refused(d, "cannot stop its threads (ptrace)", errno);
			return -1;
		}
		if (!l->stopping) {
			clock_gettime(CLOCK_MONOTONIC, &l->stop_start);
			l->stopping = true;
		}
		s->seized = true;
		l->nstopped++;
		added++;
		/* gone already: wait_stop sees it */
		ptrace(PTRACE_INTERRUPT, (pid_t)tids[i], NULL, NULL);
	}
	/* then wait for them all: their stops overlap */
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_nsec += STOP_WAIT_NS % 1000000000L;
	deadline.tv_sec += STOP_WAIT_NS / 1000000000L + deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;
	for (size_t i = 0; i < l->nstopped; i++) {
		struct live_stopped *s = &l->stopped[i];
		if (!s->seized || s->stopped || s->gone)
			continue;
		int w = wait_stop(s, &deadline);
		if (w == 1) {
			s->stopped = true;
		} else if (w == 0) {
			s->gone = true;
			dump_note(d, "thread %lld exited while pycore stopped the process: it is left out",
				  (long long)s->tid);
		} else {
			s->late++;
			++*late;
		}
	}
	return added;
}

static struct pc_error *error_of(struct dump *d, enum pc_code st)
{
	return pc_error_new(st, d->path, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

/* dump_close of a process pycore stopped: its threads let go first. */
static void stop_free(struct dump *d)
{
	dump_process_resume(d);
	live_close(d);
}

struct pc_error *dump_process_stop(struct dump *d, bool stop)
{
	d->p->live_free = stop_free;
	struct dump_live *l = d->p->live;
	int64_t *tids;
	size_t n;
	if (!l)
		return pc_error_new(PC_EFORMAT, d->path, "not a live process");
	if (!stop) {
		if (list_tasks(l, &tids, &n) != 0) {
			enum pc_code st = live_refused(d, "cannot list its threads", errno);
			return error_of(d, st);
		}
		for (size_t i = 0; i < n; i++) {
			struct dump_thread *t = add_thread(d, tids[i]);
			if (t)
				syscall_regs(d, l, t);
		}
		free(tids);
		live_refresh_segments(d);
		return NULL;
	}
	/* again until one reading of the task list brings no new thread and
	 * every thread seized has stopped (or exited): one consistent list,
	 * the same before and after the stop; bounded, by rounds and by how
	 * long a thread may take to stop */
	int added = 1;
	size_t late = 0;
	for (int round = 0, late_rounds = 0; (added > 0 || late > 0) && round < MAX_TASKS_ROUNDS &&
	     late_rounds < STOP_LATE_ROUNDS; round++) {
		if (list_tasks(l, &tids, &n) != 0) {
			enum pc_code st = live_refused(d, "cannot list its threads", errno);
			return error_of(d, st);
		}
		added = seize_new(d, l, tids, n, &late);
		free(tids);
		if (added < 0) {
			dump_process_resume(d);
			return error_of(d, d->p->error ? PC_EDENIED : PC_ENOMEM);
		}
		late_rounds += late > 0;
	}
	for (size_t i = 0; i < l->nstopped; i++)
		if (l->stopped[i].seized && !l->stopped[i].stopped && !l->stopped[i].gone)
			dump_warn(d, "thread %lld did not stop within %d seconds (in the kernel, uninterruptible): "
				  "read running, without its registers", (long long)l->stopped[i].tid, l->stopped[i].late);
	if (added > 0)
		dump_warn(d, "threads kept being created while pycore stopped the process: the newest may be "
			  "missing");
	/* what was mapped since the process was opened (the stacks of
	 * threads created meanwhile) */
	live_refresh_segments(d);
	for (size_t i = 0; i < l->nstopped; i++) {
		struct live_stopped *s = &l->stopped[i];
		struct dump_thread *t;
		if (!s->stopped)
			continue;
		if (!(t = add_thread(d, s->tid)))
			return pc_error_new(PC_ENOMEM, d->path, "out of memory");
		if (get_regs(d, t) != 0)
			dump_warn(d, "thread %lld: its registers could not be read: %s", (long long)s->tid,
				  strerror(errno));
	}
	if (d->nthreads == 0) {
		dump_process_resume(d);
		dump_set_error(d, "the process exited while pycore stopped it");
		return error_of(d, PC_EGONE);
	}
	return NULL;
}

double dump_process_resume(struct dump *d)
{
	struct dump_live *l = d->p->live;
	if (!l || !l->stopping)
		return -1;
	for (size_t i = 0; i < l->nstopped; i++) {
		struct live_stopped *s = &l->stopped[i];
		if (s->stopped)
			ptrace(PTRACE_DETACH, (pid_t)s->tid, NULL, (void *)(uintptr_t)s->signal);
		s->stopped = false;
	}
	/* a thread that never stopped is still seized: the kernel lets it
	 * go when pycore exits (or detaches it once it stops) */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	l->stopping = false;
	return elapsed_ms(&l->stop_start, &now);
}
