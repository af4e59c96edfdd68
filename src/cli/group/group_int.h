/* pycore group's state, shared by group.c (reading, text and JSON) and
 * group_html.c (the dashboard): a group per fingerprint, aggregates only,
 * never whole reports. */
#ifndef PYCORE_CLI_GROUP_INT_H
#define PYCORE_CLI_GROUP_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

struct group_html;

/* the one-page dashboard shows the sections of this many groups, the most
 * frequent */
#define MAX_DETAILED 20

struct seen {
	unsigned long record;        /* the report's position in the input, from 1 */
	bool has_time;               /* its dump exists: TIME is its mtime */
	struct timespec time;
	char *path;
	char *summary;
};

struct group {
	char *hash;
	json_t *fingerprint;         /* the first report's, as read */
	unsigned long count;
	bool all_timed;              /* every dump of the group still exists */
	struct seen first, last;     /* by input order, and (all_timed) by time */
	struct seen first_t, last_t;
	struct group_html *html;     /* --format html: the dashboard's aggregates */
};

struct grouping {
	struct group *groups;
	size_t n, cap;
	size_t *slots;               /* open addressing: 1 + index, 0 empty */
	size_t nslots;
	unsigned long records, reports, bad, no_fingerprint, errors;
	json_t *error_codes;         /* code -> count */
	bool html;                   /* --format html: keep the dashboard's aggregates */
};

/* group_html.c: the aggregates of the dashboard, per group.  Adds report J
 * (its dump's modification time MTIME, NULL unknown) to *H (made on first
 * use); 0, or -1 when out of memory. */
int group_html_add(struct group_html **h, json_t *j, const struct timespec *mtime);
void group_html_free(struct group_html *h);
/* Frees what the dashboard's groups share (the frames' labels), after
 * every group_html_free. */
void group_html_end(void);
/* group_pages.c: the dashboard of G (sorted, most frequent first); the pages of
 * batch --html-dir are linked when HTML_DIR (NULL: none) holds them.
 * FILES: the inputs, named on the page.  0, or -1 when writing failed. */
int group_html_write(FILE *out, const struct grouping *g, const char *html_dir, char **files, int nfiles);
/* Its parts: (group_pages.c) the page's head (titled TITLE; G's totals
 * unless G is NULL), up to <main>; (group_html.c) the overview table's
 * rows of the groups ranked FROM to TO (from 0, TO excluded; without
 * PAGES at most the first 5,000; with PAGES each links its group's page,
 * group-RANK.html), the number of rows written; one group's section
 * (RANK from 0). */
void group_html_head(FILE *out, const struct grouping *g, char **files, int nfiles, const char *title);
size_t group_html_rows(FILE *out, const struct grouping *g, const char *html_dir, size_t from, size_t to,
		       bool pages);
void group_html_section(FILE *out, const struct group *gr, size_t rank, const char *html_dir);

/* group_pages.c: the dashboard split, for --output-dir DIR: the index,
 * DIR/index.html, DIR/index-2.html, ... (each the totals and a row for
 * each of at most GROUP_INDEX_ROWS groups, each row linking its group's
 * page; links between the index's pages) and a page per group,
 * DIR/group-RANK.html, linking back to the index page of its row.  0, or
 * -1 (errno) when a page could not be written; its path in *FAILED (to
 * free). */
#define GROUP_INDEX_ROWS 500
int group_pages_write(const char *dir, const struct grouping *g, const char *html_dir, char **files, int nfiles,
		      char **failed);

#endif
