/* pycore group (group.h).
 *
 * Each line of the input is a report (grouped by fingerprint.hash), an
 * error record (an "error" key: counted by its code), an empty line
 * (ignored) or a bad line (anything else: counted, named on standard
 * error).  A group keeps its first and last report: by the dump files'
 * modification times when every dump of the group still exists, else by
 * input order (the reports' positions, counted over all inputs), and says
 * which.  Only what is printed is kept, never whole reports, so memory
 * grows with the groups, not the lines.
 *
 * Reports name non-UTF-8 bytes as lone surrogates "\udc80".."\udcff",
 * read as src/jsonl/surrogates.h says, and turned back into the byte for the
 * file system and the text output, and into "\udcNN" for the JSON output. */
#include "cli/group/group.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/group/group_int.h"
#include "cli/group/group_read.h"
#include "cli/help.h"
#include "jsonl/jsonl_scan.h"
#include "jsonl/surrogates.h"
#include "report/report.h"
#include "util/hash.h"

#define MAX_BAD_SHOWN 10
/* ------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------ */

static const char *string_at(json_t *obj, const char *a, const char *b)
{
	json_t *v = json_object_get(obj, a);
	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

static struct group *group_of(struct grouping *g, const char *hash, json_t *fp)
{
	if (g->n * 2 >= g->nslots) {
		size_t ns = g->nslots ? g->nslots * 2 : 64;
		size_t *slots = calloc(ns, sizeof(*slots));
		if (!slots)
			return NULL;
		for (size_t i = 0; i < g->n; i++) {
			size_t h = pc_fnv1a64(PC_FNV1A64_INIT, g->groups[i].hash, strlen(g->groups[i].hash)) & (ns - 1);
			while (slots[h])
				h = (h + 1) & (ns - 1);
			slots[h] = i + 1;
		}
		free(g->slots);
		g->slots = slots;
		g->nslots = ns;
	}
	size_t h = pc_fnv1a64(PC_FNV1A64_INIT, hash, strlen(hash)) & (g->nslots - 1);
	for (; g->slots[h]; h = (h + 1) & (g->nslots - 1))
		if (strcmp(g->groups[g->slots[h] - 1].hash, hash) == 0)
			return &g->groups[g->slots[h] - 1];
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 16;
		struct group *ng = realloc(g->groups, nc * sizeof(*ng));
		if (!ng)
			return NULL;
		g->groups = ng;
		g->cap = nc;
	}
	struct group *gr = &g->groups[g->n];
	memset(gr, 0, sizeof(*gr));
	gr->hash = strdup(hash);
	if (!gr->hash)
		return NULL;
	gr->fingerprint = json_incref(fp);
	gr->all_timed = true;
	g->slots[h] = ++g->n;
	return gr;
}

static void seen_free(struct seen *s)
{
	free(s->path);
	free(s->summary);
}

static int seen_set(struct seen *s, const struct seen *from)
{
	char *path = strdup(from->path), *summary = from->summary ? strdup(from->summary) : NULL;
	if (!path || (from->summary && !summary)) {
		free(path);
		free(summary);
		return -1;
	}
	seen_free(s);
	*s = *from;
	s->path = path;
	s->summary = summary;
	return 0;
}

static bool earlier(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* A seen before B by time, dumps of one time by path: whatever order the
 * reports come in (the parts of a sharded run, in any order), the same
 * dump is the first and the last seen. */
static bool seen_before(const struct seen *a, const struct seen *b)
{
	if (earlier(&a->time, &b->time) || earlier(&b->time, &a->time))
		return earlier(&a->time, &b->time);
	return strcmp(a->path, b->path) < 0;
}

/* One report into its group; -1 when out of memory. */
static int add_report(struct grouping *g, json_t *j)
{
	json_t *fp = json_object_get(j, "fingerprint");
	const char *hash = json_string_value(json_object_get(fp, "hash"));
	const char *path = string_at(j, "input", "path");
	g->reports++;
	if (!hash || !path) {
		g->no_fingerprint++;
		return 0;
	}
	struct group *gr = group_of(g, hash, fp);
	if (!gr)
		return -1;
	struct seen s = { .record = g->records, .path = (char *)path, .summary = (char *)string_at(j, "summary", "text") };
	char *fs_path = jsonl_unmark(path, false);
	struct stat st;
	if (!fs_path)
		return -1;
	s.has_time = stat(fs_path, &st) == 0;
	free(fs_path);
	if (s.has_time)
		s.time = st.st_mtim;
	gr->all_timed = gr->all_timed && s.has_time;
	int rc = 0;
	if (gr->count++ == 0)
		rc |= seen_set(&gr->first, &s);
	rc |= seen_set(&gr->last, &s);
	if (s.has_time) {
		if (!gr->first_t.path || seen_before(&s, &gr->first_t))
			rc |= seen_set(&gr->first_t, &s);
		if (!gr->last_t.path || seen_before(&gr->last_t, &s))
			rc |= seen_set(&gr->last_t, &s);
	}
	if (g->html)
		rc |= group_html_add(&gr->html, j, s.has_time ? &s.time : NULL);
	return rc;
}

/* What the grouping reads of a record (add_line, add_report) and the
 * dashboard (group_html_add): all a line is read for. */
static const struct jsonl_keep keep_frame[] = { { "kind", NULL }, { "function", NULL }, { "file", NULL },
						{ "line", NULL }, { NULL, NULL } };
static const struct jsonl_keep keep_thread[] = { { "tid", NULL }, { "crashed", NULL }, { "frames", keep_frame },
						 { NULL, NULL } };
static const struct jsonl_keep keep_interp[] = { { "threads", keep_thread }, { NULL, NULL } };
static const struct jsonl_keep keep_coredump[] = { { "exe", NULL }, { "hostname", NULL }, { "timestamp", NULL },
						   { NULL, NULL } };
static const struct jsonl_keep keep_process[] = { { "executable", NULL }, { "coredump", keep_coredump },
						  { NULL, NULL } };
static const struct jsonl_keep keep_input[] = { { "path", NULL }, { NULL, NULL } };
static const struct jsonl_keep keep_summary[] = { { "text", NULL }, { "thread", NULL }, { NULL, NULL } };
static const struct jsonl_keep keep_python[] = { { "version", NULL }, { NULL, NULL } };
static const struct jsonl_keep keep_record[] = { { "schema", NULL }, { "error", NULL }, { "input", keep_input },
						 { "fingerprint", NULL }, { "summary", keep_summary },
						 { "process", keep_process }, { "python", keep_python },
						 { "interpreters", keep_interp }, { NULL, NULL } };
/* the same without the dashboard's: the last four */
static const struct jsonl_keep keep_record_text[] = { { "schema", NULL }, { "error", NULL }, { "input", keep_input },
						      { "fingerprint", NULL }, { "summary", keep_summary },
						      { NULL, NULL } };

/* LINE's record, as json_loads reads it (its error in ERR) with only what
 * the grouping reads of it: jsonl_scan's, else jansson's.  *OOM: out of
 * memory before jansson could say. */
static json_t *read_record(const struct grouping *g, const char *line, size_t n, json_error_t *err, bool *oom,
			   json_t *scanned, bool was_scanned)
{
	json_t *j = was_scanned ? scanned : jsonl_scan(line, n, g->html ? keep_record : keep_record_text);
	if (j)
		return j;
	char *paired = jsonl_pair_surrogates(line, n);
	if (!paired) {
		*oom = true;
		return NULL;
	}
	j = json_loads(paired, 0, err);
	free(paired);
	return j;
}

/* One line (N bytes, its newline included or not, followed by a newline
 * or a NUL: surrogates.c reads an escape's bytes up to one); SCANNED its
 * jsonl_scan made before when WAS_SCANNED (taken).  -1 when out of memory. */
static int add_line(struct grouping *g, const char *name, unsigned long lineno, const char *line, size_t n,
		    json_t *scanned, bool was_scanned)
{
	if (!(n = group_line_text(line, n))) {
		json_decref(scanned);
		return 0;
	}
	json_error_t err;
	bool oom = false;
	json_t *j = read_record(g, line, n, &err, &oom, scanned, was_scanned);
	if (oom)
		return -1;
	json_t *error = json_object_get(j, "error");
	const char *why = !j ? err.text : !json_is_object(j) ? "not a JSON object"
			  : !json_is_string(json_object_get(j, "schema")) ? "no \"schema\": not a pycore record"
			  : error && !json_is_string(json_object_get(error, "code")) ? "an error record without a code"
			  : !error && !json_is_object(json_object_get(j, "input")) ? "a report without \"input\""
			  : NULL;
	int rc = 0;
	if (why) {
		if (g->bad++ < MAX_BAD_SHOWN) {
			/* jansson's message quotes the line: escaped like a dump's strings */
			fprintf(stderr, "pycore: group: ");
			report_put_escaped(stderr, name);
			fprintf(stderr, ":%lu: skipped, not a report or an error record: ", lineno);
			report_put_escaped(stderr, why);
			fputc('\n', stderr);
		}
	} else if (error) {
		g->errors++;
		const char *code = json_string_value(json_object_get(error, "code"));
		json_int_t c = json_integer_value(json_object_get(g->error_codes, code));
		if (json_object_set_new(g->error_codes, code, json_integer(c + 1)) != 0)
			rc = -1;
	} else {
		g->records++;
		rc = add_report(g, j);
	}
	json_decref(j);
	return rc;
}

/* Bytes of lines in a chunk dealt to either thread (group_read.h): small
 * enough that the two share a window's work evenly, and that the adding
 * thread's turn to add never waits long for the reading one. */
#define CHUNK_BYTES ((size_t)1 << 18)

/* The lines from P to END (each ends in a newline); 0 or -1. */
static int add_lines(struct grouping *g, const char *name, unsigned long *lineno, const char *p, const char *end,
		     struct group_reader *r)
{
	int rc = 0;
	if (!r) {
		while (rc == 0 && p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			rc = add_line(g, name, ++*lineno, p, (size_t)(nl - p + 1), NULL, false);
			p = nl + 1;
		}
		return rc;
	}
	group_reader_window(r, p, end, CHUNK_BYTES);
	struct group_batch *b;
	while ((b = group_reader_next(r))) {
		if (rc == 0 && b->oom) {
			rc = -1;
			group_reader_cancel(r);
		}
		/* (add_line takes a reference of its own: the chunk's records are
		 * freed by the thread that read them) */
		for (size_t i = 0; i < b->n && rc == 0; i++)
			if ((rc = add_line(g, name, ++*lineno, b->line[i], b->len[i], json_incref(b->rec[i]), true)) != 0)
				group_reader_cancel(r);
		group_reader_release(r, b);
	}
	return rc;
}

/* The lines of a regular file, mapped a window at a time (MAP_WINDOW, or
 * more for a longer line) and unmapped behind: memory does not grow with
 * the file.  The file as it was when opened (SIZE bytes); 0, -1 out of
 * memory, -2 a read error (errno). */
#define MAP_WINDOW ((size_t)4 << 20)

static int map_lines(struct grouping *g, const char *name, int fd, off_t size, struct group_reader *r)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t window = MAP_WINDOW;
	off_t off = 0;                /* the next line's */
	unsigned long lineno = 0;
	int rc = 0;
	while (rc == 0 && off < size) {
		off_t base = off - off % (page > 0 ? page : 4096);
		size_t len = (size_t)(off - base) + window;
		if ((off_t)len > size - base)
			len = (size_t)(size - base);
		bool last = base + (off_t)len == size;
		char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, base);
		if (m == MAP_FAILED) {
			rc = errno == ENOMEM ? -1 : -2;
			break;
		}
		madvise(m, len, MADV_SEQUENTIAL);
		const char *start = m + (off - base), *end = m + len;
		const char *nl = memrchr(start, '\n', (size_t)(end - start)), *p = nl ? nl + 1 : start;
		rc = add_lines(g, name, &lineno, start, p, r);
		if (rc == 0 && last && p < end) {
			/* the last line, no newline after it: a copy ends in a NUL */
			char *copy = strndup(p, (size_t)(end - p));
			rc = copy ? add_line(g, name, ++lineno, copy, (size_t)(end - p), NULL, false) : -1;
			free(copy);
			p = end;
		}
		if (p == start)
			window *= 2;          /* a line longer than the window */
		off = base + (off_t)(p - m);
		munmap(m, len);
	}
	return rc;
}

/* The lines of a pipe read STREAM_CHUNK bytes at a time (more for a longer
 * line), for two threads as a file's (add_lines).  0, -1, -2 (errno). */
#define STREAM_CHUNK ((size_t)8 << 20)

static int stream_lines(struct grouping *g, const char *name, FILE *f, struct group_reader *r)
{
	size_t cap = STREAM_CHUNK + 1, have = 0;
	char *buf = malloc(cap);
	unsigned long lineno = 0;
	int rc = buf ? 0 : -1;
	while (rc == 0) {
		if (cap - have < STREAM_CHUNK / 2 + 1) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = -1;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t n = fread(buf + have, 1, cap - 1 - have, f);
		if (n == 0) {
			rc = ferror(f) ? -2 : 0;
			break;
		}
		have += n;
		buf[have] = '\0';
		const char *nl = memrchr(buf, '\n', have), *end = nl ? nl + 1 : buf;
		rc = add_lines(g, name, &lineno, buf, end, r);
		have -= (size_t)(end - buf);
		memmove(buf, end, have);
	}
	if (rc == 0 && have) {        /* the last line, no newline after it: ends in a NUL */
		buf[have] = '\0';
		rc = add_line(g, name, ++lineno, buf, have, NULL, false);
	}
	free(buf);
	return rc;
}

/* Every line of F; 0, -1 out of memory, -2 a read error. */
static int read_lines(struct grouping *g, const char *name, FILE *f, struct group_reader *r)
{
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && ftello(f) == 0)
		return map_lines(g, name, fileno(f), st.st_size, r);
	if (r)
		return stream_lines(g, name, f, r);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;
	int rc = 0;
	errno = 0;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0)
		rc = add_line(g, name, ++lineno, line, (size_t)n, NULL, false);
	if (rc == 0 && ferror(f))
		rc = -2;
	free(line);
	return rc;
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

static const struct seen *first_of(const struct group *gr)
{
	return gr->all_timed ? &gr->first_t : &gr->first;
}

static const struct seen *last_of(const struct group *gr)
{
	return gr->all_timed ? &gr->last_t : &gr->last;
}

/* Most frequent first; among groups of one count, those seen by time
 * before those seen by input order, then the first seen first (by the
 * dump's time, or the record's position), then by hash.  By time, the
 * order does not depend on how the records are split among files or in
 * what order they come: the dashboard of a sharded run's parts is that of
 * one batch over all. */
static int by_count(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->all_timed != y->all_timed)
		return x->all_timed ? -1 : 1;
	if (x->all_timed) {
		const struct timespec *s = &x->first_t.time, *t = &y->first_t.time;
		if (s->tv_sec != t->tv_sec)
			return s->tv_sec < t->tv_sec ? -1 : 1;
		if (s->tv_nsec != t->tv_nsec)
			return s->tv_nsec < t->tv_nsec ? -1 : 1;
	} else if (x->first.record != y->first.record) {
		return x->first.record < y->first.record ? -1 : 1;
	}
	return strcmp(x->hash, y->hash);
}

static void iso_time(const struct timespec *t, char *buf, size_t size)
{
	struct tm tm;
	time_t s = t->tv_sec;
	if (!gmtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "%lld", (long long)s);
}

static void put_unmarked(FILE *out, const char *s)
{
	char *u = s ? jsonl_unmark(s, false) : NULL;
	report_put_escaped(out, u ? u : "?");
	free(u);
}

static void write_seen_text(FILE *out, const char *label, const struct seen *s, bool timed)
{
	fprintf(out, "    %s ", label);
	if (timed) {
		char when[64];
		iso_time(&s->time, when, sizeof(when));
		fprintf(out, "%s", when);
	} else {
		fprintf(out, "report %lu of the input", s->record);
	}
	fputs(": ", out);
	put_unmarked(out, s->path);
	fputs("\n", out);
}

static void write_text(FILE *out, struct grouping *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct group *gr = &g->groups[i];
		json_t *frames = json_object_get(gr->fingerprint, "frames");
		/* everything below comes from files someone else wrote: escaped */
		fprintf(out, "%s%lu  ", i ? "\n" : "", gr->count);
		put_unmarked(out, gr->hash);
		fputs("  ", out);
		put_unmarked(out, json_string_value(json_object_get(gr->fingerprint, "kind")));
		for (size_t k = 0; k < json_array_size(frames); k++) {
			fputs(k ? " < " : ": ", out);
			put_unmarked(out, json_string_value(json_array_get(frames, k)));
		}
		fprintf(out, "\n    first and last seen by %s\n", gr->all_timed ? "the dump files' modification times"
			: "input order (a dump of this group is gone)");
		write_seen_text(out, "first seen", first_of(gr), gr->all_timed);
		write_seen_text(out, "last seen ", last_of(gr), gr->all_timed);
		fputs("    example: ", out);
		put_unmarked(out, last_of(gr)->summary);
		fputs("\n", out);
	}
	fprintf(out, "%s%lu reports in %zu groups", g->n ? "\n" : "", g->reports, g->n);
	if (g->no_fingerprint)
		fprintf(out, " (%lu without a fingerprint, not grouped)", g->no_fingerprint);
	fprintf(out, "; %lu error records", g->errors);
	const char *code;
	json_t *count;
	bool any = false;
	json_object_foreach(g->error_codes, code, count) {
		fputs(any ? ", " : " (", out);
		put_unmarked(out, code);
		fprintf(out, " %lld", (long long)json_integer_value(count));
		any = true;
	}
	fprintf(out, "%s; %lu bad lines\n", any ? ")" : "", g->bad);
}

static json_t *marked_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *seen_json(const struct seen *s)
{
	char when[64];
	if (s->has_time)
		iso_time(&s->time, when, sizeof(when));
	return json_pack("{s:I, s:o, s:o}", "record", (json_int_t)s->record,
			 "time", s->has_time ? json_string(when) : json_null(), "path", marked_string(s->path));
}

/* A line of jansson's text, its marks spelled "\udcNN". */
static int write_json_line(FILE *out, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
	json_decref(j);
	char *u = text ? jsonl_unmark(text, true) : NULL;
	int rc = u && fputs(u, out) != EOF && fputc('\n', out) != EOF ? 0 : -1;
	free(text);
	free(u);
	return rc;
}

static int write_json(FILE *out, struct grouping *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct group *gr = &g->groups[i];
		const struct seen *last = last_of(gr);
		if (write_json_line(out, json_pack("{s:O, s:I, s:s, s:o, s:o, s:{s:o, s:o}}",
				"fingerprint", gr->fingerprint, "count", (json_int_t)gr->count,
				"seen_by", gr->all_timed ? "mtime" : "input-order",
				"first_seen", seen_json(first_of(gr)), "last_seen", seen_json(last),
				"example", "path", marked_string(last->path),
				"summary", marked_string(last->summary))) != 0)
			return -1;
	}
	return 0;
}

/* --output-dir: 0, or -2 when a page could not be written (said). */
static int write_pages(const char *dir, const struct grouping *g, const char *html_dir, char **files, int nfiles)
{
	char *failed = NULL;
	if (group_pages_write(dir, g, html_dir, files, nfiles, &failed) == 0)
		return 0;
	int e = errno;
	fprintf(stderr, "pycore: group: ");
	report_put_escaped(stderr, failed ? failed : dir);
	fprintf(stderr, ": cannot write: %s\n", strerror(e));
	free(failed);
	return -2;
}

/* ------------------------------------------------------------------------ */

int group_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "html-dir", required_argument, NULL, 'd' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, html = false;
	const char *html_dir = NULL, *out_dir = NULL;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
		if (c == 'f' && (strcmp(optarg, "json") == 0 || strcmp(optarg, "text") == 0 ||
				 strcmp(optarg, "html") == 0)) {
			json = strcmp(optarg, "json") == 0;
			html = strcmp(optarg, "html") == 0;
		} else if (c == 'd') {
			html_dir = optarg;
		} else if (c == 'o') {
			out_dir = optarg;
		} else if (c == 'h') {
			return help_write("group");
		} else {
			fprintf(stderr, "pycore: group: %s (try 'pycore --help')\n",
				c == 'f' ? "unknown format: use text, json or html"
				: c == ':' ? "an option needs a value" : "unknown option");
			return 2;
		}
	}
	if (out_dir && !html) {
		fprintf(stderr, "pycore: group: --output-dir needs --format html (try 'pycore --help')\n");
		return 2;
	}
	if (out_dir && mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "pycore: group: %s: cannot make the directory: %s\n", out_dir, strerror(errno));
		return 2;
	}
	struct grouping g = { .error_codes = json_object(), .html = html };
	int rc = g.error_codes ? 0 : -1;
	char *stdin_name[] = { "-" };
	char **files = optind < argc ? argv + optind : stdin_name;
	int nfiles = optind < argc ? argc - optind : 1;
	int exit_code = 0;
	struct group_reader *reader = rc == 0 ? group_reader_start(html ? keep_record : keep_record_text) : NULL;
	for (int i = 0; rc == 0 && i < nfiles; i++) {
		bool std = strcmp(files[i], "-") == 0;
		FILE *f = std ? stdin : fopen(files[i], "r");
		if (!f) {
			fprintf(stderr, "pycore: group: %s: %s\n", files[i], strerror(errno));
			exit_code = 2;
			break;
		}
		rc = read_lines(&g, std ? "(standard input)" : files[i], f, reader);
		if (rc == -2) {
			fprintf(stderr, "pycore: group: %s: cannot read: %s\n", files[i], strerror(errno));
			exit_code = 2;
		}
		if (!std)
			fclose(f);
	}
	group_reader_stop(reader);
	if (rc == -1) {
		fprintf(stderr, "pycore: group: out of memory\n");
		exit_code = 2;
	}
	if (exit_code == 0) {
		if (g.n)
			qsort(g.groups, g.n, sizeof(*g.groups), by_count);
		if (json)
			rc = write_json(stdout, &g);
		else if (html && out_dir)
			rc = write_pages(out_dir, &g, html_dir, files, nfiles);
		else if (html)
			rc = group_html_write(stdout, &g, html_dir, files, nfiles);
		else
			write_text(stdout, &g);
		if (rc == -2) {
			exit_code = 5;
		} else if (rc != 0 || fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "pycore: group: cannot write to standard output: %s\n", strerror(errno));
			exit_code = 5;
		} else if (g.bad) {
			fprintf(stderr, "pycore: group: %lu bad line%s skipped (not a report or an error record)\n",
				g.bad, g.bad == 1 ? "" : "s");
			exit_code = 1;
		}
	}
	for (size_t i = 0; i < g.n; i++) {
		free(g.groups[i].hash);
		json_decref(g.groups[i].fingerprint);
		seen_free(&g.groups[i].first);
		seen_free(&g.groups[i].last);
		seen_free(&g.groups[i].first_t);
		seen_free(&g.groups[i].last_t);
		group_html_free(g.groups[i].html);
	}
	free(g.groups);
	free(g.slots);
	group_html_end();
	jsonl_scan_end();
	json_decref(g.error_codes);
	return exit_code;
}
