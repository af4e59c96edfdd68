/* Finding the CPython runtime in a dump: by the interpreter module's
 * symbols (_PyRuntime, or 3.6's interp_head), else by the cookie of
 * 3.13+'s _Py_DebugOffsets, else by a bounded scan of the interpreter
 * module's memory for its interpreter list (the built-in types are
 * objects/classes.c's). */
#include "python/runtime/debug_offsets.h"
#include "python/python.h"
#include "python/python_int.h"
#include "python/runtime/runtime.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const sym_names[PY_NSYMS] = {
	"_PyRuntime", "interp_head", "Py_Version", "PyCode_Type", "_PyThreadState_Current",
	"PyType_Type", "_PyGC_generation0",
};

/* What a module's name says of it: every "is this Python?" test of the
 * search asks this one function. */
struct module_kind {
	bool lib;        /* libpython* */
	bool exe;        /* the main program */
	bool prefixed;   /* python* (an interpreter executable's name) */
	bool named;      /* "python" anywhere in its file name */
};

static struct module_kind module_kind(const struct dump *d, const struct dump_module *m)
{
	const char *b = pc_basename(m->path);
	return (struct module_kind){
		.lib = strncmp(b, "libpython", 9) == 0,
		.exe = d->executable && strcmp(m->path, d->executable) == 0,
		.prefixed = strncmp(b, "python", 6) == 0,
		.named = strstr(b, "python") != NULL,
	};
}

struct dump_module *py_named_module(struct dump *d)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		struct module_kind k = module_kind(d, &d->modules[i]);
		if (k.lib || k.prefixed)
			return &d->modules[i];
	}
	return NULL;
}

unsigned py_minor_from_name(const char *path, unsigned major)
{
	char want[] = "pythonN.";
	want[6] = (char)('0' + major);
	const char *p = strstr(pc_basename(path), want);
	if (!p || !isdigit((unsigned char)p[8]))
		return 0;
	return (unsigned)strtoul(p + 8, NULL, 10);
}

/* ------------------------------------------------------------------------
 * By the debug offsets' cookie (3.13+)
 * ------------------------------------------------------------------------ */

/* Look for "xdebugpy" followed by a plausible _Py_DebugOffsets: a 3.13+
 * version and struct sizes that make sense.  Captured memory of modules
 * named like python is searched first (where _PyRuntime lives), then all
 * captured memory.  Returns the module holding it (or NULL). */
struct offsets_scan {
	bool pythonish;          /* this pass: modules named like python, or the rest */
	uint64_t version;
};

static bool scan_keep(struct dump *d, uint64_t start, void *arg)
{
	struct offsets_scan *sc = arg;
	struct dump_module *m = dump_module_at(d, start);
	return (m && module_kind(d, m).named) == sc->pythonish;
}

static bool scan_found(struct dump *d, uint64_t at, void *arg)
{
	struct offsets_scan *sc = arg;
	return at % 8 == 0 && py_debug_offsets_plausible(d, at, &sc->version);
}

static struct dump_module *scan_debug_offsets(struct dump *d, uint64_t *runtime, uint64_t *version)
{
	static const char cookie[8] = { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' };
	for (int pass = 0; pass < 2; pass++) {
		struct offsets_scan sc = { pass == 0, 0 };
		uint64_t at = dump_search(d, cookie, sizeof(cookie), scan_keep, scan_found, &sc);
		if (!at)
			continue;
		*runtime = at;
		*version = sc.version;
		struct dump_module *owner = dump_module_at(d, at);
		if (owner)
			return owner;
		/* anonymous memory: name the first module that looks like python */
		for (size_t k = 0; k < d->nmodules; k++)
			if (module_kind(d, &d->modules[k]).named)
				return &d->modules[k];
		return NULL;
	}
	return NULL;
}


/* ------------------------------------------------------------------------
 * By scanning for the interpreter list (3.6-3.12)
 * ------------------------------------------------------------------------ */

/* 3.6-3.12 without symbols: look through the captured writable memory of
 * a module named like python for the word that holds the interpreter list
 * (_PyRuntime.interpreters.head; 3.6: interp_head), trying each plausible
 * version's table.  A candidate is believed only if it points to an
 * interpreter whose newest thread state points back to it and belongs to
 * one of the dump's threads (its thread_id is that thread's pthread_t,
 * which the platform finds from its thread pointer), and (3.9+) that
 * points back to the runtime the candidate word would be in. */
static bool plausible_interp(struct dump *d, const struct py_layout *L, uint64_t interp, uint64_t runtime)
{
	uint64_t ts, back, ident, rt;
	if (!interp || interp % 8 ||
	    (L->interp_runtime >= 0 && runtime &&
	     (dump_read_u64(d, interp + L->interp_runtime, &rt) != PC_OK || rt != runtime)) ||
	    dump_read_u64(d, interp + L->interp_tstate_head, &ts) != PC_OK || !ts || ts % 8 ||
	    dump_read_u64(d, ts + L->tstate_interp, &back) != PC_OK || back != interp ||
	    dump_read_u64(d, ts + L->tstate_thread_id, &ident) != PC_OK || !ident)
		return false;
	return dump_tid_of_pthread(d, ident) >= 0;
}

#define SCAN_BSS_BYTES (4u << 20)
/* What one mapping's scan reads at most: a libpython's writable data and
 * .bss are a few MB; a crafted dump's module can claim terabytes. */
#define SCAN_MAX_BYTES (64u << 20)
/* ... and the whole scan, over every module and version. */
#define SCAN_TOTAL_BYTES (1ull << 30)

static struct dump_module *scan_interp_list(struct dump *d, uint64_t *where, unsigned *minor_out)
{
	uint64_t buf[512], total = SCAN_TOTAL_BYTES;
	/* The version the file names say (python3.X, libpython3.X...): only
	 * that table is tried then; all of them only when no name says. */
	unsigned named = 0;
	for (size_t i = 0; i < d->nmodules && !named; i++)
		named = py_minor_from_name(d->modules[i].path, 3);
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		struct module_kind kind = module_kind(d, m);
		if (!kind.lib && !kind.prefixed && !kind.exe)
			continue;
		for (unsigned minor = 12; minor >= 6; minor--) {
			if (named && minor != named)
				continue;
			const struct py_layout *L = py_layout_for(minor, false);
			int64_t head_ofs = minor == 6 ? 0 : L->runtime_interpreters_head;
			/* the module's mappings, and the anonymous .bss that follows
			 * its last one (zero-initialized globals such as 3.6's
			 * interp_head or 3.7-3.9's _PyRuntime live there) */
			for (size_t k = 0; k <= m->nmaps; k++) {
				uint64_t start = k < m->nmaps ? m->maps[k].start : m->end;
				uint64_t end = k < m->nmaps ? m->maps[k].end : m->end + SCAN_BSS_BYTES;
				if (k == m->nmaps && dump_module_at(d, m->end))
					continue;
				uint64_t budget = SCAN_MAX_BYTES, held_end = 0, n = 0;
				for (uint64_t a = start; a < end && budget && total; a += n) {
					/* step over what the dump does not hold */
					if (a >= held_end) {
						a = dump_next_held(d, a, &held_end);
						if (!a || a >= end)
							break;
					}
					n = end - a < sizeof(buf) ? end - a : sizeof(buf);
					if (held_end - a < n)
						n = held_end - a;
					budget = budget > n ? budget - n : 0;
					total = total > n ? total - n : 0;
					if (dump_read(d, a, buf, n) != PC_OK)
						continue;
					for (uint64_t w = 0; w < n / 8; w++) {
						uint64_t rt = a + 8 * w - (uint64_t)head_ofs;
						if (!plausible_interp(d, L, buf[w], minor == 6 ? 0 : rt))
							continue;
						*where = rt;
						*minor_out = minor;
						return m;
					}
				}
			}
		}
	}
	return NULL;
}


/* ------------------------------------------------------------------------
 * By symbols, then the scans
 * ------------------------------------------------------------------------ */

/* Is this module a CPython interpreter?  Fills RT's symbols. */
static bool probe_module(struct symbols *s, struct dump_module *m, struct py_runtime *rt)
{
	struct symbol_want w[PY_NSYMS];
	for (int i = 0; i < PY_NSYMS; i++)
		w[i] = (struct symbol_want){ sym_names[i], 0, 0 };
	if (symbols_lookup(s, m, w, PY_NSYMS) < 0)
		return false;
	for (int i = 0; i < PY_NSYMS; i++)
		rt->sym[i] = w[i].addr;
	return rt->sym[PY_SYM_RUNTIME] || (rt->sym[PY_SYM_INTERP_HEAD] && rt->sym[PY_SYM_CODE_TYPE]);
}

bool py_find_runtime_next(struct dump *d, struct model_report *r, struct py_runtime *rt, const char *refused)
{
	/* the order of py_find_runtime: symbol, debug offsets, scan; each
	 * method's own candidate once */
	const char *was = rt->located_by ? rt->located_by : "";
	bool after_symbol = strcmp(was, "symbol") == 0;
	if (after_symbol) {
		uint64_t runtime, version;
		struct dump_module *m = scan_debug_offsets(d, &runtime, &version);
		if (m && runtime != rt->sym[PY_SYM_RUNTIME]) {
			memset(rt, 0, sizeof(*rt));
			rt->mod = m;
			rt->located_by = "debug-offsets";
			rt->sym[PY_SYM_RUNTIME] = runtime;
			model_warn(r, "the runtime was found again by its debug-offsets cookie at 0x%llx (%s)",
				   (unsigned long long)runtime, refused);
			return true;
		}
	}
	if (after_symbol || strcmp(was, "debug-offsets") == 0) {
		uint64_t where;
		unsigned minor;
		struct dump_module *m = scan_interp_list(d, &where, &minor);
		if (m) {
			memset(rt, 0, sizeof(*rt));
			rt->mod = m;
			rt->located_by = "scan";
			rt->scanned_minor = minor;
			rt->sym[minor == 6 ? PY_SYM_INTERP_HEAD : PY_SYM_RUNTIME] = where;
			model_warn(r, "the interpreter list was found again by scanning the interpreter's memory "
				   "(CPython 3.%u layout) at 0x%llx (%s)", minor, (unsigned long long)where, refused);
			return true;
		}
	}
	return false;
}

struct pc_error *py_find_runtime(struct dump *d, const struct locate *loc, struct symbols *s,
				 struct model_report *r, struct py_runtime *rt)
{
	const char *refused = NULL;
	memset(rt, 0, sizeof(*rt));
	/* libpython first (the executable of a shared build only links it),
	 * then the main program, then anything else named like python. */
	for (int pass = 0; pass < 3 && !rt->mod; pass++) {
		for (size_t i = 0; i < d->nmodules && !rt->mod; i++) {
			struct dump_module *m = &d->modules[i];
			struct module_kind k = module_kind(d, m);
			if ((pass == 0 && !k.lib) || (pass == 1 && (!k.exe || k.lib)) ||
			    (pass == 2 && (k.lib || k.exe || !k.named)))
				continue;
			const struct locate_result *lr = locate_result(loc, m);
			if (probe_module(s, m, rt)) {
				rt->mod = m;
				rt->located_by = "symbol";
			} else if (!refused && lr && !lr->data && lr->reason) {
				refused = lr->reason;
			}
		}
	}
	if (!rt->mod) {
		/* No symbols: 3.13+ carries _Py_DebugOffsets at the start of
		 * _PyRuntime, findable by its cookie. */
		uint64_t runtime, version;
		memset(rt, 0, sizeof(*rt));
		rt->mod = scan_debug_offsets(d, &runtime, &version);
		if (rt->mod) {
			rt->located_by = "debug-offsets";
			rt->sym[PY_SYM_RUNTIME] = runtime;
			model_warn(r, "no usable symbols (%s): the runtime was found by its debug-offsets "
				   "cookie; types are recognized by name",
				   refused ? refused : "no module defines _PyRuntime");
		}
	}
	if (!rt->mod) {
		/* Older versions: a bounded scan, validated by walking. */
		uint64_t where;
		rt->mod = scan_interp_list(d, &where, &rt->scanned_minor);
		if (rt->mod) {
			rt->located_by = "scan";
			rt->sym[rt->scanned_minor == 6 ? PY_SYM_INTERP_HEAD : PY_SYM_RUNTIME] = where;
			model_warn(r, "no usable symbols (%s): the interpreter list was found by scanning "
				   "the interpreter's memory (CPython 3.%u layout)",
				   refused ? refused : "no module defines _PyRuntime", rt->scanned_minor);
		}
	}
	if (rt->mod)
		return NULL;
	for (size_t i = 0; i < d->nmodules; i++) {
		unsigned two = py_minor_from_name(d->modules[i].path, 2);
		if (two)
			return pc_error_new(PC_EUNSUPPORTED, NULL, "CPython 2.%u is not supported (pycore reads "
					    "3.6 to 3.15)", two);
	}
	if (refused)
		return pc_error_new(PC_ENOTPYTHON, NULL, "cannot read the interpreter's symbols: %s; no "
				    "_Py_DebugOffsets (3.13+) in memory, and no interpreter state found "
				    "by scanning", refused);
	return pc_error_new(PC_ENOTPYTHON, NULL, "not a CPython process: no loaded module defines _PyRuntime, "
			    "no _Py_DebugOffsets (3.13+) is in memory, and a scan found no interpreter state");
}
