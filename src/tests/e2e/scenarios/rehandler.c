/* A signal handler that re-raises, for check-reraise: built by the test
 * into a shared library that scenarios/sent.py loads with ctypes.
 *
 * rh_install(SIG, ACTION) installs an SA_SIGINFO handler of SIG: ACTION 0
 * puts SIG's default action back and raises SIG again (as gdb's,
 * faulthandler's and Apache's handlers do), ACTION 1 calls abort() (a
 * watchdog's SIGALRM handler), ACTION 2 puts the default action back,
 * kill()s the process and waits in rh_wait_nocfi, a function without
 * call frame information (uWSGI's handler kill()s, then exit(1)s, and
 * another thread's taking of the kill can catch it in a library's fini
 * code that has none).  rh_timer(SIG, MS) arms a POSIX timer that
 * sends SIG once after MS milliseconds (timer_create, SIGEV_SIGNAL).
 * rh_take_kill(SIG, BOUND_MS) lets the main thread take an action-2
 * handler's kill() once that handler waits; rh_wait_taker(BOUND_MS), the
 * faulting thread's, waits for the main thread to be there first. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int actions[65];
/* the thread of an action-2 handler, once its kill() is sent; whether
 * the main thread waits in rh_take_kill */
static volatile sig_atomic_t waiting_tid, taker_ready;

void rh_wait_nocfi(void);
#if defined(__x86_64__)
/* Hand-written, without .cfi directives: no FDE covers it, and it keeps
 * no frame pointer (rbp is still its caller's, which keeps none either),
 * so an unwinder goes on past it only by a scan of the stack.  (Its one
 * word of padding, for the call's alignment, is zeroed: no stale return
 * address there.) */
__asm__(".text\n"
	".globl rh_wait_nocfi\n"
	".type rh_wait_nocfi, @function\n"
	"rh_wait_nocfi:\n"
	"\tsubq $8, %rsp\n"
	"\tmovq $0, (%rsp)\n"
	"1:\tcall pause@PLT\n"
	"\tjmp 1b\n"
	".size rh_wait_nocfi, .-rh_wait_nocfi\n");
#else
void rh_wait_nocfi(void)
{
	for (;;)
		pause();
}
#endif

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)info;
	(void)uc;
	if (actions[sig] == 1)
		abort();
	signal(sig, SIG_DFL);
	if (actions[sig] == 2) {
		kill(getpid(), sig);
		waiting_tid = (sig_atomic_t)syscall(SYS_gettid);
		rh_wait_nocfi();
	}
	raise(sig);
}

int rh_install(int sig, int action)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sig <= 0 || sig > 64 || action < 0 || action > 2)
		return -1;
	actions[sig] = action;
	return sigaction(sig, &sa, NULL);
}

/* Whether thread TID sits in the system call pause() makes
 * (/proc/self/task/TID/syscall's first field). */
static int in_pause(long tid)
{
#ifdef SYS_pause
	long want = SYS_pause;
#else
	long want = SYS_ppoll;
#endif
	char path[64];
	long nr = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == want;
}

/* For the main thread, SIG blocked (called through ctypes' CDLL: the
 * interpreter's lock released, which the faulting thread holds): waits
 * at most BOUND_MS for an action-2 handler to wait in rh_wait_nocfi's
 * pause(), then unblocks SIG, so that the handler's pending kill() is
 * taken here.  0, or -1 when no handler came to wait (SIG unblocked all
 * the same). */
int rh_take_kill(int sig, int bound_ms)
{
	int waited = -1;
	taker_ready = 1;
	for (int t = 0; t < bound_ms && waited; t++) {
		if (waiting_tid && in_pause(waiting_tid))
			waited = 0;
		else
			usleep(1000);
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return waited;
}

/* For the thread about to fault (through ctypes' CDLL, the interpreter's
 * lock released): waits at most BOUND_MS for the main thread to be in
 * rh_take_kill, where it no longer needs that lock. */
int rh_wait_taker(int bound_ms)
{
	for (int t = 0; t < bound_ms && !taker_ready; t++)
		usleep(1000);
	return taker_ready ? 0 : -1;
}

int rh_timer(int sig, int ms)
{
	struct sigevent ev;
	timer_t t;
	struct itimerspec when;
	memset(&ev, 0, sizeof(ev));
	memset(&when, 0, sizeof(when));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	when.it_value.tv_sec = ms / 1000;
	when.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0)
		return -1;
	return timer_settime(t, 0, &when, NULL);
}
