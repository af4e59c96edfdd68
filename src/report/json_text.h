/* Compact JSON text of a jansson tree (json.c's records): the bytes
 * json_dumps(JSON_COMPACT) gives, for less.
 * Contract: a NUL-terminated text and its length, or NULL (out of memory,
 * or a string that is not valid UTF-8, as json_dumps fails); the text is
 * allocated as jansson allocates (json_get_alloc_funcs), to be freed with
 * its free function. */
#ifndef PYCORE_REPORT_JSON_TEXT_H
#define PYCORE_REPORT_JSON_TEXT_H

#include <jansson.h>
#include <stddef.h>

char *json_text_compact(json_t *j, size_t *len);

#endif
