/* What symbol look-ups learn of a module's file, kept for the life of the
 * process: pycore batch's warm processes (one per interpreter build) learn
 * it once, and every worker forked from one inherits it.
 * Contract: off unless symbols_warm_enable was called; an answer is a pure
 * function of the file (its path, the build-id the dump records) and the
 * module's shape in memory, its addresses kept relative to the module's
 * start, so a dump of the same build elsewhere in memory gets the same
 * answer a cold look-up would. */
#ifndef PYCORE_SYMBOLS_WARM_H
#define PYCORE_SYMBOLS_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "symbols/symbols.h"

enum warm_kind { WARM_SYMTAB, WARM_DYNSYM, WARM_ADDR };

/* From now on, look-ups are kept (a warm process, before its first analysis). */
void symbols_warm_enable(void);
bool symbols_warm_enabled(void);

/* The answer for M (its file PATH) to the names of WANT: true when every
 * one was asked before, each filled in (addresses for M's start), and
 * *RESULT the look-up's return value, *OPENED whether it opened M's file. */
bool symbols_warm_get(enum warm_kind kind, const struct dump_module *m, const char *path,
		      struct symbol_want *want, size_t n, int *result, bool *opened);
/* Keep a cold look-up's answer (RESULT -1: the module had no symbols). */
void symbols_warm_put(enum warm_kind kind, const struct dump_module *m, const char *path,
		      const struct symbol_want *want, size_t n, int result, bool opened);

/* The name dwfl_module_addrname gave at LOOKUP in M (its file PATH), an
 * address: true when it was asked before, *NAME that name (NULL: none). */
bool symbols_warm_name_get(const struct dump_module *m, const char *path, uint64_t lookup, const char **name);
void symbols_warm_name_put(const struct dump_module *m, const char *path, uint64_t lookup, const char *name);

#endif
