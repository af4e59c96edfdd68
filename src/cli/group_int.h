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
/* The dashboard of G (sorted, most frequent first); the pages of
 * batch --html-dir are linked when HTML_DIR (NULL: none) holds them.
 * FILES: the inputs, named on the page.  0, or -1 when writing failed. */
int group_html_write(FILE *out, const struct grouping *g, const char *html_dir, char **files, int nfiles);

#endif
