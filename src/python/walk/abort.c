/* The abort's own words: what the C library kept of why the process
 * aborted, read from the dump alone (Python need not be found: an abort
 * in a thread of no interpreter's keeps its message all the same).
 *
 * glibc keeps the last fatal message in __abort_msg, a pointer in its
 * data (stdlib/abort.c of 2.36: "struct abort_msg_s *__abort_msg;",
 * exported as GLIBC_PRIVATE by stdlib/Versions, so libc.so.6's .dynsym
 * has it without a debug file) to include/stdlib.h's
 * struct abort_msg_s { unsigned int size; char msg[0]; }: SIZE is the
 * length of the anonymous mapping the struct is (page-rounded: 2.36's
 * assert/assert.c and sysdeps/posix/libc_fatal.c round strlen + 1 up to
 * GLRO(dl_pagesize); 2.42 rounds header + strlen + 1 up the same way), and
 * MSG the text, NUL-terminated.  Who sets it, in 2.36:
 * __assert_fail_base (assert: "PROG: FILE:LINE: FUNC: Assertion `EXPR'
 * failed.\n", printed to stderr first), and __libc_message(do_abort,
 * ...) (sysdeps/posix/libc_fatal.c, the same bytes it wrote to stderr
 * with writev), called by malloc_printerr (malloc/malloc.c: "%s\n", such
 * as "free(): double free detected in tcache 2"), __fortify_fail
 * (debug/fortify_fail.c: "*** %s ***: terminated\n", "buffer overflow
 * detected" from the _chk functions) and __stack_chk_fail
 * (debug/stack_chk_fail.c: __fortify_fail("stack smashing detected")).
 * Each then calls abort(), which sets nothing more.  The message stays
 * after a SIGABRT handler returns or jumps away (glibc unmaps the old one
 * only when a new one replaces it), so it is this crash's only when the
 * crash is a SIGABRT and the crashed thread's stack runs abort() called
 * from the C library itself.
 *
 * musl keeps none: its __assert_fail (src/exit/assert.c) prints
 * "Assertion failed: ..." with fprintf and calls abort(), and abort()
 * (src/exit/abort.c) only raises SIGABRT; nothing is left in memory. */
#include "python/walk/walk.h"
#include "python/python_int.h"
#include "platform/libc.h"

#include <string.h>

#define ABORT_MSG_CAP 4096            /* bytes of a message kept */
#define ABORT_MAP_MAX (64u << 20)     /* a larger struct's size is not glibc's */
#define ABORT_PAGE 4096               /* every page size divides by it */
#define ABORT_CHUNK 256
#define MAX_ABORT_FRAMES 256
#define SIGABRT_LINUX 6

struct seek_abort {
	int n;
	bool found;
	uint64_t sp;                        /* abort()'s frame's */
	const struct dump_module *caller;   /* the module of abort()'s caller */
	bool terminate;                     /* a frame of C++'s std::terminate */
};

/* NAME without a compiler clone's suffix begins with WANT. */
static bool named(const char *name, const char *want, bool prefix)
{
	size_t n = strlen(want);
	return name && strncmp(name, want, n) == 0 && (prefix || name[n] == '\0' || name[n] == '.');
}

/* Marks abort()'s frame, its caller's module, and std::terminate's
 * frames (their symbols, mangled: libstdc++'s std::terminate(),
 * __cxxabiv1::__terminate, or __cxa_throw and __cxa_rethrow, which call
 * it when no handler is found). */
static int seek_abort(const struct native_frame *f, void *arg)
{
	struct seek_abort *k = arg;
	const char *fn = f->function;
	if (k->found && !k->caller)
		k->caller = f->module;
	if (!k->found && named(fn, "abort", false)) {
		k->found = true;
		k->sp = f->sp;
	}
	if (named(fn, "_ZSt9terminatev", false) || named(fn, "_ZN10__cxxabiv111__terminate", true) ||
	    named(fn, "__cxa_throw", false) || named(fn, "__cxa_rethrow", false))
		k->terminate = true;
	return k->terminate || ++k->n >= MAX_ABORT_FRAMES;
}

/* Whether the crash is a SIGABRT: the signal a handler caught before its
 * re-raise, else the core's. */
static bool crash_is_abort(const struct py_ctx *c)
{
	if (c->r->fault)
		return c->r->fault->signal.number == SIGABRT_LINUX;
	return c->d->has_signal && c->d->signal.number == SIGABRT_LINUX;
}

/* (walk.h) */
struct dump_module *py_glibc_module(struct dump *d, bool *dynamic)
{
	if (dump_libc(d) != &libc_glibc)
		return NULL;
	for (size_t i = 0; i < d->nmodules; i++) {
		const char *path = d->modules[i].path;
		const char *base = path ? strrchr(path, '/') : NULL;
		base = base ? base + 1 : path;
		/* libc.so.6 (older: libc-2.31.so); the dynamic linker is glibc's
		 * too, but holds no __abort_msg */
		size_t n = base ? strlen(base) : 0;
		if (base && (strcmp(base, "libc.so.6") == 0 ||
			     (strncmp(base, "libc-", 5) == 0 && n > 8 && strcmp(base + n - 3, ".so") == 0))) {
			*dynamic = true;
			return &d->modules[i];
		}
	}
	/* a static executable: no module is a C library or its loader (the
	 * bytes prove musl, never glibc: glibc is the default), and glibc's
	 * own symbol in the executable's .symtab proves it linked in */
	for (size_t i = 0; i < d->nmodules; i++)
		if (libc_by_module(d->modules[i].path))
			return NULL;
	for (size_t i = 0; d->auxv_entry && i < d->nmodules; i++)
		if (d->auxv_entry >= d->modules[i].start && d->auxv_entry < d->modules[i].end) {
			*dynamic = false;
			return &d->modules[i];
		}
	return NULL;
}

/* The message of the struct abort_msg_s at AT, cut at ABORT_MSG_CAP
 * (*CUT then set); NULL with *WHY set when it is not glibc's. */
static char *read_message(struct py_ctx *c, uint64_t at, bool *cut, const char **why)
{
	uint32_t size;
	*cut = false;
	if (dump_read(c->d, at, &size, sizeof(size)) != PC_OK) {
		*why = arena_printf(c->a, "its struct at 0x%llx is not captured", (unsigned long long)at);
		return NULL;
	}
	if (size < ABORT_PAGE || size > ABORT_MAP_MAX || size % ABORT_PAGE != 0) {
		*why = arena_printf(c->a, "its struct at 0x%llx gives a size of %u bytes, not a whole number of pages",
				    (unsigned long long)at, size);
		return NULL;
	}
	size_t room = size - sizeof(size), want = room < ABORT_MSG_CAP ? room : ABORT_MSG_CAP;
	char *buf = arena_alloc(c->a, want + 1);
	if (!buf) {
		*why = "out of memory";
		return NULL;
	}
	size_t got = 0;
	while (got < want) {
		size_t n = want - got < ABORT_CHUNK ? want - got : ABORT_CHUNK;
		if (dump_read(c->d, at + sizeof(size) + got, buf + got, n) != PC_OK) {
			*why = arena_printf(c->a, "its text at 0x%llx is not captured",
					    (unsigned long long)(at + sizeof(size) + got));
			return NULL;
		}
		if (memchr(buf + got, '\0', n))
			return buf;
		got += n;
	}
	if (want == room) {
		*why = arena_printf(c->a, "its text at 0x%llx has no end within its %u bytes",
				    (unsigned long long)(at + sizeof(size)), size);
		return NULL;
	}
	/* cut on a character boundary: the first byte left out (the mapping
	 * holds it: room > want) must not continue a UTF-8 sequence */
	if (dump_read(c->d, at + sizeof(size) + got, buf + got, 1) != PC_OK)
		buf[got] = '\0';
	while (got > 0 && ((unsigned char)buf[got] & 0xc0) == 0x80)
		got--;
	buf[got] = '\0';
	*cut = true;
	return buf;
}

/* glibc's __abort_msg, when the C library's own code called abort(): a
 * message left by an earlier abort the process survived, under an
 * abort() called from elsewhere (os.abort(), Py_FatalError, a C++
 * terminate handler), is not this crash's. */
static void glibc_message(struct py_ctx *c, struct symbols *s, const struct seek_abort *k, int64_t tid)
{
	struct dump *d = c->d;
	bool dynamic = false;
	struct dump_module *m = py_glibc_module(d, &dynamic);
	if (!m)
		return;
	struct symbol_want want = { "__abort_msg", 0, 0 };
	int found = dynamic ? symbols_lookup_dynamic(s, m, &want, 1) : symbols_lookup(s, m, &want, 1);
	uint64_t at;
	if (found != 1 || !want.addr) {
		model_warn(c->r, "the abort's message is unknown: %s's symbol __abort_msg %s", m->path,
			   found < 0 ? "cannot be read (no file or no symbols)" : "is not there");
		return;
	}
	if (py_rd_ptr(c, want.addr, &at) != PC_OK) {
		model_warn(c->r, "the abort's message is unknown: glibc's __abort_msg (0x%llx) is not captured",
			   (unsigned long long)want.addr);
		return;
	}
	if (!at)
		return;   /* abort() called directly: no message was kept */
	bool cut;
	const char *why = NULL;
	char *msg = read_message(c, at, &cut, &why);
	if (!msg) {
		model_warn(c->r, "glibc's __abort_msg (0x%llx) is unreadable: %s", (unsigned long long)at, why);
		return;
	}
	size_t n = strlen(msg);
	if (!cut && n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';   /* the line's end, as the process wrote it to stderr */
	if (!k->found || (k->caller && k->caller != m)) {
		model_warn(c->r, "glibc's __abort_msg holds a message, but thread %lld's stack shows %s: it is not "
			   "taken for this crash's", (long long)tid, !k->found ? "no abort()" : "abort() called from "
			   "outside the C library");
		return;
	}
	struct model_abort *ab = arena_alloc(c->a, sizeof(*ab));
	if (!ab)
		return;
	ab->message = msg;
	ab->truncated = cut;
	ab->source = "glibc";
	c->r->abort = ab;
}

void py_find_abort(struct py_ctx *c, struct symbols *s)
{
	if (!crash_is_abort(c))
		return;
	int64_t tid = py_crash_tid(c);
	struct seek_abort k = { 0 };
	if (tid >= 0)
		symbols_native_names(s, tid, seek_abort, &k);
	/* an uncaught C++ exception: std::terminate's handler called abort() */
	if (k.terminate && k.found && py_find_cxx_abort(c, s, k.sp))
		return;
	glibc_message(c, s, &k, tid);
}
