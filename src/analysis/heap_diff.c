/* pycore heap --diff (heap.h): each type's count and bytes in both
 * censuses, matched by the type's module and qualified name (a type
 * object's address holds within one process, not across a restart, and
 * dumps of one pid are one process); the new dump's largest objects
 * that the old one holds at the same address, of the same type, smaller;
 * and the new dump's largest retainers, by path, against what the object
 * at that path retained in the old one (the old census's own largest, and
 * those at the new retainers' addresses: a path's object may be another). */
#include "analysis/heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int64_t added(const struct model_heap_delta *d)
{
	return (int64_t)(d->bytes_new - d->bytes_old);
}

static int by_growth(const void *a, const void *b)
{
	const struct model_heap_delta *x = *(const struct model_heap_delta *const *)a;
	const struct model_heap_delta *y = *(const struct model_heap_delta *const *)b;
	if (added(x) != added(y))
		return added(x) < added(y) ? 1 : -1;
	int64_t cx = (int64_t)(x->count_new - x->count_old), cy = (int64_t)(y->count_new - y->count_old);
	return cx < cy ? 1 : cx > cy ? -1 : 0;
}

static int by_object_growth(const void *a, const void *b)
{
	const struct model_heap_object *x = *(const struct model_heap_object *const *)a;
	const struct model_heap_object *y = *(const struct model_heap_object *const *)b;
	uint64_t gx = x->bytes - x->bytes_old, gy = y->bytes - y->bytes_old;
	return gx < gy ? 1 : gx > gy ? -1 : (x->address > y->address) - (x->address < y->address);
}

/* The delta of the type named like T in V, made when missing. */
static struct model_heap_delta *delta_of(struct arena *a, struct ptrvec *v, const struct model_heap_type *t)
{
	for (size_t i = 0; i < v->n; i++) {
		struct model_heap_delta *d = v->items[i];
		if (same_name(d->module, t->module) && same_name(d->qualname, t->qualname))
			return d;
	}
	struct model_heap_delta *d = arena_alloc(a, sizeof(*d));
	if (!d || ptrvec_push(a, v, d) != 0)
		return NULL;
	d->module = arena_strdup(a, t->module);
	d->qualname = arena_strdup(a, t->qualname);
	return d;
}

static int64_t root_added(const struct model_heap_root_delta *d)
{
	return (int64_t)(d->retained_new - d->retained_old);
}

static int by_root_growth(const void *a, const void *b)
{
	const struct model_heap_root_delta *x = *(const struct model_heap_root_delta *const *)a;
	const struct model_heap_root_delta *y = *(const struct model_heap_root_delta *const *)b;
	if (root_added(x) != root_added(y))
		return root_added(x) < root_added(y) ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* The retainer of OLD (its largest, or those at NEW's retainers'
 * addresses) whose path is PATH, or NULL. */
static const struct model_heap_retainer *old_at(const struct model_heap_retained *o, const char *path)
{
	const struct ptrvec *lists[2] = { &o->retainers, &o->watched };
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			const struct model_heap_retainer *r = lists[l]->items[i];
			if (r->path && strcmp(r->path, path) == 0)
				return r;
		}
	return NULL;
}

/* Each of NEW's largest retainers against what its path retained in OLD
 * (nothing: OLD has no object reached there), into DF's roots. */
static struct pc_error *root_deltas(const struct model_heap_retained *o, const struct model_heap_retained *n,
				    struct arena *a, struct model_heap_diff *df)
{
	for (size_t i = 0; i < n->retainers.n; i++) {
		const struct model_heap_retainer *r = n->retainers.items[i];
		const struct model_heap_retainer *was = r->path && o ? old_at(o, r->path) : NULL;
		if (!r->path || (was && was->retained == r->retained && was->objects == r->objects))
			continue;
		struct model_heap_root_delta *d = arena_alloc(a, sizeof(*d));
		if (!d || ptrvec_push(a, &df->roots, d) != 0)
			return pc_error_new(PC_ENOMEM, NULL, "out of memory");
		*d = (struct model_heap_root_delta){ .path = r->path, .module = r->module, .qualname = r->qualname,
						     .retained_new = r->retained, .objects_new = r->objects,
						     .retained_old = was ? was->retained : 0,
						     .objects_old = was ? was->objects : 0 };
	}
	qsort(df->roots.items, df->roots.n, sizeof(void *), by_root_growth);
	return NULL;
}

static struct pc_error *compare(const struct model_heap *o, struct model_heap *n, struct arena *a,
				const char *old_path)
{
	struct pc_error *e;
	struct model_heap_diff *df = arena_alloc(a, sizeof(*df));
	struct ptrvec all = { 0 };
	if (!df)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	df->old_input = arena_strdup(a, old_path);
	df->objects_old = o->objects + o->untracked_objects;
	df->bytes_old = o->bytes + o->untracked_bytes;
	/* each type's objects, tracked or not, in the old census and the new */
	const struct ptrvec *lists[4] = { &o->types, &o->untracked_types, &n->types, &n->untracked_types };
	for (size_t l = 0; l < 4; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const struct model_heap_type *t = lists[l]->items[i];
			struct model_heap_delta *d = delta_of(a, &all, t);
			if (!d)
				return pc_error_new(PC_ENOMEM, NULL, "out of memory");
			*(l < 2 ? &d->count_old : &d->count_new) += t->count;
			*(l < 2 ? &d->bytes_old : &d->bytes_new) += t->bytes;
		}
	}
	for (size_t i = 0; i < all.n; i++) {
		struct model_heap_delta *d = all.items[i];
		if (d->count_old != d->count_new || d->bytes_old != d->bytes_new)
			ptrvec_push(a, &df->types, d);
	}
	qsort(df->types.items, df->types.n, sizeof(void *), by_growth);
	for (size_t i = 0; i < n->largest.n; i++) {
		struct model_heap_object *now = n->largest.items[i];
		for (size_t k = 0; k < o->watched.n; k++) {
			const struct model_heap_object *was = o->watched.items[k];
			if (was->address != now->address || !same_name(was->module, now->module) ||
			    !same_name(was->qualname, now->qualname) || was->bytes >= now->bytes)
				continue;
			struct model_heap_object *g = arena_alloc(a, sizeof(*g));
			if (!g)
				return pc_error_new(PC_ENOMEM, NULL, "out of memory");
			*g = *now;
			g->bytes_old = was->bytes;
			ptrvec_push(a, &df->grown, g);
		}
	}
	qsort(df->grown.items, df->grown.n, sizeof(void *), by_object_growth);
	df->roots_known = n->retained && o->retained;
	if (df->roots_known && (e = root_deltas(o->retained, n->retained, a, df)) != NULL)
		return e;
	n->diff = df;
	return NULL;
}

/* E, which says which dump it is of: PATH (the caller names the command's
 * operands, not one of them) */
static struct pc_error *named(struct pc_error *e, const char *path)
{
	if (e->file)
		return e;
	struct pc_error *w = pc_error_new(e->code, path, "%s", e->message);
	pc_error_free(e);
	return w;
}

/* The diff of OLD against NEW (a dump's path, or with PID > 0 the live
 * process's label). */
static struct pc_error *diff(const char *old, const char *new, long long pid, bool stop,
			     const struct analysis_options *opt, struct analysis **out)
{
	struct analysis *a_old = NULL, *a_new = NULL;
	struct pc_error *e;
	*out = NULL;
	/* the new dump first: its largest objects are those the old
	 * dump's census gives the sizes of (the objects that grew in place) */
	if ((e = pid > 0 ? analysis_run_process(pid, stop, opt, &a_new) : analysis_run(new, opt, &a_new)) != NULL)
		return named(e, new);
	struct model_report *rn = (struct model_report *)analysis_report(a_new);
	struct analysis_options with = *opt;
	/* the new dump's largest objects, and its largest retainers (what each
	 * retained in the old one) */
	uint64_t watch[2 * MODEL_HEAP_LARGEST];
	for (size_t i = 0; rn->heap && i < rn->heap->largest.n && i < MODEL_HEAP_LARGEST; i++)
		watch[with.py.heap_nwatch++] = ((struct model_heap_object *)rn->heap->largest.items[i])->address;
	const struct model_heap_retained *rr = rn->heap ? rn->heap->retained : NULL;
	for (size_t i = 0; rr && i < rr->retainers.n && i < MODEL_HEAP_LARGEST; i++)
		watch[with.py.heap_nwatch++] = ((struct model_heap_retainer *)rr->retainers.items[i])->address;
	with.py.heap_watch = watch;
	if ((e = analysis_run(old, &with, &a_old)) != NULL) {
		analysis_free(a_new);
		return named(e, old);
	}
	const struct model_report *ro = analysis_report(a_old);
	if (ro->pid != rn->pid)
		e = pc_error_new(PC_EFORMAT, new, "--diff compares two reads of one process: this is of pid %lld, "
				 "%s of pid %lld", (long long)rn->pid, old, (long long)ro->pid);
	else if (!ro->heap || !rn->heap)
		e = pc_error_new(PC_EFORMAT, ro->heap ? new : old, "no census: the interpreter's state could not "
				 "be read");
	else
		e = compare(ro->heap, rn->heap, rn->arena, old);
	analysis_free(a_old);
	if (e) {
		analysis_free(a_new);
		return e;
	}
	*out = a_new;
	return NULL;
}

struct pc_error *analysis_heap_diff(const char *old, const char *new, const struct analysis_options *opt,
				    struct analysis **out)
{
	return diff(old, new, 0, false, opt, out);
}

struct pc_error *analysis_heap_diff_process(const char *old, long long pid, bool stop,
					    const struct analysis_options *opt, struct analysis **out)
{
	char label[48];
	snprintf(label, sizeof(label), "pid %lld", pid);
	return diff(old, label, pid, stop, opt, out);
}
