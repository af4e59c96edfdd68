/* What the C unit tests share: CHECK, which counts each check and prints
 * each failure with its place, and a growing byte buffer for the inputs
 * they build (a core's notes, a tar). */
#ifndef PYCORE_TESTS_UNIT_H
#define PYCORE_TESTS_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		checks++;                                                       \
		if (!(cond)) {                                                  \
			failures++;                                             \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
		}                                                               \
	} while (0)

struct buf {
	uint8_t *p;
	size_t n, cap;
};

/* N bytes of DATA appended to B (a test that runs out of memory ends) */
static inline void put(struct buf *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 1024;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			printf("FAIL: out of memory\n");
			exit(1);
		}
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

#endif
