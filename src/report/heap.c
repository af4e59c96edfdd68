/* The heap census as JSON and as text (heap.h). */
#include "report/heap.h"

#include <inttypes.h>
#include <string.h>

static json_t *address(uint64_t a)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

static json_t *objects_json(const struct ptrvec *v, bool grown, json_t *(*str)(const char *))
{
	json_t *out = json_array();
	for (size_t i = 0; out && i < v->n; i++) {
		const struct model_heap_object *o = v->items[i];
		json_t *j = json_pack("{s:o, s:o, s:o, s:I}", "address", address(o->address), "module", str(o->module),
				      "qualname", str(o->qualname), "bytes", (json_int_t)o->bytes);
		if (j && grown)
			json_object_set_new(j, "bytes_old", json_integer((json_int_t)o->bytes_old));
		json_array_append_new(out, j);
	}
	return out ? out : json_null();
}

static json_t *diff_json(const struct model_heap_diff *d, json_t *(*str)(const char *))
{
	if (!d)
		return json_null();
	json_t *types = json_array();
	for (size_t i = 0; types && i < d->types.n; i++) {
		const struct model_heap_delta *t = d->types.items[i];
		json_array_append_new(types, json_pack("{s:o, s:o, s:I, s:I, s:I, s:I}", "module", str(t->module),
						       "qualname", str(t->qualname), "count_old",
						       (json_int_t)t->count_old, "count_new", (json_int_t)t->count_new,
						       "bytes_old", (json_int_t)t->bytes_old, "bytes_new",
						       (json_int_t)t->bytes_new));
	}
	json_t *roots = d->roots_known ? json_array() : json_null();
	for (size_t i = 0; d->roots_known && roots && i < d->roots.n; i++) {
		const struct model_heap_root_delta *t = d->roots.items[i];
		json_array_append_new(roots, json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I}", "path", str(t->path),
						       "module", str(t->module), "qualname", str(t->qualname),
						       "retained_old", (json_int_t)t->retained_old, "retained_new",
						       (json_int_t)t->retained_new, "objects_old",
						       (json_int_t)t->objects_old, "objects_new",
						       (json_int_t)t->objects_new));
	}
	return json_pack("{s:o, s:I, s:I, s:o, s:o, s:o}", "old_input", str(d->old_input), "objects_old",
			 (json_int_t)d->objects_old, "bytes_old", (json_int_t)d->bytes_old, "types",
			 types ? types : json_null(), "grown", objects_json(&d->grown, true, str), "roots",
			 roots ? roots : json_null());
}

static json_t *types_json(const struct ptrvec *v, json_t *(*str)(const char *))
{
	json_t *types = json_array();
	for (size_t i = 0; types && i < v->n; i++) {
		const struct model_heap_type *t = v->items[i];
		json_array_append_new(types, json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:b, s:o}", "module",
						       str(t->module), "qualname", str(t->qualname), "address",
						       address(t->address),
						       "count", (json_int_t)t->count, "bytes", (json_int_t)t->bytes,
						       "permanent", (json_int_t)t->permanent, "permanent_bytes",
						       (json_int_t)t->permanent_bytes, "exact", t->exact, "sizeof_owner",
						       str(t->sizeof_owner)));
	}
	return types;
}

static json_t *retained_json(const struct model_heap_retained *r, json_t *(*str)(const char *))
{
	if (!r)
		return json_null();
	json_t *roots = json_array(), *top = json_array();
	for (size_t i = 0; roots && i < r->roots.n; i++)
		json_array_append_new(roots, str(r->roots.items[i]));
	for (size_t i = 0; top && i < r->retainers.n; i++) {
		const struct model_heap_retainer *o = r->retainers.items[i];
		json_array_append_new(top, json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "address",
						     address(o->address), "module", str(o->module), "qualname",
						     str(o->qualname), "bytes", (json_int_t)o->bytes, "retained",
						     (json_int_t)o->retained, "objects", (json_int_t)o->objects,
						     "path", str(o->path)));
	}
	json_t *tree = json_array();
	for (size_t i = 0; tree && i < r->tree.n; i++) {
		const struct model_heap_node *o = r->tree.items[i];
		json_array_append_new(tree, json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:I}", "parent",
						      (json_int_t)o->parent, "address", address(o->address), "module",
						      str(o->module), "qualname", str(o->qualname), "name",
						      str(o->name), "bytes", (json_int_t)o->bytes, "retained",
						      (json_int_t)o->retained, "objects", (json_int_t)o->objects));
	}
	json_t *gtypes = json_array();
	for (size_t i = 0; gtypes && i < r->garbage_types.n; i++) {
		const struct model_heap_type *t = r->garbage_types.items[i];
		json_array_append_new(gtypes, json_pack("{s:o, s:o, s:I, s:I}", "module", str(t->module), "qualname",
							str(t->qualname), "count", (json_int_t)t->count, "bytes",
							(json_int_t)t->bytes));
	}
	json_t *garbage = json_pack("{s:I, s:I, s:I, s:I, s:o}", "objects", (json_int_t)r->garbage_objects, "bytes",
				    (json_int_t)r->garbage_bytes, "untracked_objects",
				    (json_int_t)r->garbage_untracked, "untracked_bytes",
				    (json_int_t)r->garbage_untracked_bytes, "types", gtypes ? gtypes : json_null());
	return json_pack("{s:o, s:I, s:I, s:I, s:o, s:o, s:o, s:f}", "roots", roots ? roots : json_null(),
			 "reached_objects", (json_int_t)r->reached_objects, "reached_bytes",
			 (json_int_t)r->reached_bytes, "edges", (json_int_t)r->edges, "retainers",
			 top ? top : json_null(), "tree", tree ? tree : json_null(), "garbage",
			 garbage ? garbage : json_null(), "ms", r->ms);
}

/* glibc's malloc as it counts itself */
static json_t *malloc_json(const struct model_heap_malloc *m, json_t *(*str)(const char *))
{
	if (!m)
		return json_null();
	return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "allocator", str(m->allocator),
			 "arenas", (json_int_t)m->arenas, "arena_bytes", (json_int_t)m->arena_bytes, "in_use",
			 (json_int_t)m->in_use, "free", (json_int_t)m->free, "top", (json_int_t)m->top, "free_chunks",
			 (json_int_t)m->free_chunks, "mmapped", (json_int_t)m->mmapped, "mmapped_blocks",
			 (json_int_t)m->mmapped_blocks, "reserved", (json_int_t)m->reserved);
}

/* pymalloc's arenas as it counts them */
static json_t *pymalloc_json(const struct model_heap_pymalloc *m)
{
	if (!m)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "arenas", (json_int_t)m->arenas, "arena_size",
			 (json_int_t)m->arena_size, "pool_size", (json_int_t)m->pool_size, "arena_bytes",
			 (json_int_t)m->arena_bytes, "allocated", (json_int_t)m->allocated, "blocks",
			 (json_int_t)m->blocks, "free_pools", (json_int_t)m->free_pools);
}

/* mimalloc's arenas as it counts them */
static json_t *mimalloc_json(const struct model_heap_mimalloc *m)
{
	if (!m)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "arenas", (json_int_t)m->arenas, "arena_bytes",
			 (json_int_t)m->arena_bytes, "segments", (json_int_t)m->segments, "segment_bytes",
			 (json_int_t)m->segment_bytes, "pages", (json_int_t)m->pages, "page_bytes",
			 (json_int_t)m->page_bytes, "blocks", (json_int_t)m->blocks, "allocated",
			 (json_int_t)m->allocated);
}

uint64_t report_heap_attributed(const struct model_heap_memory *m)
{
	const struct model_heap_malloc *c = m->malloc;
	return (c ? c->arena_bytes + c->mmapped : 0) + (m->pymalloc ? m->pymalloc->arena_bytes : 0) +
	       (m->mimalloc ? m->mimalloc->arena_bytes : 0) + m->modules_bss;
}

json_t *report_heap_json(const struct model_heap *h, json_t *(*str)(const char *))
{
	if (!h)
		return json_null();
	json_t *types = types_json(&h->types, str), *unread = json_array();
	for (size_t i = 0; unread && i < h->unread.n; i++)
		json_array_append_new(unread, str(h->unread.items[i]));
	json_t *untracked = types_json(&h->untracked_types, str);
	json_t *j = json_pack("{s:I, s:I, s:[I, I, I], s:I, s:b, s:o, s:o, s:f, s:o, s:o}", "objects",
			      (json_int_t)h->objects, "bytes", (json_int_t)h->bytes, "generations",
			      (json_int_t)h->generation[0], (json_int_t)h->generation[1], (json_int_t)h->generation[2],
			      "permanent", (json_int_t)h->permanent, "exact", h->exact, "types",
			      types ? types : json_null(), "unread", unread ? unread : json_null(), "read_ms", h->read_ms,
			      "largest", objects_json(&h->largest, false, str), "diff", diff_json(h->diff, str));
	if (j)
		json_object_set_new(j, "found_in", str(h->found_in));
	const struct model_heap_memory *m = &h->memory;
	json_t *mem = !m->known ? json_null()
		: json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "mapped", (json_int_t)m->mapped, "files",
			    (json_int_t)m->files, "stacks", (json_int_t)m->stacks, "reserved", (json_int_t)m->reserved,
			    "anonymous", (json_int_t)m->anonymous, "python", (json_int_t)m->python);
	if (mem && m->known) {
		json_object_set_new(mem, "modules_bss", json_integer((json_int_t)m->modules_bss));
		json_object_set_new(mem, "buffers", json_integer((json_int_t)m->buffers));
		json_object_set_new(mem, "malloc", malloc_json(m->malloc, str));
		json_object_set_new(mem, "malloc_unread", m->malloc_unread ? str(m->malloc_unread) : json_null());
		json_object_set_new(mem, "pymalloc", pymalloc_json(m->pymalloc));
		json_object_set_new(mem, "pymalloc_unread", m->pymalloc_unread ? str(m->pymalloc_unread)
				    : json_null());
		json_object_set_new(mem, "mimalloc", mimalloc_json(m->mimalloc));
		json_object_set_new(mem, "mimalloc_unread", m->mimalloc_unread ? str(m->mimalloc_unread)
				    : json_null());
	}
	if (j)
		json_object_set_new(j, "memory", mem ? mem : json_null());
	if (j)
		json_object_set_new(j, "retained", retained_json(h->retained, str));
	if (j)
		json_object_set_new(j, "untracked", json_pack("{s:I, s:I, s:o}", "objects",
							      (json_int_t)h->untracked_objects, "bytes",
							      (json_int_t)h->untracked_bytes, "types",
							      untracked ? untracked : json_null()));
	return j;
}

const char *report_heap_human(uint64_t b, char *buf, size_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

const char *report_heap_type_name(const char *module, const char *qualname, char *buf, size_t n)
{
	bool bare = !module || strcmp(module, "builtins") == 0;
	snprintf(buf, n, "%s%s%s", bare ? "" : module, bare ? "" : ".", qualname ? qualname : "?");
	return buf;
}

static void type_name(FILE *out, const char *module, const char *qualname)
{
	char buf[REPORT_HEAP_NAME_MAX];
	fputs(report_heap_type_name(module, qualname, buf, sizeof(buf)), out);
}

/* "Heap of pid N (CPython V)" */
static void heading(FILE *out, const struct model_report *r, const char *what)
{
	if (r->pid >= 0)
		fprintf(out, "%s of pid %" PRId64, what, r->pid);
	else
		fprintf(out, "%s of %s", what, r->input_path ? r->input_path : "the dump");
	fprintf(out, " (CPython %s%s)\n", r->version ? r->version : "of an unknown version",
		r->free_threaded ? ", free-threaded" : "");
}

static void warnings(FILE *out, const struct model_report *r)
{
	for (size_t i = 0; r->heap && i < r->heap->unread.n; i++)
		fprintf(out, "Not read: %s\n", (const char *)r->heap->unread.items[i]);
	for (size_t i = 0; i < r->warnings.n; i++)
		fprintf(out, "Warning: %s\n", (const char *)r->warnings.items[i]);
}

/* "Memory: 1.2 GiB mapped: ..." */
static void memory_text(FILE *out, const struct model_heap_memory *m, bool mimalloc)
{
	char b[6][32];
	if (!m->known) {
		fprintf(out, "Memory: the dump records no mappings\n");
		return;
	}
	fprintf(out, "Memory: %s mapped: files %s, thread stacks %s, reserved (no access) %s; anonymous %s, of "
		"which the objects counted fill %s (%.0f %%)", report_heap_human(m->mapped, b[0], 32),
		report_heap_human(m->files, b[1], 32), report_heap_human(m->stacks, b[2], 32), report_heap_human(m->reserved, b[5], 32),
		report_heap_human(m->anonymous, b[3], 32), report_heap_human(m->python, b[4], 32),
		m->anonymous ? 100.0 * (double)m->python / (double)m->anonymous : 0.0);
	if (m->buffers)
		fprintf(out, ", %s of it in buffers they own (bytearrays', arrays', numpy arrays' data)",
			report_heap_human(m->buffers, b[0], 32));
	fputc('\n', out);
	const struct model_heap_pymalloc *p = m->pymalloc;
	const struct model_heap_malloc *c = m->malloc;
	if (p)
		fprintf(out, "  pymalloc: %" PRIu64 " arena%s of %s, %s: %s in %" PRIu64 " blocks in use, %s free (%"
			PRIu64 " pools unused, the rest free blocks, pool headers and rounding)\n", p->arenas,
			p->arenas == 1 ? "" : "s", report_heap_human(p->arena_size, b[0], 32), report_heap_human(p->arena_bytes, b[1], 32),
			report_heap_human(p->allocated, b[2], 32), p->blocks, report_heap_human(p->arena_bytes - p->allocated, b[3], 32),
			p->free_pools);
	if (m->pymalloc_unread)
		fprintf(out, "  %s\n", m->pymalloc_unread);
	const struct model_heap_mimalloc *mi = m->mimalloc;
	if (mi)
		fprintf(out, "  mimalloc: %" PRIu64 " arena%s, %s: %" PRIu64 " segment%s in use, %s; %" PRIu64 " page%s "
			"in them, %s: %s in %" PRIu64 " blocks in use, %s free in the pages (free blocks, rounding), "
			"%s in no page\n", mi->arenas, mi->arenas == 1 ? "" : "s",
			report_heap_human(mi->arena_bytes, b[0], 32), mi->segments, mi->segments == 1 ? "" : "s",
			report_heap_human(mi->segment_bytes, b[1], 32), mi->pages, mi->pages == 1 ? "" : "s",
			report_heap_human(mi->page_bytes, b[2], 32), report_heap_human(mi->allocated, b[3], 32),
			mi->blocks, report_heap_human(mi->page_bytes - mi->allocated, b[4], 32),
			report_heap_human(mi->arena_bytes - mi->page_bytes, b[5], 32));
	if (m->mimalloc_unread)
		fprintf(out, "  %s\n", m->mimalloc_unread);
	if (c)
		fprintf(out, "  C heap (%s's malloc): %" PRIu64 " arena%s, %s from the system: %s in use, %s free "
			"(%s of it at the arenas' tops, the rest in %" PRIu64 " free chunks); %" PRIu64 " block%s "
			"mapped apart, %s; its threads' heaps reserve %s more (no access%s)\n", c->allocator,
			c->arenas, c->arenas == 1 ? "" : "s", report_heap_human(c->arena_bytes, b[0], 32),
			report_heap_human(c->in_use, b[1], 32), report_heap_human(c->free, b[2], 32), report_heap_human(c->top, b[3], 32), c->free_chunks, c->mmapped_blocks,
			c->mmapped_blocks == 1 ? "" : "s", report_heap_human(c->mmapped, b[4], 32), report_heap_human(c->reserved, b[5], 32),
			c->reserved_anonymous ? ": the dump records them readable, counted reserved above" : "");
	if (m->malloc_unread)
		fprintf(out, "  %s\n", m->malloc_unread);
	if (p || c || mi) {
		/* what no allocator read holds: the others', when one is not read */
		uint64_t held = report_heap_attributed(m);
		uint64_t rest = m->anonymous > held ? m->anonymous - held : 0;
		fprintf(out, "  modules' zero-initialised data (.bss): %s\n", report_heap_human(m->modules_bss, b[4], 32));
		fprintf(out, "  unattributed (anonymous memory none of those holds%s): %s (%.0f %% of the anonymous)\n",
			(p || mi) && c ? "" : p || mi ? ", malloc's among it" : mimalloc ? ", mimalloc's heaps among it"
			: ", pymalloc's among it",
			report_heap_human(rest, b[5], 32),
			m->anonymous ? 100.0 * (double)rest / (double)m->anonymous : 0.0);
	}
}

/* "Largest retainers: ..." (TOP of them; 0: all) */
static void retained_text(FILE *out, const struct model_heap_retained *r, uint64_t counted, size_t top)
{
	char b1[32], b2[32];
	if (!r)
		return;
	fprintf(out, "\nReached from the roots (sys.modules, sys.__dict__, builtins, the frames' locals) through "
		"the references counted: %" PRIu64 " of %" PRIu64 " objects, %s\n", r->reached_objects, counted,
		report_heap_human(r->reached_bytes, b1, sizeof(b1)));
	if (r->garbage_objects) {
		fprintf(out, "Garbage (cycles the GC has not collected yet: only each other holds them): %" PRIu64
			" objects, %s", r->garbage_objects, report_heap_human(r->garbage_bytes, b1, sizeof(b1)));
		if (r->garbage_untracked)
			fprintf(out, ", and %" PRIu64 " untracked object%s they alone hold, %s", r->garbage_untracked,
				r->garbage_untracked == 1 ? "" : "s", report_heap_human(r->garbage_untracked_bytes, b2, sizeof(b2)));
		fputc('\n', out);
		for (size_t i = 0; i < r->garbage_types.n && i < 5; i++) {
			const struct model_heap_type *t = r->garbage_types.items[i];
			fprintf(out, "%12" PRIu64 " %13" PRIu64 "   ", t->count, t->bytes);
			type_name(out, t->module, t->qualname);
			fputc('\n', out);
		}
	} else {
		fprintf(out, "Garbage (cycles the GC has not collected yet): none\n");
	}
	if (!r->retainers.n)
		return;
	fprintf(out, "Largest retainers (what each holds alone: freed with it):\n");
	size_t shown = top && top < r->retainers.n ? top : r->retainers.n;
	for (size_t i = 0; i < shown; i++) {
		const struct model_heap_retainer *o = r->retainers.items[i];
		fprintf(out, "  %10s  %9" PRIu64 " objects  ", report_heap_human(o->retained, b1, sizeof(b1)), o->objects);
		type_name(out, o->module, o->qualname);
		fprintf(out, " of %s at 0x%" PRIx64 "  %s\n", report_heap_human(o->bytes, b2, sizeof(b2)), o->address,
			o->path ? o->path : "(no path)");
	}
}

int report_heap_text(FILE *out, const struct model_report *r, size_t top)
{
	const struct model_heap *h = r->heap;
	char b1[32];
	heading(out, r, "Heap");
	if (!h) {
		fprintf(out, "No census: %s\n", r->has_python ? "the interpreter's state could not be read"
			: "no Python runtime was found");
	} else {
		size_t inexact = 0;
		for (size_t i = 0; i < h->types.n; i++)
			inexact += !((const struct model_heap_type *)h->types.items[i])->exact;
		bool mimalloc = h->found_in && !strcmp(h->found_in, "mimalloc heaps");
		fprintf(out, "Objects %s: %" PRIu64 ", %s by sys.getsizeof%s\n",
			mimalloc ? "the GC tracks (in mimalloc's heaps)" : "on the GC's lists", h->objects,
			report_heap_human(h->bytes, b1, sizeof(b1)), h->exact ? "" : " (not exact: see below)");
		if (mimalloc)
			fprintf(out, "  no generations (a free-threaded build's GC has none); read in %.1f ms\n",
				h->read_ms);
		else
			fprintf(out, "  generations 0, 1, 2: %" PRIu64 ", %" PRIu64 ", %" PRIu64 "; permanent (gc.freeze): %"
				PRIu64 "; read in %.1f ms\n", h->generation[0], h->generation[1], h->generation[2],
				h->permanent, h->read_ms);
		memory_text(out, &h->memory, mimalloc);
		if (h->types.n)
			fprintf(out, "\n%12s %14s  %s\n", "objects", "bytes", "type");
		size_t shown = top && top < h->types.n ? top : h->types.n;
		for (size_t i = 0; i < shown; i++) {
			const struct model_heap_type *t = h->types.items[i];
			fprintf(out, "%12" PRIu64 " %13" PRIu64 "%s  ", t->count, t->bytes, t->exact ? " " : "+");
			type_name(out, t->module, t->qualname);
			if (!t->exact)
				fprintf(out, " (__sizeof__ of %s)", t->sizeof_owner ? t->sizeof_owner : "a class pycore cannot name");
			fputc('\n', out);
		}
		if (shown < h->types.n)
			fprintf(out, "%12s %14s  and %zu types more (--top N shows N)\n", "", "", h->types.n - shown);
		if (inexact)
			fprintf(out, "+: %zu type%s a __sizeof__ of %s own, which pycore does not compute: %s basic "
				"size counted instead\n", inexact, inexact == 1 ? " has" : "s have",
				inexact == 1 ? "its" : "their", inexact == 1 ? "its" : "their");
		fprintf(out, "\nObjects the GC does not track, reached from those it does: %" PRIu64 ", %s\n",
			h->untracked_objects, report_heap_human(h->untracked_bytes, b1, sizeof(b1)));
		shown = top && top < h->untracked_types.n ? top : h->untracked_types.n;
		for (size_t i = 0; i < shown && i < 10; i++) {
			const struct model_heap_type *t = h->untracked_types.items[i];
			fprintf(out, "%12" PRIu64 " %13" PRIu64 "%s  ", t->count, t->bytes, t->exact ? " " : "+");
			type_name(out, t->module, t->qualname);
			fputc('\n', out);
		}
		retained_text(out, h->retained, h->objects + h->untracked_objects, top);
		if (h->largest.n)
			fprintf(out, "\nLargest objects:\n");
		for (size_t i = 0; i < h->largest.n && i < 5; i++) {
			const struct model_heap_object *o = h->largest.items[i];
			fprintf(out, "  %10s  0x%" PRIx64 " ", report_heap_human(o->bytes, b1, sizeof(b1)), o->address);
			type_name(out, o->module, o->qualname);
			fputc('\n', out);
		}
	}
	warnings(out, r);
	return ferror(out) ? -1 : 0;
}

int report_heap_diff_text(FILE *out, const struct model_report *r, size_t top)
{
	const struct model_heap *h = r->heap;
	const struct model_heap_diff *d = h ? h->diff : NULL;
	char b1[32], b2[32], b3[32];
	heading(out, r, "Heap growth");
	if (!d)
		return ferror(out) ? -1 : 0;
	uint64_t objects = h->objects + h->untracked_objects, bytes = h->bytes + h->untracked_bytes;
	int64_t grew = (int64_t)(bytes - d->bytes_old);
	fprintf(out, "From %s to %s: %" PRIu64 " to %" PRIu64 " objects (%+" PRId64 "), %s to %s (%s%s)\n",
		d->old_input, r->input_path ? r->input_path : "the new dump", d->objects_old, objects,
		(int64_t)(objects - d->objects_old), report_heap_human(d->bytes_old, b1, sizeof(b1)),
		report_heap_human(bytes, b2, sizeof(b2)), grew < 0 ? "-" : "+",
		report_heap_human(grew < 0 ? (uint64_t)-grew : (uint64_t)grew, b3, sizeof(b3)));
	if (d->types.n)
		fprintf(out, "\n%12s %14s  %s\n", "objects", "bytes", "type (what changed, most bytes added first)");
	size_t shown = top && top < d->types.n ? top : d->types.n;
	for (size_t i = 0; i < shown; i++) {
		const struct model_heap_delta *t = d->types.items[i];
		fprintf(out, "%+12" PRId64 " %+14" PRId64 "  ", (int64_t)(t->count_new - t->count_old),
			(int64_t)(t->bytes_new - t->bytes_old));
		type_name(out, t->module, t->qualname);
		fprintf(out, " (%" PRIu64 " to %" PRIu64 ")\n", t->count_old, t->count_new);
	}
	if (shown < d->types.n)
		fprintf(out, "%12s %14s  and %zu types more (--top N shows N)\n", "", "", d->types.n - shown);
	if (d->roots.n)
		fprintf(out, "\n%12s %14s  %s\n", "objects", "bytes",
			"what each of the new dump's largest retainers retains (most bytes added first)");
	shown = top && top < d->roots.n ? top : d->roots.n;
	for (size_t i = 0; i < shown; i++) {
		const struct model_heap_root_delta *t = d->roots.items[i];
		fprintf(out, "%+12" PRId64 " %+14" PRId64 "  %s (", (int64_t)(t->objects_new - t->objects_old),
			(int64_t)(t->retained_new - t->retained_old), t->path);
		type_name(out, t->module, t->qualname);
		fprintf(out, "): %s to %s\n", report_heap_human(t->retained_old, b1, sizeof(b1)),
			report_heap_human(t->retained_new, b2, sizeof(b2)));
	}
	if (shown < d->roots.n)
		fprintf(out, "%12s %14s  and %zu retainers more (--top N shows N)\n", "", "", d->roots.n - shown);
	if (d->grown.n)
		fprintf(out, "\nGrew in place (of the new dump's 50 largest, those the old held smaller at one address):\n");
	for (size_t i = 0; i < d->grown.n && i < 10; i++) {
		const struct model_heap_object *o = d->grown.items[i];
		fprintf(out, "  0x%" PRIx64 " ", o->address);
		type_name(out, o->module, o->qualname);
		fprintf(out, ": %s to %s\n", report_heap_human(o->bytes_old, b1, sizeof(b1)), report_heap_human(o->bytes, b2, sizeof(b2)));
	}
	warnings(out, r);
	return ferror(out) ? -1 : 0;
}
