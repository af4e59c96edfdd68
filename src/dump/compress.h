/* Compressed dumps: bytes in, bytes out (zstd, gzip, xz, lz4); no struct dump here.
 * Contract: each function returns its error (NULL: none; the caller owns and records it), never touches a dump. */
#ifndef PYCORE_DUMP_COMPRESS_H
#define PYCORE_DUMP_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The magic of the compression NAME in *MAGIC, and its length (0: no
 * such).  dump_compression_of (dump.h) tells a file's compression. */
size_t dump_compression_magic(const char *name, const uint8_t **magic);

/* What dump_inflate made of a compressed stream. */
struct dump_inflated {
	const char *compression;     /* "zstd", "gzip", "xz" or "lz4" */
	const uint8_t *map;          /* the decompressed bytes, mapped (munmap MAP, LEN) */
	size_t len;
	/* the stream was cut short: what was decompressed is in MAP, and
	 * this says so (malloc'd, for a warning); else NULL */
	char *cut;
	/* a warning about the stream (bytes after its end), malloc'd, or NULL */
	char *warning;
};

/* Decompress the LEN bytes at IN (they start with one of the magics
 * dump_compression_of knows) into an unlinked temporary file, mapped.
 * NULL and *OUT filled (the caller frees cut and warning, unmaps map),
 * or the error: PC_EFORMAT, PC_ECORRUPT, PC_EIO, PC_ENOMEM. */
struct pc_error *dump_inflate(const uint8_t *in, size_t len, struct dump_inflated *out);

/* The decoding itself: IN's stream decompressed and handed to SINK piece
 * by piece (non-zero from SINK: stop, an I/O error, errno set); *TOTAL is
 * the number of bytes decompressed.  MEM_LIMIT: the most the decoder's
 * window may take (0: the library's default).  PC_ETRUNCATED: the input
 * ends before the stream does, after *TOTAL good bytes. */
typedef int (*dump_sink)(void *arg, const uint8_t *p, size_t n);
struct pc_error *dump_decode(const uint8_t *in, size_t len, dump_sink sink, void *arg, uint64_t mem_limit,
			     uint64_t *total);

/* An unlinked temporary file under $TMPDIR (else /tmp), open read-write,
 * or -1 and *ERR (PC_EIO). */
int dump_temp_file(struct pc_error **err);

/* Writing a file with holes: the pages of P (N bytes) that hold something
 * are written at OFF, which advances by N; zero pages are skipped (the
 * caller sets the file's size at the end).  0, or -1 with errno set.  A
 * dump_sink, ARG a struct dump_sparse. */
struct dump_sparse {
	int fd;
	uint64_t off;     /* the file offset of the next byte */
};
int dump_sparse_write(void *arg, const uint8_t *p, size_t n);

#endif
