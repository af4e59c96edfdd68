/* Shared by the per-reader fuzz targets (fuzz-elfcore, fuzz-minidump,
 * fuzz-zstd, fuzz-gzip, fuzz-xz, fuzz-lz4, fuzz-linetable, fuzz-objects):
 * each calls one reader directly on the input bytes, no file and no
 * libdwfl, so that a run takes microseconds.  Each target defines
 * fuzz_one(); built with -fsanitize=fuzzer it is libFuzzer's entry point,
 * built as a replay program (FUZZ_REPLAY) main() runs it over the files
 * named on the command line, which is how make check replays
 * testdata/fuzz-regressions/. */
#ifndef PYCORE_FUZZ_READER_H
#define PYCORE_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/coverage.h"

static int fuzz_one(const uint8_t *data, size_t size);

#ifdef FUZZ_REPLAY
int main(int argc, char **argv)
{
	int status = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			status = 2;
			continue;
		}
		fseek(f, 0, SEEK_END);
		long n = ftell(f);
		fseek(f, 0, SEEK_SET);
		/* exactly the input's size, so that a sanitizer build sees a
		 * read past its end as libFuzzer's buffer would */
		uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
		if (n < 0 || !buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			status = 2;
		} else {
			fuzz_one(buf, (size_t)n);
		}
		free(buf);
		fclose(f);
	}
	return status;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size);
}
#endif

#endif
