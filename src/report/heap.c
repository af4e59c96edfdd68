/* The heap census as JSON and as text (heap.h). */
#include "report/heap.h"

#include <inttypes.h>
#include <string.h>

json_t *report_heap_json(const struct model_heap *h, json_t *(*str)(const char *))
{
	if (!h)
		return json_null();
	json_t *types = json_array(), *unread = json_array();
	for (size_t i = 0; types && i < h->types.n; i++) {
		const struct model_heap_type *t = h->types.items[i];
		char addr[24];
		snprintf(addr, sizeof(addr), "0x%" PRIx64, t->address);
		json_array_append_new(types, json_pack("{s:o, s:o, s:s, s:I, s:I, s:I, s:I, s:b, s:o}", "module",
						       str(t->module), "qualname", str(t->qualname), "address", addr,
						       "count", (json_int_t)t->count, "bytes", (json_int_t)t->bytes,
						       "permanent", (json_int_t)t->permanent, "permanent_bytes",
						       (json_int_t)t->permanent_bytes, "exact", t->exact, "sizeof_owner",
						       str(t->sizeof_owner)));
	}
	for (size_t i = 0; unread && i < h->unread.n; i++)
		json_array_append_new(unread, str(h->unread.items[i]));
	return json_pack("{s:I, s:I, s:[I, I, I], s:I, s:b, s:o, s:o, s:f}", "objects", (json_int_t)h->objects,
			 "bytes", (json_int_t)h->bytes, "generations", (json_int_t)h->generation[0],
			 (json_int_t)h->generation[1], (json_int_t)h->generation[2], "permanent",
			 (json_int_t)h->permanent, "exact", h->exact, "types", types ? types : json_null(), "unread",
			 unread ? unread : json_null(), "read_ms", h->read_ms);
}

/* 123456789 as "117.7 MiB" */
static const char *human(uint64_t b, char *buf, size_t n)
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

int report_heap_text(FILE *out, const struct model_report *r, size_t top)
{
	const struct model_heap *h = r->heap;
	char b1[32];
	if (r->pid >= 0)
		fprintf(out, "Heap of pid %" PRId64, r->pid);
	else
		fprintf(out, "Heap of %s", r->input_path ? r->input_path : "the dump");
	fprintf(out, " (CPython %s%s)\n", r->version ? r->version : "of an unknown version",
		r->free_threaded ? ", free-threaded" : "");
	if (!h) {
		fprintf(out, "No census: %s\n", r->has_python ? "the interpreter's state could not be read"
			: "no Python runtime was found");
	} else {
		size_t inexact = 0;
		for (size_t i = 0; i < h->types.n; i++)
			inexact += !((const struct model_heap_type *)h->types.items[i])->exact;
		fprintf(out, "Objects on the GC's lists: %" PRIu64 ", %s by sys.getsizeof%s\n", h->objects,
			human(h->bytes, b1, sizeof(b1)), h->exact ? "" : " (not exact: see below)");
		fprintf(out, "  generations 0, 1, 2: %" PRIu64 ", %" PRIu64 ", %" PRIu64 "; permanent (gc.freeze): %"
			PRIu64 "; read in %.1f ms\n", h->generation[0], h->generation[1], h->generation[2],
			h->permanent, h->read_ms);
		if (h->types.n)
			fprintf(out, "\n%12s %14s  %s\n", "objects", "bytes", "type");
		size_t shown = top && top < h->types.n ? top : h->types.n;
		for (size_t i = 0; i < shown; i++) {
			const struct model_heap_type *t = h->types.items[i];
			fprintf(out, "%12" PRIu64 " %13" PRIu64 "%s  ", t->count, t->bytes, t->exact ? " " : "+");
			if (t->module && strcmp(t->module, "builtins") != 0)
				fprintf(out, "%s.", t->module);
			fprintf(out, "%s", t->qualname ? t->qualname : "?");
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
		for (size_t i = 0; i < h->unread.n; i++)
			fprintf(out, "Not read: %s\n", (const char *)h->unread.items[i]);
	}
	for (size_t i = 0; i < r->warnings.n; i++)
		fprintf(out, "Warning: %s\n", (const char *)r->warnings.items[i]);
	return ferror(out) ? -1 : 0;
}
