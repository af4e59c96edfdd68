/* The process's mappings (VMAs) as the dump records them, with their
 * permissions and files: what a fault's address fell in, or next to.
 *
 * An ELF core has a PT_LOAD for every mapping the kernel's core writer
 * walked (fs/binfmt_elf.c, elf_core_dump: one program header per VMA,
 * p_flags PF_R, PF_W, PF_X from its VM_READ, VM_WRITE, VM_EXEC, p_filesz 0
 * for what it did not dump: PROT_NONE guard pages too), and NT_FILE names
 * the file-backed ones (start, end, page offset, path).  A live process's
 * and a minidump's maps lines say both at once.  The vDSO is the
 * kernel's image, no file's: it is named "[vdso]" where the auxiliary
 * vector places it, so that it is never taken for anonymous memory. */
#include "dump_int.h"

#include <stdlib.h>
#include <string.h>

static int vma_cmp(const void *a, const void *b)
{
	const struct dump_vma *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static enum pc_code push(struct dump_vma **v, size_t *n, size_t *cap, const struct dump_vma *e)
{
	if (*n >= DUMP_MAX_MAPPINGS)
		return PC_ELIMIT;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct dump_vma *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return PC_ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *e;
	return PC_OK;
}

enum pc_code dump_add_vma(struct dump *d, uint64_t start, uint64_t end, bool r, bool w, bool x)
{
	if (end <= start)
		return PC_OK;
	struct dump_vma e = { .start = start, .end = end, .readable = r, .writable = w, .executable = x };
	return push(&d->p->vmas, &d->p->nvmas, &d->p->vmas_cap, &e);
}

enum pc_code dump_add_vma_file(struct dump *d, uint64_t start, uint64_t end, uint64_t offset, const char *path)
{
	if (end <= start || !path || path[0] != '/')
		return PC_OK;
	char *copy = strdup(path);
	if (!copy)
		return PC_ENOMEM;
	struct dump_vma e = { .start = start, .end = end, .file = copy, .file_offset = offset };
	enum pc_code st = push(&d->p->vma_files, &d->p->nvma_files, &d->p->vma_files_cap, &e);
	if (st != PC_OK)
		free(copy);
	return st;
}

void dump_vmas_finish(struct dump *d)
{
	struct dump_priv *p = d->p;
	if (p->nvmas)
		qsort(p->vmas, p->nvmas, sizeof(*p->vmas), vma_cmp);
	if (p->nvma_files)
		qsort(p->vma_files, p->nvma_files, sizeof(*p->vma_files), vma_cmp);
	/* a list of mappings is one only when every file range is exactly
	 * one of them, as the kernel's and gdb's cores and maps lines have
	 * it: a compact core (dump_save) holds pieces, not mappings, and the
	 * unmapped is not known of it */
	size_t f = 0;
	p->nvmas_recorded = p->nvmas;
	for (size_t i = 0; i < p->nvma_files && p->nvmas; i++) {
		const struct dump_vma *fr = &p->vma_files[i];
		while (f < p->nvmas && p->vmas[f].start < fr->start)
			f++;
		if (f == p->nvmas || p->vmas[f].start != fr->start || p->vmas[f].end != fr->end)
			p->nvmas = 0;
	}
	/* both sorted: one pass names each mapping by the file range that
	 * holds its start (NT_FILE's entries are the file-backed VMAs) */
	f = 0;
	for (size_t i = 0; i < p->nvmas; i++) {
		struct dump_vma *v = &p->vmas[i];
		while (f < p->nvma_files && p->vma_files[f].end <= v->start)
			f++;
		if (f < p->nvma_files && p->vma_files[f].start <= v->start) {
			v->file = p->vma_files[f].file;
			v->file_offset = p->vma_files[f].file_offset + (v->start - p->vma_files[f].start);
		} else if (d->auxv_vdso && d->auxv_vdso >= v->start && d->auxv_vdso < v->end) {
			v->file = "[vdso]";
			v->file_offset = 0;
		}
	}
	p->vmas_finished = true;
}

const struct dump_vma *dump_vmas(struct dump *d, size_t *n)
{
	if (!d->p->vmas_finished)
		dump_vmas_finish(d);
	*n = d->p->nvmas;
	return d->p->nvmas ? d->p->vmas : NULL;
}

void dump_vmas_recorded(struct dump *d, const struct dump_vma **loads, size_t *nloads,
			const struct dump_vma **files, size_t *nfiles)
{
	if (!d->p->vmas_finished)
		dump_vmas_finish(d);
	*loads = d->p->vmas;
	*nloads = d->p->nvmas_recorded;
	*files = d->p->vma_files;
	*nfiles = d->p->nvma_files;
}

const struct dump_vma *dump_vma_near(struct dump *d, uint64_t addr, const struct dump_vma **below,
				     const struct dump_vma **above)
{
	size_t n;
	const struct dump_vma *v = dump_vmas(d, &n);
	size_t lo = 0, hi = n;
	/* the first mapping that ends above ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct dump_vma *at = lo < n && v[lo].start <= addr ? &v[lo] : NULL;
	if (below)
		*below = lo > 0 ? &v[lo - 1] : NULL;
	if (above)
		*above = at ? (lo + 1 < n ? &v[lo + 1] : NULL) : lo < n ? &v[lo] : NULL;
	return at;
}

void dump_vmas_free(struct dump *d)
{
	for (size_t i = 0; i < d->p->nvma_files; i++)
		free((char *)d->p->vma_files[i].file);
	free(d->p->vma_files);
	free(d->p->vmas);
	d->p->vmas = d->p->vma_files = NULL;
	d->p->nvmas = d->p->nvma_files = 0;
}
