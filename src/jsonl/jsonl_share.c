/* The values jsonl_scan shares among records (jsonl_share.h). */
#include "jsonl/jsonl_share.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SIZE 32768

struct cached {
	uint64_t hash;
	char *sig;
	size_t len;
	const struct jsonl_keep *keep; /* a whole text's: what it was pruned to; NULL a signature's */
	int depth;                   /* a whole text's: its containers' nesting, itself included */
	json_t *value;
};

/* each thread's own (group reads lines in two) */
static _Thread_local struct cached *cache;
static _Thread_local size_t ncached;

/* The hashes of objects met once, for each thread: an object is put in
 * the table when met a second time only, so that those met once (a
 * report's "input" with its own path) cost no copy and do not crowd the
 * table out of the frames met again and again. */
#define MET_SLOTS 8192
static _Thread_local uint64_t *met;

static bool met_before(uint64_t hash)
{
	if (!met && !(met = calloc(MET_SLOTS, sizeof(*met))))
		return true;
	uint64_t *m = &met[hash & (MET_SLOTS - 1)];
	if (*m == hash)
		return true;
	*m = hash;
	return false;
}

/* long containers' texts (skipped, or read under a KEEP into a value):
 * each thread's own; SKIP_PROBE slots looked at from a hash's, at most
 * SKIP_BYTES of text, then all dropped */
#define SKIP_SLOTS 4096
#define SKIP_PROBE 8
#define SKIP_BYTES ((size_t)8 << 20)

struct skipped {
	uint64_t hash;
	size_t len;
	int nest;
	unsigned char *text;
	const struct jsonl_keep *keep; /* NULL: skipped */
	json_t *value;               /* what it was read into (KEEP's) */
};

static _Thread_local struct skipped *skips;
static _Thread_local size_t nskips, skip_bytes;
static _Thread_local unsigned long nfound[JSONL_MAX_DEPTH + 1];

unsigned long jsonl_share_long_found(int depth)
{
	return depth >= 0 && depth <= JSONL_MAX_DEPTH ? nfound[depth] : 0;
}

static void skips_drop(void)
{
	for (size_t i = 0; skips && i < SKIP_SLOTS; i++) {
		free(skips[i].text);
		json_decref(skips[i].value);
	}
	free(skips);
	skips = NULL;
	nskips = skip_bytes = 0;
}

size_t jsonl_share_long_get(const unsigned char *at, size_t room, uint64_t hash, const struct jsonl_keep *keep,
			    int depth, int *nest, json_t **value)
{
	if (!skips)
		return 0;
	size_t i = hash & (SKIP_SLOTS - 1);
	for (int k = 0; k < SKIP_PROBE && skips[i].text; k++, i = (i + 1) & (SKIP_SLOTS - 1)) {
		const struct skipped *c = &skips[i];
		/* its last bytes first: a container like another but for its
		 * last members (a report's "process" of another dump) fails there */
		size_t tail = c->len < 16 ? c->len : 16;
		if (c->hash == hash && c->keep == keep && c->len <= room && depth + c->nest <= JSONL_MAX_DEPTH &&
		    memcmp(c->text + c->len - tail, at + c->len - tail, tail) == 0 && memcmp(c->text, at, c->len) == 0) {
			*nest = c->nest;
			if (value)
				*value = c->value;
			nfound[depth]++;
			return c->len;
		}
	}
	return 0;
}

/* The nesting of TEXT (LEN bytes, a container checked): containers
 * outside its strings. */
static int nesting(const unsigned char *text, size_t len)
{
	int depth = 0, deepest = 0;
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '{' || c == '[') {
			if (++depth > deepest)
				deepest = depth;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return deepest;
}

void jsonl_share_long_put(const unsigned char *text, size_t len, uint64_t hash, const struct jsonl_keep *keep,
			  int nest, json_t *value)
{
	if (len > SKIP_BYTES / 4)
		return;
	/* met a second time only: a container of one report alone is never
	 * copied */
	if (!met_before(jsonl_share_hash((const char *)text, len) ^ (uintptr_t)keep ^ 2))
		return;
	if (skips && (nskips >= SKIP_SLOTS / 2 || skip_bytes + len > SKIP_BYTES))
		skips_drop();
	if (!skips && !(skips = calloc(SKIP_SLOTS, sizeof(*skips))))
		return;
	/* an empty slot among the probed, else the first (dropped) */
	size_t i = hash & (SKIP_SLOTS - 1), at = i;
	for (int k = 0; k < SKIP_PROBE; k++, i = (i + 1) & (SKIP_SLOTS - 1)) {
		if (!skips[i].text) {
			at = i;
			break;
		}
		if (skips[i].hash == hash && skips[i].keep == keep && skips[i].len == len &&
		    memcmp(skips[i].text, text, len) == 0)
			return;
	}
	unsigned char *copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, text, len);
	if (nest < 0)
		nest = nesting(text, len);
	struct skipped *c = &skips[at];
	if (c->text) {
		skip_bytes -= c->len;
		free(c->text);
		json_decref(c->value);
	} else {
		nskips++;
	}
	*c = (struct skipped){ hash, len, nest, copy, keep, json_incref(value) };
	skip_bytes += len;
}

static void cache_drop(void)
{
	for (size_t i = 0; cache && i < CACHE_SIZE; i++) {
		free(cache[i].sig);
		json_decref(cache[i].value);
	}
	free(cache);
	cache = NULL;
	ncached = 0;
}

void jsonl_share_drop(void)
{
	cache_drop();
	skips_drop();
	free(met);
	met = NULL;
}

/* A hash of the table's own (not stored, not an interface): 8 bytes at a
 * time, multiplied and folded. */
uint64_t jsonl_share_hash(const char *p, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t a = 0xcbf29ce484222325ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL;
	/* two lanes of 8 bytes, so that the multiplications overlap; the
	 * last bytes in one word of their own */
	for (; n >= 16; p += 16, n -= 16) {
		uint64_t w, v;
		memcpy(&w, p, 8);
		memcpy(&v, p + 8, 8);
		a = (a ^ w) * k;
		b = (b ^ v) * k;
		a ^= a >> 31;
		b ^= b >> 31;
	}
	if (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		a = (a ^ w) * k;
		a ^= a >> 31;
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	if (n)
		memcpy(&w, p, n);    /* an empty signature may have no buffer yet */
	b = (b ^ w ^ n) * k;
	uint64_t h = (a ^ (b >> 29)) * 0xbf58476d1ce4e5b9ULL ^ b;
	h = (h ^ (h >> 32)) * k;
	return h ^ (h >> 29);
}

static struct cached *cache_slot(const char *sig, size_t len, uint64_t hash, const struct jsonl_keep *keep)
{
	if (!cache && !(cache = calloc(CACHE_SIZE, sizeof(*cache))))
		return NULL;
	size_t i = hash & (CACHE_SIZE - 1);
	while (cache[i].sig && (cache[i].hash != hash || cache[i].len != len || cache[i].keep != keep ||
				(len && memcmp(cache[i].sig, sig, len) != 0)))
		i = (i + 1) & (CACHE_SIZE - 1);
	return &cache[i];
}

json_t *jsonl_share_sig_get(const char *sig, size_t len, uint64_t hash)
{
	struct cached *c = cache_slot(sig, len, hash, NULL);
	return c && c->sig ? c->value : NULL;
}

void jsonl_share_sig_put(const char *sig, size_t len, uint64_t hash, json_t *o)
{
	const struct jsonl_keep *keep = NULL;
	if (!met_before(hash))
		return;
	struct cached *c = cache_slot(sig, len, hash, keep);
	if (c && c->sig)
		return;
	if (c && ncached >= CACHE_SIZE / 2) {
		cache_drop();
		c = cache_slot(sig, len, hash, keep);
	}
	char *copy = c ? malloc(len ? len : 1) : NULL;
	if (copy) {
		if (len)
			memcpy(copy, sig, len);
		*c = (struct cached){ hash, copy, len, keep, 0, json_incref(o) };
		ncached++;
	}
}

/* The text read before (under KEEP, keyed HASH) that the ROOM bytes at
 * AT begin with, its nesting fitting below JSONL_MAX_DEPTH from DEPTH (the
 * object's own); NULL none. */
json_t *jsonl_share_text_get(const unsigned char *at, size_t room, uint64_t hash, const struct jsonl_keep *keep,
			     int depth, size_t *len)
{
	if (!cache)
		return NULL;
	for (size_t i = hash & (CACHE_SIZE - 1); cache[i].sig; i = (i + 1) & (CACHE_SIZE - 1)) {
		struct cached *c = &cache[i];
		if (c->hash == hash && c->keep == keep && c->len <= room && depth + c->depth - 1 <= JSONL_MAX_DEPTH &&
		    memcmp(c->sig, at, c->len) == 0) {
			*len = c->len;
			return c->value;
		}
	}
	return NULL;
}

/* TEXT (LEN bytes, an object checked and read under KEEP into O) into the
 * table, keyed HASH, when not there yet. */
void jsonl_share_text_put(const unsigned char *text, size_t len, uint64_t hash, const struct jsonl_keep *keep,
			  json_t *o)
{
	if (!met_before(hash ^ 1))
		return;
	int deepest = nesting(text, len);
	if (!cache || ncached >= CACHE_SIZE / 2) {
		cache_drop();
		if (!(cache = calloc(CACHE_SIZE, sizeof(*cache))))
			return;
	}
	size_t i = hash & (CACHE_SIZE - 1);
	for (; cache[i].sig; i = (i + 1) & (CACHE_SIZE - 1))
		if (cache[i].hash == hash && cache[i].keep == keep && cache[i].len == len &&
		    memcmp(cache[i].sig, text, len) == 0)
			return;
	char *copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, text, len);
	cache[i] = (struct cached){ hash, copy, len, keep, deepest, json_incref(o) };
	ncached++;
}

/* Whether every member KEEP names is kept whole: its object, when all
 * its kept members are scalars, may be shared. */
bool jsonl_keeps_whole(const struct jsonl_keep *keep)
{
	for (; keep->key; keep++)
		if (keep->sub)
			return false;
	return true;
}

