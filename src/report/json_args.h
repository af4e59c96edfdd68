/* A native frame's arguments in the JSON report, written into its text.
 * Contract: STR writes a dump's string (or null) as report/json.c does. */
#ifndef PYCORE_REPORT_JSON_ARGS_H
#define PYCORE_REPORT_JSON_ARGS_H

#include "model/model.h"
#include "report/json_text.h"

void json_args_text(struct json_text *t, const struct model_frame *f, void (*str)(struct json_text *, const char *));

#endif
