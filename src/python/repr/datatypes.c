/* repr() of the standard library's data types outside collections
 * (functools.partial, datetime, enum, uuid.UUID, fractions.Fraction,
 * decimal.Decimal, dataclasses, pathlib) formed from memory exactly as
 * Python prints them, once stdlib.c proved the type.
 *
 * Facts used (CPython's sources of 3.6 to 3.15, cited by file):
 * - Modules/_functoolsmodule.c partial_repr: "functools.partial(%R" fn,
 *   ", %R" per argument, ", %S=%R" per keyword, ")"; partialobject {fn,
 *   args, kw, ...}.
 * - Modules/_datetimemodule.c and Include/datetime.h: the objects and
 *   date_repr, time_repr, datetime_repr, delta_repr (3.6: positional),
 *   timezone_repr.
 * - Modules/_decimal/_decimal.c dec_repr (see repr_decimal).
 * - Lib/dataclasses.py: the generated __repr__ (see stdlib.c's
 *   dataclass_repr_fn).
 * - Lib/pathlib.py PurePath.__repr__ (see repr_path).
 * - Lib/enum.py Enum.__repr__: "<%s.%s: %r>" (3.12+: the class's
 *   _value_repr_ or repr); Lib/uuid.py, Lib/fractions.py __repr__.
 */
#include "python/repr/stdlib.h"

#include <stdio.h>
#include <string.h>

struct kw_walk {
	struct rctx *r;
	bool ok;
};

static int partial_kw(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct kw_walk *w = arg;
	const char *why, *k;
	if (sb_full(&w->r->b))
		return 1;
	if (py_type_of(c, key, NULL) != PYT_STR || !(k = py_str_utf8(c, key, PY_MAX_NAME, &why))) {
		w->ok = false;
		return 1;
	}
	sb_puts(&w->r->b, ", ");
	sb_utf8(&w->r->b, k);
	sb_puts(&w->r->b, "=");
	repr_item(w->r, value);
	return 0;
}

bool repr_partial(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint64_t f[3];
	int64_t n;
	if (dump_read(c->d, addr + hdr(c), f, sizeof(f)) != PC_OK || py_type_of(c, f[1], NULL) != PYT_TUPLE ||
	    py_rd_i64(c, f[1] + c->L->var_size, &n) != 0 || n < 0 ||
	    (f[2] && py_type_of(c, f[2], NULL) != PYT_DICT))
		return false;
	if (!repr_guard(r, addr, "..."))
		return true;
	sb_puts(&r->b, "functools.partial(");
	repr_item(r, f[0]);
	for (int64_t i = 0; i < n && !sb_full(&r->b); i++) {
		uint64_t item;
		if (!rd_ptr(c, f[1] + c->L->tuple_item + 8 * (uint64_t)i, &item)) {
			repr_fail(r, "partial's arguments not captured");
			break;
		}
		sb_puts(&r->b, ", ");
		repr_item(r, item);
	}
	struct kw_walk w = { r, true };
	if (f[2] && py_dict_items(c, f[2], partial_kw, &w) != 0)
		repr_fail(r, "partial's keywords not captured");
	if (!w.ok)
		repr_fail_as(r, PC_ECORRUPT, "partial has a keyword that is not a str");
	sb_puts(&r->b, ")");
	r->depth--;
	return true;
}

/* ", tzinfo=%R" and ", fold=1" before the closing parenthesis. */
static void time_tail(struct rctx *r, uint64_t addr, uint64_t at, int fold)
{
	struct py_ctx *c = r->c;
	uint8_t has;
	uint64_t tz;
	if (dump_read(c->d, addr + hdr(c) + 8, &has, 1) == PC_OK && has && rd_ptr(c, addr + at, &tz) &&
	    !is_none(c, tz)) {
		sb_puts(&r->b, ", tzinfo=");
		repr_item(r, tz);
	}
	if (fold)
		sb_puts(&r->b, ", fold=1");
	sb_puts(&r->b, ")");
}

bool repr_datetime(struct rctx *r, uint64_t addr, uint64_t type, const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t h = addr + hdr(c);
	uint8_t d[11];
	if (type == s->date) {
		if (dump_read(c->d, h + 9, d, 4) != PC_OK)
			return false;
		sb_printf(&r->b, "datetime.date(%d, %d, %d)", d[0] << 8 | d[1], d[2], d[3]);
	} else if (type == s->time) {
		/* data[6] at 9, fold at 15, tzinfo at 16 */
		if (dump_read(c->d, h + 9, d, 7) != PC_OK)
			return false;
		int us = d[3] << 16 | d[4] << 8 | d[5];
		sb_printf(&r->b, "datetime.time(%d, %d", d[0], d[1]);
		if (us)
			sb_printf(&r->b, ", %d, %d", d[2], us);
		else if (d[2])
			sb_printf(&r->b, ", %d", d[2]);
		time_tail(r, addr, hdr(c) + 16, d[6]);
	} else if (type == s->datetime) {
		/* data[10] at 9, fold at 19, tzinfo at 24 */
		if (dump_read(c->d, h + 9, d, 11) != PC_OK)
			return false;
		int us = d[7] << 16 | d[8] << 8 | d[9];
		sb_printf(&r->b, "datetime.datetime(%d, %d, %d, %d, %d", d[0] << 8 | d[1], d[2], d[3], d[4], d[5]);
		if (us)
			sb_printf(&r->b, ", %d, %d", d[6], us);
		else if (d[6])
			sb_printf(&r->b, ", %d", d[6]);
		time_tail(r, addr, hdr(c) + 24, d[10]);
	} else if (type == s->timedelta) {
		int32_t v[3];
		if (dump_read(c->d, h + 8, v, sizeof(v)) != PC_OK)
			return false;
		if (c->L->minor <= 6) {
			sb_printf(&r->b, "datetime.timedelta(%d", v[0]);
			if (v[2])
				sb_printf(&r->b, ", %d, %d", v[1], v[2]);
			else if (v[1])
				sb_printf(&r->b, ", %d", v[1]);
			sb_puts(&r->b, ")");
			return true;
		}
		static const char *const names[] = { "days", "seconds", "microseconds" };
		sb_puts(&r->b, "datetime.timedelta(");
		bool any = false;
		for (int i = 0; i < 3; i++)
			if (v[i]) {
				sb_printf(&r->b, "%s%s=%d", any ? ", " : "", names[i], v[i]);
				any = true;
			}
		sb_puts(&r->b, any ? ")" : "0)");
	} else if (type == s->timezone) {
		uint64_t f[2];
		if (addr == s->utc) {
			sb_puts(&r->b, "datetime.timezone.utc");
			return true;
		}
		if (dump_read(c->d, h, f, sizeof(f)) != PC_OK)
			return false;
		sb_puts(&r->b, "datetime.timezone(");
		repr_item(r, f[0]);
		if (f[1]) {
			sb_puts(&r->b, ", ");
			repr_item(r, f[1]);
		}
		sb_puts(&r->b, ")");
	} else {
		return false;
	}
	return true;
}

/* Enum.__repr__: "<%s.%s: %r>"; from 3.12 the value through the class's
 * _value_repr_, which must then be None or the value's own type's repr. */
bool repr_enum(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *cls = py_type_short_name(c, type), *why, *name;
	uint64_t n = py_instance_attr(c, addr, type, "_name_"), v = py_instance_attr(c, addr, type, "_value_");
	if (!cls || !n || !v || py_type_of(c, n, NULL) != PYT_STR || !(name = py_str_utf8(c, n, PY_MAX_NAME, &why)))
		return false;
	uint64_t vr = c->L->minor >= 12 ? py_mro_lookup(c, type, "_value_repr_", NULL) : 0;
	if (vr && !is_none(c, vr)) {
		/* a C type's own __repr__ (int.__repr__) prints a value of
		 * that built-in type as repr() does; anything else is code */
		enum py_type vt = py_type_of(c, v, NULL);
		if (py_type_of(c, vr, NULL) != PYT_OTHER ||
		    !(vt == PYT_INT || vt == PYT_BOOL || vt == PYT_FLOAT || vt == PYT_STR))
			return false;
	}
	sb_puts(&r->b, "<");
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, ".");
	sb_utf8(&r->b, name);
	sb_puts(&r->b, ": ");
	repr_item(r, v);
	sb_puts(&r->b, ">");
	return true;
}

bool repr_uuid(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t v = py_instance_attr(c, addr, type, "int");
	uint32_t digits[5] = { 0 };
	int64_t nd;
	bool neg;
	if (!v || py_type_of(c, v, NULL) != PYT_INT || py_long_digits(c, v, digits, 5, &nd, &neg) != PY_LONG_OK ||
	    neg || nd > 5)
		return false;
	/* 128 bits from 30-bit digits, least significant first */
	uint8_t bytes[16] = { 0 };
	for (int bit = 0; bit < 150; bit++) {
		if (!(digits[bit / 30] >> (bit % 30) & 1))
			continue;
		if (bit >= 128)
			return false;
		bytes[15 - bit / 8] |= (uint8_t)(1u << (bit % 8));
	}
	const char *cls = py_type_short_name(c, type);
	if (!cls)
		return false;
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, "('");
	for (int i = 0; i < 16; i++)
		sb_printf(&r->b, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", bytes[i]);
	sb_puts(&r->b, "')");
	return true;
}

bool repr_fraction(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	uint64_t n = py_instance_attr(c, addr, type, "_numerator"), d = py_instance_attr(c, addr, type, "_denominator");
	const char *cls = py_type_short_name(c, type);
	if (!cls || !n || !d || py_type_of(c, n, NULL) != PYT_INT || py_type_of(c, d, NULL) != PYT_INT)
		return false;
	sb_utf8(&r->b, cls);
	sb_puts(&r->b, "(");
	repr_item(r, n);
	sb_puts(&r->b, ", ");
	repr_item(r, d);
	sb_puts(&r->b, ")");
	return true;
}

/* decimal.Decimal (the C _decimal): PyDecObject {HEAD, hash, mpd_t} with
 * mpd_t {uint8_t flags, exp, digits, len, alloc, data} (Modules/_decimal/
 * libmpdec/mpdecimal.h; 64-bit words of 19 decimal digits, least
 * significant first).  dec_repr prints "Decimal('%s')" of mpd_to_sci with
 * the thread's context's capitals, which only an exponent shows: values
 * that need one keep the fallback. */
#define MPD_NEG   1
#define MPD_INF   2
#define MPD_NAN   4
#define MPD_SNAN  8
#define MPD_RDIGITS 19
#define MAX_DECIMAL_WORDS 64

bool repr_decimal(struct rctx *r, uint64_t addr)
{
	struct py_ctx *c = r->c;
	uint8_t flags;
	int64_t f[4];   /* exp, digits, len, alloc */
	uint64_t data;
	uint64_t words[MAX_DECIMAL_WORDS];
	uint64_t m = addr + hdr(c) + 8;
	if (dump_read(c->d, m, &flags, 1) != PC_OK || dump_read(c->d, m + 8, f, sizeof(f)) != PC_OK ||
	    !rd_ptr(c, m + 40, &data) || f[2] < 0 || f[2] > MAX_DECIMAL_WORDS || f[1] < 0 ||
	    f[1] > f[2] * MPD_RDIGITS || (f[2] && dump_read(c->d, data, words, 8 * (size_t)f[2]) != PC_OK))
		return false;
	bool special = flags & (MPD_INF | MPD_NAN | MPD_SNAN);
	if (!special && f[2] < 1)
		return false;
	/* a special value without a payload has no words (mpd_setspecial) */
	char digits[MAX_DECIMAL_WORDS * MPD_RDIGITS + 2] = "0";
	size_t n = 0;
	for (int64_t i = f[2]; i-- > 0;) {
		if (words[i] >= 10000000000000000000ull)
			return false;
		n += (size_t)snprintf(digits + n, sizeof(digits) - n, i == f[2] - 1 ? "%llu" : "%019llu",
				      (unsigned long long)words[i]);
	}
	int64_t exp = f[0];
	if (!special && (int64_t)n != f[1])
		return false;
	sb_puts(&r->b, "Decimal('");
	if (flags & MPD_NEG)
		sb_puts(&r->b, "-");
	if (flags & MPD_INF) {
		sb_puts(&r->b, "Infinity");
	} else if (flags & (MPD_NAN | MPD_SNAN)) {
		sb_puts(&r->b, flags & MPD_SNAN ? "sNaN" : "NaN");
		if (strcmp(digits, "0") != 0)
			sb_puts(&r->b, digits);   /* the payload */
	} else {
		int64_t nd = (int64_t)n, adjusted = exp + nd - 1;
		if (exp > 0 || adjusted < -6)
			return false;   /* scientific notation: E or e, by the context */
		if (exp == 0) {
			sb_puts(&r->b, digits);
		} else if (nd > -exp) {
			char *point = digits + nd + exp;
			char keep = *point;
			*point = '\0';
			sb_puts(&r->b, digits);
			sb_puts(&r->b, ".");
			*point = keep;
			sb_puts(&r->b, point);
		} else {
			sb_puts(&r->b, "0.");
			for (int64_t i = 0; i < -exp - nd; i++)
				sb_puts(&r->b, "0");
			sb_puts(&r->b, digits);
		}
	}
	sb_puts(&r->b, "')");
	return true;
}

struct dc_walk {
	struct rctx *r;
	const struct py_stdlib *s;
	uint64_t obj, type;
	size_t n;
	bool ok;
};

static int dc_field(struct py_ctx *c, uint64_t key, uint64_t field, void *arg)
{
	struct dc_walk *w = arg;
	uint64_t ftype;
	int64_t on;
	const char *why, *name;
	if (sb_full(&w->r->b))
		return 1;
	if (py_type_of(c, field, &ftype) != PYT_OTHER || py_type_of(c, key, NULL) != PYT_STR ||
	    !(name = py_str_utf8(c, key, PY_MAX_NAME, &why))) {
		w->ok = false;
		return 1;
	}
	uint64_t kind = py_instance_attr(c, field, ftype, "_field_type"), repr = py_instance_attr(c, field, ftype, "repr");
	if (!kind || !repr || py_type_of(c, repr, NULL) != PYT_BOOL || py_long_i64(c, repr, &on) != 0) {
		w->ok = false;
		return 1;
	}
	if (kind != w->s->field_marker || !on)
		return 0;
	uint64_t value = py_instance_attr(c, w->obj, w->type, name);
	if (!value) {
		w->ok = false;   /* Python would raise AttributeError */
		return 1;
	}
	if (w->n++)
		sb_puts(&w->r->b, ", ");
	sb_utf8(&w->r->b, name);
	sb_puts(&w->r->b, "=");
	repr_item(w->r, value);
	return 0;
}

/* The repr of the dataclass at ADDR, the __repr__ generated for the class
 * OWNER (stdlib.c: dataclass_repr_fn). */
bool repr_dataclass(struct rctx *r, uint64_t addr, uint64_t type, uint64_t owner,
			   const struct py_stdlib *s)
{
	struct py_ctx *c = r->c;
	uint64_t dict, fields;
	const char *mod, *qual;
	py_type_qualname(c, type, &mod, &qual);
	if (!qual || !rd_ptr(c, owner + c->L->type_dict, &dict) ||
	    !(fields = dict_get(c, dict, "__dataclass_fields__")) || py_type_of(c, fields, NULL) != PYT_DICT)
		return false;
	if (!repr_guard(r, addr, "..."))
		return true;
	sb_utf8(&r->b, qual);
	sb_puts(&r->b, "(");
	struct dc_walk w = { r, s, addr, type, 0, true };
	bool ok = py_dict_items(c, fields, dc_field, &w) == 0 && w.ok;
	sb_puts(&r->b, ")");
	r->depth--;
	return ok;
}

/* pathlib (Lib/pathlib.py, 3.13+ Lib/pathlib/_local.py): PurePath.__repr__
 * is "{}({!r})" of the class's __name__ and as_posix(), which on a POSIX
 * path is str(self): the _str slot, once str() ran (open(), os.fspath(),
 * printing it, ...).  A path never turned into a str, or a Windows one,
 * keeps the fallback. */
static bool mro_has(struct py_ctx *c, uint64_t type, const char *qualname)
{
	const struct py_layout *L = c->L;
	uint64_t mro, t;
	int64_t n;
	if (!rd_ptr(c, type + L->type_mro, &mro) || py_type_of(c, mro, NULL) != PYT_TUPLE ||
	    py_rd_i64(c, mro + L->var_size, &n) != 0 || n < 1 || n > 256)
		return false;
	for (int64_t i = 0; i < n; i++) {
		const char *mod, *qual;
		if (!rd_ptr(c, mro + L->tuple_item + 8 * (uint64_t)i, &t))
			return false;
		py_type_qualname(c, t, &mod, &qual);
		if (qual && strcmp(qual, qualname) == 0)
			return true;
	}
	return false;
}

bool repr_path(struct rctx *r, uint64_t addr, uint64_t type)
{
	struct py_ctx *c = r->c;
	const char *name = py_type_short_name(c, type);
	if (!name || !mro_has(c, type, "PurePosixPath") || mro_has(c, type, "PureWindowsPath"))
		return false;
	uint64_t str = py_instance_attr(c, addr, type, "_str");
	if (str && py_type_of(c, str, NULL) == PYT_STR) {
		sb_utf8(&r->b, name);
		sb_puts(&r->b, "(");
		repr_item(r, str);
		sb_puts(&r->b, ")");
		return true;
	}
	return false;
}
