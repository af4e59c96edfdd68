/* Fuzz target: the minidump directory and its streams (src/dump/minidump.c:
 * lists, contexts, Breakpad's Linux streams, Crashpad's info stream and its
 * annotations), from a dump in memory.  Seeds: testdata/fuzz-corpus/minidump/
 * holds Breakpad dumps cut by scripts/fuzz-minidump-seed. */
#include "fuzz-dumpmem.h"

static int fuzz_one(const uint8_t *data, size_t size)
{
	fuzz_dump_magic(data, size, "MDMP");
	return 0;
}
