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
 *   kind    the signal's name ("SIGSEGV"; a re-raise: the fault's); without a signal, the type of
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
 *   hash    FNV-1a 64 (util/hash.h) of "pycore-fingerprint/2", the kind
 *           and each frame, each followed by a newline; 16 hex digits.
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
static const struct model_thread *subject_thread(const struct model_report *r)
{
	const struct model_thread *gil = NULL, *first = NULL;
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

static const char *kind_of(const struct model_report *r, const struct model_thread *t)
{
	if (r->fault)
		return r->fault->name ? r->fault->name : arena_printf(r->arena, "SIG%d", r->fault->signal.number);
	if (r->has_signal)
		return r->signal_name ? r->signal_name : arena_printf(r->arena, "SIG%d", r->signal_number);
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
	 * abort and signal machinery, before any Python frame */
	for (size_t i = top; t && t->crashed && i < nframes; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			break;
		if (model_is_machinery(f->function))
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
	if (!fp->kind)
		return NULL;
	uint64_t h = PC_FNV1A64_INIT;
	hash_line(&h, SALT);
	hash_line(&h, fp->kind);
	for (size_t i = 0; i < fp->nframes; i++)
		hash_line(&h, fp->frames[i]);
	snprintf(fp->hash, sizeof(fp->hash), "%016llx", (unsigned long long)h);
	return fp;
}
