/* Where the process's memory is: each mapping the dump records, as a file's
 * (NT_FILE or /proc/PID/maps names one), a thread's stack (it holds a
 * thread's stack pointer, or is the kernel's [stack]), the kernel's own
 * ([vdso], [vvar], [vsyscall]: counted with files), reserved (no access:
 * guard pages, malloc's arenas' reserved tails), or anonymous (the C heap,
 * malloc's and pymalloc's arenas, mmapped blocks); and how much of the anonymous
 * memory the objects counted fill (the interpreter's static objects lie in
 * its file's data, not there). */
#include "python/heap/heap.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the loader's page: 4 KiB (x86-64, and aarch64 as Debian builds it) */
#define PAGE ((uint64_t)4096)

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

/* The bytes of [START, END) in the anonymous memory */
static uint64_t in_anonymous(const struct census *k, uint64_t start, uint64_t end)
{
	uint64_t n = 0;
	for (size_t i = 0; i < k->nanon; i++) {
		const struct dump_vma *v = k->anon[i];
		uint64_t lo = v->start > start ? v->start : start, hi = v->end < end ? v->end : end;
		if (lo < hi)
			n += hi - lo;
	}
	return n;
}

uint64_t heap_memory_reserved(struct census *k, uint64_t start, uint64_t end)
{
	struct model_heap_memory *m = &k->h->memory;
	uint64_t moved = in_anonymous(k, start, end);
	moved = moved < m->anonymous ? moved : m->anonymous;
	m->anonymous -= moved;
	m->reserved += moved;
	return moved;
}

/* The anonymous memory of module M's zero-initialised data: each
 * PT_LOAD segment's memory past its file bytes, which the loader maps
 * anonymous from the page after them (its .bss; CPython's _PyRuntime in
 * part), by the program headers the dump holds at its base. */
static uint64_t module_bss(const struct census *k, const struct dump_module *m)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	struct dump *d = k->c->d;
	if (!m->base || dump_read(d, m->base, &eh, sizeof(eh)) != PC_OK ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 64 || eh.e_phoff > (1u << 20) ||
	    dump_read(d, m->base + eh.e_phoff, ph, eh.e_phnum * sizeof(*ph)) != PC_OK)
		return 0;
	uint64_t bias = 0, n = 0;
	bool first = true;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (first && eh.e_type == ET_DYN)
			bias = m->base - (ph[i].p_vaddr & ~(PAGE - 1));
		first = false;
		uint64_t from = (ph[i].p_vaddr + ph[i].p_filesz + PAGE - 1) & ~(PAGE - 1);
		uint64_t to = (ph[i].p_vaddr + ph[i].p_memsz + PAGE - 1) & ~(PAGE - 1);
		if (ph[i].p_memsz > ph[i].p_filesz && to > from && to - from < ((uint64_t)1 << 40))
			n += in_anonymous(k, bias + from, bias + to);
	}
	return n;
}

void heap_memory_modules(struct census *k)
{
	struct model_heap_memory *m = &k->h->memory;
	for (size_t i = 0; m->known && i < k->c->d->nmodules; i++)
		m->modules_bss += module_bss(k, &k->c->d->modules[i]);
}

void heap_memory_object(struct census *k, uint64_t obj, uint64_t size, uint64_t buffer)
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
			k->h->memory.buffers += buffer;
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
