/* The tokens of JSON as jansson 2.14 reads them, for the scanner
 * (jsonl_scan.c) and its skipper (jsonl_skip.c): inside the scanner only. */
#ifndef PYCORE_JSONL_LEX_H
#define PYCORE_JSONL_LEX_H

#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bytes a string holds as they are: printable ASCII but '"' (0x22) and
 * '\\' (0x5c).  Constant: group reads lines in two threads. */
static const bool plain[256] = { [0x20 ... 0x21] = true, [0x23 ... 0x5b] = true, [0x5d ... 0x7f] = true };

static inline bool is_digit(unsigned c)
{
	return c - '0' < 10;
}

static inline bool is_alpha(unsigned c)
{
	return (c | 0x20) - 'a' < 26;
}

/* The four hex digits at P, or -1. */
static inline long hex4(const unsigned char *p, const unsigned char *end)
{
	if (end - p < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i];
		int h = is_digit(c) ? (int)(c - '0') : (c | 0x20) - 'a' < 6 ? (int)((c | 0x20) - 'a' + 10) : -1;
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* The length of the UTF-8 character at P as jansson's utf8_check_full
 * takes it, 0 when it refuses it. */
static inline size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	uint32_t v;
	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0)
		n = 2, v = c & 0x1f;
	else if (c < 0xf0)
		n = 3, v = c & 0x0f;
	else if (c < 0xf5)
		n = 4, v = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000))
		return 0;
	return n;
}

/* The number at *AT (its text, as RFC 8259 writes it: else -1), *AT then
 * past it; into *OUT when OUT (as jansson makes it).  -1 also where jansson
 * might decide otherwise (an integer past 18 digits, a real in a locale
 * whose decimal point is not '.'). */
static inline int jsonl_number(const unsigned char **at, const unsigned char *end, json_t **out)
{
	const unsigned char *p = *at, *start = p;
	bool neg = p < end && *p == '-', real = false;
	p += neg;
	const unsigned char *digits = p;
	if (p >= end || !is_digit(*p))
		return -1;
	if (*p == '0') {
		if (++p < end && is_digit(*p))
			return -1;
	} else {
		while (p < end && is_digit(*p))
			p++;
	}
	size_t nd = (size_t)(p - digits);
	if (p < end && *p == '.') {
		if (++p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		real = true;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		real = true;
	}
	*at = p;
	if (!real) {
		if (nd > 18)
			return -1;           /* near long long's edge: jansson decides */
		long long v = 0;
		for (size_t i = 0; i < nd; i++)
			v = v * 10 + (digits[i] - '0');
		return out && !(*out = json_integer(neg ? -v : v)) ? -1 : 0;
	}
	/* strtod as jansson's, in a locale whose decimal point is '.' */
	char text[64], *stop;
	size_t len = (size_t)(p - start);
	const char *point = localeconv()->decimal_point;
	if (len >= sizeof(text) || !point || strcmp(point, ".") != 0)
		return -1;
	memcpy(text, start, len);
	text[len] = 0;
	double v = strtod(text, &stop);
	if (stop != text + len || isinf(v))
		return -1;
	return out && !(*out = json_real(v)) ? -1 : 0;
}

#endif
