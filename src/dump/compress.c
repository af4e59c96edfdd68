/* Compressed dumps: zstd (systemd-coredump's core.*.zst), gzip, xz and lz4,
 * told by their magic.  Decompressed once, streaming, into an unlinked
 * temporary file under $TMPDIR, which is then mapped and read like any
 * other dump.  Pages of zeros (most of a core: untouched heap, stacks,
 * bss) are not written but left as holes, as zstd's own CLI does, so the
 * file costs what the core's data does; memory use stays at the decoder's
 * buffers, and the page cache holds the rest.  A second thread writes
 * one buffer while the decoder fills the other.
 *
 * A stream that ends before its end gives the bytes decompressed so far:
 * the readers take them as a truncated core (a partial report, and a
 * warning naming the cut).  A stream the decoder rejects gives an error:
 * what it decompressed before is not proven (its checksum is at the end).
 *
 * Nothing here knows a dump: each entry point returns its error
 * (compress.h), which the opening code records. */
#include "compress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <lz4frame.h>
#include <lzma.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "dump.h"

/* A decompressed dump may not exceed this (a corrupt frame could claim more). */
#define INFLATE_MAX_OUTPUT ((uint64_t)1 << 40)
/* The decoders' output buffers (two: one decoded into, one written): small
 * enough to stay in the cache while the writer looks for zero pages, large
 * enough for few calls (lz4 decodes a block straight into a buffer at
 * least its size; 256 KiB made lz4 cores 20 % slower). */
#define OUT_SIZE ((size_t)1 << 20)
/* dump_decode's buffer (the fuzz targets' sink): a large one would cost
 * its allocation at every input. */
#define SMALL_OUT_SIZE ((size_t)64 << 10)
/* The unit of holes: a page. */
#define HOLE_UNIT 4096

/* Magic numbers: zstd's frame (RFC 8878 3.1.1), gzip's ID1 ID2 and CM=8
 * deflate (RFC 1952 2.3.1), xz's stream header (the .xz file format 2.1.1.1),
 * the LZ4 frame's (lz4's doc/lz4_Frame_format.md). */
static const struct {
	const char *name;
	uint8_t magic[6];
	size_t len;
} formats[] = {
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
	{ "gzip", { 0x1f, 0x8b, 0x08 }, 3 },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
	{ "lz4", { 0x04, 0x22, 0x4d, 0x18 }, 4 },
};

const char *dump_compression_of(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (n >= formats[i].len && memcmp(p, formats[i].magic, formats[i].len) == 0)
			return formats[i].name;
	return NULL;
}

size_t dump_compression_magic(const char *name, const uint8_t **magic)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, name) == 0) {
			*magic = formats[i].magic;
			return formats[i].len;
		}
	return 0;
}

/* ------------------------------------------------------------------------
 * What every decoder shares: the sink, the size limit, the messages
 * ------------------------------------------------------------------------ */

struct inflate {
	const uint8_t *in;           /* the compressed stream */
	size_t in_len;
	const char *name;
	dump_sink sink;
	void *arg;
	uint64_t total;
	uint64_t mem_limit;
	uint8_t *out;
	size_t out_size;
	/* after SINK took OUT: the buffer to decode into next (NULL: OUT again) */
	uint8_t *(*swap)(void *arg, uint8_t *given);
	struct pc_error *err;        /* why decoding stopped, or NULL */
	char *warning;               /* for the caller to pass on, or NULL */
	struct dump_spend *spend;    /* the budget, or NULL */
	uint8_t head[DUMP_HEAD_LEN]; /* the first bytes decompressed (spend->head_ok) */
	size_t nhead;
};

/* ------------------------------------------------------------------------
 * Budgets: time, the temporary file's size
 * ------------------------------------------------------------------------ */

uint64_t dump_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t dump_deadline_ns(const struct dump_budget *b)
{
	return b && b->timeout > 0 ? dump_now_ns() + (uint64_t)(b->timeout * 1e9) : 0;
}

/* N bytes in a few characters: "512 bytes", "64 MiB", "1.5 GiB". */
static void size_words(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (n < 1024) {
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
		return;
	}
	double v = (double)n;
	size_t u = 0;
	for (v /= 1024; v >= 1024 && u < 3; v /= 1024)
		u++;
	snprintf(buf, size, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, units[u]);
}

struct pc_error *dump_timeout_error(const struct dump_budget *b, const char *what)
{
	return pc_error_new(PC_ETIMEOUT, NULL, "the time budget (%s %g s) ran out %s",
			    b && b->timeout_name ? b->timeout_name : "--timeout", b ? b->timeout : 0.0, what);
}

struct pc_error *dump_spool_error(const struct dump_budget *b, const char *what)
{
	char cap[32];
	const char *dir = getenv("TMPDIR");
	size_words(b ? b->max_spool : 0, cap, sizeof(cap));
	return pc_error_new(PC_ELIMIT, NULL, "%s would write more than %s %s to the temporary directory "
			    "(%s; the disk budget of one dump)", what,
			    b && b->spool_name ? b->spool_name : "--max-spool", cap, dir && *dir ? dir : "/tmp");
}

/* Record why decoding failed (the first reason only); CODE. */
static enum pc_code fail(struct inflate *z, enum pc_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum pc_code fail(struct inflate *z, enum pc_code code, const char *fmt, ...)
{
	if (z->err)
		return code;
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	z->err = msg ? pc_error_new(code, NULL, "%s", msg) : pc_error_new(PC_ENOMEM, NULL, "out of memory");
	free(msg);
	return code;
}

/* Record E (taken over) as why decoding stopped, unless a reason is
 * already there; its code. */
static enum pc_code fail_with(struct inflate *z, struct pc_error *e)
{
	enum pc_code code = e->code;
	if (z->err)
		pc_error_free(e);
	else
		z->err = e;
	return code;
}

/* The sink failed with ERR: the disk budget (EFBIG), or an I/O error. */
static enum pc_code sink_failed(struct inflate *z, int err)
{
	if (err == EFBIG && z->spend) {
		char what[64];
		snprintf(what, sizeof(what), "decompressing the %s stream", z->name);
		return fail_with(z, dump_spool_error(z->spend->budget, what));
	}
	return fail(z, PC_EIO, "cannot write the decompressed core: %s", strerror(err));
}

/* The budget before each piece goes out: the first bytes hold a dump's
 * magic, the deadline has not passed. */
static enum pc_code spend_check(struct inflate *z, const uint8_t *p, size_t n)
{
	struct dump_spend *s = z->spend;
	if (s->head_ok && z->nhead < DUMP_HEAD_LEN) {
		size_t k = n < DUMP_HEAD_LEN - z->nhead ? n : DUMP_HEAD_LEN - z->nhead;
		memcpy(z->head + z->nhead, p, k);
		z->nhead += k;
		if (z->nhead == DUMP_HEAD_LEN && !s->head_ok(z->head, z->nhead))
			return fail(z, PC_EFORMAT, "the %s stream does not hold a dump: its first bytes are "
				    "neither an ELF core's nor a minidump's", z->name);
	}
	if (s->deadline_ns && dump_now_ns() > s->deadline_ns) {
		char what[128];
		snprintf(what, sizeof(what), "while decompressing the %s stream (%llu bytes out)", z->name,
			 (unsigned long long)z->total);
		return fail_with(z, dump_timeout_error(s->budget, what));
	}
	return PC_OK;
}

static enum pc_code emit(struct inflate *z, const uint8_t *p, size_t n)
{
	if (n == 0)
		return PC_OK;
	enum pc_code st = z->spend ? spend_check(z, p, n) : PC_OK;
	if (st != PC_OK)
		return st;
	z->total += n;
	if (z->total > INFLATE_MAX_OUTPUT) {
		return fail(z, PC_ECORRUPT, "%s stream inflates past %llu bytes", z->name,
			    (unsigned long long)INFLATE_MAX_OUTPUT);
	}
	if (z->sink(z->arg, p, n) != 0)
		return sink_failed(z, errno);
	if (z->swap)
		z->out = z->swap(z->arg, z->out);
	return PC_OK;
}

static enum pc_code corrupt(struct inflate *z, size_t at, const char *why)
{
	return fail(z, PC_ECORRUPT, "corrupt %s stream at compressed byte %zu (output byte %llu): %s",
		    z->name, at, (unsigned long long)z->total, why);
}

static enum pc_code truncated(struct inflate *z)
{
	return fail(z, PC_ETRUNCATED, "truncated %s stream: it ends at compressed byte %zu, before its end "
		    "(%llu bytes decompressed)", z->name, z->in_len, (unsigned long long)z->total);
}

static enum pc_code no_memory(struct inflate *z)
{
	/* not the stream's fault: the window would not fit (a memory limit) */
	return fail(z, PC_ENOMEM, "out of memory decompressing the %s stream", z->name);
}

/* The stream asks for a window larger than the memory budget allows. */
static enum pc_code window_limit(struct inflate *z)
{
	return fail(z, PC_ELIMIT, "the %s stream's window needs more than %llu MiB, pycore's memory "
		    "budget for decompressing", z->name, (unsigned long long)(z->mem_limit >> 20));
}

/* ------------------------------------------------------------------------
 * The decoders
 * ------------------------------------------------------------------------ */

static enum pc_code zstd_decode(struct inflate *z)
{
	ZSTD_DCtx *c = ZSTD_createDCtx();
	if (!c)
		return no_memory(z);
	if (z->mem_limit) {
		int log = 10;
		while (log < 31 && ((uint64_t)1 << (log + 1)) <= z->mem_limit)
			log++;
		ZSTD_DCtx_setParameter(c, ZSTD_d_windowLogMax, log);
	}
	enum pc_code st = PC_OK;
	ZSTD_inBuffer in = { z->in, z->in_len, 0 };
	size_t ret = 1;
	/* until the input is consumed, then until the decoder holds nothing */
	for (;;) {
		ZSTD_outBuffer o = { z->out, z->out_size, 0 };
		size_t before = in.pos;
		ret = ZSTD_decompressStream(c, &o, &in);
		if (ZSTD_isError(ret)) {
			ZSTD_ErrorCode e = ZSTD_getErrorCode(ret);
			st = e == ZSTD_error_memory_allocation ? no_memory(z)
			     : e == ZSTD_error_frameParameter_windowTooLarge && z->mem_limit ? window_limit(z)
			     : corrupt(z, in.pos, ZSTD_getErrorName(ret));
			break;
		}
		if ((st = emit(z, z->out, o.pos)) != PC_OK)
			break;
		if (in.pos == in.size && (ret == 0 || (o.pos == 0 && in.pos == before)))
			break;
	}
	if (st == PC_OK && ret != 0)
		st = truncated(z);
	ZSTD_freeDCtx(c);
	return st;
}

static enum pc_code gzip_decode(struct inflate *z)
{
	z_stream s;
	memset(&s, 0, sizeof(s));
	/* 16 + 15: a gzip wrapper, a window of up to 32 KiB */
	if (inflateInit2(&s, 16 + 15) != Z_OK)
		return no_memory(z);
	const uint8_t *in = z->in;
	size_t len = z->in_len, pos = 0;
	enum pc_code st = PC_OK;
	int ret = Z_OK;
	for (;;) {
		if (s.avail_in == 0 && pos < len) {
			/* avail_in is an unsigned int: feed at most 1 GiB at a time */
			size_t n = len - pos < ((size_t)1 << 30) ? len - pos : (size_t)1 << 30;
			s.next_in = (Bytef *)(uintptr_t)(in + pos);
			s.avail_in = (uInt)n;
			pos += n;
		}
		s.next_out = z->out;
		s.avail_out = (uInt)z->out_size;
		ret = inflate(&s, Z_NO_FLUSH);
		if (ret == Z_MEM_ERROR) {
			st = no_memory(z);
			break;
		}
		if (ret == Z_DATA_ERROR || ret == Z_STREAM_ERROR || ret == Z_NEED_DICT) {
			st = corrupt(z, pos - s.avail_in, s.msg ? s.msg : "invalid deflate data");
			break;
		}
		if ((st = emit(z, z->out, z->out_size - s.avail_out)) != PC_OK)
			break;
		size_t left = len - pos + s.avail_in;
		if (ret == Z_STREAM_END) {
			/* another member (gzip -d reads concatenated ones), else the end;
			 * what follows that is not a member is ignored, as gzip does */
			const char *next = dump_compression_of(in + (len - left), left);
			if (!next || strcmp(next, "gzip") != 0) {
				if (left && !z->warning &&
				    asprintf(&z->warning, "%zu bytes after the gzip stream ignored", left) < 0)
					z->warning = NULL;
				break;
			}
			inflateReset(&s);
			continue;
		}
		if (ret == Z_BUF_ERROR)
			break;    /* no progress possible: the input ended inside a member */
	}
	if (st == PC_OK && ret != Z_STREAM_END)
		st = truncated(z);
	inflateEnd(&s);
	return st;
}

static const char *lzma_why(lzma_ret r)
{
	switch (r) {
	case LZMA_FORMAT_ERROR: return "not an xz stream";
	case LZMA_OPTIONS_ERROR: return "unsupported options";
	case LZMA_DATA_ERROR: return "compressed data is corrupt";
	case LZMA_BUF_ERROR: return "unexpected end of input";
	default: return "decoder error";
	}
}

static enum pc_code xz_decode(struct inflate *z)
{
	lzma_stream s = LZMA_STREAM_INIT;
	/* LZMA_CONCATENATED: several streams one after another, as xz -d reads */
	if (lzma_stream_decoder(&s, z->mem_limit ? z->mem_limit : UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return no_memory(z);
	s.next_in = z->in;
	s.avail_in = z->in_len;
	enum pc_code st = PC_OK;
	lzma_ret r;
	for (;;) {
		s.next_out = z->out;
		s.avail_out = z->out_size;
		r = lzma_code(&s, LZMA_FINISH);
		if ((st = emit(z, z->out, z->out_size - s.avail_out)) != PC_OK)
			break;
		if (r == LZMA_OK)
			continue;
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_MEMLIMIT_ERROR && z->mem_limit)
			st = window_limit(z);
		else if (r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR)
			st = no_memory(z);
		else if (r == LZMA_BUF_ERROR && s.avail_in == 0)
			st = truncated(z);
		else
			st = corrupt(z, z->in_len - s.avail_in, lzma_why(r));
		break;
	}
	lzma_end(&s);
	return st;
}

static enum pc_code lz4_decode(struct inflate *z)
{
	LZ4F_dctx *c = NULL;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&c, LZ4F_VERSION)))
		return no_memory(z);
	const uint8_t *in = z->in;
	size_t len = z->in_len, pos = 0;
	size_t hint = 1;
	enum pc_code st = PC_OK;
	/* frames one after another (lz4 -d reads them); hint 0: a frame ended */
	while (pos < len) {
		size_t out_n = z->out_size, in_n = len - pos;
		hint = LZ4F_decompress(c, z->out, &out_n, in + pos, &in_n, NULL);
		if (LZ4F_isError(hint)) {
			st = corrupt(z, pos, LZ4F_getErrorName(hint));
			break;
		}
		pos += in_n;
		if ((st = emit(z, z->out, out_n)) != PC_OK)
			break;
		if (in_n == 0 && out_n == 0)
			break;
	}
	/* the input is consumed: drain what the decoder still holds */
	while (st == PC_OK && hint != 0) {
		size_t out_n = z->out_size, in_n = 0;
		hint = LZ4F_decompress(c, z->out, &out_n, in + pos, &in_n, NULL);
		if (LZ4F_isError(hint) || out_n == 0)
			break;
		st = emit(z, z->out, out_n);
	}
	if (st == PC_OK && hint != 0)
		st = LZ4F_isError(hint) ? corrupt(z, pos, LZ4F_getErrorName(hint)) : truncated(z);
	LZ4F_freeDecompressionContext(c);
	return st;
}

/* OUT_SIZE: the size of the buffers SWAP hands out too.  Returns the
 * error (*WARNING: what to pass on, malloc'd, or NULL). */
static struct pc_error *decode(const uint8_t *in, size_t len, dump_sink sink, uint8_t *(*swap)(void *, uint8_t *),
			       void *arg, size_t out_size, uint64_t mem_limit, struct dump_spend *spend,
			       uint64_t *total, char **warning)
{
	const char *name = dump_compression_of(in, len);
	struct inflate z = { in, len, name, sink, arg, 0, mem_limit, malloc(out_size), out_size, swap, NULL, NULL,
			     spend, { 0 }, 0 };
	enum pc_code st;
	if (!name) {
		st = fail(&z, PC_EFORMAT, "not a compressed file");
	} else if (!z.out) {
		st = no_memory(&z);
	} else {
		st = name[0] == 'z' ? zstd_decode(&z) : name[0] == 'g' ? gzip_decode(&z)
		     : name[0] == 'x' ? xz_decode(&z) : lz4_decode(&z);
	}
	if (st == PC_OK && z.total == 0)
		fail(&z, PC_EFORMAT, "the %s stream holds no data", name);
	else if (st != PC_OK)
		fail(&z, st, "%s", pc_code_str(st));   /* a reason, should a path give none */
	free(z.out);
	*total = z.total;
	if (warning)
		*warning = z.warning;
	else
		free(z.warning);
	return z.err;
}

struct pc_error *dump_decode(const uint8_t *in, size_t len, dump_sink sink, void *arg, uint64_t mem_limit,
			     uint64_t *total)
{
	return decode(in, len, sink, NULL, arg, SMALL_OUT_SIZE, mem_limit, NULL, total, NULL);
}

struct pc_error *dump_decode_spend(const uint8_t *in, size_t len, dump_sink sink, void *arg, uint64_t mem_limit,
				   struct dump_spend *spend, uint64_t *total)
{
	return decode(in, len, sink, NULL, arg, SMALL_OUT_SIZE, mem_limit, spend, total, NULL);
}

/* ------------------------------------------------------------------------
 * The temporary file, zero pages left as holes
 * ------------------------------------------------------------------------ */

int dump_temp_file(struct pc_error **err)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* file systems without O_TMPFILE: create, then unlink at once */
	char *path = NULL;
	if (asprintf(&path, "%s/pycore-XXXXXX", dir) < 0) {
		*err = pc_error_new(PC_ENOMEM, NULL, "out of memory");
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	else
		*err = pc_error_new(PC_EIO, NULL, "cannot create a temporary file in %s: %s", dir, strerror(errno));
	free(path);
	return fd;
}

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* libc's memcmp against a page of zeros is vectorized: the fastest test. */
static bool all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zeros[HOLE_UNIT];
	return memcmp(p, zeros, n) == 0;
}

/* The pages of P that hold something, written at their offsets; the
 * others skipped (compress.h). */
/* Write the N bytes at P at OFF, within S's cap. */
static int sparse_put(struct dump_sparse *s, const uint8_t *p, size_t n, uint64_t off)
{
	if (s->limit && (s->written > s->limit || n > s->limit - s->written)) {
		errno = EFBIG;   /* the disk budget: nothing past it is written */
		return -1;
	}
	if (pwrite_all(s->fd, p, n, off) != 0)
		return -1;
	s->written += n;
	return 0;
}

int dump_sparse_write(void *arg, const uint8_t *p, size_t n)
{
	struct dump_sparse *s = arg;
	size_t i = 0, run = 0;   /* run: start of the unwritten non-zero pages */
	while (i < n) {
		size_t unit = HOLE_UNIT - (size_t)((s->off + i) % HOLE_UNIT);
		if (unit > n - i)
			unit = n - i;
		if (all_zero(p + i, unit)) {
			if (run < i && sparse_put(s, p + run, i - run, s->off + run) != 0)
				return -1;
			run = i + unit;
		}
		i += unit;
	}
	if (run < n && sparse_put(s, p + run, n - run, s->off + run) != 0)
		return -1;
	s->off += n;
	return 0;
}

/* The writer thread: while the decoder fills one buffer, it writes the
 * other (its pages that hold something), so that decoding and writing
 * share the work of two CPUs, as zstd's own CLI does with its I/O threads. */
struct writer {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dump_sparse sp;
	const uint8_t *job;          /* the buffer to write; NULL: none */
	size_t job_n;
	bool stop;
	int err;                     /* errno of a write that failed; 0 */
	uint8_t *spare;              /* the buffer the decoder fills next */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->job)
			break;
		pthread_mutex_unlock(&w->mu);
		int err = dump_sparse_write(&w->sp, w->job, w->job_n) != 0 ? errno : 0;
		pthread_mutex_lock(&w->mu);
		if (err && !w->err)
			w->err = err;
		w->job = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Wait until the writer is idle; the errno of a failed write, or 0. */
static int writer_idle(struct writer *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->job)
		pthread_cond_wait(&w->cv, &w->mu);
	int err = w->err;
	pthread_mutex_unlock(&w->mu);
	return err;
}

/* The decoder's sink: P goes to the writer once it is done with the
 * previous buffer (which becomes the spare). */
static int writer_sink(void *arg, const uint8_t *p, size_t n)
{
	struct writer *w = arg;
	int err = writer_idle(w);
	if (err) {
		errno = err;
		return -1;
	}
	pthread_mutex_lock(&w->mu);
	w->job = p;
	w->job_n = n;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static uint8_t *writer_swap(void *arg, uint8_t *given)
{
	struct writer *w = arg;
	uint8_t *next = w->spare;
	w->spare = given;
	return next;
}

/* Decompress IN into FD, through the writer thread when one can start. */
/* Decompress IN into FD, through the writer thread when one can start,
 * within SPEND (NULL: no budget). */
static struct pc_error *decode_to_file(const uint8_t *in, size_t len, int fd, struct dump_spend *spend,
				       uint64_t *total, char **warning)
{
	const struct dump_budget *b = spend ? spend->budget : NULL;
	uint64_t limit = 0;
	if (b && b->max_spool)
		limit = b->max_spool > spend->written ? b->max_spool - spend->written : 1;
	struct writer w = { .sp = { fd, 0, 0, limit }, .spare = malloc(OUT_SIZE) };
	pthread_t th;
	struct pc_error *e;
	if (!w.spare || pthread_mutex_init(&w.mu, NULL) != 0) {
		free(w.spare);
		w.spare = NULL;
		e = decode(in, len, dump_sparse_write, NULL, &w.sp, OUT_SIZE, DUMP_INFLATE_MEM_MAX, spend, total,
			   warning);
		goto done;
	}
	pthread_cond_init(&w.cv, NULL);
	if (pthread_create(&th, NULL, writer_main, &w) != 0) {
		e = decode(in, len, dump_sparse_write, NULL, &w.sp, OUT_SIZE, DUMP_INFLATE_MEM_MAX, spend, total,
			   warning);
	} else {
		e = decode(in, len, writer_sink, writer_swap, &w, OUT_SIZE, DUMP_INFLATE_MEM_MAX, spend, total,
			   warning);
		int err = writer_idle(&w);
		pthread_mutex_lock(&w.mu);
		w.stop = true;
		pthread_cond_broadcast(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(th, NULL);
		if (err && (!e || e->code == PC_ETRUNCATED)) {
			/* the last buffer's write failed after the decoder was done */
			pc_error_free(e);
			if (err == EFBIG && spend) {
				char what[64];
				snprintf(what, sizeof(what), "decompressing the %s stream", dump_compression_of(in, len));
				e = dump_spool_error(b, what);
			} else {
				e = pc_error_new(PC_EIO, NULL, "cannot write the decompressed core: %s", strerror(err));
			}
		}
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	free(w.spare);
done:
	if (spend)
		spend->written += w.sp.written;
	return e;
}

struct pc_error *dump_inflate(const uint8_t *in, size_t len, struct dump_spend *spend, struct dump_inflated *out)
{
	*out = (struct dump_inflated){ .compression = dump_compression_of(in, len) };
	struct pc_error *e = NULL;
	int fd = dump_temp_file(&e);
	if (fd < 0)
		return e ? e : pc_error_new(PC_EIO, NULL, "cannot create a temporary file: %s", strerror(errno));
	uint64_t total;
	e = decode_to_file(in, len, fd, spend, &total, &out->warning);
	if (e && e->code == PC_ETRUNCATED && total > 0) {
		/* keep what was decompressed: a truncated core */
		out->cut = strdup(e->message);
		pc_error_free(e);
		e = out->cut ? NULL : pc_error_new(PC_ENOMEM, NULL, "out of memory");
	}
	if (e)
		goto done;
	if (ftruncate(fd, (off_t)total) != 0) {
		e = pc_error_new(PC_EIO, NULL, "cannot write the decompressed core: %s", strerror(errno));
		goto done;
	}
	void *m = mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		e = pc_error_new(PC_EIO, NULL, "cannot map the decompressed core: %s", strerror(errno));
		goto done;
	}
	out->map = m;
	out->len = (size_t)total;
done:
	close(fd);
	if (e) {
		free(out->cut);
		free(out->warning);
		out->cut = out->warning = NULL;
	}
	return e;
}
