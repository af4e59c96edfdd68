/* A jansson tree as compact JSON text (json_text.h), byte for byte what
 * jansson 2.14's json_dumps(JSON_COMPACT) writes, without its cost (a
 * callback per piece, a code point at a time): a batch worker spent most
 * of its instructions there.  The format's facts, from jansson's dump.c
 * and utf.c: separators "," and ":" with no space; members in insertion
 * order; integers as "%lld"; reals as "%.17g" with the locale's decimal
 * point made '.', ".0" appended when neither '.' nor 'e' is there, and the
 * exponent without '+' or leading zeros; in strings '"' and '\\' escaped,
 * \b \f \n \r \t by name, every other code point below U+0020 as \u00XX
 * (upper-case hex), everything else as it is; a string that is not valid
 * UTF-8 (a lead byte 0x80-0xC1 or above 0xF4, a missing continuation, an
 * overlong form, a surrogate, above U+10FFFF) fails the whole text. */
#include "report/json_text.h"

#include "util/unicode.h"

#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_text {
	char *p;
	size_t len, cap;
	int failed;
	json_text_hook hook;         /* asked about each empty array and object */
	void *arg;
	int depth;                   /* the hook's node's */
};

/* The text's memory is jansson's (json_get_alloc_funcs): a report's, its
 * arena (report/json.c), counted against a batch worker's --max-memory as
 * json_dumps's own buffer was. */
static int grow(struct json_text *b, size_t n)
{
	if (b->failed)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	json_malloc_t alloc;
	json_free_t release;
	json_get_alloc_funcs(&alloc, &release);
	char *p = alloc(cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	if (b->len)
		memcpy(p, b->p, b->len);
	if (b->p)
		release(b->p);
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put(struct json_text *b, const void *s, size_t n)
{
	if (grow(b, n) == 0) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

static void put_c(struct json_text *b, char c)
{
	if (grow(b, 1) == 0)
		b->p[b->len++] = c;
}

static void put_string(struct json_text *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;
	put_c(b, '"');
	size_t run = 0;   /* bytes from s + i - run on, to copy as they are */
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			run++;
			continue;
		}
		if (c >= 0x80) {
			uint32_t cp;
			size_t len = utf8_decode(s + i, n - i, &cp);   /* jansson's rules, RFC 3629's */
			if (!len) {
				b->failed = 1;
				return;
			}
			i += len;
			run += len;
			continue;
		}
		put(b, s + i - run, run);
		run = 0;
		char esc[6] = { '\\', 0 };
		size_t elen = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		put(b, esc, elen);
		i++;
	}
	put(b, s + n - run, run);
	put_c(b, '"');
}

static void put_real(struct json_text *b, double v)
{
	char s[64];
	int n = snprintf(s, sizeof(s) - 3, "%.17g", v);
	if (n < 0 || (size_t)n >= sizeof(s) - 3) {
		b->failed = 1;
		return;
	}
	const char *point = localeconv()->decimal_point;
	char *at = point && *point != '.' ? strchr(s, *point) : NULL;
	if (at)
		*at = '.';
	if (!strchr(s, '.') && !strchr(s, 'e')) {
		memcpy(s + n, ".0", 3);
		n += 2;
	}
	char *e = strchr(s, 'e');
	if (e) {
		/* "1e+07" -> "1e7", "1e-07" -> "1e-7" */
		char *digits = e + 1 + (e[1] == '-'), *from = e + 1;
		while (*from == '+' || *from == '-' || (*from == '0' && from[1]))
			from++;
		if (e[1] == '-')
			memmove(digits, from, strlen(from) + 1);
		else
			memmove(e + 1, from, strlen(from) + 1);
		n = (int)strlen(s);
	}
	put(b, s, (size_t)n);
}

void json_text_put_int(struct json_text *t, json_int_t v)
{
	char s[32];
	int n = snprintf(s, sizeof(s), "%" JSON_INTEGER_FORMAT, v);
	put(t, s, (size_t)n);
}

static void put_value(struct json_text *b, json_t *j, int depth)
{
	if (b->failed)
		return;
	if (depth > 2048) {
		b->failed = 1;
		return;
	}
	switch (json_typeof(j)) {
	case JSON_NULL:
		put(b, "null", 4);
		break;
	case JSON_TRUE:
		put(b, "true", 4);
		break;
	case JSON_FALSE:
		put(b, "false", 5);
		break;
	case JSON_INTEGER:
		json_text_put_int(b, json_integer_value(j));
		break;
	case JSON_REAL:
		put_real(b, json_real_value(j));
		break;
	case JSON_STRING:
		put_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_ARRAY: {
		size_t n = json_array_size(j);
		if (!n && b->hook) {
			b->depth = depth;
			if (b->hook(b, j, b->arg))
				break;
		}
		put_c(b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				put_c(b, ',');
			put_value(b, json_array_get(j, i), depth + 1);
		}
		put_c(b, ']');
		break;
	}
	case JSON_OBJECT: {
		if (b->hook && !json_object_size(j)) {
			b->depth = depth;
			if (b->hook(b, j, b->arg))
				break;
		}
		put_c(b, '{');
		int first = 1;
		for (void *it = json_object_iter(j); it; it = json_object_iter_next(j, it)) {
			if (!first)
				put_c(b, ',');
			first = 0;
			const char *key = json_object_iter_key(it);
#if JANSSON_VERSION_HEX >= 0x020e00
			put_string(b, key, json_object_iter_key_len(it));
#else
			put_string(b, key, strlen(key));
#endif
			put_c(b, ':');
			put_value(b, json_object_iter_value(it), depth + 1);
		}
		put_c(b, '}');
		break;
	}
	default:
		b->failed = 1;
	}
}

void json_text_put(struct json_text *t, const char *s, size_t n)
{
	put(t, s, n);
}

void json_text_put_string(struct json_text *t, const char *s, size_t n)
{
	put_string(t, s, n);
}

void json_text_put_value(struct json_text *t, json_t *j)
{
	put_value(t, j, t->depth + 1);
}

char *json_text_compact(json_t *j, size_t *len)
{
	return json_text_compact_hooked(j, len, NULL, NULL);
}

char *json_text_compact_hooked(json_t *j, size_t *len, json_text_hook hook, void *arg)
{
	struct json_text b = { .hook = hook, .arg = arg };
	put_value(&b, j, 0);
	put_c(&b, '\0');
	if (b.failed) {
		json_free_t release;
		json_malloc_t alloc;
		json_get_alloc_funcs(&alloc, &release);
		if (b.p)
			release(b.p);
		return NULL;
	}
	*len = b.len - 1;
	return b.p;
}
