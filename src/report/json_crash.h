/* The crash's own facts as JSON, for json.c: the report's "fault_kind"
 * (model_fault_kind) and "abort" (model_abort).
 * Contract: each a new object, or json_null() when its model is NULL; STR
 * makes a dump's string JSON (json.c's str_or_null). */
#ifndef PYCORE_REPORT_JSON_CRASH_H
#define PYCORE_REPORT_JSON_CRASH_H

#include <jansson.h>

#include "model/model.h"

json_t *report_fault_kind_json(const struct model_fault_kind *k, json_t *(*str)(const char *));
json_t *report_abort_json(const struct model_abort *ab, json_t *(*str)(const char *));

#endif
