/* Renderers of the model: text for people, JSON (pycore-report/1) for
 * machines.  They never read a dump. */
#ifndef PYCORE_REPORT_REPORT_H
#define PYCORE_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model/fingerprint.h"
#include "model/model.h"

#define REPORT_SCHEMA "pycore-report/1"

/* Both return 0, or -1 when writing failed. */
int report_json_write(FILE *out, const struct model_report *r, bool pretty);
int report_text_write(FILE *out, const struct model_report *r);
/* The same, with (TASKS) a section per event loop: its tasks as a tree,
 * each awaited task under the tasks awaiting it. */
int report_text_write_tasks(FILE *out, const struct model_report *r, bool tasks);

/* An error record: the line batch mode writes for a dump that has no
 * report, {"schema", "tool", "input": {"path"}, "error": {"code",
 * "message"}} (README, "Batch mode").  0, or -1 when writing failed. */
int report_json_error_write(FILE *out, const char *path, const char *code, const char *message);

/* "SIGSEGV" for 11; NULL when the number has no name. */
const char *report_signal_name(int number);

#endif
