/* The runtime and its layouts: where CPython's runtime lies in a dump, its
 * version and the struct offsets that read it; reads memory and symbols only. */
#ifndef PYCORE_PYTHON_RUNTIME_H
#define PYCORE_PYTHON_RUNTIME_H

#include "python/python_int.h"

/* The symbols the runtime is found by, and where it was found. */
enum {
	PY_SYM_RUNTIME, PY_SYM_INTERP_HEAD, PY_SYM_VERSION, PY_SYM_CODE_TYPE, PY_SYM_TSTATE_CURRENT,
	PY_SYM_TYPE_TYPE,
	PY_SYM_GC_GENERATION0,       /* 3.6: the GC's lists are gcmodule.c's static state */
	PY_NSYMS
};

struct py_runtime {
	struct dump_module *mod;     /* the interpreter's module */
	uint64_t sym[PY_NSYMS];      /* addresses, 0 when unknown */
	const char *located_by;      /* "symbol", "debug-offsets" or "scan" */
	unsigned scanned_minor;      /* the version whose layout the scan matched */
};

/* ---- runtime.c ---- */

/* Find the runtime: by symbols, then the debug offsets' cookie, then a
 * scan (each fallback warns in R).  NULL, or PC_ENOTPYTHON's error. */
struct pc_error *py_find_runtime(struct dump *d, const struct locate *loc, struct symbols *s,
				 struct model_report *r, struct py_runtime *rt);
/* RT was refused (REFUSED says why, for the warning): the next candidate
 * of the methods after RT's (the debug offsets' cookie, then the scan)
 * into RT, warned in R; false when there is none. */
bool py_find_runtime_next(struct dump *d, struct model_report *r, struct py_runtime *rt, const char *refused);
/* A module named like an interpreter (libpython*, python*), or NULL: a
 * dump of such a process whose state is missing is a partial report. */
struct dump_module *py_named_module(struct dump *d);
/* "python3.12" or "libpython3.6m.so" -> 12 or 6 for MAJOR 3 ("python2.7"
 * -> 7 for MAJOR 2); 0 when the name says nothing. */
unsigned py_minor_from_name(const char *path, unsigned major);

/* ---- layout_choose.c ---- */

/* Tell the version and choose the layout into *L (c->L then points to
 * it); *HEXVERSION is the full version when known, else 0.  NULL, or
 * PC_EUNSUPPORTED's error; *UNREADABLE when the report stands but no
 * interpreter can be read (c->state_missing, or a warning, says why). */
struct pc_error *py_choose_layout(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt,
				  struct py_layout *L, uint64_t *hexversion, bool *unreadable);
/* "3.12.1", "3.15.0a2" from a PY_VERSION_HEX. */
const char *py_version_string(struct arena *a, uint64_t hex);
uint64_t py_version_in_file(struct symbols *s, struct dump_module *m, unsigned minor);

/* ---- layout.c ---- */

/* The table of 3.MINOR's default build, or (FREE_THREADED, 3.13+) of its
 * free-threaded build; NULL when there is none. */
const struct py_layout *py_layout_for(unsigned minor, bool free_threaded);

/* ---- asyncio_offsets.c ---- */

/* 3.14+: the _asyncio module's debug offsets (Py_AsyncioModuleDebugOffsets
 * in Modules/_asynciomodule.c, the section .AsyncioDebug of the module
 * that defines _AsyncioDebug: _asyncio's own, or the interpreter's when
 * it is built in), offsets from the start of each object, header
 * included; checked against the DWARF of Debian's 3.14 build (gdb: ptype
 * /o Py_AsyncioModuleDebugOffsets). */
struct py_asyncio_offsets {
	uint64_t task_size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set,
		task_coro, task_node;
	uint64_t interp_size, interp_tasks_head;
	uint64_t tstate_size, tstate_running_loop, tstate_running_task, tstate_tasks_head;
};
/* Find them, in the interpreter's module or a module _asyncio.*, and keep
 * them in C (3.14+; the modules' files must be at hand). */
void py_find_asyncio_offsets(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module);
/* 3.14+: where the C tasks' lists are (offsets: the node in a task after
 * its object header; the list heads and running task in a thread state,
 * the list head in an interpreter state). */
struct py_task_lists {
	int task_node;
	int tstate_head, tstate_running_task, interp_head;
};
/* Into *TL: the module's debug offsets when found, if they agree with
 * what the caller knows of a task (an object header of HDR bytes, then
 * its coroutine at TASK_CORO and its name at TASK_NAME); else pycore's
 * table for the version, with the thread and interpreter state's fields
 * from the interpreter's DWARF where that was read.  -1 when they
 * disagree. */
int py_asyncio_task_lists(const struct py_ctx *c, uint64_t hdr, int task_coro, int task_name,
			  struct py_task_lists *tl);

#endif
