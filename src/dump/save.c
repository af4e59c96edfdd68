/* A compact dump (dump_save): an ELF core of the pages the analysis read
 * (dump_record_start) and what a debugger needs beside them
 * (dump_record_extras), with the dump's notes: an ELF core's own, copied
 * as they are; for another format, notes written from what it said.
 *
 * Layouts written: the ELF core's as the kernel writes it
 * (fs/binfmt_elf.c: header, program headers with the notes first, the
 * memory page-aligned; more than 65534 program headers escape to section
 * header 0's sh_info, PN_XNUM); the notes' layouts elfcore.c reads
 * (NT_PRSTATUS, NT_PRFPREG: its vector registers' low 64 bits alone,
 * NT_PRPSINFO, NT_FILE), siginfo_t's first 24 bytes, and auxv's (type,
 * value) pairs ending in AT_NULL (a live process's whole, as
 * /proc/PID/auxv gives it).
 */
#include "dump_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define PAGE 4096u

/* One PT_LOAD of the compact core: bytes of the dump's own, at START. */
struct piece {
	uint64_t start, end;
	const uint8_t *data;
	uint32_t flags;
};

struct bytes {
	uint8_t *p;
	size_t n, cap;
	bool failed;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q) {
			b->failed = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put64(struct bytes *b, uint64_t v)
{
	put(b, &v, 8);
}

/* ------------------------------------------------------------------------
 * The memory: recorded pages, clipped to the dump's own bytes
 * ------------------------------------------------------------------------ */

/* Flags of a piece whose segment says none (a minidump's): a module's
 * read-only mapping stays read-only, so that the file fills what the
 * compact core leaves out of it, as it did for the original. */
static uint32_t guess_flags(struct dump *d, uint64_t addr)
{
	struct dump_module *m = dump_module_at(d, addr);
	if (m) {
		for (size_t j = 0; j < m->nmaps; j++)
			if (addr >= m->maps[j].start && addr < m->maps[j].end && !m->maps[j].writable)
				return PF_R | PF_X;
	}
	return PF_R | PF_W;
}

static enum pc_code add_piece(struct piece **v, size_t *n, size_t *cap, struct piece pc)
{
	if (*n && (*v)[*n - 1].end == pc.start && (*v)[*n - 1].flags == pc.flags &&
	    (*v)[*n - 1].data + ((*v)[*n - 1].end - (*v)[*n - 1].start) == pc.data) {
		(*v)[*n - 1].end = pc.end;
		return PC_OK;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct piece *q = realloc(*v, c * sizeof(*q));
		if (!q)
			return PC_ENOMEM;
		*v = q;
		*cap = c;
	}
	(*v)[(*n)++] = pc;
	return PC_OK;
}

/* The held runs (a live process's, dump_record_snapshot) within [X, Y)
 * of segment S, as pieces. */
static enum pc_code add_held(struct dump *d, const struct dump_segment *s, uint64_t x, uint64_t y,
			     struct piece **v, size_t *n, size_t *cap)
{
	const struct dump_priv *p = d->p;
	size_t lo = 0, hi = p->nheld;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->held[mid].end <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->nheld && p->held[lo].start < y; lo++) {
		const struct dump_held *h = &p->held[lo];
		uint64_t a = x > h->start ? x : h->start, b = y < h->end ? y : h->end;
		if (a >= b)
			continue;
		struct piece pc = { a, b, h->data + (a - h->start), s->flags ? s->flags : PF_R | PF_W };
		enum pc_code st = add_piece(v, n, cap, pc);
		if (st != PC_OK)
			return st;
	}
	return PC_OK;
}

/* Each run of recorded blocks, clipped to each segment it meets: CALL
 * (with ARG) on the segment and the clipped range, until one fails. */
static enum pc_code each_recorded(struct dump *d, const uint64_t *pages, size_t npages,
				  enum pc_code (*call)(struct dump *d, const struct dump_segment *s, uint64_t x,
						       uint64_t y, void *arg), void *arg)
{
	const struct dump_priv *p = d->p;
	enum pc_code st = PC_OK;
	for (size_t i = 0; i < npages && st == PC_OK;) {
		size_t j = i + 1;
		while (j < npages && pages[j] == pages[j - 1] + 1)
			j++;
		uint64_t a = pages[i] * DUMP_RECORD_GRAIN, b = (pages[j - 1] + 1) * DUMP_RECORD_GRAIN;
		i = j;
		/* the first segment ending after a */
		size_t lo = 0, hi = p->nsegs;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (p->segs[mid].end <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < p->nsegs && p->segs[lo].start < b && st == PC_OK; lo++) {
			const struct dump_segment *s = &p->segs[lo];
			uint64_t x = a > s->start ? a : s->start, y = b < s->end ? b : s->end;
			st = call(d, s, x, y, arg);
		}
	}
	return st;
}

struct pieces {
	struct piece *v;
	size_t n, cap;
};

static enum pc_code collect_one(struct dump *d, const struct dump_segment *s, uint64_t x, uint64_t y, void *arg)
{
	struct pieces *ps = arg;
	if (s->live)
		return add_held(d, s, x, y, &ps->v, &ps->n, &ps->cap);
	if (!s->data)
		return PC_OK;
	struct piece pc = { x, y, s->data + (x - s->start), s->flags ? s->flags : guess_flags(d, x) };
	return add_piece(&ps->v, &ps->n, &ps->cap, pc);
}

static enum pc_code collect(struct dump *d, struct piece **out, size_t *nout)
{
	size_t npages;
	uint64_t *pages = dump_record_pages(d->p->rec, &npages);
	if (!pages)
		return PC_ENOMEM;
	struct pieces ps = { 0 };
	enum pc_code st = each_recorded(d, pages, npages, collect_one, &ps);
	free(pages);
	*out = ps.v;
	*nout = ps.n;
	return st;
}

/* ------------------------------------------------------------------------
 * A live process: its recorded memory copied while it is stopped
 * ------------------------------------------------------------------------ */

struct hold {
	struct dump_held *v;
	size_t n, cap;
	uint64_t bytes;
};

/* A live segment's recorded range [X, Y): a run to copy (data not yet set). */
static enum pc_code hold_one(struct dump *d, const struct dump_segment *s, uint64_t x, uint64_t y, void *arg)
{
	(void)d;
	struct hold *h = arg;
	if (!s->live || x >= y)
		return PC_OK;
	if (h->n && h->v[h->n - 1].end == x) {
		h->v[h->n - 1].end = y;
	} else {
		if (h->n == h->cap) {
			size_t c = h->cap ? h->cap * 2 : 64;
			struct dump_held *q = realloc(h->v, c * sizeof(*q));
			if (!q)
				return PC_ENOMEM;
			h->v = q;
			h->cap = c;
		}
		h->v[h->n++] = (struct dump_held){ x, y, NULL };
	}
	h->bytes += y - x;
	return PC_OK;
}

enum pc_code dump_record_snapshot(struct dump *d)
{
	struct dump_priv *p = d->p;
	if (!p->rec || !p->live || p->held_taken)
		return PC_OK;
	p->held_taken = true;
	dump_record_extras(d);
	if (p->rec->failed)
		return PC_ENOMEM;
	size_t npages;
	uint64_t *pages = dump_record_pages(p->rec, &npages);
	if (!pages)
		return PC_ENOMEM;
	struct hold h = { 0 };
	enum pc_code st = each_recorded(d, pages, npages, hold_one, &h);
	free(pages);
	uint8_t *buf = st == PC_OK && h.bytes ? malloc(h.bytes) : NULL;
	if (st != PC_OK || (h.bytes && !buf)) {
		free(h.v);
		return PC_ENOMEM;
	}
	/* copied now (the reads go to the process, which is still stopped); a
	 * run it no longer has is left out */
	size_t kept = 0;
	uint8_t *at = buf;
	for (size_t i = 0; i < h.n; i++) {
		uint64_t len = h.v[i].end - h.v[i].start;
		if (dump_read(d, h.v[i].start, at, (size_t)len) != PC_OK)
			continue;
		h.v[kept] = h.v[i];
		h.v[kept++].data = at;
		at += len;
	}
	p->held = h.v;
	p->nheld = kept;
	p->held_buf = buf;
	return PC_OK;
}

/* ------------------------------------------------------------------------
 * The notes: the core's own, else written from what the dump says
 * ------------------------------------------------------------------------ */

static void put_note(struct bytes *b, uint32_t type, const void *desc, size_t len)
{
	static const uint8_t zero[4];
	Elf64_Nhdr nh = { 5, (Elf64_Word)len, type };
	put(b, &nh, sizeof(nh));
	put(b, "CORE\0\0\0", 8);
	put(b, desc, len);
	put(b, zero, (4 - len % 4) % 4);
}

static void put_prstatus(struct dump *d, struct bytes *b, const struct dump_thread *t)
{
	uint8_t desc[1024] = { 0 };
	int16_t cursig = (int16_t)t->signal;
	int32_t pid = (int32_t)t->tid;
	memcpy(desc + 12, &cursig, 2);
	memcpy(desc + 32, &pid, 4);
	d->platform->write_prstatus(&t->regs, desc);
	put_note(b, NT_PRSTATUS, desc, d->platform->prstatus_size);
	if (t->regs.vec_known && d->platform->write_fpregs && d->platform->fpregs_size <= sizeof(desc)) {
		memset(desc, 0, sizeof(desc));
		d->platform->write_fpregs(&t->regs, desc);
		put_note(b, NT_PRFPREG, desc, d->platform->fpregs_size);
	}
}

static enum pc_code write_notes(struct dump *d, struct bytes *b)
{
	if (d->p->nnotes) {
		for (size_t i = 0; i < d->p->nnotes; i++)
			put(b, d->p->notes[i].data, d->p->notes[i].len);
		return b->failed ? PC_ENOMEM : PC_OK;
	}
	if (!d->platform || !d->platform->write_prstatus || d->platform->prstatus_size > 1024) {
		dump_set_error(d, "cannot write the thread notes of a%s %s dump", d->platform ? "n" : "",
			       d->platform ? d->platform->name : "unknown machine's");
		return PC_EUNSUPPORTED;
	}
	/* the thread that received the signal first, as the kernel writes it */
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].tid == d->crashed_tid)
			put_prstatus(d, b, &d->threads[i]);
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].tid != d->crashed_tid)
			put_prstatus(d, b, &d->threads[i]);
	uint8_t ps[136] = { 0 };
	ps[1] = (uint8_t)d->state;
	int32_t v32[4] = { (int32_t)d->uid, (int32_t)d->gid, (int32_t)d->pid, (int32_t)d->ppid };
	memcpy(ps + 16, v32, sizeof(v32));
	if (d->fname)
		memcpy(ps + 40, d->fname, strnlen(d->fname, 16));
	if (d->psargs)
		memcpy(ps + 56, d->psargs, strnlen(d->psargs, 80));
	put_note(b, NT_PRPSINFO, ps, sizeof(ps));
	if (d->has_signal) {
		uint8_t si[128] = { 0 };
		int32_t h[3] = { d->signal.number, 0, d->signal.code };
		memcpy(si, h, sizeof(h));
		uint64_t word = d->signal.has_address ? d->signal.address
				: d->signal.has_sender ? ((uint64_t)(uint32_t)d->signal.sender_uid << 32 |
							  (uint32_t)d->signal.sender_pid) : 0;
		memcpy(si + 16, &word, 8);
		put_note(b, NT_SIGINFO, si, sizeof(si));
	}
	uint64_t auxv[4] = { AT_ENTRY, d->auxv_entry, AT_NULL, 0 };
	if (d->p->auxv_len)
		put_note(b, NT_AUXV, d->p->auxv, d->p->auxv_len);
	else if (d->auxv_entry)
		put_note(b, NT_AUXV, auxv, sizeof(auxv));
	struct bytes f = { 0 };
	uint64_t count = 0;
	for (size_t i = 0; i < d->nmodules; i++)
		count += d->modules[i].nmaps;
	put64(&f, count);
	put64(&f, PAGE);
	for (size_t i = 0; i < d->nmodules; i++)
		for (size_t j = 0; j < d->modules[i].nmaps; j++) {
			const struct dump_mapping *m = &d->modules[i].maps[j];
			put64(&f, m->start);
			put64(&f, m->end);
			put64(&f, m->file_offset / PAGE);
		}
	for (size_t i = 0; i < d->nmodules; i++)
		for (size_t j = 0; j < d->modules[i].nmaps; j++)
			put(&f, d->modules[i].path, strlen(d->modules[i].path) + 1);
	if (count)
		put_note(b, NT_FILE, f.p, f.n);
	bool failed = f.failed;
	free(f.p);
	return b->failed || failed ? PC_ENOMEM : PC_OK;
}

/* ------------------------------------------------------------------------
 * The file: plain, or one zstd frame
 * ------------------------------------------------------------------------ */

struct out {
	int fd;
	ZSTD_CCtx *z;
	uint8_t *buf;
	size_t cap;
	uint64_t off;                /* bytes of the core written */
	bool failed;
	int err;
};

static void write_all(struct out *o, const uint8_t *p, size_t n)
{
	while (n > 0 && !o->failed) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = true;
			o->err = w < 0 ? errno : ENOSPC;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void emit_mode(struct out *o, const void *p, size_t n, ZSTD_EndDirective mode)
{
	if (o->failed)
		return;
	o->off += n;
	if (!o->z) {
		write_all(o, p, n);
		return;
	}
	ZSTD_inBuffer in = { p, n, 0 };
	for (;;) {
		ZSTD_outBuffer ob = { o->buf, o->cap, 0 };
		size_t left = ZSTD_compressStream2(o->z, &ob, &in, mode);
		if (ZSTD_isError(left)) {
			o->failed = true;
			o->err = ENOMEM;
			return;
		}
		write_all(o, o->buf, ob.pos);
		if (o->failed)
			return;
		if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return;
	}
}

static void emit(struct out *o, const void *p, size_t n)
{
	emit_mode(o, p, n, ZSTD_e_continue);
}

static void pad_to(struct out *o, uint64_t off)
{
	static const uint8_t zero[PAGE];
	while (o->off < off) {
		uint64_t n = off - o->off < PAGE ? off - o->off : PAGE;
		emit(o, zero, (size_t)n);
	}
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

static void write_core(struct dump *d, struct out *o, const struct piece *v, size_t n, const struct bytes *notes)
{
	uint64_t phnum = n + 1;
	bool xnum = phnum >= PN_XNUM;
	uint64_t phoff = sizeof(Elf64_Ehdr), noff = phoff + phnum * sizeof(Elf64_Phdr);
	uint64_t shoff = xnum ? (noff + notes->n + 7) / 8 * 8 : 0;
	uint64_t off = ((xnum ? shoff + sizeof(Elf64_Shdr) : noff + notes->n) + PAGE - 1) / PAGE * PAGE;
	Elf64_Ehdr eh = { .e_type = ET_CORE, .e_machine = d->platform->elf_machine, .e_version = EV_CURRENT,
			  .e_phoff = phoff, .e_shoff = shoff, .e_ehsize = sizeof(eh),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = xnum ? PN_XNUM : (Elf64_Half)phnum,
			  .e_shentsize = xnum ? sizeof(Elf64_Shdr) : 0, .e_shnum = xnum ? 1 : 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	emit(o, &eh, sizeof(eh));
	Elf64_Phdr nph = { .p_type = PT_NOTE, .p_offset = noff, .p_filesz = notes->n };
	emit(o, &nph, sizeof(nph));
	uint64_t at = off;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = v[i].end - v[i].start;
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = v[i].flags, .p_offset = at,
				  .p_vaddr = v[i].start, .p_filesz = len, .p_memsz = len, .p_align = 1 };
		emit(o, &ph, sizeof(ph));
		at += len;
	}
	emit(o, notes->p, notes->n);
	if (xnum) {
		pad_to(o, shoff);
		Elf64_Shdr sh = { .sh_info = (Elf64_Word)phnum };
		emit(o, &sh, sizeof(sh));
	}
	pad_to(o, off);
	for (size_t i = 0; i < n; i++)
		emit(o, v[i].data, v[i].end - v[i].start);
	if (o->z)
		emit_mode(o, NULL, 0, ZSTD_e_end);
}

/* The compact core written to FD (PATH in messages): NULL, or the error. */
static struct pc_error *save_to(struct dump *d, int fd, const char *path, bool zstd, struct dump_saved *saved)
{
	if (!d->p->rec)
		return pc_error_new(PC_EIO, path, "nothing was recorded to save (dump_record_start)");
	if (!d->platform || d->platform->elf_class != ELFCLASS64 || d->platform->elf_data != ELFDATA2LSB)
		return pc_error_new(PC_EUNSUPPORTED, path, "cannot save a compact dump of this machine's process");
	/* a live process's memory: as it was while stopped (the analysis
	 * took it then; here, only if it did not) */
	if (!d->p->live)
		dump_record_extras(d);
	else if (dump_record_snapshot(d) != PC_OK)
		return pc_error_new(PC_ENOMEM, path, "out of memory while copying what was read");
	if (d->p->rec->failed)
		return pc_error_new(PC_ENOMEM, path, "out of memory while recording what was read");
	struct piece *v = NULL;
	size_t n = 0;
	struct bytes notes = { 0 };
	enum pc_code st = collect(d, &v, &n);
	if (st == PC_OK)
		st = write_notes(d, &notes);
	struct pc_error *e = NULL;
	struct out o = { .fd = fd };
	if (st != PC_OK) {
		e = pc_error_new(st, path, "%s", st == PC_ENOMEM ? "out of memory"
				 : d->p->error ? d->p->error : pc_code_str(st));
		goto out;
	}
	if (zstd) {
		o.z = ZSTD_createCCtx();
		o.cap = ZSTD_CStreamOutSize();
		o.buf = malloc(o.cap);
		if (!o.z || !o.buf) {
			o.failed = true;
			o.err = ENOMEM;
		} else {
			ZSTD_CCtx_setParameter(o.z, ZSTD_c_compressionLevel, 3);
			ZSTD_CCtx_setParameter(o.z, ZSTD_c_checksumFlag, 1);
		}
	}
	write_core(d, &o, v, n, &notes);
	if (!o.failed && fsync(o.fd) != 0 && errno != EINVAL) {
		o.failed = true;
		o.err = errno;
	}
	if (o.failed) {
		e = pc_error_new(o.err == ENOMEM ? PC_ENOMEM : PC_EIO, path, "cannot write: %s", strerror(o.err));
	} else if (saved) {
		saved->memory = 0;
		for (size_t i = 0; i < n; i++)
			saved->memory += v[i].end - v[i].start;
		saved->nloads = n;
		saved->core_size = o.off;
	}
out:
	ZSTD_freeCCtx(o.z);
	free(o.buf);
	free(v);
	free(notes.p);
	return e;
}

struct pc_error *dump_save_fd(struct dump *d, int fd, const char *name, bool zstd, struct dump_saved *saved)
{
	return save_to(d, fd, name, zstd, saved);
}

struct pc_error *dump_save(struct dump *d, const char *path, struct dump_saved *saved)
{
	/* a temporary file beside PATH, renamed over it once whole */
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	int fd = -1;
	if (tmp) {
		snprintf(tmp, plen + 16, "%s.XXXXXX", path);
		fd = mkstemp(tmp);
	}
	if (fd < 0) {
		struct pc_error *e = pc_error_new(tmp ? PC_EIO : PC_ENOMEM, path, "cannot create: %s",
						  strerror(tmp ? errno : ENOMEM));
		free(tmp);
		return e;
	}
	struct pc_error *e = save_to(d, fd, path, ends_with(path, ".zst"), saved);
	if (close(fd) != 0 && !e)
		e = pc_error_new(PC_EIO, path, "cannot write: %s", strerror(errno));
	if (!e && rename(tmp, path) != 0)
		e = pc_error_new(PC_EIO, path, "cannot write: %s", strerror(errno));
	if (e)
		unlink(tmp);
	free(tmp);
	return e;
}
