/* The dump's OS threads located by what the platform says of them: by
 * glibc's pthread_t (the thread pointer, struct pthread's tid), by an
 * address on their stack, and the kernel's signal frames on it. */
#include "dump_int.h"
#include "platform/libc.h"

#include <stdlib.h>

/* The C library named by the dump's modules, NULL when none is */
static const struct libc *libc_of_modules(const struct dump *d)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct libc *l = libc_by_module(d->modules[i].path);
		if (l)
			return l;
	}
	return NULL;
}

const struct libc *dump_libc(struct dump *d)
{
	if (!d->p->libc) {
		const struct libc *l = libc_of_modules(d);
		d->p->libc = l ? l : &libc_glibc;
	}
	return d->p->libc;
}

bool dump_set_libc(struct dump *d, const struct libc *l)
{
	if (!l || libc_of_modules(d))
		return false;
	d->p->libc = l;
	d->p->libc_linked_in = true;
	return true;
}

bool dump_libc_linked_in(const struct dump *d)
{
	return d->p->libc_linked_in;
}

bool dump_is_sigreturn(struct dump *d, const char *name)
{
	return platform_is_sigreturn(d->platform, name) || libc_is_sigreturn(dump_libc(d), name);
}

/* Where pthread_self() is from the thread pointer (*FROM_TP) and where
 * struct pthread keeps the tid (*TID): what the dump's libc said
 * (dump_set_pthread_layout), else the libc seam's facts; false when
 * neither knows the dump's architecture. */
static bool pthread_layout(struct dump *d, int64_t *from_tp, uint64_t *tid)
{
	if (d->p->pthread_known) {
		*from_tp = d->p->pthread_from_tp;
		*tid = d->p->pthread_tid;
		return true;
	}
	const struct libc_pthread *l = libc_pthread(dump_libc(d), d->platform->elf_machine);
	if (!l)
		return false;
	*from_tp = libc_pthread_from_tp(l);
	*tid = l->tid;
	return true;
}

bool dump_pthread_of_tp(struct dump *d, uint64_t tp, uint64_t *pthread)
{
	int64_t from_tp;
	uint64_t tid;
	if (!tp || !pthread_layout(d, &from_tp, &tid))
		return false;
	*pthread = tp + (uint64_t)from_tp;
	return true;
}

bool dump_pthread_tid_offset(struct dump *d, uint64_t *tid)
{
	int64_t from_tp;
	return pthread_layout(d, &from_tp, tid);
}

bool dump_set_pthread_layout(struct dump *d, uint64_t size, uint64_t tid)
{
	/* glibc's struct pthread is 1-3 KB on every 64-bit Linux */
	const struct libc_pthread *l = libc_pthread(dump_libc(d), d->platform->elf_machine);
	if (size < 256 || size > 65536 || tid + 4 > size || !l)
		return false;
	d->p->pthread_known = true;
	d->p->pthread_from_tp = l->below_tp ? -(int64_t)size : 0;
	d->p->pthread_tid = tid;
	return true;
}

int64_t dump_tid_of_pthread(struct dump *d, uint64_t pthread)
{
	int64_t from_tp;
	uint64_t tid_at;
	if (!pthread_layout(d, &from_tp, &tid_at))
		return -1;
	bool unknown = false;
	for (size_t i = 0; i < d->nthreads; i++) {
		uint64_t tp = d->threads[i].regs.tp;
		if (tp && tp + (uint64_t)from_tp == pthread)
			return d->threads[i].tid;
		unknown |= !tp;
	}
	/* a dump that keeps no thread pointer (lldb's minidumps write none):
	 * the tid the thread's struct pthread holds, believed only when it is
	 * one of the dump's threads whose thread pointer is not known */
	uint32_t tid;
	if (!unknown || !pthread || dump_read_u32(d, pthread + tid_at, &tid) != PC_OK)
		return -1;
	for (size_t i = 0; i < d->nthreads; i++)
		if (!d->threads[i].regs.tp && d->threads[i].tid == (int64_t)tid)
			return d->threads[i].tid;
	return -1;
}

int64_t dump_tid_of_stack_address(struct dump *d, uint64_t addr)
{
	int64_t best = -1;
	uint64_t best_len = UINT64_MAX, best_sp = 0;
	for (size_t i = 0; i < d->nthreads; i++) {
		uint64_t sp = d->threads[i].regs.sp, end;
		if (!sp || addr < sp || dump_next_held(d, sp, &end) != sp || addr >= end)
			continue;
		if (addr - sp < best_len) {
			best_len = addr - sp;
			best = d->threads[i].tid;
			best_sp = sp;
		}
	}
	/* the answer rests on the bytes from the stack pointer to ADDR
	 * being one run: a compact dump keeps them */
	if (best >= 0 && d->p->rec)
		dump_record_note(d->p->rec, best_sp, best_len + 1);
	return best;
}

int64_t dump_tid_of_stack_region(struct dump *d, uint64_t addr)
{
	int64_t tid = dump_tid_of_stack_address(d, addr);
	if (tid >= 0)
		return tid;
	uint64_t end, best_len = UINT64_MAX;
	if (dump_next_held(d, addr, &end) != addr)
		return -1;
	for (size_t i = 0; i < d->nthreads; i++) {
		uint64_t sp = d->threads[i].regs.sp;
		if (sp > addr && sp < end && sp - addr < best_len) {
			best_len = sp - addr;
			tid = d->threads[i].tid;
		}
	}
	if (tid >= 0 && d->p->rec)
		dump_record_note(d->p->rec, addr, best_len + 1);
	return tid;
}

enum pc_code dump_signal_frame(struct dump *d, uint64_t sp, struct dump_signal *sig,
			       struct platform_regs *regs)
{
	size_t n = platform_sigframe_size(d->platform);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return PC_ENOMEM;
	struct platform_signal_frame f;
	enum pc_code st = dump_read(d, sp, buf, n);
	if (st == PC_OK && !platform_parse_sigframe(d->platform, buf, n, &f))
		st = PC_ENOTCAPTURED;
	free(buf);
	if (st != PC_OK)
		return st;
	*sig = (struct dump_signal){ .number = f.signo, .code = f.code, .has_code = true };
	dump_signal_decode(sig, f.word);
	*regs = f.regs;
	return PC_OK;
}
