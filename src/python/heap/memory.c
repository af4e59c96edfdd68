/* Where the process's memory is: each mapping the dump records, as a file's
 * (NT_FILE or /proc/PID/maps names one), a thread's stack (it holds a
 * thread's stack pointer, or is the kernel's [stack]), the kernel's own
 * ([vdso], [vvar], [vsyscall]: counted with files), reserved (no access:
 * guard pages, malloc's arenas' reserved tails), or anonymous (the C heap,
 * malloc's and pymalloc's arenas, mmapped blocks); and how much of the anonymous
 * memory the objects counted fill (the interpreter's static objects lie in
 * its file's data, not there). */
#include "python/heap/heap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool holds_stack(const struct dump *d, const struct dump_vma *v)
{
	if (v->file && strcmp(v->file, "[stack]") == 0)
		return true;
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].regs.sp >= v->start && d->threads[i].regs.sp < v->end)
			return true;
	return false;
}

/* V, of SIZE bytes, not a file's: a stack's, reserved or anonymous */
static void not_a_file(struct census *k, const struct dump_vma *v, uint64_t size)
{
	struct model_heap_memory *m = &k->h->memory;
	if (k->c->d->auxv_vdso >= v->start && k->c->d->auxv_vdso < v->end) {
		m->files += size;   /* the kernel's image, as [vdso] */
	} else if ((!v->readable && !v->writable && !v->executable) ||
		   dump_read(k->c->d, v->start, &(uint8_t){ 0 }, 1) != PC_OK) {
		/* no access, or no byte of it in the dump (gdb writes a guard
		 * page or an arena's reserved tail as readable, but no byte) */
		m->reserved += size;
	} else if (holds_stack(k->c->d, v)) {
		m->stacks += size;
	} else {
		m->anonymous += size;
		if (k->anon)
			k->anon[k->nanon++] = v;
	}
}

void heap_memory_init(struct census *k)
{
	struct dump *d = k->c->d;
	struct model_heap_memory *m = &k->h->memory;
	size_t n, nloads, nfiles;
	const struct dump_vma *v = dump_vmas(d, &n), *loads, *files;
	if (v && n) {
		if ((k->anon = calloc(n, sizeof(*k->anon))) == NULL)
			return;
		m->known = true;
		for (size_t i = 0; i < n; i++) {
			uint64_t size = v[i].end - v[i].start;
			if (i && v[i].start < v[i - 1].end)
				continue;   /* (a range recorded twice) */
			m->mapped += size;
			if (v[i].file && strcmp(v[i].file, "[heap]") != 0 && strcmp(v[i].file, "[stack]") != 0)
				m->files += size;
			else
				not_a_file(k, &v[i], size);
		}
		return;
	}
	/* a core whose memory ranges and file ranges do not agree (gcore's):
	 * the files' ranges, and the memory ranges outside them */
	dump_vmas_recorded(d, &loads, &nloads, &files, &nfiles);
	if (!nloads || (k->anon = calloc(nloads, sizeof(*k->anon))) == NULL)
		return;
	m->known = true;
	for (size_t i = 0; i < nfiles; i++)
		m->files += files[i].end - files[i].start;
	size_t f = 0;
	for (size_t i = 0; i < nloads; i++) {
		if (i && loads[i].start < loads[i - 1].end)
			continue;
		while (f < nfiles && files[f].end <= loads[i].start)
			f++;
		if (f < nfiles && files[f].start < loads[i].end)
			continue;   /* (a file's, counted above) */
		not_a_file(k, &loads[i], loads[i].end - loads[i].start);
	}
	m->mapped = m->files + m->stacks + m->reserved + m->anonymous;
}

void heap_memory_object(struct census *k, uint64_t obj, uint64_t size)
{
	size_t lo = 0, hi = k->nanon;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dump_vma *v = k->anon[mid];
		if (obj < v->start)
			hi = mid;
		else if (obj >= v->end)
			lo = mid + 1;
		else {
			k->h->memory.python += size;
			return;
		}
	}
}

void heap_part_unread(struct heap_part *p, const char *fmt, ...)
{
	va_list ap;
	if (p->why)
		return;
	va_start(ap, fmt);
	vsnprintf(p->buf, sizeof(p->buf), fmt, ap);
	va_end(ap);
	p->why = p->buf;
}

void heap_memory_free(struct census *k)
{
	free(k->anon);
	k->anon = NULL;
}
