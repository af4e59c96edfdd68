/* Bytecode position -> line number, for every CPython version's line table.
 * Pure functions over untrusted bytes: they never read past LEN, always
 * end, and return -1 when the table is malformed or has no line there. */
#ifndef PYCORE_PYTHON_LINETABLE_H
#define PYCORE_PYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* 3.6-3.9: co_lnotab, pairs (byte-offset increment, signed line increment).
 * OFFSET is the byte offset of the instruction (f_lasti). */
int py_line_lnotab(const uint8_t *tab, size_t len, int firstlineno, int offset);

/* 3.10: co_linetable (PEP 626), pairs (byte-length, signed line delta; -128
 * for "no line").  OFFSET is a byte offset (f_lasti * 2). */
int py_line_linetable310(const uint8_t *tab, size_t len, int firstlineno, int offset);

/* 3.11+: the location table.  UNIT is the code-unit index of the
 * instruction (byte offset / 2). */
int py_line_locations(const uint8_t *tab, size_t len, int firstlineno, int unit);

#endif
