/* Aborts whose C library keeps the message (check-abort.py): built twice
 * by the test, once plain with -fstack-protector-all (assert, the stack
 * protector), once with -O2 -D_FORTIFY_SOURCE=2 (fortify's memcpy check). */
#include <assert.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int queue_pop(int n_items)
{
	assert(n_items > 0);
	return n_items - 1;
}

/* byte by byte, so that no fortified memcpy stops it before the canary */
void smash(const char *src, int n)
{
	char buf[8];
	for (int i = 0; i < n; i++)
		buf[i] = src[i];
}

static char fixed[8];

/* a length the compiler cannot see: __memcpy_chk finds it past fixed */
char *overflow(const char *src, size_t n)
{
	memcpy(fixed, src, n);
	return fixed;
}

/* the assert in a thread of the library's own (no Python thread state),
 * which says its id on stderr first */
static void *asserter(void *arg)
{
	fprintf(stderr, "native thread %ld asserts\n", (long)syscall(SYS_gettid));
	fflush(stderr);
	queue_pop(0);
	return arg;
}

void assert_in_thread(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, asserter, NULL) == 0)
		pthread_join(t, NULL);
}

static sigjmp_buf back;

static void jump_back(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

/* an assert the process survives: its SIGABRT caught and jumped out of
 * (glibc keeps its message all the same) */
int survive_assert(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = jump_back;
	sigaction(SIGABRT, &sa, &old);
	int survived = sigsetjmp(back, 1);
	if (!survived)
		queue_pop(0);
	sigaction(SIGABRT, &old, NULL);
	return survived;
}

/* glibc's own assert failure with an expression the caller gives (a long
 * one: the message is longer than pycore keeps) */
void assert_says(const char *expr)
{
	__assert_fail(expr, __FILE__, __LINE__, __func__);
}
