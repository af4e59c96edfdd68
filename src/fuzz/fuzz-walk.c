/* Fuzz target: a real core whose memory the fuzzer corrupts.  The core is
 * $PYCORE_FUZZ_CORE (an ELF core, plain); each input is a list of patches,
 * 8-byte offset into the file then up to 8 bytes to write, applied to a
 * pristine copy, so the walker meets corrupted thread states, frames, code
 * objects, strings and containers of a real process. */
#include "fuzz-common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int core_fd = -1;
static size_t core_len;
static char core_path[64];

/* The pristine core goes into one memfd, once; each input patches it in
 * place and puts the bytes back afterwards, so no run copies the core. */
static void load_core(void)
{
	const char *path = getenv("PYCORE_FUZZ_CORE");
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (!f) {
		fprintf(stderr, "fuzz-walk: set PYCORE_FUZZ_CORE to a plain ELF core of a Python process\n");
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	core_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *data = malloc(core_len);
	if (!data || fread(data, 1, core_len, f) != core_len || core_len < 64)
		exit(2);
	fclose(f);
	core_fd = fuzz_memfd(data, core_len, core_path, sizeof(core_path));
	free(data);
	if (core_fd < 0)
		exit(2);
}

#define MAX_PATCHES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (core_fd < 0)
		load_core();
	uint64_t where[MAX_PATCHES];
	uint8_t saved[MAX_PATCHES][8];
	size_t n = 0;
	for (size_t i = 0; i + 16 <= size && n < MAX_PATCHES; i += 16, n++) {
		uint64_t off;
		memcpy(&off, data + i, 8);
		off %= core_len - 8;
		where[n] = off;
		if (pread(core_fd, saved[n], 8, (off_t)off) != 8 ||
		    pwrite(core_fd, data + i + 8, 8, (off_t)off) != 8)
			abort();
	}
	fuzz_analyze(core_path);
	/* undo, last patch first (patches may overlap) */
	while (n-- > 0)
		if (pwrite(core_fd, saved[n], 8, (off_t)where[n]) != 8)
			abort();
	return 0;
}
