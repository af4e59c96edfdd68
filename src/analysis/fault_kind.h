/* The fault named: what kind of failure a report's signal is, proven from the dump's mappings, registers and frames.
 * Contract: reads the dump and the walked model, sets r->fault_kind (or leaves it NULL); a kind not proven is not named. */
#ifndef PYCORE_ANALYSIS_FAULT_KIND_H
#define PYCORE_ANALYSIS_FAULT_KIND_H

#include "dump/dump.h"
#include "model/model.h"
#include "symbols/symbols.h"

/* R's signal (a handler's re-raise: the fault it caught, r->fault), named
 * by what D proves; S names the frames of a thread's stack (abort()),
 * SYSROOT (NULL: /) is where a mapped file's size is measured. */
void fault_kind_classify(struct dump *d, struct symbols *s, const char *sysroot, struct model_report *r);

#endif
