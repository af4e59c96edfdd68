/* Where asyncio's own structures are, a layout job like the interpreter's:
 * 3.14+'s _asyncio debug offsets (the section .AsyncioDebug), else the
 * interpreter's DWARF, else pycore's tables of where each thread's and
 * interpreter's list of C tasks is.  The walk of the tasks is
 * walk/asyncio.c's. */
#include "python/runtime/dwarf_layout.h"
#include "python/runtime/runtime.h"

#include <string.h>

/* 3.14+ (Modules/_asynciomodule.c, Include/internal/pycore_tstate.h): every
 * C task is linked, from its creation until it is freed, into the list of
 * the thread that made it (_PyThreadStateImpl.asyncio_tasks_head), or of
 * the interpreter once that thread is gone (PyInterpreterState.
 * asyncio_tasks_head); TaskObj.task_node links it (struct llist_node:
 * next, prev), and asyncio_running_task is the task the thread runs now.
 * The module's own debug offsets (_AsyncioDebug: struct py_asyncio_offsets)
 * give these where its file is at hand, and are checked against the task
 * layout the walk knows (walk/asyncio_objects.c); else these tables.
 * Default builds: from the DWARF of Debian's builds (gdb: print
 * &((_PyThreadStateImpl *)0)->asyncio_tasks_head), equal to their
 * _AsyncioDebug.  Free-threaded builds: offsetof in Debian's
 * libpython3.X-dev headers compiled with Py_GIL_DISABLED (as versions/
 * 3.14t.h are made; the same headers without it give the default entries
 * exactly): the thread state's fields are where the default build has
 * them, the interpreter's list is further on; TaskObj has no field of a
 * free-threaded build's own, so after the (larger) header task_node is
 * where the default build has it. */
static const struct py_task_lists task_lists[] = {
	[14] = { 136, 0x370, 0x368, 0x2a80 },
	[15] = { 136, 0x418, 0x408, 0x2a68 },
};

static const struct py_task_lists task_lists_ft[] = {
	[14] = { 136, 0x370, 0x368, 0x4398 },
	[15] = { 136, 0x418, 0x408, 0x4368 },
};

void py_find_asyncio_offsets(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct py_asyncio_offsets o;
	if (c->L->minor < 14)
		return;
	for (size_t i = 0; i <= c->d->nmodules; i++) {
		struct dump_module *m = i < c->d->nmodules ? &c->d->modules[i] : interp_module;
		const char *slash = m && m->path ? strrchr(m->path, '/') : NULL;
		const char *base = slash ? slash + 1 : m ? m->path : NULL;
		if (i < c->d->nmodules && (!base || strncmp(base, "_asyncio.", 9) != 0))
			continue;
		if (m && symbols_section(s, m, ".AsyncioDebug", &o, sizeof(o)) == (long)sizeof(o)) {
			c->aio_offsets = arena_alloc(c->a, sizeof(o));
			if (c->aio_offsets)
				*c->aio_offsets = o;
			return;
		}
	}
	/* a build pycore's tables do not describe (a pre-release): its DWARF */
	static const char *const alts[] = {
		"_PyThreadStateImpl:asyncio_tasks_head|struct _PyThreadStateImpl:asyncio_tasks_head",
		"_PyThreadStateImpl:asyncio_running_task|struct _PyThreadStateImpl:asyncio_running_task",
		"struct _is:asyncio_tasks_head",
	};
	int64_t v[3];
	struct Dwarf *dw = c->layout_from_dwarf && interp_module ? symbols_dwarf(s, interp_module) : NULL;
	if (!dw || py_dwarf_values(dw, alts, 3, v) != 0 || v[0] < 0 || v[1] < 0 || v[2] < 0 ||
	    v[0] > (1 << 20) || v[1] > (1 << 20) || v[2] > (1 << 24))
		return;
	c->aio_dwarf = arena_alloc(c->a, sizeof(*c->aio_dwarf));
	if (c->aio_dwarf)
		*c->aio_dwarf = (struct py_aio_lists){ v[0], v[1], v[2] };
}

int py_asyncio_task_lists(const struct py_ctx *c, uint64_t hdr, int task_coro, int task_name,
			  struct py_task_lists *tl)
{
	const struct py_asyncio_offsets *o = c->aio_offsets;
	unsigned minor = c->L->minor;
	if (!o) {
		*tl = py_layout_free_threaded(c->L) ? task_lists_ft[minor] : task_lists[minor];
		const struct py_aio_lists *d = c->aio_dwarf;
		if (d) {
			tl->tstate_head = (int)d->tstate_head;
			tl->tstate_running_task = (int)d->tstate_running_task;
			tl->interp_head = (int)d->interp_head;
		}
		return 0;
	}
	if (o->task_coro != hdr + (uint64_t)task_coro || o->task_name != hdr + (uint64_t)task_name ||
	    o->task_node < hdr || o->task_node + 16 > o->task_size || o->task_size > 4096 ||
	    o->tstate_tasks_head + 16 > o->tstate_size || o->tstate_running_task + 8 > o->tstate_size ||
	    o->tstate_size > (1 << 20) || o->interp_tasks_head + 16 > o->interp_size || o->interp_size > (1 << 24))
		return -1;
	*tl = (struct py_task_lists){ (int)(o->task_node - hdr), (int)o->tstate_tasks_head,
				      (int)o->tstate_running_task, (int)o->interp_tasks_head };
	return 0;
}
