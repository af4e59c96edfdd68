/* A JSON Lines record read for pycore group without jansson's whole tree.
 *
 * jansson's json_loads builds every value of a report (every thread's
 * frames, locals, modules): over a big batch, reading is most of group's
 * time and it allocates for values it then frees unread.  jsonl_scan
 * reads the same line strictly, keeps only the members KEEP names (built
 * with jansson's own constructors, so a kept value is exactly the one
 * json_loads would give) and skips the rest after checking it.
 *
 * It never decides what jansson would refuse: whatever it is not sure of
 * (not an object at the top, any token jansson would reject, a number at
 * the edge of its range, a depth near jansson's limit, a NUL byte, out of
 * memory) returns NULL, and the caller reads the line with jansson as
 * before (its message for a bad line is jansson's own). */
#ifndef PYCORE_JSONL_SCAN_H
#define PYCORE_JSONL_SCAN_H

#include <jansson.h>
#include <stddef.h>

/* The members of an object to keep; a list ends with a NULL key.  SUB
 * NULL keeps the member's value whole; else the value, when an object,
 * keeps only SUB's members, and when an array, each of its elements is
 * kept so (a scalar is kept as it is). */
struct jsonl_keep {
	const char *key;
	const struct jsonl_keep *sub;
};

/* LINE (N bytes) read as json_loads(jsonl_pair_surrogates(LINE, N), 0)
 * would read it (surrogates.h), with only KEEP's members of its objects;
 * NULL when not sure (see above). */
json_t *jsonl_scan(const char *line, size_t n, const struct jsonl_keep *keep);

/* Frees what jsonl_scan keeps between calls in the calling thread: the objects of scalars it
 * shares among records (a frame's kept members, made once) and its buffers. */
void jsonl_scan_end(void);

#endif
