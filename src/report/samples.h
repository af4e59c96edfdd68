/* A process read several times (model_samples, analysis/samples.h): the
 * report's "samples" in JSON, and the text report's "Samples" section.
 * Contract: report_samples_json gives a new object, or json_null() for
 * NULL; STR makes a dump's string JSON (json.c's str_or_null).
 * report_samples_text writes nothing for NULL. */
#ifndef PYCORE_REPORT_SAMPLES_H
#define PYCORE_REPORT_SAMPLES_H

#include <jansson.h>
#include <stdio.h>

#include "model/model.h"

json_t *report_samples_json(const struct model_samples *s, json_t *(*str)(const char *));
void report_samples_text(FILE *out, const struct model_samples *s);
/* The page's Samples section: the findings, and a row a thread (its
 * state, its timeline as a cell a sample, its evidence). */
void report_samples_html(FILE *out, const struct model_samples *s);

#endif
