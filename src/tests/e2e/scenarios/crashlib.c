/* The C half of crashes.py's scenarios, built by check-crashes.py with
 * gcc -g -O0 -fstack-protector-all and loaded with ctypes: each function
 * fails in one way of its own, in code with its own debug information, so
 * that gdb names every frame from the fault up. */
#include <assert.h>
#include <string.h>
#include <unistd.h>

/* an assert of the kind a C extension keeps in its release build */
int cl_queue_pop(int n_items)
{
	assert(n_items > 0);
	return n_items - 1;
}

/* integer division: idiv by zero traps (SIGFPE, FPE_INTDIV); volatile so
 * that -O0's code really divides */
int cl_divide(int total, int parts)
{
	volatile int d = parts;
	return total / d;
}

/* N bytes into a 24-byte buffer, which gcc puts right under the canary:
 * with N = 25 only the canary's low byte
 * (zero in glibc's canary) changes, the saved frame pointer and return
 * address stay whole, and __stack_chk_fail finds it on return */
int cl_smash(const char *src, size_t n)
{
	char buf[24];
	memcpy(buf, src, n);
	return buf[0];
}

/* sleep MS milliseconds without the interpreter's lock (ctypes.CDLL
 * releases it), then read ADDRESS: the fault of a thread that holds no
 * lock while another runs Python */
int cl_wait_then_read(int ms, const volatile int *address)
{
	usleep((useconds_t)ms * 1000);
	return *address;
}
