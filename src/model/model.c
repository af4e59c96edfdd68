/* The model's arena and containers. */
#include "model/model.h"
#include "util/addrtab.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunks of at least 64 KiB; larger requests get a chunk of their own. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

struct arena *arena_new(void)
{
	return calloc(1, sizeof(struct arena));
}

void arena_free(struct arena *a)
{
	if (!a)
		return;
	struct chunk *c = a->head;
	while (c) {
		struct chunk *n = c->next;
		free(c);
		c = n;
	}
	free(a);
}

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	struct chunk *c = a->head;
	if (!c || c->size - c->used < n) {
		size_t size = n > 65536 ? n : 65536;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static char *arena_vprintf(struct arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static char *arena_vprintf(struct arena *a, const char *fmt, va_list ap)
{
	char *tmp = NULL;
	if (vasprintf(&tmp, fmt, ap) < 0)
		return NULL;
	char *p = arena_strdup(a, tmp);
	free(tmp);
	return p;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

int ptrvec_push(struct arena *a, struct ptrvec *v, void *item)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		void **items = arena_alloc(a, cap * sizeof(*items));
		if (!items)
			return -1;
		if (v->n)
			memcpy(items, v->items, v->n * sizeof(*items));
		v->items = items;
		v->cap = cap;
	}
	v->items[v->n++] = item;
	return 0;
}

struct model_report *model_report_new(void)
{
	struct arena *a = arena_new();
	if (!a)
		return NULL;
	struct model_report *r = arena_alloc(a, sizeof(*r));
	if (!r) {
		arena_free(a);
		return NULL;
	}
	r->arena = a;
	r->pid = r->ppid = r->uid = r->gid = -1;
	r->crashed_tid = -1;
	r->stopped_ms = -1;
	r->input_kind = "dump";
	return r;
}

void model_report_free(struct model_report *r)
{
	if (r)
		arena_free(r->arena);
}

void model_warn(struct model_report *r, const char *fmt, ...)
{
	if (r->warnings.n >= 1000)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *p = arena_vprintf(r->arena, fmt, ap);
	va_end(ap);
	if (p)
		ptrvec_push(r->arena, &r->warnings, p);
}

bool model_report_incomplete(const struct model_report *r)
{
	if (r->incomplete)
		return true;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (t->error || (t->exception && (t->exception->error || !t->exception->type)))
				return true;
		}
	}
	return false;
}

/* Where an object's attributes were first listed. */
struct first_listed {
	uint64_t address;
	int64_t tid;
	size_t frame;
	const struct model_frame *f;
};

int model_share_attributes(struct model_report *r)
{
	struct addrtab seen = ADDRTAB_INIT(struct first_listed);
	int rc = 0;
	for (size_t i = 0; i < r->interps.n && !rc; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n && !rc; k++) {
			const struct model_thread *t = mi->threads.items[k];
			for (size_t n = 0; n < t->frames.n && !rc; n++) {
				const struct model_frame *f = t->frames.items[n];
				for (size_t v = 0; v < f->locals.n; v++) {
					struct model_local *l = f->locals.items[v];
					bool found;
					if (!l->has_attributes || !l->address)
						continue;
					struct first_listed *e = addrtab_get(&seen, l->address, &found);
					if (!e) {
						rc = -1;
						break;
					}
					if (!found) {
						*e = (struct first_listed){ l->address, t->tid, n, f };
						continue;
					}
					l->has_attributes = false;
					l->attributes = (struct ptrvec){ 0 };
					l->attributes_elsewhere = true;
					l->attributes_thread = e->tid;
					l->attributes_frame = e->frame;
					l->attributes_at = e->f;
				}
			}
		}
	}
	addrtab_free(&seen);
	return rc;
}

const struct model_thread *model_find_thread(const struct model_report *r, int64_t tid, uint64_t ident)
{
	for (size_t i = 0; (tid >= 0 || ident) && i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (tid >= 0 ? t->tid == tid : t->ident == ident)
				return t;
		}
	}
	return NULL;
}
