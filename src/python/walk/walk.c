/* The Python layer's orchestrator: find the runtime (runtime/runtime.c),
 * choose the layout (runtime/layout_choose.c), find the built-in types
 * (objects/classes.c), then walk interpreters, threads and frames (interp.c,
 * frames.c) and weave native stacks in (native.c).  Nothing calls back
 * into this file. */
#include "python/python.h"
#include "python/python_int.h"
#include "python/heap/heap.h"
#include "python/runtime/runtime.h"
#include "util/addrtab.h"
#include "python/walk/walk.h"

#include <string.h>

/* Where the interpreter list starts: 3.6's interp_head, or
 * _PyRuntime.interpreters.head.  0, and c->state_missing, when the dump
 * lacks it (a stack-only minidump: the report keeps what the dump holds). */
static int interpreter_list(struct py_ctx *c, const struct py_runtime *rt, uint64_t *runtime, uint64_t *head)
{
	struct model_report *r = c->r;
	*head = 0;
	if (c->L->minor == 6) {
		uint64_t at = rt->sym[PY_SYM_INTERP_HEAD];
		*runtime = 0;
		r->runtime_address = at;
		if (py_rd_ptr(c, at, head) != 0) {
			c->state_missing = arena_printf(c->a, "interp_head (0x%llx, 8 bytes) is not captured",
							(unsigned long long)at);
			return -1;
		}
		return 0;
	}
	*runtime = rt->sym[PY_SYM_RUNTIME];
	r->runtime_address = *runtime;
	uint64_t at = *runtime + (uint64_t)c->L->runtime_interpreters_head;
	if (py_rd_ptr(c, at, head) != 0) {
		c->state_missing = arena_printf(c->a, "_PyRuntime.interpreters.head (0x%llx, 8 bytes) is not "
						"captured", (unsigned long long)at);
		return -1;
	}
	return 0;
}

/* The one line a report without the interpreter's state carries: what is
 * missing, and which setting of the dump's producer would have kept it.
 * Native stacks are all such a dump has of Python: they keep the
 * interpreter's own frames (the eval loop's calls). */
static void say_state_missing(struct py_ctx *c)
{
	const char *hint = c->d->capture_hint;
	model_warn(c->r, "the Python state is not in the dump (%s): no interpreter can be read%s%s",
		   c->state_missing, hint ? "; " : "", hint ? hint : "");
	c->r->incomplete = true;
	c->r->state_missing = true;
	c->keep_internal = true;
}

/* Py_FinalizeEx sets _PyRuntime._finalizing to its thread state before it
 * tears the interpreters down: a dump taken then (a __del__ run at exit, a
 * crash in an atexit handler's aftermath) shows objects half gone. */
static void finalizing(struct py_ctx *c, uint64_t runtime)
{
	const struct py_layout *L = c->L;
	uint64_t ts, ident;
	if (!runtime || L->runtime_finalizing < 0 ||
	    py_rd_ptr(c, runtime + (uint64_t)L->runtime_finalizing, &ts) != PC_OK || !ts)
		return;
	int64_t tid = py_rd_ptr(c, ts + L->tstate_thread_id, &ident) == PC_OK
		      ? dump_tid_of_pthread(c->d, ident) : -1;
	if (tid >= 0)
		model_warn(c->r, "the runtime is finalizing (Py_FinalizeEx, in thread %lld): modules and "
			   "objects may already be torn down", (long long)tid);
	else
		model_warn(c->r, "the runtime is finalizing (Py_FinalizeEx, thread state 0x%llx): modules "
			   "and objects may already be torn down", (unsigned long long)ts);
}

/* The full version: Py_Version or the debug offsets' (HEX), else (up to
 * 3.10, or without symbols) sys.hexversion, else PY_VERSION's string in
 * the module's file, else only the minor. */
static void tell_version(struct py_ctx *c, struct symbols *s, const struct py_runtime *rt, uint64_t hex,
			 uint64_t head)
{
	const struct py_layout *L = c->L;
	struct model_report *r = c->r;
	if (!hex && head && L->interp_sysdict >= 0) {
		uint64_t sysdict, v;
		int64_t h;
		if (py_rd_ptr(c, head + L->interp_sysdict, &sysdict) == 0 && sysdict &&
		    py_dict_get_str(c, sysdict, "hexversion", &v) == 0 &&
		    py_long_i64(c, v, &h) == 0 && ((uint64_t)h >> 16) == (0x0300u | L->minor))
			hex = (uint64_t)h;
	}
	if (!hex)
		hex = py_version_in_file(s, rt->mod, L->minor);
	if (hex) {
		r->hexversion = hex;
		r->version = py_version_string(r->arena, hex);
	} else {
		r->version = arena_printf(r->arena, "3.%u", L->minor);
		model_warn(r, "only the minor version 3.%u could be told from %s", L->minor, rt->mod->path);
	}
}

/* Does another Python thread state run on T's OS thread (a
 * subinterpreter run from it)? */
static bool tid_shared(const struct model_report *r, const struct model_thread *t)
{
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *o = mi->threads.items[k];
			if (o != t && o->tid >= 0 && o->tid == t->tid)
				return true;
		}
	}
	return false;
}

/* Every OS thread's native stack (--native), with the Python frames of the
 * threads walked woven in; from 3.12 the thread states of several
 * interpreters on one OS thread share its stack, each its own slice. */
static void native_stacks(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct model_report *r = c->r;
	struct addrtab done = ADDRTAB_INIT(uint64_t);
	if (py_native_linked_in(c, interp_module))
		c->keep_internal = true;
	for (size_t i = 0; i < r->interps.n; i++) {
		struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n && !py_out_of_time(c); k++) {
			struct model_thread *t = mi->threads.items[k];
			bool shared = tid_shared(r, t);
			if (!shared || c->L->minor < 12) {
				py_weave_native(c, s, t, interp_module, shared);
				continue;
			}
			if (addrtab_add(&done, (uint64_t)t->tid + 1) != 0)
				continue; /* woven with the first of its OS thread */
			struct ptrvec v = { 0 };
			for (size_t a = 0; a < r->interps.n; a++) {
				const struct model_interp *o = r->interps.items[a];
				for (size_t b = 0; b < o->threads.n; b++)
					if (((struct model_thread *)o->threads.items[b])->tid == t->tid)
						ptrvec_push(c->a, &v, o->threads.items[b]);
			}
			py_weave_native_shared(c, s, (struct model_thread **)v.items, v.n, interp_module);
		}
	}
	addrtab_free(&done);
	r->has_native_threads = true;
	py_native_threads(c, s, interp_module);
	py_find_fatal_error(c);
}

/* A dump of a process named like Python whose runtime cannot be found
 * (its interpreter's files missing, its memory not captured): a partial
 * report, with the native stacks, instead of "not Python". */
static struct pc_error *runtime_not_found(struct py_ctx *c, struct symbols *s, struct pc_error *e)
{
	struct dump_module *named = py_named_module(c->d);
	if (e->code != PC_ENOTPYTHON || !named)
		return e;
	c->state_missing = arena_printf(c->a, "%s is loaded, but %s", named->path, e->message);
	pc_error_free(e);
	say_state_missing(c);
	if (c->opt->native)
		native_stacks(c, s, NULL);
	return NULL;
}

struct pc_error *py_analyze(struct dump *d, const struct locate *loc, struct symbols *s,
			    const struct py_options *opt, struct model_report *r)
{
	struct py_runtime rt;
	struct py_ctx c = { .d = d, .opt = opt, .r = r, .a = r->arena,
			    .codes = ADDRTAB_INIT(struct py_code), .type_names = ADDRTAB_INIT(struct py_type_name) };
	if (opt->timeout > 0)
		c.deadline_ns = py_now_ns() + (uint64_t)(opt->timeout * 1e9);
	py_find_fault(&c, s);
	py_find_abort(&c, s);
	struct pc_error *e = py_find_runtime(d, loc, s, r, &rt);
	if (e)
		return runtime_not_found(&c, s, e);
	py_fault_handler(&c, s, rt.mod);

	c.code_type = rt.sym[PY_SYM_CODE_TYPE];
	struct py_layout L = { .object_tid = -1 };
	uint64_t hex, runtime = 0, head = 0;
	bool unreadable;
	const char *refused = NULL;
	/* each candidate proves itself before it is walked; a refused one
	 * gives way to the next method's (runtime.c) */
	for (int tries = 0;; tries++) {
		L = (struct py_layout){ .object_tid = -1 };
		if ((e = py_choose_layout(&c, s, &rt, &L, &hex, &unreadable)) != NULL)
			return e;
		if (!c.code_type)
			c.code_type = rt.sym[PY_SYM_CODE_TYPE];
		r->has_python = true;
		const struct locate_result *lr = locate_result(loc, rt.mod);
		r->binary_path = arena_strdup(r->arena, lr && lr->data ? lr->path : rt.mod->path);
		r->binary_build_id = NULL;
		if (rt.mod->build_id_len) {
			char hexid[129];
			dump_hex(rt.mod->build_id, rt.mod->build_id_len, hexid);
			r->binary_build_id = arena_strdup(r->arena, hexid);
		}
		r->located_by = rt.located_by;
		r->free_threaded = py_layout_free_threaded(&L);
		if (unreadable || interpreter_list(&c, &rt, &runtime, &head) != 0) {
			/* Py_Version, read from the module's file; before 3.11 the
			 * string of PY_VERSION there */
			if (!hex)
				hex = py_version_in_file(s, rt.mod, L.minor);
			if (hex) {
				r->hexversion = hex;
				r->version = py_version_string(r->arena, hex);
			} else {
				/* "version" takes full versions only */
				model_warn(r, "only the minor version 3.%u could be told from %s (the version is null)",
					   L.minor, rt.mod->path);
			}
			if (c.state_missing)
				say_state_missing(&c);
			if (opt->native)
				native_stacks(&c, s, rt.mod);
			addrtab_free(&c.codes);
			addrtab_free(&c.type_names);
			return NULL;
		}
		const char *why = py_runtime_refusal(&c, runtime, head);
		if (!why)
			break;
		refused = arena_printf(r->arena, "the runtime found by %s at 0x%llx was refused: %s", rt.located_by,
				       (unsigned long long)(runtime ? runtime : rt.sym[PY_SYM_INTERP_HEAD]), why);
		model_warn(r, "%s", refused);
		if (tries >= 2 || !py_find_runtime_next(d, r, &rt, refused)) {
			model_warn(r, "no runtime candidate agrees with itself: no Python thread is read");
			r->incomplete = true;
			head = runtime = 0;
			break;
		}
		refused = NULL;
	}
	if (!head && !refused)
		model_warn(r, "the interpreter list is empty (not initialized yet, or already finalized)");
	finalizing(&c, runtime);
	tell_version(&c, s, &rt, hex, head);

	/* types: for reprs, thread names and exceptions */
	py_find_types(&c, s, &rt, head);
	py_find_asyncio_offsets(&c, s, rt.mod);
	py_walk_interpreters(&c, runtime, head, rt.sym[PY_SYM_TSTATE_CURRENT]);
	py_check_python_ran(&c, s, refused);
	if (opt->heap)
		py_heap_census(&c, s, rt.mod, runtime, head, rt.sym[PY_SYM_GC_GENERATION0]);
	if (opt->native) {
		native_stacks(&c, s, rt.mod);
		py_gc_after_native(&c);
	}
	addrtab_free(&c.codes);
	addrtab_free(&c.type_names);
	return NULL;
}
