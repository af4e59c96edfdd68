/* A JSON Lines record read strictly, only the kept members built
 * (jsonl_scan.h).
 *
 * What jansson 2.14's json_loads accepts, and so what this accepts (all
 * else: NULL, and the caller asks jansson): one object at the top, then
 * only whitespace (' ', '\t', '\n', '\r'); strings of UTF-8 (no overlong
 * form, no surrogate, nothing past U+10FFFF, no byte below 0x20) with the
 * escapes \" \\ \/ \b \f \n \r \t \uXXXX (a high surrogate followed by a
 * low one; never \u0000); numbers as RFC 8259 writes them, integers in
 * long long, reals not overflowing; true, false, null not followed by a
 * letter; no trailing comma; a member named twice keeps its first place
 * and its last value (json_object_set_new, as jansson's parser).
 *
 * Before json_loads, group.c turns each lone "\udc80".."\udcff" into the
 * pair "\udb80\udcNN" (surrogates.h): that is the character U+F00NN,
 * which is what such an escape decodes to here. */
#include "jsonl/jsonl_scan.h"
#include "jsonl/jsonl_lex.h"
#include "jsonl/jsonl_share.h"
#include "jsonl/jsonl_skip.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH JSONL_MAX_DEPTH

struct sc {
	const unsigned char *p, *end;
	int depth;
	char *buf;                   /* the string last read (when kept) */
	size_t len, cap;
	char *sig;                   /* an object's kept scalars' names and text */
	size_t siglen, sigcap;
};

static void ws(struct sc *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int put(struct sc *s, const void *b, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (!nb)
			return -1;
		s->buf = nb;
		s->cap = cap;
	}
	if (n)
		memcpy(s->buf + s->len, b, n);
	s->len += n;
	s->buf[s->len] = 0;
	return 0;
}

static int put_cp(struct sc *s, uint32_t cp)
{
	unsigned char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return put(s, b, n);
}

/* The string at s->p (its opening quote); its text into s->buf when KEEP. */
static int string(struct sc *s, bool keep)
{
	const unsigned char *p = s->p + 1, *end = s->end;
	s->len = 0;
	if (keep && put(s, "", 0) != 0)
		return -1;
	for (;;) {
		const unsigned char *run = p;
		/* 8 bytes at a time while none is '"', '\\', below 0x20 or above 0x7f */
		while (end - p >= 8) {
			uint64_t w, ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
			memcpy(&w, p, 8);
			uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
			if (((w - ones * 0x20) | (q - ones) | (b - ones) | w) & high)
				break;
			p += 8;
		}
		while (p < end && plain[*p])
			p++;
		if (keep && p > run && put(s, run, (size_t)(p - run)) != 0)
			return -1;
		if (p >= end)
			return -1;
		unsigned c = *p;
		if (c == '"') {
			s->p = p + 1;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c >= 0x80) {
			size_t n = utf8_len(p, end);
			if (!n || (keep && put(s, p, n) != 0))
				return -1;
			p += n;
			continue;
		}
		/* an escape */
		if (end - p < 2)
			return -1;
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *e = p[1] ? strchr(from, p[1]) : NULL;
		if (e) {
			if (keep && put(s, &to[e - from], 1) != 0)
				return -1;
			p += 2;
			continue;
		}
		long u = p[1] == 'u' ? hex4(p + 2, end) : -1;
		if (u <= 0)
			return -1;           /* not an escape, or \u0000 */
		p += 6;
		uint32_t cp = (uint32_t)u;
		if (u >= 0xd800 && u <= 0xdbff) {
			long v = end - p >= 2 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2, end) : -1;
			if (v < 0xdc00 || v > 0xdfff)
				return -1;
			cp = 0x10000 + ((uint32_t)(u - 0xd800) << 10) + (uint32_t)(v - 0xdc00);
			p += 6;
		} else if (u >= 0xdc80 && u <= 0xdcff) {
			cp = 0xf0000 + (uint32_t)(u - 0xdc00);   /* surrogates.h's mark of a byte */
		} else if (u >= 0xdc00 && u <= 0xdfff) {
			return -1;
		}
		if (keep && put_cp(s, cp) != 0)
			return -1;
	}
}

static int number(struct sc *s, json_t **out)
{
	return jsonl_number(&s->p, s->end, out);
}

static int literal(struct sc *s, const char *word, size_t n, json_t *(*make)(void), json_t **out)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return -1;
	s->p += n;
	if (s->p < s->end && is_alpha(*s->p))
		return -1;
	return out && !(*out = make()) ? -1 : 0;
}

static int value(struct sc *s, json_t **out, const struct jsonl_keep *keep);
static int object(struct sc *s, json_t **out, const struct jsonl_keep *keep);
static int array(struct sc *s, json_t **out, const struct jsonl_keep *keep);

/* The value at s->p skipped (jsonl_skip.h): 0, or -1 where value() would
 * have refused it. */
static int skip_value(struct sc *s)
{
	const unsigned char *p = jsonl_skip_value(s->p, s->end, s->depth);
	if (!p)
		return -1;
	s->p = p;
	return 0;
}

static const struct jsonl_keep *kept_member(const char *name, size_t len, const struct jsonl_keep *keep)
{
	for (; keep->key; keep++) {
		const char *k = keep->key;
		size_t i = 0;
		while (i < len && k[i] == name[i])
			i++;
		if (i == len && !k[len])
			return keep;
	}
	return NULL;
}

/* A member's name at s->p: *NAME, *LEN its text (in the line when it has
 * no escape, else decoded into s->buf); decoded only when DECODE. */
static int member_name(struct sc *s, bool decode, const char **name, size_t *len)
{
	const unsigned char *at = s->p, *q = at + 1;
	/* most names: printable ASCII, no escape */
	while (q < s->end && plain[*q])
		q++;
	if (q < s->end && *q == '"') {
		s->p = q + 1;
		*name = (const char *)at + 1;
		*len = (size_t)(q - at - 1);
		return 0;
	}
	if (string(s, false) != 0)
		return -1;
	if (!decode)
		return 0;
	if (!memchr(at + 1, '\\', (size_t)(s->p - at - 2))) {
		*name = (const char *)at + 1;
		*len = (size_t)(s->p - at - 2);
		return 0;
	}
	s->p = at;
	if (string(s, true) != 0)
		return -1;
	*name = s->buf;
	*len = s->len;
	return 0;
}

/* ------------------------------------------------------------------------
 * Objects of scalars shared (jsonl_share.h): a kept object's kept scalars
 * wait at their text (at most MAX_SPANS) until the object is known to be
 * one made before.
 * ------------------------------------------------------------------------ */

#define MAX_SPANS 8

/* a line's string and signature buffers, kept for the next line (each
 * thread's own: group reads lines in two) */
static _Thread_local char *line_buf, *line_sig;
static _Thread_local size_t line_cap, line_sigcap;

void jsonl_scan_end(void)
{
	jsonl_share_drop();
	free(line_buf);
	free(line_sig);
	line_buf = line_sig = NULL;
	line_cap = line_sigcap = 0;
}

static inline int sig_put(struct sc *s, const void *b, size_t n)
{
	if (s->siglen + n <= s->sigcap) {
		memcpy(s->sig + s->siglen, b, n);
		s->siglen += n;
		return 0;
	}
	{
		size_t cap = s->sigcap ? s->sigcap : 256;
		while (cap < s->siglen + n)
			cap *= 2;
		char *nb = realloc(s->sig, cap);
		if (!nb)
			return -1;
		s->sig = nb;
		s->sigcap = cap;
	}
	if (n)
		memcpy(s->sig + s->siglen, b, n);
	s->siglen += n;
	return 0;
}

struct span {
	const struct jsonl_keep *k;
	const unsigned char *at;
};

/* The kept members of SPANS (scalars, at their text) into O, in order. */
static int build_spans(struct sc *s, json_t *o, const struct span *spans, size_t n)
{
	const unsigned char *p = s->p;
	for (size_t i = 0; i < n; i++) {
		json_t *v = NULL;
		s->p = spans[i].at;
		if (value(s, &v, NULL) != 0 || json_object_set_new_nocheck(o, spans[i].k->key, v) != 0) {
			s->p = p;
			return -1;
		}
	}
	s->p = p;
	return 0;
}

static int object(struct sc *s, json_t **out, const struct jsonl_keep *keep)
{
	if (++s->depth > MAX_DEPTH)
		return -1;
	/* An object whose kept members are all scalars is first looked up by
	 * its whole text (a batch's frames repeat byte for byte), keyed by its
	 * bytes to the first '}' and the pruning KEEP: when the bytes here
	 * begin with a text read before under KEEP, they are that object (an
	 * object's text ends itself: reading it never looks past its '}'), so
	 * its value, unread and unchecked again.  A signature's key holds a
	 * NUL or is empty, a text's never: the two never meet in the table. */
	const unsigned char *raw = NULL;
	uint64_t rawhash = 0;
	if (out && keep && jsonl_keeps_whole(keep)) {
		size_t room = (size_t)(s->end - s->p);
		const unsigned char *close = memchr(s->p, '}', room < JSONL_SHARE_MAX_TEXT ? room : JSONL_SHARE_MAX_TEXT);
		if (close) {
			raw = s->p;
			rawhash = jsonl_share_hash((const char *)raw, (size_t)(close - raw + 1)) ^ (uintptr_t)keep;
			size_t len;
			json_t *shared = jsonl_share_text_get(raw, room, rawhash, keep, s->depth, &len);
			if (shared) {
				s->p = raw + len;
				s->depth--;
				*out = json_incref(shared);
				return 0;
			}
		}
	}
	json_t *o = out ? json_object() : NULL;
	if (out && !o)
		return -1;
	/* pruned: kept scalars wait at their text (SPANS) while the object may
	 * be one made before */
	struct span spans[MAX_SPANS];
	size_t nspans = 0;
	bool shareable = out && keep;
	if (shareable)
		s->siglen = 0;           /* a skipped object inside keeps it */
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
	} else {
		for (;;) {
			ws(s);
			const char *key = NULL;
			size_t klen = 0;
			if (s->p >= s->end || *s->p != '"' || member_name(s, out != NULL, &key, &klen) != 0)
				goto fail;
			/* a member kept: whole (KEEP NULL), or one KEEP names */
			const struct jsonl_keep *k = out && keep ? kept_member(key, klen, keep) : NULL;
			bool kept = out && (!keep || k);
			char *name = kept && !keep ? strndup(key, klen) : NULL;
			if (kept && !keep && !name)
				goto fail;
			if (k && shareable && (sig_put(s, key, klen) != 0 || sig_put(s, "", 1) != 0))
				goto fail;
			ws(s);
			if (s->p >= s->end || *s->p != ':') {
				free(name);
				goto fail;
			}
			s->p++;
			ws(s);
			if (k && shareable && s->p < s->end && *s->p != '{' && *s->p != '[' && nspans < MAX_SPANS) {
				const unsigned char *at = s->p;
				spans[nspans++] = (struct span){ k, at };
				if (value(s, NULL, NULL) != 0 || sig_put(s, at, (size_t)(s->p - at)) != 0 ||
				    sig_put(s, "", 1) != 0)
					goto fail;
			} else {
				if (k && shareable) {
					/* not all scalars: made here, the waiting ones first */
					shareable = false;
					if (build_spans(s, o, spans, nspans) != 0)
						goto fail;
				}
				json_t *v = NULL;
				if (value(s, kept ? &v : NULL, k ? k->sub : NULL) != 0) {
					free(name);
					goto fail;
				}
				int rc = kept ? json_object_set_new_nocheck(o, name ? name : k->key, v) : 0;
				free(name);
				if (rc != 0)
					goto fail;
			}
			ws(s);
			if (s->p < s->end && *s->p == ',') {
				s->p++;
				continue;
			}
			if (s->p < s->end && *s->p == '}') {
				s->p++;
				break;
			}
			goto fail;
		}
	}
	if (shareable) {
		uint64_t hash = jsonl_share_hash(s->sig, s->siglen);
		json_t *shared = jsonl_share_sig_get(s->sig, s->siglen, hash);
		if (shared) {
			json_decref(o);
			o = json_incref(shared);
		} else if (build_spans(s, o, spans, nspans) != 0) {
			goto fail;
		} else {
			jsonl_share_sig_put(s->sig, s->siglen, hash, o);
		}
		if (raw && (size_t)(s->p - raw) <= JSONL_SHARE_MAX_TEXT)
			jsonl_share_text_put(raw, (size_t)(s->p - raw), rawhash, keep, o);
	}
	s->depth--;
	if (out)
		*out = o;
	return 0;
fail:
	json_decref(o);
	return -1;
}

static int array(struct sc *s, json_t **out, const struct jsonl_keep *keep)
{
	if (++s->depth > MAX_DEPTH)
		return -1;
	json_t *a = out ? json_array() : NULL;
	if (out && !a)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
	} else {
		for (;;) {
			ws(s);
			json_t *v = NULL;
			if (value(s, out ? &v : NULL, keep) != 0 || (out && json_array_append_new(a, v) != 0))
				goto fail;
			ws(s);
			if (s->p < s->end && *s->p == ',') {
				s->p++;
				continue;
			}
			if (s->p < s->end && *s->p == ']') {
				s->p++;
				break;
			}
			goto fail;
		}
	}
	s->depth--;
	if (out)
		*out = a;
	return 0;
fail:
	json_decref(a);
	return -1;
}

/* The container at s->p, kept whole (KEEP NULL) or pruned to KEEP.  One
 * pruned inside the record of JSONL_SKIP_MIN_TEXT bytes or more (a
 * report's "interpreters" for the dashboard) is looked up by its text
 * (jsonl_share.h): met before, it is the value made then, shared. */
static int container(struct sc *s, json_t **out, const struct jsonl_keep *keep)
{
	const unsigned char *at = s->p;
	size_t room = (size_t)(s->end - at);
	if (!keep || s->depth == 0 || room < JSONL_SKIP_MIN_TEXT)
		return *at == '{' ? object(s, out, keep) : array(s, out, keep);
	uint64_t key = jsonl_share_hash((const char *)at, JSONL_SKIP_KEY) ^ (uintptr_t)keep;
	int nest;
	json_t *v = NULL;
	size_t len = jsonl_share_long_get(at, room, key, keep, s->depth, &nest, &v);
	if (len) {
		s->p = at + len;
		*out = json_incref(v);
		return 0;
	}
	unsigned long found = jsonl_share_long_found(s->depth + 1);
	if ((*at == '{' ? object(s, out, keep) : array(s, out, keep)) != 0)
		return -1;
	/* not when one of its members was found: it is one that changed
	 * around it (a report's "process" of another dump) */
	if ((size_t)(s->p - at) >= JSONL_SKIP_MIN_TEXT && jsonl_share_long_found(s->depth + 1) == found)
		jsonl_share_long_put(at, (size_t)(s->p - at), key, keep, -1, *out);
	return 0;
}

/* The value at s->p: skipped (OUT NULL), kept whole (KEEP NULL), or
 * pruned to KEEP. */
static int value(struct sc *s, json_t **out, const struct jsonl_keep *keep)
{
	if (!out)
		return skip_value(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '{':
	case '[':
		return container(s, out, keep);
	case '"':
		if (string(s, out != NULL) != 0)
			return -1;
		return out && !(*out = json_stringn_nocheck(s->buf, s->len)) ? -1 : 0;
	case 't':
		return literal(s, "true", 4, json_true, out);
	case 'f':
		return literal(s, "false", 5, json_false, out);
	case 'n':
		return literal(s, "null", 4, json_null, out);
	default:
		return number(s, out);
	}
}

json_t *jsonl_scan(const char *line, size_t n, const struct jsonl_keep *keep)
{
	/* a NUL byte (json_loads would stop there) is refused wherever it is:
	 * no token, string or white space holds one (no scan for it first) */
	struct sc s = { .p = (const unsigned char *)line, .end = (const unsigned char *)line + n,
			.buf = line_buf, .cap = line_cap, .sig = line_sig, .sigcap = line_sigcap };
	json_t *j = NULL;
	ws(&s);
	int rc = s.p < s.end && *s.p == '{' ? value(&s, &j, keep) : -1;
	ws(&s);
	line_buf = s.buf;
	line_cap = s.cap;
	line_sig = s.sig;
	line_sigcap = s.sigcap;
	if (rc != 0 || s.p != s.end) {
		json_decref(j);
		return NULL;
	}
	return j;
}
