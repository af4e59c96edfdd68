/* Line tables of every CPython version.  Formats from CPython's own notes:
 * Objects/lnotab_notes.txt (3.6-3.10) and Objects/locations.md (3.11+). */
#include "python/linetable.h"

#include <stdbool.h>

int py_line_lnotab(const uint8_t *tab, size_t len, int firstlineno, int offset)
{
	/* The line of the last pair whose cumulative offset is <= OFFSET. */
	int line = firstlineno;
	long addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > offset)
			break;
		line += (int8_t)tab[i + 1];
	}
	return line;
}

int py_line_linetable310(const uint8_t *tab, size_t len, int firstlineno, int offset)
{
	if (offset < 0)
		return firstlineno;
	/* Ranges [start, end) each with a line; empty ranges only move the
	 * running line number. */
	long start, end = 0;
	int computed = firstlineno, line = -1;
	for (size_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += tab[i];
		int8_t ldelta = (int8_t)tab[i + 1];
		if (ldelta == -128) {
			line = -1;
		} else {
			computed += ldelta;
			line = computed;
		}
		if (start != end && start <= offset && offset < end)
			return line;
	}
	return -1;
}

/* 6-bit chunks, least significant first; bit 6 says another follows. */
static bool read_varint(const uint8_t *tab, size_t len, size_t *i, unsigned *out)
{
	unsigned v = 0;
	for (int shift = 0; shift < 32; shift += 6) {
		if (*i >= len || (tab[*i] & 0x80))
			return false; /* ran off the table or into the next entry */
		uint8_t b = tab[(*i)++];
		v |= (unsigned)(b & 63) << shift;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool read_svarint(const uint8_t *tab, size_t len, size_t *i, int *out)
{
	unsigned v;
	if (!read_varint(tab, len, i, &v))
		return false;
	*out = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
	return true;
}

int py_line_locations(const uint8_t *tab, size_t len, int firstlineno, int unit)
{
	if (unit < 0)
		return firstlineno;
	long addr = 0;
	int line = firstlineno;
	size_t i = 0;
	while (i < len) {
		uint8_t first = tab[i++];
		if (!(first & 0x80))
			return -1; /* every entry starts with its top bit set */
		int code = (first >> 3) & 15;
		int length = (first & 7) + 1;
		int delta = 0;
		bool has_line = true;
		unsigned skip;
		if (code == 15) {
			has_line = false;        /* no location */
		} else if (code == 14) {         /* long form */
			if (!read_svarint(tab, len, &i, &delta) || !read_varint(tab, len, &i, &skip) ||
			    !read_varint(tab, len, &i, &skip) || !read_varint(tab, len, &i, &skip))
				return -1;
		} else if (code == 13) {         /* no column information */
			if (!read_svarint(tab, len, &i, &delta))
				return -1;
		} else if (code >= 10) {         /* one-line forms: two column bytes */
			delta = code - 10;
			if (len - i < 2)
				return -1;
			i += 2;
		} else {                         /* short forms: one column byte */
			if (len - i < 1)
				return -1;
			i += 1;
		}
		line += delta;
		if (unit < addr + length)
			return has_line ? line : -1;
		addr += length;
	}
	return -1;
}
