/* The set of blocks an analysis's reads were served from out of the
 * dump's own bytes (dump_record_start; segments.c notes each read here):
 * what dump_save writes.  Calls nothing of the dump's. */
#include "dump_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The set of blocks
 * ------------------------------------------------------------------------ */

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static bool grow(struct dump_record *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	uint64_t *s = calloc(cap, sizeof(*s));
	if (!s)
		return false;
	for (size_t i = 0; i < r->cap; i++) {
		if (!r->slots[i])
			continue;
		size_t k = slot_of(r->slots[i], cap);
		while (s[k])
			k = (k + 1) & (cap - 1);
		s[k] = r->slots[i];
	}
	free(r->slots);
	r->slots = s;
	r->cap = cap;
	return true;
}

static void add_page(struct dump_record *r, uint64_t page)
{
	if (r->n * 2 >= r->cap && !grow(r)) {
		r->failed = true;
		return;
	}
	uint64_t key = page + 1;
	size_t k = slot_of(key, r->cap);
	while (r->slots[k]) {
		if (r->slots[k] == key)
			return;
		k = (k + 1) & (r->cap - 1);
	}
	r->slots[k] = key;
	r->n++;
}

void dump_record_note(struct dump_record *r, uint64_t addr, size_t len)
{
	if (len == 0)
		return;
	uint64_t first = addr / DUMP_RECORD_GRAIN, last = (addr + len - 1) / DUMP_RECORD_GRAIN;
	/* most reads fall in the page the last one did */
	if (first == last && r->last == first + 1)
		return;
	for (uint64_t pg = first; pg <= last; pg++)
		add_page(r, pg);
	r->last = last + 1;
}

enum pc_code dump_record_start(struct dump *d)
{
	if (d->p->rec)
		return PC_OK;
	d->p->rec = calloc(1, sizeof(*d->p->rec));
	return d->p->rec && grow(d->p->rec) ? PC_OK : PC_ENOMEM;
}

void dump_record_free(struct dump_record *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t *dump_record_pages(struct dump_record *r, size_t *n)
{
	uint64_t *v = malloc((r->n ? r->n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < r->cap; i++)
		if (r->slots[i])
			v[k++] = r->slots[i] - 1;
	qsort(v, k, sizeof(*v), u64_cmp);
	*n = k;
	return v;
}

