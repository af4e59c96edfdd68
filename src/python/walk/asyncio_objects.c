/* asyncio's futures and tasks as objects: what kind an object is (a C or
 * pure-Python Future or Task, a coroutine), by its type's name, and what a
 * future or task holds, read without running anything.
 *
 * Facts used, by version (CPython 3.8 to 3.15; Lib/asyncio/ and
 * Modules/_asynciomodule.c of each version):
 * - a C Task or Future (FutureObj_HEAD, then TaskObj's own fields) is the
 *   table `aio_fut_layouts` below: offsets after the object header, from the
 *   field order of each version's _asynciomodule.c and checked against the
 *   DWARF of those builds' _asyncio modules (gdb: ptype /o TaskObj).
 *   fut_state: 0 pending, 1 cancelled, 2 finished.  From 3.13 the task's
 *   name may be an int n standing for "Task-n".  3.11+ count cancel()
 *   requests (task_num_cancels_requested: Task.cancelling());
 * - a pure-Python Future or Task keeps the same as instance attributes
 *   (_state 'PENDING' 'CANCELLED' 'FINISHED', _loop, _result, _exception,
 *   _fut_waiter, _coro, _name, _must_cancel, _num_cancels_requested).
 */
#include "python/walk/asyncio.h"

#include <stddef.h>
#include <string.h>

const struct fut_layout aio_fut_layouts[16] = {
	[8] = { 0, 32, 40, 56, 88, 96, 104, 120, -1, -1 },
	[9] = { 0, 32, 40, 64, 128, 136, 144, 160, -1, -1 },
	[10] = { 0, 32, 48, 72, 136, 144, 152, 168, -1, -1 },
	[11] = { 0, 32, 48, 72, 112, 120, 128, 144, -1, 152 },
	[12] = { 0, 32, 48, 72, 112, 120, 128, 144, -1, 152 },
	[13] = { 0, 32, 48, 80, 96, 104, 112, 84, 2, 88 },
	[14] = { 0, 32, 48, 88, 104, 112, 120, 94, 2, 96 },
	[15] = { 0, 32, 48, 88, 104, 112, 120, 94, 2, 96 },
};

/* ------------------------------------------------------------------------
 * Kinds of objects, by their types' names
 * ------------------------------------------------------------------------ */

static enum kind kind_of_type(struct aio *w, uint64_t type);

enum kind aio_kind_of(struct aio *w, uint64_t obj)
{
	uint64_t type;
	if (!obj || py_type_of(w->c, obj, &type) != PYT_OTHER)
		return K_OTHER;
	bool found;
	struct type_kind *tk = addrtab_get(&w->kinds, type, &found);
	if (tk && found)
		return tk->kind;
	enum kind k = kind_of_type(w, type);
	/* the entry may have moved while the names were read */
	tk = addrtab_get(&w->kinds, type, &found);
	if (tk)
		tk->kind = k;
	return k;
}

/* The kind of objects of TYPE, by its own name and its bases'. */
static enum kind kind_of_type(struct aio *w, uint64_t type)
{
	struct py_ctx *c = w->c;
	for (int depth = 0; type && depth < 64; depth++) {
		const char *n = py_type_name(c, type);
		if (n) {
			if (strcmp(n, "_asyncio.Task") == 0)
				return K_C_TASK;
			if (strcmp(n, "_asyncio.Future") == 0)
				return K_C_FUTURE;
			if (strcmp(n, "asyncio.tasks.Task") == 0)
				return K_PY_TASK;
			if (strcmp(n, "asyncio.futures.Future") == 0)
				return K_PY_FUTURE;
			if (depth == 0 && (strcmp(n, "coroutine") == 0 || strcmp(n, "generator") == 0))
				return K_CORO;
			if (depth == 0 && strcmp(n, "_asyncio.FutureIter") == 0)
				return K_FUTURE_ITER;
		}
		if (py_rd_ptr(c, type + c->L->type_base, &type) != 0)
			break;
	}
	return K_OTHER;
}

/* ------------------------------------------------------------------------
 * Reading a future or task
 * ------------------------------------------------------------------------ */

static int64_t small_int(struct py_ctx *c, uint64_t obj)
{
	int64_t v;
	enum py_type t = py_type_of(c, obj, NULL);
	if ((t != PYT_INT && t != PYT_BOOL) || py_long_i64(c, obj, &v) != 0)
		return 0;
	return v;
}

static int py_future_attr(struct py_ctx *c, const char *name, uint64_t value, void *arg)
{
	struct fut *f = arg;
	const char *why;
	if (strcmp(name, "_state") == 0 && py_type_of(c, value, NULL) == PYT_STR) {
		const char *s = py_str_utf8(c, value, 16, &why);
		f->state = !s ? -1 : strcmp(s, "PENDING") == 0 ? FUT_PENDING
			   : strcmp(s, "CANCELLED") == 0 ? FUT_CANCELLED
			   : strcmp(s, "FINISHED") == 0 ? FUT_FINISHED : -1;
	} else if (strcmp(name, "_must_cancel") == 0 || strcmp(name, "_num_cancels_requested") == 0) {
		f->cancels += small_int(c, value);
	}
	static const struct { const char *name; size_t at; } objects[] = {
		{ "_loop", offsetof(struct fut, loop) }, { "_result", offsetof(struct fut, result) },
		{ "_exception", offsetof(struct fut, exception) },
		{ "_fut_waiter", offsetof(struct fut, fut_waiter) },
		{ "_coro", offsetof(struct fut, coro) }, { "_name", offsetof(struct fut, name) },
	};
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		if (strcmp(name, objects[i].name) == 0)
			memcpy((char *)f + objects[i].at, &value, sizeof(value));
	return 0;
}

int aio_read_future(struct aio *w, uint64_t obj, enum kind k, struct fut *f)
{
	struct py_ctx *c = w->c;
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->addr = obj;
	f->state = -1;
	if (k == K_PY_FUTURE || k == K_PY_TASK) {
		/* the class attribute Future._state is 'PENDING': an instance has
		 * its own only once it changed */
		f->state = FUT_PENDING;
		uint64_t type;
		if (py_type_of(c, obj, &type) == PYT_UNREADABLE ||
		    py_instance_attrs(c, obj, type, py_future_attr, f) != 0)
			return -1;
	} else {
		const struct fut_layout *fl = w->fl;
		uint64_t b = obj + w->hdr;
		int32_t state;
		if (py_rd_ptr(c, b + (uint64_t)fl->loop, &f->loop) != 0 ||
		    py_rd_ptr(c, b + (uint64_t)fl->exception, &f->exception) != 0 ||
		    py_rd_ptr(c, b + (uint64_t)fl->result, &f->result) != 0 ||
		    py_rd_i32(c, b + (uint64_t)fl->state, &state) != 0)
			return -1;
		f->state = state >= FUT_PENDING && state <= FUT_FINISHED ? state : -1;
		if (k == K_C_TASK) {
			int32_t mc = 0, n = 0;
			if (py_rd_ptr(c, b + (uint64_t)fl->fut_waiter, &f->fut_waiter) != 0 ||
			    py_rd_ptr(c, b + (uint64_t)fl->coro, &f->coro) != 0 ||
			    py_rd_ptr(c, b + (uint64_t)fl->name, &f->name) != 0 ||
			    py_rd_i32(c, b + (uint64_t)fl->must_cancel, &mc) != 0 ||
			    (fl->num_cancels >= 0 && py_rd_i32(c, b + (uint64_t)fl->num_cancels, &n) != 0))
				return -1;
			if (fl->must_cancel_bit >= 0)
				mc = (mc >> fl->must_cancel_bit) & 1;
			f->cancels = (mc != 0) + (n > 0 ? n : 0);
		}
	}
	f->has_result = f->state == FUT_FINISHED && (!f->exception || py_type_of(c, f->exception, NULL) == PYT_NONE);
	return 0;
}
