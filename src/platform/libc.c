/* The C libraries pycore knows (libc.h): glibc and musl.
 *
 * Sources of each fact:
 * - glibc, x86-64: the thread pointer (fs_base) is the struct pthread
 *   itself (TLS_TCB_AT_TP: tcbhead_t, whose self field pthread_self()
 *   returns, starts it), and struct pthread keeps the tid at 720, as
 *   glibc's own descriptor for libthread_db says (the field (pthread, tid)
 *   of nptl_db/structs.def, in libc.so.6 as the symbol
 *   _thread_db_pthread_tid), read from Debian 12's libc.so.6 and
 *   unstable's (its size, _thread_db_sizeof_pthread, 2368 in Debian 12's
 *   2.36, is not needed there).
 * - glibc, aarch64 (Debian 12's 2.36, libc6-arm64-cross, from its
 *   libthread_db descriptors _thread_db_pthread_tid and
 *   _thread_db_sizeof_pthread): the TCB follows struct pthread
 *   (TLS_DTV_AT_TP: the thread pointer is just past it, THREAD_SELF is
 *   tp - sizeof(struct pthread)), sizeof(struct pthread) is 1856 and tid
 *   is at 208.  Unstable's 2.43 says 1824 (tid at 208 still): the analysis
 *   takes both from the dump's libc.so.6 where it can
 *   (dump_set_pthread_layout), these otherwise.
 * - glibc's threads' lists (stack_used, the dl_stack_user list) are in
 *   ld-linux's and libc's (libpthread's before 2.34) data.
 * - musl (read in musl's own sources, git tags v1.2.3 -- Debian 12's
 *   musl-dev -- through v1.2.5, where they are the same):
 *   src/internal/pthread_impl.h's struct pthread is self, then (without
 *   TLS_ABOVE_TP) dtv, then prev, next, sysinfo, then (without
 *   TLS_ABOVE_TP) canary (canary_pad before it only with CANARY_PAD,
 *   which no 64-bit arch defines), then int tid, errno_val,
 *   detach_state, cancel, two unsigned chars and a bitfield byte,
 *   map_base, map_size, stack, stack_size, guard_size, result, cancelbuf,
 *   tsd, robust_list { head, off, pending }, int h_errno_val, int
 *   timer_id, locale, int killlock[1], dlerror_buf, stdio_locks, then
 *   (with TLS_ABOVE_TP) canary and dtv.  __pthread_self() is the thread
 *   pointer (arch/x86_64/pthread_arch.h: __get_tp is %fs:0, no
 *   TLS_ABOVE_TP) on x86-64, so tid is at 6 * 8 = 48; on aarch64
 *   (arch/aarch64/pthread_arch.h: TLS_ABOVE_TP, TP_OFFSET 0) it is the
 *   thread pointer less sizeof(struct pthread): self, prev, next, sysinfo
 *   (0-31), tid at 32, the ints and bytes to 51, map_base at 56 ...
 *   guard_size 88, result 96, cancelbuf 104, tsd 112, robust_list 120-143,
 *   h_errno_val 144, timer_id 148, locale 152, killlock 160, dlerror_buf
 *   168, stdio_locks 176, canary 184, dtv 192: 200 bytes.  check-musl
 *   checks the x86-64 offset against real cores: the tid read through it
 *   is each thread's NT_PRSTATUS pid.
 * - musl's dynamic linker is ld-musl-ARCH.so.1, the C library itself (one
 *   file, musl's Makefile's $(LDSO_PATHNAME)): Alpine installs it so
 *   (libc.musl-ARCH.so.1 a link to it), Debian's musl as
 *   /usr/lib/ARCH-linux-musl/libc.so with /lib/ld-musl-ARCH.so.1 a link
 *   to it -- and a core's file notes name the file the link resolves to.
 *   Its threads' list hangs off the main thread's struct pthread
 *   (prev/next), the head in its data.
 * - musl's signal return trampolines are __restore_rt (and __restore,
 *   the same code on aarch64): src/signal/x86_64/restore.s,
 *   src/signal/aarch64/restore.s; hidden symbols, so a stripped libc.so
 *   names them only through the platform's code bytes.
 * - A static executable linked with musl holds its strerror table
 *   (src/errno/__strerror.h): "No error information" for 0 and "Value too
 *   large for data type" for EOVERFLOW, words glibc's table does not use
 *   ("Success", "Value too large for defined data type").
 */
#include "platform/libc.h"

#include <elf.h>
#include <string.h>

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static const struct libc_pthread glibc_pthreads[] = {
	{ .elf_machine = EM_X86_64, .below_tp = false, .size = 2368, .tid = 720 },
	{ .elf_machine = EM_AARCH64, .below_tp = true, .size = 1856, .tid = 208 },
	{ 0 },
};
static const char *const glibc_loaders[] = { "ld-linux", "libc.so.6", NULL };
static const char *const glibc_thread_lists[] = { "ld-linux", "libc.so", "libpthread", NULL };
static const char *const glibc_trampolines[] = { "__restore_rt", NULL };

const struct libc libc_glibc = {
	.name = "glibc",
	.pthreads = glibc_pthreads,
	.loaders = glibc_loaders,
	.thread_lists = glibc_thread_lists,
	.trampolines = glibc_trampolines,
};

static const struct libc_pthread musl_pthreads[] = {
	{ .elf_machine = EM_X86_64, .below_tp = false, .size = 200, .tid = 48 },
	{ .elf_machine = EM_AARCH64, .below_tp = true, .size = 200, .tid = 32 },
	{ 0 },
};
static const char *const musl_loaders[] = { "ld-musl-", "libc.musl-", NULL };
static const char *const musl_dirs[] = { "-linux-musl/", NULL };
static const char *const musl_thread_lists[] = { "ld-musl-", "libc.musl-", NULL };
static const char *const musl_trampolines[] = { "__restore_rt", "__restore", NULL };

const struct libc libc_musl = {
	.name = "musl",
	.pthreads = musl_pthreads,
	.loaders = musl_loaders,
	.dirs = musl_dirs,
	.thread_lists = musl_thread_lists,
	.trampolines = musl_trampolines,
};

static const struct libc *const libcs[] = { &libc_musl, &libc_glibc };

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static bool prefixed(const char *const *prefixes, const char *base)
{
	for (const char *const *p = prefixes; p && *p; p++)
		if (strncmp(base, *p, strlen(*p)) == 0)
			return true;
	return false;
}

/* Whether PATH's directory has one of DIRS in it */
static bool in_dirs(const char *const *dirs, const char *path, const char *base)
{
	for (const char *const *d = dirs; d && *d; d++) {
		const char *hit = strstr(path, *d);
		if (hit && hit + strlen(*d) <= base)
			return true;
	}
	return false;
}

const struct libc *libc_by_module(const char *path)
{
	if (!path)
		return NULL;
	const char *base = base_name(path);
	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++)
		if (prefixed(libcs[i]->loaders, base) ||
		    (strncmp(base, "libc.so", 7) == 0 && in_dirs(libcs[i]->dirs, path, base)))
			return libcs[i];
	return NULL;
}

/* Whether the NUL-terminated string S (its NUL included) is in the N
 * bytes at DATA, starting a string (after a NUL or at the start). */
static bool has_cstring(const uint8_t *data, size_t n, const char *s)
{
	size_t len = strlen(s) + 1;
	const uint8_t *p = data, *end = data + n;
	while (p && (size_t)(end - p) >= len) {
		const uint8_t *hit = memchr(p, (unsigned char)s[0], (size_t)(end - p) - len + 1);
		if (!hit)
			return false;
		if ((hit == data || hit[-1] == 0) && memcmp(hit, s, len) == 0)
			return true;
		p = hit + 1;
	}
	return false;
}

const struct libc *libc_by_bytes(const uint8_t *data, size_t n)
{
	if (data && has_cstring(data, n, "No error information") &&
	    has_cstring(data, n, "Value too large for data type"))
		return &libc_musl;
	return NULL;
}

const struct libc_pthread *libc_pthread(const struct libc *l, uint16_t machine)
{
	for (const struct libc_pthread *p = l->pthreads; p && p->elf_machine; p++)
		if (p->elf_machine == machine)
			return p;
	return NULL;
}

int64_t libc_pthread_from_tp(const struct libc_pthread *layout)
{
	return layout->below_tp ? -(int64_t)layout->size : 0;
}

bool libc_holds_thread_list(const struct libc *l, const char *path)
{
	return path && (prefixed(l->thread_lists, base_name(path)) || libc_by_module(path) == l);
}

bool libc_is_sigreturn(const struct libc *l, const char *name)
{
	for (const char *const *t = l->trampolines; name && *t; t++)
		if (strcmp(*t, name) == 0)
			return true;
	return false;
}
