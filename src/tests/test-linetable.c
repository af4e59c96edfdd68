/* Unit test of the line-table decoders: every vector that
 * linetable-vectors.py printed from a real interpreter, plus malformed
 * tables that must give -1 without reading past their end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/linetable.h"

static int failures, checks;

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	if (strcmp(s, "-") == 0)
		return 0;
	for (; s[0] && s[1] && n < max; s += 2) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}

static int decode(const char *fmt, const uint8_t *t, size_t n, int first, int pos)
{
	if (strcmp(fmt, "lnotab") == 0)
		return py_line_lnotab(t, n, first, pos);
	if (strcmp(fmt, "linetable310") == 0)
		return py_line_linetable310(t, n, first, pos);
	return py_line_locations(t, n, first, pos);
}

static void check_file(FILE *f, const char *name)
{
	static char line[1 << 22];
	static uint8_t table[1 << 20];
	int vectors = 0, positions = 0;
	while (fgets(line, sizeof(line), f)) {
		char fmt[32], *hex, *pairs;
		int first;
		char *save;
		char *tok = strtok_r(line, " \n", &save);
		if (!tok)
			continue;
		snprintf(fmt, sizeof(fmt), "%s", tok);
		first = atoi(strtok_r(NULL, " \n", &save));
		hex = strtok_r(NULL, " \n", &save);
		pairs = strtok_r(NULL, " \n", &save);
		if (!hex || !pairs)
			continue;
		size_t n = unhex(hex, table, sizeof(table));
		/* decode from a copy of exactly n bytes so ASan sees any overread */
		uint8_t *t = malloc(n ? n : 1);
		memcpy(t, table, n);
		vectors++;
		char *psave;
		for (char *p = strtok_r(pairs, ",", &psave); p && strcmp(p, "-") != 0;
		     p = strtok_r(NULL, ",", &psave)) {
			int pos, want;
			if (sscanf(p, "%d:%d", &pos, &want) != 2)
				continue;
			int got = decode(fmt, t, n, first, pos);
			checks++;
			positions++;
			if (got != want) {
				if (failures < 20)
					printf("FAIL %s: %s firstlineno %d table %s: position %d: got %d, want %d\n",
					       name, fmt, first, hex, pos, got, want);
				failures++;
			}
		}
		free(t);
	}
	printf("%s: %d code objects, %d positions\n", name, vectors, positions);
}

static void expect(const char *what, int got, int want)
{
	checks++;
	if (got != want) {
		failures++;
		printf("FAIL %s: got %d, want %d\n", what, got, want);
	}
}

static void malformed(void)
{
	uint8_t *t = malloc(4);
	/* a long-form entry whose varints run off the end */
	t[0] = 0x80 | (14 << 3);
	t[1] = 0x42; /* continuation bit set, then nothing */
	expect("truncated varint", py_line_locations(t, 2, 10, 0), -1);
	/* an entry byte without its marker bit */
	t[0] = 0x05;
	expect("missing entry marker", py_line_locations(t, 1, 10, 0), -1);
	/* a short form missing its column byte */
	t[0] = 0x80;
	expect("short form cut", py_line_locations(t, 1, 10, 0), -1);
	/* empty tables */
	expect("empty locations", py_line_locations(t, 0, 10, 3), -1);
	expect("empty 3.10 table", py_line_linetable310(t, 0, 10, 3), -1);
	expect("empty lnotab", py_line_lnotab(t, 0, 10, 3), 10);
	/* past the end of a valid table */
	t[0] = 0x80 | (13 << 3) | 0; /* no-column form, 1 unit */
	t[1] = 2;                    /* line delta +1 */
	expect("one entry", py_line_locations(t, 2, 10, 0), 11);
	expect("past the end", py_line_locations(t, 2, 10, 1), -1);
	/* odd-length tables: the last half pair is ignored */
	t[0] = 4;
	t[1] = 1;
	t[2] = 4;
	expect("odd lnotab", py_line_lnotab(t, 3, 10, 6), 11);
	expect("odd 3.10 table", py_line_linetable310(t, 3, 10, 2), 11);
	free(t);
}

int main(int argc, char **argv)
{
	malformed();
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");
		if (!f) {
			perror(argv[i]);
			return 99;
		}
		check_file(f, argv[i]);
		fclose(f);
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
