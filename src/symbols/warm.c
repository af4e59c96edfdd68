/* The warm look-ups (warm.h): a short list of module files, each with the
 * names asked of it. */
#include "symbols/warm.h"

#include <stdlib.h>
#include <string.h>

struct warm_name {
	char *name;
	uint64_t rel;                /* address - the module's start (modulo 2^64) */
	uint64_t size;
	bool found;
};

/* an address's name, WARM_ADDR */
struct warm_addr {
	uint64_t rel;                /* the look-up address - the module's start */
	char *name;                  /* NULL: none */
};

#define MAX_ADDRS 65536

struct warm_module {
	struct warm_module *next;
	enum warm_kind kind;
	char *path;
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t head, span;         /* start - base, end - start */
	bool failed;                 /* the look-up returned -1 */
	bool opened;
	struct warm_name *names;
	size_t n, cap;
	struct warm_addr *addrs;
	size_t naddrs, capaddrs;
};

static bool enabled;
static struct warm_module *modules;

void symbols_warm_enable(void)
{
	enabled = true;
}

bool symbols_warm_enabled(void)
{
	return enabled;
}

static struct warm_module *find(enum warm_kind kind, const struct dump_module *m, const char *path)
{
	for (struct warm_module *w = modules; w; w = w->next)
		if (w->kind == kind && w->head == m->start - m->base && w->span == m->end - m->start &&
		    w->build_id_len == m->build_id_len && memcmp(w->build_id, m->build_id, m->build_id_len) == 0 &&
		    strcmp(w->path, path) == 0)
			return w;
	return NULL;
}

static const struct warm_name *name_of(const struct warm_module *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->names[i].name, name) == 0)
			return &w->names[i];
	return NULL;
}

bool symbols_warm_get(enum warm_kind kind, const struct dump_module *m, const char *path,
		      struct symbol_want *want, size_t n, int *result, bool *opened)
{
	const struct warm_module *w = enabled && path ? find(kind, m, path) : NULL;
	if (!w)
		return false;
	*opened = w->opened;
	if (w->failed) {
		*result = -1;
		return true;
	}
	for (size_t k = 0; k < n; k++)
		if (!name_of(w, want[k].name))
			return false;
	int found = 0;
	for (size_t k = 0; k < n; k++) {
		const struct warm_name *e = name_of(w, want[k].name);
		want[k].addr = 0;
		if (e->found) {
			/* a cold look-up leaves an absent name's size as it was */
			want[k].addr = e->rel + m->start;
			want[k].size = e->size;
			found++;
		}
	}
	*result = found;
	return true;
}

static struct warm_module *add(enum warm_kind kind, const struct dump_module *m, const char *path)
{
	if (m->build_id_len > sizeof(((struct warm_module *)0)->build_id))
		return NULL;
	struct warm_module *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return NULL; /* only the next look-up is slower */
	}
	w->kind = kind;
	memcpy(w->build_id, m->build_id, m->build_id_len);
	w->build_id_len = m->build_id_len;
	w->head = m->start - m->base;
	w->span = m->end - m->start;
	w->next = modules;
	modules = w;
	return w;
}

bool symbols_warm_name_get(const struct dump_module *m, const char *path, uint64_t lookup, const char **name)
{
	const struct warm_module *w = enabled && path ? find(WARM_ADDR, m, path) : NULL;
	for (size_t i = 0; w && i < w->naddrs; i++) {
		if (w->addrs[i].rel == lookup - m->start) {
			*name = w->addrs[i].name;
			return true;
		}
	}
	return false;
}

void symbols_warm_name_put(const struct dump_module *m, const char *path, uint64_t lookup, const char *name)
{
	if (!enabled || !path)
		return;
	struct warm_module *w = find(WARM_ADDR, m, path);
	if (!w && !(w = add(WARM_ADDR, m, path)))
		return;
	if (w->naddrs == w->capaddrs) {
		size_t cap = w->capaddrs ? 2 * w->capaddrs : 64;
		struct warm_addr *a = cap <= MAX_ADDRS ? realloc(w->addrs, cap * sizeof(*a)) : NULL;
		if (!a)
			return;
		w->addrs = a;
		w->capaddrs = cap;
	}
	char *copy = name ? strdup(name) : NULL;
	if (name && !copy)
		return;
	w->addrs[w->naddrs++] = (struct warm_addr){ lookup - m->start, copy };
}

void symbols_warm_put(enum warm_kind kind, const struct dump_module *m, const char *path,
		      const struct symbol_want *want, size_t n, int result, bool opened)
{
	if (!enabled || !path)
		return;
	struct warm_module *w = find(kind, m, path);
	if (!w && !(w = add(kind, m, path)))
		return;
	w->opened = w->opened || opened;
	if (result < 0) {
		w->failed = true;
		return;
	}
	for (size_t k = 0; k < n; k++) {
		if (name_of(w, want[k].name))
			continue;
		if (w->n == w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 32;
			struct warm_name *names = realloc(w->names, cap * sizeof(*names));
			if (!names)
				return;
			w->names = names;
			w->cap = cap;
		}
		char *name = strdup(want[k].name);
		if (!name)
			return;
		w->names[w->n++] = (struct warm_name){ name, want[k].addr - m->start, want[k].size, want[k].addr != 0 };
	}
}
