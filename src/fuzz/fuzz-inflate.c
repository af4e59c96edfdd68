/* Fuzz targets: the compressed-dump front ends (src/dump/compress.c), one
 * per format, this file built with FUZZ_FORMAT "zstd", "gzip", "xz" or
 * "lz4" (fuzz-zstd ... fuzz-lz4).  The input's first bytes are made that
 * format's magic; it is decoded into a sink that counts, keeps the first
 * bytes (where a core's magic would be) and stops at 1 MiB (more output
 * only repeats the same loop, slower): no temporary file. */
#include <errno.h>
#include <string.h>

#include "dump/compress.h"
#include "dump/dump.h"
#include "fuzz-reader.h"

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT='\"zstd\"' (or gzip, xz, lz4)"
#endif

#define SINK_MAX ((uint64_t)1 << 20)
/* The decoders' windows are held to this: a frame asking for more is
 * refused at once instead of allocating it (zstd up to 128 MiB, xz up to
 * 1.5 GiB) for every such input, which under ASan costs milliseconds; the
 * window's size changes nothing in the code that reads the frame. */
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
	const uint8_t *m;
	size_t mlen = dump_compression_magic(FUZZ_FORMAT, &m);
	if (mlen == 0)
		abort();
	if (size < mlen)
		return 0;
	uint8_t *buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memcpy(buf, m, mlen);
	struct sink s = { 0, { 0 } };
	uint64_t total;
	struct pc_error *e = dump_decode(buf, size, sink, &s, WINDOW_MAX, &total);
	if ((!e || e->code == PC_ETRUNCATED) && total != s.n)
		abort();   /* the decoder's count and what it handed over differ */
	if (e && (e->code == PC_OK || !e->message || !*e->message))
		abort();   /* every failure says why */
	pc_error_free(e);
	free(buf);
	return 0;
}
