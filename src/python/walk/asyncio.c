/* asyncio: every event loop's tasks, each one's coroutine stack, and who
 * awaits whom, read without running anything.
 *
 * Facts used, by version (CPython 3.8 to 3.15; Lib/asyncio/ and
 * Modules/_asynciomodule.c of each version):
 * - the tasks: asyncio.tasks._all_tasks (3.8-3.11) or _scheduled_tasks
 *   (3.12, 3.13), a weakref.WeakSet whose instance attribute `data` is a
 *   set of weak references (PyWeakReference.wr_object is the first field
 *   after the object header; a dead one holds None), plus
 *   asyncio.tasks._eager_tasks (3.12, 3.13), a set of tasks;
 *   asyncio.tasks._current_tasks maps each loop to the task it runs now.
 *   The C module shares these very objects (tasks.py imports them from
 *   _asyncio), so C and pure-Python tasks are found alike up to 3.13;
 *   from 3.14 the C tasks are in per-thread lists instead (where:
 *   runtime/asyncio_offsets.c), linked while pending (a done task is
 *   unlinked: the registry is what all_tasks() gives), and
 *   _scheduled_tasks holds the others;
 * - the future a task waits on is its _fut_waiter; gather's future keeps
 *   its children in the attribute _children; a task whose coroutine waits
 *   in TaskGroup.__aexit__ (or _aexit, 3.13+) awaits the group's children,
 *   the set _tasks of that frame's self; a C Future's __await__
 *   iterator (_asyncio.FutureIter) holds the future right after its header;
 * - the loop's thread: BaseEventLoop.run_forever sets the loop's
 *   attribute _thread_id to threading.get_ident() while it runs, None after;
 *   uvloop's Loop (a Cython cdef class, uvloop/loop.pxd, the same from
 *   v0.14.0 to v0.22.1) holds after its object header __pyx_vtab, uvloop
 *   (uv_loop_t *), _coroutine_debug_set (bint, a C int),
 *   _coroutine_origin_tracking_saved_depth (int), slow_callback_duration
 *   (object), _closed, _debug, _running, _stopping (bint), _thread_id
 *   (uint64_t): _running at header + 40, _thread_id at header + 48;
 *   Loop._run (loop.pyx) sets _thread_id to PyThread_get_thread_ident()
 *   and _running to 1 while it runs, both 0 after; a task its loop runs
 *   now (in _current_tasks) proves the loop runs whatever else says.
 * What a future or task is and holds is asyncio_objects.c's, each task's
 * coroutine stack asyncio_stack.c's.
 */
#include "python/walk/asyncio.h"

#include <string.h>

#define MAX_TASKS         100000
#define MAX_GATHER_DEPTH  32
#define MAX_CHILDREN      100000

struct task {
	struct fut f;
	uint64_t group;      /* the TaskGroup in whose __aexit__ its coroutine waits */
	struct model_task *m;
	struct model_loop *loop;
	bool current;        /* its loop's entry of _current_tasks */
};


/* ------------------------------------------------------------------------
 * The registries
 * ------------------------------------------------------------------------ */

static struct model_loop *loop_of(struct aio *w, uint64_t loop)
{
	struct py_ctx *c = w->c;
	bool found;
	struct by_addr *e = loop ? addrtab_get(&w->loops_at, loop, &found) : NULL;
	if (e && found)
		return e->p;
	struct model_loop *l = arena_alloc(c->a, sizeof(*l));
	if (!l || ptrvec_push(c->a, &w->mi->loops, l) != 0)
		return NULL;
	l->address = loop;
	l->thread = -1;
	l->running = -1;
	if (e)
		e->p = l;
	return l;
}

static struct task *task_at(struct aio *w, uint64_t addr)
{
	bool found;
	struct by_addr *e = addrtab_get(&w->tasks_at, addr, &found);
	return e && found ? e->p : NULL;
}

static int add_task(struct py_ctx *c, uint64_t obj, uint64_t unused, void *arg)
{
	struct aio *w = arg;
	(void)unused;
	enum kind k = aio_kind_of(w, obj);
	if (!is_task(k))
		return 0;
	if (w->tasks.n >= MAX_TASKS) {
		w->capped = true;
		return 1;
	}
	bool found;
	struct by_addr *e = addrtab_get(&w->tasks_at, obj, &found);
	if (!e || found)
		return 0;
	struct task *t = arena_alloc(c->a, sizeof(*t));
	struct model_task *m = arena_alloc(c->a, sizeof(*m));
	if (!t || !m || ptrvec_push(c->a, &w->tasks, t) != 0)
		return 1;
	e->p = t;
	t->m = m;
	m->address = obj;
	if (aio_read_future(w, obj, k, &t->f) != 0) {
		m->error = "the task object is not captured";
		m->error_info = model_err_at(PC_ENOTCAPTURED, obj);
		m->state = NULL;
	}
	t->loop = loop_of(w, t->f.loop);
	if (t->loop)
		ptrvec_push(c->a, &t->loop->tasks, m);
	return 0;
}

/* A weak reference in a WeakSet's data: its referent. */
static int add_weak_task(struct py_ctx *c, uint64_t ref, uint64_t unused, void *arg)
{
	struct aio *w = arg;
	uint64_t obj;
	(void)unused;
	if (py_rd_ptr(c, ref + w->hdr, &obj) != 0 || !obj)
		return 0;
	return add_task(c, obj, 0, arg);
}

/* The tasks of weakref.WeakSet WS. */
static void weakset_tasks(struct aio *w, uint64_t ws)
{
	struct py_ctx *c = w->c;
	uint64_t data = py_attr(c, ws, "data");
	if (!data || py_type_of(c, data, NULL) != PYT_SET || py_set_items(c, data, MAX_TASKS, add_weak_task, w) != 0) {
		model_warn(c->r, "interpreter %lld: asyncio's task registry is not captured whole",
			   (long long)w->mi->id);
		c->r->incomplete = true;
	}
}

/* _current_tasks: loop -> the task it runs now. */
static int current_task(struct py_ctx *c, uint64_t loop, uint64_t task, void *arg)
{
	struct aio *w = arg;
	add_task(c, task, 0, w);
	struct task *t = task_at(w, task);
	if (t && t->f.loop == loop)
		t->current = true;
	return 0;
}

/* 3.14+: the C tasks linked into the list whose head node is at HEAD. */
static void linked_tasks(struct aio *w, uint64_t head, const char *whose)
{
	struct py_ctx *c = w->c;
	uint64_t node_at = w->hdr + (uint64_t)w->tl.task_node, node, prev = head;
	if (py_rd_ptr(c, head, &node) != 0)
		goto broken;
	for (size_t n = 0; node != head; n++) {
		uint64_t back, task = node - node_at;
		/* each node's prev is the one before: the list is whole */
		if (n >= MAX_TASKS || !node || py_rd_ptr(c, node + 8, &back) != 0 || back != prev ||
		    !is_task(aio_kind_of(w, task)))
			goto broken;
		if (add_task(c, task, 0, w) != 0)
			return;
		prev = node;
		if (py_rd_ptr(c, node, &node) != 0)
			goto broken;
	}
	return;
broken:
	model_warn(c->r, "interpreter %lld: the asyncio task list of %s is not captured whole",
		   (long long)w->mi->id, whose);
	c->r->incomplete = true;
}

/* 3.14+: every thread's C tasks, and those of threads gone. */
static void thread_task_lists(struct aio *w, uint64_t interp)
{
	struct py_ctx *c = w->c;
	const struct py_layout *L = c->L;
	const struct py_task_lists *tl = &w->tl;
	uint64_t ts;
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	if (py_rd_ptr(c, interp + L->interp_tstate_head, &ts) != 0)
		ts = 0;
	for (int k = 0; ts && k < PY_MAX_THREADS && addrtab_add(&seen, ts) == 0; k++) {
		uint64_t running;
		linked_tasks(w, ts + (uint64_t)tl->tstate_head, "a thread");
		if (py_rd_ptr(c, ts + (uint64_t)tl->tstate_running_task, &running) == 0 && running) {
			struct task *t = task_at(w, running);
			if (t)
				t->current = true;
		}
		if (py_rd_ptr(c, ts + L->tstate_next, &ts) != 0)
			break;
	}
	addrtab_free(&seen);
	linked_tasks(w, interp + (uint64_t)tl->interp_head, "the interpreter");
}

/* uvloop's Loop, along tp_base (its Python subclass uvloop.Loop). */
static bool is_uvloop(struct py_ctx *c, uint64_t type)
{
	for (int i = 0; i < 64 && type; i++) {
		const char *n = py_type_tp_name(c, type);
		if (n && strcmp(n, "uvloop.loop.Loop") == 0)
			return true;
		if (py_rd_ptr(c, type + c->L->type_base, &type) != 0)
			break;
	}
	return false;
}

static void loop_thread_is(struct aio *w, struct model_loop *l, uint64_t ident)
{
	for (size_t i = 0; i < w->mi->threads.n; i++) {
		const struct model_thread *t = w->mi->threads.items[i];
		if (t->ident == ident) {
			l->thread = t->tid;
			l->thread_name = t->name;
			return;
		}
	}
}

/* Whether loop L runs, and on which thread: asyncio's _thread_id (an
 * ident, None when not running), or uvloop's _running and _thread_id. */
static void loop_thread(struct aio *w, struct model_loop *l)
{
	struct py_ctx *c = w->c;
	uint64_t type;
	if (py_type_of(c, l->address, &type) == PYT_UNREADABLE)
		return;
	l->type = py_type_name(c, type);
	if (is_uvloop(c, type)) {
		int32_t running;
		uint64_t ident;
		if (py_rd_i32(c, l->address + w->hdr + 40, &running) != 0 ||
		    py_rd_ptr(c, l->address + w->hdr + 48, &ident) != 0)
			return;
		if (running == 0 && ident == 0)
			l->running = 0;
		else if (running == 1 && ident) {
			l->running = 1;
			loop_thread_is(w, l, ident);
		}
		return;
	}
	uint64_t id = py_attr(c, l->address, "_thread_id");
	int64_t ident;
	if (id && py_type_of(c, id, NULL) == PYT_NONE) {
		l->running = 0;
		return;
	}
	if (!id || py_type_of(c, id, NULL) != PYT_INT || py_long_i64(c, id, &ident) != 0 || !ident)
		return;
	l->running = 1;
	loop_thread_is(w, l, (uint64_t)ident);
}

/* A loop one of whose tasks runs now runs (its thread unknown, unless
 * told); one whose own state says it does not, while a task of it runs,
 * cannot be told. */
static void loop_check(struct aio *w, struct model_loop *l)
{
	bool task_runs = false;
	for (size_t i = 0; i < l->tasks.n; i++)
		task_runs |= ((const struct model_task *)l->tasks.items[i])->running;
	if (!task_runs || l->running == 1)
		return;
	if (l->running == 0)
		model_warn(w->c->r, "event loop at 0x%llx says it is not running, yet a task of it runs: "
			   "whether it runs cannot be told", (unsigned long long)l->address);
	l->running = l->running == 0 ? -1 : 1;
}

/* ------------------------------------------------------------------------
 * Who awaits whom
 * ------------------------------------------------------------------------ */

static void link(struct aio *w, struct task *waiter, uint64_t addr, struct addrtab *linked)
{
	struct task *t = task_at(w, addr);
	if (!t || addrtab_add(linked, addr) != 0)
		return;
	ptrvec_push(w->c->a, &waiter->m->awaiting, t->m);
	ptrvec_push(w->c->a, &t->m->awaited_by, waiter->m);
}

/* The tasks FUT stands for: itself, or (gather) its children's. */
static void awaits(struct aio *w, struct task *waiter, uint64_t fut, int depth, size_t *budget,
		   struct addrtab *linked)
{
	struct py_ctx *c = w->c;
	enum kind k = aio_kind_of(w, fut);
	if (is_task(k)) {
		link(w, waiter, fut, linked);
		return;
	}
	if (!is_future(k) || depth >= MAX_GATHER_DEPTH)
		return;
	uint64_t list = py_attr(c, fut, "_children"), items;
	int64_t n;
	if (!list || py_type_of(c, list, NULL) != PYT_LIST ||
	    py_rd_i64(c, list + c->L->var_size, &n) != 0 || n < 0 ||
	    py_rd_ptr(c, list + c->L->list_item, &items) != 0)
		return;
	for (int64_t i = 0; i < n && *budget; i++, (*budget)--) {
		uint64_t child;
		if (py_rd_ptr(c, items + 8 * (uint64_t)i, &child) != 0)
			return;
		awaits(w, waiter, child, depth + 1, budget, linked);
	}
}

/* The TaskGroup whose __aexit__ (3.11, 3.12; _aexit from 3.13, called by
 * it; Lib/asyncio/taskgroups.py) one of M's frames runs: that frame's self,
 * a TaskGroup waiting for its children, the set _tasks.  0 none. */
static uint64_t task_group(struct aio *w, const struct model_task *m)
{
	struct py_ctx *c = w->c;
	for (size_t i = 0; c->L->minor >= 11 && i < m->stack.n; i++) {
		const struct model_frame *f = m->stack.items[i];
		uint64_t self, type;
		if (!f->file || !f->function || !f->frame_address || strcmp(pc_basename(f->file), "taskgroups.py") != 0 ||
		    (strcmp(f->function, "__aexit__") != 0 && strcmp(f->function, "_aexit") != 0))
			continue;
		self = py_frame_arg0(c, f->frame_address);
		const char *tn = self && py_type_of(c, self, &type) == PYT_OTHER ? py_type_name(c, type) : NULL;
		if (tn && strcmp(tn, "asyncio.taskgroups.TaskGroup") == 0)
			return self;
	}
	return 0;
}

struct group_link {
	struct aio *w;
	struct task *parent;
	struct addrtab *linked;
};

static int group_child(struct py_ctx *c, uint64_t child, uint64_t unused, void *arg)
{
	struct group_link *g = arg;
	(void)c;
	(void)unused;
	link(g->w, g->parent, child, g->linked);
	return 0;
}

/* ------------------------------------------------------------------------
 * Each task
 * ------------------------------------------------------------------------ */

static void describe(struct aio *w, struct task *t)
{
	struct py_ctx *c = w->c;
	struct model_task *m = t->m;
	const struct fut *f = &t->f;
	const char *why;
	if (f->name) {
		int64_t n;
		enum py_type pt = py_type_of(c, f->name, NULL);
		if (pt == PYT_STR)
			m->name = py_str_utf8(c, f->name, PY_MAX_NAME, &why);
		else if (pt == PYT_INT && py_long_i64(c, f->name, &n) == 0)
			m->name = arena_printf(c->a, "Task-%lld", (long long)n);
	}
	switch (f->state) {
	case FUT_PENDING: {
		bool cancelling = f->cancels > 0;
		if (!cancelling && c->L->minor <= 10 && f->fut_waiter) {
			/* before 3.11 cancel() of a waiting task cancels only the future
			 * it waits on */
			struct fut wf;
			enum kind k = aio_kind_of(w, f->fut_waiter);
			cancelling = is_future(k) && aio_read_future(w, f->fut_waiter, k, &wf) == 0 &&
				     wf.state == FUT_CANCELLED;
		}
		m->state = cancelling ? "cancelling" : "pending";
		break;
	}
	case FUT_CANCELLED: m->state = "cancelled"; break;
	case FUT_FINISHED: m->state = "done"; break;
	default:
		if (!m->error) {
			m->error = "the task's state is not one asyncio writes";
			m->error_info = model_err_at(PC_ECORRUPT, m->address);
		}
	}
	if (f->state == FUT_FINISHED) {
		static const struct repr_limits lim = { 256, 100, 8 };
		uint64_t type;
		if (f->has_result && f->result) {
			const char *err = NULL;
			m->result = py_repr(c, f->result, &lim, &err);
		} else if (py_type_of(c, f->exception, &type) == PYT_OTHER) {
			const char *err = NULL;
			m->exception_type = py_type_name(c, type);
			m->exception_message = py_exception_message(c, f->exception, &err);
		}
	}
	if (f->fut_waiter && py_type_of(c, f->fut_waiter, NULL) != PYT_NONE) {
		uint64_t type;
		if (py_type_of(c, f->fut_waiter, &type) != PYT_UNREADABLE) {
			m->waiter = f->fut_waiter;
			m->waiter_type = py_type_name(c, type);
		}
	}
	uint64_t q;
	if (f->coro && aio_kind_of(w, f->coro) == K_CORO &&
	    py_rd_ptr(c, f->coro + w->hdr + (uint64_t)w->gl->qualname, &q) == 0)
		m->coroutine = py_str_utf8(c, q, PY_MAX_NAME, &why);
	if (f->state == FUT_PENDING && f->coro) {
		bool running;
		aio_coroutine_stack(w, m, f->coro, &running);
		m->running = running || t->current;
		t->group = task_group(w, m);
	}
}

void py_asyncio(struct py_ctx *c, uint64_t interp, struct model_interp *mi)
{
	const struct py_layout *L = c->L;
	uint64_t dict, set, current;
	if (py_module_dict(c, interp, "asyncio.tasks", &dict) != 0) {
		mi->asyncio_read = true; /* asyncio not imported: no loops */
		return;
	}
	if (L->minor < 8 || L->minor > 15) {
		model_warn(c->r, "interpreter %lld: asyncio tasks are not read for Python 3.%u", (long long)mi->id,
			   L->minor);
		return;
	}
	struct aio w = { .c = c, .mi = mi, .hdr = (uint64_t)L->object_type + 8, .fl = &aio_fut_layouts[L->minor],
			 .gl = &aio_gen_layouts[L->minor], .tasks_at = ADDRTAB_INIT(struct by_addr),
			 .loops_at = ADDRTAB_INIT(struct by_addr), .kinds = ADDRTAB_INIT(struct type_kind),
			 .frames_at = ADDRTAB_INIT(struct by_addr) };
	if (L->minor >= 14 && py_asyncio_task_lists(c, w.hdr, w.fl->coro, w.fl->name, &w.tl) != 0) {
		model_warn(c->r, "interpreter %lld: asyncio tasks are not read: the _asyncio module's debug "
			   "offsets do not describe the task layout pycore knows for 3.%u", (long long)mi->id, L->minor);
		return;
	}
	mi->asyncio_read = true;
	/* the module's registries, in one pass over its dict */
	const char *names[3] = { L->minor <= 11 ? "_all_tasks" : "_scheduled_tasks", "_current_tasks",
				 "_eager_tasks" };
	uint64_t reg[3];
	py_dict_get_strs(c, dict, names, reg, L->minor >= 12 ? 3 : 2);
	if ((set = reg[0]) != 0)
		weakset_tasks(&w, set);
	if (L->minor >= 12 && (set = reg[2]) != 0 && py_type_of(c, set, NULL) == PYT_SET)
		py_set_items(c, set, MAX_TASKS, add_task, &w);
	if (L->minor >= 14)
		thread_task_lists(&w, interp);
	if ((current = reg[1]) != 0 && py_type_of(c, current, NULL) == PYT_DICT)
		py_dict_items(c, current, current_task, &w);
	if (w.capped)
		model_warn(c->r, "interpreter %lld: more than %d asyncio tasks; the rest are left out",
			   (long long)mi->id, MAX_TASKS);
	for (size_t i = 0; i < mi->loops.n; i++)
		loop_thread(&w, mi->loops.items[i]);
	size_t budget = MAX_CHILDREN;
	for (size_t i = 0; i < w.tasks.n && !py_out_of_time(c); i++) {
		struct task *t = w.tasks.items[i];
		describe(&w, t);
		struct addrtab linked = ADDRTAB_INIT(uint64_t);
		if (t->f.state == FUT_PENDING && t->f.fut_waiter)
			awaits(&w, t, t->f.fut_waiter, 0, &budget, &linked);
		uint64_t children = t->group ? py_attr(c, t->group, "_tasks") : 0;
		if (children && py_type_of(c, children, NULL) == PYT_SET) {
			struct group_link g = { &w, t, &linked };
			py_set_items(c, children, MAX_CHILDREN, group_child, &g);
		}
		addrtab_free(&linked);
	}
	for (size_t i = 0; i < mi->loops.n; i++)
		loop_check(&w, mi->loops.items[i]);
	addrtab_free(&w.tasks_at);
	addrtab_free(&w.loops_at);
	addrtab_free(&w.kinds);
	addrtab_free(&w.frames_at);
}
