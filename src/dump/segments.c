/* The memory reader every format fills and every layer reads: the
 * sorted segment index, bounded reads and searches, the modules' list,
 * and the readers' own error and warnings (the bottom of dump/). */
#include "dump_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/coverage.h"

/* ------------------------------------------------------------------------
 * The readers' error and warnings
 * ------------------------------------------------------------------------ */

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

void dump_note(struct dump *d, const char *fmt, ...)
{
	if (d->p->nquiet_notes >= 1000)
		return;
	char **w = realloc(d->p->quiet_notes, (d->p->nquiet_notes + 1) * sizeof(*w));
	if (!w)
		return;
	d->p->quiet_notes = w;
	va_list ap;
	va_start(ap, fmt);
	char *s = vfmt(fmt, ap);
	va_end(ap);
	if (s)
		d->p->quiet_notes[d->p->nquiet_notes++] = s;
}

const char *const *dump_notes(const struct dump *d, size_t *n)
{
	*n = d->p->nquiet_notes;
	return (const char *const *)d->p->quiet_notes;
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

/* ------------------------------------------------------------------------
 * Modules and segments
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

struct dump_module *dump_module_for_path(struct dump *d, const char *path, bool *full)
{
	*full = false;
	/* a file's mappings come one after the other (NT_FILE, maps): the
	 * last module first */
	if (d->nmodules && strcmp(d->modules[d->nmodules - 1].path, path) == 0)
		return &d->modules[d->nmodules - 1];
	for (size_t i = 0; i < d->nmodules; i++)
		if (strcmp(d->modules[i].path, path) == 0)
			return &d->modules[i];
	if (d->nmodules >= DUMP_MAX_MODULES) {
		*full = true;
		return NULL;
	}
	char *copy = strdup(path);
	struct dump_module *m = copy ? dump_add_module(d, copy) : NULL;
	if (!m)
		free(copy);
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

/* ------------------------------------------------------------------------
 * Reads
 * ------------------------------------------------------------------------ */

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
			if (p->rec)
				dump_record_note(p->rec, addr, len);
			memcpy(buf, s->data + (addr - s->start), len);
			return PC_OK;
		}
	}
	return read_spanning(d, addr, buf, len);
}

void dump_prefetch(const struct dump *d, uint64_t addr)
{
	const struct dump_priv *p = d->p;
	if (p->last_seg < p->nsegs) {
		const struct dump_segment *s = &p->segs[p->last_seg];
		if (addr - s->start < s->end - s->start && s->data)
			__builtin_prefetch(s->data + (addr - s->start));
	}
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
			if (d->p->rec)
				dump_record_note(d->p->rec, addr, n);
		} else if (s->live) {
			enum pc_code st = d->p->live_read(d, addr, out, n);
			if (st != PC_OK)
				return st;
			if (d->p->rec)
				dump_record_note(d->p->rec, addr, n);
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

/* dump_search over a live process's segment: read a window at a time
 * (the process's data is what a core would have captured; its file pages
 * are not searched, as a core's are not), windows overlapping by LEN - 1
 * bytes so that no hit falls between two. */
static uint64_t search_live(struct dump *d, const struct dump_segment *sg, const void *needle, size_t len,
			    bool (*found)(struct dump *d, uint64_t addr, void *arg), void *arg, uint64_t *budget)
{
	enum { WINDOW = 1 << 16 };
	uint8_t *buf = len && len <= WINDOW / 2 ? malloc(WINDOW) : NULL;
	if (!buf)
		return 0;
	for (uint64_t a = sg->start; a < sg->end && sg->end - a >= len;) {
		size_t n = sg->end - a < WINDOW ? (size_t)(sg->end - a) : WINDOW;
		if (*budget < n) {
			*budget = 0;
			break;
		}
		*budget -= n;
		if (d->p->live_read(d, a, buf, n) == PC_OK) {
			for (const uint8_t *p = buf, *hit; (size_t)(buf + n - p) >= len &&
			     (hit = memmem(p, (size_t)(buf + n - p), needle, len)) != NULL; p = hit + 1) {
				uint64_t at = a + (uint64_t)(hit - buf);
				if (found(d, at, arg)) {
					free(buf);
					return at;
				}
			}
		}
		if (n < WINDOW)
			break;
		a += n - (len - 1);
	}
	free(buf);
	return 0;
}

uint64_t dump_search(struct dump *d, const void *needle, size_t len,
		     bool (*keep)(struct dump *d, uint64_t start, void *arg),
		     bool (*found)(struct dump *d, uint64_t addr, void *arg), void *arg)
{
	/* a live process is stopped while it is searched: at most this much
	 * of it is read (a big process that is not Python is refused soon) */
	uint64_t budget = DUMP_LIVE_SEARCH_MAX;
	for (size_t i = 0; i < d->p->nsegs; i++) {
		struct dump_segment *sg = &d->p->segs[i];
		if (sg->live && sg->writable && (!keep || keep(d, sg->start, arg))) {
			uint64_t at = budget ? search_live(d, sg, needle, len, found, arg, &budget) : 0;
			if (at)
				return at;
			if (!budget && !d->p->live_search_cut) {
				d->p->live_search_cut = true;
				dump_note(d, "a search of the process's memory stopped after %u MiB (the process "
					  "is stopped while it is read)", DUMP_LIVE_SEARCH_MAX >> 20);
			}
			continue;
		}
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

enum pc_code dump_patch(struct dump *d, uint64_t addr, const void *bytes, size_t len, void *old)
{
	struct dump_segment *s = seg_find(d, addr);
	if (!s || !s->data || len > s->end - addr)
		return PC_ENOTCAPTURED;
	/* a few segments are patched, often: the copies are few */
	struct dump_priv *p = d->p;
	size_t k = 0;
	while (k < p->ncopies && p->copies[k] != s->data)
		k++;
	if (k == p->ncopies) {
		uint8_t **v = realloc(p->copies, (p->ncopies + 1) * sizeof(*v));
		uint8_t *copy = v ? malloc(s->end - s->start) : NULL;
		if (v)
			p->copies = v;
		if (!copy)
			return PC_ENOMEM;
		memcpy(copy, s->data, s->end - s->start);
		p->copies[p->ncopies++] = copy;
		s->data = copy;
	}
	uint8_t *at = (uint8_t *)s->data + (addr - s->start);
	memcpy(old, at, len);
	memcpy(at, bytes, len);
	return PC_OK;
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
