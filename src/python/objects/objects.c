/* Reading Python objects out of a dump: str, bytes, small ints, dicts.
 * Every size read from the dump is checked against a cap before use. */
#include "python/objects/objects.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * str
 * ------------------------------------------------------------------------ */

size_t py_utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* WHY, its kind CODE and the address ADDR (0: none) kept in c->why_info. */
static const char *why_at(struct py_ctx *c, enum pc_code code, uint64_t addr, const char *why)
{
	c->why_info = addr ? model_err_at(code, addr) : model_err(code);
	return why;
}

/* Where the characters of the str at ADDR are: its length, kind (bytes a
 * character: 1, 2 or 4) and their address; NULL, or why not. */
static const char *str_chars(struct py_ctx *c, uint64_t addr, int64_t *length, unsigned *kind, uint64_t *data)
{
	const struct py_layout *L = c->L;
	uint32_t state;
	if (addr == 0)
		return why_at(c, PC_ECORRUPT, 0, "NULL string");
	if (py_rd_i64(c, addr + L->unicode_length, length) != 0 ||
	    dump_read_u32(c->d, addr + L->unicode_state, &state) != PC_OK)
		return why_at(c, PC_ENOTCAPTURED, addr, "string object not captured");
	if (*length < 0 || (uint64_t)*length > 1u << 30)
		return why_at(c, PC_ECORRUPT, addr, "corrupt string length");
	*kind = (state >> L->unicode_kind_shift) & 7;
	bool compact = (state >> L->unicode_compact_shift) & 1;
	bool ascii = (state >> L->unicode_ascii_shift) & 1;
	if (*kind != 1 && *kind != 2 && *kind != 4)
		return L->unicode_ready_shift >= 0 && !((state >> L->unicode_ready_shift) & 1)
			       ? why_at(c, PC_EUNSUPPORTED, addr, "string not ready (legacy wstr form)")
			       : why_at(c, PC_ECORRUPT, addr, "corrupt string kind");
	if (compact)
		*data = addr + (uint64_t)(ascii ? L->sizeof_ascii : L->sizeof_compact);
	else if (L->unicode_data < 0 || py_rd_ptr(c, addr + L->unicode_data, data) != 0 || *data == 0)
		return why_at(c, PC_ENOTCAPTURED, addr, "legacy string data not captured");
	return NULL;
}

const char *py_str_utf8(struct py_ctx *c, uint64_t addr, size_t maxchars, const char **why)
{
	int64_t length;
	unsigned kind;
	uint64_t data;
	if ((*why = str_chars(c, addr, &length, &kind, &data)) != NULL)
		return NULL;
	size_t n = (size_t)length < maxchars ? (size_t)length : maxchars;
	/* the raw characters on the stack when they are few (names, keys) */
	uint8_t small[1024];
	uint8_t *raw = n * kind < sizeof(small) ? small : malloc(n * kind + 1);
	char *out = arena_alloc(c->a, n * 4 + 1);
	if (!raw || !out) {
		if (raw != small)
			free(raw);
		*why = why_at(c, PC_ENOMEM, 0, "out of memory");
		return NULL;
	}
	if (dump_read(c->d, data, raw, n * kind) != PC_OK) {
		if (raw != small)
			free(raw);
		*why = why_at(c, PC_ENOTCAPTURED, data, "string data not captured");
		return NULL;
	}
	size_t o = 0;
	/* ASCII without a NUL (most names) is its own UTF-8 */
	uint8_t high = 0;
	for (size_t i = 0; kind == 1 && i < n; i++)
		high |= raw[i];
	if (kind == 1 && high < 0x80 && !memchr(raw, 0, n)) {
		memcpy(out, raw, n);
		o = n;
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t cp;
		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t v;
			memcpy(&v, raw + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		/* lone surrogates and out-of-range values cannot be UTF-8, and a
		 * NUL would end the C string: U+FFFD for those */
		if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			cp = 0xfffd;
		o += py_utf8_encode(cp, out + o);
	}
	out[o] = '\0';
	if (raw != small)
		free(raw);
	return out;
}

/* ------------------------------------------------------------------------
 * bytes, int
 * ------------------------------------------------------------------------ */

uint8_t *py_bytes(struct py_ctx *c, uint64_t addr, size_t max, size_t *len, const char **why)
{
	int64_t size;
	if (addr == 0 || py_rd_i64(c, addr + c->L->var_size, &size) != 0) {
		*why = why_at(c, PC_ENOTCAPTURED, addr, "bytes object not captured");
		return NULL;
	}
	if (size < 0 || (uint64_t)size > max) {
		*why = why_at(c, PC_ECORRUPT, addr, "bytes object of implausible size");
		return NULL;
	}
	uint8_t *buf = arena_alloc(c->a, (size_t)size + 1);
	if (!buf) {
		*why = why_at(c, PC_ENOMEM, 0, "out of memory");
		return NULL;
	}
	if (dump_read(c->d, addr + c->L->bytes_sval, buf, (size_t)size) != PC_OK) {
		*why = why_at(c, PC_ENOTCAPTURED, addr, "bytes data not captured");
		return NULL;
	}
	*len = (size_t)size;
	return buf;
}

enum py_long_err py_long_digits(struct py_ctx *c, uint64_t addr, uint32_t *digits, size_t max,
				int64_t *ndigits, bool *negative)
{
	const struct py_layout *L = c->L;
	if (L->long_lv_tag >= 0) {
		/* 3.12+: lv_tag = ndigits << 3 | sign bits (0 positive, 1 zero,
		 * 2 negative, 3 never written); bit 2 marks 3.14+'s immortal
		 * small ints */
		uint64_t tag;
		if (py_rd_ptr(c, addr + L->long_lv_tag, &tag) != 0)
			return PY_LONG_UNREADABLE;
		if ((tag & 3) == 3)
			return PY_LONG_CORRUPT_SIGN;
		*ndigits = (int64_t)(tag >> 3);
		*negative = (tag & 3) == 2;
	} else {
		int64_t size;
		if (py_rd_i64(c, addr + L->var_size, &size) != 0)
			return PY_LONG_UNREADABLE;
		*negative = size < 0;
		*ndigits = size < 0 ? (int64_t)(0 - (uint64_t)size) : size;
	}
	if (*ndigits < 0 || (uint64_t)*ndigits > max)
		return PY_LONG_TOO_LARGE;
	if (*ndigits && dump_read(c->d, addr + L->long_digit, digits, (size_t)*ndigits * 4) != PC_OK)
		return PY_LONG_DIGITS_UNREADABLE;
	return PY_LONG_OK;
}

int py_long_i64(struct py_ctx *c, uint64_t addr, int64_t *out)
{
	uint32_t digit[2] = { 0, 0 };
	int64_t ndigits;
	bool negative;
	/* two 30-bit digits at most: 60 bits */
	if (py_long_digits(c, addr, digit, 2, &ndigits, &negative) != PY_LONG_OK)
		return -1;
	uint64_t v = (uint64_t)digit[0] | ((uint64_t)digit[1] << 30);
	*out = negative ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* ------------------------------------------------------------------------
 * dict
 * ------------------------------------------------------------------------ */

/* Bytes of one index slot for a table of SIZE slots (dk_indices). */
static unsigned index_bytes(uint64_t size)
{
	return size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffu ? 4 : 8;
}

/* Split tables keep their values apart from the shared keys, and from 3.11
 * in an insertion order of their own (Include/internal/pycore_dict.h):
 * 3.11, 3.12: values[] with the count at byte values[-2] and the k-th
 * inserted index at byte values[-2-k]; 3.13: {capacity, size, embedded,
 * valid} bytes, then values[capacity], then the order array. */
static int split_order(struct py_ctx *c, uint64_t values, int64_t nentries,
		       uint8_t order[256], int64_t *n, uint64_t *slots)
{
	if (c->L->minor <= 10) {
		/* entries and values share their order */
		*n = nentries < 256 ? nentries : 256;
		for (int64_t i = 0; i < *n; i++)
			order[i] = (uint8_t)i;
		*slots = values;
		return 0;
	}
	if (c->L->minor <= 12) {
		uint8_t size;
		if (dump_read(c->d, values - 2, &size, 1) != PC_OK ||
		    dump_read(c->d, values - 2 - size, order, size) != PC_OK)
			return -1;
		/* stored last-first: order[size - k] is the k-th inserted */
		for (int i = 0; i < size / 2; i++) {
			uint8_t t = order[i];
			order[i] = order[size - 1 - i];
			order[size - 1 - i] = t;
		}
		*n = size;
		*slots = values;
		return 0;
	}
	uint8_t head[4];
	if (dump_read(c->d, values, head, 4) != PC_OK || head[1] > head[0] ||
	    dump_read(c->d, values + 8 + 8 * (uint64_t)head[0], order, head[1]) != PC_OK)
		return -1;
	*n = head[1];
	*slots = values + 8;
	return 0;
}

int py_dict_keys_values(struct py_ctx *c, uint64_t keys, uint64_t values, py_dict_fn fn, void *arg)
{
	const struct py_layout *L = c->L;
	int64_t nentries;
	if (!keys || py_rd_i64(c, keys + L->dictkeys_nentries, &nentries) != 0)
		return -1;
	uint64_t size, indices;
	bool general = true;
	if (L->dictkeys_size >= 0) {
		int64_t s;
		if (py_rd_i64(c, keys + L->dictkeys_size, &s) != 0 || s <= 0 || (s & (s - 1)))
			return -1;
		if (s > (int64_t)PY_MAX_DICT_ENTRIES * 2)
			return -2;
		size = (uint64_t)s;
		indices = size * index_bytes(size);
	} else {
		uint8_t log2, kind, log2ib;
		if (dump_read(c->d, keys + L->dictkeys_log2_size, &log2, 1) != PC_OK || log2 > 30 ||
		    dump_read(c->d, keys + L->dictkeys_kind, &kind, 1) != PC_OK)
			return -1;
		size = (uint64_t)1 << log2;
		if (L->dictkeys_log2_index_bytes >= 0) {
			if (dump_read(c->d, keys + L->dictkeys_log2_index_bytes, &log2ib, 1) != PC_OK ||
			    log2ib > 34)
				return -1;
			indices = (uint64_t)1 << log2ib;
		} else {
			indices = size * index_bytes(size);
		}
		general = kind == 0; /* DICT_KEYS_GENERAL */
	}
	if (nentries < 0 || (uint64_t)nentries > size)
		return -1;
	if ((uint64_t)nentries > PY_MAX_DICT_ENTRIES)
		return -2;
	uint64_t esize = general ? (uint64_t)L->sizeof_dictkeyentry : (uint64_t)L->sizeof_dictunicodeentry;
	uint64_t kofs = general ? 8 : 0; /* PyDictKeyEntry: hash, key, value */
	uint64_t entries = keys + (uint64_t)L->dictkeys_indices + indices;

	if (values) {
		uint8_t order[256];
		int64_t n;
		uint64_t slots;
		if (split_order(c, values, nentries, order, &n, &slots) != 0)
			return -1;
		for (int64_t i = 0; i < n; i++) {
			uint64_t k, v;
			if (order[i] >= nentries)
				return -1;
			if (py_rd_ptr(c, entries + order[i] * esize + kofs, &k) != 0 ||
			    py_rd_ptr(c, slots + 8 * (uint64_t)order[i], &v) != 0)
				return -1;
			if (k && v && fn(c, k, v, arg))
				return 0;
		}
		return 0;
	}
	/* a block of entries at a time, one read instead of two an entry (a
	 * lookup passes over many); entry by entry where the block is not
	 * all captured, to stop at the same entry */
	enum { BLOCK = 64, MAX_ESIZE = 32 };
	uint8_t block[BLOCK * MAX_ESIZE];
	bool blocks = esize >= kofs + 16 && esize <= MAX_ESIZE;
	for (int64_t i = 0; i < nentries;) {
		uint64_t nb = (uint64_t)(nentries - i) < BLOCK ? (uint64_t)(nentries - i) : BLOCK;
		bool whole = blocks && dump_read(c->d, entries + (uint64_t)i * esize, block, nb * esize) == PC_OK;
		for (uint64_t j = 0; j < nb; j++, i++) {
			uint64_t e = entries + (uint64_t)i * esize, k, v;
			if (whole) {
				memcpy(&k, block + j * esize + kofs, 8);
				memcpy(&v, block + j * esize + kofs + 8, 8);
			} else if (py_rd_ptr(c, e + kofs, &k) != 0 || py_rd_ptr(c, e + kofs + 8, &v) != 0) {
				return -1;
			}
			if (k == 0 || v == 0)
				continue;
			if (fn(c, k, v, arg))
				return 0;
		}
	}
	return 0;
}

int py_dict_items(struct py_ctx *c, uint64_t dict, py_dict_fn fn, void *arg)
{
	uint64_t keys, values;
	if (py_rd_ptr(c, dict + c->L->dict_keys, &keys) != 0 ||
	    py_rd_ptr(c, dict + c->L->dict_values, &values) != 0)
		return -1;
	return py_dict_keys_values(c, keys, values, fn, arg);
}

struct find_keys {
	const char *const *keys;
	uint64_t *values;   /* 0 until found */
	size_t n, left;
	size_t len[PY_MAX_LOOKUP];   /* strlen(keys[i]) */
	bool ascii[PY_MAX_LOOKUP];   /* keys[i] is ASCII and shorter than 256 bytes */
	bool all_ascii;
	uint64_t lengths[4];         /* a bit for each len[i] of an ASCII key */
};

/* The characters of the str KEY of LENGTH characters into RAW when it
 * has one byte a character: 1, or 0 when it has more, -1 when py_str_utf8
 * would not read it either. */
static int key_bytes(struct py_ctx *c, uint64_t key, int64_t length, char raw[256])
{
	int64_t n;
	unsigned kind;
	uint64_t data;
	if (str_chars(c, key, &n, &kind, &data) != NULL)
		return -1;
	if (kind != 1 || n != length || n >= 256)
		return 0;
	return dump_read(c->d, data, raw, (size_t)n) == PC_OK ? 1 : -1;
}

static int match_keys(struct py_ctx *c, uint64_t key, uint64_t value, void *arg)
{
	struct find_keys *f = arg;
	const char *why, *s = NULL;
	int64_t length;
	bool have_length = py_rd_i64(c, key + c->L->unicode_length, &length) == 0;
	/* most keys have none of the lengths looked for */
	if (f->all_ascii && (!have_length || (uint64_t)length >= 256 ||
			     !(f->lengths[(uint64_t)length / 64] >> ((uint64_t)length % 64) & 1)))
		return 0;
	/* a str of one byte a character is compared as it is: an ASCII key
	 * equals its UTF-8 (what py_str_utf8 gives) exactly when it equals
	 * those bytes (the UTF-8 of a character over 0x7f, or of the U+FFFD a
	 * NUL becomes, is no ASCII) */
	char raw[256];
	int bytes = 2;   /* key_bytes' answer; 2: not asked yet */
	for (size_t i = 0; i < f->n; i++) {
		if (f->values[i])
			continue;
		/* an ASCII key of LEN bytes is only ever the UTF-8 of a str of
		 * LEN characters: any other length is no match, and its
		 * characters need not be read (a module or attribute lookup
		 * passes over many keys) */
		if (f->ascii[i] && (!have_length || length != (int64_t)f->len[i]))
			continue;
		if (f->ascii[i] && bytes == 2 && (bytes = key_bytes(c, key, length, raw)) < 0)
			return 0;
		bool equal;
		if (f->ascii[i] && bytes == 1) {
			equal = memcmp(raw, f->keys[i], f->len[i]) == 0;
		} else {
			if (!s && !(s = py_str_utf8(c, key, 256, &why)))
				return 0;
			equal = strcmp(s, f->keys[i]) == 0;
		}
		if (equal) {
			f->values[i] = value;
			if (--f->left == 0)
				return 1;
		}
	}
	return 0;
}

int py_dict_get_strs(struct py_ctx *c, uint64_t dict, const char *const *keys, uint64_t *values, size_t n)
{
	struct find_keys f = { .keys = keys, .values = values, .n = n < PY_MAX_LOOKUP ? n : PY_MAX_LOOKUP };
	for (size_t i = 0; i < n; i++)
		values[i] = 0;
	f.all_ascii = true;
	for (size_t i = 0; i < f.n; i++) {
		f.len[i] = strlen(keys[i]);
		f.ascii[i] = f.len[i] < 256;
		for (const char *p = keys[i]; *p && f.ascii[i]; p++)
			f.ascii[i] = (unsigned char)*p < 0x80;
		if (f.ascii[i])
			f.lengths[f.len[i] / 64] |= 1ull << (f.len[i] % 64);
		f.all_ascii = f.all_ascii && f.ascii[i];
	}
	f.left = f.n;
	if (f.n)
		py_dict_items(c, dict, match_keys, &f);
	size_t found = 0;
	for (size_t i = 0; i < f.n; i++)
		found += values[i] != 0;
	return (int)found;
}

int py_dict_get_str(struct py_ctx *c, uint64_t dict, const char *key, uint64_t *value)
{
	uint64_t v;
	if (py_dict_get_strs(c, dict, &key, &v, 1) != 1)
		return -1;
	*value = v;
	return 0;
}

int py_module_dicts(struct py_ctx *c, uint64_t interp, const char *const *names, uint64_t *dicts, size_t n)
{
	const struct py_layout *L = c->L;
	uint64_t modules;
	for (size_t i = 0; i < n; i++)
		dicts[i] = 0;
	if (L->interp_modules < 0 || py_rd_ptr(c, interp + L->interp_modules, &modules) != 0 || !modules ||
	    py_dict_get_strs(c, modules, names, dicts, n) == 0)
		return 0;
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t mod = dicts[i];
		if (mod && (py_rd_ptr(c, mod + L->module_dict, &dicts[i]) != 0 || !dicts[i]))
			dicts[i] = 0;
		found += dicts[i] != 0;
	}
	return (int)found;
}

int py_module_dict(struct py_ctx *c, uint64_t interp, const char *name, uint64_t *dict)
{
	return py_module_dicts(c, interp, &name, dict, 1) == 1 ? 0 : -1;
}

/* ------------------------------------------------------------------------
 * set
 * ------------------------------------------------------------------------ */

int py_set_items(struct py_ctx *c, uint64_t set, size_t max, py_dict_fn fn, void *arg)
{
	const struct py_layout *L = c->L;
	int64_t used, mask;
	uint64_t table;
	if (py_rd_i64(c, set + L->set_used, &used) != 0 || py_rd_i64(c, set + L->set_mask, &mask) != 0 ||
	    py_rd_ptr(c, set + L->set_table, &table) != 0 || used < 0 || mask < 0 ||
	    mask > (1 << 26) || used > mask + 1)
		return -1;
	/* setentry: key, hash; unused slots NULL, deleted ones the dummy key;
	 * read a block of entries at a time (entry by entry where the block
	 * is not all captured, to stop at the same entry) */
	enum { BLOCK = 64, MAX_ESIZE = 32 };
	uint8_t block[BLOCK * MAX_ESIZE];
	uint64_t esize = (uint64_t)L->sizeof_setentry, first = 0, nb = 0;
	bool whole = false;
	size_t n = 0;
	for (int64_t i = 0; i <= mask && (int64_t)n < used && n < max; i++) {
		uint64_t key;
		if ((uint64_t)i >= first + nb && esize >= 8 && esize <= MAX_ESIZE) {
			first = (uint64_t)i;
			nb = (uint64_t)(mask - i + 1) < BLOCK ? (uint64_t)(mask - i + 1) : BLOCK;
			whole = dump_read(c->d, table + first * esize, block, nb * esize) == PC_OK;
		}
		if (whole && (uint64_t)i < first + nb)
			memcpy(&key, block + ((uint64_t)i - first) * esize, 8);
		else if (py_rd_ptr(c, table + (uint64_t)i * esize, &key) != 0)
			return -1;
		if (!key || key == c->set_dummy)
			continue;
		if (!c->set_dummy && py_type_of(c, key, NULL) == PYT_UNREADABLE)
			continue;
		n++;
		if (fn(c, key, 0, arg))
			return 0;
	}
	return 0;
}
