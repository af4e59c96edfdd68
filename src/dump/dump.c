/* The memory reader shared by every dump format: segment index, bounded
 * reads, the module files the caller attached. */
#include "dump_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/coverage.h"

/* ------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------ */

char *dump_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *vfmt(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

void dump_set_error(struct dump *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(d->p->error);
	d->p->error = vfmt(fmt, ap);
	va_end(ap);
}

void dump_warn(struct dump *d, const char *fmt, ...)
{
	if (d->p->nwarnings >= 1000)
		return;
	char **w = realloc(d->p->warnings, (d->p->nwarnings + 1) * sizeof(*w));
	if (!w)
		return;
	d->p->warnings = w;
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	if (s)
		d->p->warnings[d->p->nwarnings++] = s;
}

const char *const *dump_warnings(const struct dump *d, size_t *n)
{
	*n = d->p->nwarnings;
	return (const char *const *)d->p->warnings;
}

bool dump_truncated(const struct dump *d)
{
	return d->p->truncated;
}

/* glibc's struct pthread keeps the thread's tid at this offset on x86_64:
 * 720 bytes, as glibc's own descriptor for libthread_db says (the field
 * (pthread, tid) of nptl_db/structs.def, in libc.so.6 as the symbol
 * _thread_db_pthread_tid), read from Debian 12's libc.so.6 and unstable's. */
#define GLIBC_PTHREAD_TID 720

int64_t dump_tid_of_thread_pointer(struct dump *d, uint64_t fs_base)
{
	bool unknown = false;
	for (size_t i = 0; i < d->nthreads; i++) {
		if (d->threads[i].regs.fs_base == fs_base)
			return d->threads[i].tid;
		unknown |= !d->threads[i].regs.fs_base;
	}
	/* a dump that keeps no thread pointer (lldb's minidumps write none):
	 * the tid the thread's struct pthread holds, believed only when it is
	 * one of the dump's threads whose thread pointer is not known */
	uint32_t tid;
	if (!unknown || !fs_base || dump_read_u32(d, fs_base + GLIBC_PTHREAD_TID, &tid) != PC_OK)
		return -1;
	for (size_t i = 0; i < d->nthreads; i++)
		if (!d->threads[i].regs.fs_base && d->threads[i].tid == (int64_t)tid)
			return d->threads[i].tid;
	return -1;
}

void dump_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

int64_t dump_tid_of_stack_address(struct dump *d, uint64_t addr)
{
	int64_t best = -1;
	uint64_t best_len = UINT64_MAX;
	for (size_t i = 0; i < d->nthreads; i++) {
		uint64_t sp = d->threads[i].regs.rsp, end;
		if (!sp || addr < sp || dump_next_held(d, sp, &end) != sp || addr >= end)
			continue;
		if (addr - sp < best_len) {
			best_len = addr - sp;
			best = d->threads[i].tid;
		}
	}
	return best;
}

/* si_code values and siginfo_t's layout from the Linux kernel's
 * include/uapi/asm-generic/siginfo.h: SI_USER 0 (kill), SI_QUEUE -1
 * (sigqueue), SI_TKILL -6 (tkill, tgkill) fill _kill/_rt, whose si_pid and
 * si_uid sit where _sigfault's si_addr does (offset 16 on x86_64);
 * SI_KERNEL 0x80 carries neither.  SIGILL, SIGFPE, SIGSEGV, SIGBUS and
 * SIGTRAP with a positive code (SEGV_MAPERR ...) carry si_addr. */
void dump_signal_decode(struct dump_signal *s, uint64_t word)
{
	int n = s->number, code = s->code;
	s->has_address = s->has_sender = false;
	if (!s->has_code)
		return;
	if (code == 0 || code == -1 || code == -6) {
		/* a pid is positive: anything else is not a sender's (lldb's
		 * minidump of a core writes such words) */
		s->sender_pid = (int32_t)(word & 0xffffffffu);
		s->sender_uid = (uint32_t)(word >> 32);
		s->has_sender = s->sender_pid > 0;
	} else if (code > 0 && code != 0x80 && (n == 4 || n == 5 || n == 7 || n == 8 || n == 11)) {
		s->has_address = true;
		s->address = word;
	}
}

/* ------------------------------------------------------------------------
 * Opening and closing
 * ------------------------------------------------------------------------ */

static enum pc_code open_any(struct dump *d, const char *path);
static enum pc_code open_mapped(struct dump *d);

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

struct pc_error *dump_open(const char *path, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d)
		return pc_error_new(PC_ENOMEM, path, "out of memory");
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

/* Map the regular file open at FD (which stays open) and read it. */
static enum pc_code open_fd(struct dump *d, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		dump_set_error(d, "cannot stat: %s", strerror(errno));
		return PC_EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		dump_set_error(d, "not a regular file");
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

/* Copy standard input (a pipe) into an unlinked temporary file, zero
 * pages as holes (a core is mostly zeros) as compressed dumps are written,
 * and return that file, or -1 with d's error set. */
static int spool_stdin(struct dump *d)
{
	enum { BLOCK = 1 << 16 };
	int fd = dump_temp_file(d);
	uint8_t *buf = fd >= 0 ? malloc(BLOCK) : NULL;
	if (!buf) {
		if (fd >= 0)
			dump_set_error(d, "out of memory");
		else if (!d->p->error)
			dump_set_error(d, "cannot create a temporary file: %s", strerror(errno));
		goto fail;
	}
	struct dump_sparse sp = { fd, 0 };
	for (;;) {
		size_t have = 0;
		while (have < BLOCK) {  /* a whole block: fewer, larger writes */
			ssize_t r = read(STDIN_FILENO, buf + have, BLOCK - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				dump_set_error(d, "cannot read standard input: %s", strerror(errno));
				goto fail;
			}
			if (r == 0)
				break;
			have += (size_t)r;
		}
		if (have == 0)
			break;
		if (dump_sparse_write(&sp, buf, have) != 0) {
			dump_set_error(d, "cannot write standard input to a temporary file: %s", strerror(errno));
			goto fail;
		}
		if (have < BLOCK)
			break;
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
		int fd = spool_stdin(d);
		if (fd < 0)
			return PC_EIO;
		enum pc_code rc = open_fd(d, fd);
		close(fd);
		return rc;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dump_set_error(d, "cannot open: %s", strerror(errno));
		return PC_EIO;
	}
	enum pc_code rc = open_fd(d, fd);
	close(fd);
	return rc;
}

struct pc_error *dump_open_fd(int fd, const char *name, struct dump **out)
{
	struct dump *d = *out = dump_new();
	if (!d || !(d->path = strdup(name)))
		return pc_error_new(PC_ENOMEM, name, "out of memory");
	enum pc_code st = open_fd(d, fd);
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, name, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

/* The format of the bytes at d->p->map, and its reader. */
static enum pc_code open_mapped(struct dump *d)
{
	if (dump_compression_of(d->p->map, d->p->map_len)) {
		enum pc_code zs = dump_inflate(d);
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
	for (size_t i = 0; i < d->nmodules; i++) {
		free(d->modules[i].path);
		free(d->modules[i].maps);
	}
	for (size_t i = 0; i < d->nannotations; i++) {
		free(d->annotations[i].module);
		free(d->annotations[i].name);
		free(d->annotations[i].value);
	}
	free(d->annotations);
	free(d->p->files);
	free(d->modules);
	free(d->threads);
	free(d->p->segs);
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
	free(d->fname);
	free(d->psargs);
	free(d->executable);
	dump_coredump_free(d->coredump);
	free(d->p->error);
	free(d->p->inflate_cut);
	free(d->p);
	free(d->path);
	free(d);
}

/* ------------------------------------------------------------------------
 * Segments
 * ------------------------------------------------------------------------ */

struct dump_module *dump_add_module(struct dump *d, char *path)
{
	struct dump_module *m = realloc(d->modules, (d->nmodules + 1) * sizeof(*m));
	if (!m)
		return NULL;
	d->modules = m;
	m = &d->modules[d->nmodules++];
	memset(m, 0, sizeof(*m));
	m->path = path;
	m->start = UINT64_MAX;
	return m;
}

enum pc_code dump_add_segment(struct dump *d, const struct dump_segment *s)
{
	if (s->end <= s->start)
		return PC_OK;
	if (d->p->nsegs >= DUMP_MAX_SEGMENTS)
		return PC_ECORRUPT;
	/* grow by doubling: nsegs is a power of two or zero when full */
	if ((d->p->nsegs & (d->p->nsegs - 1)) == 0) {
		size_t cap = d->p->nsegs ? d->p->nsegs * 2 : 16;
		struct dump_segment *n = realloc(d->p->segs, cap * sizeof(*n));
		if (!n)
			return PC_ENOMEM;
		d->p->segs = n;
	}
	d->p->segs[d->p->nsegs++] = *s;
	return PC_OK;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct dump_segment *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

enum pc_code dump_segments_finish(struct dump *d)
{
	if (d->p->nsegs) /* none at all (a core cut in its notes): segs is NULL, which qsort may not take */
		qsort(d->p->segs, d->p->nsegs, sizeof(*d->p->segs), seg_cmp);
	for (size_t i = 1; i < d->p->nsegs; i++) {
		if (d->p->segs[i].start < d->p->segs[i - 1].end) {
			dump_set_error(d, "overlapping memory segments at 0x%llx",
				       (unsigned long long)d->p->segs[i].start);
			return PC_ECORRUPT;
		}
	}
	d->p->last_seg = 0;
	return PC_OK;
}

/* Add file-backed segments for the parts of [start, end) of module M that no
 * core segment covers.  d->p->segs is sorted and holds only core segments. */
static enum pc_code add_file_gaps(struct dump *d, size_t ncore, struct dump_module *m,
				      const struct dump_mapping *mp)
{
	uint64_t a = mp->start;
	size_t i = 0;
	/* first core segment that ends after a */
	size_t lo = 0, hi = ncore;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->p->segs[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	while (a < mp->end) {
		uint64_t b = mp->end;
		if (i < ncore && d->p->segs[i].start < b)
			b = d->p->segs[i].start > a ? d->p->segs[i].start : a;
		if (b > a && !mp->writable) {
			struct dump_segment s = { a, b, NULL, m, mp->file_offset + (a - mp->start) };
			enum pc_code st = dump_add_segment(d, &s);
			if (st != PC_OK)
				return st;
		}
		if (i < ncore && d->p->segs[i].start < mp->end) {
			a = d->p->segs[i].end > b ? d->p->segs[i].end : b;
			i++;
		} else {
			a = mp->end;
		}
	}
	return PC_OK;
}

enum pc_code dump_add_file_segments(struct dump *d)
{
	size_t ncore = d->p->nsegs;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		for (size_t j = 0; j < m->nmaps; j++) {
			enum pc_code st = add_file_gaps(d, ncore, m, &m->maps[j]);
			if (st != PC_OK)
				return st;
		}
	}
	return dump_segments_finish(d);
}

/* The index of the first segment ending after ADDR (nsegs when none):
 * segments are sorted and do not overlap. */
PC_NOT_COVERED static size_t seg_after(const struct dump *d, uint64_t addr)
{
	size_t lo = 0, hi = d->p->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->p->segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

PC_NOT_COVERED static struct dump_segment *seg_find(struct dump *d, uint64_t addr)
{
	struct dump_priv *p = d->p;
	if (p->nsegs == 0)
		return NULL;
	struct dump_segment *s = &p->segs[p->last_seg];
	if (addr >= s->start && addr < s->end)
		return s;
	/* the segment a read in the same MiB last found, before searching */
	uint32_t *hint = &p->seg_hint[(addr >> 20) % DUMP_SEG_HINTS];
	if (*hint < p->nsegs && addr - p->segs[*hint].start < p->segs[*hint].end - p->segs[*hint].start) {
		p->last_seg = *hint;
		return &p->segs[*hint];
	}
	size_t lo = seg_after(d, addr);
	if (lo < p->nsegs && p->segs[lo].start <= addr) {
		p->last_seg = lo;
		*hint = (uint32_t)lo;
		return &p->segs[lo];
	}
	return NULL;
}

uint64_t dump_next_held(struct dump *d, uint64_t addr, uint64_t *end)
{
	size_t i = seg_after(d, addr);
	if (i >= d->p->nsegs)
		return 0;
	*end = d->p->segs[i].end;
	return d->p->segs[i].start > addr ? d->p->segs[i].start : addr;
}

static enum pc_code read_spanning(struct dump *d, uint64_t addr, void *buf, size_t len);

PC_NOT_COVERED enum pc_code dump_read(struct dump *d, uint64_t addr, void *buf, size_t len)
{
	/* most reads fall in the segment the last one hit, in bytes the
	 * dump holds: this path is every object reader's, and kept short */
	const struct dump_priv *p = d->p;
	if (p->last_seg < p->nsegs) {
		const struct dump_segment *s = &p->segs[p->last_seg];
		if (addr - s->start < s->end - s->start && len <= s->end - addr && s->data) {
			memcpy(buf, s->data + (addr - s->start), len);
			return PC_OK;
		}
	}
	return read_spanning(d, addr, buf, len);
}

/* Any other read: another segment, several, or a page from a module's
 * file. */
static enum pc_code read_spanning(struct dump *d, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len > 0) {
		struct dump_segment *s = seg_find(d, addr);
		if (!s)
			return PC_ENOTCAPTURED;
		uint64_t avail = s->end - addr;
		size_t n = len < avail ? len : (size_t)avail;
		if (s->data) {
			memcpy(out, s->data + (addr - s->start), n);
		} else {
			/* a page the dump left out: from the module's file, if
			 * one was attached */
			struct dump_file *f = d->p->files ? &d->p->files[s->mod - d->modules] : NULL;
			uint64_t off = s->file_offset + (addr - s->start);
			if (!f || !f->data || off > f->size || n > f->size - off)
				return PC_ENOTCAPTURED;
			memcpy(out, f->data + off, n);
			f->used = true;
		}
		out += n;
		addr += n;
		len -= n;
	}
	return PC_OK;
}

enum pc_code dump_read_u64(struct dump *d, uint64_t addr, uint64_t *v)
{
	return dump_read(d, addr, v, sizeof(*v));
}

enum pc_code dump_read_u32(struct dump *d, uint64_t addr, uint32_t *v)
{
	return dump_read(d, addr, v, sizeof(*v));
}

enum pc_code dump_read_cstr(struct dump *d, uint64_t addr, char *buf, size_t max)
{
	if (max == 0)
		return PC_ECORRUPT;
	/* 32 bytes a read; byte by byte where those are not all captured, to
	 * stop at the first one missing */
	for (size_t i = 0, n; i + 1 < max; i += n) {
		n = max - 1 - i < 32 ? max - 1 - i : 32;
		enum pc_code st = dump_read(d, addr + i, &buf[i], n);
		if (st != PC_OK && n > 1)
			st = dump_read(d, addr + i, &buf[i], n = 1);
		if (st != PC_OK) {
			buf[i] = '\0';
			return st;
		}
		if (memchr(&buf[i], '\0', n))
			return PC_OK;
	}
	buf[max - 1] = '\0';
	return PC_ECORRUPT;
}

uint64_t dump_search(struct dump *d, const void *needle, size_t len,
		     bool (*keep)(struct dump *d, uint64_t start, void *arg),
		     bool (*found)(struct dump *d, uint64_t addr, void *arg), void *arg)
{
	for (size_t i = 0; i < d->p->nsegs; i++) {
		struct dump_segment *sg = &d->p->segs[i];
		if (!sg->data || (keep && !keep(d, sg->start, arg)))
			continue;
		const uint8_t *p = sg->data, *end = sg->data + (sg->end - sg->start);
		while ((size_t)(end - p) >= len) {
			const uint8_t *hit = memmem(p, (size_t)(end - p), needle, len);
			if (!hit)
				break;
			uint64_t at = sg->start + (uint64_t)(hit - sg->data);
			if (found(d, at, arg))
				return at;
			p = hit + 1;
		}
	}
	return 0;
}

struct dump_module *dump_module_at(struct dump *d, uint64_t addr)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (addr < m->start || addr >= m->end)
			continue;
		for (size_t j = 0; j < m->nmaps; j++)
			if (addr >= m->maps[j].start && addr < m->maps[j].end)
				return m;
	}
	return NULL;
}

/* M's mappings from its file's PT_LOAD headers, placed so that the one
 * at file offset 0 starts at M's base (its ELF header).  0, or -1 when the
 * headers make no sense (M is left as it was). */
#define PAGE_DOWN(x) ((x) & ~(uint64_t)4095)
#define PAGE_UP(x)   PAGE_DOWN((x) + 4095)
static int extent_from_file(struct dump_module *m, const uint8_t *data, size_t size)
{
	Elf64_Ehdr eh;
	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 64 ||
	    eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
		return -1;
	struct dump_mapping maps[64];
	size_t n = 0;
	uint64_t bias = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (n == 0) {
			if (PAGE_DOWN(ph.p_offset) != 0 || PAGE_DOWN(ph.p_vaddr) > m->base)
				return -1;
			bias = m->base - PAGE_DOWN(ph.p_vaddr);
		}
		uint64_t start = bias + PAGE_DOWN(ph.p_vaddr), end = bias + PAGE_UP(ph.p_vaddr + ph.p_memsz);
		if (end <= start || start < bias || (n && start < maps[n - 1].end))
			return -1;
		maps[n++] = (struct dump_mapping){ start, end, PAGE_DOWN(ph.p_offset), (ph.p_flags & PF_W) != 0 };
	}
	struct dump_mapping *v = n ? malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return -1;
	memcpy(v, maps, n * sizeof(*v));
	free(m->maps);
	m->maps = v;
	m->nmaps = n;
	m->start = maps[0].start;
	m->end = maps[n - 1].end;
	m->extent_from_list = false;
	return 0;
}

void dump_attach_file(struct dump *d, struct dump_module *m, const uint8_t *data, size_t size)
{
	if (!d->p->files && !(d->p->files = calloc(d->nmodules ? d->nmodules : 1, sizeof(*d->p->files))))
		return; /* out of memory: the pages stay missing */
	d->p->files[m - d->modules] = (struct dump_file){ data, size, false };
	if (m->extent_from_list && extent_from_file(m, data, size) == 0)
		d->p->extents_changed = true;
}

void dump_files_attached(struct dump *d)
{
	size_t unknown = 0;
	const char *first = NULL;
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct dump_module *m = &d->modules[i];
		if (m->extent_from_list && m->path[0] == '/' && !unknown++)
			first = m->path;
	}
	if (unknown)
		dump_warn(d, "the dump has no maps of %zu modules (%s%s) and their files were not found: their "
			  "extents are the module list's sizes, which may cover a first segment only",
			  unknown, first, unknown > 1 ? ", ..." : "");
	if (!d->p->extents_changed)
		return;
	d->p->extents_changed = false;
	/* the file-backed segments again, over the new extents */
	size_t k = 0;
	for (size_t i = 0; i < d->p->nsegs; i++)
		if (d->p->segs[i].data)
			d->p->segs[k++] = d->p->segs[i];
	d->p->nsegs = k;
	if (dump_add_file_segments(d) != PC_OK)
		dump_warn(d, "the modules' file-backed memory could not be indexed: read-only pages the "
			  "dump left out are missing");
}

bool dump_file_used(const struct dump *d, const struct dump_module *m)
{
	return d->p->files && d->p->files[m - d->modules].used;
}

/* ------------------------------------------------------------------------
 * Build-ids
 * ------------------------------------------------------------------------ */

/* Walk a block of ELF notes looking for NT_GNU_BUILD_ID. */
static int notes_build_id(const uint8_t *p, size_t len, uint8_t *id, size_t *idlen)
{
	size_t off = 0;
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + off, sizeof(nh));
		off += sizeof(nh);
		size_t namesz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (namesz > len - off || descsz > len - off - namesz)
			return -1;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + off, "GNU", 4) == 0 && nh.n_descsz > 0 && nh.n_descsz <= 64) {
			memcpy(id, p + off + namesz, nh.n_descsz);
			*idlen = nh.n_descsz;
			return 0;
		}
		off += namesz + descsz;
	}
	return -1;
}

int dump_read_build_id(struct dump *d, uint64_t base, uint8_t *id, size_t *len)
{
	Elf64_Ehdr eh;
	if (dump_read(d, base, &eh, sizeof(eh)) != PC_OK)
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
		return -1;
	Elf64_Phdr ph[256];
	if (dump_read(d, base + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) != PC_OK)
		return -1;
	/* The load bias: where the first PT_LOAD (file offset 0) landed. */
	uint64_t bias = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			bias = base - (ph[i].p_vaddr - ph[i].p_offset);
			break;
		}
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > 8192)
			continue;
		uint8_t buf[8192];
		if (dump_read(d, bias + ph[i].p_vaddr, buf, ph[i].p_filesz) != PC_OK)
			continue;
		if (notes_build_id(buf, ph[i].p_filesz, id, len) == 0)
			return 0;
	}
	return -1;
}

int elf_file_build_id(const uint8_t *data, size_t size, uint8_t *id, size_t *len)
{
	Elf64_Ehdr eh;
	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			continue;
		if (notes_build_id(data + ph.p_offset, ph.p_filesz, id, len) == 0)
			return 0;
	}
	return -1;
}
