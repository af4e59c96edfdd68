/* zstd-compressed dumps (systemd-coredump's core.*.zst): decompressed once,
 * streaming, into an unlinked temporary file under $TMPDIR, which is then
 * mapped and read like any other dump.  Memory use stays at the stream
 * buffers; the page cache holds the rest. */
#include "dump_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

/* A decompressed dump may not exceed this (a corrupt frame could claim more). */
#define ZSTD_MAX_OUTPUT ((uint64_t)1 << 40)

bool dump_is_zstd(const uint8_t *p, size_t n)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	return n >= 4 && memcmp(p, magic, 4) == 0;
}

int dump_temp_file(struct dump *d)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* file systems without O_TMPFILE: create, then unlink at once */
	char *path = NULL;
	if (asprintf(&path, "%s/pycore-XXXXXX", dir) < 0)
		return -1;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	else
		dump_set_error(d, "cannot create a temporary file in %s: %s", dir, strerror(errno));
	free(path);
	return fd;
}

int dump_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fd_sink(void *arg, const uint8_t *p, size_t n)
{
	return dump_write_all(*(int *)arg, p, n);
}

enum pc_code dump_zstd_decode(struct dump *d, int (*sink)(void *arg, const uint8_t *p, size_t n),
			      void *arg, uint64_t *total_out)
{
	d->compression = "zstd";
	ZSTD_DCtx *z = ZSTD_createDCtx();
	size_t outcap = ZSTD_DStreamOutSize();
	uint8_t *out = malloc(outcap);
	enum pc_code st = PC_OK;
	uint64_t total = 0;
	if (!z || !out) {
		st = PC_ENOMEM;
		goto done;
	}
	ZSTD_inBuffer in = { d->p->map, d->p->map_len, 0 };
	size_t ret = 1;
	while (in.pos < in.size) {
		ZSTD_outBuffer o = { out, outcap, 0 };
		ret = ZSTD_decompressStream(z, &o, &in);
		if (ZSTD_isError(ret) && ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation) {
			/* not the stream's fault: the window would not fit (a memory limit) */
			dump_set_error(d, "out of memory decompressing the zstd stream");
			st = PC_ENOMEM;
			goto done;
		}
		if (ZSTD_isError(ret)) {
			dump_set_error(d, "corrupt zstd stream at compressed byte %zu (output byte %llu): %s",
				       in.pos, (unsigned long long)total, ZSTD_getErrorName(ret));
			st = PC_ECORRUPT;
			goto done;
		}
		total += o.pos;
		if (total > ZSTD_MAX_OUTPUT) {
			dump_set_error(d, "zstd stream inflates past %llu bytes", (unsigned long long)ZSTD_MAX_OUTPUT);
			st = PC_ECORRUPT;
			goto done;
		}
		if (sink(arg, out, o.pos) != 0) {
			dump_set_error(d, "cannot write the decompressed core: %s", strerror(errno));
			st = PC_EIO;
			goto done;
		}
	}
	/* the input is consumed; drain what the decoder still holds */
	while (ret != 0) {
		ZSTD_outBuffer o = { out, outcap, 0 };
		ret = ZSTD_decompressStream(z, &o, &in);
		if (ZSTD_isError(ret) || o.pos == 0)
			break;
		total += o.pos;
		if (sink(arg, out, o.pos) != 0) {
			dump_set_error(d, "cannot write the decompressed core: %s", strerror(errno));
			st = PC_EIO;
			goto done;
		}
	}
	if (ret != 0) {
		dump_set_error(d, "truncated zstd stream: it ends at compressed byte %zu, inside a frame "
			       "(%llu bytes decompressed)", in.size, (unsigned long long)total);
		st = PC_ECORRUPT;
		goto done;
	}
	if (total == 0) {
		dump_set_error(d, "the zstd stream holds no data");
		st = PC_EFORMAT;
	}
done:
	*total_out = total;
	free(out);
	ZSTD_freeDCtx(z);
	return st;
}

enum pc_code dump_zstd_inflate(struct dump *d)
{
	d->compression = "zstd";
	int fd = dump_temp_file(d);
	if (fd < 0) {
		if (!d->p->error)
			dump_set_error(d, "cannot create a temporary file: %s", strerror(errno));
		return PC_EIO;
	}
	uint64_t total;
	enum pc_code st = dump_zstd_decode(d, fd_sink, &fd, &total);
	if (st != PC_OK)
		goto done;
	void *m = mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		dump_set_error(d, "cannot map the decompressed core: %s", strerror(errno));
		st = PC_EIO;
		goto done;
	}
	if (!d->p->map_borrowed)
		munmap((void *)d->p->map, d->p->map_len);
	d->p->map_borrowed = false;
	d->p->map = m;
	d->p->map_len = (size_t)total;
done:
	close(fd);
	return st;
}
