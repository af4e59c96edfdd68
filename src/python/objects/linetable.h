/* Bytecode position -> source line, for the line tables of CPython 3.6-3.15
 * (3.11 introduced the location table that 3.12-3.15 keep).
 *
 * Pure functions over untrusted bytes: they never read past LEN, always
 * finish (each step consumes at least one byte of the table), and return -1
 * when the table is malformed or does not cover the position.  A position
 * before the first instruction (a frame that has not started: f_lasti -1)
 * gives FIRSTLINENO, as PyCode_Addr2Line() does in every version.  Line 0 is
 * a real answer (3.11+ give it to the RESUME of a module). */
#ifndef PYCORE_PYTHON_LINETABLE_H
#define PYCORE_PYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* CPython 3.6-3.9: co_lnotab pairs (byte-offset increment, signed line
 * increment since 3.6).  OFFSET is the byte offset of the instruction
 * (f_lasti).  The table has no end: every offset past the last pair is on
 * the last line, and an empty table puts everything on FIRSTLINENO.  An odd
 * length is malformed. */
int py_line_lnotab(const uint8_t *tab, size_t len, int firstlineno, int offset);

/* CPython 3.10: co_linetable (PEP 626), pairs (range length in bytes,
 * signed line delta; -128 for "no line").  OFFSET is a byte offset
 * (f_lasti * 2 in 3.10).  -1 past the last range and in "no line" ranges. */
int py_line_linetable310(const uint8_t *tab, size_t len, int firstlineno, int offset);

/* CPython 3.11+: the location table (co_linetable).  UNIT is the index of
 * the code unit (instruction offset in bytes / 2).  Returns the start line;
 * -1 for "no location" entries and past the last entry. */
int py_line_locations(const uint8_t *tab, size_t len, int firstlineno, int unit);

/* The whole position of code unit UNIT, as code.co_positions() gives it:
 * start and end line, start and end column (0-based UTF-8 byte offsets in
 * the line, as CPython stores them); -1 for what the entry does not say
 * (columns of a "no columns" entry, all four before the first
 * instruction but LINE, which is FIRSTLINENO there).  Returns 0, or -1
 * where py_line_locations() does (then *OUT is all -1). */
struct py_positions {
	int line, end_line, column, end_column;
};
int py_positions_locations(const uint8_t *tab, size_t len, int firstlineno, int unit,
			   struct py_positions *out);

#endif
