/* The walk's one hash table (addrtab.h): linear probing, kept at most half
 * full (a dense one three quarters), grown by doubling. */
#include "util/addrtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/hugeheap.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint64_t key_at(const struct addrtab *t, size_t i)
{
	uint64_t k;
	memcpy(&k, t->slots + i * t->esize, 8);
	return k;
}

static int grow(struct addrtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	unsigned char *slots = calloc(cap, t->esize);
	if (!slots)
		return -1;
	if (cap * t->esize >= (8u << 20))
		hugeheap_advise(slots, cap * t->esize);
	for (size_t i = 0; i < t->cap; i++) {
		uint64_t k = key_at(t, i);
		if (!k)
			continue;
		size_t j = mix(k) & (cap - 1);
		for (;;) {
			uint64_t there;
			memcpy(&there, slots + j * t->esize, 8);
			if (!there)
				break;
			j = (j + 1) & (cap - 1);
		}
		memcpy(slots + j * t->esize, t->slots + i * t->esize, t->esize);
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

void *addrtab_get(struct addrtab *t, uint64_t key, bool *found)
{
	if (!key || t->esize < 8 || ((t->dense ? t->n * 4 >= t->cap * 3 : t->n * 2 >= t->cap) && grow(t) != 0))
		return NULL;
	size_t j = mix(key) & (t->cap - 1);
	for (;;) {
		uint64_t k = key_at(t, j);
		unsigned char *e = t->slots + j * t->esize;
		if (k == key) {
			*found = true;
			return e;
		}
		if (!k) {
			memcpy(e, &key, 8);
			t->n++;
			*found = false;
			return e;
		}
		j = (j + 1) & (t->cap - 1);
	}
}

void *addrtab_find(const struct addrtab *t, uint64_t key)
{
	if (!key || !t->cap)
		return NULL;
	for (size_t j = mix(key) & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
		uint64_t k = key_at(t, j);
		if (k == key)
			return t->slots + j * t->esize;
		if (!k)
			return NULL;
	}
}

void addrtab_prefetch(const struct addrtab *t, uint64_t key)
{
	if (t->cap)
		__builtin_prefetch(t->slots + (mix(key) & (t->cap - 1)) * t->esize);
}

int addrtab_add(struct addrtab *t, uint64_t key)
{
	bool found;
	if (!key)
		return 0; /* NULL ends every chain the walk follows: never a loop */
	if (!addrtab_get(t, key, &found))
		return -1;
	return found ? 1 : 0;
}

void *addrtab_slot(const struct addrtab *t, size_t i)
{
	return i < t->cap && key_at(t, i) ? t->slots + i * t->esize : NULL;
}

void addrtab_free(struct addrtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->n = t->cap = 0;
}
