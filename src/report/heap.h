/* The heap census (model_heap, python/heap/): the report's "heap" in
 * JSON, and pycore heap's text report.
 * Contract: report_heap_json gives a new object, or json_null() for NULL;
 * STR makes a dump's string JSON (json.c's str_or_null).  report_heap_text
 * returns 0, or -1 when writing failed. */
#ifndef PYCORE_REPORT_HEAP_H
#define PYCORE_REPORT_HEAP_H

#include <jansson.h>
#include <stdio.h>

#include "model/model.h"

json_t *report_heap_json(const struct model_heap *h, json_t *(*str)(const char *));
/* The census of R (types past TOP left out, said so; 0: all). */
int report_heap_text(FILE *out, const struct model_report *r, size_t top);
/* heap --diff: what changed from the old census to R's (R->heap->diff). */
int report_heap_diff_text(FILE *out, const struct model_report *r, size_t top);
/* The census of R as one self-contained HTML page (heap_html.c): the
 * memory's split, the top of the dominator tree as a treemap (each panel
 * a node's; a click on a rectangle zooms into it, by the URL's fragment,
 * without script), the largest retainers and the types in tables a click
 * on a header sorts (with script). */
int report_heap_html(FILE *out, const struct model_report *r, size_t top);
/* A type's name as the reports write it, "module.qualname" (bare for
 * builtins; "?" for a qualname not read), into BUF of at least
 * REPORT_HEAP_NAME_MAX bytes (room for what py_type_qualname reads: 256
 * characters of each, 4 bytes each at most). */
#define REPORT_HEAP_NAME_MAX 2064
const char *report_heap_type_name(const char *module, const char *qualname, char *buf, size_t n);
/* B bytes as "117.7 MiB", into BUF */
const char *report_heap_human(uint64_t b, char *buf, size_t n);
/* The anonymous memory the allocators read and the modules' .bss hold */
uint64_t report_heap_attributed(const struct model_heap_memory *m);

#endif
