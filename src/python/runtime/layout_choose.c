/* Choosing the layout: which CPython this is (Py_Version, the debug
 * offsets' version, or the file names), then its struct offsets: pycore's
 * table for the version, the interpreter's own DWARF when the table does
 * not fit (or --layout=dwarf), and from 3.13 the runtime's own
 * _Py_DebugOffsets over either. */
#include "python/runtime/debug_offsets.h"
#include "python/runtime/dwarf_layout.h"
#include "python/python.h"
#include "python/python_int.h"
#include "python/runtime/runtime.h"

#include <stdio.h>
#include <string.h>

const char *py_version_string(struct arena *a, uint64_t hex)
{
	unsigned major = (hex >> 24) & 0xff, minor = (hex >> 16) & 0xff, micro = (hex >> 8) & 0xff;
	unsigned level = (hex >> 4) & 0xf, serial = hex & 0xf;
	const char *lv = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
	if (level == 0xf)
		return arena_printf(a, "%u.%u.%u", major, minor, micro);
	return arena_printf(a, "%u.%u.%u%s%u", major, minor, micro, lv, serial);
}

/* Before 3.11 the file holds no Py_Version, but it holds PY_VERSION's
 * string, a literal of Py_GetVersion's (CPython's Python/getversion.c
 * formats "%.80s (%.80s) %.80s" from PY_VERSION) in .rodata: "3.8.18",
 * "3.10.0rc2", standing alone or, merged by the linker, the tail of a
 * longer string ("/root/.pyenv/versions/3.8.18").  Since that string is
 * always there, the version is taken only when every string of MINOR's
 * shape there (ending a string, not after a digit or a dot) is the same
 * one; 0 when there is none, or several. */
uint64_t py_version_in_file(struct symbols *s, struct dump_module *m, unsigned minor)
{
	const void *data;
	long n = symbols_section_data(s, m, ".rodata", &data);
	if (n <= 0 || minor > 99)
		return 0;
	const char *p = data, *end = p + n;
	char needle[8];
	int k = snprintf(needle, sizeof(needle), "3.%u.", minor);
	uint64_t found = 0;
	for (const char *at = p; (at = memmem(at, (size_t)(end - at), needle, (size_t)k)) != NULL; at++) {
		if (at > p && ((at[-1] >= '0' && at[-1] <= '9') || at[-1] == '.'))
			continue;
		const char *q = at + k;
		unsigned micro = 0, level = 0xf, serial = 0, digits = 0;
		while (q < end && *q >= '0' && *q <= '9' && digits < 3)
			micro = micro * 10 + (unsigned)(*q++ - '0'), digits++;
		if (!digits || micro > 255)
			continue;
		if (q < end && (*q == 'a' || *q == 'b' || *q == 'r')) {
			level = *q == 'a' ? 0xa : *q == 'b' ? 0xb : 0xc;
			q += *q == 'r' ? 1 : 0;
			if (q >= end || (level == 0xc && *q != 'c'))
				continue;
			q++;
			digits = 0;
			while (q < end && *q >= '0' && *q <= '9' && digits < 2)
				serial = serial * 10 + (unsigned)(*q++ - '0'), digits++;
			if (!digits || serial > 15)
				continue;
		}
		if (q >= end || *q != '\0')
			continue;    /* "3.8.18+", or a longer string */
		uint64_t hex = (3u << 24) | (minor << 16) | (micro << 8) | (level << 4) | serial;
		if (found && found != hex)
			return 0;
		found = hex;
	}
	return found;
}

/* 3.13+: _Py_DebugOffsets at the start of _PyRuntime (debug_offsets.c),
 * read before the table is chosen (its free-threaded flag picks the table)
 * and applied after: its offsets replace the table's; if they differ, the
 * build is not the one the table was made from, and for a pre-release that
 * means its other fields cannot be trusted either. */
struct dof_read {
	struct pc_error *err;        /* py_debug_offsets_read's */
	struct py_debug_offsets o;
};

/* NULL, or the refusal; *UNREADABLE when the offsets themselves cannot
 * be read (the report then stands, with no interpreter). */
static struct pc_error *apply_debug_offsets(struct py_ctx *c, struct py_layout *L, const struct dof_read *dr,
					    bool *unreadable)
{
	const struct py_debug_offsets *o = &dr->o;
	if (dr->err && dr->err->code == PC_ENOTCAPTURED) {
		c->state_missing = arena_strdup(c->a, dr->err->message);
		*unreadable = true;
		return NULL;
	}
	if (dr->err) {
		struct pc_error *e = pc_error_new(PC_EUNSUPPORTED, NULL, "%s: not supported (--layout=dwarf reads "
						  "a build with debug info from its DWARF instead)", dr->err->message);
		if (e->code == PC_EUNSUPPORTED && dr->err->has_address) { /* not the static out of memory */
			e->address = dr->err->address;
			e->has_address = true;
		}
		return e;
	}
	if (o->free_threaded != py_layout_free_threaded(L)) {
		return pc_error_new(PC_EUNSUPPORTED, NULL, "CPython %s's debug offsets say it is %s build, but the layout "
				    "pycore has for it (%s) is of %s build",
				    py_version_string(c->a, o->version),
				    o->free_threaded ? "a free-threaded" : "a default (GIL)", L->source,
				    py_layout_free_threaded(L) ? "a free-threaded" : "a default (GIL)");
	}
	struct py_layout before = *L;
	py_debug_offsets_apply(o, L);
	if (memcmp(&before, L, sizeof(before)) != 0) {
		if (((o->version >> 4) & 0xf) != 0xf)
			return pc_error_new(PC_EUNSUPPORTED, NULL, "CPython %s is a pre-release whose layout "
					    "differs from 3.%u%s's release: not supported (--layout=dwarf "
					    "reads it from its own debug info)",
					    py_version_string(c->a, o->version), L->minor,
					    o->free_threaded ? "t" : "");
		model_warn(c->r, "this CPython %s build's layout differs from pycore's table; "
			   "its own debug offsets are used, other fields may be wrong",
			   py_version_string(c->a, o->version));
	}
	return NULL;
}


/* Does the table fit this build?  The type of PyCode_Type must be
 * PyType_Type when read at the table's ob_type offset (a build with
 * another object header, such as Py_TRACE_REFS, fails this). */
static bool table_fits(struct py_ctx *c, const struct py_layout *L, uint64_t code_type, uint64_t type_type)
{
	uint64_t t;
	if (!code_type || !type_type)
		return true; /* nothing to check against */
	if (L->object_type < 0)
		return false;
	if (py_rd_ptr(c, code_type + (uint64_t)L->object_type, &t) != 0)
		return true; /* not in the dump (a stack-only minidump): cannot tell */
	return t == type_type;
}


/* The table, or the interpreter's own DWARF: always with --layout=dwarf;
 * with auto, when there is no table or it does not fit this build. */
static struct pc_error *choose_layout(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt,
				      unsigned minor, struct py_layout *L)
{
	struct dump_module *m = rt->mod;
	bool have_table = L->minor != 0;
	bool fits = have_table && table_fits(c, L, rt->sym[PY_SYM_CODE_TYPE], rt->sym[PY_SYM_TYPE_TYPE]);
	if (c->opt->layout == LAYOUT_TABLE || (c->opt->layout == LAYOUT_AUTO && fits)) {
		if (!have_table)
			return pc_error_new(PC_EUNSUPPORTED, NULL, "no layout table for CPython 3.%u", minor);
		return NULL;
	}
	Dwarf *dw = symbols_dwarf(s, m);
	struct py_layout from;
	const char *dwhy = "the interpreter has no DWARF (debug info)";
	if (dw && py_layout_from_dwarf(dw, minor, &from, &dwhy) == 0) {
		*L = from;
		c->layout_from_dwarf = true;
		if (c->opt->layout == LAYOUT_AUTO)
			model_warn(c->r, "pycore's 3.%u table does not fit this build: its layout was read "
				   "from the interpreter's own DWARF", minor);
		return NULL;
	}
	if (c->opt->layout == LAYOUT_DWARF || !have_table)
		return pc_error_new(PC_EUNSUPPORTED, NULL, "cannot take CPython 3.%u's layout from %s: %s",
				    minor, m->path, dwhy);
	model_warn(c->r, "pycore's 3.%u table does not fit this build and %s: the report may be wrong",
		   minor, dwhy);
	c->r->incomplete = true;
	return NULL;
}


struct pc_error *py_choose_layout(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt,
				  struct py_layout *L, uint64_t *hexversion, bool *unreadable)
{
	struct dump *d = c->d;
	bool scanned = strcmp(rt->located_by, "scan") == 0;
	uint64_t hex = 0;
	*unreadable = false;
	if (strcmp(rt->located_by, "debug-offsets") == 0)
		dump_read_u64(d, rt->sym[PY_SYM_RUNTIME] + 8, &hex);
	if (rt->sym[PY_SYM_VERSION]) {
		uint32_t v;
		if (dump_read_u32(d, rt->sym[PY_SYM_VERSION], &v) == PC_OK)
			hex = v;
	}
	unsigned minor = hex ? (unsigned)((hex >> 16) & 0xff)
			 : scanned ? rt->scanned_minor : py_minor_from_name(rt->mod->path, 3);
	if (!minor && d->executable)
		minor = py_minor_from_name(d->executable, 3);
	if (!minor) {
		/* Python 2 has an interpreter list too, under the same name */
		unsigned two = py_minor_from_name(rt->mod->path, 2);
		if (!two && d->executable)
			two = py_minor_from_name(d->executable, 2);
		if (two)
			return pc_error_new(PC_EUNSUPPORTED, NULL, "CPython 2.%u is not supported (pycore "
					    "reads 3.6 to 3.15)", two);
	}
	uint64_t word;
	if (!minor && dump_read_u64(d, rt->sym[PY_SYM_RUNTIME], &word) != PC_OK) {
		/* neither the version nor the state is in the dump */
		c->state_missing = arena_printf(c->a, "_PyRuntime (0x%llx) is not captured, and %s does not "
						"say its version", (unsigned long long)rt->sym[PY_SYM_RUNTIME],
						rt->mod->path);
		*unreadable = true;
		return NULL;
	}
	if (!minor)
		return pc_error_new(PC_EUNSUPPORTED, NULL, "%s holds a CPython interpreter but its "
				    "version cannot be told", rt->mod->path);
	struct dof_read dr = { .err = NULL };
	if (minor >= 13)
		dr.err = py_debug_offsets_read(d, rt->sym[PY_SYM_RUNTIME], hex, &dr.o);
	bool ft = minor >= 13 && !dr.err && dr.o.free_threaded;
	const struct py_layout *table = py_layout_for(minor, ft);
	static const struct py_layout none = { .object_tid = -1 };
	struct pc_error *e = NULL;
	if (!table && (minor < 6 || minor > 15)) {
		e = pc_error_new(PC_EUNSUPPORTED, NULL, "CPython 3.%u is not supported (pycore reads 3.6 "
				 "to 3.15)", minor);
		goto out;
	}
	*L = table ? *table : none;
	c->L = L;
	*hexversion = hex;
	e = choose_layout(c, s, rt, minor, L);
	if (e || minor < 13)
		goto out;
	if (dr.err && dr.err->code == PC_EUNSUPPORTED && c->layout_from_dwarf) {
		/* a pre-release's own DWARF knows its layout better than a
		 * _Py_DebugOffsets pycore has no description of */
		model_warn(c->r, "_Py_DebugOffsets not used (%s): the layout is the interpreter's own DWARF's",
			   dr.err->message);
		goto out;
	}
	e = apply_debug_offsets(c, L, &dr, unreadable);
out:
	pc_error_free(dr.err);
	return e;
}
