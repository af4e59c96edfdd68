/* Fuzz target: the line-table decoders of every version
 * (src/python/objects/linetable.c).  Input: one byte choosing the decoder (3.6-3.9
 * co_lnotab, 3.10 co_linetable, 3.11+ location table), four bytes of
 * co_firstlineno, then the table; every position from -1 to 255 and a few
 * far ones is looked up. */
#include <string.h>

#include "fuzz-reader.h"
#include "python/objects/linetable.h"

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	int first;
	memcpy(&first, data + 1, 4);
	const uint8_t *tab = data + 5;
	size_t len = size - 5;
	static const int far[] = { 1 << 16, 1 << 30, 0x7fffffff, -2, -0x7fffffff - 1 };
	for (int i = -1; i < 256 + (int)(sizeof(far) / sizeof(far[0])); i++) {
		int pos = i < 256 ? i : far[i - 256];
		int line;
		switch (data[0] % 3) {
		case 0: line = py_line_lnotab(tab, len, first, pos); break;
		case 1: line = py_line_linetable310(tab, len, first, pos); break;
		default: line = py_line_locations(tab, len, first, pos); break;
		}
		if (line < -1)
			abort();   /* the contract: a line >= 0, or -1 */
	}
	return 0;
}
