/* The skipper of jsonl_scan (jsonl_skip.h).
 *
 * Most of a report is skipped (every frame's other members, locals,
 * modules): checked as strictly as jsonl_scan's value() checks a kept
 * value, but by one loop over a local pointer, containers by a stack of
 * their kinds, not by recursion, and no value made.  It accepts and
 * refuses exactly what value(s, NULL, NULL) did before it (the unit test
 * and fuzz-jsonl hold both to jansson).
 *
 * A container's text ends itself (checking it never looks past its
 * closing bracket), so bytes that begin with a container's text checked
 * before are that container, as valid as it was: a skipped container of
 * JSONL_SKIP_MIN_TEXT bytes or more at the first two levels (a report's
 * "modules", "interpreters", a frame's locals) is kept by its text
 * (jsonl_share.h) and, met again, passed over by one comparison of its
 * bytes instead of being read token by token. */
#include "jsonl/jsonl_skip.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "jsonl/jsonl_lex.h"
#include "jsonl/jsonl_share.h"

#define MAX_DEPTH JSONL_MAX_DEPTH
/* levels of containers looked up, from the value skipped */
#define LOOKED_UP 2

/* The string at P (its opening quote) checked as string() checks it; the
 * byte after it, or NULL. */
static inline const unsigned char *skip_string(const unsigned char *p, const unsigned char *end)
{
	p++;
	for (;;) {
		/* 16 bytes at a time, where SSE2 is (every x86-64): '"', '\\' and,
		 * compared as signed bytes, those below 0x20 and above 0x7f */
#ifdef __SSE2__
		while (end - p >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
							      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
						 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
			unsigned bits = (unsigned)_mm_movemask_epi8(m);
			if (bits) {
				p += __builtin_ctz(bits);
				goto stop;
			}
			p += 16;
		}
#endif
		/* 8 bytes at a time to the first '"', '\\', byte below 0x20 or
		 * above 0x7f: each term flags its first such byte exactly (a
		 * borrow runs only upwards from a byte it flags), so the lowest
		 * flag of all is the first */
		while (end - p >= 8) {
			uint64_t w, ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
			memcpy(&w, p, 8);
			uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
			uint64_t m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & high;
			if (m) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				p += __builtin_ctzll(m) >> 3;
#endif
				break;
			}
			p += 8;
		}
		while (p < end && plain[*p])
			p++;
#ifdef __SSE2__
stop:
#endif
		if (p >= end)
			return NULL;
		unsigned c = *p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c >= 0x80) {
			size_t n = utf8_len(p, end);
			if (!n)
				return NULL;
			p += n;
			continue;
		}
		if (end - p < 2)
			return NULL;
		c = p[1];
		if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
			p += 2;
			continue;
		}
		long u = c == 'u' ? hex4(p + 2, end) : -1;
		if (u <= 0)
			return NULL;
		p += 6;
		if (u >= 0xd800 && u <= 0xdbff) {
			long v = end - p >= 2 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2, end) : -1;
			if (v < 0xdc00 || v > 0xdfff)
				return NULL;
			p += 6;
		} else if (u >= 0xdc00 && u <= 0xdfff && !(u >= 0xdc80 && u <= 0xdcff)) {
			return NULL;
		}
	}
}

#define SKIP_WS(p, end) \
	while ((p) < (end) && (*(p) == ' ' || *(p) == '\t' || *(p) == '\n' || *(p) == '\r')) \
		(p)++

const unsigned char *jsonl_skip_value(const unsigned char *p, const unsigned char *end, int depth)
{
	int base = depth, deepest = depth;
	bool is_object[MAX_DEPTH + 1];
	/* the containers looked up (those at base + 1 and base + 2): where each
	 * began, its key, the nesting reached before it */
	const unsigned char *open_at[LOOKED_UP + 1];
	uint64_t open_key[LOOKED_UP + 1];
	int outer_deepest[LOOKED_UP + 1];
	/* a container found inside it: it is itself one that changed (a
	 * report's "process" of another dump), not kept */
	bool found_inside[LOOKED_UP + 1];
next_value:
	if (p >= end)
		return NULL;
	if ((*p == '{' || *p == '[') && depth - base < LOOKED_UP) {
		int l = depth - base + 1;
		open_at[l] = NULL;
		if ((size_t)(end - p) >= JSONL_SKIP_MIN_TEXT) {
			uint64_t key = jsonl_share_hash((const char *)p, JSONL_SKIP_KEY);
			int nest;
			size_t len = jsonl_share_long_get(p, (size_t)(end - p), key, NULL, depth, &nest, NULL);
			if (len) {
				p += len;
				if (depth + nest > deepest)
					deepest = depth + nest;
				if (l > 1)
					found_inside[l - 1] = true;
				goto after_value;
			}
			found_inside[l] = false;
			open_at[l] = p;
			open_key[l] = key;
			outer_deepest[l] = deepest;
			deepest = depth + 1;
		}
	}
	switch (*p) {
	case '{':
	case '[': {
		bool object = *p == '{';
		if (++depth > MAX_DEPTH)
			return NULL;
		if (depth > deepest)
			deepest = depth;
		is_object[depth] = object;
		p++;
		SKIP_WS(p, end);
		if (p < end && *p == (object ? '}' : ']')) {
			p++;
			goto closed;
		}
		if (object)
			goto next_member;
		goto next_value;
	}
	case '"':
		if (!(p = skip_string(p, end)))
			return NULL;
		goto after_value;
	case 't':
		if (end - p < 4 || memcmp(p, "true", 4) != 0)
			return NULL;
		p += 4;
		goto after_word;
	case 'f':
		if (end - p < 5 || memcmp(p, "false", 5) != 0)
			return NULL;
		p += 5;
		goto after_word;
	case 'n':
		if (end - p < 4 || memcmp(p, "null", 4) != 0)
			return NULL;
		p += 4;
		goto after_word;
	default: {
		/* an integer here; a real (or anything else) by number() */
		const unsigned char *q = p + (*p == '-'), *digits = q;
		while (q < end && is_digit(*q))
			q++;
		size_t nd = (size_t)(q - digits);
		if (nd && nd <= 18 && (*digits != '0' || nd == 1) &&
		    (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))) {
			p = q;
			goto after_value;
		}
		if (jsonl_number(&p, end, NULL) != 0)
			return NULL;
		goto after_value;
	}
	}
after_word:
	if (p < end && is_alpha(*p))
		return NULL;
after_value:
	if (depth == base)
		return p;
	SKIP_WS(p, end);
	if (p < end && *p == ',') {
		p++;
		SKIP_WS(p, end);
		if (!is_object[depth])
			goto next_value;
		goto next_member;
	}
	if (p < end && *p == (is_object[depth] ? '}' : ']')) {
		p++;
		goto closed;
	}
	return NULL;
closed:
	if (depth - base <= LOOKED_UP && open_at[depth - base]) {
		/* a container looked up, not found: its text for the next time */
		int l = depth - base;
		size_t len = (size_t)(p - open_at[l]);
		if (len >= JSONL_SKIP_MIN_TEXT && !found_inside[l])
			jsonl_share_long_put(open_at[l], len, open_key[l], NULL, deepest - depth + 1, NULL);
		if (outer_deepest[l] > deepest)
			deepest = outer_deepest[l];
	}
	depth--;
	goto after_value;
next_member:
	if (p >= end || *p != '"' || !(p = skip_string(p, end)))
		return NULL;
	SKIP_WS(p, end);
	if (p >= end || *p != ':')
		return NULL;
	p++;
	SKIP_WS(p, end);
	goto next_value;
}

