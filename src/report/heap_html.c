/* pycore heap --format html (heap.h): the census as one self-contained
 * page, with the page primitives of html.h.
 *
 * The treemap is the top of the dominator tree (model_heap_retained's
 * tree): a panel for the roots and one for each node with nodes under it,
 * each drawn as nested rectangles (its children, and theirs inside them,
 * TM_DEPTH levels where they have room),
 * area by retained size, laid out by the squarified algorithm of Bruls,
 * Huizing and van Wijk ("Squarified Treemaps", 2000).  A rectangle with
 * nodes under it links to its panel; the style shows the panel the URL's
 * fragment names (:target), the roots' when it names none: zooming needs
 * no script.  The tables are sorted by a click on a header when script
 * runs (html_page.c's), by each cell's data-v. */
#include "report/heap.h"
#include "report/html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TM_W 1200.0                  /* a panel's size in the SVG's units */
#define TM_H 540.0
#define TM_HEAD 16.0                 /* a rectangle's label band over its children */
#define TM_CHAR 7.0                  /* a label character's width, about */
#define TM_DEPTH 4                   /* the levels a panel draws, where there is room */

/* one rectangle */
struct box {
	double x, y, w, h;
};

/* one panel's node and its children, from the tree's parent indices */
struct tm {
	const struct model_heap_retained *r;
	size_t n;
	int64_t *first, *next;       /* by node + 1 (0: the roots): first child, next sibling */
};

static const struct model_heap_node *node(const struct tm *t, int64_t i)
{
	return t->r->tree.items[i];
}

/* a type's name (heap.h's), escaped */
static void type_html(FILE *out, const char *module, const char *qualname)
{
	char buf[REPORT_HEAP_NAME_MAX];
	report_html_escape(out, report_heap_type_name(module, qualname, buf, sizeof(buf)), true);
}

/* The largest retainers' path of the object at ADDRESS; NULL none. */
static const char *path_of(const struct tm *t, uint64_t address)
{
	for (size_t i = 0; i < t->r->retainers.n; i++) {
		const struct model_heap_retainer *o = t->r->retainers.items[i];
		if (o->address == address)
			return o->path;
	}
	return NULL;
}

/* What node I is called on the page: its name, else its path, else its
 * type (in BUF, of REPORT_HEAP_NAME_MAX bytes) */
static const char *label(const struct tm *t, int64_t i, char *buf)
{
	const struct model_heap_node *o = node(t, i);
	const char *p = o->name ? o->name : path_of(t, o->address);
	return p ? p : report_heap_type_name(o->module, o->qualname, buf, REPORT_HEAP_NAME_MAX);
}

/* S in at most MAX characters: its tail behind "..." when longer (a
 * path's end says most); UTF-8 kept whole */
static void fit(FILE *out, const char *s, size_t max)
{
	size_t chars = 0;
	for (const char *p = s; *p; p++)
		chars += ((unsigned char)*p & 0xc0) != 0x80;
	if (chars <= max) {
		report_html_escape(out, s, false);
		return;
	}
	if (max < 4)
		return;
	size_t skip = chars - (max - 3);
	const char *p = s;
	for (; *p && skip; p++)
		if (((unsigned char)p[1] & 0xc0) != 0x80)
			skip--;
	fputs("...", out);
	report_html_escape(out, p, false);
}

/* the squarified layout of V[0..N) (most first, their sum the area of
 * IN) into OUT: rows along the shorter side, each row grown while its
 * worst aspect ratio improves */
static void squarify(const double *v, size_t n, struct box in, struct box *out)
{
	size_t i = 0;
	while (i < n) {
		double side = in.w < in.h ? in.w : in.h, sum = 0, worst = 1e300;
		size_t j = i;
		while (j < n) {
			double s = sum + v[j], big = v[i], small = v[j];
			double w1 = side * side * big / (s * s), w2 = s * s / (side * side * small);
			double wr = w1 > w2 ? w1 : w2;
			if (j > i && wr > worst)
				break;
			worst = wr;
			sum = s;
			j++;
		}
		double thick = side > 0 ? sum / side : 0, at = 0;
		for (size_t k = i; k < j; k++) {
			double len = sum > 0 ? side * v[k] / sum : 0;
			out[k] = in.w < in.h ? (struct box){ in.x + at, in.y, len, thick }
					     : (struct box){ in.x, in.y + at, thick, len };
			at += len;
		}
		if (in.w < in.h) {
			in.y += thick;
			in.h -= thick;
		} else {
			in.x += thick;
			in.w -= thick;
		}
		i = j;
	}
}

/* a colour for a type, the same on every panel: one of 8 */
static unsigned colour(const struct model_heap_node *o)
{
	unsigned hsh = 5381;
	for (const char *p = o->qualname ? o->qualname : ""; *p; p++)
		hsh = hsh * 33 + (unsigned char)*p;
	return hsh % 8;
}

static void draw(const struct tm *t, int64_t parent, struct box in, int depth, FILE *out);

/* Node I in B, with its children inside when there is room (DEPTH: the
 * levels still to draw) */
static void draw_node(const struct tm *t, int64_t i, struct box b, int depth, FILE *out)
{
	const struct model_heap_node *o = node(t, i);
	char buf[REPORT_HEAP_NAME_MAX], h1[32], h2[32];
	bool zoom = t->first[i + 1] >= 0;
	if (b.w < 1 || b.h < 1)
		return;
	if (zoom)
		fprintf(out, "<a href=\"#tm-%" PRId64 "\">", i);
	fprintf(out, "<rect class=\"tm%u%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
		colour(o), depth < TM_DEPTH - 1 ? " sub" : "", b.x, b.y, b.w, b.h);
	const char *l = label(t, i, buf);
	report_html_escape(out, l, false);
	fprintf(out, "\n");
	type_html(out, o->module, o->qualname);
	fprintf(out, " at 0x%" PRIx64 ": %s retained in %" PRIu64 " object%s, itself %s%s</title></rect>",
		o->address, report_heap_human(o->retained, h1, sizeof(h1)), o->objects, o->objects == 1 ? "" : "s",
		report_heap_human(o->bytes, h2, sizeof(h2)), zoom ? " (click to zoom)" : "");
	/* a label where 6 characters fit, the size under it where it fits whole */
	size_t room = b.w > 6 ? (size_t)((b.w - 6) / TM_CHAR) : 0;
	if (b.h >= 14 && room >= 6) {
		fprintf(out, "<text class=\"tml\" x=\"%.1f\" y=\"%.1f\">", b.x + 3, b.y + 12);
		fit(out, l, room);
		fputs("</text>", out);
		if (b.h >= 28 && strlen(h1) <= room)
			fprintf(out, "<text class=\"tml small\" x=\"%.1f\" y=\"%.1f\">%s</text>", b.x + 3, b.y + 24,
				h1);
	}
	if (zoom)
		fputs("</a>", out);
	if (depth > 0 && b.w >= 60 && b.h >= 2 * TM_HEAD + 30)
		draw(t, i, (struct box){ b.x + 2, b.y + 2 * TM_HEAD - 2, b.w - 4, b.h - 2 * TM_HEAD }, depth - 1,
		     out);
	fputc('\n', out);
}

/* The children of PARENT (-1: the roots) in IN, area by retained size,
 * and what PARENT holds beyond them as one rectangle. */
static void draw(const struct tm *t, int64_t parent, struct box in, int depth, FILE *out)
{
	uint64_t total = parent < 0 ? t->r->reached_bytes : node(t, parent)->retained, shown = 0;
	size_t k = 0;
	for (int64_t c = t->first[parent + 1]; c >= 0; c = t->next[c + 1])
		shown += node(t, c)->retained, k++;
	if (!total || !k || total < shown)
		return;
	double *v = malloc((k + 1) * sizeof(*v));
	struct box *b = malloc((k + 1) * sizeof(*b));
	int64_t *ix = malloc((k + 1) * sizeof(*ix));
	if (v && b && ix) {
		double scale = in.w * in.h / (double)total;
		size_t m = 0;
		for (int64_t c = t->first[parent + 1]; c >= 0; c = t->next[c + 1]) {
			ix[m] = c;
			v[m++] = (double)node(t, c)->retained * scale;
		}
		/* the rest (the node itself and what it holds in objects of
		 * less retained) last, in the corner the layout ends in */
		uint64_t rest = total - shown;
		if (rest) {
			ix[m] = -1;
			v[m++] = (double)rest * scale;
		}
		squarify(v, m, in, b);
		for (size_t i = 0; i < m; i++) {
			if (ix[i] >= 0) {
				draw_node(t, ix[i], b[i], depth, out);
			} else if (b[i].w >= 1 && b[i].h >= 1) {
				char h1[32];
				fprintf(out, "<rect class=\"tmrest\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
					"<title>%s in objects each retaining less (and the object itself)</title></rect>\n",
					b[i].x, b[i].y, b[i].w, b[i].h, report_heap_human(rest, h1, sizeof(h1)));
			}
		}
	}
	free(v);
	free(b);
	free(ix);
}

/* "all > sys.modules > collections" links to the panels above node I */
static void crumbs(const struct tm *t, int64_t i, FILE *out)
{
	int64_t chain[64];
	size_t n = 0;
	char buf[REPORT_HEAP_NAME_MAX];
	for (int64_t x = i; x >= 0 && n < 64; x = node(t, x)->parent)
		chain[n++] = x;
	fputs("<p class=\"crumbs\"><a href=\"#tm-root\">the roots</a>", out);
	while (n-- > 0) {
		fputs(" &gt; ", out);
		if (n)
			fprintf(out, "<a href=\"#tm-%" PRId64 "\">", chain[n]);
		report_html_escape(out, label(t, chain[n], buf), true);
		if (n)
			fputs("</a>", out);
	}
	fputs("</p>\n", out);
}

static void panel(const struct tm *t, int64_t i, FILE *out)
{
	if (i < 0)
		fputs("<div class=\"tm\" id=\"tm-root\">\n", out);
	else
		fprintf(out, "<div class=\"tm\" id=\"tm-%" PRId64 "\">\n", i);
	crumbs(t, i, out);
	fprintf(out, "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
		"%.0f\" role=\"img\">\n", TM_W, TM_H, TM_W, TM_H);
	draw(t, i, (struct box){ 0, 0, TM_W, TM_H }, TM_DEPTH - 1, out);
	fputs("</svg>\n</div>\n", out);
}

static void treemap(const struct model_heap *h, FILE *out)
{
	const struct model_heap_retained *r = h->retained;
	char b1[32];
	fputs("<section class=\"card\" id=\"who\">\n<h2>Who holds it</h2>\n", out);
	if (!r) {
		fputs("<p>Retained sizes were not computed (see what was not read).</p>\n</section>\n", out);
		return;
	}
	fprintf(out, "<p>Reached from the roots (sys.modules, sys.__dict__, builtins, the frames' locals) through "
		"the references counted: %" PRIu64 " of %" PRIu64 " objects, %s.  Each rectangle is an object, its "
		"area what would be freed with it (retained), inside the object that alone holds it; the %zu that "
		"retain most are drawn, the grey is what the others retain.  A rectangle with others under it "
		"opens them.</p>\n", r->reached_objects, h->objects + h->untracked_objects,
		report_heap_human(r->reached_bytes, b1, sizeof(b1)), r->tree.n);
	struct tm t = { .r = r, .n = r->tree.n };
	t.first = malloc((t.n + 1) * sizeof(*t.first));
	t.next = malloc((t.n + 1) * sizeof(*t.next));
	int64_t *last = malloc((t.n + 1) * sizeof(*last));
	if (t.first && t.next && last) {
		for (size_t i = 0; i <= t.n; i++)
			t.first[i] = t.next[i] = last[i] = -1;
		/* (the tree lists a parent before its children, most retained first) */
		for (size_t i = 0; i < t.n; i++) {
			int64_t p = node(&t, (int64_t)i)->parent;
			if (p >= (int64_t)i || p < -1)
				continue;
			if (last[p + 1] < 0)
				t.first[p + 1] = (int64_t)i;
			else
				t.next[last[p + 1] + 1] = (int64_t)i;
			last[p + 1] = (int64_t)i;
		}
		fputs("<div id=\"tmaps\">\n", out);
		panel(&t, -1, out);
		for (size_t i = 0; i < t.n; i++)
			if (t.first[i + 1] >= 0)
				panel(&t, (int64_t)i, out);
		fputs("</div>\n", out);
	}
	free(t.first);
	free(t.next);
	free(last);
	fputs("</section>\n", out);
}

/* a number cell: human-readable, sorted by its value */
static void bytes_td(FILE *out, uint64_t v)
{
	char b[32];
	fprintf(out, "<td class=\"n\" data-v=\"%" PRIu64 "\">%s</td>", v, report_heap_human(v, b, sizeof(b)));
}

static void count_td(FILE *out, uint64_t v)
{
	fprintf(out, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

static void retainers(const struct model_heap_retained *r, FILE *out)
{
	if (!r || !r->retainers.n)
		return;
	fputs("<section class=\"card\" id=\"retainers\">\n<h2>Largest retainers</h2>\n<table class=\"heap sortable\">"
	      "<thead><tr><th>path from a root</th><th>type</th><th class=\"n\">retained</th><th class=\"n\">"
	      "objects</th><th class=\"n\">itself</th><th>address</th></tr></thead>\n<tbody>\n", out);
	for (size_t i = 0; i < r->retainers.n; i++) {
		const struct model_heap_retainer *o = r->retainers.items[i];
		fputs("<tr><td>", out);
		report_html_escape(out, o->path ? o->path : "(no path)", true);
		fputs("</td><td>", out);
		type_html(out, o->module, o->qualname);
		fputs("</td>", out);
		bytes_td(out, o->retained);
		count_td(out, o->objects);
		bytes_td(out, o->bytes);
		fprintf(out, "<td class=\"n\">0x%" PRIx64 "</td></tr>\n", o->address);
	}
	fputs("</tbody></table>\n</section>\n", out);
}

/* a table of types, TOP of them (0: all) */
static void types(const char *id, const char *title, const struct ptrvec *v, size_t top, FILE *out)
{
	fprintf(out, "<section class=\"card\" id=\"%s\">\n<h2>%s</h2>\n", id, title);
	if (!v->n) {
		fputs("<p>None.</p>\n</section>\n", out);
		return;
	}
	fputs("<table class=\"heap sortable\"><thead><tr><th>type</th><th class=\"n\">objects</th><th class=\"n\">"
	      "bytes</th><th>bytes exact</th></tr></thead>\n<tbody>\n", out);
	size_t shown = top && top < v->n ? top : v->n;
	for (size_t i = 0; i < shown; i++) {
		const struct model_heap_type *t = v->items[i];
		fputs("<tr><td>", out);
		type_html(out, t->module, t->qualname);
		fputs("</td>", out);
		count_td(out, t->count);
		bytes_td(out, t->bytes);
		fputs(t->exact ? "<td>yes</td>" : "<td>no: a __sizeof__ of ", out);
		if (!t->exact) {
			report_html_escape(out, t->sizeof_owner ? t->sizeof_owner : "a class pycore cannot name", true);
			fputs(", basic size counted</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (shown < v->n)
		fprintf(out, "<p class=\"muted\">And %zu types more (--top N shows N; 0 all).</p>\n", v->n - shown);
	fputs("</section>\n", out);
}

/* one row of the memory table */
static void mem_row(FILE *out, const char *what, uint64_t v, uint64_t of)
{
	char b[32];
	fprintf(out, "<tr><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%.1f %%</td></tr>\n", what,
		report_heap_human(v, b, sizeof(b)), of ? 100.0 * (double)v / (double)of : 0.0);
}

static void memory(const struct model_heap_memory *m, FILE *out)
{
	fputs("<section class=\"card\" id=\"memory\">\n<h2>Where the memory is</h2>\n", out);
	if (!m->known) {
		fputs("<p>The dump records no mappings.</p>\n</section>\n", out);
		return;
	}
	fputs("<table class=\"heap\"><thead><tr><th>memory</th><th class=\"n\">bytes</th><th class=\"n\">of the "
	      "mapped</th></tr></thead>\n<tbody>\n", out);
	mem_row(out, "mapped", m->mapped, m->mapped);
	mem_row(out, "files (code, data, mapped files)", m->files, m->mapped);
	mem_row(out, "thread stacks", m->stacks, m->mapped);
	mem_row(out, "reserved (no access)", m->reserved, m->mapped);
	mem_row(out, "anonymous", m->anonymous, m->mapped);
	mem_row(out, "&#160;&#160;of it, the Python objects counted", m->python, m->mapped);
	mem_row(out, "&#160;&#160;&#160;&#160;of them, buffers they own (bytearrays', arrays', numpy arrays' data)",
		m->buffers, m->mapped);
	const struct model_heap_pymalloc *p = m->pymalloc;
	const struct model_heap_malloc *c = m->malloc;
	if (p) {
		mem_row(out, "&#160;&#160;pymalloc's arenas", p->arena_bytes, m->mapped);
		mem_row(out, "&#160;&#160;&#160;&#160;of them, free", p->arena_bytes - p->allocated, m->mapped);
	}
	const struct model_heap_mimalloc *mi = m->mimalloc;
	if (mi) {
		mem_row(out, "&#160;&#160;mimalloc's arenas", mi->arena_bytes, m->mapped);
		mem_row(out, "&#160;&#160;&#160;&#160;of them, free (in no page, or free in a page)",
			mi->arena_bytes - mi->allocated, m->mapped);
	}
	if (c) {
		mem_row(out, "&#160;&#160;the C heap's arenas and mapped blocks", c->arena_bytes + c->mmapped, m->mapped);
		mem_row(out, "&#160;&#160;&#160;&#160;of them, free", c->free, m->mapped);
	}
	if (p || c || mi) {
		uint64_t held = report_heap_attributed(m);
		mem_row(out, "&#160;&#160;the modules' zero-initialised data (.bss)", m->modules_bss, m->mapped);
		mem_row(out, "&#160;&#160;unattributed", m->anonymous > held ? m->anonymous - held : 0, m->mapped);
	}
	fputs("</tbody></table>\n", out);
	for (int i = 0; i < 3; i++) {
		const char *why = i == 2 ? m->mimalloc_unread : i ? m->malloc_unread : m->pymalloc_unread;
		if (why) {
			fputs("<p class=\"muted\">", out);
			report_html_escape(out, why, true);
			fputs("</p>\n", out);
		}
	}
	fputs("</section>\n", out);
}

int report_heap_html(FILE *out, const struct model_report *r, size_t top)
{
	const struct model_heap *h = r->heap;
	char pid[32], b1[32], b2[32], *title = NULL;
	/* the dump's path, whole (a live read has none: its pid) */
	snprintf(pid, sizeof(pid), "pid %" PRId64, r->pid);
	const char *what = r->input_path ? r->input_path : r->pid >= 0 ? pid : "the dump";
	if (asprintf(&title, "pycore heap: %s", what) < 0)
		title = NULL;
	report_html_begin(out, title ? title : "pycore heap", "report heap");
	free(title);
	fputs("<header class=\"top\"><h1>", out);
	report_html_escape(out, what, true);
	fputs("</h1><div class=\"sub\">", out);
	if (r->input_path && r->pid >= 0)
		fprintf(out, "pid %" PRId64 ", ", r->pid);
	fputs("CPython ", out);
	report_html_escape(out, r->version ? r->version : "of an unknown version", true);
	if (r->free_threaded)
		fputs(", free-threaded", out);
	if (h)
		fprintf(out, "; %" PRIu64 " objects %s, %s by sys.getsizeof%s; %" PRIu64 " untracked "
			"objects reached, %s; read in %.1f ms", h->objects,
			h->found_in && !strcmp(h->found_in, "mimalloc heaps") ? "the GC tracks" : "on the GC's lists",
			report_heap_human(h->bytes, b1, sizeof(b1)),
			h->exact ? "" : " (not exact)", h->untracked_objects,
			report_heap_human(h->untracked_bytes, b2, sizeof(b2)), h->read_ms);
	fputs("</div></header>\n<main>\n", out);
	size_t nw = h ? h->unread.n : 0;
	if (nw || r->warnings.n) {
		fputs("<section class=\"card warnings\">\n<h2>Not read</h2>\n<ul>\n", out);
		for (size_t i = 0; i < nw + r->warnings.n; i++) {
			fputs("<li>", out);
			report_html_escape(out, i < nw ? h->unread.items[i] : r->warnings.items[i - nw], true);
			fputs("</li>\n", out);
		}
		fputs("</ul>\n</section>\n", out);
	}
	if (!h) {
		fprintf(out, "<section class=\"card\"><p>No census: %s.</p></section>\n",
			r->has_python ? "the interpreter's state could not be read" : "no Python runtime was found");
	} else {
		treemap(h, out);
		retainers(h->retained, out);
		memory(&h->memory, out);
		types("types", "Objects on the GC's lists, by type", &h->types, top, out);
		types("untracked", "Objects the GC does not track, reached from those it does", &h->untracked_types,
		      top, out);
		if (h->retained)
			types("garbage", "Garbage: cycles the GC has not collected yet, by type",
			      &h->retained->garbage_types, top, out);
	}
	fputs("</main>\n", out);
	report_html_end(out);
	return ferror(out) ? -1 : 0;
}
