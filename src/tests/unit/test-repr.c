/* Unit test of the int and float formatters against the text repr() of a
 * real interpreter printed for the same values (repr-vectors.py). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/repr/repr.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-repr VECTORS\n");
		return 99;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 99;
	}
	static char line[1 << 20];
	static char out[1 << 16];
	int checks = 0, failures = 0, ints = 0, floats = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *save, *kind = strtok_r(line, " ", &save);
		if (!kind)
			continue;
		if (strcmp(kind, "int") == 0) {
			char *ds = strtok_r(NULL, " ", &save), *neg = strtok_r(NULL, " ", &save);
			char *want = strtok_r(NULL, " ", &save);
			static uint32_t digits[1 << 15];
			size_t n = 0;
			if (strcmp(ds, "-") != 0) {
				char *dsave;
				for (char *d = strtok_r(ds, ",", &dsave); d && n < 1 << 15; d = strtok_r(NULL, ",", &dsave))
					digits[n++] = (uint32_t)strtoul(d, NULL, 10);
			}
			const char *why = py_long_format(digits, n, neg[0] == '1', out, sizeof(out));
			bool ok = strcmp(want, "-") == 0 ? why != NULL : (why == NULL && strcmp(out, want) == 0);
			checks++;
			ints++;
			if (!ok && failures++ < 20)
				printf("FAIL int of %zu digits: got %.60s%s, want %.60s\n", n, why ? why : out,
				       why ? "" : "...", want);
		} else if (strcmp(kind, "float") == 0) {
			char *bits = strtok_r(NULL, " ", &save), *want = strtok_r(NULL, " ", &save);
			uint64_t u = strtoull(bits, NULL, 16);
			double v;
			memcpy(&v, &u, 8);
			py_float_repr(v, out, sizeof(out));
			checks++;
			floats++;
			if (strcmp(out, want) != 0 && failures++ < 20)
				printf("FAIL float %s: got %s, want %s\n", bits, out, want);
		}
	}
	fclose(f);
	printf("%d ints, %d floats: %d checks, %d failed\n", ints, floats, checks, failures);
	return failures ? 1 : 0;
}
