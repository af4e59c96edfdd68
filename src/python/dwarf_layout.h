/* A struct py_layout from an interpreter's own DWARF (custom builds). */
#ifndef PYCORE_PYTHON_DWARF_LAYOUT_H
#define PYCORE_PYTHON_DWARF_LAYOUT_H

#include <elfutils/libdw.h>

#include "python/layout.h"

/* Fill OUT for CPython 3.MINOR from DW.  Returns 0, or -1 with *why naming
 * a field the version needs and the DWARF lacks. */
int py_layout_from_dwarf(Dwarf *dw, unsigned minor, struct py_layout *out, const char **why);

/* The name of the field at OFFSET of struct py_layout (NULL if none is). */
const char *py_layout_field_name(size_t offset);

#endif
