/* pycore group's second thread (group_read.c): the lines of a window are
 * dealt in chunks to whichever thread is free, this one or group.c's; each
 * chunk's lines are read (jsonl_scan, most of group's time) into its
 * records, and group.c adds the chunks in the input's order, so the groups
 * and the output are those of one thread.  Reading never waits for adding:
 * while group.c adds a chunk, the reader reads the chunks after it. */
#ifndef PYCORE_CLI_GROUP_READ_H
#define PYCORE_CLI_GROUP_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "jsonl/jsonl_scan.h"

/* LINE's length without its newline (and '\r's before it), 0 when it is
 * blank: what group reads of it. */
size_t group_line_text(const char *line, size_t n);

/* The lines FROM to TO (each ended by a newline), split into LINE and LEN
 * (N of them, the arrays CAP long, kept between chunks) and read into REC
 * (NULL: a blank line, or one jsonl_scan left to jansson), the chunk's
 * own (group_reader_release frees them); OOM: out of memory, the lines
 * after N not read. */
struct group_batch {
	const char *from, *to;
	const char **line;
	size_t *len;
	json_t **rec;
	size_t n, cap;
	bool oom;
	bool done;                   /* read (the reader's, under its lock) */
	bool by_reader;              /* read by the reader's thread */
	bool held;                   /* released, its records not yet freed */
};

struct group_reader;

/* A second thread reading under KEEP, when there is a second processor;
 * NULL none. */
struct group_reader *group_reader_start(const struct jsonl_keep *keep);
/* The lines FROM to TO (each ended by a newline) to read, in chunks of
 * about CHUNK bytes: the window before it is all taken (group_reader_next
 * gave NULL). */
void group_reader_window(struct group_reader *r, const char *from, const char *to, size_t chunk);
/* The window's next chunk in order, read (by either thread: this one reads
 * a chunk while the next in order is not ready); NULL when all were given.
 * Its records are lent to the caller (json_incref what is kept); release
 * it before the next call: its records are freed, by the thread that made
 * them. */
struct group_batch *group_reader_next(struct group_reader *r);
void group_reader_release(struct group_reader *r, struct group_batch *b);
/* The window's chunks not dealt yet are dropped: group_reader_next gives
 * those being read, then NULL. */
void group_reader_cancel(struct group_reader *r);
/* Ends the thread (NULL: nothing). */
void group_reader_stop(struct group_reader *r);

#endif
