/* pycore group --format html: the dashboard's page as one (the head and
 * totals; group_html.c writes the rows and the groups' sections), and
 * with --output-dir DIR split into pages (group_int.h), so that a browser
 * opens the dashboard of a million records, of any number of groups, as
 * fast as a small one: each page of the index holds the totals and the
 * rows of at most GROUP_INDEX_ROWS groups (its load in Chromium grows
 * with its rows: 5,000 took 2 s), every group has a page of its own with
 * its section, linked from its row. */
#include "cli/group/group_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/html.h"

void group_html_head(FILE *out, const struct grouping *g, char **files, int nfiles, const char *title)
{
	report_html_begin(out, title, "dashboard");
	fputs("<header class=\"top\"><h1>", out);
	report_html_escape(out, title, true);
	fputs("</h1><div class=\"sub\">", out);
	for (int i = 0; i < nfiles; i++) {
		fputs(i ? ", " : "", out);
		report_html_escape(out, files[i], true);
	}
	fputs("</div></header>\n<span id=\"tools\"></span>\n<main>\n", out);
	if (!g)
		return;
	fprintf(out, "<section class=\"card\" id=\"totals\"><p class=\"answer\"><span id=\"reports\">%lu</span> reports "
		"in <span id=\"groups\">%zu</span> groups", g->reports, g->n);
	if (g->no_fingerprint)
		fprintf(out, " (%lu without a fingerprint, not grouped)", g->no_fingerprint);
	fprintf(out, "; <span id=\"errors\">%lu</span> error records", g->errors);
	const char *code;
	json_t *count;
	bool any = false;
	json_object_foreach(g->error_codes, code, count) {
		fputs(any ? ", " : " (", out);
		report_html_escape(out, code, true);
		fprintf(out, " %lld", (long long)json_integer_value(count));
		any = true;
	}
	fprintf(out, "%s; <span id=\"bad\">%lu</span> bad lines</p></section>\n", any ? ")" : "", g->bad);
}

int group_html_write(FILE *out, const struct grouping *g, const char *html_dir, char **files, int nfiles)
{
	group_html_head(out, g, files, nfiles, "pycore crash dashboard");
	group_html_rows(out, g, html_dir, 0, SIZE_MAX, false);
	for (size_t i = 0; i < g->n && i < MAX_DETAILED; i++)
		group_html_section(out, &g->groups[i], i, html_dir);
	fputs("</main>\n", out);
	report_html_end(out);
	return ferror(out) ? -1 : 0;
}

/* PATH written by WRITE; 0, or -1 (errno). */
static int write_page(const char *path, void (*write)(FILE *, const void *), const void *arg)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	write(f, arg);
	int err = ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !err)
		err = errno ? errno : EIO;
	errno = err;
	return err ? -1 : 0;
}

/* The index page PAGE (from 1) of GROUP_INDEX_ROWS groups: index.html,
 * index-2.html, ... */
static void index_name(char *buf, size_t size, size_t page)
{
	if (page <= 1)
		snprintf(buf, size, "index.html");
	else
		snprintf(buf, size, "index-%zu.html", page);
}

static size_t index_pages(const struct grouping *g)
{
	return g->n ? (g->n + GROUP_INDEX_ROWS - 1) / GROUP_INDEX_ROWS : 1;
}

static int by_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* The links between the index's pages, on page PAGE of N: the first, the
 * last, the three either side, and for each power of ten below N the five
 * multiples of it either side of PAGE.  Without script, and however many
 * pages, any page is a few clicks from any other (1 -> 1000 -> 1300 ->
 * 1350 -> 1357), and each page carries a few dozen links, not N. */
static void write_nav(FILE *out, const struct grouping *g, size_t page, size_t n)
{
	size_t first = (page - 1) * GROUP_INDEX_ROWS, last = first + GROUP_INDEX_ROWS;
	last = last < g->n ? last : g->n;
	fprintf(out, "<p class=\"pages\">Groups <span class=\"range\">%zu\xe2\x80\x93%zu</span> of %zu", first + 1,
		last, g->n);
	if (n < 2) {
		fputs("</p>\n", out);
		return;
	}
	fprintf(out, ", index page %zu of %zu:", page, n);
	size_t q[128], k = 0;
	q[k++] = 1;
	q[k++] = n;
	for (size_t d = 0; d <= 3; d++) {
		if (page > d + 1)
			q[k++] = page - d;
		if (page + d <= n)
			q[k++] = page + d;
	}
	for (size_t step = 10; step < n && k + 11 <= sizeof(q) / sizeof(*q); step *= 10) {
		size_t base = page / step;
		for (size_t m = base > 5 ? base - 5 : 1; m <= base + 5; m++)
			if (m * step <= n)
				q[k++] = m * step;
		if (step > (size_t)-1 / 10)
			break;
	}
	qsort(q, k, sizeof(*q), by_size);
	char name[48];
	if (page > 1) {
		index_name(name, sizeof(name), page - 1);
		fprintf(out, " <a class=\"prev\" href=\"%s\">previous</a>", name);
	}
	for (size_t i = 0; i < k; i++) {
		if (i && q[i] == q[i - 1])
			continue;
		if (i && q[i] > q[i - 1] + 1)
			fputs(" \xe2\x80\xa6", out);
		if (q[i] == page) {
			fprintf(out, " <span class=\"here\">%zu</span>", page);
			continue;
		}
		index_name(name, sizeof(name), q[i]);
		fprintf(out, " <a href=\"%s\">%zu</a>", name, q[i]);
	}
	if (page < n) {
		index_name(name, sizeof(name), page + 1);
		fprintf(out, " <a class=\"next\" href=\"%s\">next</a>", name);
	}
	fputs("</p>\n", out);
}

struct index_args {
	const struct grouping *g;
	const char *html_dir;
	char **files;
	int nfiles;
	size_t page, npages;
};

static void write_index(FILE *out, const void *arg)
{
	const struct index_args *a = arg;
	char title[96];
	size_t from = (a->page - 1) * GROUP_INDEX_ROWS;
	if (a->page > 1)
		snprintf(title, sizeof(title), "pycore crash dashboard: groups %zu to %zu", from + 1,
			 from + GROUP_INDEX_ROWS < a->g->n ? from + GROUP_INDEX_ROWS : a->g->n);
	else
		snprintf(title, sizeof(title), "pycore crash dashboard");
	group_html_head(out, a->g, a->files, a->nfiles, title);
	if (a->g->n)
		write_nav(out, a->g, a->page, a->npages);
	group_html_rows(out, a->g, a->html_dir, from, from + GROUP_INDEX_ROWS, true);
	if (a->npages > 1)
		write_nav(out, a->g, a->page, a->npages);
	fputs("</main>\n", out);
	report_html_end(out);
}

struct group_args {
	const struct group *gr;
	size_t rank;
	const char *html_dir;
	char **files;
	int nfiles;
};

static void write_group_page(FILE *out, const void *arg)
{
	const struct group_args *a = arg;
	char title[64];
	snprintf(title, sizeof(title), "pycore crash dashboard: group %zu", a->rank + 1);
	char index[48];
	index_name(index, sizeof(index), a->rank / GROUP_INDEX_ROWS + 1);
	group_html_head(out, NULL, a->files, a->nfiles, title);
	fprintf(out, "<p><a class=\"index\" href=\"%s\">All groups</a></p>\n", index);
	group_html_section(out, a->gr, a->rank, a->html_dir);
	fputs("</main>\n", out);
	report_html_end(out);
}

int group_pages_write(const char *dir, const struct grouping *g, const char *html_dir, char **files, int nfiles,
		      char **failed)
{
	char *path = NULL, name[48];
	*failed = NULL;
	size_t npages = index_pages(g);
	for (size_t p = 1; p <= npages; p++) {
		struct index_args ia = { g, html_dir, files, nfiles, p, npages };
		index_name(name, sizeof(name), p);
		if (asprintf(&path, "%s/%s", dir, name) < 0)
			return -1;
		if (write_page(path, write_index, &ia) != 0) {
			*failed = path;
			return -1;
		}
		free(path);
	}
	for (size_t i = 0; i < g->n; i++) {
		if (asprintf(&path, "%s/group-%zu.html", dir, i + 1) < 0)
			return -1;
		struct group_args ga = { &g->groups[i], i, html_dir, files, nfiles };
		if (write_page(path, write_group_page, &ga) != 0) {
			*failed = path;
			return -1;
		}
		free(path);
	}
	return 0;
}
