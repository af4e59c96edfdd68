/* Module files: the read-only pages a dump left out of a module's
 * mappings, served from the module's file once the caller attaches it. */
#include "dump_int.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
			struct dump_segment s = { a, b, NULL, m, mp->file_offset + (a - mp->start), 0, false, false };
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

enum pc_code dump_redo_file_segments(struct dump *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->p->nsegs; i++)
		if (d->p->segs[i].data)
			d->p->segs[k++] = d->p->segs[i];
	d->p->nsegs = k;
	return dump_add_file_segments(d);
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

void dump_unmap(const void *data, size_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)data, base = a / page * page;
	if (data)
		munmap((void *)base, size + (size_t)(a - base));
}

void dump_attach_file(struct dump *d, struct dump_module *m, const uint8_t *data, size_t size)
{
	if (!d->p->files && !(d->p->files = calloc(d->nmodules ? d->nmodules : 1, sizeof(*d->p->files)))) {
		dump_unmap(data, size);
		return; /* out of memory: the pages stay missing */
	}
	struct dump_file *f = &d->p->files[m - d->modules];
	if (f->data)
		dump_unmap(f->data, f->size);
	*f = (struct dump_file){ data, size, false };
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
	if (dump_redo_file_segments(d) != PC_OK)
		dump_warn(d, "the modules' file-backed memory could not be indexed: read-only pages the "
			  "dump left out are missing");
}

bool dump_file_used(const struct dump *d, const struct dump_module *m)
{
	return d->p->files && d->p->files[m - d->modules].used;
}

void dump_files_free(struct dump *d)
{
	for (size_t i = 0; d->p->files && i < d->nmodules; i++)
		if (d->p->files[i].data)
			dump_unmap(d->p->files[i].data, d->p->files[i].size);
	free(d->p->files);
	d->p->files = NULL;
}
