/* One open-addressing table keyed by a non-zero address, for every cache
 * and cycle check: a set of visited frames and threads is a table of bare
 * keys; the code-object cache is a table of struct py_code, and the native
 * frames' cache one of struct pc_frames, each with the address first. */
#ifndef PYCORE_UTIL_ADDRTAB_H
#define PYCORE_UTIL_ADDRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrtab {
	unsigned char *slots;
	size_t n, cap;
	size_t esize;                /* bytes of one entry; its first 8 are the key */
	bool dense;                  /* kept up to 3/4 full, not 1/2: less memory for a
					few more probes (the heap census's index) */
};

#define ADDRTAB_INIT(type) { NULL, 0, 0, sizeof(type), false }
#define ADDRTAB_INIT_DENSE(type) { NULL, 0, 0, sizeof(type), true }

/* The entry for KEY (non-zero): *FOUND says whether it was there; a new
 * one is zeroed but for its key.  NULL when out of memory.  Entries move
 * when the table grows: a pointer is valid until the next call. */
void *addrtab_get(struct addrtab *t, uint64_t key, bool *found);

/* The entry for KEY, NULL when there is none (nothing added). */
void *addrtab_find(const struct addrtab *t, uint64_t key);

/* Start fetching the slot where KEY's entry is or would be into the
 * cache, for a get or find soon after (a hint: nothing changes). */
void addrtab_prefetch(const struct addrtab *t, uint64_t key);

/* Add KEY to a set: 1 if it was there already, 0 if added, -1 when out
 * of memory. */
int addrtab_add(struct addrtab *t, uint64_t key);

/* Slot I of the table (0 <= I < t->cap): its entry, or NULL when empty;
 * for freeing what entries own. */
void *addrtab_slot(const struct addrtab *t, size_t i);

void addrtab_free(struct addrtab *t);

#endif
