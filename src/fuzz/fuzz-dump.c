/* Fuzz target: any bytes as a dump file.  Exercises the format detection,
 * the ELF core note and segment parser, the minidump parser and the zstd
 * front end, and whatever of the walk a mutated dump still reaches. */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	fuzz_analyze(path);
	close(fd);
	return 0;
}
