/* The memory reader shared by every dump format: segment index, bounded
 * reads, module files verified by build-id. */
#include "dump_int.h"

#include <elf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
	free(d->error);
	d->error = vfmt(fmt, ap);
	va_end(ap);
}

void dump_warn(struct dump *d, const char *fmt, ...)
{
	if (d->nwarnings >= 1000)
		return;
	char **w = realloc(d->warnings, (d->nwarnings + 1) * sizeof(*w));
	if (!w)
		return;
	d->warnings = w;
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	if (s)
		d->warnings[d->nwarnings++] = s;
}

const char *dump_status_str(enum dump_status s)
{
	switch (s) {
	case DUMP_OK: return "ok";
	case DUMP_ENOTCAPTURED: return "memory not captured in the dump";
	case DUMP_EIO: return "cannot read";
	case DUMP_EFORMAT: return "not a supported dump";
	case DUMP_ECORRUPT: return "corrupt dump";
	case DUMP_ENOMEM: return "out of memory";
	}
	return "unknown error";
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

/* ------------------------------------------------------------------------
 * Opening and closing
 * ------------------------------------------------------------------------ */

enum dump_status dump_open(const char *path, struct dump **out)
{
	struct dump *d = calloc(1, sizeof(*d));
	*out = d;
	if (!d)
		return DUMP_ENOMEM;
	d->path = strdup(path);
	d->pid = -1;
	d->crashed_tid = -1;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dump_set_error(d, "cannot open: %s", strerror(errno));
		return DUMP_EIO;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		dump_set_error(d, "cannot stat: %s", strerror(errno));
		close(fd);
		return DUMP_EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		dump_set_error(d, "not a regular file");
		close(fd);
		return DUMP_EIO;
	}
	d->file_size = (uint64_t)st.st_size;
	if (st.st_size == 0) {
		dump_set_error(d, "empty file");
		close(fd);
		return DUMP_EFORMAT;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		dump_set_error(d, "cannot map: %s", strerror(errno));
		return DUMP_EIO;
	}
	d->map = m;
	d->map_len = (size_t)st.st_size;

	if (dump_is_zstd(d->map, d->map_len)) {
		enum dump_status zs = dump_zstd_inflate(d);
		if (zs != DUMP_OK)
			return zs;
	}
	if (d->map_len >= SELFMAG && memcmp(d->map, ELFMAG, SELFMAG) == 0)
		return dump_elfcore_open(d);
	if (d->map_len >= 4 && memcmp(d->map, "MDMP", 4) == 0)
		return dump_minidump_open(d);
	dump_set_error(d, d->compression ? "the zstd stream does not hold a core dump"
			   : "not a core dump (unknown file format)");
	return DUMP_EFORMAT;
}

void dump_close(struct dump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (m->file_data)
			munmap((void *)m->file_data, m->file_size);
		free(m->path);
		free(m->maps);
		free(m->file_error);
		free(m->file_path);
	}
	free(d->modules);
	free(d->threads);
	free(d->segs);
	if (d->map)
		munmap((void *)d->map, d->map_len);
	if (d->argv) {
		for (char **a = d->argv; *a; a++)
			free(*a);
		free(d->argv);
	}
	for (size_t i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->fname);
	free(d->psargs);
	free(d->executable);
	free(d->error);
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

enum dump_status dump_add_segment(struct dump *d, const struct dump_segment *s)
{
	if (s->end <= s->start)
		return DUMP_OK;
	if (d->nsegs >= DUMP_MAX_SEGMENTS)
		return DUMP_ECORRUPT;
	/* grow by doubling: nsegs is a power of two or zero when full */
	if ((d->nsegs & (d->nsegs - 1)) == 0) {
		size_t cap = d->nsegs ? d->nsegs * 2 : 16;
		struct dump_segment *n = realloc(d->segs, cap * sizeof(*n));
		if (!n)
			return DUMP_ENOMEM;
		d->segs = n;
	}
	d->segs[d->nsegs++] = *s;
	return DUMP_OK;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct dump_segment *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

enum dump_status dump_segments_finish(struct dump *d)
{
	qsort(d->segs, d->nsegs, sizeof(*d->segs), seg_cmp);
	for (size_t i = 1; i < d->nsegs; i++) {
		if (d->segs[i].start < d->segs[i - 1].end) {
			dump_set_error(d, "overlapping memory segments at 0x%llx",
				       (unsigned long long)d->segs[i].start);
			return DUMP_ECORRUPT;
		}
	}
	d->last_seg = 0;
	return DUMP_OK;
}

/* Add file-backed segments for the parts of [start, end) of module M that no
 * core segment covers.  d->segs is sorted and holds only core segments. */
static enum dump_status add_file_gaps(struct dump *d, size_t ncore, struct dump_module *m,
				      const struct dump_mapping *mp)
{
	uint64_t a = mp->start;
	size_t i = 0;
	/* first core segment that ends after a */
	size_t lo = 0, hi = ncore;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->segs[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	while (a < mp->end) {
		uint64_t b = mp->end;
		if (i < ncore && d->segs[i].start < b)
			b = d->segs[i].start > a ? d->segs[i].start : a;
		if (b > a && !mp->writable) {
			struct dump_segment s = { a, b, NULL, m, mp->file_offset + (a - mp->start) };
			enum dump_status st = dump_add_segment(d, &s);
			if (st != DUMP_OK)
				return st;
		}
		if (i < ncore && d->segs[i].start < mp->end) {
			a = d->segs[i].end > b ? d->segs[i].end : b;
			i++;
		} else {
			a = mp->end;
		}
	}
	return DUMP_OK;
}

enum dump_status dump_add_file_segments(struct dump *d)
{
	size_t ncore = d->nsegs;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		for (size_t j = 0; j < m->nmaps; j++) {
			enum dump_status st = add_file_gaps(d, ncore, m, &m->maps[j]);
			if (st != DUMP_OK)
				return st;
		}
	}
	return dump_segments_finish(d);
}

/* The index of the first segment ending after ADDR (nsegs when none):
 * segments are sorted and do not overlap. */
static size_t seg_after(const struct dump *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct dump_segment *seg_find(struct dump *d, uint64_t addr)
{
	if (d->nsegs == 0)
		return NULL;
	struct dump_segment *s = &d->segs[d->last_seg];
	if (addr >= s->start && addr < s->end)
		return s;
	size_t lo = seg_after(d, addr);
	if (lo < d->nsegs && d->segs[lo].start <= addr) {
		d->last_seg = lo;
		return &d->segs[lo];
	}
	return NULL;
}

uint64_t dump_next_held(struct dump *d, uint64_t addr, uint64_t *end)
{
	size_t i = seg_after(d, addr);
	if (i >= d->nsegs)
		return 0;
	*end = d->segs[i].end;
	return d->segs[i].start > addr ? d->segs[i].start : addr;
}

enum dump_status dump_read(struct dump *d, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len > 0) {
		struct dump_segment *s = seg_find(d, addr);
		if (!s)
			return DUMP_ENOTCAPTURED;
		uint64_t avail = s->end - addr;
		size_t n = len < avail ? len : (size_t)avail;
		if (s->data) {
			memcpy(out, s->data + (addr - s->start), n);
		} else {
			if (dump_module_file(d, s->mod) != 0)
				return DUMP_ENOTCAPTURED;
			uint64_t off = s->file_offset + (addr - s->start);
			if (off > s->mod->file_size || n > s->mod->file_size - off)
				return DUMP_ENOTCAPTURED;
			memcpy(out, s->mod->file_data + off, n);
		}
		out += n;
		addr += n;
		len -= n;
	}
	return DUMP_OK;
}

enum dump_status dump_read_u64(struct dump *d, uint64_t addr, uint64_t *v)
{
	return dump_read(d, addr, v, sizeof(*v));
}

enum dump_status dump_read_u32(struct dump *d, uint64_t addr, uint32_t *v)
{
	return dump_read(d, addr, v, sizeof(*v));
}

enum dump_status dump_read_cstr(struct dump *d, uint64_t addr, char *buf, size_t max)
{
	if (max == 0)
		return DUMP_ECORRUPT;
	for (size_t i = 0; i + 1 < max; i++) {
		enum dump_status st = dump_read(d, addr + i, &buf[i], 1);
		if (st != DUMP_OK) {
			buf[i] = '\0';
			return st;
		}
		if (buf[i] == '\0')
			return DUMP_OK;
	}
	buf[max - 1] = '\0';
	return DUMP_ECORRUPT;
}

uint64_t dump_search(struct dump *d, const void *needle, size_t len,
		     bool (*keep)(struct dump *d, uint64_t start, void *arg),
		     bool (*found)(struct dump *d, uint64_t addr, void *arg), void *arg)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		struct dump_segment *sg = &d->segs[i];
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
	if (dump_read(d, base, &eh, sizeof(eh)) != DUMP_OK)
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
		return -1;
	Elf64_Phdr ph[256];
	if (dump_read(d, base + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) != DUMP_OK)
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
		if (dump_read(d, bias + ph[i].p_vaddr, buf, ph[i].p_filesz) != DUMP_OK)
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

/* Map PATH and compare its build-id with M's.  Returns 1 if it matches, 0
 * if it is an ELF with another (or no) build-id (its id in GOT), -1 if it
 * cannot be had; the mapping is kept in *data only on a match or when
 * KEEP_MISMATCH. */
static int try_file(const char *path, const struct dump_module *m, bool keep_mismatch,
		    const uint8_t **data, size_t *size, char got[129])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	uint8_t id[64];
	size_t idlen = 0;
	if (memcmp(p, ELFMAG, SELFMAG) != 0) {
		munmap(p, (size_t)st.st_size);
		return -1;
	}
	strcpy(got, "none");
	bool match = elf_file_build_id(p, (size_t)st.st_size, id, &idlen) == 0 &&
		     (m->build_id_prefix ? idlen >= m->build_id_len : idlen == m->build_id_len) &&
		     memcmp(id, m->build_id, m->build_id_len) == 0;
	if (idlen)
		dump_hex(id, idlen, got);
	if (match || keep_mismatch) {
		*data = p;
		*size = (size_t)st.st_size;
	} else {
		munmap(p, (size_t)st.st_size);
	}
	return match ? 1 : 0;
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b[0] == '/' ? b + 1 : b) < 0)
		return NULL;
	return s;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Every candidate path for M, in order; calls TRY until it says stop. */
struct search {
	struct dump *d;
	struct dump_module *m;
	char *mismatch;          /* first refused file and its id, for the message */
	char *fallback_path;     /* with allow_mismatch: the first ELF found */
};

static bool take(struct search *s, const char *path)
{
	char got[129];
	const uint8_t *data = NULL;
	size_t size = 0;
	bool keep = s->d->files.allow_mismatch && !s->fallback_path;
	int r = try_file(path, s->m, keep, &data, &size, got);
	if (r == 1) {
		s->m->file_data = data;
		s->m->file_size = size;
		s->m->file_path = strdup(path);
		return true;
	}
	if (r == 0) {
		if (!s->mismatch) {
			char want[129];
			dump_hex(s->m->build_id, s->m->build_id_len, want);
			if (asprintf(&s->mismatch, "%s has build-id %s, the dump's is %s", path, got, want) < 0)
				s->mismatch = NULL;
		}
		if (data) {
			/* remembered for --allow-mismatch, used only if nothing matches */
			s->fallback_path = strdup(path);
			munmap((void *)data, size);
		}
	}
	return false;
}

static bool search_dir(struct search *s, const char *dir)
{
	/* the module's own name first, then every other file (renamed copies) */
	char *p = join(dir, base_of(s->m->path));
	bool ok = p && take(s, p);
	free(p);
	if (ok)
		return true;
	DIR *dh = opendir(dir);
	if (!dh)
		return false;
	struct dirent *e;
	int n = 0;
	while (!ok && (e = readdir(dh)) != NULL && n++ < 100000) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, base_of(s->m->path)) == 0)
			continue;
		p = join(dir, e->d_name);
		ok = p && take(s, p);
		free(p);
	}
	closedir(dh);
	return ok;
}

int dump_module_file(struct dump *d, struct dump_module *m)
{
	if (m->file_state)
		return m->file_state > 0 ? 0 : -1;
	m->file_state = -1;
	if (m->build_id_len == 0 && !d->files.allow_mismatch) {
		if (asprintf(&m->file_error, "%s: the dump does not record its build-id, so no file on disk "
			     "can be verified (--allow-mismatch uses it anyway)", m->path) < 0)
			m->file_error = NULL;
		return -1;
	}
	struct search s = { d, m, NULL, NULL };
	const struct dump_files *f = &d->files;
	bool main_program = d->executable && strcmp(m->path, d->executable) == 0;
	const char *recorded = main_program && f->executable ? f->executable : m->path;
	bool ok = take(&s, recorded);
	if (!ok && f->sysroot) {
		char *p = join(f->sysroot, m->path);
		ok = p && take(&s, p);
		free(p);
	}
	for (char **dir = f->search; !ok && dir && *dir; dir++)
		ok = search_dir(&s, *dir);
	if (!ok && f->by_build_id && m->build_id_len) {
		char *p = f->by_build_id(m->build_id, m->build_id_len, f->arg);
		ok = p && take(&s, p);
		free(p);
	}
	if (!ok && s.fallback_path) {
		const uint8_t *data;
		size_t size;
		char got[129];
		if (try_file(s.fallback_path, m, true, &data, &size, got) >= 0) {
			m->file_data = data;
			m->file_size = size;
			m->file_path = s.fallback_path;
			m->file_mismatch = true;
			s.fallback_path = NULL;
			dump_warn(d, "--allow-mismatch: using %s", s.mismatch ? s.mismatch : m->path);
			ok = true;
		}
	}
	if (ok) {
		m->file_state = 1;
	} else if (s.mismatch) {
		m->file_error = s.mismatch;
		s.mismatch = NULL;
	} else if (asprintf(&m->file_error, "%s: not found%s", m->path,
			    f->sysroot || f->search ? " (nor under the sysroot or search path)" : "") < 0) {
		m->file_error = NULL;
	}
	free(s.mismatch);
	free(s.fallback_path);
	return ok ? 0 : -1;
}
