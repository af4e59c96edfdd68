/* A struct py_layout from an interpreter's own DWARF (custom builds). */
#ifndef PYCORE_PYTHON_DWARF_LAYOUT_H
#define PYCORE_PYTHON_DWARF_LAYOUT_H

#include <elfutils/libdw.h>

#include "python/runtime/layout.h"

/* Fill OUT for CPython 3.MINOR from DW.  Returns 0, or -1 with *why naming
 * a field the version needs and the DWARF lacks. */
int py_layout_from_dwarf(Dwarf *dw, unsigned minor, struct py_layout *out, const char **why);

/* OUT[i]: the value of the first of ALTS[i] ('|'-separated alternatives in
 * versions/fields.txt's syntax, "struct _is:next") DW has, -1 where none.
 * Returns 0, -1 out of memory. */
int py_dwarf_values(Dwarf *dw, const char *const *alts, size_t n, int64_t *out);

/* The name of the field at OFFSET of struct py_layout (NULL if none is). */
const char *py_layout_field_name(size_t offset);

#endif
