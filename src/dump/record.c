/* What a debugger needs beside what an analysis read (dump_record_extras):
 * each thread's stack top, the modules' headers and build-id notes, the
 * dynamic linker's list of libraries, read so that they are recorded
 * (recordset.c) for dump_save. */
#include "dump_int.h"
#include "platform/libc.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u
/* how much of each thread's stack above its stack pointer is kept, and
 * below it (x86-64's red zone is 128 bytes) */
#define STACK_KEEP   (64u << 10)
#define STACK_BELOW  256u
#define LINK_MAP_MAX 4096
#define DATA_MAX     (256u << 10)
#define VDSO_MAX     (64u << 10)

/* ------------------------------------------------------------------------
 * What a debugger needs beside what the analysis read
 * ------------------------------------------------------------------------ */

/* Read every byte [A, B) the dump holds (and so record those of its own). */
static void touch(struct dump *d, uint64_t a, uint64_t b)
{
	uint8_t buf[PAGE];
	while (a < b) {
		uint64_t end, at = dump_next_held(d, a, &end);
		if (!at || at >= b)
			return;
		uint64_t stop = end < b ? end : b;
		while (at < stop) {
			uint64_t n = PAGE - at % PAGE;
			if (n > stop - at)
				n = stop - at;
			dump_read(d, at, buf, (size_t)n);
			at += n;
		}
		a = stop;
	}
}

/* The ELF image at BASE: its header, program headers and notes (the
 * build-id, as pycore and gdb read it from memory), and its dynamic
 * section, whose address is returned (0: none) with its size in *LEN. */
static uint64_t touch_module(struct dump *d, uint64_t base, uint64_t *len)
{
	uint8_t id[64];
	size_t idlen;
	dump_read_build_id(d, base, id, &idlen);
	Elf64_Ehdr eh;
	if (dump_read(d, base, &eh, sizeof(eh)) != PC_OK || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > 256)
		return 0;
	Elf64_Phdr ph[256];
	if (dump_read(d, base + eh.e_phoff, ph, eh.e_phnum * sizeof(*ph)) != PC_OK)
		return 0;
	uint64_t bias = 0, dyn = 0;
	bool have_bias = false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_bias) {
			bias = base - (ph[i].p_vaddr - ph[i].p_offset);
			have_bias = true;
		}
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC && ph[i].p_memsz <= (1u << 20)) {
			dyn = bias + ph[i].p_vaddr;
			*len = ph[i].p_memsz;
			touch(d, dyn, dyn + *len);
		}
	}
	return dyn;
}

/* The dynamic linker's list of loaded objects (r_debug, found through
 * the executable's DT_DEBUG; glibc's <link.h>: r_map at 8 of struct
 * r_debug; l_addr, l_name, l_ld, l_next, l_prev the first five words of
 * struct link_map): how gdb finds the shared libraries of a core. */
static void touch_link_map(struct dump *d, uint64_t dyn, uint64_t len)
{
	uint64_t rdebug = 0;
	for (uint64_t off = 0; off + 16 <= len; off += 16) {
		uint64_t tag, val;
		if (dump_read_u64(d, dyn + off, &tag) != PC_OK || tag == DT_NULL)
			break;
		if (tag == DT_DEBUG && dump_read_u64(d, dyn + off + 8, &val) == PC_OK)
			rdebug = val;
	}
	uint64_t lm;
	if (!rdebug)
		return;
	touch(d, rdebug, rdebug + 40);
	if (dump_read_u64(d, rdebug + 8, &lm) != PC_OK)
		return;
	for (int n = 0; lm && n < LINK_MAP_MAX; n++) {
		uint64_t name;
		char buf[4096];
		touch(d, lm, lm + 40);
		if (dump_read_u64(d, lm + 8, &name) == PC_OK && name)
			dump_read_cstr(d, name, buf, sizeof(buf));
		if (dump_read_u64(d, lm + 24, &lm) != PC_OK)
			break;
	}
}

/* Whether M is the dynamic linker or the C library, whose data holds
 * the lists of threads (glibc's libthread_db walks them; musl's head). */
static bool thread_lists_in(struct dump *d, const struct dump_module *m)
{
	return libc_holds_thread_list(dump_libc(d), m->path);
}

void dump_record_extras(struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++) {
		const struct platform_regs *r = &d->threads[i].regs;
		uint64_t end;
		if (r->sp && dump_next_held(d, r->sp, &end) == r->sp) {
			uint64_t top = end - r->sp > STACK_KEEP ? r->sp + STACK_KEEP : end;
			touch(d, r->sp > STACK_BELOW ? r->sp - STACK_BELOW : 0, top);
		}
		/* the C library's struct pthread of the thread (libthread_db
		 * reads glibc's) */
		uint64_t pt;
		if (dump_pthread_of_tp(d, r->tp, &pt))
			touch(d, pt, pt + PAGE);
	}
	/* the initial stack: argc, argv, the environment, auxv and their
	 * strings, as the reader found argv there */
	if (d->p->argv_end > d->p->argv_start)
		touch(d, d->p->argv_start, d->p->argv_end);
	/* the vDSO, which no file holds (gdb reads its symbols from memory) */
	uint64_t end;
	uint64_t vdso = d->auxv_vdso;
	if (vdso && dump_next_held(d, vdso, &end) == vdso)
		touch(d, vdso, end - vdso > VDSO_MAX ? vdso + VDSO_MAX : end);
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct dump_module *m = &d->modules[i];
		uint64_t len = 0, dyn = m->base ? touch_module(d, m->base, &len) : 0;
		bool exe = d->auxv_entry && d->auxv_entry >= m->start && d->auxv_entry < m->end;
		if (dyn && exe)
			touch_link_map(d, dyn, len);
		for (size_t j = 0; thread_lists_in(d, m) && j < m->nmaps; j++) {
			const struct dump_mapping *mp = &m->maps[j];
			if (mp->writable)
				touch(d, mp->start, mp->end - mp->start > DATA_MAX ? mp->start + DATA_MAX : mp->end);
		}
	}
}
