/* Which dumps a batch analyzes: the paths given, directories searched
 * recursively, lists read from standard input, then --shard and
 * --skip-done applied.  Private to src/cli/batch*.c. */
#ifndef PYCORE_CLI_BATCH_INPUT_H
#define PYCORE_CLI_BATCH_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/batch/batch.h"

struct batch_item {
	char *path;
	char *error;                 /* a record to write without a worker ("io"), or NULL */
};

struct batch_list {
	struct batch_item *items;
	size_t n, cap;
	size_t skipped_done;         /* had a record in --skip-done */
	size_t skipped_shard;        /* belong to another shard */
	size_t skipped_files;        /* files in directories that are not dumps */
};

/* Fill L; 0, or -1 after one line on stderr saying why (L then holds what
 * was read so far, to be freed). */
int batch_input(char **paths, int npaths, const struct batch_options *bo, struct batch_list *l);
void batch_list_free(struct batch_list *l);

#endif
