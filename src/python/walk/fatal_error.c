/* CPython's fatal error, in its own words: "Fatal Python error: FUNC:
 * MESSAGE", as the process printed it to stderr before it aborted.
 *
 * CPython keeps the text nowhere but in its fatal-error path's arguments
 * (Python/pylifecycle.c, 3.6-3.15): Py_FatalError(const char *msg) and,
 * from 3.9, _Py_FatalErrorFunc(const char *func, const char *msg) (the
 * Py_FatalError macro passes __func__) call fatal_error(int fd, int
 * header, const char *prefix, const char *msg, int status), which writes
 * "Fatal Python error: ", then "PREFIX: " when prefix is not NULL, then
 * MSG, and ends in abort() (fatal_error_exit).  So the words are read
 * from those frames' arguments (native_args.c: a char pointer's string,
 * as gdb's bt shows it), on the thread that crashed, with --native: the
 * innermost of those frames that has the message, with the prefix its
 * own frame or fatal_error's gives.  _Py_FatalErrorFormat (3.9 on) is
 * left out: its message is a format and its arguments. */
#include "python/walk/walk.h"

#include <string.h>

/* NAME without a compiler clone's suffix (fatal_error.lto_priv.0) is WANT */
static bool named(const char *name, const char *want)
{
	size_t n = strlen(want);
	return name && strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

/* F's argument NAME as a string the dump held (not cut), or NULL; *SAID
 * whether F has that argument with a value at all (a NULL pointer is a
 * value: fatal_error's prefix is NULL for Py_FatalError). */
static const char *arg_string(const struct model_frame *f, const char *name, bool *said)
{
	*said = false;
	for (size_t i = 0; f->has_args && i < f->args.n; i++) {
		const struct model_arg *a = f->args.items[i];
		if (!a->name || strcmp(a->name, name) != 0 || a->optimized_out || !a->value)
			continue;
		*said = true;
		return a->string && !a->string_truncated ? a->string : NULL;
	}
	return NULL;
}

/* The fatal-error path's functions, innermost first, and which argument
 * of each is the prefix CPython prints before the message ("func" of
 * _Py_FatalErrorFunc; Py_FatalError passes none: NULL) */
static const struct { const char *function, *prefix; } path[] = {
	{ "fatal_error", "prefix" }, { "_Py_FatalErrorFunc", "func" }, { "Py_FatalError", NULL },
};

void py_find_fatal_error(struct py_ctx *c)
{
	struct model_report *r = c->r;
	int64_t tid = py_crash_tid(c);
	const struct model_thread *t = tid >= 0 ? model_find_thread(r, tid, 0) : NULL;
	for (size_t i = 0; !t && tid >= 0 && i < r->native_threads.n; i++)
		if (((const struct model_thread *)r->native_threads.items[i])->tid == tid)
			t = r->native_threads.items[i];
	if (r->abort || !t)
		return;
	const char *msg = NULL, *prefix = NULL;
	bool prefix_known = false, fatal = false;
	for (size_t i = 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			break;
		size_t k = 0;
		while (k < sizeof(path) / sizeof(path[0]) && !named(f->function, path[k].function))
			k++;
		if (k == sizeof(path) / sizeof(path[0])) {
			if (fatal)
				break;   /* past the fatal-error path: its caller */
			continue;
		}
		fatal = true;
		bool said;
		const char *m = arg_string(f, "msg", &said);
		msg = msg ? msg : m;
		bool has_prefix = false;
		const char *p = path[k].prefix ? arg_string(f, path[k].prefix, &has_prefix) : NULL;
		if (!prefix_known && (!path[k].prefix || has_prefix)) {
			prefix = p;
			prefix_known = true;
		}
	}
	if (!msg || !prefix_known)
		return;
	struct model_abort *ab = arena_alloc(c->a, sizeof(*ab));
	if (!ab)
		return;
	*ab = (struct model_abort){
		.message = prefix ? arena_printf(c->a, "Fatal Python error: %s: %s", prefix, msg)
			   : arena_printf(c->a, "Fatal Python error: %s", msg),
		.source = "cpython",
	};
	if (ab->message)
		r->abort = ab;
}
