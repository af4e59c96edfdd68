/* Fuzz target: a real core whose memory the fuzzer corrupts.  The core is
 * $PYCORE_FUZZ_CORE (an ELF core, plain); each input is a list of patches,
 * 8-byte offset into the file then up to 8 bytes to write, applied to a
 * pristine copy, so the walker meets corrupted thread states, frames, code
 * objects, strings and containers of a real process. */
#include "fuzz-common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *pristine;
static size_t pristine_len;

static void load_core(void)
{
	const char *path = getenv("PYCORE_FUZZ_CORE");
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (!f) {
		fprintf(stderr, "fuzz-walk: set PYCORE_FUZZ_CORE to a plain ELF core of a Python process\n");
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	pristine_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	pristine = malloc(pristine_len);
	if (!pristine || fread(pristine, 1, pristine_len, f) != pristine_len)
		exit(2);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pristine)
		load_core();
	uint8_t *copy = malloc(pristine_len);
	if (!copy)
		return 0;
	memcpy(copy, pristine, pristine_len);
	for (size_t i = 0; i + 16 <= size; i += 16) {
		uint64_t off;
		memcpy(&off, data + i, 8);
		off %= pristine_len - 8;
		memcpy(copy + off, data + i + 8, 8);
	}
	char path[64];
	int fd = fuzz_memfd(copy, pristine_len, path, sizeof(path));
	free(copy);
	if (fd < 0)
		return 0;
	fuzz_analyze(path);
	close(fd);
	return 0;
}
