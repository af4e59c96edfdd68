/* Unit test of src/report/json_text.c: its compact text of a jansson tree
 * against jansson's own json_dumps(JSON_COMPACT) of the same tree, byte
 * for byte (or both failing), over every byte in strings, UTF-8 sequences
 * valid and not (made with json_stringn_nocheck, as json_dumps must then
 * fail), keys that need escapes, integers at their limits, reals of every
 * magnitude, empty and nested containers, then many random trees of
 * random bytes and random doubles. */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_text.h"

static int failures, checks;

static void check(json_t *j, const char *what)
{
	size_t len = 0;
	char *mine = json_text_compact(j, &len);
	char *theirs = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	checks++;
	if (!mine != !theirs || (mine && (strlen(theirs) != len || memcmp(mine, theirs, len) != 0))) {
		failures++;
		printf("FAIL %s:\n  json_text: %s\n  jansson:   %s\n", what, mine ? mine : "(failed)",
		       theirs ? theirs : "(failed)");
	}
	free(mine);      /* (jansson's allocator: malloc here) */
	free(theirs);
	json_decref(j);
}

static json_t *bytes(const void *s, size_t n)
{
	json_t *j = json_stringn_nocheck(s, n);
	if (!j) {
		printf("json_stringn_nocheck failed\n");
		exit(2);
	}
	return j;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random string: mostly ASCII, some control bytes, some UTF-8 (valid
 * or broken), now and then any byte. */
static json_t *random_string(void)
{
	unsigned char s[64];
	size_t n = next() % sizeof(s);
	static const char *pieces[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xed\xa0\x80",
					"\xc0\xaf", "\xf4\x90\x80\x80", "\xe2\x82", "\x80", "\xff" };
	size_t o = 0;
	while (o < n) {
		uint64_t r = next();
		if (r % 10 < 6) {
			s[o++] = (unsigned char)(0x20 + r % 95);
		} else if (r % 10 < 7) {
			s[o++] = (unsigned char)(r % 0x20);
		} else if (r % 10 < 9) {
			const char *p = pieces[(r >> 8) % (sizeof(pieces) / sizeof(pieces[0]))];
			size_t l = strlen(p);
			if (o + l > n)
				break;
			memcpy(s + o, p, l);
			o += l;
		} else {
			s[o++] = (unsigned char)(r >> 8);
		}
	}
	return bytes(s, o);
}

static json_t *random_value(int depth)
{
	uint64_t r = next();
	switch (depth > 4 ? r % 6 : r % 8) {
	case 0: return json_null();
	case 1: return r & 256 ? json_true() : json_false();
	case 2: return json_integer((json_int_t)next());
	case 3: {
		uint64_t bits = next();
		double d;
		memcpy(&d, &bits, sizeof(d));
		return json_real(isfinite(d) ? d : (double)(int64_t)bits / 1e9);
	}
	case 4:
	case 5: return random_string();
	case 6: {
		json_t *a = json_array();
		for (uint64_t n = next() % 5; n; n--)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (uint64_t n = next() % 5; n; n--) {
			char key[16];
			snprintf(key, sizeof(key), "k%u\n\"%c", (unsigned)(next() % 100), (char)(0x20 + next() % 95));
			json_object_set_new_nocheck(o, key, random_value(depth + 1));
		}
		return o;
	}
	}
}

int main(void)
{
	/* every single byte, alone and inside text */
	for (int c = 0; c < 256; c++) {
		unsigned char s[8] = { 'a', (unsigned char)c, 'b' };
		char what[32];
		snprintf(what, sizeof(what), "byte 0x%02x", c);
		check(bytes(s + 1, 1), what);
		check(bytes(s, 3), what);
	}
	/* UTF-8: valid at each length, and each way to be invalid */
	static const char *utf8[] = {
		"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
		"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xed\xa0\x80", "\xed\xbf\xbf",
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xc2", "\xe2\x82", "\xf0\x9f\x98", "\xc2\x41", "\xe2\x28\xa1",
		"x\xef\xbf\xbf" "41y", "\"\\/\b\f\n\r\t\x01\x1f\x7f",
	};
	for (size_t i = 0; i < sizeof(utf8) / sizeof(utf8[0]); i++)
		check(bytes(utf8[i], strlen(utf8[i])), utf8[i]);
	check(bytes("a\0b", 3), "an embedded NUL");
	/* numbers */
	static const json_int_t ints[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 1000000007 };
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		check(json_integer(ints[i]), "integer");
	static const double reals[] = { 0.0, -0.0, 1.0, -1.5, 0.1, 1.0 / 3, 100.0, 1e15, 1e16, 1e17, 1e20, 1e21,
					1e100, 1e300, DBL_MAX, -DBL_MAX, 1e-5, 1e-7, 1.5e-10, 1e-100, DBL_MIN,
					4.9406564584124654e-324, 123456789012345678.0, 12.5 };
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		check(json_real(reals[i]), "real");
	/* containers and keys */
	check(json_object(), "{}");
	check(json_array(), "[]");
	json_t *o = json_object();
	json_object_set_new(o, "b", json_array());
	json_object_set_new(o, "a", json_pack("[i, s, n, b, {s:o}]", 1, "x", 0, "in", json_object()));
	json_object_set_new(o, "quote\" back\\ nl\n tab\t \x01", json_true());
	json_object_set_new(o, "b", json_integer(2));   /* replaced: keeps its place */
	check(o, "object");
	for (int i = 0; i < 20000; i++)
		check(random_value(0), "random");
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
