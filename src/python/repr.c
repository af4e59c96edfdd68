/* repr() of objects in a dump, exactly as CPython prints it for the
 * built-in types, with hard limits on length, items and depth.
 *
 * Facts from CPython's Objects/: unicode_repr (quote choice, escapes,
 * printable non-ASCII kept), bytes_repr, long_to_decimal_string (refusing
 * more than 4300 digits since 3.11's int_max_str_digits, so pycore refuses
 * too), float_repr (repr style 'r': shortest round-trip digits; exponent
 * form when the decimal exponent is < -4 or >= 16), Py_ReprEnter's "..."
 * for containers met again while being printed, object_repr's
 * "<module.QualName object at 0x...>".
 */
#include "python/repr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/unicode_printable.h"

/* ------------------------------------------------------------------------
 * The output buffer: stops at the limit and remembers it was cut
 * ------------------------------------------------------------------------ */

struct sbuf {
	char *p;
	size_t n, cap;
	size_t chars, limit;     /* characters written, and the most allowed */
	bool cut;
	bool oom;
};

static void sb_raw(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* Append one character's UTF-8 bytes. */
static void sb_char(struct sbuf *b, const char *utf8, size_t n)
{
	if (b->chars >= b->limit) {
		b->cut = true;
		return;
	}
	sb_raw(b, utf8, n);
	b->chars++;
}

static void sb_puts(struct sbuf *b, const char *s)
{
	/* ASCII only: one byte, one character */
	for (; *s && !b->cut; s++)
		sb_char(b, s, 1);
}

/* Append a UTF-8 string (names read from the dump, already valid). */
static void sb_utf8(struct sbuf *b, const char *s)
{
	while (*s && !b->cut) {
		size_t n = 1;
		while ((s[n] & 0xc0) == 0x80)
			n++;
		sb_char(b, s, n);
		s += n;
	}
}

static bool sb_full(const struct sbuf *b)
{
	return b->cut || b->oom;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	sb_puts(b, tmp);
}

/* ------------------------------------------------------------------------
 * Context of one repr: limits and the containers being printed
 * ------------------------------------------------------------------------ */

#define REPR_MAX_DEPTH_HARD 64

struct rctx {
	struct py_ctx *c;
	const struct repr_limits *lim;
	struct sbuf b;
	uint64_t stack[REPR_MAX_DEPTH_HARD];
	int depth;
	const char *error;       /* first failure met inside */
	const char *limit_why;   /* which limit cut the repr */
	const char *approx;      /* a type whose own __repr__ could not be run */
};

/* A hard failure: the object cannot be printed truthfully. */
static void fail(struct rctx *r, const char *why)
{
	if (!r->error)
		r->error = why;
}

/* A limit reached: stop here; what was printed is a true prefix. */
static void limit(struct rctx *r, const char *why)
{
	r->b.cut = true;
	if (!r->limit_why)
		r->limit_why = why;
}

static void repr_obj(struct rctx *r, uint64_t addr);

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

static const char *const type_names[PYT_COUNT] = {
	[PYT_INT] = "int", [PYT_BOOL] = "bool", [PYT_FLOAT] = "float", [PYT_STR] = "str",
	[PYT_BYTES] = "bytes", [PYT_BYTEARRAY] = "bytearray", [PYT_LIST] = "list",
	[PYT_TUPLE] = "tuple", [PYT_DICT] = "dict", [PYT_SET] = "set",
	[PYT_FROZENSET] = "frozenset", [PYT_NONE] = "NoneType", [PYT_ELLIPSIS] = "ellipsis",
	[PYT_CELL] = "cell", [PYT_COMPLEX] = "complex", [PYT_OBJECT] = "object",
	[PYT_TYPE] = "type", [PYT_FUNCTION] = "function",
};

const char *const py_type_symbols[PYT_COUNT] = {
	[PYT_INT] = "PyLong_Type", [PYT_BOOL] = "PyBool_Type", [PYT_FLOAT] = "PyFloat_Type",
	[PYT_STR] = "PyUnicode_Type", [PYT_BYTES] = "PyBytes_Type",
	[PYT_BYTEARRAY] = "PyByteArray_Type", [PYT_LIST] = "PyList_Type",
	[PYT_TUPLE] = "PyTuple_Type", [PYT_DICT] = "PyDict_Type", [PYT_SET] = "PySet_Type",
	[PYT_FROZENSET] = "PyFrozenSet_Type", [PYT_NONE] = "_PyNone_Type",
	[PYT_ELLIPSIS] = "PyEllipsis_Type", [PYT_CELL] = "PyCell_Type",
	[PYT_COMPLEX] = "PyComplex_Type", [PYT_OBJECT] = "PyBaseObject_Type",
	[PYT_TYPE] = "PyType_Type", [PYT_FUNCTION] = "PyFunction_Type",
};

/* The type's tp_name, read once per type would be nicer; types are few. */
static const char *type_tp_name(struct py_ctx *c, uint64_t type)
{
	uint64_t name;
	char buf[256];
	if (py_rd_ptr(c, type + c->L->type_name, &name) != 0 ||
	    dump_read_cstr(c->d, name, buf, sizeof(buf)) != DUMP_OK)
		return NULL;
	return arena_strdup(c->a, buf);
}

enum py_type py_type_of(struct py_ctx *c, uint64_t addr, uint64_t *type_out)
{
	uint64_t type;
	if (py_rd_ptr(c, addr + c->L->object_type, &type) != 0 || type == 0)
		return PYT_UNREADABLE;
	if (type_out)
		*type_out = type;
	for (int i = 0; i < PYT_COUNT; i++)
		if (c->type_addr[i] && c->type_addr[i] == type)
			return (enum py_type)i;
	/* No symbol for it: trust the name only for names that no module
	 * qualifies (static built-in types). */
	bool any = false;
	for (int i = 0; i < PYT_COUNT; i++)
		any |= c->type_addr[i] != 0;
	if (!any) {
		const char *n = type_tp_name(c, type);
		for (int i = 0; n && i < PYT_COUNT; i++)
			if (type_names[i] && strcmp(n, type_names[i]) == 0)
				return (enum py_type)i;
	}
	return PYT_OTHER;
}

/* Module and qualified name of a type, as object.__repr__ shows them. */
static void type_qualname(struct py_ctx *c, uint64_t type, const char **module, const char **qualname)
{
	const struct py_layout *L = c->L;
	*module = NULL;
	*qualname = NULL;
	uint64_t flags = 0;
	dump_read(c->d, type + L->type_flags, &flags, sizeof(flags));
	const char *tp_name = type_tp_name(c, type);
	const char *why;
	if ((flags & (1ul << 9)) && L->heaptype_qualname >= 0) {   /* Py_TPFLAGS_HEAPTYPE */
		uint64_t q, dict, mod;
		if (py_rd_ptr(c, type + L->heaptype_qualname, &q) == 0)
			*qualname = py_str_utf8(c, q, 256, &why);
		if (py_rd_ptr(c, type + L->type_dict, &dict) == 0 && dict &&
		    py_dict_get_str(c, dict, "__module__", &mod) == 0 &&
		    py_type_of(c, mod, NULL) == PYT_STR)
			*module = py_str_utf8(c, mod, 256, &why);
	}
	if (!*qualname && tp_name) {
		const char *dot = strrchr(tp_name, '.');
		if (dot) {
			*module = arena_printf(c->a, "%.*s", (int)(dot - tp_name), tp_name);
			*qualname = dot + 1;
		} else {
			*module = "builtins";
			*qualname = tp_name;
		}
	}
}

const char *py_type_name(struct py_ctx *c, uint64_t type)
{
	const char *mod, *qual;
	type_qualname(c, type, &mod, &qual);
	if (!qual)
		return NULL;
	if (!mod || strcmp(mod, "builtins") == 0)
		return qual;
	return arena_printf(c->a, "%s.%s", mod, qual);
}

/* ------------------------------------------------------------------------
 * int
 * ------------------------------------------------------------------------ */

/* CPython refuses to print ints of more than 4300 decimal digits (3.11+,
 * sys.int_info.default_max_str_digits); 480 30-bit digits hold at most
 * 4336 decimal digits, enough to decide. */
#define LONG_MAX_DIGITS 480

static void repr_long(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint32_t digits[LONG_MAX_DIGITS];
	int64_t ndigits = 0;
	bool negative = false;
	switch (py_long_digits(c, addr, digits, LONG_MAX_DIGITS, &ndigits, &negative)) {
	case PY_LONG_OK:
		break;
	case PY_LONG_UNREADABLE:
		return fail(r, "int not captured");
	case PY_LONG_CORRUPT_SIGN:
		return fail(r, "corrupt int sign");
	case PY_LONG_TOO_LARGE:
		return fail(r, arena_printf(c->a, "int of %lld 30-bit digits: too large to print "
					    "(Python refuses more than 4300 decimal digits)", (long long)ndigits));
	case PY_LONG_DIGITS_UNREADABLE:
		return fail(r, "int digits not captured");
	}
	char *text = malloc(LONG_MAX_DIGITS * 10 + 2);
	if (!text)
		return fail(r, "out of memory");
	const char *why = py_long_format(digits, (size_t)ndigits, negative, text, LONG_MAX_DIGITS * 10 + 2);
	if (why)
		fail(r, why);
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

static void repr_float(struct rctx *r, uint64_t addr)
{
	double v;
	if (dump_read(r->c->d, addr + r->c->L->float_value, &v, sizeof(v)) != DUMP_OK)
		return fail(r, "float not captured");
	char buf[64];
	py_float_repr(v, buf, sizeof(buf));
	sb_puts(&r->b, buf);
}

/* ------------------------------------------------------------------------
 * str and bytes
 * ------------------------------------------------------------------------ */

static bool printable(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(unicode_nonprintable) / sizeof(unicode_nonprintable[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cp < unicode_nonprintable[mid][0])
			hi = mid;
		else if (cp > unicode_nonprintable[mid][1])
			lo = mid + 1;
		else
			return false;
	}
	return true;
}

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
	} else if (printable(ch)) {
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
	    dump_read_u32(c->d, addr + L->unicode_state, &state) != DUMP_OK) {
		fail(r, "str not captured");
		return NULL;
	}
	if (length < 0 || length > ((int64_t)1 << 40)) {
		fail(r, "corrupt str length");
		return NULL;
	}
	unsigned kind = (state >> L->unicode_kind_shift) & 7;
	bool compact = (state >> L->unicode_compact_shift) & 1;
	bool ascii = (state >> L->unicode_ascii_shift) & 1;
	if (kind != 1 && kind != 2 && kind != 4) {
		fail(r, "str of unknown kind (not ready, or corrupt)");
		return NULL;
	}
	uint64_t data;
	if (compact)
		data = addr + (uint64_t)(ascii ? L->sizeof_ascii : L->sizeof_compact);
	else if (L->unicode_data < 0 || py_rd_ptr(c, addr + L->unicode_data, &data) != 0 || !data) {
		fail(r, "str data not captured");
		return NULL;
	}
	*total = (size_t)length;
	*n = (size_t)length < max ? (size_t)length : max;
	uint32_t *cps = malloc((*n ? *n : 1) * sizeof(*cps));
	uint8_t *raw = malloc((*n ? *n : 1) * kind);
	if (!cps || !raw || dump_read(c->d, data, raw, *n * kind) != DUMP_OK) {
		fail(r, cps && raw ? "str data not captured" : "out of memory");
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
			fail(r, "corrupt ASCII str");
			free(cps);
			free(raw);
			return NULL;
		}
	}
	free(raw);
	return cps;
}

static void repr_str(struct rctx *r, uint64_t addr)
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
		limit(r, "str too long to read whole");
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

static void repr_bytes(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0)
		return fail(r, "bytes not captured");
	if (size < 0)
		return fail(r, "corrupt bytes size");
	size_t n = (uint64_t)size < r->lim->max_repr + 16 ? (size_t)size : r->lim->max_repr + 16;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || dump_read(c->d, addr + c->L->bytes_sval, buf, n) != DUMP_OK) {
		free(buf);
		return fail(r, "bytes data not captured");
	}
	if ((uint64_t)size > n)
		limit(r, "bytes too long to read whole");
	sb_puts(&r->b, "b");
	put_bytes_body(&r->b, buf, n);
	free(buf);
}

static void repr_bytearray(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t start;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0 || size < 0 ||
	    c->L->bytearray_start < 0 || py_rd_ptr(c, addr + c->L->bytearray_start, &start) != 0)
		return fail(r, "bytearray not captured");
	size_t n = (uint64_t)size < r->lim->max_repr + 16 ? (size_t)size : r->lim->max_repr + 16;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || (n && dump_read(c->d, start, buf, n) != DUMP_OK)) {
		free(buf);
		return fail(r, "bytearray data not captured");
	}
	sb_puts(&r->b, "bytearray(b");
	put_bytes_body(&r->b, buf, n);
	sb_puts(&r->b, ")");
	free(buf);
}

/* ------------------------------------------------------------------------
 * Containers
 * ------------------------------------------------------------------------ */

/* Py_ReprEnter: is ADDR already being printed further out? */
static bool reentered(struct rctx *r, uint64_t addr)
{
	for (int i = 0; i < r->depth; i++)
		if (r->stack[i] == addr)
			return true;
	return false;
}

static bool enter(struct rctx *r, uint64_t addr)
{
	if (r->depth >= r->lim->max_depth || r->depth >= REPR_MAX_DEPTH_HARD) {
		limit(r, "nesting deeper than the depth limit");
		return false;
	}
	r->stack[r->depth++] = addr;
	return true;
}

static void repr_sequence(struct rctx *r, uint64_t addr, bool tuple)
{
	struct py_ctx *c = r->c;
	int64_t size;
	uint64_t items;
	if (py_rd_i64(c, addr + c->L->var_size, &size) != 0 || size < 0)
		return fail(r, "sequence not captured");
	if (tuple) {
		items = addr + (uint64_t)c->L->tuple_item;
	} else if (py_rd_ptr(c, addr + c->L->list_item, &items) != 0) {
		return fail(r, "list not captured");
	}
	const char *open = tuple ? "(" : "[", *close = tuple ? ")" : "]";
	if (size == 0) {
		sb_puts(&r->b, tuple ? "()" : "[]");
		return;
	}
	if (reentered(r, addr)) {
		sb_puts(&r->b, tuple ? "(...)" : "[...]");
		return;
	}
	if (!enter(r, addr))
		return;
	sb_puts(&r->b, open);
	for (int64_t i = 0; i < size && !sb_full(&r->b); i++) {
		if ((size_t)i >= r->lim->max_items) {
			limit(r, "more items than the item limit");
			break;
		}
		uint64_t item;
		if (i)
			sb_puts(&r->b, ", ");
		if (py_rd_ptr(c, items + 8 * (uint64_t)i, &item) != 0) {
			fail(r, "item not captured");
			break;
		}
		repr_obj(r, item);
	}
	if (tuple && size == 1)
		sb_puts(&r->b, ",");
	sb_puts(&r->b, close);
	r->depth--;
}

struct dict_walk {
	struct rctx *r;
	size_t n;
};

static int dict_item(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	(void)c;
	struct dict_walk *w = arg;
	struct rctx *r = w->r;
	if (sb_full(&r->b))
		return 1;
	if (w->n >= r->lim->max_items) {
		limit(r, "more items than the item limit");
		return 1;
	}
	if (w->n++)
		sb_puts(&r->b, ", ");
	repr_obj(r, key);
	sb_puts(&r->b, ": ");
	repr_obj(r, value);
	return 0;
}

static void repr_dict(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	int64_t used;
	if (py_rd_i64(c, addr + c->L->dict_used, &used) != 0 || used < 0)
		return fail(r, "dict not captured");
	if (used == 0) {
		sb_puts(&r->b, "{}");
		return;
	}
	if (reentered(r, addr)) {
		sb_puts(&r->b, "{...}");
		return;
	}
	if (!enter(r, addr))
		return;
	sb_puts(&r->b, "{");
	struct dict_walk w = { r, 0 };
	if (py_dict_items(c, addr, dict_item, &w) != 0)
		fail(r, "dict table unreadable");
	sb_puts(&r->b, "}");
	r->depth--;
}

static void repr_set(struct rctx *r, uint64_t addr, bool frozen)
{
	struct py_ctx *c = r->c;
	const struct py_layout *L = c->L;
	int64_t used, mask;
	uint64_t table;
	if (py_rd_i64(c, addr + L->set_used, &used) != 0 || py_rd_i64(c, addr + L->set_mask, &mask) != 0 ||
	    py_rd_ptr(c, addr + L->set_table, &table) != 0 || used < 0 || mask < 0 ||
	    mask > (1 << 26) || used > mask + 1)
		return fail(r, "set not captured or corrupt");
	const char *name = frozen ? "frozenset" : "set";
	if (used == 0) {
		sb_printf(&r->b, "%s()", name);
		return;
	}
	if (reentered(r, addr)) {
		sb_printf(&r->b, "%s(...)", name);
		return;
	}
	if (!enter(r, addr))
		return;
	if (frozen)
		sb_puts(&r->b, "frozenset(");
	sb_puts(&r->b, "{");
	/* setentry: key, hash; unused slots NULL, deleted ones the dummy key */
	size_t n = 0;
	for (int64_t i = 0; i <= mask && !sb_full(&r->b) && (int64_t)n < used; i++) {
		uint64_t key;
		if (py_rd_ptr(c, table + (uint64_t)i * (uint64_t)L->sizeof_setentry, &key) != 0) {
			fail(r, "set table not captured");
			break;
		}
		if (!key || key == c->set_dummy)
			continue;
		if (!c->set_dummy && py_type_of(c, key, NULL) == PYT_UNREADABLE)
			continue;
		if (n >= r->lim->max_items) {
			limit(r, "more items than the item limit");
			break;
		}
		if (n++)
			sb_puts(&r->b, ", ");
		repr_obj(r, key);
	}
	sb_puts(&r->b, "}");
	if (frozen)
		sb_puts(&r->b, ")");
	r->depth--;
}

/* ------------------------------------------------------------------------
 * Everything else
 * ------------------------------------------------------------------------ */

/* Does TYPE print with object.__repr__ (its tp_repr is object's)? */
static bool default_repr(struct py_ctx *c, uint64_t type)
{
	uint64_t mine, base;
	uint64_t object = c->type_addr[PYT_OBJECT];
	return object && py_rd_ptr(c, type + c->L->type_repr, &mine) == 0 &&
	       py_rd_ptr(c, object + c->L->type_repr, &base) == 0 && mine == base;
}

static void put_name(struct sbuf *b, const char *mod, const char *qual)
{
	if (mod && strcmp(mod, "builtins") != 0) {
		sb_utf8(b, mod);
		sb_puts(b, ".");
	}
	sb_utf8(b, qual);
}

/* type.__repr__: <class 'module.QualName'> */
static void repr_class(struct rctx *r, uint64_t addr)
{
	const char *mod, *qual;
	type_qualname(r->c, addr, &mod, &qual);
	if (!qual)
		return fail(r, "class name not captured");
	sb_puts(&r->b, "<class '");
	put_name(&r->b, mod, qual);
	sb_puts(&r->b, "'>");
}

/* function.__repr__: <function QualName at 0x...> */
static void repr_function(struct rctx *r, uint64_t addr)
{
	uint64_t q;
	const char *why, *qual = NULL;
	if (py_rd_ptr(r->c, addr + r->c->L->function_qualname, &q) == 0)
		qual = py_str_utf8(r->c, q, PY_MAX_NAME, &why);
	if (!qual)
		return fail(r, "function name not captured");
	sb_puts(&r->b, "<function ");
	sb_utf8(&r->b, qual);
	sb_printf(&r->b, " at 0x%llx>", (unsigned long long)addr);
}

static void repr_other(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *numpy = py_numpy_repr(c, addr, type);
	if (numpy) {
		sb_puts(&r->b, numpy);
		return;
	}
	const char *mod, *qual;
	type_qualname(c, type, &mod, &qual);
	if (!qual)
		return fail(r, "type name not captured");
	/* Only object.__repr__ can be formed without running Python code;
	 * other types are shown the same way, and the repr says so. */
	if (!r->approx && !c->type_addr[PYT_OBJECT])
		r->approx = "whether its type defines __repr__ is unknown (no symbols for object): "
			    "shown as object.__repr__";
	else if (!r->approx && !default_repr(c, type))
		r->approx = arena_printf(c->a, "%s%s%s defines __repr__, not run: shown as object.__repr__",
					 mod && strcmp(mod, "builtins") ? mod : "",
					 mod && strcmp(mod, "builtins") ? "." : "", qual);
	sb_puts(&r->b, "<");
	put_name(&r->b, mod, qual);
	sb_printf(&r->b, " object at 0x%llx>", (unsigned long long)addr);
}

static void repr_obj(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	if (sb_full(&r->b))
		return;
	if (addr == 0) {
		fail(r, "NULL object");
		sb_puts(&r->b, "<NULL>");
		return;
	}
	uint64_t type = 0;
	enum py_type t = py_type_of(c, addr, &type);
	switch (t) {
	case PYT_UNREADABLE:
		fail(r, "object not captured");
		sb_printf(&r->b, "<unreadable object at 0x%llx>", (unsigned long long)addr);
		return;
	case PYT_NONE: sb_puts(&r->b, "None"); return;
	case PYT_ELLIPSIS: sb_puts(&r->b, "Ellipsis"); return;
	case PYT_BOOL: {
		int64_t v;
		if (py_long_i64(c, addr, &v) != 0)
			return fail(r, "bool not captured");
		sb_puts(&r->b, v ? "True" : "False");
		return;
	}
	case PYT_INT: repr_long(r, addr); return;
	case PYT_FLOAT: repr_float(r, addr); return;
	case PYT_STR: repr_str(r, addr); return;
	case PYT_BYTES: repr_bytes(r, addr); return;
	case PYT_BYTEARRAY: repr_bytearray(r, addr); return;
	case PYT_LIST: repr_sequence(r, addr, false); return;
	case PYT_TUPLE: repr_sequence(r, addr, true); return;
	case PYT_DICT: repr_dict(r, addr); return;
	case PYT_SET: repr_set(r, addr, false); return;
	case PYT_FROZENSET: repr_set(r, addr, true); return;
	case PYT_TYPE: repr_class(r, addr); return;
	case PYT_FUNCTION: repr_function(r, addr); return;
	default: repr_other(r, addr, type); return;
	}
}

const char *py_repr(struct py_ctx *c, uint64_t addr, const struct repr_limits *lim,
		    const char **error)
{
	struct rctx r = { .c = c, .lim = lim };
	r.b.limit = lim->max_repr;
	repr_obj(&r, addr);
	if (r.b.oom || r.error) {
		free(r.b.p);
		*error = r.b.oom ? "out of memory" : r.error;
		return NULL;
	}
	if (r.b.cut) {
		sb_raw(&r.b, "...", 3);
		*error = r.limit_why ? arena_printf(c->a, "repr cut: %s", r.limit_why)
			 : arena_printf(c->a, "repr cut at %zu characters", lim->max_repr);
		if (r.approx)
			*error = arena_printf(c->a, "%s; %s", *error, r.approx);
	} else {
		*error = r.approx;
	}
	const char *out = arena_strdup(c->a, r.b.p ? r.b.p : "");
	free(r.b.p);
	return out;
}
