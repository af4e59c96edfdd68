/* repr() of the scalars in a dump: int, float, str, bytes and bytearray,
 * their escaping and number formatting, exactly as CPython prints them.
 * Containers, other objects and the driver are in repr.c.
 *
 * Facts from CPython's Objects/: unicode_repr (quote choice, escapes,
 * printable non-ASCII kept), bytes_repr, long_to_decimal_string (refusing
 * more than 4300 digits since 3.11's int_max_str_digits, so pycore refuses
 * too), float_repr (repr style 'r': shortest round-trip digits; exponent
 * form when the decimal exponent is < -4 or >= 16).
 */
#include "python/repr/repr_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/unicode.h"

/* ------------------------------------------------------------------------
 * int
 * ------------------------------------------------------------------------ */

/* CPython refuses to print ints of more than 4300 decimal digits (3.11+,
 * sys.int_info.default_max_str_digits); 480 30-bit digits hold at most
 * 4336 decimal digits, enough to decide. */
#define LONG_MAX_DIGITS 480

void repr_long(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint32_t digits[LONG_MAX_DIGITS];
	int64_t ndigits = 0;
	bool negative = false;
	switch (py_long_digits(c, addr, digits, LONG_MAX_DIGITS, &ndigits, &negative)) {
	case PY_LONG_OK:
		break;
	case PY_LONG_UNREADABLE:
		return repr_fail(r, "int not captured");
	case PY_LONG_CORRUPT_SIGN:
		return repr_fail_as(r, PC_ECORRUPT, "corrupt int sign");
	case PY_LONG_TOO_LARGE:
		return repr_fail_as(r, PC_ELIMIT, arena_printf(c->a, "int of %lld 30-bit digits: too large to print "
						 "(Python refuses more than 4300 decimal digits)", (long long)ndigits));
	case PY_LONG_DIGITS_UNREADABLE:
		return repr_fail(r, "int digits not captured");
	}
	char *text = malloc(LONG_MAX_DIGITS * 10 + 2);
	if (!text)
		return repr_fail_as(r, PC_ENOMEM, "out of memory");
	const char *why = py_long_format(digits, (size_t)ndigits, negative, text, LONG_MAX_DIGITS * 10 + 2);
	if (why)
		repr_fail_as(r, PC_ECORRUPT, why); /* a digit of more than 30 bits */
	else
		sb_puts(&r->b, text);
	free(text);
}

const char *py_long_format(const uint32_t *digits, size_t ndigits, bool negative, char *out, size_t cap)
{
	if (ndigits > LONG_MAX_DIGITS)
		return "int too large to print (Python refuses more than 4300 decimal digits)";
	/* Base 10^9 limbs, least significant first: multiply by 2^30, add. */
	uint32_t limbs[LONG_MAX_DIGITS * 30 / 29 + 2];
	size_t nl = 0;
	for (size_t i = ndigits; i-- > 0;) {
		if (digits[i] >> 30)
			return "corrupt int digit";
		uint64_t carry = digits[i];
		for (size_t k = 0; k < nl; k++) {
			uint64_t v = ((uint64_t)limbs[k] << 30) + carry;
			limbs[k] = (uint32_t)(v % 1000000000u);
			carry = v / 1000000000u;
		}
		while (carry) {
			limbs[nl++] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
	}
	size_t ndec = nl ? (nl - 1) * 9 : 1;
	if (nl) {
		for (uint32_t top = limbs[nl - 1]; top; top /= 10)
			ndec++;
	}
	if (ndec > 4300)
		return "int of more than 4300 decimal digits: Python refuses to print it";
	if (cap < ndec + 2)
		return "buffer too small";
	size_t o = 0;
	if (negative && nl)
		out[o++] = '-';
	if (nl == 0) {
		out[o++] = '0';
		out[o] = '\0';
		return NULL;
	}
	o += (size_t)snprintf(out + o, cap - o, "%u", limbs[nl - 1]);
	for (size_t k = nl - 1; k-- > 0;)
		o += (size_t)snprintf(out + o, cap - o, "%09u", limbs[k]);
	return NULL;
}

/* ------------------------------------------------------------------------
 * float
 * ------------------------------------------------------------------------ */

static void float_repr(double v, bool single, char *out, size_t outlen)
{
	if (isnan(v)) {
		snprintf(out, outlen, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(out, outlen, v < 0 ? "-inf" : "inf");
		return;
	}
	/* The fewest significant digits that read back as the same double. */
	char e[64];
	int prec;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, v);
		if (single ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v)
			break;
	}
	/* e is [-]D[.DDD]e[+-]XX: take the digits and the exponent */
	const char *p = e;
	bool neg = *p == '-';
	if (neg)
		p++;
	char digits[32];
	size_t nd = 0;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	int exp10 = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	/* decpt: position of the decimal point relative to the digits */
	int decpt = exp10 + 1;
	size_t o = 0;
	char buf[64];
	if (neg)
		buf[o++] = '-';
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			buf[o++] = '0';
			buf[o++] = '.';
			for (int i = 0; i < -decpt; i++)
				buf[o++] = '0';
			memcpy(buf + o, digits, nd);
			o += nd;
		} else if ((size_t)decpt >= nd) {
			memcpy(buf + o, digits, nd);
			o += nd;
			for (size_t i = nd; i < (size_t)decpt; i++)
				buf[o++] = '0';
			buf[o++] = '.';
			buf[o++] = '0';
		} else {
			memcpy(buf + o, digits, (size_t)decpt);
			o += (size_t)decpt;
			buf[o++] = '.';
			memcpy(buf + o, digits + decpt, nd - (size_t)decpt);
			o += nd - (size_t)decpt;
		}
		buf[o] = '\0';
	} else {
		buf[o++] = digits[0];
		if (nd > 1) {
			buf[o++] = '.';
			memcpy(buf + o, digits + 1, nd - 1);
			o += nd - 1;
		}
		int x = decpt - 1;
		snprintf(buf + o, sizeof(buf) - o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	snprintf(out, outlen, "%s", buf);
}

void py_float_repr(double v, char *out, size_t outlen)
{
	float_repr(v, false, out, outlen);
}

void py_float_repr_single(float v, char *out, size_t outlen)
{
	float_repr(v, true, out, outlen);
}

void repr_float(struct rctx *r, uint64_t addr)
{
	double v;
	if (dump_read(r->c->d, addr + r->c->L->float_value, &v, sizeof(v)) != PC_OK)
		return repr_fail(r, "float not captured");
	char buf[64];
	py_float_repr(v, buf, sizeof(buf));
	sb_puts(&r->b, buf);
}

/* ------------------------------------------------------------------------
 * str and bytes
 * ------------------------------------------------------------------------ */

/* The escapes str and bytes reprs share, for characters below 0x80. */
static void put_ascii(struct sbuf *b, uint32_t ch, uint32_t quote)
{
	char t[2] = { '\\', (char)ch };
	if (ch == quote || ch == '\\') {
		sb_char(b, t, 1);
		sb_char(b, t + 1, 1);
	} else if (ch == '\t') {
		sb_puts(b, "\\t");
	} else if (ch == '\n') {
		sb_puts(b, "\\n");
	} else if (ch == '\r') {
		sb_puts(b, "\\r");
	} else if (ch < ' ' || ch == 0x7f) {
		sb_printf(b, "\\x%02x", ch);
	} else {
		sb_char(b, t + 1, 1);
	}
}

/* One code point of a str literal body, escaped as unicode_repr does. */
static void put_str_char(struct sbuf *b, uint32_t ch, uint32_t quote)
{
	char tmp[16];
	if (ch < 0x80) {
		put_ascii(b, ch, quote);
	} else if (unicode_printable(ch)) {
		if (ch >= 0xd800 && ch <= 0xdfff) {
			/* never printable in fact, but keep UTF-8 valid regardless */
			sb_printf(b, "\\u%04x", ch);
		} else {
			size_t n = py_utf8_encode(ch, tmp);
			sb_char(b, tmp, n);
		}
	} else if (ch <= 0xff) {
		sb_printf(b, "\\x%02x", ch);
	} else if (ch <= 0xffff) {
		sb_printf(b, "\\u%04x", ch);
	} else {
		sb_printf(b, "\\U%08x", ch);
	}
}

/* Reads a str's code points (at most MAX) into a malloc'd array. */
static uint32_t *str_codepoints(struct rctx *r, uint64_t addr, size_t max, size_t *n, size_t *total)
{
	struct py_ctx *c = r->c;
	const struct py_layout *L = c->L;
	int64_t length;
	uint32_t state;
	if (py_rd_i64(c, addr + L->unicode_length, &length) != 0 ||
	    dump_read_u32(c->d, addr + L->unicode_state, &state) != PC_OK) {
		repr_fail(r, "str not captured");
		return NULL;
	}
	if (length < 0 || length > ((int64_t)1 << 40)) {
		repr_fail_as(r, PC_ECORRUPT, "corrupt str length");
		return NULL;
	}
	unsigned kind = (state >> L->unicode_kind_shift) & 7;
	bool compact = (state >> L->unicode_compact_shift) & 1;
	bool ascii = (state >> L->unicode_ascii_shift) & 1;
	if (kind != 1 && kind != 2 && kind != 4) {
		repr_fail_as(r, PC_ECORRUPT, "str of unknown kind (not ready, or corrupt)");
		return NULL;
	}
	uint64_t data;
	if (compact)
		data = addr + (uint64_t)(ascii ? L->sizeof_ascii : L->sizeof_compact);
	else if (L->unicode_data < 0 || py_rd_ptr(c, addr + L->unicode_data, &data) != 0 || !data) {
		repr_fail(r, "str data not captured");
		return NULL;
	}
	*total = (size_t)length;
	*n = (size_t)length < max ? (size_t)length : max;
	uint32_t *cps = malloc((*n ? *n : 1) * sizeof(*cps));
	uint8_t *raw = malloc((*n ? *n : 1) * kind);
	if (!cps || !raw || dump_read(c->d, data, raw, *n * kind) != PC_OK) {
		bool read = cps && raw;
		repr_fail_as(r, read ? PC_ENOTCAPTURED : PC_ENOMEM, read ? "str data not captured" : "out of memory");
		free(cps);
		free(raw);
		return NULL;
	}
	for (size_t i = 0; i < *n; i++) {
		if (kind == 1) {
			cps[i] = raw[i];
		} else if (kind == 2) {
			uint16_t v;
			memcpy(&v, raw + 2 * i, 2);
			cps[i] = v;
		} else {
			memcpy(&cps[i], raw + 4 * i, 4);
		}
		if (ascii && cps[i] > 0x7f) {
			repr_fail_as(r, PC_ECORRUPT, "corrupt ASCII str");
			free(cps);
			free(raw);
			return NULL;
		}
	}
	free(raw);
	return cps;
}

void repr_str(struct rctx *r, uint64_t addr)
{
	size_t n, total;
	/* Only as many characters as can be shown are read; the quote choice
	 * needs all of them, so read up to a bound and say so if it is hit. */
	size_t want = r->lim->max_repr * 4 + 16;
	if (want < 65536)
		want = 65536;
	uint32_t *cps = str_codepoints(r, addr, want, &n, &total);
	if (!cps)
		return;
	bool sq = false, dq = false;
	for (size_t i = 0; i < n; i++) {
		sq |= cps[i] == '\'';
		dq |= cps[i] == '"';
	}
	uint32_t quote = sq && !dq ? '"' : '\'';
	char q = (char)quote;
	sb_char(&r->b, &q, 1);
	for (size_t i = 0; i < n && !sb_full(&r->b); i++)
		put_str_char(&r->b, cps[i], quote);
	if (n < total && !sb_full(&r->b))
		repr_limit(r, "str too long to read whole");
	sb_char(&r->b, &q, 1);
	free(cps);
}

static void put_bytes_body(struct sbuf *b, const uint8_t *p, size_t n)
{
	bool sq = memchr(p, '\'', n) != NULL, dq = memchr(p, '"', n) != NULL;
	char quote = sq && !dq ? '"' : '\'';
	sb_char(b, &quote, 1);
	for (size_t i = 0; i < n && !sb_full(b); i++) {
		if (p[i] < 0x80)
			put_ascii(b, p[i], (uint8_t)quote);
		else
			sb_printf(b, "\\x%02x", p[i]);
	}
	sb_char(b, &quote, 1);
}

void repr_bytes(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0)
		return repr_fail(r, "bytes not captured");
	if (size < 0)
		return repr_fail_as(r, PC_ECORRUPT, "corrupt bytes size");
	size_t n = (uint64_t)size < r->lim->max_repr + 16 ? (size_t)size : r->lim->max_repr + 16;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || dump_read(c->d, addr + c->L->bytes_sval, buf, n) != PC_OK) {
		free(buf);
		return repr_fail(r, "bytes data not captured");
	}
	if ((uint64_t)size > n)
		repr_limit(r, "bytes too long to read whole");
	sb_puts(&r->b, "b");
	put_bytes_body(&r->b, buf, n);
	free(buf);
}

void repr_bytearray(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t start;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0 || size < 0 ||
	    c->L->bytearray_start < 0 || py_rd_ptr(c, addr + c->L->bytearray_start, &start) != 0)
		return repr_fail(r, "bytearray not captured");
	size_t n = (uint64_t)size < r->lim->max_repr + 16 ? (size_t)size : r->lim->max_repr + 16;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || (n && dump_read(c->d, start, buf, n) != PC_OK)) {
		free(buf);
		return repr_fail(r, "bytearray data not captured");
	}
	sb_puts(&r->b, "bytearray(b");
	put_bytes_body(&r->b, buf, n);
	sb_puts(&r->b, ")");
	free(buf);
}
