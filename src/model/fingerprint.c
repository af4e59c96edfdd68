/* Crash fingerprints, version 2 (fingerprint.h; doc/fingerprints.md says
 * what changed from version 1).
 *
 * The idea is that of Mozilla's crash signatures and ClusterFuzz's crash
 * state: the kind of crash plus the top of the crashed stack, normalized so
 * that nothing that changes between two occurrences of one bug goes in,
 * and with the frames that only carry a call (stdlib plumbing) skipped.
 *
 *   thread  the crashed thread, else the one holding the GIL, else the
 *           first thread of the first interpreter
 *           (a handler's re-raise: the thread that took the fault, its
 *           frames from the fault down, the handler's left out)
 *   kind    the signal's name ("SIGSEGV"; a re-raise: the fault's; a fault's
 *           signal the dump does not prove a fault, sent by a process or
 *           of unrecorded origin: "SIGSEGV (no fault recorded)"); without a signal, the type of
 *           the exception that thread is handling ("ValueError"); else
 *           "snapshot"
 *   frames  that thread's innermost Python frames, at most 5, each
 *           "MODULE:FUNCTION": MODULE the file's base name without ".py"
 *           (a package's __init__.py and __main__.py: the package's
 *           directory name), FUNCTION the code object's name (co_name; not
 *           the qualified name, which CPython keeps in the code object only
 *           from 3.11 on, so that one bug gives one fingerprint on every
 *           version).  Frames of the standard library's plumbing are
 *           skipped (below); if that leaves none, none are skipped.
 *           Then, when the thread crashed in C (its innermost frame is a
 *           native one, which needs --native), "LIBRARY:FUNCTION" of the
 *           first native frame out from it that is not the abort and
 *           signal machinery (model/machinery.h), before any Python frame:
 *           LIBRARY "python" for the interpreter's own module (shared
 *           libpython or linked into the executable alike), else the
 *           object's base name up to ".so" or ".cpython-", without a
 *           trailing version ("libc", "crashext"), FUNCTION without a
 *           compiler clone's suffix (".constprop.0", ".isra.0", ".part.0",
 *           ".cold") and, for libc's CPU-specific variants, the generic
 *           name (__strlen_avx2 -> strlen).  A native frame without a
 *           symbol adds nothing.
 *   message the abort's own words (model_abort: glibc's __abort_msg, an
 *           uncaught C++ exception's type and what()), normalized: the
 *           program's name that glibc's assert puts first left out, each
 *           path cut to its base name, every run of digits (line numbers,
 *           counts, and the digits of addresses) "N"; "TYPE: WHAT" for a
 *           C++ exception.  Three aborts from one line of Python differ
 *           by it.
 *   hash    FNV-1a 64 (util/hash.h) of "pycore-fingerprint/2", the kind,
 *           each frame and, when there is one, "abort: " and the message,
 *           each followed by a newline; 16 hex digits.
 *
 * No line numbers, addresses, pids, directories or versions go in. */
#include "model/fingerprint.h"
#include "model/machinery.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/hash.h"

/* The thread the fingerprint describes. */
/* R's samples' thread whose state makes their kind (model_samples.
 * kind_tid); NULL: no samples, or none. */
static const struct model_thread *hang_thread(const struct model_report *r)
{
	for (size_t j = 0; r->samples && r->samples->kind_tid >= 0 && j < r->interps.n; j++) {
		const struct model_interp *mi = r->interps.items[j];
		for (size_t k = 0; k < mi->threads.n; k++)
			if (((const struct model_thread *)mi->threads.items[k])->tid == r->samples->kind_tid)
				return mi->threads.items[k];
	}
	return NULL;
}

static const struct model_thread *subject_thread(const struct model_report *r)
{
	const struct model_thread *gil = NULL, *first = NULL, *hang = r->has_signal ? NULL : hang_thread(r);
	if (hang)
		return hang;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (t->crashed)
				return t;
			if (t->holds_gil && !gil)
				gil = t;
			if (!first)
				first = t;
		}
	}
	return gil ? gil : first;
}

/* A path component "python3.12", "python3.13t", "python312.zip": the
 * directory of the standard library. */
static bool stdlib_dir(const char *s, size_t n)
{
	if (n < 7 || memcmp(s, "python", 6) != 0 || s[6] < '2' || s[6] > '3')
		return false;
	size_t i = 7;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	if (i < n && s[i] == 't')
		i++;
	/* the dots went with the digits: "python312.zip" ends in "zip" here */
	return i == n || (n - i == 3 && memcmp(s + i, "zip", 3) == 0);
}

/* The part of PATH below the standard library's directory ("threading.py",
 * "asyncio/events.py"), or NULL when PATH is not in it (site-packages and
 * dist-packages are not). */
static const char *stdlib_relative(const char *path)
{
	const char *rel = NULL;
	for (const char *p = path; (p = strchr(p, '/')); p++) {
		const char *c = p + 1, *e = strchr(c, '/');
		if (e && stdlib_dir(c, (size_t)(e - c)))
			rel = e + 1;
	}
	if (!rel || strncmp(rel, "site-packages/", 14) == 0 || strncmp(rel, "dist-packages/", 14) == 0)
		return NULL;
	return rel;
}

/* Frames that only carry a call: threads' and event loops' bootstrapping,
 * module running and importing, executors' worker loops. */
static bool plumbing(const char *file)
{
	static const char *const frozen[] = {
		"<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>", "<frozen runpy>",
	};
	static const char *const modules[] = {
		"threading.py", "runpy.py", "importlib/_bootstrap.py", "importlib/_bootstrap_external.py",
		"concurrent/futures/thread.py", "concurrent/futures/process.py",
	};
	if (!file)
		return false;
	for (size_t i = 0; i < sizeof(frozen) / sizeof(frozen[0]); i++)
		if (strcmp(file, frozen[i]) == 0)
			return true;
	const char *rel = stdlib_relative(file);
	if (!rel)
		return false;
	if (strncmp(rel, "asyncio/", 8) == 0)
		return true;
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (strcmp(rel, modules[i]) == 0)
			return true;
	return false;
}

/* "crash" for ".../crash.py", "pkg" for ".../pkg/__init__.py". */
static const char *python_module(struct arena *a, const char *file)
{
	if (!file)
		return "?";
	const char *base = pc_basename(file);
	size_t n = strlen(base);
	if (n > 3 && strcmp(base + n - 3, ".py") == 0)
		n -= 3;
	if ((n == 8 && memcmp(base, "__init__", 8) == 0) || (n == 8 && memcmp(base, "__main__", 8) == 0)) {
		const char *dir = base > file + 1 ? base - 2 : NULL;
		if (dir) {
			const char *d = dir;
			while (d > file && d[-1] != '/')
				d--;
			return arena_printf(a, "%.*s", (int)(dir + 1 - d), d);
		}
	}
	return arena_printf(a, "%.*s", (int)n, base);
}

/* "libc" for "/lib/x86_64-linux-gnu/libc.so.6" (or "libc-2.31.so"),
 * "libpython" for "libpython3.12.so.1.0", "crashext" for
 * "crashext.cpython-312-x86_64-linux-gnu.so". */
static const char *native_module(struct arena *a, const char *file)
{
	if (!file)
		return "?";
	const char *base = pc_basename(file);
	size_t n = strlen(base);
	static const char *const cuts[] = { ".so", ".cpython-", ".abi3" };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		const char *c = strstr(base, cuts[i]);
		if (c && (size_t)(c - base) < n)
			n = (size_t)(c - base);
	}
	while (n > 1 && strchr("0123456789.-_", base[n - 1]))
		n--;
	return arena_printf(a, "%.*s", (int)n, base);
}

/* FUNCTION without what the compiler or the CPU picked. */
static const char *native_function(struct arena *a, const char *module, const char *fn)
{
	size_t n = strlen(fn);
	static const char *const clones[] = { ".constprop", ".isra", ".part", ".cold", ".lto_priv" };
	for (size_t i = 0; i < sizeof(clones) / sizeof(clones[0]); i++) {
		const char *c = strstr(fn, clones[i]);
		if (c && (size_t)(c - fn) < n)
			n = (size_t)(c - fn);
	}
	if (strcmp(module, "libc") == 0) {
		/* glibc's multiarch variants: __strlen_avx2, __memmove_avx_unaligned_erms */
		static const char *const cpu[] = { "_avx", "_evex", "_sse2", "_sse4", "_ssse3", "_erms",
						   "_unaligned", "_rtm" };
		size_t cut = n;
		for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++) {
			const char *c = strstr(fn, cpu[i]);
			if (c && c > fn && (size_t)(c - fn) < cut)
				cut = (size_t)(c - fn);
		}
		if (cut < n) {
			n = cut;
			while (n > 1 && *fn == '_') {
				fn++;
				n--;
			}
		}
	}
	return arena_printf(a, "%.*s", (int)n, fn);
}

/* The most of a message that goes in (a few lines of assert's or
 * malloc's words tell bugs apart; a long what() adds nothing) */
#define MESSAGE_MAX 256

/* Whether NAME, N bytes, is the program's: the executable's or argv[0]'s
 * base name (glibc's assert begins with __progname, argv[0]'s). */
static bool program_name(const struct model_report *r, const char *name, size_t n)
{
	const char *names[] = { r->executable, r->argv ? r->argv[0] : NULL };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *b = names[i] ? pc_basename(names[i]) : NULL;
		if (b && strlen(b) == n && memcmp(b, name, n) == 0)
			return true;
	}
	return false;
}

/* The abort's words as the fingerprint takes them (above), or NULL. */
static const char *normalized_message(const struct model_report *r)
{
	const struct model_abort *ab = r->abort;
	if (!ab || (!ab->message && !ab->exception_type))
		return NULL;
	const char *m = ab->message ? ab->message : "";
	char *out = arena_alloc(r->arena, MESSAGE_MAX + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	if (ab->exception_type) {
		size_t n = strlen(ab->exception_type);
		n = n < MESSAGE_MAX / 2 ? n : MESSAGE_MAX / 2;
		memcpy(out, ab->exception_type, n);
		o = n;
		if (*m && o + 2 < MESSAGE_MAX) {
			memcpy(out + o, ": ", 2);
			o += 2;
		}
	} else {
		/* "python3.12: src/queue.c:42: ...": the program's name first */
		size_t k = strcspn(m, ": \n");
		if (m[k] == ':' && m[k + 1] == ' ' && program_name(r, m, k))
			m += k + 2;
	}
	while (*m && o < MESSAGE_MAX) {
		if (*m >= '0' && *m <= '9') {
			out[o++] = 'N';
			while ((*m >= '0' && *m <= '9') || ((m[0] == 'x' || m[0] == 'X') && m[-1] == '0') ||
			       (out[o - 1] == 'N' && ((*m >= 'a' && *m <= 'f') || (*m >= 'A' && *m <= 'F')) &&
				m[-1] != ' '))
				m++;
			continue;
		}
		if (*m == '/') {
			/* a path: its directories out (o back to the word's start) */
			while (o > 0 && out[o - 1] != ' ' && out[o - 1] != '\'' && out[o - 1] != '"' && out[o - 1] != '(')
				o--;
			m++;
			continue;
		}
		char ch = *m++;
		out[o++] = ch == '\n' || ch == '\t' ? ' ' : ch;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return out;
}

/* A signal the kernel sends for a fault (SIGILL, SIGTRAP, SIGBUS,
 * SIGFPE, SIGSEGV) that the dump does not prove was one: sent with kill
 * or tkill, or of an origin nothing records (a handler without siginfo). */
static bool fault_signal_unproven(const struct model_report *r)
{
	int n = r->fault ? r->fault->signal.number : r->signal_number;
	if (n != 4 && n != 5 && n != 7 && n != 8 && n != 11)
		return false;
	if (r->fault)
		return !r->fault->origin || strcmp(r->fault->origin, "fault") != 0;
	/* the core's own siginfo: a code > 0 is the kernel's fault, SI_KERNEL
	 * (0x80) a fault it could not deliver (a stack overflow) */
	return !r->signal_has_code || r->signal_code <= 0;
}

static const char *kind_of(const struct model_report *r, const struct model_thread *t)
{
	if (r->has_signal && fault_signal_unproven(r)) {
		int n = r->fault ? r->fault->signal.number : r->signal_number;
		const char *name = r->fault ? r->fault->name : r->signal_name;
		return name ? arena_printf(r->arena, "%s (no fault recorded)", name)
		       : arena_printf(r->arena, "SIG%d (no fault recorded)", n);
	}
	if (r->fault)
		return r->fault->name ? r->fault->name : arena_printf(r->arena, "SIG%d", r->fault->signal.number);
	if (r->has_signal)
		return r->signal_name ? r->signal_name : arena_printf(r->arena, "SIG%d", r->signal_number);
	if (r->samples && r->samples->kind)
		return arena_printf(r->arena, "hang: %s", r->samples->kind);
	if (t && t->exception && t->exception->type)
		return t->exception->type;
	return "snapshot";
}

/* the hash's first line names the version */
#define SALT "pycore-fingerprint/2"
_Static_assert(FINGERPRINT_VERSION == 2, "SALT names the version");

static void hash_line(uint64_t *h, const char *s)
{
	*h = pc_fnv1a64(*h, s, strlen(s));
	*h = pc_fnv1a64(*h, "\n", 1);
}

struct model_fingerprint *model_fingerprint(const struct model_report *r)
{
	struct arena *a = r->arena;
	struct model_fingerprint *fp = arena_alloc(a, sizeof(*fp));
	if (!fp)
		return NULL;
	const struct model_thread *t = subject_thread(r);
	fp->version = FINGERPRINT_VERSION;
	fp->kind = kind_of(r, t);
	size_t nframes = t ? t->frames.n : 0;
	/* the handler's frames above a re-raised fault are no part of it
	 * (fault_frame): the same bug fingerprints the same with or without */
	size_t top = t && t->fault_frame ? t->fault_frame - 1 : 0;
	for (int skip = 1; skip >= 0 && fp->nframes == 0; skip--) {
		for (size_t i = top; i < nframes && fp->nframes < FINGERPRINT_PY_FRAMES; i++) {
			const struct model_frame *f = t->frames.items[i];
			if (f->kind != FRAME_PYTHON || (skip && plumbing(f->file)))
				continue;
			fp->frames[fp->nframes++] = arena_printf(a, "%s:%s", python_module(a, f->file),
								 f->function ? f->function : "?");
		}
	}
	/* the first native frame from the crash outwards that is not the
	 * abort and signal machinery, before any Python frame; none for a
	 * stack overflow, whose innermost frame is wherever the stack ran out
	 * (it differs between two builds of one version) */
	bool overflow = r->fault_kind && r->fault_kind->kind && strcmp(r->fault_kind->kind, "stack-overflow") == 0;
	for (size_t i = top; t && t->crashed && !overflow && i < nframes; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			break;
		/* (a tail-call frame is inferred, and only where a compiler
		 * chose a jump: two builds of one version may differ) */
		if (model_is_machinery(f->function) || model_inside_machinery(t, i) || f->tail_call)
			continue;
		if (f->function) {
			const char *m = f->interpreter ? "python" : native_module(a, f->file);
			fp->frames[fp->nframes++] = arena_printf(a, "%s:%s", m, native_function(a, m, f->function));
		}
		break;
	}
	for (size_t i = 0; i < fp->nframes; i++)
		if (!fp->frames[i])
			return NULL;
	fp->message = normalized_message(r);
	if (!fp->kind)
		return NULL;
	uint64_t h = PC_FNV1A64_INIT;
	hash_line(&h, SALT);
	hash_line(&h, fp->kind);
	for (size_t i = 0; i < fp->nframes; i++)
		hash_line(&h, fp->frames[i]);
	if (fp->message) {
		h = pc_fnv1a64(h, "abort: ", 7);
		hash_line(&h, fp->message);
	}
	snprintf(fp->hash, sizeof(fp->hash), "%016llx", (unsigned long long)h);
	return fp;
}
