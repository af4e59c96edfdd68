/* The libc seam, beside the platform seam: every fact pycore reads of the
 * C library a process ran on (glibc, musl), behind one interface.
 *
 * Contract: a libc is a constant table of facts (no dump, no memory reads,
 * no allocation), chosen for a dump by its modules -- the dynamic linker
 * the process ran with (ld-musl-ARCH.so.1 is musl's, every other one
 * glibc's) -- or, for a static executable that names none, by what the
 * executable's bytes prove (libc_by_bytes); glibc when nothing says.
 * What it holds:
 * - struct pthread as the thread pointer finds it: pthread_self() (and so
 *   CPython's thread ident) less the thread pointer, the offset of the
 *   thread's tid in it, for each architecture;
 * - the modules whose writable data holds its list of threads (a compact
 *   dump keeps them for a debugger);
 * - the names of its signal return trampolines (the platform's table
 *   keeps the ones the kernel provides and the code bytes that name a
 *   trampoline where no symbol does: glibc's and musl's x86-64
 *   __restore_rt are the same two instructions).
 * Adding a C library: one table in libc.c, named in its list.
 */
#ifndef PYCORE_PLATFORM_LIBC_H
#define PYCORE_PLATFORM_LIBC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* struct pthread on one architecture */
struct libc_pthread {
	uint16_t elf_machine;        /* EM_X86_64, EM_AARCH64; 0 ends a list */
	/* struct pthread ends at the thread pointer (pthread_self() is the
	 * thread pointer less its size, which may change between releases:
	 * glibc's TLS_DTV_AT_TP, musl's TLS_ABOVE_TP); false: the thread
	 * pointer is the struct pthread */
	bool below_tp;
	uint64_t size;               /* sizeof(struct pthread) */
	uint64_t tid;                /* offset of its tid (an int) */
};

struct libc {
	const char *name;            /* "glibc", "musl" */
	const struct libc_pthread *pthreads;
	/* prefixes of the base names of its dynamic linker (or of the C
	 * library, the module that proves it), the directories (substrings
	 * of a path) where a file named libc.so* is it, and the prefixes of
	 * the modules whose data holds its list of threads; NULL-terminated */
	const char *const *loaders;
	const char *const *dirs;
	const char *const *thread_lists;
	/* its signal return trampolines' symbol names; NULL-terminated */
	const char *const *trampolines;
};

extern const struct libc libc_glibc;
extern const struct libc libc_musl;

/* The C library that PATH (a module's path) is, or whose dynamic linker
 * it is; NULL when PATH is neither. */
const struct libc *libc_by_module(const char *path);
/* The C library the N bytes at DATA (a static executable's file or
 * read-only data) prove to be linked in; NULL when they prove none. */
const struct libc *libc_by_bytes(const uint8_t *data, size_t n);
/* L's struct pthread on the architecture MACHINE (an ELF e_machine);
 * NULL when L has no facts for it. */
const struct libc_pthread *libc_pthread(const struct libc *l, uint16_t machine);
/* pthread_self() less the thread pointer, for LAYOUT. */
int64_t libc_pthread_from_tp(const struct libc_pthread *layout);
/* Whether PATH's base name is one of L's modules holding its threads'
 * list (its dynamic linker included). */
bool libc_holds_thread_list(const struct libc *l, const char *path);
/* Whether NAME is one of L's signal return trampolines. */
bool libc_is_sigreturn(const struct libc *l, const char *name);

#endif
