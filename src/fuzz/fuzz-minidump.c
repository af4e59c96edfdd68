/* Fuzz target: the minidump directory and its streams (src/dump/minidump.c),
 * from a dump in memory. */
#include "fuzz-dumpmem.h"

static int fuzz_one(const uint8_t *data, size_t size)
{
	fuzz_dump_magic(data, size, "MDMP");
	return 0;
}
