/* A signal handler that re-raises, for check-reraise: built by the test
 * into a shared library that scenarios/sent.py loads with ctypes.
 *
 * rh_install(SIG, ACTION) installs an SA_SIGINFO handler of SIG: ACTION 0
 * puts SIG's default action back and raises SIG again (as gdb's,
 * faulthandler's and Apache's handlers do), ACTION 1 calls abort() (a
 * watchdog's SIGALRM handler).  rh_timer(SIG, MS) arms a POSIX timer that
 * sends SIG once after MS milliseconds (timer_create, SIGEV_SIGNAL). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int actions[65];

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)info;
	(void)uc;
	if (actions[sig] == 1)
		abort();
	signal(sig, SIG_DFL);
	raise(sig);
}

int rh_install(int sig, int action)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sig <= 0 || sig > 64)
		return -1;
	actions[sig] = action;
	return sigaction(sig, &sa, NULL);
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
