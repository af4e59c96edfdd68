/* The vDSO's ELF image, as the dump holds it in the process's memory.
 * Contract: no file on disk has it (the kernel maps it; a core holds its
 * pages), so libdwfl gets a copy read from the dump: its symbols name a
 * thread's frames there (aarch64's signal trampoline, __kernel_rt_sigreturn,
 * lives in it) and its CFI unwinds through them. */
#ifndef PYCORE_SYMBOLS_VDSO_H
#define PYCORE_SYMBOLS_VDSO_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"

/* The ELF image whose header is at BASE in D's memory: a malloc'd copy of
 * its *SIZE bytes (through its section headers), and *SPAN, the bytes
 * of the process's address space its loadable segments cover from BASE.
 * NULL when the dump does not hold it whole, or it is no 64-bit ELF of
 * D's machine, or more than a megabyte. */
uint8_t *vdso_image(struct dump *d, uint64_t base, size_t *size, uint64_t *span);

#endif
