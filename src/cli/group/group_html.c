/* pycore group --format html: the crash dashboard over batch's JSON Lines.
 *
 * Reading keeps, per group, aggregates of a bounded size only (group.c
 * streams the records; nothing here holds a record after it is added):
 * counts per day (from systemd-coredump's timestamp, else the dump file's
 * modification time), the most frequent executables, hosts and Python
 * versions (MAX_TALLY each, the rest counted as "other"), a tree of the
 * stacks of every Python thread of every dump (MAX_FLAME_NODES nodes,
 * MAX_FLAME_DEPTH deep: a frame past either is counted in its parent),
 * and the example's traceback (the thread its summary names), frames
 * without their locals.  So memory grows with the groups, never with the
 * records.
 *
 * The page: an overview row per group, most frequent first, and for the
 * MAX_DETAILED most frequent a section with the per-day histogram (SVG),
 * the tallies, the example's summary and traceback, and an icicle graph
 * (SVG, outermost frame on top, width by thread count).  Every string of
 * the input is unmarked (surrogates.h) and goes through report_html_escape. */
#include "cli/group/group_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonl/surrogates.h"
#include "report/html.h"

#define MAX_TALLY 8
#define MAX_DAYS 4096
#define MAX_FLAME_NODES 1024
#define MAX_FLAME_DEPTH 48
#define MAX_ROWS 5000

struct tally {
	char *s[MAX_TALLY];
	unsigned long n[MAX_TALLY];
	unsigned long other, none;
};

struct day {
	int64_t day;                 /* days since 1970-01-01 */
	unsigned long n;
};

struct fnode {
	const char *label;           /* interned (one copy for all groups); NULL: the root */
	unsigned long count;         /* threads whose stack passes through it */
	int child, next;             /* indices; -1 none */
};

struct group_html {
	struct tally exes, hosts, versions;
	struct day *days;            /* sorted by day */
	size_t ndays, capdays;
	unsigned long undated;
	struct fnode *nodes;
	size_t nnodes, capnodes;
	unsigned long threads, cut;  /* threads added; frames past the caps */
	json_t *example, *example_t; /* the last report's traceback: by input order, by mtime */
	bool has_t;
	struct timespec time_t_;
	char *path_t;                /* example_t's dump (of one time, the greatest path: as group.c) */
};

/* ------------------------------------------------------------------------
 * Aggregating
 * ------------------------------------------------------------------------ */

static int tally_add(struct tally *t, const char *s)
{
	if (!s) {
		t->none++;
		return 0;
	}
	for (size_t i = 0; i < MAX_TALLY; i++) {
		if (!t->s[i]) {
			if (!(t->s[i] = strdup(s)))
				return -1;
			t->n[i] = 1;
			return 0;
		}
		if (strcmp(t->s[i], s) == 0) {
			t->n[i]++;
			return 0;
		}
	}
	t->other++;
	return 0;
}

static void tally_free(struct tally *t)
{
	for (size_t i = 0; i < MAX_TALLY; i++)
		free(t->s[i]);
}

static int day_add(struct group_html *h, int64_t day)
{
	size_t lo = 0, hi = h->ndays;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h->days[mid].day < day)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < h->ndays && h->days[lo].day == day) {
		h->days[lo].n++;
		return 0;
	}
	if (h->ndays == MAX_DAYS) {
		h->undated++;
		return 0;
	}
	if (h->ndays == h->capdays) {
		size_t cap = h->capdays ? 2 * h->capdays : 16;
		struct day *d = realloc(h->days, cap * sizeof(*d));
		if (!d)
			return -1;
		h->days = d;
		h->capdays = cap;
	}
	memmove(h->days + lo + 1, h->days + lo, (h->ndays - lo) * sizeof(*h->days));
	h->days[lo] = (struct day){ day, 1 };
	h->ndays++;
	return 0;
}

/* The day of "2026-11-23T17:49:26Z" (the reports' timestamps); -1 none. */
static int64_t iso_day(const char *s)
{
	struct tm tm = { 0 };
	if (!s || !strptime(s, "%Y-%m-%d", &tm))
		return -1;
	time_t t = timegm(&tm);
	return t == (time_t)-1 ? -1 : (int64_t)(t / 86400);
}

/* The label of frames being added, kept for the next */
static char *label_buf;
static size_t label_len, label_cap;

static int label_put(const char *s, size_t n)
{
	if (label_len + n + 1 > label_cap) {
		size_t cap = label_cap ? label_cap : 256;
		while (cap < label_len + n + 1)
			cap *= 2;
		char *b = realloc(label_buf, cap);
		if (!b)
			return -1;
		label_buf = b;
		label_cap = cap;
	}
	memcpy(label_buf + label_len, s, n);
	label_len += n;
	label_buf[label_len] = 0;
	return 0;
}

static int label_puts(const char *s)
{
	return label_put(s, strlen(s));
}

/* "function (file:line)" of a frame of a report, in label_buf (valid to
 * the next call); NULL when out of memory.  Put together by hand, not by
 * printf: the dashboard makes one per frame of every thread of every dump. */
static const char *frame_label(json_t *f)
{
	const char *fn = json_string_value(json_object_get(f, "function"));
	const char *file = json_string_value(json_object_get(f, "file"));
	const char *kind = json_string_value(json_object_get(f, "kind"));
	json_int_t line = json_integer_value(json_object_get(f, "line"));
	int rc = 0;
	label_len = 0;
	if (kind && strcmp(kind, "gc") == 0)
		return label_puts("<garbage collection>") == 0 ? label_buf : NULL;
	if (kind && strcmp(kind, "native") == 0) {
		const char *base = file ? strrchr(file, '/') : NULL;
		rc |= label_puts(fn ? fn : "??");
		rc |= label_puts(" (");
		rc |= label_puts(base ? base + 1 : file ? file : "?");
	} else {
		rc |= label_puts(fn ? fn : "?");
		rc |= label_puts(" (");
		rc |= label_puts(file ? file : "?");
		if (line > 0) {
			char digits[24];
			size_t n = 0;
			for (unsigned long long v = (unsigned long long)line; v; v /= 10)
				digits[sizeof(digits) - ++n] = (char)('0' + v % 10);
			rc |= label_put(":", 1);
			rc |= label_put(digits + sizeof(digits) - n, n);
		}
	}
	rc |= label_put(")", 1);
	return rc == 0 ? label_buf : NULL;
}

/* F is an object of a frame's kind, function, file and line at most (as
 * the scanner prunes a frame), never locals: small enough to hold. */
static bool label_only(json_t *f)
{
	const char *key;
	json_t *v;
	if (!json_is_object(f) || json_object_size(f) > 4)
		return false;
	json_object_foreach(f, key, v)
		if (strcmp(key, "kind") != 0 && strcmp(key, "function") != 0 && strcmp(key, "file") != 0 &&
		    strcmp(key, "line") != 0)
			return false;
	return true;
}

/* The frames' labels, one copy each for all groups (a batch's groups
 * share most frames): open addressing, at most half full. */
static char **interned;
static size_t ninterned, interned_cap;

static uint64_t label_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* TEXT's one copy; NULL when out of memory. */
static const char *intern(const char *text)
{
	if (2 * (ninterned + 1) > interned_cap) {
		size_t cap = interned_cap ? 2 * interned_cap : 1024;
		char **t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = 0; i < interned_cap; i++) {
			if (!interned[i])
				continue;
			size_t k = label_hash(interned[i]) & (cap - 1);
			while (t[k])
				k = (k + 1) & (cap - 1);
			t[k] = interned[i];
		}
		free(interned);
		interned = t;
		interned_cap = cap;
	}
	size_t k = label_hash(text) & (interned_cap - 1);
	for (; interned[k]; k = (k + 1) & (interned_cap - 1))
		if (strcmp(interned[k], text) == 0)
			return interned[k];
	if (!(interned[k] = strdup(text)))
		return NULL;
	ninterned++;
	return interned[k];
}

/* the frames' labels met last (frame_interned) */
#define SEEN_FRAMES 4096
static struct {
	json_t *frame;
	const char *label;
} seen_frames[SEEN_FRAMES];

void group_html_end(void)
{
	for (size_t i = 0; i < SEEN_FRAMES; i++) {
		json_decref(seen_frames[i].frame);
		seen_frames[i].frame = NULL;
	}
	for (size_t i = 0; i < interned_cap; i++)
		free(interned[i]);
	free(interned);
	interned = NULL;
	ninterned = interned_cap = 0;
	free(label_buf);
	label_buf = NULL;
	label_len = label_cap = 0;
}

static int node_new(struct group_html *h, const char *label)
{
	if (h->nnodes == h->capnodes) {
		size_t cap = h->capnodes ? 2 * h->capnodes : 32;
		struct fnode *n = realloc(h->nodes, cap * sizeof(*n));
		if (!n)
			return -1;
		h->nodes = n;
		h->capnodes = cap;
	}
	h->nodes[h->nnodes] = (struct fnode){ label, 0, -1, -1 };
	return (int)h->nnodes++;
}

/* The labels of the frames met last, by the frame's value: the scanner
 * makes a frame met before the same value (jsonl_share.h), so most
 * frames' labels are found here, not made and interned again.  Each value
 * held (a reference) while it is here: its address is never another's. */
static const char *frame_interned(json_t *f)
{
	size_t k = ((uintptr_t)f >> 4) * 0x9e3779b97f4a7c15ULL >> 52 & (SEEN_FRAMES - 1);
	if (f && seen_frames[k].frame == f)
		return seen_frames[k].label;
	const char *text = frame_label(f);
	const char *label = text ? intern(text) : NULL;
	if (label && f) {
		json_decref(seen_frames[k].frame);
		seen_frames[k].frame = json_incref(f);
		seen_frames[k].label = label;
	}
	return label;
}

/* One thread's FRAMES (innermost first) into the tree, outermost first. */
static int flame_add(struct group_html *h, json_t *frames)
{
	if (!h->nnodes && node_new(h, NULL) < 0)
		return -1;
	h->threads++;
	h->nodes[0].count++;
	int parent = 0;
	size_t n = json_array_size(frames);
	for (size_t i = n, depth = 0; i-- > 0; depth++) {
		const char *label = frame_interned(json_array_get(frames, i));
		if (!label)
			return -1;
		int c = h->nodes[parent].child;
		while (c >= 0 && h->nodes[c].label != label)
			c = h->nodes[c].next;
		if (c < 0 && (depth >= MAX_FLAME_DEPTH || h->nnodes >= MAX_FLAME_NODES)) {
			h->cut += i + 1;
			return 0;
		}
		if (c < 0) {
			if ((c = node_new(h, label)) < 0)
				return -1;
			h->nodes[c].next = h->nodes[parent].child;
			h->nodes[parent].child = c;
		}
		h->nodes[c].count++;
		parent = c;
	}
	return 0;
}

/* The frames of the thread report J's summary names (else the crashed
 * one), each without its locals: the thread's own frames when the scanner
 * pruned them (jsonl_scan.c keeps a frame's kind, function, file and line
 * only), else a copy of those four members of each.  The page reads
 * nothing else of them, and a member missing reads as one that is null. */
static json_t *example_frames(json_t *j)
{
	json_t *tid = json_object_get(json_object_get(j, "summary"), "thread");
	json_t *interps = json_object_get(j, "interpreters"), *it, *pick = NULL;
	size_t i, k;
	json_array_foreach(interps, i, it) {
		json_t *t;
		json_array_foreach(json_object_get(it, "threads"), k, t) {
			json_t *ttid = json_object_get(t, "tid");
			if ((json_is_integer(tid) && json_equal(ttid, tid)) ||
			    (!pick && json_is_true(json_object_get(t, "crashed"))))
				pick = t;
		}
	}
	json_t *frames = json_object_get(pick, "frames"), *f;
	bool pruned = json_is_array(frames);
	json_array_foreach(frames, i, f)
		if (!label_only(f))
			pruned = false;
	if (pruned)
		return json_incref(frames);
	json_t *out = json_array();
	json_array_foreach(frames, i, f) {
		json_t *copy = json_pack("{s:O?, s:O?, s:O?, s:O?}", "kind", json_object_get(f, "kind"),
					 "function", json_object_get(f, "function"), "file", json_object_get(f, "file"),
					 "line", json_object_get(f, "line"));
		if (copy)
			json_array_append_new(out, copy);
	}
	return out;
}

static bool earlier(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int group_html_add(struct group_html **hp, json_t *j, const struct timespec *mtime)
{
	if (!*hp && !(*hp = calloc(1, sizeof(**hp))))
		return -1;
	struct group_html *h = *hp;
	json_t *process = json_object_get(j, "process"), *cd = json_object_get(process, "coredump");
	const char *exe = json_string_value(json_object_get(process, "executable"));
	int rc = 0;
	rc |= tally_add(&h->exes, exe ? exe : json_string_value(json_object_get(cd, "exe")));
	rc |= tally_add(&h->hosts, json_string_value(json_object_get(cd, "hostname")));
	rc |= tally_add(&h->versions, json_string_value(json_object_get(json_object_get(j, "python"), "version")));
	int64_t day = iso_day(json_string_value(json_object_get(cd, "timestamp")));
	if (day < 0 && mtime)
		day = mtime->tv_sec / 86400;
	if (day >= 0)
		rc |= day_add(h, day);
	else
		h->undated++;
	size_t i, k;
	json_t *it, *t;
	json_array_foreach(json_object_get(j, "interpreters"), i, it)
		json_array_foreach(json_object_get(it, "threads"), k, t)
			rc |= flame_add(h, json_object_get(t, "frames"));
	json_t *ex = example_frames(j);
	if (!ex)
		return -1;
	json_decref(h->example);
	h->example = json_incref(ex);
	const char *path = json_string_value(json_object_get(json_object_get(j, "input"), "path"));
	if (mtime && path && (!h->has_t || earlier(&h->time_t_, mtime) ||
			      (!earlier(mtime, &h->time_t_) && strcmp(h->path_t, path) < 0))) {
		char *copy = strdup(path);
		if (!copy) {
			json_decref(ex);
			return -1;
		}
		free(h->path_t);
		h->path_t = copy;
		json_decref(h->example_t);
		h->example_t = json_incref(ex);
		h->has_t = true;
		h->time_t_ = *mtime;
	}
	json_decref(ex);
	return rc;
}

void group_html_free(struct group_html *h)
{
	if (!h)
		return;
	tally_free(&h->exes);
	tally_free(&h->hosts);
	tally_free(&h->versions);
	free(h->path_t);
	free(h->days);
	free(h->nodes);
	json_decref(h->example);
	json_decref(h->example_t);
	free(h);
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

/* A string of the input (marked, surrogates.h) as HTML text. */
static void put(FILE *out, const char *s)
{
	char *u = s ? jsonl_unmark(s, false) : NULL;
	report_html_escape(out, u ? u : "?", true);
	free(u);
}

/* The same in SVG text, at most MAX characters ("..." when cut). */
static void put_svg(FILE *out, const char *s, size_t max)
{
	char *u = s ? jsonl_unmark(s, false) : NULL;
	const char *v = u ? u : "?";
	size_t i = 0, chars = 0;
	while (v[i] && chars < max) {
		i++;
		while (((unsigned char)v[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	char *cut = strndup(v, i);
	report_html_escape(out, cut ? cut : "?", false);
	if (v[i])
		fputs("...", out);
	free(cut);
	free(u);
}

/* <a href="PAGE"> when HTML_DIR holds the page of the dump at PATH. */
static bool link_open(FILE *out, const char *html_dir, const char *path)
{
	if (!html_dir || !path)
		return false;
	char *u = jsonl_unmark(path, false), name[96], *full = NULL;
	if (!u)
		return false;
	report_html_page_name(u, name, sizeof(name));
	free(u);
	struct stat st;
	bool ok = asprintf(&full, "%s/%s", html_dir, name) >= 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode);
	free(full);
	if (ok)
		fprintf(out, "<a href=\"%s\">", name);
	return ok;
}

static void write_seen(FILE *out, const struct seen *s, bool timed, const char *html_dir)
{
	if (timed) {
		char when[64];
		struct tm tm;
		time_t t = s->time.tv_sec;
		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%SZ", &tm))
			fputs(when, out);
	} else {
		fprintf(out, "report %lu of the input", s->record);
	}
	fputs(": ", out);
	bool a = link_open(out, html_dir, s->path);
	put(out, s->path);
	if (a)
		fputs("</a>", out);
}

static void write_fingerprint(FILE *out, json_t *fp)
{
	json_t *frames = json_object_get(fp, "frames");
	fputs("<span class=\"func\">", out);
	put(out, json_string_value(json_object_get(fp, "kind")));
	fputs("</span>", out);
	for (size_t k = 0; k < json_array_size(frames); k++) {
		fputs(k ? " &lt; " : ": ", out);
		put(out, json_string_value(json_array_get(frames, k)));
	}
}

static void write_tally(FILE *out, const char *what, const struct tally *t)
{
	fprintf(out, "<dt>%s</dt><dd>", what);
	/* most frequent first, then by name: not in the order the reports came */
	size_t order[MAX_TALLY], n = 0;
	for (; n < MAX_TALLY && t->s[n]; n++) {
		size_t k = n;
		for (; k > 0 && (t->n[order[k - 1]] < t->n[n] ||
				 (t->n[order[k - 1]] == t->n[n] && strcmp(t->s[order[k - 1]], t->s[n]) > 0)); k--)
			order[k] = order[k - 1];
		order[k] = n;
	}
	const char *sep = "";
	for (size_t i = 0; i < n; i++) {
		fputs(sep, out);
		put(out, t->s[order[i]]);
		fprintf(out, " <span class=\"mark\">%lu</span>", t->n[order[i]]);
		sep = "; ";
	}
	if (t->other)
		fprintf(out, "%sothers <span class=\"mark\">%lu</span>", sep, t->other), sep = "; ";
	if (t->none)
		fprintf(out, "%sunknown <span class=\"mark\">%lu</span>", sep, t->none);
	fputs("</dd>\n", out);
}

static void date_of(int64_t day, char *buf, size_t size)
{
	time_t t = (time_t)(day * 86400);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d", &tm))
		snprintf(buf, size, "day %lld", (long long)day);
}

/* Bars of at most 120 buckets from the first day to the last. */
static void write_histogram(FILE *out, const struct group_html *h)
{
	if (!h->ndays)
		return;
	int64_t first = h->days[0].day, last = h->days[h->ndays - 1].day, span = last - first + 1;
	int64_t per = (span + 119) / 120, nb = (span + per - 1) / per;
	unsigned long *b = calloc((size_t)nb, sizeof(*b)), max = 1;
	if (!b)
		return;
	for (size_t i = 0; i < h->ndays; i++)
		b[(h->days[i].day - first) / per] += h->days[i].n;
	for (int64_t i = 0; i < nb; i++)
		max = b[i] > max ? b[i] : max;
	double bw = nb > 60 ? 5 : nb > 20 ? 10 : 24, W = bw * (double)nb + 20, H = 90;
	char d0[32], d1[32];
	date_of(first, d0, sizeof(d0));
	date_of(last, d1, sizeof(d1));
	fprintf(out, "<svg class=\"histogram\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>Dumps per %s, %s to %s</title>\n",
		W < 240 ? 240 : W, H + 20, W < 240 ? 240 : W, H + 20, per == 1 ? "day" : "bucket of days", d0, d1);
	for (int64_t i = 0; i < nb; i++) {
		double hgt = b[i] ? 4 + (H - 24) * (double)b[i] / (double)max : 0;
		char d[32];
		date_of(first + i * per, d, sizeof(d));
		fprintf(out, "<rect class=\"bar\" data-count=\"%lu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%s%s: %lu</title></rect>\n", b[i], 10 + bw * (double)i, H - hgt, bw - 1, hgt, d,
			per == 1 ? "" : " on", b[i]);
	}
	fprintf(out, "<line class=\"axis\" x1=\"10\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>"
		"<text class=\"small\" x=\"10\" y=\"%.0f\">%s</text>",
		H, 10 + bw * (double)nb, H, H + 14, d0);
	if (last != first)
		fprintf(out, "<text class=\"small\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>",
			(W < 240 ? 240 : W) - 4, H + 14, d1);
	fprintf(out, "<text class=\"small\" x=\"10\" y=\"10\">max %lu a %s</text></svg>\n", max,
		per == 1 ? "day" : "bucket");
	free(b);
}

#define FLAME_W 1100.0
#define FLAME_ROW 18

static int flame_depth(const struct group_html *h, int n)
{
	int d = 0;
	for (int c = h->nodes[n].child; c >= 0; c = h->nodes[c].next) {
		int cd = flame_depth(h, c);
		d = cd > d ? cd : d;
	}
	return d + 1;
}

static void flame_node(FILE *out, const struct group_html *h, int n, double x, int depth)
{
	const struct fnode *f = &h->nodes[n];
	double w = FLAME_W * (double)f->count / (double)h->nodes[0].count;
	if (w < 0.3)
		return;
	fprintf(out, "<g class=\"fn\" data-count=\"%lu\"><rect class=\"fl %s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		"height=\"%d\"/><title>", f->count, f->label ? (const char *[]){ "fl0", "fl1", "fl2", "fl3", "fl4" }
		[depth % 5] : "flroot", x, depth * FLAME_ROW, w, FLAME_ROW - 1);
	put_svg(out, f->label ? f->label : "all threads", 400);
	fprintf(out, ": %lu thread%s</title>", f->count, f->count == 1 ? "" : "s");
	if (w > 30) {
		fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, depth * FLAME_ROW + 13);
		put_svg(out, f->label ? f->label : "all threads", (size_t)(w / 7.3) > 3 ? (size_t)(w / 7.3) - 3 : 1);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	for (int c = f->child; c >= 0; c = h->nodes[c].next) {
		flame_node(out, h, c, x, depth + 1);
		x += FLAME_W * (double)h->nodes[c].count / (double)h->nodes[0].count;
	}
}

/* Each node's children widest first, then by label (insertion sort of the
 * lists: at most MAX_FLAME_NODES nodes in all), so that the graph does not
 * depend on the order the reports came in. */
static void flame_sort(struct fnode *nodes, int n)
{
	int sorted = -1;
	for (int c = nodes[n].child; c >= 0;) {
		int next = nodes[c].next, *at = &sorted;
		while (*at >= 0 && (nodes[*at].count > nodes[c].count ||
				    (nodes[*at].count == nodes[c].count && strcmp(nodes[*at].label, nodes[c].label) < 0)))
			at = &nodes[*at].next;
		nodes[c].next = *at;
		*at = c;
		c = next;
	}
	nodes[n].child = sorted;
	for (int c = sorted; c >= 0; c = nodes[c].next)
		flame_sort(nodes, c);
}

static void write_flame(FILE *out, const struct group_html *h)
{
	if (!h->nnodes || !h->nodes[0].count)
		return;
	flame_sort(h->nodes, 0);
	int depth = flame_depth(h, 0);
	fprintf(out, "<h3>Stacks of all its dumps' threads (%lu)</h3>\n<svg class=\"flame\" "
		"width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.0f %d\" role=\"img\">"
		"<title>Icicle graph: outermost frame on top, width by the number of threads</title>\n",
		h->threads, FLAME_W, depth * FLAME_ROW, FLAME_W, depth * FLAME_ROW);
	flame_node(out, h, 0, 0, 0);
	fputs("</svg>\n", out);
	if (h->cut)
		fprintf(out, "<p class=\"muted\">%lu frames past the graph's limits (%d nodes, %d deep) are counted "
			"in their callers.</p>\n", h->cut, MAX_FLAME_NODES, MAX_FLAME_DEPTH);
}

static void write_traceback(FILE *out, json_t *frames)
{
	if (!json_array_size(frames))
		return;
	fputs("<h3>Its traceback (most recent call last)</h3>\n<ol class=\"frames\">\n", out);
	for (size_t i = json_array_size(frames); i-- > 0;) {
		json_t *f = json_array_get(frames, i);
		const char *kind = json_string_value(json_object_get(f, "kind"));
		json_int_t line = json_integer_value(json_object_get(f, "line"));
		bool native = kind && strcmp(kind, "native") == 0;
		fprintf(out, "<li class=\"frame %s\">", native ? "native" : "python");
		fputs(native ? "<span class=\"mark\">native</span> " : "File &quot;<span class=\"file\">", out);
		if (native) {
			fputs("<span class=\"func\">", out);
			put(out, json_string_value(json_object_get(f, "function")));
			fputs("</span> in ", out);
			put(out, json_string_value(json_object_get(f, "file")));
		} else {
			put(out, json_string_value(json_object_get(f, "file")));
			fputs("</span>&quot;, line ", out);
			if (line > 0)
				fprintf(out, "%lld", (long long)line);
			else
				fputs("?", out);
			fputs(", in <span class=\"func\">", out);
			put(out, json_string_value(json_object_get(f, "function")));
			fputs("</span>", out);
		}
		fputs("</li>\n", out);
	}
	fputs("</ol>\n", out);
}

void group_html_section(FILE *out, const struct group *gr, size_t rank, const char *html_dir)
{
	const struct group_html *h = gr->html;
	const struct seen *first = gr->all_timed ? &gr->first_t : &gr->first;
	const struct seen *last = gr->all_timed ? &gr->last_t : &gr->last;
	/* the hash is the input's (a file someone else wrote): escaped */
	fputs("<section class=\"card group\" id=\"g-", out);
	put(out, gr->hash);
	fputs("\" data-hash=\"", out);
	put(out, gr->hash);
	fprintf(out, "\" data-count=\"%lu\">\n<h2>#%zu \xc2\xb7 <span class=\"count\">%lu</span> dump%s \xc2\xb7 ",
		gr->count, rank + 1, gr->count, gr->count == 1 ? "" : "s");
	write_fingerprint(out, gr->fingerprint);
	fputs("</h2>\n<dl class=\"facts\">\n<dt>Fingerprint</dt><dd><code>", out);
	put(out, gr->hash);
	fputs("</code></dd>\n<dt>First seen</dt><dd>", out);
	write_seen(out, first, gr->all_timed, html_dir);
	fputs("</dd>\n<dt>Last seen</dt><dd>", out);
	write_seen(out, last, gr->all_timed, html_dir);
	fputs("</dd>\n", out);
	if (h) {
		write_tally(out, "Executables", &h->exes);
		write_tally(out, "Hosts", &h->hosts);
		write_tally(out, "Python", &h->versions);
	}
	fputs("<dt>Example</dt><dd class=\"example\">", out);
	put(out, last->summary);
	fputs("</dd>\n</dl>\n", out);
	if (h) {
		write_histogram(out, h);
		if (h->undated)
			fprintf(out, "<p class=\"muted\">%lu dump%s without a date.</p>\n", h->undated,
				h->undated == 1 ? "" : "s");
		write_traceback(out, gr->all_timed && h->example_t ? h->example_t : h->example);
		write_flame(out, h);
	}
	fputs("</section>\n", out);
}

size_t group_html_rows(FILE *out, const struct grouping *g, const char *html_dir, size_t from, size_t to, bool pages)
{
	if (from >= g->n || from >= to)
		return 0;
	fputs("<section class=\"card\" id=\"overview\"><h2>Groups, most frequent first</h2>\n<table class=\"groups\">"
	      "<thead><tr><th class=\"n\">#</th><th class=\"n\">dumps</th><th>crash</th><th>last seen</th></tr>"
	      "</thead><tbody>\n", out);
	size_t i;
	for (i = from; i < g->n && i < to && (pages || i < MAX_ROWS); i++) {
		const struct group *gr = &g->groups[i];
		const struct seen *last = gr->all_timed ? &gr->last_t : &gr->last;
		fputs("<tr class=\"group-row\" data-hash=\"", out);
		put(out, gr->hash);
		fprintf(out, "\" data-count=\"%lu\"><td class=\"n\">", gr->count);
		if (pages) {
			fprintf(out, "<a href=\"group-%zu.html\">%zu</a>", i + 1, i + 1);
		} else if (i < MAX_DETAILED) {
			fputs("<a href=\"#g-", out);
			put(out, gr->hash);
			fprintf(out, "\">%zu</a>", i + 1);
		} else {
			fprintf(out, "%zu", i + 1);
		}
		fprintf(out, "</td><td class=\"n\">%lu</td><td>", gr->count);
		write_fingerprint(out, gr->fingerprint);
		fputs("</td><td>", out);
		write_seen(out, last, gr->all_timed, html_dir);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (!pages && g->n > MAX_ROWS)
		fprintf(out, "<p class=\"muted\">%zu rarer groups not listed.</p>\n", g->n - MAX_ROWS);
	if (pages)
		fputs("<p class=\"muted\">Each group's number opens its page.</p>\n", out);
	else if (g->n > MAX_DETAILED)
		fprintf(out, "<p class=\"muted\">The %d most frequent groups are shown in full below; the %zu "
			"rarer ones as rows above.</p>\n", MAX_DETAILED, g->n - MAX_DETAILED);
	fputs("</section>\n", out);
	return i - from;
}
