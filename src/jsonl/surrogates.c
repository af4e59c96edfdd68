/* Lone surrogates in JSON lines, in and out (surrogates.h). */
#include "jsonl/surrogates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The code unit of the escape "\uXXXX" at P, or -1. */
static long unit_at(const char *p)
{
	if (p[0] != '\\' || p[1] != 'u')
		return -1;
	long v = 0;
	for (int i = 2; i < 6; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* LINE with every lone "\udcNN" (NN 80-ff) as "\udb80\udcNN"; malloc'd. */
char *jsonl_pair_surrogates(const char *line, size_t n)
{
	char *out = malloc(n * 2 + 1), *o = out;
	if (!out)
		return NULL;
	bool after_high = false;
	for (size_t i = 0; i < n;) {
		if (line[i] != '\\' || i + 1 >= n) {
			*o++ = line[i++];
			after_high = false;
			continue;
		}
		long u = unit_at(line + i);
		if (u >= 0xdc80 && u <= 0xdcff && !after_high) {
			memcpy(o, "\\udb80", 6);
			o += 6;
		}
		after_high = u >= 0xd800 && u <= 0xdbff;
		/* an escape is copied whole, so that "\\udc80" stays text */
		size_t len = u >= 0 ? 6 : 2;
		memcpy(o, line + i, len);
		o += len;
		i += len;
	}
	*o = 0;
	return out;
}

/* U+F0080..U+F00FF in UTF-8: F3 B0 82 80-BF (80-BF), F3 B0 83 80-BF (C0-FF). */
static int marked_byte(const unsigned char *p)
{
	if (p[0] != 0xf3 || p[1] != 0xb0 || (p[2] != 0x82 && p[2] != 0x83) || (p[3] & 0xc0) != 0x80)
		return -1;
	return (p[2] == 0x82 ? 0x80 : 0xc0) + (p[3] & 0x3f);
}

/* S with each such character as its byte (malloc'd), or as "\udcNN"
 * (JSON_TEXT). */
char *jsonl_unmark(const char *s, bool json_text)
{
	size_t n = strlen(s);
	char *out = malloc(n * 2 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		int b = i + 4 <= n ? marked_byte((const unsigned char *)s + i) : -1;
		if (b < 0) {
			*o++ = s[i++];
		} else {
			o += json_text ? sprintf(o, "\\udc%02x", b) : sprintf(o, "%c", (char)b);
			i += 4;
		}
	}
	*o = 0;
	return out;
}
