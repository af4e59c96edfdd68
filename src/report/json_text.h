/* Compact JSON text of a jansson tree (json.c's records): the bytes
 * json_dumps(JSON_COMPACT) gives, for less.
 * Contract: a NUL-terminated text and its length, or NULL (out of memory,
 * or a string that is not valid UTF-8, as json_dumps fails); the text is
 * allocated as jansson allocates (json_get_alloc_funcs), to be freed with
 * its free function. */
#ifndef PYCORE_REPORT_JSON_TEXT_H
#define PYCORE_REPORT_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

char *json_text_compact(json_t *j, size_t *len);

/* The same, HOOK asked about each empty array and empty object of the
 * tree (with ARG): true when it wrote that value itself, with the calls
 * below, false to have it written as "[]" or "{}".  What the hook writes
 * goes in as it is: its being JSON is the hook's to keep. */
struct json_text;
typedef bool (*json_text_hook)(struct json_text *t, json_t *node, void *arg);
char *json_text_compact_hooked(json_t *j, size_t *len, json_text_hook hook, void *arg);
void json_text_put(struct json_text *t, const char *s, size_t n);           /* bytes as they are */
void json_text_put_string(struct json_text *t, const char *s, size_t n);    /* a string, as jansson's */
void json_text_put_int(struct json_text *t, json_int_t v);
static inline void json_text_put_bool(struct json_text *t, bool v)
{
	json_text_put(t, v ? "true" : "false", v ? 4 : 5);
}
void json_text_put_value(struct json_text *t, json_t *j);                   /* a tree, as above */

#endif
