/* Between the asyncio files (asyncio.c, asyncio_objects.c, asyncio_stack.c):
 * one interpreter's walk of its tasks, and what each file reads for it. */
#ifndef PYCORE_PYTHON_WALK_ASYNCIO_H
#define PYCORE_PYTHON_WALK_ASYNCIO_H

#include "python/walk/walk.h"

enum { FUT_PENDING = 0, FUT_CANCELLED = 1, FUT_FINISHED = 2 };

/* Offsets after the object header (PyObject_HEAD) of FutureObj/TaskObj. */
struct fut_layout {
	int loop, exception, result, state;
	int fut_waiter, coro, name;
	int must_cancel, must_cancel_bit;   /* bit -1: a whole int */
	int num_cancels;                    /* -1 before 3.11 */
};

/* Offsets after the object header of PyGenObject (and PyCoroObject). */
struct gen_layout {
	int frame;           /* <=3.10: gi_frame (a pointer); 3.11+: gi_iframe (inline) */
	int qualname;
	int frame_state;     /* 3.11+: int8 */
};

enum kind { K_OTHER, K_C_FUTURE, K_C_TASK, K_PY_FUTURE, K_PY_TASK, K_CORO, K_FUTURE_ITER };

/* What the walk knows of one future or task. */
struct fut {
	enum kind kind;
	uint64_t addr, loop, result, exception, fut_waiter, coro, name;
	int state;           /* FUT_*, -1 unknown */
	int64_t cancels;     /* cancel() requests not yet delivered (must_cancel, num_cancels) */
	bool has_result;     /* result is meaningful (may be None) */
};

struct aio {
	struct py_ctx *c;
	struct model_interp *mi;
	uint64_t hdr;        /* bytes of the object header */
	const struct fut_layout *fl;
	const struct gen_layout *gl;
	struct addrtab tasks_at;  /* struct by_addr: task by address */
	struct addrtab loops_at;  /* struct by_addr: loop by address */
	struct addrtab kinds;     /* struct type_kind: kind by type */
	struct addrtab frames_at; /* struct by_addr: thread frame by frame address */
	bool frames_indexed;
	struct ptrvec tasks;      /* of struct task */
	bool capped;
	struct py_task_lists tl;  /* 3.14+ */
};

/* A task, loop or thread frame, by address. */
struct by_addr {
	uint64_t addr;
	void *p;
	size_t index;
};

struct type_kind {
	uint64_t type;
	enum kind kind;
};

/* ---- asyncio_objects.c ---- */

extern const struct fut_layout aio_fut_layouts[16];
/* The kind of object OBJ is, by its type's name and its bases' (cached
 * by type in W). */
enum kind aio_kind_of(struct aio *w, uint64_t obj);

static inline bool is_task(enum kind k)
{
	return k == K_C_TASK || k == K_PY_TASK;
}

static inline bool is_future(enum kind k)
{
	return k == K_C_TASK || k == K_PY_TASK || k == K_C_FUTURE || k == K_PY_FUTURE;
}

/* Read the future or task OBJ of kind K into *F; -1 when not captured. */
int aio_read_future(struct aio *w, uint64_t obj, enum kind k, struct fut *f);

/* ---- asyncio_stack.c ---- */

extern const struct gen_layout aio_gen_layouts[16];
/* The coroutine chain from CORO inwards into M's stack, innermost first;
 * *RUNNING when the outermost coroutine is executing. */
void aio_coroutine_stack(struct aio *w, struct model_task *m, uint64_t coro, bool *running);

#endif
