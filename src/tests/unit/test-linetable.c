/* Unit test of the line-table decoders (src/python/objects/linetable.c).
 *
 *   test-linetable [FILE...]     (no FILE, or "-": standard input)
 *
 * 1. Truth: every record that src/tests/unit/linetable-vectors.py printed from a
 *    real interpreter ("TAG FORMAT FIRSTLINENO TABLEHEX POS:LINE,... LABEL")
 *    is decoded at each of its positions and compared with the line the
 *    interpreter reported.  Counts are printed per TAG (interpreter
 *    version), with the table features seen, and the first 20 mismatches in
 *    full.
 * 2. Robustness (not truth): hand-made malformed tables must give -1, and
 *    every prefix, some mutations of each real table and many random tables
 *    are decoded from buffers of exactly their length, so that a build with
 *    -fsanitize=address sees any read past the end.
 * Exit status 0 if everything passed, 1 otherwise. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/objects/linetable.h"

#define MAX_SHOWN 20

static long failures, checks;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	failures++;
	if (failures <= MAX_SHOWN) {
		va_list ap;
		va_start(ap, fmt);
		printf("FAIL ");
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
	}
}

/* ------------------------------------------------------------------------
 * Decoders by name
 * ------------------------------------------------------------------------ */

enum format { F_LNOTAB, F_LINETABLE310, F_LOCATIONS, F_UNKNOWN };

static enum format format_of(const char *name)
{
	if (strcmp(name, "lnotab") == 0)
		return F_LNOTAB;
	if (strcmp(name, "linetable310") == 0)
		return F_LINETABLE310;
	if (strcmp(name, "locations") == 0)
		return F_LOCATIONS;
	return F_UNKNOWN;
}

static const char *format_name(enum format f)
{
	return f == F_LNOTAB ? "lnotab" : f == F_LINETABLE310 ? "linetable310" : "locations";
}

static int decode(enum format f, const uint8_t *t, size_t n, int first, int pos)
{
	switch (f) {
	case F_LNOTAB:
		return py_line_lnotab(t, n, first, pos);
	case F_LINETABLE310:
		return py_line_linetable310(t, n, first, pos);
	default:
		return py_line_locations(t, n, first, pos);
	}
}

/* A heap copy of exactly N bytes, so that ASan reports any read past it. */
static uint8_t *exact_copy(const uint8_t *src, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	if (!p) {
		perror("malloc");
		exit(99);
	}
	if (n)
		memcpy(p, src, n);
	return p;
}

/* ------------------------------------------------------------------------
 * Table features, counted per interpreter to show what the vectors cover.
 * ------------------------------------------------------------------------ */

enum feature {
	/* lnotab */
	LN_PAIRS, LN_OFFSET_255, LN_OFFSET_0, LN_LINE_127, LN_LINE_M128, LN_LINE_NEG,
	/* 3.10 */
	L10_PAIRS, L10_NO_LINE, L10_EMPTY, L10_LEN_254, L10_LINE_127, L10_LINE_NEG,
	/* 3.11+ */
	LOC_SHORT, LOC_ONELINE0, LOC_ONELINE1, LOC_ONELINE2, LOC_NOCOL, LOC_LONG,
	LOC_NOLOC, LOC_NEG, LOC_MULTIGROUP,
	N_FEATURES
};

static const char *const feature_names[N_FEATURES] = {
	"pairs", "offset+255", "offset+0", "line+127", "line-128", "line<0",
	"pairs", "no-line", "empty", "length-254", "line+127", "line<0",
	"short", "one-line+0", "one-line+1", "one-line+2", "no-column", "long",
	"no-location", "line<0", "multi-group-varint",
};

/* A second, independent walk over a table, only to count its features. */
static void count_features(enum format f, const uint8_t *t, size_t n, long *feat)
{
	if (f == F_LNOTAB) {
		for (size_t k = 0; k + 1 < n; k += 2) {
			int d = (int8_t)t[k + 1];
			feat[LN_PAIRS]++;
			feat[LN_OFFSET_255] += t[k] == 255;
			feat[LN_OFFSET_0] += t[k] == 0;
			feat[LN_LINE_127] += d == 127;
			feat[LN_LINE_M128] += d == -128;
			feat[LN_LINE_NEG] += d < 0;
		}
	} else if (f == F_LINETABLE310) {
		for (size_t k = 0; k + 1 < n; k += 2) {
			int d = (int8_t)t[k + 1];
			feat[L10_PAIRS]++;
			feat[L10_NO_LINE] += d == -128;
			feat[L10_EMPTY] += t[k] == 0;
			feat[L10_LEN_254] += t[k] == 254;
			feat[L10_LINE_127] += d == 127;
			feat[L10_LINE_NEG] += d < 0 && d != -128;
		}
	} else {
		for (size_t k = 0; k < n; k++) {
			if (!(t[k] & 0x80))
				continue;
			int kind = (t[k] >> 3) & 15;
			static const enum feature by_kind[16] = {
				LOC_SHORT, LOC_SHORT, LOC_SHORT, LOC_SHORT, LOC_SHORT,
				LOC_SHORT, LOC_SHORT, LOC_SHORT, LOC_SHORT, LOC_SHORT,
				LOC_ONELINE0, LOC_ONELINE1, LOC_ONELINE2, LOC_NOCOL, LOC_LONG, LOC_NOLOC,
			};
			feat[by_kind[kind]]++;
			if ((kind == 13 || kind == 14) && k + 1 < n && !(t[k + 1] & 0x80)) {
				feat[LOC_NEG] += t[k + 1] & 1;  /* odd svarint: negative */
				feat[LOC_MULTIGROUP] += (t[k + 1] & 0x40) != 0;
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Vector files
 * ------------------------------------------------------------------------ */

#define MAX_TAGS 64

struct tag {
	char name[48];
	enum format format;
	long codes, positions, mismatches;
	long feat[N_FEATURES];
};

static struct tag tags[MAX_TAGS];
static int ntags;

static struct tag *tag_of(const char *name, enum format f)
{
	for (int i = 0; i < ntags; i++)
		if (strcmp(tags[i].name, name) == 0)
			return &tags[i];
	if (ntags == MAX_TAGS)
		return &tags[MAX_TAGS - 1];
	struct tag *t = &tags[ntags++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->format = f;
	return t;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A decimal int at S; *END is set after it. */
static bool parse_int(const char *s, char **end, int *out)
{
	errno = 0;
	long v = strtol(s, end, 10);
	if (*end == s || errno || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

/* Hex to bytes in OUT (room for strlen(S)/2); -1 if S is not hex. */
static long unhex(const char *s, uint8_t *out)
{
	if (strcmp(s, "-") == 0)
		return 0;
	size_t n = strlen(s);
	if (n % 2)
		return -1;
	for (size_t k = 0; k < n; k += 2) {
		int hi = hexval(s[k]), lo = hexval(s[k + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[k / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

/* Tiny deterministic generator (xorshift64), for mutations and random
 * tables: the same run every time. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void robust_result(const char *what, enum format f, int got)
{
	checks++;
	if (got < -1)
		fail("%s (%s): decoder returned %d", what, format_name(f), got);
}

/* Decode every prefix (or 256 spread ones) of a real table and some
 * one-byte mutations of it, from exact-size copies.  A prefix of a 3.10 or
 * 3.11+ table may lose positions but never changes the line of one it still
 * covers. */
static void stress_table(enum format f, const uint8_t *t, size_t n, int first, int last_pos)
{
	int probes[6] = { -1, 0, last_pos / 3, last_pos / 2, last_pos,
			  last_pos < INT_MAX ? last_pos + 1 : last_pos };
	int want[6];
	for (int i = 0; i < 6; i++)
		want[i] = decode(f, t, n, first, probes[i]);
	size_t cuts = n < 256 ? n : 256;
	for (size_t c = 0; c < cuts; c++) {
		size_t cut = n < 256 ? c : c * n / 256;
		uint8_t *p = exact_copy(t, cut);
		for (int i = 0; i < 6; i++) {
			int got = decode(f, p, cut, first, probes[i]);
			robust_result("prefix", f, got);
			if (f != F_LNOTAB && got != -1 && got != want[i])
				fail("prefix of %zu bytes of a %s table: position %d gives %d, the whole table %d",
				     cut, format_name(f), probes[i], got, want[i]);
		}
		free(p);
	}
	for (int m = 0; m < 16 && n; m++) {
		uint8_t *p = exact_copy(t, n);
		p[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
		for (int i = 0; i < 6; i++)
			robust_result("mutation", f, decode(f, p, n, first, probes[i]));
		free(p);
	}
}

static void check_record(char *line, const char *file, long lineno)
{
	char *save = NULL;
	char *tagname = strtok_r(line, " \n", &save);
	char *fmtname = strtok_r(NULL, " \n", &save);
	char *firststr = strtok_r(NULL, " \n", &save);
	char *hex = strtok_r(NULL, " \n", &save);
	char *pairs = strtok_r(NULL, " \n", &save);
	char *label = strtok_r(NULL, " \n", &save);
	enum format f = fmtname ? format_of(fmtname) : F_UNKNOWN;
	if (!pairs || f == F_UNKNOWN) {
		fail("%s:%ld: not a vector record", file, lineno);
		return;
	}
	if (!label)
		label = "?";
	int first;
	char *rest;
	if (!parse_int(firststr, &rest, &first) || *rest) {
		fail("%s:%ld: bad first line %s", file, lineno, firststr);
		return;
	}
	struct tag *tg = tag_of(tagname, f);
	uint8_t *buf = malloc(strlen(hex) / 2 + 1);
	if (!buf) {
		perror("malloc");
		exit(99);
	}
	long n = unhex(hex, buf);
	if (n < 0) {
		fail("%s:%ld: bad table hex", file, lineno);
		free(buf);
		return;
	}
	uint8_t *t = exact_copy(buf, (size_t)n);
	free(buf);
	tg->codes++;
	count_features(f, t, (size_t)n, tg->feat);

	int last_pos = 0;
	char *psave = NULL;
	for (char *p = strtok_r(pairs, ",", &psave); p; p = strtok_r(NULL, ",", &psave)) {
		if (strcmp(p, "-") == 0)
			continue;
		int pos, want, more[3];
		char *colon;
		bool whole = false;   /* LINE:END_LINE:COLUMN:END_COLUMN (3.11+) */
		if (!parse_int(p, &colon, &pos) || *colon != ':' ||
		    !parse_int(colon + 1, &colon, &want)) {
			fail("%s:%ld: bad position %s", file, lineno, p);
			continue;
		}
		if (*colon == ':' && f == F_LOCATIONS) {
			whole = true;
			for (int k = 0; k < 3 && whole; k++)
				whole = *colon == ':' && parse_int(colon + 1, &colon, &more[k]);
		}
		if (*colon || (f == F_LOCATIONS && strchr(p, ':') != strrchr(p, ':') && !whole)) {
			fail("%s:%ld: bad position %s", file, lineno, p);
			continue;
		}
		if (whole) {
			struct py_positions pp;
			int rc = py_positions_locations(t, (size_t)n, first, pos, &pp);
			checks++;
			tg->positions++;
			if ((rc == 0 ? pp.line : -1) != want || (rc == 0 && (pp.end_line != more[0] ||
			    pp.column != more[1] || pp.end_column != more[2]))) {
				tg->mismatches++;
				failures++;
				if (failures <= MAX_SHOWN)
					printf("FAIL %s:%ld: %s (%s) table %.160s: unit %d: positions %d %d %d %d, "
					       "want %d %d %d %d\n", file, lineno, tagname, label, hex, pos, pp.line,
					       pp.end_line, pp.column, pp.end_column, want, more[0], more[1], more[2]);
			}
		}
		int got = decode(f, t, (size_t)n, first, pos);
		checks++;
		tg->positions++;
		if (pos > last_pos)
			last_pos = pos;
		if (got != want) {
			tg->mismatches++;
			failures++;
			if (failures <= MAX_SHOWN)
				printf("FAIL %s:%ld: %s %s (%s) firstlineno %d table %.160s%s: position %d: got %d, want %d\n",
				       file, lineno, tagname, fmtname, label, first, n ? hex : "(empty)",
				       strlen(hex) > 160 ? "..." : "", pos, got, want);
		}
	}
	stress_table(f, t, (size_t)n, first, last_pos);
	free(t);
}

static void check_stream(FILE *in, const char *file)
{
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	while (getline(&line, &cap, in) != -1) {
		lineno++;
		if (line[0] == '#') {           /* the generator's own report */
			printf("%s: %s", file, line);
			continue;
		}
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		check_record(line, file, lineno);
	}
	free(line);
}

/* ------------------------------------------------------------------------
 * Hand-made tables
 * ------------------------------------------------------------------------ */

static void expect(const char *what, int got, int want)
{
	checks++;
	if (got != want)
		fail("%s: got %d, want %d", what, got, want);
}

/* Decode BYTES from an exact-size heap copy. */
static int dec(enum format f, const uint8_t *bytes, size_t n, int first, int pos)
{
	uint8_t *p = exact_copy(bytes, n);
	int r = decode(f, p, n, first, pos);
	free(p);
	return r;
}

#define LOC_HEAD(kind, units) ((uint8_t)(0x80 | (kind) << 3 | ((units) - 1)))

static void hand_made_lnotab(void)
{
	/* rows (offset -> line): 0->1, 6->2, 50->7, 350->207, 361->208, the
	 * example of lnotab_notes.txt, with its 300-byte and 200-line jump
	 * split as the notes require */
	static const uint8_t ex[] = { 6, 1, 44, 5, 255, 0, 45, 127, 0, 73, 11, 1 };
	static const int at[][2] = {
		{ 0, 1 }, { 5, 1 }, { 6, 2 }, { 49, 2 }, { 50, 7 }, { 349, 7 },
		{ 350, 207 }, { 360, 207 }, { 361, 208 }, { 100000, 208 }, { -1, 1 },
	};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		expect("lnotab example", dec(F_LNOTAB, ex, sizeof(ex), 1, at[i][0]), at[i][1]);
	/* a backward jump of 200 lines, split (0,-128) (0,-72) */
	static const uint8_t back[] = { 4, 0, 0, 0x80, 2, (uint8_t)-72 };
	expect("lnotab -200: before", dec(F_LNOTAB, back, sizeof(back), 300, 3), 300);
	expect("lnotab -200: at the first pair", dec(F_LNOTAB, back, sizeof(back), 300, 4), 172);
	expect("lnotab -200: after", dec(F_LNOTAB, back, sizeof(back), 300, 6), 100);
	/* an empty lnotab is valid: the code is all on its first line */
	expect("lnotab empty", py_line_lnotab(NULL, 0, 10, 0), 10);
	expect("lnotab empty, far offset", dec(F_LNOTAB, ex, 0, 10, 5000), 10);
	/* malformed */
	expect("lnotab odd length", dec(F_LNOTAB, ex, 3, 1, 0), -1);
	expect("lnotab odd length, far offset", dec(F_LNOTAB, ex, 11, 1, 5000), -1);
	expect("lnotab negative first line", dec(F_LNOTAB, ex, 0, -5, 0), -1);
	static const uint8_t up[] = { 0, 1 };
	expect("lnotab line past INT_MAX", dec(F_LNOTAB, up, 2, INT_MAX, 0), -1);
	expect("lnotab line at INT_MAX", dec(F_LNOTAB, up, 2, INT_MAX - 1, 0), INT_MAX);
	static const uint8_t down[] = { 0, 0x80 };
	expect("lnotab line below 0", dec(F_LNOTAB, down, 2, 5, 0), -1);
}

static void hand_made_310(void)
{
	/* the "final form" example of the 3.10 lnotab_notes.txt: ranges
	 * [0,6) 1, [6,50) 2, [50,350) 7, [350,360) none, [360,376) 8, an empty
	 * range moving the line to 135, [376,380) 208 */
	static const uint8_t ex[] = { 6, 1, 44, 1, 254, 5, 46, 0, 10, 0x80, 16, 1, 0, 127, 4, 73 };
	static const int at[][2] = {
		{ 0, 1 }, { 5, 1 }, { 6, 2 }, { 49, 2 }, { 50, 7 }, { 303, 7 }, { 304, 7 },
		{ 349, 7 }, { 350, -1 }, { 359, -1 }, { 360, 8 }, { 375, 8 }, { 376, 208 },
		{ 379, 208 }, { 380, -1 }, { 100000, -1 }, { -1, 0 }, { -2, 0 },
	};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		expect("3.10 example", dec(F_LINETABLE310, ex, sizeof(ex), 0, at[i][0]), at[i][1]);
	expect("3.10 empty", py_line_linetable310(NULL, 0, 10, 0), -1);
	expect("3.10 empty, before start", py_line_linetable310(NULL, 0, 10, -2), 10);
	expect("3.10 odd length", dec(F_LINETABLE310, ex, 5, 0, 0), -1);
	/* 255 as a length ends the table */
	static const uint8_t endmark[] = { 4, 1, 255, 0, 4, 1 };
	expect("3.10 before the end mark", dec(F_LINETABLE310, endmark, 6, 1, 3), 2);
	expect("3.10 after the end mark", dec(F_LINETABLE310, endmark, 6, 1, 4), -1);
	/* a no-line range leaves the running line alone */
	static const uint8_t noline[] = { 2, 3, 2, 0x80, 2, 0 };
	expect("3.10 no line", dec(F_LINETABLE310, noline, 6, 1, 2), -1);
	expect("3.10 after no line", dec(F_LINETABLE310, noline, 6, 1, 4), 4);
	static const uint8_t big[] = { 2, 1 };
	expect("3.10 line past INT_MAX", dec(F_LINETABLE310, big, 2, INT_MAX, 0), -1);
}

static void hand_made_locations(void)
{
	/* varint examples of locations.md: 63 is 3f, 200 is 48 03; as the
	 * svarints of no-column entries they are -31 and +100 */
	static const uint8_t varints[] = { LOC_HEAD(13, 2), 0x3f, LOC_HEAD(13, 1), 0x48, 0x03 };
	expect("svarint 63", dec(F_LOCATIONS, varints, sizeof(varints), 100, 1), 69);
	expect("svarint 200", dec(F_LOCATIONS, varints, sizeof(varints), 100, 2), 169);
	expect("past the end", dec(F_LOCATIONS, varints, sizeof(varints), 100, 3), -1);
	expect("before the start", dec(F_LOCATIONS, varints, sizeof(varints), 100, -1), 100);

	/* one entry of each kind */
	static const uint8_t kinds[] = {
		LOC_HEAD(3, 2), 0x12,                  /* short: units 0-1, line 10 */
		LOC_HEAD(11, 1), 4, 9,                 /* one-line +1: unit 2, line 11 */
		LOC_HEAD(15, 3),                       /* no location: units 3-5 */
		LOC_HEAD(12, 1), 0, 1,                 /* one-line +2: unit 6, line 13 */
		LOC_HEAD(14, 8), 0x05, 0x42, 0x01, 0x41, 0x02, 0x41, 0x03,
		/* long: units 7-14, line 13-2 = 11, end line +66, columns */
		LOC_HEAD(10, 1), 0, 0,                 /* one-line +0: unit 15, line 11 */
	};
	static const int at[][2] = {
		{ 0, 10 }, { 1, 10 }, { 2, 11 }, { 3, -1 }, { 5, -1 }, { 6, 13 },
		{ 7, 11 }, { 14, 11 }, { 15, 11 }, { 16, -1 },
	};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		expect("each kind", dec(F_LOCATIONS, kinds, sizeof(kinds), 10, at[i][0]), at[i][1]);
	/* every cut of that table: positions it still covers keep their line,
	 * the others are -1 */
	for (size_t cut = 0; cut < sizeof(kinds); cut++)
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			int got = dec(F_LOCATIONS, kinds, cut, 10, at[i][0]);
			checks++;
			if (got != -1 && got != at[i][1])
				fail("cut at %zu: unit %d gives %d", cut, at[i][0], got);
		}
	/* truncated varints: a cut anywhere inside the long entry (bytes 9-16)
	 * leaves unit 7 without a line */
	for (size_t cut = 10; cut < 17; cut++)
		expect("long form cut", dec(F_LOCATIONS, kinds, cut, 10, 7), -1);

	static const uint8_t cont_end[] = { LOC_HEAD(13, 1), 0x41 };
	expect("svarint cut after a continued group", dec(F_LOCATIONS, cont_end, 2, 10, 0), -1);
	static const uint8_t cont_marker[] = { LOC_HEAD(13, 1), 0x41, LOC_HEAD(15, 1) };
	expect("svarint running into the next entry", dec(F_LOCATIONS, cont_marker, 3, 10, 0), -1);
	static const uint8_t overlong[] = { LOC_HEAD(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x00 };
	expect("varint of 7 groups", dec(F_LOCATIONS, overlong, sizeof(overlong), 10, 0), -1);
	static const uint8_t max6[] = { LOC_HEAD(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x00 };
	expect("varint of 6 groups (zero)", dec(F_LOCATIONS, max6, sizeof(max6), 10, 0), 10);
	static const uint8_t huge[] = { LOC_HEAD(13, 1), 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f };
	expect("svarint past INT_MAX", dec(F_LOCATIONS, huge, sizeof(huge), 10, 0), -1);
	static const uint8_t neg[] = { LOC_HEAD(13, 1), 0x17 };
	expect("line below 0", dec(F_LOCATIONS, neg, 2, 10, 0), -1);
	expect("line 0", dec(F_LOCATIONS, neg, 2, 11, 0), 0);

	static const uint8_t nomarker[] = { 0x05, 0x00 };
	expect("entry without its marker bit", dec(F_LOCATIONS, nomarker, 2, 10, 0), -1);
	static const uint8_t short_cut[] = { LOC_HEAD(0, 1) };
	expect("short form cut", dec(F_LOCATIONS, short_cut, 1, 10, 0), -1);
	static const uint8_t oneline_cut[] = { LOC_HEAD(11, 1), 3 };
	expect("one-line form cut", dec(F_LOCATIONS, oneline_cut, 2, 10, 0), -1);
	static const uint8_t col_marker[] = { LOC_HEAD(11, 1), 3, 0x85 };
	expect("column byte with the marker bit", dec(F_LOCATIONS, col_marker, 3, 10, 0), -1);
	static const uint8_t extra[] = { LOC_HEAD(0, 1), 0x01, 0x02, LOC_HEAD(0, 1), 0x01 };
	expect("stray byte after an entry", dec(F_LOCATIONS, extra, sizeof(extra), 10, 0), -1);
	expect("empty", py_line_locations(NULL, 0, 10, 0), -1);
	expect("empty, before the start", py_line_locations(NULL, 0, 10, -1), 10);
	expect("empty, negative first line", py_line_locations(NULL, 0, -3, -1), -1);

	/* many big deltas: the running line leaves any plausible range */
	size_t n = 7 * 4096;
	uint8_t *many = malloc(n);
	for (size_t k = 0; k < n; k += 7) {
		many[k] = LOC_HEAD(13, 1);
		memcpy(many + k + 1, "\x7e\x7f\x7f\x7f\x7f\x3f", 6);
	}
	expect("huge running line", dec(F_LOCATIONS, many, n, 10, 4095), -1);
	free(many);
	/* the most units one table byte can span: 8 per entry */
	static const uint8_t wide[] = { LOC_HEAD(13, 8), 0x02, LOC_HEAD(13, 8), 0x00 };
	expect("8 units, last", dec(F_LOCATIONS, wide, 4, 1, 7), 2);
	expect("8 units, next", dec(F_LOCATIONS, wide, 4, 1, 8), 2);
	expect("8 units, past", dec(F_LOCATIONS, wide, 4, 1, 16), -1);
	expect("unit INT_MAX", dec(F_LOCATIONS, wide, 4, 1, INT_MAX), -1);
}

/* Random tables of every size up to 48 bytes: any answer >= -1 is fine,
 * ASan judges the reads.  Half the tables have their marker bits placed
 * like a real location table, so the decoders get past the first entry. */
static void random_tables(void)
{
	for (int round = 0; round < 60000; round++) {
		size_t n = rng() % 49;
		uint8_t buf[48];
		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rng();
		if (round % 2)
			for (size_t k = 0; k < n; k++)
				buf[k] = (uint8_t)((buf[k] & 0x7f) | (rng() % 3 == 0 ? 0x80 : 0));
		uint8_t *p = exact_copy(buf, n);
		int first = (int)(rng() % 5000) - 10;
		for (int q = 0; q < 4; q++) {
			int pos = (int)(rng() % 700) - 3;
			for (enum format f = F_LNOTAB; f <= F_LOCATIONS; f++)
				robust_result("random table", f, decode(f, p, n, first, pos));
		}
		for (enum format f = F_LNOTAB; f <= F_LOCATIONS; f++)
			robust_result("random table", f, decode(f, p, n, first, INT_MAX));
		free(p);
	}
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	hand_made_lnotab();
	hand_made_310();
	hand_made_locations();
	random_tables();
	long robust_checks = checks, robust_failures = failures;
	printf("hand-made and random tables: %ld checks, %ld failed\n", robust_checks, robust_failures);

	if (argc < 2) {
		check_stream(stdin, "<stdin>");
	} else {
		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "-") == 0) {
				check_stream(stdin, "<stdin>");
				continue;
			}
			FILE *f = fopen(argv[i], "r");
			if (!f) {
				perror(argv[i]);
				return 1;
			}
			check_stream(f, argv[i]);
			fclose(f);
		}
	}

	for (int i = 0; i < ntags; i++) {
		struct tag *t = &tags[i];
		printf("%s: %ld code objects, %ld positions, %ld mismatches (%s)\n", t->name, t->codes,
		       t->positions, t->mismatches, format_name(t->format));
		int lo = t->format == F_LNOTAB ? LN_PAIRS : t->format == F_LINETABLE310 ? L10_PAIRS : LOC_SHORT;
		int hi = t->format == F_LNOTAB ? L10_PAIRS : t->format == F_LINETABLE310 ? LOC_SHORT : N_FEATURES;
		printf("    table features:");
		for (int k = lo; k < hi; k++)
			printf(" %s %ld", feature_names[k], t->feat[k]);
		printf("\n");
	}
	if (failures > MAX_SHOWN)
		printf("(only the first %d failures are shown)\n", MAX_SHOWN);
	printf("%ld checks, %ld failed\n", checks, failures);
	return failures ? 1 : 0;
}
