/* Aborts whose C library keeps the message (check-abort.py): built twice
 * by the test, once plain with -fstack-protector-all (assert, the stack
 * protector), once with -O2 -D_FORTIFY_SOURCE=2 (fortify's memcpy check). */
#include <assert.h>
#include <stddef.h>
#include <string.h>

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
