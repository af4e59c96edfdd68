/* Fuzz target: ELF core notes and program headers (src/dump/elfcore.c),
 * from a dump in memory. */
#include "fuzz-dumpmem.h"

static int fuzz_one(const uint8_t *data, size_t size)
{
	fuzz_dump_magic(data, size, "\177ELF");
	return 0;
}
