/* The HTML report's pictures (inline SVG, drawn here, no script): the
 * lock-wait graph, each blocked thread an arrow to the thread owning what
 * it waits for, a deadlock's cycle in red; and each event loop's asyncio
 * tasks as a tree, each awaited task under the tasks awaiting it (as the
 * text's --tasks section and asyncio's pstree show them), a cycle of
 * awaits in red.  Strings from the dump are SVG text, escaped, cut to a
 * length that fits their box. */
#include "report/html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* At most MAX characters of S as SVG text, "..." when cut. */
static void svg_text(FILE *out, const char *s, size_t max)
{
	if (!s)
		s = "?";
	size_t i = 0, chars = 0;
	while (s[i] && chars < max) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	if (!s[i]) {
		report_html_escape(out, s, false);
		return;
	}
	char *cut = strndup(s, i);
	if (cut)
		report_html_escape(out, cut, false);
	free(cut);
	fputs("...", out);
}

/* ------------------------------------------------------------------------
 * Lock waits
 * ------------------------------------------------------------------------ */

#define MAX_NODES 64
#define NODE_W 200
#define NODE_H 40

struct node {
	int64_t tid;
	const struct model_thread *t;   /* NULL: a thread the report does not have */
	double x, y;
	bool cycle;
};

static size_t node_of(struct node *nodes, size_t *n, int64_t tid, const struct model_report *r)
{
	for (size_t i = 0; i < *n; i++)
		if (nodes[i].tid == tid)
			return i;
	if (*n == MAX_NODES)
		return MAX_NODES;
	nodes[*n] = (struct node){ .tid = tid, .t = model_find_thread(r, tid, 0) };
	return (*n)++;
}

static bool in_cycle(const struct report_summary *s, const struct model_thread *t)
{
	for (size_t i = 0; t && i < s->ndeadlock; i++)
		if (s->deadlock[i] == t)
			return true;
	return false;
}

/* Where the segment from A's centre to B's leaves A's box. */
static void border(const struct node *a, const struct node *b, double *x, double *y)
{
	double dx = b->x - a->x, dy = b->y - a->y;
	double tx = dx ? (NODE_W / 2.0 + 4) / fabs(dx) : 1e9, ty = dy ? (NODE_H / 2.0 + 4) / fabs(dy) : 1e9;
	double t = tx < ty ? tx : ty;
	if (t > 1)
		t = 1;
	*x = a->x + dx * t;
	*y = a->y + dy * t;
}

void html_waits(const struct hx *x, const struct report_summary *s)
{
	const struct model_report *r = x->r;
	FILE *out = x->out;
	struct node nodes[MAX_NODES];
	size_t n = 0, nwaits = 0;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (!t->waiting_on || t->waiting_on->owner < 0 || t->tid < 0)
				continue;
			size_t a = node_of(nodes, &n, t->tid, r), b = node_of(nodes, &n, t->waiting_on->owner, r);
			nwaits += a < MAX_NODES && b < MAX_NODES;
		}
	}
	if (!nwaits)
		return;
	for (size_t i = 0; i < n; i++)
		nodes[i].cycle = in_cycle(s, nodes[i].t);
	/* on a circle, in the order met (a cycle's threads side by side) */
	double radius = n <= 2 ? 150 : (NODE_W + 30) / (2 * sin(M_PI / (double)n));
	if (radius < 150)
		radius = 150;
	double ry = radius * (n <= 2 ? 0.5 : 0.6);
	double width = 2 * radius + NODE_W + 40, height = 2 * ry + NODE_H + 60;
	for (size_t i = 0; i < n; i++) {
		double a = -M_PI / 2 + 2 * M_PI * (double)i / (double)n;
		nodes[i].x = width / 2 + radius * cos(a);
		nodes[i].y = height / 2 + ry * sin(a);
	}
	fprintf(out, "<section class=\"card\" id=\"waits\"><h2>Lock waits%s</h2>\n"
		"<svg class=\"waits\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n<title>Each blocked thread points at the thread it "
		"waits for</title>\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
		"markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path class=\"arrow\" d=\"M0,0L10,5L0,10z\"/>"
		"</marker><marker id=\"arrow-cyc\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
		"markerHeight=\"8\" orient=\"auto\"><path class=\"arrow cyc\" d=\"M0,0L10,5L0,10z\"/></marker></defs>\n",
		s->ndeadlock ? ": deadlock" : "", width, height, width, height);
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (!t->waiting_on || t->waiting_on->owner < 0 || t->tid < 0)
				continue;
			size_t a = node_of(nodes, &n, t->tid, r), b = node_of(nodes, &n, t->waiting_on->owner, r);
			if (a >= MAX_NODES || b >= MAX_NODES || a == b)
				continue;
			bool cyc = nodes[a].cycle && nodes[b].cycle;
			double x1, y1, x2, y2;
			border(&nodes[a], &nodes[b], &x1, &y1);
			border(&nodes[b], &nodes[a], &x2, &y2);
			fprintf(out, "<g class=\"wait-edge\" data-from=\"%lld\" data-to=\"%lld\"><line class=\"edge%s\" "
				"x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" marker-end=\"url(#arrow%s)\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"small\">",
				(long long)t->tid, (long long)t->waiting_on->owner, cyc ? " cyc" : "", x1, y1, x2, y2,
				cyc ? "-cyc" : "", (x1 + x2) / 2, (y1 + y2) / 2 - 4);
			fputs(t->waiting_on->joins ? "joins " : "", out);
			svg_text(out, t->waiting_on->type, 28);
			fputs("</text></g>\n", out);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct node *d = &nodes[i];
		fprintf(out, "<g class=\"wait-node\" data-tid=\"%lld\"><rect class=\"node%s\" x=\"%.1f\" y=\"%.1f\" "
			"width=\"%d\" height=\"%d\" rx=\"6\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
			"thread %lld</text>",
			(long long)d->tid, d->cycle ? " cyc" : "", d->x - NODE_W / 2.0, d->y - NODE_H / 2.0, NODE_W, NODE_H,
			d->x, d->y - 4, (long long)d->tid);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"small\">", d->x, d->y + 12);
		if (d->t && d->t->name)
			svg_text(out, d->t->name, 26);
		else if (!d->t)
			fputs("(not a Python thread of the dump)", out);
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
	if (n == MAX_NODES)
		fprintf(out, "<p class=\"muted\">Only the first %d threads are drawn.</p>\n", MAX_NODES);
	fputs("</section>\n", out);
}

/* ------------------------------------------------------------------------
 * asyncio tasks
 * ------------------------------------------------------------------------ */

#define MAX_ROWS 400
#define MAX_DEPTH 64
#define ROW_H 30
#define INDENT 26

enum row_kind { ROW_TASK, ROW_SHOWN, ROW_CYCLE };

struct row {
	const struct model_task *t;
	int depth;
	enum row_kind kind;
	long parent;                 /* row index, -1: a root */
};

struct tree {
	struct row rows[MAX_ROWS];
	size_t n;
	size_t more;                 /* rows left out past MAX_ROWS */
	const struct model_task *path[MAX_DEPTH];
	const struct model_task **shown;
	size_t nshown, cap;
};

static bool shown(const struct tree *w, const struct model_task *t)
{
	for (size_t i = 0; i < w->nshown; i++)
		if (w->shown[i] == t)
			return true;
	return false;
}

static void mark(struct tree *w, const struct model_task *t)
{
	if (w->nshown == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		const struct model_task **n = realloc(w->shown, cap * sizeof(*n));
		if (!n)
			return;
		w->shown = n;
		w->cap = cap;
	}
	w->shown[w->nshown++] = t;
}

static void visit(struct tree *w, const struct model_task *t, int depth, long parent)
{
	if (w->n == MAX_ROWS) {
		w->more++;
		return;
	}
	long me = (long)w->n;
	struct row *row = &w->rows[w->n++];
	*row = (struct row){ t, depth, ROW_TASK, parent };
	for (int i = 0; i < depth; i++) {
		if (w->path[i] == t) {
			row->kind = ROW_CYCLE;
			return;
		}
	}
	if (shown(w, t)) {
		row->kind = ROW_SHOWN;
		return;
	}
	mark(w, t);
	if (depth + 1 >= MAX_DEPTH)
		return;
	w->path[depth] = t;
	for (size_t k = 0; k < t->awaiting.n; k++)
		visit(w, t->awaiting.items[k], depth + 1, me);
}

static void task_label(FILE *out, const struct row *row)
{
	const struct model_task *t = row->t;
	svg_text(out, t->name ? t->name : "(name unknown)", 40);
	fprintf(out, " \xc2\xb7 %s", t->state ? t->state : "?");
	if (t->running)
		fputs(" \xc2\xb7 running", out);
	if (row->kind == ROW_CYCLE) {
		fputs(" \xc2\xb7 awaits back round a cycle", out);
		return;
	}
	if (row->kind == ROW_SHOWN) {
		fputs(" \xc2\xb7 shown above", out);
		return;
	}
	if (t->coroutine) {
		fputs(" \xc2\xb7 ", out);
		svg_text(out, t->coroutine, 40);
	}
}

static void tree_svg(FILE *out, const struct tree *w)
{
	double width = 0;
	for (size_t i = 0; i < w->n; i++) {
		double right = 10 + w->rows[i].depth * INDENT + 720;
		if (right > width)
			width = right;
	}
	double height = (double)w->n * ROW_H + 10;
	fprintf(out, "<svg class=\"tasks\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n<title>Each awaited task under the tasks awaiting it</title>\n",
		width, height, width, height);
	for (size_t i = 0; i < w->n; i++) {
		const struct row *row = &w->rows[i];
		double x = 10 + row->depth * INDENT, y = 5 + (double)i * ROW_H;
		if (row->parent >= 0) {
			const struct row *p = &w->rows[row->parent];
			double px = 10 + p->depth * INDENT + 10, py = 5 + (double)row->parent * ROW_H + ROW_H - 6;
			fprintf(out, "<path class=\"edge%s\" d=\"M%.1f,%.1fV%.1fH%.1f\"/>\n", row->kind == ROW_CYCLE ? " cyc" : "",
				px, py, y + (ROW_H - 6) / 2.0, x);
		}
		const char *cls = row->kind == ROW_CYCLE ? "node cyc" : row->kind == ROW_SHOWN ? "ref"
				  : row->t->state && strcmp(row->t->state, "pending") != 0 ? "node done"
				  : row->t->running ? "node running" : "node";
		fprintf(out, "<g class=\"task-node\" data-address=\"0x%llx\"><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" "
			"width=\"700\" height=\"%d\" rx=\"5\"/><text x=\"%.1f\" y=\"%.1f\">",
			(unsigned long long)row->t->address, cls, x, y, ROW_H - 6, x + 8, y + 16);
		task_label(out, row);
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
}

static void task_details(const struct hx *x, const struct model_task *t)
{
	FILE *out = x->out;
	fprintf(out, "<li class=\"task\" data-address=\"0x%llx\"><span class=\"func\">", (unsigned long long)t->address);
	html_text(out, t->name ? t->name : "(name unknown)");
	fprintf(out, "</span> (0x%llx) ", (unsigned long long)t->address);
	html_text(out, t->state ? t->state : "(state unknown)");
	if (t->running)
		fputs(", running", out);
	if (t->coroutine) {
		fputs(", coroutine ", out);
		html_text(out, t->coroutine);
	}
	if (t->result) {
		fputs(", result ", out);
		html_text(out, t->result);
	}
	if (t->exception_type) {
		fputs(", raised ", out);
		html_text(out, t->exception_type);
		if (t->exception_message && *t->exception_message) {
			fputs(": ", out);
			html_text(out, t->exception_message);
		}
	}
	if (t->waiter) {
		fputs(", waiting on ", out);
		html_text(out, t->waiter_type);
		fprintf(out, " 0x%llx", (unsigned long long)t->waiter);
	}
	fputs("\n<ol class=\"frames\">\n", out);
	for (size_t j = t->stack.n; j-- > 0;)
		html_python_frame(x, t->stack.items[j]);
	fputs("</ol>\n", out);
	if (t->error) {
		fputs("<div class=\"err\">incomplete: ", out);
		html_text(out, t->error);
		fputs("</div>\n", out);
	}
	fputs("</li>\n", out);
}

void html_tasks(const struct hx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	bool any = false;
	for (size_t i = 0; i < r->interps.n; i++)
		any = any || ((const struct model_interp *)r->interps.items[i])->asyncio_read;
	if (!any)
		return;
	fputs("<h2>asyncio tasks</h2>\n", out);
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		if (!mi->asyncio_read)
			continue;
		if (mi->loops.n == 0)
			fprintf(out, "<section class=\"card loop\"><p>Interpreter %lld: no asyncio tasks</p></section>\n",
				(long long)mi->id);
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			fprintf(out, "<section class=\"card loop\" data-tasks=\"%zu\"><h3>Loop 0x%llx", l->tasks.n,
				(unsigned long long)l->address);
			if (r->interps.n > 1)
				fprintf(out, ", interpreter %lld", (long long)mi->id);
			if (l->thread >= 0) {
				fputs(", run by ", out);
				fprintf(out, "<a href=\"#tid-%lld\">", (long long)l->thread);
				html_thread_ref(out, l->thread, l->thread_name);
				fputs("</a>", out);
			} else {
				fputs(l->running == 1 ? ", running on a thread pycore cannot tell" :
				      l->running == 0 ? ", not running" : ", running or not: pycore cannot tell", out);
			}
			fprintf(out, " (%zu tasks)</h3>\n", l->tasks.n);
			struct tree *w = calloc(1, sizeof(*w));
			if (w) {
				for (int pass = 0; pass < 2; pass++) {
					for (size_t j = 0; j < l->tasks.n; j++) {
						const struct model_task *t = l->tasks.items[j];
						if ((pass == 0 && t->awaited_by.n) || shown(w, t))
							continue;
						visit(w, t, 0, -1);
					}
				}
				if (w->n)
					tree_svg(out, w);
				if (w->more)
					fprintf(out, "<p class=\"muted\">%zu more rows not drawn.</p>\n", w->more);
				free(w->shown);
				free(w);
			}
			fputs("<details class=\"task-stacks\"><summary>each task's stack</summary><ul>\n", out);
			for (size_t j = 0; j < l->tasks.n; j++)
				task_details(x, l->tasks.items[j]);
			fputs("</ul></details></section>\n", out);
		}
	}
}
