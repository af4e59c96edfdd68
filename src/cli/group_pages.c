/* pycore group --format html: the dashboard's page as one (the head and
 * totals; group_html.c writes the rows and the groups' sections), and
 * with --output-dir DIR split into pages (group_int.h), so that a browser opens the dashboard of a
 * million records as fast as a small one: the index holds the totals and
 * one row per group (at most as many as the one-page dashboard lists),
 * each group's sections are on a page of its own, linked from its row. */
#include "cli/group_int.h"

#include <errno.h>
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
	group_html_rows(out, g, html_dir, false);
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

struct index_args {
	const struct grouping *g;
	const char *html_dir;
	char **files;
	int nfiles;
	size_t *rows;
};

static void write_index(FILE *out, const void *arg)
{
	const struct index_args *a = arg;
	group_html_head(out, a->g, a->files, a->nfiles, "pycore crash dashboard");
	*a->rows = group_html_rows(out, a->g, a->html_dir, true);
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
	group_html_head(out, NULL, a->files, a->nfiles, title);
	fputs("<p><a href=\"index.html\">All groups</a></p>\n", out);
	group_html_section(out, a->gr, a->rank, a->html_dir);
	fputs("</main>\n", out);
	report_html_end(out);
}

int group_pages_write(const char *dir, const struct grouping *g, const char *html_dir, char **files, int nfiles,
		      char **failed)
{
	size_t rows = 0;
	struct index_args ia = { g, html_dir, files, nfiles, &rows };
	char *path = NULL;
	*failed = NULL;
	if (asprintf(&path, "%s/index.html", dir) < 0)
		return -1;
	if (write_page(path, write_index, &ia) != 0) {
		*failed = path;
		return -1;
	}
	for (size_t i = 0; i < rows; i++) {
		free(path);
		if (asprintf(&path, "%s/group-%zu.html", dir, i + 1) < 0)
			return -1;
		struct group_args ga = { &g->groups[i], i, html_dir, files, nfiles };
		if (write_page(path, write_group_page, &ga) != 0) {
			*failed = path;
			return -1;
		}
	}
	free(path);
	return 0;
}
