/* Renderers of the model: text for people, JSON (pycore-report/1) for
 * machines.  They never read a dump. */
#ifndef PYCORE_REPORT_REPORT_H
#define PYCORE_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model/model.h"

#define REPORT_SCHEMA "pycore-report/1"

/* Both return 0, or -1 when writing failed. */
int report_json_write(FILE *out, const struct model_report *r, bool pretty);
int report_text_write(FILE *out, const struct model_report *r);

/* "SIGSEGV" for 11; NULL when the number has no name. */
const char *report_signal_name(int number);

#endif
