/* libpycore-crash.so: the fatal-signal handler of pycore's pytest plugin.
 *
 * Loaded with ctypes by pycore/_pytest.py (not a CPython extension: no
 * Python header, one build for every interpreter).  When the process gets
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, the handler has a child read
 * its parent live with pycore before the process dies, then lets the
 * signal take its course (the handler that was there before: pytest's
 * faulthandler, or the default action and its core).
 *
 * The child runs the command the plugin armed once (pycore_crash_arm:
 * /bin/sh running pycore analyze --pid PARENT, the JSON and text reports
 * saved, the text written to standard error), labelled with the test that
 * runs (pycore_crash_label, one call a test; none: disarmed).  The kernel lets a child trace
 * its parent when Yama's ptrace_scope is 1 only once the parent names it
 * its tracer (prctl PR_SET_PTRACER, Documentation/admin-guide/LSM/Yama.rst):
 * the child waits on a pipe until the parent has.
 *
 * Everything the handler calls is async-signal-safe (signal-safety(7)):
 * raw system calls, no malloc, no stdio, no lock.  The child is made with
 * the clone system call, not fork(3): glibc's fork runs the atfork
 * handlers, which take the allocator's locks a crash may hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* the interface, called with ctypes */
int pycore_crash_install(void);
int pycore_crash_uninstall(void);
int pycore_crash_arm(int n, const char *const *argv, char **envp);
int pycore_crash_label(const char *label);
void pycore_crash_stderr(int fd);

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61 /* linux/prctl.h */
#endif

#define ARG_MAX_LEN 4096
#define NARGS 16

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static struct sigaction previous[NFATAL];
static int installed;
static volatile sig_atomic_t in_handler;

/* The armed command: argv strings copied here (the Python strings may go),
 * argument 1 of the script is the pid, filled in by the handler. */
static char arg_store[NARGS][ARG_MAX_LEN];
static char *armed_argv[NARGS + 2];
static volatile sig_atomic_t armed;
static char pid_arg[24], sig_arg[24];
/* what the crash is of (the test running): "{label}" in the command; an
 * empty label disarms it */
static char label_arg[ARG_MAX_LEN];
static volatile sig_atomic_t labelled;
static char *const empty_env[] = {NULL};
static char **child_env;

static char alt_stack[64 * 1024];
static int err_fd = -1;

static void decimal(char *out, long v)
{
	char tmp[24];
	int n = 0;
	if (v < 0)
		v = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof tmp);
	while (n)
		*out++ = tmp[--n];
	*out = '\0';
}

static long raw_clone(void)
{
	/* a fork by the system call: flags = SIGCHLD, no new stack (the
	 * argument order differs between architectures, but every other one
	 * is zero) */
	return syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
}

static void run_pycore(void)
{
	int go[2];
	if (syscall(SYS_pipe2, go, O_CLOEXEC) != 0)
		return;
	long child = raw_clone();
	if (child == 0) {
		char b;
		syscall(SYS_close, go[1]);
		/* until the parent has named this process its tracer */
		while (syscall(SYS_read, go[0], &b, 1) < 0 && errno == EINTR)
			;
		/* the terminal's standard error, not a test's captured one */
		if (err_fd >= 0 && err_fd != 2)
			syscall(SYS_dup3, err_fd, 2, 0);
		syscall(SYS_execve, armed_argv[0], armed_argv, child_env ? child_env : empty_env);
		syscall(SYS_exit_group, 127);
	}
	syscall(SYS_close, go[0]);
	if (child < 0) {
		syscall(SYS_close, go[1]);
		return;
	}
	prctl(PR_SET_PTRACER, (unsigned long)child, 0, 0, 0);
	syscall(SYS_write, go[1], "g", 1);
	syscall(SYS_close, go[1]);
	int status;
	while (syscall(SYS_wait4, child, &status, 0, NULL) < 0 && errno == EINTR)
		;
}

static int index_of(int sig)
{
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_signals[i] == sig)
			return (int)i;
	return -1;
}

static void pycore_crash_handler(int sig, siginfo_t *info, void *context)
{
	(void)context;
	int saved_errno = errno;
	int i = index_of(sig);
	if (!in_handler) {
		in_handler = 1;
		if (armed && labelled) {
			decimal(pid_arg, (long)getpid());
			decimal(sig_arg, (long)sig);
			run_pycore();
		}
	}
	/* the signal's own course: the handler before this one, or the
	 * default action */
	if (i >= 0)
		sigaction(sig, &previous[i], NULL);
	else
		signal(sig, SIG_DFL);
	errno = saved_errno;
	/* a fault the instruction raises again on return; a signal sent (by
	 * kill, abort(3): si_code <= 0) sent again, delivered on return */
	if (info == NULL || info->si_code <= 0)
		syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
}

/* pycore_crash_install: the handler on each fatal signal, on a stack of
 * its own (a stack overflow's SIGSEGV).  0, or -1 with errno. */
int pycore_crash_install(void)
{
	if (installed)
		return 0;
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
	stack_t old;
	/* a thread that already has one keeps it */
	if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE))
		sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = pycore_crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		if (sigaction(fatal_signals[i], &sa, &previous[i]) != 0)
			return -1;
	installed = 1;
	return 0;
}

/* pycore_crash_uninstall: the handlers before pycore_crash_install back. */
int pycore_crash_uninstall(void)
{
	if (!installed)
		return 0;
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &previous[i], NULL);
	installed = 0;
	return 0;
}

/* pycore_crash_arm: the command run on a crash, ARGV (N strings, each
 * shorter than 4096 bytes, at most 16): ARGV[0] is the program (a path),
 * an argument "{pid}" is replaced by the crashing process's id, "{sig}" by
 * the signal's number, "{label}" by pycore_crash_label's;
 * ENVP the child's environment (kept by the caller).  N == 0 disarms.
 * 0, or -1 (too many or too long). */
int pycore_crash_arm(int n, const char *const *argv, char **envp)
{
	armed = 0;
	if (n == 0)
		return 0;
	if (n < 0 || n > NARGS)
		return -1;
	for (int i = 0; i < n; i++) {
		if (strlen(argv[i]) >= ARG_MAX_LEN)
			return -1;
		if (strcmp(argv[i], "{pid}") == 0) {
			armed_argv[i] = pid_arg;
		} else if (strcmp(argv[i], "{sig}") == 0) {
			armed_argv[i] = sig_arg;
		} else if (strcmp(argv[i], "{label}") == 0) {
			armed_argv[i] = label_arg;
		} else {
			strcpy(arg_store[i], argv[i]);
			armed_argv[i] = arg_store[i];
		}
	}
	armed_argv[n] = NULL;
	child_env = envp;
	armed = 1;
	return 0;
}

/* pycore_crash_stderr: the child's standard error is FD (a copy of the
 * process's own, made before pytest captured it; -1: the process's at the
 * crash). */
void pycore_crash_stderr(int fd)
{
	err_fd = fd;
}

/* pycore_crash_label: the crash's label (the test that runs: one call a
 * test, cheaper than arming the whole command again); NULL or "" leaves
 * the command disarmed until the next.  0, or -1 (4096 bytes or more:
 * disarmed). */
int pycore_crash_label(const char *label)
{
	labelled = 0;
	if (!label || !*label)
		return 0;
	size_t n = strlen(label);
	if (n >= ARG_MAX_LEN)
		return -1;
	memcpy(label_arg, label, n + 1);
	labelled = 1;
	return 0;
}
