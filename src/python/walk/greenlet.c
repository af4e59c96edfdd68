/* Greenlets: every greenlet of an interpreter, its state, what it runs and
 * (suspended) its Python frames, under the OS thread it belongs to.
 *
 * Where they are found: every greenlet object is a container the cyclic
 * garbage collector tracks (greenlet's type has Py_TPFLAGS_HAVE_GC and
 * allocates through tp_alloc), so it is on one of the interpreter's
 * collector lists: generations[3] and permanent_generation of struct
 * _gc_runtime_state, lists of PyGC_Head {_gc_next, _gc_prev} just before
 * each object (Include/internal/pycore_gc.h, 3.8-3.14; _gc_next's low bit
 * is a flag in 3.14).  Those lists are the runtime's own record of its
 * live containers, not a scan of the heap.  Where they lie (checked with
 * gdb's ptype /o on the DWARF of pyenv's 3.10, 3.12 and 3.13, Debian's
 * 3.11 and sid's 3.14, 3.15): generations at gc.collecting - 176
 * (3.10-3.13; - 168 in 3.14; - 104 in 3.15), permanent_generation at
 * gc.collecting - 96 (- 32 in 3.15), each struct gc_generation 24 bytes
 * with its list head first.
 *
 * What a greenlet holds (python-greenlet's sources: greenlet.h's
 * PyGreenlet {PyObject_HEAD; weakreflist; dict; pimpl}, then the C++
 * object pimpl points to, greenlet_greenlet.hpp (2.0) or TGreenlet.hpp
 * (3.x): class Greenlet's StackState {_stack_start, stack_stop,
 * stack_copy, _stack_saved, stack_prev} and PythonState {_context,
 * _top_frame, ..., current_frame (3.11+)}; UserGreenlet's _main_greenlet,
 * _run_callable, _parent; MainGreenlet's _thread_state; ThreadState
 * (greenlet_thread_state.hpp, TThreadState.hpp) {main_greenlet,
 * current_greenlet, ...}).  The offsets depend on greenlet's version and
 * on the Python it was built for: the table below was read with gdb
 * (print &((greenlet::UserGreenlet*)0)->...) from each listed greenlet
 * release's greenlet.cpp compiled with g++ -g against that Python's
 * headers (3.3.2 on 3.14 and 3.15: greenlet.cpp of tag 3.3.2 against
 * sid's libpython3.14-dev and libpython3.15-dev, gdb's ptype /o of
 * greenlet::Greenlet, UserGreenlet, MainGreenlet); Debian 12's
 * python3-greenlet 2.0.2 for 3.11 and sid's 3.3.2 for 3.14 and 3.15 are
 * checked against the module itself by the tests (check-servers,
 * check-greenlets: Debian ships no debug file of it in its main archive).  A version not in the table, or a
 * table whose main greenlets do not point back at themselves through
 * their thread state, is said in a warning and no greenlet is reported.
 *
 * A greenlet is started once stack_stop is set, active while _stack_start
 * is (dead: started, no longer active); the one running on its thread is
 * its ThreadState's current_greenlet (its frames are then the thread's).
 * A suspended greenlet keeps its Python frame chain: current_frame
 * (3.11+) or _top_frame (a PyFrameObject, 3.10); from 3.12 each eval loop
 * call's shim frame lives on the C stack, which greenlet copied to the
 * heap (stack_copy, _stack_saved bytes from _stack_start) when another
 * greenlet needed that stack: that copy is put back in place for the walk.
 * The thread: stack addresses of its greenlets (a user greenlet's
 * stack_stop, a suspended one's _stack_start) on an OS thread's stack. */
#include "python/walk/walk.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GC_OBJECTS (50u * 1000 * 1000)
#define MAX_GREENLETS  100000
#define MAX_STACK_COPY (64u << 20)

/* Offsets in greenlet's C++ objects (from the object pimpl points to;
 * -1: none). */
struct gl_layout {
	int stack_start, top_frame, current_frame;    /* Greenlet (stack_stop, stack_copy and
							 _stack_saved follow _stack_start) */
	int main_greenlet, run_callable, parent;      /* UserGreenlet */
	int thread_state;                             /* MainGreenlet */
};

struct gl_row {
	unsigned lo[3], hi[3];   /* greenlet versions, inclusive */
	unsigned minor;          /* the Python the module was built for */
	struct gl_layout l;
};

#define L10A { 64, 112, -1, 152, 160, 168, 152 }   /* 2.0.x, 3.0.3 on 3.10 */
#define L11A { 48, 96, 128, 168, 176, 184, 168 }   /* 2.0.x-3.1.0 on 3.11 */
#define L12B { 48, 96, 128, 176, 184, 192, 176 }   /* 3.0.0-3.0.2 on 3.12 */
#define L13C { 48, 96, 120, 160, 168, 176, 160 }   /* 3.1.0 on 3.13 */
#define L10D { 72, 120, -1, 152, 160, 168, 160 }   /* 3.1.1+ on 3.10 */
#define L11D { 56, 104, 136, 168, 176, 184, 176 }  /* 3.1.1+ on 3.11, 3.12 */
#define L13D { 56, 104, 128, 160, 168, 176, 168 }  /* 3.1.1-3.5.2 on 3.13 */
#define L14E { 56, 104, 144, 176, 184, 192, 184 }  /* 3.3.0-3.5.2 on 3.14, 3.3.2 on 3.15 */
#define L14F { 56, 104, 152, 184, 192, 200, 192 }  /* 3.5.3 on 3.14 */

static const struct gl_row gl_rows[] = {
	{ { 2, 0, 0 }, { 2, 0, 99 }, 10, L10A }, { { 2, 0, 0 }, { 2, 0, 99 }, 11, L11A },
	{ { 3, 0, 0 }, { 3, 0, 2 }, 11, L11A },  { { 3, 0, 0 }, { 3, 0, 2 }, 12, L12B },
	{ { 3, 0, 3 }, { 3, 0, 3 }, 10, L10A },  { { 3, 0, 3 }, { 3, 0, 3 }, 11, L11A },
	{ { 3, 0, 3 }, { 3, 0, 3 }, 12, L11A },
	{ { 3, 1, 0 }, { 3, 1, 0 }, 11, L11A },  { { 3, 1, 0 }, { 3, 1, 0 }, 12, L11A },
	{ { 3, 1, 0 }, { 3, 1, 0 }, 13, L13C },
	{ { 3, 1, 1 }, { 3, 5, 3 }, 10, L10D },  { { 3, 1, 1 }, { 3, 5, 3 }, 11, L11D },
	{ { 3, 1, 1 }, { 3, 5, 3 }, 12, L11D },  { { 3, 1, 1 }, { 3, 5, 2 }, 13, L13D },
	{ { 3, 5, 3 }, { 3, 5, 3 }, 13, L11D },
	{ { 3, 2, 3 }, { 3, 2, 3 }, 14, L13D },  { { 3, 2, 4 }, { 3, 2, 4 }, 14, L11D },
	{ { 3, 3, 0 }, { 3, 5, 2 }, 14, L14E },  { { 3, 5, 3 }, { 3, 5, 3 }, 14, L14F },
	{ { 3, 3, 2 }, { 3, 3, 2 }, 15, L14E },
};

/* ThreadState: main_greenlet, then current_greenlet (every version). */
#define TS_MAIN    0
#define TS_CURRENT 8

static int vcmp(const unsigned a[3], const unsigned b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static const struct gl_layout *gl_layout_for(const char *version, unsigned minor)
{
	unsigned v[3] = { 0, 0, 0 };
	const char *p = version;
	for (int i = 0; i < 3 && p; i++) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);
		if (end == p)
			return NULL;
		v[i] = (unsigned)n;
		p = *end == '.' ? end + 1 : NULL;
	}
	for (size_t i = 0; i < sizeof(gl_rows) / sizeof(gl_rows[0]); i++)
		if (gl_rows[i].minor == minor && vcmp(v, gl_rows[i].lo) >= 0 && vcmp(v, gl_rows[i].hi) <= 0)
			return &gl_rows[i].l;
	return NULL;
}

/* What the walk learns of one greenlet. */
struct gl {
	uint64_t obj, pimpl, type;
	uint64_t main;           /* its main greenlet (itself for a main one); 0 unknown */
	uint64_t ts;             /* a main greenlet's ThreadState */
	uint64_t ss, stop;
	int64_t tid;
	struct model_greenlet *m;
};

struct gwalk {
	struct py_ctx *c;
	const struct gl_layout *gl;
	uint64_t type;           /* greenlet.greenlet */
	uint64_t pimpl_off;
	struct addrtab is_gl;    /* struct type_is: by type */
	struct gl *v;
	size_t n, cap;
	bool capped;             /* more greenlets than MAX_GREENLETS */
	bool over;               /* more objects than MAX_GC_OBJECTS */
};

struct type_is {
	uint64_t type;
	bool yes;
};

/* A main greenlet's index in gwalk.v plus 1, by its address. */
struct main_idx {
	uint64_t obj;
	size_t i;
};

/* Is TYPE greenlet.greenlet or a subclass (along tp_base)? */
static bool greenlet_type(struct gwalk *w, uint64_t type)
{
	bool found;
	struct type_is *e = addrtab_get(&w->is_gl, type, &found);
	if (e && found)
		return e->yes;
	bool yes = false;
	uint64_t t = type;
	for (int i = 0; i < 64 && t; i++) {
		if (t == w->type) {
			yes = true;
			break;
		}
		if (py_rd_ptr(w->c, t + w->c->L->type_base, &t) != 0)
			break;
	}
	e = addrtab_get(&w->is_gl, type, &found);
	if (e)
		e->yes = yes;
	return yes;
}

static bool is_hub(struct py_ctx *c, uint64_t type)
{
	uint64_t t = type;
	for (int i = 0; i < 64 && t; i++) {
		const char *mod, *qual;
		py_type_qualname(c, t, &mod, &qual);
		if (mod && qual && strcmp(mod, "gevent.hub") == 0 && strcmp(qual, "Hub") == 0)
			return true;
		if (py_rd_ptr(c, t + c->L->type_base, &t) != 0)
			break;
	}
	return false;
}

static void add_greenlet(struct gwalk *w, uint64_t obj, uint64_t type)
{
	if (w->n >= MAX_GREENLETS) {
		w->capped = true;
		return;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct gl *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = (struct gl){ .obj = obj, .type = type, .tid = -1 };
}

/* The objects on the collector's list at HEAD that are greenlets; *BUDGET
 * objects at most.  False when the list is not read to its end. */
static bool gc_list(struct gwalk *w, uint64_t head, size_t *budget)
{
	struct py_ctx *c = w->c;
	uint64_t p;
	if (py_rd_ptr(c, head, &p) != 0)
		return false;
	while ((p &= ~(uint64_t)3) != head) {
		if (*budget == 0) {
			w->over = true;
			return false;
		}
		if (!p || (--*budget % 65536 == 0 && py_out_of_time(c)))
			return false;
		uint64_t obj = p + 16, type;
		if (py_rd_ptr(c, obj + c->L->object_type, &type) != 0)
			return false;
		if (type && greenlet_type(w, type))
			add_greenlet(w, obj, type);
		if (py_rd_ptr(c, p, &p) != 0)
			return false;
	}
	return true;
}

/* The name of a callable: a function's or a bound method's __qualname__,
 * else its repr; NULL when unreadable. */
static const char *callable_name(struct py_ctx *c, uint64_t obj)
{
	const char *why;
	uint64_t type, q, hdr = (uint64_t)c->L->object_type + 8;
	enum py_type k = py_type_of(c, obj, &type);
	if (k == PYT_OTHER && type) {
		const char *tn = py_type_name(c, type);
		uint64_t fn;
		/* PyMethodObject: im_func right after the header */
		if (tn && strcmp(tn, "method") == 0 && py_rd_ptr(c, obj + hdr, &fn) == 0)
			obj = fn, k = py_type_of(c, obj, NULL);
	}
	if (k == PYT_FUNCTION && py_rd_ptr(c, obj + c->L->function_qualname, &q) == 0)
		return py_str_utf8(c, q, PY_MAX_NAME, &why);
	struct repr_limits lim = { 200, 5, 2 };
	return py_repr(c, obj, &lim, &why);
}

/* A suspended greenlet's frames into M->stack. */
static void greenlet_frames(struct gwalk *w, struct gl *g, int64_t tid)
{
	struct py_ctx *c = w->c;
	const struct gl_layout *gl = w->gl;
	uint64_t frame = 0;
	int off = c->L->minor >= 11 ? gl->current_frame : gl->top_frame;
	if (py_rd_ptr(c, g->pimpl + (uint64_t)off, &frame) != 0) {
		g->m->error = "its saved frame pointer is not captured";
		g->m->error_info = model_err_at(PC_ENOTCAPTURED, g->pimpl + (uint64_t)off);
		return;
	}
	if (!frame)
		return;
	/* 3.12+: put the greenlet's saved C stack back where it ran */
	void *copy = NULL, *old = NULL;
	uint64_t from = 0, saved = 0;
	if (c->L->minor >= 12 && py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start + 16, &from) == 0 &&
	    py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start + 24, &saved) == 0 && from && saved &&
	    saved <= MAX_STACK_COPY && (copy = malloc(saved)) && (old = malloc(saved))) {
		if (dump_read(c->d, from, copy, saved) != PC_OK ||
		    dump_patch(c->d, g->ss, copy, saved, old) != PC_OK)
			saved = 0;
	} else {
		saved = 0;
	}
	struct model_thread scratch = { .tid = tid };
	py_walk_frame_chain(c, &scratch, frame);
	if (saved)
		dump_patch(c->d, g->ss, old, saved, copy);
	free(copy);
	free(old);
	g->m->stack = scratch.frames;
	g->m->error = scratch.error;
	g->m->error_info = scratch.error_info;
}

static struct model_thread *thread_of(struct model_interp *mi, int64_t tid)
{
	for (size_t i = 0; tid >= 0 && i < mi->threads.n; i++) {
		struct model_thread *t = mi->threads.items[i];
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

static int by_main_then_address(const void *a, const void *b)
{
	const struct model_greenlet *x = *(struct model_greenlet *const *)a, *y = *(struct model_greenlet *const *)b;
	if (x->main != y->main)
		return x->main ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static void sort_greenlets(struct ptrvec *v)
{
	if (v->n > 1)
		qsort(v->items, v->n, sizeof(v->items[0]), by_main_then_address);
}

/* Every greenlet W found: which are main ones, their threads, states,
 * stacks; into MI.  False when the layout does not hold. */
static bool describe(struct gwalk *w, struct model_interp *mi)
{
	struct py_ctx *c = w->c;
	const struct gl_layout *gl = w->gl;
	size_t mains = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct gl *g = &w->v[i];
		uint64_t back;
		if (py_rd_ptr(c, g->obj + w->pimpl_off, &g->pimpl) != 0 || !g->pimpl)
			continue;
		if (py_rd_ptr(c, g->pimpl + (uint64_t)gl->thread_state, &g->ts) == 0 && g->ts &&
		    py_rd_ptr(c, g->ts + TS_MAIN, &back) == 0 && back == g->obj) {
			g->main = g->obj;
			mains++;
		} else {
			g->ts = 0;
		}
	}
	if (w->n && !mains)
		return false;
	struct addrtab all_at = ADDRTAB_INIT(struct main_idx);
	for (size_t i = 0; i < w->n; i++) {
		struct gl *g = &w->v[i];
		bool found;
		struct main_idx *e = addrtab_get(&all_at, g->obj, &found);
		if (e)
			e->i = i + 1;
		if (!g->pimpl)
			continue;
		if (!g->main)
			py_rd_ptr(c, g->pimpl + (uint64_t)gl->main_greenlet, &g->main);
		py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start, &g->ss);
		py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start + 8, &g->stop);
	}
	/* one not started has no main greenlet yet: greenlet's own rule
	 * (UserGreenlet::find_main_greenlet_in_lineage, TUserGreenlet.cpp) is
	 * its parent's, along the parents to a started one */
	for (size_t i = 0; i < w->n; i++) {
		struct gl *g = &w->v[i], *p = g;
		for (int k = 0; k < 64 && !g->main && p->pimpl; k++) {
			uint64_t parent = 0;
			bool found;
			if (py_rd_ptr(c, p->pimpl + (uint64_t)gl->parent, &parent) != 0 || !parent)
				break;
			struct main_idx *e = addrtab_get(&all_at, parent, &found);
			if (!e || !e->i)
				break;
			p = &w->v[e->i - 1];
			g->main = p->main;
		}
	}
	addrtab_free(&all_at);
	/* each main greenlet's thread, from its greenlets' stack addresses */
	for (size_t i = 0; i < w->n; i++) {
		struct gl *mg = &w->v[i];
		if (!mg->ts)
			continue;
		int64_t tid = -1;
		for (size_t k = 0; k < w->n && tid < 0; k++) {
			struct gl *g = &w->v[k];
			if (g->main != mg->obj)
				continue;
			if (g->stop && g->stop != UINT64_MAX)
				tid = dump_tid_of_stack_region(c->d, g->stop);
			if (tid < 0 && g->ss > 1)
				tid = dump_tid_of_stack_region(c->d, g->ss);
		}
		mg->tid = tid;
	}
	struct addrtab main_at = ADDRTAB_INIT(struct main_idx);
	for (size_t i = 0; i < w->n; i++) {
		bool found;
		struct main_idx *e = w->v[i].ts ? addrtab_get(&main_at, w->v[i].obj, &found) : NULL;
		if (e)
			e->i = i + 1;
	}
	for (size_t i = 0; i < w->n && !py_out_of_time(c); i++) {
		struct gl *g = &w->v[i];
		if (!g->pimpl)
			continue;
		bool found;
		/* (a lookup adds the key: an entry of 0 is no main greenlet) */
		struct main_idx *e = g->main ? addrtab_get(&main_at, g->main, &found) : NULL;
		struct gl *mg = e && e->i ? &w->v[e->i - 1] : NULL;
		struct model_greenlet *m = arena_alloc(c->a, sizeof(*m));
		if (!m)
			break;
		g->m = m;
		m->address = g->obj;
		m->type = py_type_name(c, g->type);
		m->main = g->ts != 0;
		m->hub = is_hub(c, g->type);
		m->stack_start = g->ss;
		m->stack_stop = g->stop;
		py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start + 16, &m->stack_copy);
		py_rd_ptr(c, g->pimpl + (uint64_t)gl->stack_start + 24, &m->stack_saved);
		uint64_t current = 0;
		if (mg)
			py_rd_ptr(c, mg->ts + TS_CURRENT, &current);
		if (current == g->obj)
			m->state = "running";
		else if (!g->stop)
			m->state = "not started";
		else if (!g->ss)
			m->state = "dead";
		else
			m->state = "suspended";
		int64_t tid = mg ? mg->tid : -1;
		if (!m->main) {
			uint64_t run = 0;
			py_rd_ptr(c, g->pimpl + (uint64_t)gl->parent, &m->parent);
			/* (gevent's Greenlet keeps None there: its own _run is what it runs) */
			if (!g->stop && py_rd_ptr(c, g->pimpl + (uint64_t)gl->run_callable, &run) == 0 && run &&
			    py_type_of(c, run, NULL) != PYT_NONE)
				m->run = callable_name(c, run);
			uint64_t owner = 0, fn = py_mro_lookup(c, g->type, "run", &owner);
			if (!m->run && fn && owner != w->type && py_type_of(c, fn, NULL) == PYT_FUNCTION)
				m->run = callable_name(c, fn);
		}
		if (strcmp(m->state, "suspended") == 0)
			greenlet_frames(w, g, tid);
		if (!m->run && !m->main && m->stack.n) {
			const struct model_frame *f = m->stack.items[m->stack.n - 1];
			m->run = f->qualname ? f->qualname : f->function;
		}
		struct model_thread *t = thread_of(mi, tid);
		ptrvec_push(c->a, t ? &t->greenlets : &mi->greenlets, m);
	}
	addrtab_free(&main_at);
	for (size_t i = 0; i < mi->threads.n; i++)
		sort_greenlets(&((struct model_thread *)mi->threads.items[i])->greenlets);
	sort_greenlets(&mi->greenlets);
	return true;
}

void py_greenlets(struct py_ctx *c, uint64_t interp, struct model_interp *mi)
{
	const struct py_layout *L = c->L;
	static const char *const names[2] = { "greenlet", "greenlet._greenlet" };
	uint64_t dicts[2] = { 0, 0 }, version = 0, type = 0;
	if (py_module_dicts(c, interp, names, dicts, 2) <= 0 || !dicts[1])
		return; /* not imported */
	const char *why, *v = NULL;
	if (dicts[0] && py_dict_get_str(c, dicts[0], "__version__", &version) == 0)
		v = py_str_utf8(c, version, 32, &why);
	if (py_dict_get_str(c, dicts[1], "greenlet", &type) != 0 || !type) {
		model_warn(c->r, "interpreter %lld: greenlet is imported, but its type greenlet._greenlet.greenlet "
			   "cannot be read: its greenlets are not reported", (long long)mi->id);
		c->r->incomplete = true;
		return;
	}
	const struct gl_layout *gl = v ? gl_layout_for(v, L->minor) : NULL;
	if (!gl || py_layout_free_threaded(L) || L->interp_gc_collecting < 0 || L->minor > 15) {
		model_warn(c->r, "interpreter %lld: greenlet %s layout unknown on Python 3.%u%s (not in pycore's "
			   "table): its greenlets are not reported", (long long)mi->id, v ? v : "(version unreadable)",
			   L->minor,
			   py_layout_free_threaded(L) ? " (free-threaded)" : "");
		c->r->incomplete = true;   /* the greenlets exist: the report lacks them */
		return;
	}
	struct gwalk w = { .c = c, .gl = gl, .type = type, .pimpl_off = (uint64_t)L->object_type + 8 + 16,
			   .is_gl = ADDRTAB_INIT(struct type_is) };
	uint64_t collecting = interp + (uint64_t)L->interp_gc_collecting;
	uint64_t gens = collecting - (L->minor >= 15 ? 104 : L->minor >= 14 ? 168 : 176);
	uint64_t permanent = collecting - (L->minor >= 15 ? 32 : 96);
	size_t budget = MAX_GC_OBJECTS;
	bool whole = true;
	for (int i = 0; i < 3; i++)
		whole = gc_list(&w, gens + 24 * (uint64_t)i, &budget) && whole;
	whole = gc_list(&w, permanent, &budget) && whole;
	if (!whole || w.capped) {
		model_warn(c->r, "interpreter %lld: %s: greenlets may be missing", (long long)mi->id,
			   w.capped ? "more greenlets than pycore lists" :
			   w.over ? "the collector's lists hold more objects than pycore reads" :
			   "the collector's lists could not be read to their end");
		c->r->incomplete = true;
	}
	if (mi->gc_collecting == 1)
		model_warn(c->r, "interpreter %lld was collecting garbage: greenlets it had moved off its lists are "
			   "not reported", (long long)mi->id);
	if (describe(&w, mi))
		mi->greenlet_version = v;
	else
		model_warn(c->r, "interpreter %lld: greenlet %s on Python 3.%u: no main greenlet points back at "
			   "itself through its thread state, so pycore's layout of it is wrong here: its "
			   "greenlets are not reported", (long long)mi->id, v, L->minor);
	if (!mi->greenlet_version)
		c->r->incomplete = true;
	free(w.v);
	addrtab_free(&w.is_gl);
}
