/* The report's "fault_kind" (model_fault_kind) as JSON, for json.c.
 * Contract: a new object, or json_null() when K is NULL; STR makes a dump's string JSON (json.c's str_or_null). */
#ifndef PYCORE_REPORT_JSON_FAULT_KIND_H
#define PYCORE_REPORT_JSON_FAULT_KIND_H

#include <jansson.h>

#include "model/model.h"

json_t *report_fault_kind_json(const struct model_fault_kind *k, json_t *(*str)(const char *));

#endif
