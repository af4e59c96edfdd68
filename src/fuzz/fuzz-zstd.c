/* Fuzz target: the zstd front end (src/dump/zstd.c), decoding the input
 * into a sink that counts, keeps the first bytes (where the format's magic
 * would be) and stops at 1 MiB (more output only repeats the same loop, slower): no
 * temporary file. */
#include <errno.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "dump/dump_int.h"
#include "fuzz-reader.h"

#define SINK_MAX ((uint64_t)1 << 20)
/* A frame whose header asks for a window over this is left out: the
 * decoder would allocate it (up to 128 MiB, zstd's default limit) for every
 * such input, which under ASan costs milliseconds, and the window's size
 * changes nothing in the code that reads the frame. */
#define WINDOW_MAX ((uint64_t)1 << 22)

struct sink {
	uint64_t n;
	uint8_t head[8];
};

static int sink(void *arg, const uint8_t *p, size_t n)
{
	struct sink *s = arg;
	for (size_t i = 0; i < n && s->n + i < sizeof(s->head); i++)
		s->head[s->n + i] = p[i];
	s->n += n;
	if (s->n > SINK_MAX) {
		errno = EFBIG;
		return -1;
	}
	return 0;
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	ZSTD_frameHeader h;
	if (!dump_is_zstd(data, size) ||
	    (ZSTD_getFrameHeader(&h, data, size) == 0 && h.windowSize > WINDOW_MAX))
		return 0;
	struct dump *d = dump_new();
	if (!d)
		return 0;
	d->p->map = data;
	d->p->map_len = size;
	d->p->map_borrowed = true;
	struct sink s = { 0, { 0 } };
	uint64_t total;
	if (dump_zstd_decode(d, sink, &s, &total) == PC_OK && total != s.n)
		abort();   /* the decoder's count and what it handed over differ */
	dump_close(d);
	return 0;
}
