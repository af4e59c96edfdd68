/* Lock waits: the object a blocked thread waits on, read from its frames
 * without running anything, and only where the memory shows it.
 *
 * Two kinds of evidence:
 * - the thread's innermost Python frames run a waiting method of the
 *   standard library written in Python (threading.py: Condition.wait,
 *   Event.wait, Semaphore.acquire, Barrier.wait, Thread.join, the
 *   pure-Python _RLock.acquire; queue.py: Queue.get, Queue.put, Queue.join):
 *   the frame's function and file name it, its first argument (self, slot
 *   0 of the frame's fast locals) is the object, and self's type (or one
 *   of its bases) must be the class the method belongs to.  The outermost
 *   of a run of such frames wins (Queue.get, not the Condition it waits in);
 * - the thread sleeps in futex(2) (its registers in the dump: the system
 *   call it is in is the platform's futex, its first argument the futex
 *   word) on the lock of a _thread.lock,
 *   _thread.RLock or _queue.SimpleQueue that its innermost Python frame
 *   holds, as a variable or on its value stack (a.acquire() leaves the
 *   method descriptor and `a` there; `with a:` the bound __exit__ up to
 *   3.12, `a` itself in 3.13, __enter__ and `a` from 3.14), itself or as
 *   the self of a bound builtin method (PyCFunctionObject: m_ml, m_self
 *   after the header).  The object's first field after its header is its
 *   lock: up to 3.12 a PyThread_type_lock, a glibc sem_t * whose futex
 *   word is its first (Python/thread_pthread.h with USE_SEMAPHORES,
 *   glibc's struct new_sem); from 3.13 a PyMutex * (pyenv's 3.13.0) or the
 *   PyMutex itself, or the SimpleQueue's has_threads_waiting flag, and the
 *   thread parks in the parking lot (Python/parking_lot.c: struct
 *   wait_entry { park_arg, addr, sema, ... }, the futex word being sema's
 *   sem_t, right after the address parked on).  The frame's slots span its
 *   fast locals and its value stack: f_localsplus up to f_valuestack plus
 *   co_stacksize (3.8-3.10; co_stacksize is the int after co_nlocals),
 *   localsplus up to co_nlocalsplus plus co_stacksize (3.11; the int 8
 *   bytes before co_nlocalsplus, gdb: ptype /o PyCodeObject) or the
 *   frame's co_framesize words (3.12+), or its saved stackpointer (3.14+).
 *   Stale slots above the stack's top may hold any object, but only the
 *   lock the thread sleeps on matches.
 * Both need a thread that is not running Python (does not hold the GIL),
 * except in free-threaded builds, which have none.
 *
 * The waited object's owner:
 * - _thread.RLock (Modules/_threadmodule.c, rlockobject): up to 3.13
 *   rlock_owner (the owner's thread ident) and rlock_count follow the
 *   lock pointer after the header; from 3.14 a _PyRecursiveMutex (PyMutex,
 *   then thread, level; Include/internal/pycore_lock.h) whose level is the
 *   count less one while held; its repr is "<locked _thread.RLock object
 *   owner=IDENT count=N at 0x...>" ("unlocked" with owner 0 count 0);
 * - _thread.lock up to 3.12 (lockobject: lock_lock, in_weakreflist, then
 *   the char `locked`): repr "<locked _thread.lock object at 0x...>";
 * - threading._RLock: its _owner and _count attributes;
 * - threading.Thread being joined: its _ident attribute.
 * An ident is mapped to the OS thread through the thread states walked.
 */
#include "python/objects/objects.h"
#include "python/python_int.h"
#include "python/repr/repr.h"
#include "python/walk/walk.h"

#include <string.h>

#define MAX_STACK_SLOTS 4096
#define FRAME_VALUESTACK_FROM_BACK 40   /* PyFrameObject.f_valuestack - f_back (3.8-3.10) */
#define CODE_STACKSIZE_FROM_NLOCALS 4   /* PyCodeObject.co_stacksize - co_nlocals (3.8-3.10) */
#define CODE_STACKSIZE_311_FROM_NLOCALSPLUS 8  /* co_nlocalsplus - co_stacksize (3.11) */

/* Waiting methods written in Python, by file, function and class. */
static const struct py_method {
	const char *file, *function, *cls;
} py_methods[] = {
	{ "threading.py", "wait", "threading.Condition" },
	{ "threading.py", "wait_for", "threading.Condition" },
	{ "threading.py", "wait", "threading.Event" },
	{ "threading.py", "acquire", "threading.Semaphore" },
	{ "threading.py", "__enter__", "threading.Semaphore" },
	{ "threading.py", "wait", "threading.Barrier" },
	{ "threading.py", "_wait", "threading.Barrier" },
	{ "threading.py", "_enter", "threading.Barrier" },
	{ "threading.py", "join", "threading.Thread" },
	{ "threading.py", "_wait_for_tstate_lock", "threading.Thread" },
	{ "threading.py", "acquire", "threading._RLock" },
	{ "threading.py", "__enter__", "threading._RLock" },
	{ "queue.py", "get", "queue.Queue" },
	{ "queue.py", "put", "queue.Queue" },
	{ "queue.py", "join", "queue.Queue" },
};

/* Objects of C types whose waits the thread's futex identifies. */
static const char *const c_waitables[] = { "_thread.lock", "_thread.RLock", "_queue.SimpleQueue" };

static uint64_t header(const struct py_ctx *c)
{
	return (uint64_t)c->L->object_type + 8;
}

/* Whether TYPE is the class named NAME or derives from it. */
static bool type_is(struct py_ctx *c, uint64_t type, const char *name)
{
	for (int depth = 0; type && depth < 64; depth++) {
		const char *n = py_type_name(c, type);
		if (n && strcmp(n, name) == 0)
			return true;
		if (py_rd_ptr(c, type + c->L->type_base, &type) != 0)
			break;
	}
	return false;
}

static uint64_t frame_code(struct py_ctx *c, uint64_t frame)
{
	const struct py_layout *L = c->L;
	uint64_t code;
	if (py_rd_ptr(c, frame + (uint64_t)(L->frame_code >= 0 ? L->frame_code : L->iframe_code), &code) != 0)
		return 0;
	return L->frame_code >= 0 ? code : py_stackref_obj(c, code);
}

/* The object of a waiting method written in Python, run by the frames
 * from FIRST (an index into T's frames) outwards; 0 none. */
static uint64_t python_wait(struct py_ctx *c, const struct model_thread *t, size_t first, uint64_t *type)
{
	uint64_t found = 0;
	for (size_t i = first; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_PYTHON || !f->file || !f->function || !f->frame_address)
			break;
		const char *base = pc_basename(f->file);
		uint64_t self = 0, st = 0;
		bool match = false;
		for (size_t k = 0; k < sizeof(py_methods) / sizeof(py_methods[0]) && !match; k++) {
			const struct py_method *m = &py_methods[k];
			if (strcmp(base, m->file) != 0 || strcmp(f->function, m->function) != 0)
				continue;
			if (!self && ((self = py_frame_arg0(c, f->frame_address)) == 0 ||
				      py_type_of(c, self, &st) == PYT_UNREADABLE))
				break;
			match = type_is(c, st, m->cls);
		}
		if (!match)
			break;
		found = self;
		*type = st;
	}
	return found;
}

static bool c_waitable(struct py_ctx *c, uint64_t obj, uint64_t *type)
{
	const char *tn;
	if (!obj || py_type_of(c, obj, type) != PYT_OTHER || !(tn = py_type_name(c, *type)))
		return false;
	for (size_t k = 0; k < sizeof(c_waitables) / sizeof(c_waitables[0]); k++)
		if (strcmp(tn, c_waitables[k]) == 0)
			return true;
	return false;
}

/* V itself when it is a waitable object, or the object a builtin method V
 * is bound to (PyCFunctionObject.m_self, the second word after the
 * header); 0 otherwise. */
static uint64_t waitable_in(struct py_ctx *c, uint64_t v, uint64_t *type)
{
	uint64_t t, self;
	const char *tn;
	if (c_waitable(c, v, type))
		return v;
	if (!v || py_type_of(c, v, &t) != PYT_OTHER || !(tn = py_type_name(c, t)) ||
	    strcmp(tn, "builtin_function_or_method") != 0 || py_rd_ptr(c, v + header(c) + 8, &self) != 0)
		return 0;
	return c_waitable(c, self, type) ? self : 0;
}

/* Whether the thread sleeping in futex(2) on word FUTEX waits for OBJ: its
 * first field after the header is the lock (up to 3.12 a sem_t * whose
 * futex word is its first; from 3.13 a PyMutex *, or the PyMutex or the
 * SimpleQueue's has_threads_waiting flag inline), and from 3.13 the
 * sleeper is parked: the futex word is the semaphore of its wait_entry,
 * right after the address it parks on. */
static bool futex_waits_for(struct py_ctx *c, uint64_t futex, uint64_t obj)
{
	uint64_t first, parked;
	if (futex < 4096 || py_rd_ptr(c, obj + header(c), &first) != 0)
		return false;
	if (futex == first)
		return true;
	/* an unlocked inline PyMutex reads as a small number, never an address */
	return c->L->minor >= 13 && py_rd_ptr(c, futex - 8, &parked) == 0 && parked >= 4096 &&
	       (parked == obj + header(c) || parked == first);
}

/* Where FRAME's value stack lies: its first slot and the number of slots. */
static int value_stack(struct py_ctx *c, uint64_t frame, uint64_t code, uint64_t *base, size_t *n)
{
	const struct py_layout *L = c->L;
	if (L->frame_code >= 0) {
		int32_t size;
		if (L->minor < 8 || L->minor > 10 ||
		    py_rd_ptr(c, frame + (uint64_t)L->frame_back + FRAME_VALUESTACK_FROM_BACK, base) != 0 ||
		    py_rd_i32(c, code + (uint64_t)L->code_nlocals + CODE_STACKSIZE_FROM_NLOCALS, &size) != 0 ||
		    size < 0)
			return -1;
		*n = (size_t)size;
	} else {
		int32_t nlocalsplus, size;
		bool framesize = L->code_framesize >= 0;
		if (py_rd_i32(c, code + (uint64_t)L->code_nlocalsplus, &nlocalsplus) != 0 || nlocalsplus < 0 ||
		    py_rd_i32(c, code + (uint64_t)(framesize ? L->code_framesize
						   : L->code_nlocalsplus - CODE_STACKSIZE_311_FROM_NLOCALSPLUS),
			      &size) != 0 || size < 0 || (!framesize && L->minor != 11))
			return -1;
		*base = frame + (uint64_t)L->iframe_localsplus + 8 * (uint64_t)nlocalsplus;
		uint64_t end = framesize ? frame + 8 * (uint64_t)size : *base + 8 * (uint64_t)size, sp;
		if (L->iframe_stackpointer >= 0 && py_rd_ptr(c, frame + (uint64_t)L->iframe_stackpointer, &sp) == 0 &&
		    sp >= *base && sp <= end)
			end = sp;
		if (end < *base)
			return -1;
		*n = (size_t)((end - *base) / 8);
	}
	if (*n > MAX_STACK_SLOTS)
		*n = MAX_STACK_SLOTS;
	return 0;
}

/* The dump's thread TID, or NULL. */
static const struct dump_thread *dump_thread_of(const struct py_ctx *c, int64_t tid)
{
	for (size_t i = 0; tid >= 0 && i < c->d->nthreads; i++)
		if (c->d->threads[i].tid == tid)
			return &c->d->threads[i];
	return NULL;
}

/* The futex word thread TID sleeps on: its registers show it inside
 * futex(2), the word's address its first argument.  0 when it is not
 * (or the dump does not say). */
static uint64_t futex_word(struct py_ctx *c, int64_t tid)
{
	const struct dump_thread *dt = dump_thread_of(c, tid);
	return dt && dt->regs.has_syscall && dt->regs.has_syscall_arg0 &&
	       dt->regs.syscall == c->d->platform->sys_futex ? dt->regs.syscall_arg0 : 0;
}

void py_thread_syscalls(struct py_ctx *c, struct model_interp *mi)
{
	for (size_t k = 0; k < mi->threads.n; k++) {
		struct model_thread *t = mi->threads.items[k];
		const struct dump_thread *dt = dump_thread_of(c, t->tid);
		t->in_syscall = dt && dt->regs.has_syscall;
		t->in_syscall_known = dt && dt->regs.syscall_known;
	}
}

/* The lock, RLock or SimpleQueue among FRAME's variables and value stack
 * (or bound to a method there) whose lock the thread's futex word FUTEX
 * is; 0 when none is. */
static uint64_t c_wait(struct py_ctx *c, uint64_t frame, uint64_t futex, uint64_t *type)
{
	uint64_t code = frame_code(c, frame), base, start;
	size_t n;
	if (!code || value_stack(c, frame, code, &base, &n) != 0)
		return 0;
	const struct py_layout *L = c->L;
	start = frame + (uint64_t)(L->frame_code >= 0 ? L->frame_localsplus : L->iframe_localsplus);
	if (base < start || base - start > 8 * (uint64_t)MAX_STACK_SLOTS)
		return 0;
	n += (size_t)((base - start) / 8);
	for (size_t i = 0; i < n; i++) {
		uint64_t v, st;
		if (py_rd_ptr(c, start + 8 * i, &v) != 0)
			return 0;
		if (L->frame_code < 0)
			v = py_stackref_obj(c, v);
		uint64_t obj = waitable_in(c, v, &st);
		if (obj && futex_waits_for(c, futex, obj)) {
			*type = st;
			return obj;
		}
	}
	return 0;
}

/* The owner by its ident: a thread of the process (model_find_thread sees
 * no stale thread state), or none of them (a lock held across fork() by
 * a parent's thread), the ident kept either way. */
static void set_owner(struct py_ctx *c, struct model_wait *w, uint64_t ident)
{
	if (!ident)
		return;
	w->owner_ident_known = true;
	w->owner_ident = ident;
	const struct model_thread *o = model_find_thread(c->r, -1, ident);
	if (o && o->tid >= 0) {
		w->owner = o->tid;
		w->owner_name = o->name;
	} else if (!o) {
		w->owner_elsewhere = dump_tid_of_pthread(c->d, ident) < 0;
	}
}

/* An int attribute of OBJ, false when it has none or another type. */
static bool int_attr(struct py_ctx *c, uint64_t obj, const char *name, int64_t *out)
{
	uint64_t v = py_attr(c, obj, name);
	return v && py_type_of(c, v, NULL) == PYT_INT && py_long_i64(c, v, out) == 0;
}

static void describe(struct py_ctx *c, struct model_wait *w, uint64_t obj, uint64_t type)
{
	uint64_t h = header(c);
	w->address = obj;
	w->type = py_type_name(c, type);
	w->owner = -1;
	w->count = -1;
	const char *tn = w->type ? w->type : "";
	if (strcmp(tn, "_thread.RLock") == 0) {
		uint64_t owner, count;
		if (py_rd_ptr(c, obj + h + 8, &owner) != 0 || py_rd_ptr(c, obj + h + 16, &count) != 0)
			return;
		if (c->L->minor >= 14)
			count = owner ? count + 1 : 0;
		w->count = (int64_t)count;
		if (count)
			set_owner(c, w, owner);
		w->repr = arena_printf(c->a, "<%s %s object owner=%llu count=%llu at 0x%llx>",
				       count ? "locked" : "unlocked", tn, (unsigned long long)(count ? owner : 0),
				       (unsigned long long)count, (unsigned long long)obj);
		return;
	}
	if (strcmp(tn, "_thread.lock") == 0 && c->L->minor <= 12) {
		uint8_t locked;
		if (dump_read(c->d, obj + h + 16, &locked, 1) == PC_OK && locked <= 1)
			w->repr = arena_printf(c->a, "<%s %s object at 0x%llx>", locked ? "locked" : "unlocked", tn,
					       (unsigned long long)obj);
		return;
	}
	int64_t v;
	if (type_is(c, type, "threading._RLock")) {
		if (int_attr(c, obj, "_count", &v) && v >= 0) {
			w->count = v;
			int64_t owner;
			if (v && int_attr(c, obj, "_owner", &owner))
				set_owner(c, w, (uint64_t)owner);
		}
	} else if (type_is(c, type, "threading.Thread")) {
		w->joins = true;
		if (int_attr(c, obj, "_ident", &v))
			set_owner(c, w, (uint64_t)v);
	}
	static const struct repr_limits lim = { 256, 10, 2 };
	const char *err = NULL;
	const char *r = py_repr(c, obj, &lim, &err);
	w->repr = err ? NULL : r; /* an approximate repr is no repr */
}

void py_lock_waits(struct py_ctx *c, struct model_interp *mi)
{
	if (c->L->minor < 8)
		return; /* not tested there */
	for (size_t k = 0; k < mi->threads.n && !py_out_of_time(c); k++) {
		struct model_thread *t = mi->threads.items[k];
		if (t->holds_gil && !py_layout_free_threaded(c->L))
			continue;
		size_t first = 0;
		while (first < t->frames.n && ((const struct model_frame *)t->frames.items[first])->kind != FRAME_PYTHON)
			first++;
		if (first == t->frames.n)
			continue;
		const struct model_frame *f = t->frames.items[first];
		uint64_t type = 0, obj = python_wait(c, t, first, &type);
		uint64_t futex = obj ? 0 : futex_word(c, t->tid);
		if (futex && f->frame_address)
			obj = c_wait(c, f->frame_address, futex, &type);
		if (!obj)
			continue;
		struct model_wait *w = arena_alloc(c->a, sizeof(*w));
		if (!w)
			return;
		describe(c, w, obj, type);
		t->waiting_on = w;
	}
}
