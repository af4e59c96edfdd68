/* The OS thread behind an address: the thread whose thread pointer
 * (glibc's struct pthread) or whose stack holds it. */
#include "dump.h"

#include <stdbool.h>
#include <stdint.h>

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
