/* The values jsonl_scan (jsonl_scan.c) shares among records: inside the
 * scanner only.
 *
 * A batch's reports hold the same frames over and over: a kept object
 * whose kept members are all scalars ({"kind", "function", "file",
 * "line"} of a frame) is made once and shared (jansson's values are
 * reference-counted, and group reads them only), found either by its
 * signature (its kept members' names and raw text, each ended by a NUL)
 * or by its whole text and the pruning it was read with.  Each thread
 * has its own table (group reads lines in two); at most half of it full,
 * then all dropped. */
#ifndef PYCORE_JSONL_SHARE_H
#define PYCORE_JSONL_SHARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl/jsonl_scan.h"

/* jansson refuses past JSON_PARSER_MAX_DEPTH (2048): well below it, the
 * scanner leaves a line to jansson */
#define JSONL_MAX_DEPTH 512
/* the longest object text looked up as it is */
#define JSONL_SHARE_MAX_TEXT 1024

/* A hash of the table's own (not stored, not an interface). */
uint64_t jsonl_share_hash(const char *p, size_t n);

/* The object of signature SIG (LEN bytes, hashed HASH) made before
 * (borrowed), NULL none; O made for it, into the table. */
json_t *jsonl_share_sig_get(const char *sig, size_t len, uint64_t hash);
void jsonl_share_sig_put(const char *sig, size_t len, uint64_t hash, json_t *o);

/* The object read before under KEEP whose text the ROOM bytes at AT begin
 * with (HASH: jsonl_share_hash of its bytes to its first '}', mixed with
 * KEEP), its nesting fitting below JSONL_MAX_DEPTH when the object is at
 * DEPTH: borrowed, its text's length in *LEN; NULL none.  An object's
 * text ends itself (reading it never looks past its '}'), so those bytes
 * are that object.  TEXT (LEN bytes, checked and read under KEEP into O)
 * into the table. */
json_t *jsonl_share_text_get(const unsigned char *at, size_t room, uint64_t hash, const struct jsonl_keep *keep,
			     int depth, size_t *len);
void jsonl_share_text_put(const unsigned char *text, size_t len, uint64_t hash, const struct jsonl_keep *keep,
			  json_t *o);

/* A container's text is kept (jsonl_skip.c, jsonl_scan.c) when it is
 * this long or longer, and looked up by a hash of its first
 * JSONL_SKIP_KEY bytes (mixed with the KEEP it was read under). */
#define JSONL_SKIP_MIN_TEXT 256
#define JSONL_SKIP_KEY 64

/* The length of the container's text checked before under KEEP (NULL:
 * skipped) that the ROOM bytes at AT begin with, when inside DEPTH
 * containers it reaches no deeper than JSONL_MAX_DEPTH (HASH: its key);
 * its nesting in *NEST (itself counted), the value it was read into
 * (KEEP's; borrowed) in *VALUE when VALUE; 0 none.  TEXT (LEN bytes, a
 * container checked, nesting NEST, -1 not known) into the table, with
 * VALUE, when met before. */
size_t jsonl_share_long_get(const unsigned char *at, size_t room, uint64_t hash, const struct jsonl_keep *keep,
			    int depth, int *nest, json_t **value);
void jsonl_share_long_put(const unsigned char *text, size_t len, uint64_t hash, const struct jsonl_keep *keep,
			  int nest, json_t *value);
/* How many texts jsonl_share_long_get found inside DEPTH containers in
 * this thread so far. */
unsigned long jsonl_share_long_found(int depth);

/* Whether every member KEEP names is kept whole (no SUB): its object,
 * when all its kept members are scalars, may be shared. */
bool jsonl_keeps_whole(const struct jsonl_keep *keep);

/* Drops the calling thread's tables. */
void jsonl_share_drop(void);

#endif
