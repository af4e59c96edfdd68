/* pycore group's second thread (group_read.c): it reads records
 * (jsonl_scan, most of group's time) while group.c reads and adds the
 * batch of lines before them; group.c adds them after, in the input's
 * order, so the groups and the output are those of one thread. */
#ifndef PYCORE_CLI_GROUP_READ_H
#define PYCORE_CLI_GROUP_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/jsonl_scan.h"

/* LINE's length without its newline (and '\r's before it), 0 when it is
 * blank: what group reads of it. */
size_t group_line_text(const char *line, size_t n);

/* The lines FROM to TO (each ended by a newline), split by the reader into
 * LINE and LEN (N of them, the arrays CAP long, kept between batches) and
 * read into REC (NULL: a blank line, or one jsonl_scan left to jansson);
 * OOM: out of memory, the lines after N not read. */
struct group_batch {
	const char *from, *to;
	const char **line;
	size_t *len;
	json_t **rec;
	size_t n, cap;
	bool oom;
};

struct group_reader;

/* A second thread reading under KEEP, when there is a second processor;
 * NULL none. */
struct group_reader *group_reader_start(const struct jsonl_keep *keep);
/* B to read (B->n 0); then, before touching B again, wait for it. */
void group_reader_post(struct group_reader *r, struct group_batch *b);
void group_reader_wait(struct group_reader *r);
/* Ends the thread (NULL: nothing). */
void group_reader_stop(struct group_reader *r);

#endif
