/* The line tables of CPython 3.6-3.13, decoded from untrusted bytes.
 *
 * Sources of the formats (facts only; no code taken from them):
 *  - 3.6-3.9 co_lnotab and 3.10 co_linetable: CPython's
 *    Objects/lnotab_notes.txt, in its 3.9 and 3.10 editions;
 *  - 3.11+ co_linetable: CPython's Objects/locations.md (3.11, 3.12),
 *    moved to InternalDocs/locations.md (3.13+).
 * Checked against every interpreter present by src/tests/unit/test-linetable.sh.
 *
 * Every loop below consumes at least one table byte per step and stops at
 * LEN, so the work is linear in the table and nothing past LEN is read.
 * Line numbers are summed in 64 bits and a running line whose magnitude
 * passes LINE_LIMIT is taken for garbage, so no sum can overflow. */
#include "linetable.h"

#include <limits.h>
#include <stdbool.h>

#define LINE_LIMIT ((int64_t)1 << 40)

/* The final answer: a line in [0, INT_MAX], else -1. */
static int line_result(int64_t line)
{
	return line >= 0 && line <= INT_MAX ? (int)line : -1;
}

static bool line_sane(int64_t line)
{
	return line > -LINE_LIMIT && line < LINE_LIMIT;
}

/* ------------------------------------------------------------------------
 * 3.6-3.9: co_lnotab.
 *
 * A list of (offset increment: unsigned byte, line increment: signed byte
 * since 3.6).  Rows (offset, line) start at (0, co_firstlineno); each pair
 * moves the offset, then the line.  An offset belongs to the line reached
 * by the last pair whose cumulated offset is still <= it.  Jumps too wide
 * for one byte are split over several pairs (255,0 ... or 0,127 ...), which
 * the rule above handles without special cases.
 * ------------------------------------------------------------------------ */
int py_line_lnotab(const uint8_t *tab, size_t len, int firstlineno, int offset)
{
	if (len % 2 != 0 || (len && !tab))
		return -1;
	if (offset < 0)
		return line_result(firstlineno);
	int64_t line = firstlineno;
	uint64_t at = 0;
	for (size_t k = 0; k < len; k += 2) {
		at += tab[k];
		if (at > (uint64_t)offset)
			break;
		line += (int8_t)tab[k + 1];
		if (!line_sane(line))
			return -1;
	}
	return line_result(line);
}

/* ------------------------------------------------------------------------
 * 3.10: co_linetable (PEP 626).
 *
 * A list of (range length in bytes: 0-254, line delta: signed byte).  The
 * ranges are contiguous from offset 0.  A delta of -128 means the range has
 * no line and leaves the running line alone; any other delta moves the
 * running line, which then is the range's line.  Empty ranges exist only to
 * move the running line.  255 as a length marks the end of the table
 * (lnotab_notes.txt of 3.10; the compiler never writes it).
 * ------------------------------------------------------------------------ */
int py_line_linetable310(const uint8_t *tab, size_t len, int firstlineno, int offset)
{
	if (len % 2 != 0 || (len && !tab))
		return -1;
	if (offset < 0)
		return line_result(firstlineno);
	int64_t running = firstlineno;
	uint64_t end = 0;
	for (size_t k = 0; k < len; k += 2) {
		if (tab[k] == 255)
			break;
		int delta = (int8_t)tab[k + 1];
		bool no_line = delta == -128;
		if (!no_line)
			running += delta;
		if (!line_sane(running))
			return -1;
		end += tab[k];
		/* Earlier ranges ended at or before OFFSET, so this one, if it
		 * ends after OFFSET, is the one holding it (and is not empty). */
		if ((uint64_t)offset < end)
			return no_line ? -1 : line_result(running);
	}
	return -1;
}

/* ------------------------------------------------------------------------
 * 3.11+: the location table.
 *
 * A list of entries.  The first byte of an entry has its top bit set, bits
 * 3-6 hold the kind and bits 0-2 the number of code units covered, minus 1;
 * the entry's further bytes all have the top bit clear.  The kinds:
 *    0-9  short form: line delta 0, one byte of columns
 *   10-12 one-line form: line delta (kind - 10), two bytes of columns
 *   13    no columns: line delta as an svarint
 *   14    long form: line delta (svarint), end-line delta, start column + 1
 *         and end column + 1 (varints)
 *   15    no location: no line; the running line stays
 * Line deltas are relative to the previous entry's start line, the first
 * one to co_firstlineno.  A varint is 6-bit groups, least significant
 * first, bit 6 set on every group but the last; an svarint is a varint V
 * standing for V/2, negated when V is odd.
 * ------------------------------------------------------------------------ */

/* Groups in a varint: 6 carry 36 bits, more than any table holds (CPython
 * decodes them into a 32-bit unsigned). */
#define VARINT_MAX_GROUPS 6

struct cursor {
	const uint8_t *tab;
	size_t len, pos;
};

static bool read_varint(struct cursor *c, uint64_t *out)
{
	uint64_t value = 0;
	for (int group = 0; group < VARINT_MAX_GROUPS; group++) {
		if (c->pos >= c->len)
			return false;           /* cut by the end of the table */
		uint8_t b = c->tab[c->pos];
		if (b & 0x80)
			return false;           /* ran into the next entry */
		c->pos++;
		value |= (uint64_t)(b & 0x3f) << (6 * group);
		if (!(b & 0x40)) {
			*out = value;
			return true;
		}
	}
	return false;                           /* too long to be real */
}

static bool read_svarint(struct cursor *c, int64_t *out)
{
	uint64_t v;
	if (!read_varint(c, &v))
		return false;
	int64_t magnitude = (int64_t)(v >> 1); /* < 2^35 */
	*out = (v & 1) ? -magnitude : magnitude;
	return true;
}

/* N bytes that belong to the current entry (top bit clear). */
static bool skip_bytes(struct cursor *c, size_t n)
{
	if (c->len - c->pos < n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (c->tab[c->pos + k] & 0x80)
			return false;
	c->pos += n;
	return true;
}

/* A varint standing for a column + 1 (0: none): the column, or -1. */
static int column_of(uint64_t v)
{
	return v >= 1 && v - 1 <= INT_MAX ? (int)(v - 1) : -1;
}

int py_positions_locations(const uint8_t *tab, size_t len, int firstlineno, int unit,
			   struct py_positions *out)
{
	*out = (struct py_positions){ -1, -1, -1, -1 };
	if (len && !tab)
		return -1;
	if (unit < 0) {
		out->line = line_result(firstlineno);
		return out->line < 0 ? -1 : 0;
	}
	struct cursor c = { tab, len, 0 };
	int64_t line = firstlineno;
	uint64_t end = 0;
	while (c.pos < len) {
		uint8_t head = tab[c.pos++];
		if (!(head & 0x80))
			return -1;              /* not the start of an entry */
		unsigned kind = (head >> 3) & 15;
		unsigned units = (head & 7) + 1u;
		int64_t delta = 0, end_delta = 0;
		int column = -1, end_column = -1;
		uint64_t v1 = 0, v2 = 0, v3 = 0;
		bool ok;
		if (kind <= 9) {
			/* column = kind * 8 + the byte's bits 4-6, end = column +
			 * its bits 0-3 */
			ok = skip_bytes(&c, 1);
			if (ok) {
				uint8_t b = tab[c.pos - 1];
				column = (int)kind * 8 + ((b >> 4) & 7);
				end_column = column + (b & 15);
			}
		} else if (kind <= 12) {
			delta = (int64_t)kind - 10;
			ok = skip_bytes(&c, 2);
			if (ok) {
				column = tab[c.pos - 2];
				end_column = tab[c.pos - 1];
			}
		} else if (kind == 13) {
			ok = read_svarint(&c, &delta);
		} else if (kind == 14) {
			ok = read_svarint(&c, &delta) && read_varint(&c, &v1) &&
			     read_varint(&c, &v2) && read_varint(&c, &v3);
			end_delta = (int64_t)v1;  /* < 2^36 */
			column = column_of(v2);
			end_column = column_of(v3);
		} else {
			ok = true;              /* 15: nothing follows */
		}
		/* an entry has exactly the bytes of its kind */
		if (!ok || (c.pos < len && !(tab[c.pos] & 0x80)))
			return -1;
		line += delta;
		if (!line_sane(line))
			return -1;
		end += units;
		if ((uint64_t)unit < end) {
			if (kind == 15 || line_result(line) < 0)
				return -1;
			out->line = line_result(line);
			out->end_line = line_sane(line + end_delta) ? line_result(line + end_delta) : -1;
			out->column = column;
			out->end_column = end_column;
			return 0;
		}
	}
	return -1;
}

int py_line_locations(const uint8_t *tab, size_t len, int firstlineno, int unit)
{
	struct py_positions p;
	return py_positions_locations(tab, len, firstlineno, unit, &p) == 0 ? p.line : -1;
}
