/* Fuzz target: the budget of the front ends that write to $TMPDIR (issue
 * 28): standard input spooled to a temporary file, and a compressed
 * stream decompressed into one, through dump_open's own paths.  Not only
 * no crash: each input must cost at most its budget, and say so when it
 * runs out.
 *
 * The input's first byte picks the front end: 0 (mod 5) standard input
 * (the rest of the input written into a pipe that becomes fd 0, then
 * dump_open("-")), 1 to 4 a zstd, gzip, xz or lz4 stream (the rest of the
 * input with that format's magic, in a memfd opened with dump_open_fd).
 * The budget: --max-spool 64 KiB, --timeout 0.25 s.  Checked after each
 * input: the bytes this process passed to write(2) while the dump was
 * opened (/proc/self/io's wchar, which counts the writer thread's too) are
 * at most the disk budget; the call returned within its timeout plus
 * 2 s (the budget is checked once per decoded megabyte); a refusal for
 * the budget names its setting; every error says why. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dump/compress.h"
#include "dump/dump.h"
#include "fuzz-reader.h"

#define SPOOL_MAX ((uint64_t)64 << 10)
#define TIMEOUT 0.25
#define SLACK 2.0
#define PIPE_MAX 60000    /* within a pipe's default 64 KiB: written before the open */

static const char *const formats[] = { "zstd", "gzip", "xz", "lz4" };

/* This process's wchar: what it handed to write(2) so far. */
static uint64_t wchar(void)
{
	char buf[512];
	int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		abort();   /* no /proc: the budget cannot be checked */
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		abort();
	buf[n] = '\0';
	const char *w = strstr(buf, "wchar:");
	if (!w)
		abort();
	return strtoull(w + 6, NULL, 10);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A fd holding LEN bytes at P, ready to be read from its start: a memfd
 * (STDIN false) or a pipe's read end (its write end closed). */
static int input_fd(const uint8_t *p, size_t len, bool pipe_end)
{
	int fds[2];
	if (pipe_end) {
		if (pipe2(fds, O_CLOEXEC) != 0)
			return -1;
	} else {
		fds[0] = fds[1] = memfd_create("fuzz-budget", MFD_CLOEXEC);
		if (fds[0] < 0)
			return -1;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fds[1], p + off, len - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	if (pipe_end)
		close(fds[1]);
	else
		lseek(fds[0], 0, SEEK_SET);
	return fds[0];
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned mode = data[0] % 5;
	size_t len = size - 1;
	uint8_t *buf = malloc(len);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	if (mode) {
		const uint8_t *m;
		size_t mlen = dump_compression_magic(formats[mode - 1], &m);
		if (len < mlen) {
			free(buf);
			return 0;
		}
		memcpy(buf, m, mlen);
	} else if (len > PIPE_MAX) {
		len = PIPE_MAX;
	}
	int fd = input_fd(buf, len, mode == 0);
	free(buf);
	if (fd < 0)
		return 0;
	int saved = -1;
	if (mode == 0) {
		saved = dup(STDIN_FILENO);
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	struct dump_budget b = { .timeout = TIMEOUT, .max_spool = SPOOL_MAX };
	struct dump *d = NULL;
	uint64_t w0 = wchar();
	double t0 = now();
	struct pc_error *e = mode == 0 ? dump_open("-", &b, &d) : dump_open_fd(fd, "fuzz", &b, &d);
	double took = now() - t0;
	uint64_t w1 = wchar();
	if (mode == 0) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	} else {
		close(fd);
	}
	if (w1 - w0 > SPOOL_MAX)
		abort();   /* more written under $TMPDIR than the disk budget */
	if (took > TIMEOUT + SLACK)
		abort();   /* the time budget did not stop it */
	if (e && (!e->message || !*e->message))
		abort();   /* every failure says why */
	if (e && e->code == PC_ELIMIT && !strstr(e->message, "--max-spool") && !strstr(e->message, "MiB"))
		abort();   /* a refusal for the budget names it */
	if (e && e->code == PC_ETIMEOUT && !strstr(e->message, "--timeout"))
		abort();
	pc_error_free(e);
	dump_close(d);
	return 0;
}
