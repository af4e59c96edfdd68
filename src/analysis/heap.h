/* pycore heap --diff: the censuses of two dumps of one process compared.
 * Contract: analysis_heap_diff runs the analysis of OLD and of NEW (with
 * OPT, whose py.heap is set), and returns NULL and *OUT, NEW's analysis
 * whose report's heap->diff says what changed from OLD's census; or the
 * error of either analysis (its file named), or PC_EFORMAT when the
 * dumps are of different processes or either has no census. */
#ifndef PYCORE_ANALYSIS_HEAP_H
#define PYCORE_ANALYSIS_HEAP_H

#include "analysis/analysis.h"

struct pc_error *analysis_heap_diff(const char *old, const char *new, const struct analysis_options *opt,
				    struct analysis **out);
/* The same with NEW the live process PID, read as analysis_run_process
 * reads it (STOP: its threads stopped while read). */
struct pc_error *analysis_heap_diff_process(const char *old, long long pid, bool stop,
					    const struct analysis_options *opt, struct analysis **out);

#endif
