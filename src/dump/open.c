/* Opening a dump: a file, standard input (spooled to a temporary file),
 * an fd or bytes in memory; the compression undone, the format told by
 * its magic and its reader run; and closing it. */
#include "dump_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compress.h"

static enum pc_code open_any(struct dump *d, const char *path);
static enum pc_code open_mapped(struct dump *d);

/* The budget of the dump being opened: BUDGET copied (NULL: none), its
 * deadline from now. */
static void set_budget(struct dump *d, const struct dump_budget *budget)
{
	if (budget)
		d->p->budget = *budget;
	d->p->deadline_ns = dump_deadline_ns(budget);
}

/* D's error, from the budget's error E (freed); its code. */
static enum pc_code budget_spent(struct dump *d, struct pc_error *e)
{
	enum pc_code st = e->code;
	dump_set_error(d, "%s", e->message);
	pc_error_free(e);
	return st;
}

/* What the first bytes of a dump look like: an ELF file's or a
 * minidump's magic (which reader takes it is open_mapped's business). */
static bool dump_head(const uint8_t *p, size_t n)
{
	return (n >= SELFMAG && memcmp(p, ELFMAG, SELFMAG) == 0) || (n >= 4 && memcmp(p, "MDMP", 4) == 0);
}

/* The kind of a file that is not a regular one, for the refusal. */
static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO (named pipe)" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket"
	       : "not a regular file";
}

/* An empty dump (pid and crashed_tid unknown), NULL when out of memory. */
struct dump *dump_new(void)
{
	struct dump *d = calloc(1, sizeof(*d));
	if (d && !(d->p = calloc(1, sizeof(*d->p)))) {
		free(d);
		d = NULL;
	}
	if (d) {
		d->pid = d->ppid = d->uid = d->gid = -1;
		d->crashed_tid = -1;
	}
	return d;
}

struct pc_error *dump_open(const char *path, const struct dump_budget *budget, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d)
		return pc_error_new(PC_ENOMEM, path, "out of memory");
	set_budget(d, budget);
	enum pc_code st = open_any(d, path);
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, path, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

struct pc_error *dump_open_memory(const void *data, size_t size, const char *name, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d || !(d->path = strdup(name)))
		return pc_error_new(PC_ENOMEM, name, "out of memory");
	d->file_size = size;
	enum pc_code st = PC_EFORMAT;
	if (size == 0) {
		dump_set_error(d, "empty file");
	} else {
		d->p->map = data;
		d->p->map_len = size;
		d->p->map_borrowed = true;
		st = open_mapped(d);
	}
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, name, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

struct pc_error *dump_open_runs(const struct dump_run *runs, size_t n, const char *name, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d || !(d->path = strdup(name)))
		return pc_error_new(PC_ENOMEM, name, "out of memory");
	d->format = "memory";
	enum pc_code st = PC_OK;
	for (size_t i = 0; i < n && st == PC_OK; i++) {
		const struct dump_run *r = &runs[i];
		struct dump_segment s = { r->start, r->start + r->size, r->data, NULL, 0, 0, false, false };
		if (r->size > UINT64_MAX - r->start) {
			dump_set_error(d, "a run at 0x%llx past the end of the address space",
				       (unsigned long long)r->start);
			st = PC_ECORRUPT;
		} else {
			st = dump_add_segment(d, &s);
		}
	}
	if (st == PC_OK)
		st = dump_segments_finish(d);
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, name, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

/* Map the regular file open at FD (which stays open) and read it. */
static enum pc_code open_fd(struct dump *d, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		dump_set_error(d, "cannot stat: %s", strerror(errno));
		return PC_EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		dump_set_error(d, "%s, not a dump file", file_kind(st.st_mode));
		return PC_EIO;
	}
	d->file_size = (uint64_t)st.st_size;
	if (st.st_size == 0) {
		dump_set_error(d, "empty file");
		return PC_EFORMAT;
	}
	d->coredump = dump_coredump_read(fd);
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		dump_set_error(d, "cannot map: %s", strerror(errno));
		return PC_EIO;
	}
	d->p->map = m;
	d->p->map_len = (size_t)st.st_size;
	return open_mapped(d);
}

/* Read up to N bytes of standard input into BUF within D's deadline:
 * the count (0 at its end), or -1 with D's error set and *ST its code.
 * SPOOLED: bytes read before, for the message. */
static ssize_t read_stdin(struct dump *d, uint8_t *buf, size_t n, uint64_t spooled, enum pc_code *st)
{
	for (;;) {
		if (d->p->deadline_ns) {
			/* a pipe whose writer says nothing must not hold pycore */
			uint64_t now = dump_now_ns();
			int r = 0;
			if (now < d->p->deadline_ns) {
				struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };
				uint64_t ms = (d->p->deadline_ns - now) / 1000000 + 1;
				r = poll(&pfd, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0 && dump_now_ns() >= d->p->deadline_ns) {
				char what[96];
				snprintf(what, sizeof(what), "while reading standard input (%llu bytes read)",
					 (unsigned long long)spooled);
				*st = budget_spent(d, dump_timeout_error(&d->p->budget, what));
				return -1;
			}
			if (r == 0)
				continue;
		}
		ssize_t r = read(STDIN_FILENO, buf, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN && d->p->deadline_ns)
			continue;   /* a non-blocking descriptor: poll again */
		if (r < 0) {
			dump_set_error(d, "cannot read standard input: %s", strerror(errno));
			*st = PC_EIO;
		}
		return r;
	}
}

/* Copy standard input (a pipe) into an unlinked temporary file, zero
 * pages as holes (a core is mostly zeros) as compressed dumps are written,
 * within D's budget, and return that file, or -1 with d's error set and
 * *ST its code.  Its first bytes must be a dump's or a compressed
 * stream's: anything else (/dev/zero, /dev/urandom, text) is dropped
 * before a byte is written. */
static int spool_stdin(struct dump *d, enum pc_code *st)
{
	enum { BLOCK = 1 << 16 };
	struct pc_error *e = NULL;
	*st = PC_EIO;
	int fd = -1;
	uint8_t *buf = malloc(BLOCK);
	if (!buf) {
		dump_set_error(d, "out of memory");
		*st = PC_ENOMEM;
		return -1;
	}
	struct dump_sparse sp = { -1, 0, 0, d->p->budget.max_spool };
	uint64_t total = 0;
	for (;;) {
		size_t have = 0;
		while (have < BLOCK) {  /* a whole block: fewer, larger writes */
			ssize_t r = read_stdin(d, buf + have, BLOCK - have, total + have, st);
			if (r < 0)
				goto fail;
			if (r == 0)
				break;
			have += (size_t)r;
			if (total == 0 && have >= 8)
				break;  /* the first bytes: looked at before anything else */
		}
		if (have == 0)
			break;
		if (total == 0) {
			if (!dump_head(buf, have) && !dump_compression_of(buf, have)) {
				dump_set_error(d, "standard input is not a dump: its first bytes are neither an ELF "
					       "core's, a minidump's nor a compressed stream's");
				*st = PC_EFORMAT;
				goto fail;
			}
			if ((fd = sp.fd = dump_temp_file(&e)) < 0) {
				if (e)
					dump_set_error(d, "%s", e->message);
				else
					dump_set_error(d, "cannot create a temporary file: %s", strerror(errno));
				pc_error_free(e);
				goto fail;
			}
		}
		total += have;
		if (dump_sparse_write(&sp, buf, have) != 0) {
			if (errno == EFBIG)
				*st = budget_spent(d, dump_spool_error(&d->p->budget, "spooling standard input"));
			else
				dump_set_error(d, "cannot write standard input to a temporary file: %s", strerror(errno));
			goto fail;
		}
	}
	d->p->spooled += sp.written;
	if (fd < 0) {
		dump_set_error(d, "empty file");
		*st = PC_EFORMAT;
		goto fail;
	}
	if (ftruncate(fd, (off_t)sp.off) != 0) {  /* the holes at the end */
		dump_set_error(d, "cannot write standard input to a temporary file: %s", strerror(errno));
		goto fail;
	}
	free(buf);
	return fd;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return -1;
}

static enum pc_code open_any(struct dump *d, const char *path)
{
	d->path = strdup(path);
	if (strcmp(path, "-") == 0) {
		struct stat st;
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
			return open_fd(d, STDIN_FILENO);
		enum pc_code rc;
		int fd = spool_stdin(d, &rc);
		if (fd < 0)
			return rc;
		rc = open_fd(d, fd);
		close(fd);
		return rc;
	}
	/* a FIFO would block open() until a writer comes, a device could
	 * stream forever: only a regular file is opened, and a file that
	 * turns into something else between the two looks is refused by
	 * open_fd, O_NONBLOCK having kept open() itself from waiting */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		dump_set_error(d, "%s, not a dump file", file_kind(st.st_mode));
		return PC_EIO;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		dump_set_error(d, "cannot open: %s", strerror(errno));
		return PC_EIO;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	enum pc_code rc = open_fd(d, fd);
	close(fd);
	return rc;
}

struct pc_error *dump_open_fd(int fd, const char *name, const struct dump_budget *budget, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d || !(d->path = strdup(name)))
		return pc_error_new(PC_ENOMEM, name, "out of memory");
	set_budget(d, budget);
	enum pc_code st = open_fd(d, fd);
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, name, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

/* The format of the bytes at d->p->map, and its reader. */
/* Replace d->p->map by its decompressed contents, a truncated stream's
 * message kept for open_mapped. */
static enum pc_code decompress(struct dump *d)
{
	struct dump_inflated z;
	struct dump_spend spend = { &d->p->budget, d->p->deadline_ns, d->p->spooled, dump_head };
	struct pc_error *e = dump_inflate(d->p->map, d->p->map_len, &spend, &z);
	d->p->spooled = spend.written;
	if (e) {
		enum pc_code st = e->code;
		dump_set_error(d, "%s", e->message);
		pc_error_free(e);
		return st;
	}
	if (z.warning)
		dump_warn(d, "%s", z.warning);
	free(z.warning);
	if (z.cut)
		dump_warn(d, "%s", z.cut);
	d->p->inflate_cut = z.cut;
	if (!d->p->map_borrowed)
		munmap((void *)d->p->map, d->p->map_len);
	d->p->map_borrowed = false;
	d->p->map = z.map;
	d->p->map_len = z.len;
	return PC_OK;
}

static enum pc_code open_mapped(struct dump *d)
{
	d->compression = dump_compression_of(d->p->map, d->p->map_len);
	if (d->compression) {
		enum pc_code zs = decompress(d);
		if (zs != PC_OK)
			return zs;
	}
	enum pc_code st = PC_EFORMAT;
	if (d->p->map_len >= SELFMAG && memcmp(d->p->map, ELFMAG, SELFMAG) == 0)
		st = dump_elfcore_open(d);
	else if (d->p->map_len >= 4 && memcmp(d->p->map, "MDMP", 4) == 0)
		st = dump_minidump_open(d);
	else if (d->compression)
		dump_set_error(d, "the %s stream does not hold a core dump", d->compression);
	else
		dump_set_error(d, "not a core dump (unknown file format)");
	if (st == PC_OK && d->p->inflate_cut)
		d->p->truncated = true;    /* whatever the reader found: the stream was cut */
	if (st != PC_OK && d->p->inflate_cut) {
		/* what is left of a cut stream is not enough: say both */
		char *why = d->p->error;
		d->p->error = NULL;
		dump_set_error(d, "%s; what it holds is not enough: %s", d->p->inflate_cut,
			       why ? why : pc_code_str(st));
		free(why);
		st = PC_ETRUNCATED;
	}
	return st;
}

void dump_close(struct dump *d)
{
	if (!d)
		return;
	if (d->p->live_free)
		d->p->live_free(d);
	for (size_t i = 0; i < d->nmodules; i++) {
		free(d->modules[i].file);
		free(d->modules[i].path);
		free(d->modules[i].maps);
	}
	for (size_t i = 0; i < d->nannotations; i++) {
		free(d->annotations[i].module);
		free(d->annotations[i].name);
		free(d->annotations[i].value);
	}
	free(d->annotations);
	dump_files_free(d);
	dump_vmas_free(d);
	free(d->modules);
	free(d->threads);
	for (size_t i = 0; i < d->p->ncopies; i++)
		free(d->p->copies[i]);
	free(d->p->copies);
	free(d->p->segs);
	free(d->p->notes);
	dump_record_free(d->p->rec);
	free(d->p->held);
	free(d->p->held_buf);
	free(d->p->auxv);
	if (d->p->map && !d->p->map_borrowed)
		munmap((void *)d->p->map, d->p->map_len);
	if (d->argv) {
		for (char **a = d->argv; *a; a++)
			free(*a);
		free(d->argv);
	}
	for (size_t i = 0; i < d->p->nwarnings; i++)
		free(d->p->warnings[i]);
	free(d->p->warnings);
	for (size_t i = 0; i < d->p->nquiet_notes; i++)
		free(d->p->quiet_notes[i]);
	free(d->p->quiet_notes);
	free(d->fname);
	free(d->psargs);
	free(d->executable);
	free(d->root);
	dump_coredump_free(d->coredump);
	free(d->p->error);
	free(d->p->inflate_cut);
	free(d->p);
	free(d->path);
	free(d);
}
