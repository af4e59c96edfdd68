/* Compressed dumps: bytes in, bytes out (zstd, gzip, xz, lz4); no struct dump here.
 * Contract: each function returns its error (NULL: none; the caller owns and records it), never touches a dump. */
#ifndef PYCORE_DUMP_COMPRESS_H
#define PYCORE_DUMP_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct dump_budget;

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

/* What one decompression (or spool) may spend (dump.h's struct
 * dump_budget, as the opening code holds it). */
struct dump_spend {
	const struct dump_budget *budget;   /* the caps and their settings' names; NULL: none */
	uint64_t deadline_ns;        /* CLOCK_MONOTONIC (dump_now_ns); 0: none */
	uint64_t written;            /* bytes written under $TMPDIR for this dump so far:
				      * counted on, and what this call writes added */
	/* false: the first decompressed bytes (at least DUMP_HEAD_LEN of them,
	 * fewer only at the stream's end) hold no dump's magic, and the
	 * stream is dropped at once (PC_EFORMAT); NULL: no such check */
	bool (*head_ok)(const uint8_t *p, size_t n);
};
#define DUMP_HEAD_LEN 4

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t dump_now_ns(void);
/* The deadline of BUDGET's timeout from now (0: none). */
uint64_t dump_deadline_ns(const struct dump_budget *budget);
/* The errors of a spent budget, SETTING's name in each line: PC_ETIMEOUT
 * ("the time budget (--timeout 2 s) ran out while WHAT"), PC_ELIMIT
 * ("... would write more than --max-spool 64 MiB to $TMPDIR"). */
struct pc_error *dump_timeout_error(const struct dump_budget *budget, const char *what);
struct pc_error *dump_spool_error(const struct dump_budget *budget, const char *what);

/* Decompress the LEN bytes at IN (they start with one of the magics
 * dump_compression_of knows) into an unlinked temporary file, mapped.
 * NULL and *OUT filled (the caller frees cut and warning, unmaps map),
 * or the error: PC_EFORMAT, PC_ECORRUPT, PC_EIO, PC_ENOMEM, and when
 * SPEND (NULL: no budget) is spent PC_ETIMEOUT or PC_ELIMIT.  The
 * decoder's window is held to DUMP_INFLATE_MEM_MAX. */
#define DUMP_INFLATE_MEM_MAX ((uint64_t)256 << 20)
struct pc_error *dump_inflate(const uint8_t *in, size_t len, struct dump_spend *spend, struct dump_inflated *out);

/* The decoding itself: IN's stream decompressed and handed to SINK piece
 * by piece (non-zero from SINK: stop, an I/O error, errno set); *TOTAL is
 * the number of bytes decompressed.  MEM_LIMIT: the most the decoder's
 * window may take (0: the library's default).  PC_ETRUNCATED: the input
 * ends before the stream does, after *TOTAL good bytes. */
typedef int (*dump_sink)(void *arg, const uint8_t *p, size_t n);
struct pc_error *dump_decode(const uint8_t *in, size_t len, dump_sink sink, void *arg, uint64_t mem_limit,
			     uint64_t *total);
/* The same under SPEND's deadline and first-bytes check (its written
 * count is the sink's to keep): for the fuzz target of the budget. */
struct pc_error *dump_decode_spend(const uint8_t *in, size_t len, dump_sink sink, void *arg, uint64_t mem_limit,
				   struct dump_spend *spend, uint64_t *total);

/* An unlinked temporary file under $TMPDIR (else /tmp), open read-write,
 * or -1 and *ERR (PC_EIO). */
int dump_temp_file(struct pc_error **err);

/* Writing a file with holes: the pages of P (N bytes) that hold something
 * are written at OFF, which advances by N; zero pages are skipped (the
 * caller sets the file's size at the end).  0, or -1 with errno set
 * (EFBIG: the pages would take WRITTEN past LIMIT; nothing of P was
 * written then).  A dump_sink, ARG a struct dump_sparse. */
struct dump_sparse {
	int fd;
	uint64_t off;     /* the file offset of the next byte */
	uint64_t written; /* bytes written (holes cost nothing) */
	uint64_t limit;   /* the most WRITTEN may reach; 0: no cap */
};
int dump_sparse_write(void *arg, const uint8_t *p, size_t n);

#endif
