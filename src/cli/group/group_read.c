/* pycore group's second thread (group_read.h). */
#include "cli/group/group_read.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

size_t group_line_text(const char *line, size_t n)
{
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	size_t blank = 0;
	while (blank < n && (line[blank] == ' ' || line[blank] == '\t'))
		blank++;
	return blank == n ? 0 : n;
}

/* chunks dealt and not yet released, at most */
#define NSLOTS 8

struct group_reader {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* any change: a chunk read, released, a window */
	const struct jsonl_keep *keep;
	const char *next, *end;      /* the window's lines not dealt yet */
	size_t chunk;
	struct group_batch slot[NSLOTS];
	size_t head, tail;           /* dealt: slot[head..tail) modulo NSLOTS, in order */
	bool quit;
};

static int batch_grow(struct group_batch *b)
{
	size_t cap = b->cap ? 2 * b->cap : 64;
	const char **line = realloc(b->line, cap * sizeof(*line));
	if (line)
		b->line = line;
	size_t *len = line ? realloc(b->len, cap * sizeof(*len)) : NULL;
	if (len)
		b->len = len;
	json_t **rec = len ? realloc(b->rec, cap * sizeof(*rec)) : NULL;
	if (!rec)
		return -1;
	b->rec = rec;
	b->cap = cap;
	return 0;
}

/* B's lines split and read, each at once while its bytes are in cache. */
static void batch_read(struct group_batch *b, const struct jsonl_keep *keep)
{
	for (const char *q = b->from; !b->oom && q < b->to;) {
		const char *nl = memchr(q, '\n', (size_t)(b->to - q));
		if (!(b->oom = b->n == b->cap && batch_grow(b) != 0)) {
			b->line[b->n] = q;
			b->len[b->n] = (size_t)(nl - q + 1);
			size_t n = group_line_text(q, b->len[b->n]);
			b->rec[b->n++] = n ? jsonl_scan(q, n, keep) : NULL;
			q = nl + 1;
		}
	}
}

/* The records of a chunk added and released, freed.  By the thread
 * that made them wherever it can: glibc frees another thread's chunks
 * under that thread's arena lock, which its own mallocs then wait for
 * (measured: group over a million records took 2.2 times as long when
 * group.c's thread freed them all). */
static void drop_records(struct group_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		json_decref(b->rec[i]);
	b->n = 0;
	b->held = false;
}

/* The next chunk of the window dealt (under the lock) to the reader
 * (BY_READER) or group.c's thread, NULL none now. */
static struct group_batch *deal(struct group_reader *r, bool by_reader)
{
	if (r->next >= r->end || r->tail - r->head == NSLOTS)
		return NULL;
	struct group_batch *b = &r->slot[r->tail++ % NSLOTS];
	if (b->held)
		drop_records(b); /* (the other thread's, seldom: the reader drops its own first) */
	b->by_reader = by_reader;
	const char *to = r->end;
	if ((size_t)(r->end - r->next) > r->chunk) {
		const char *nl = memchr(r->next + r->chunk, '\n', (size_t)(r->end - r->next - r->chunk));
		to = nl ? nl + 1 : r->end;
	}
	b->from = r->next;
	b->to = to;
	b->n = 0;
	b->oom = false;
	b->done = false;
	r->next = to;
	return b;
}

/* One chunk dealt and read, the lock (held on entry and on return)
 * released meanwhile; false when there is none to deal. */
static bool read_one(struct group_reader *r, bool by_reader)
{
	struct group_batch *b = deal(r, by_reader);
	if (!b)
		return false;
	pthread_mutex_unlock(&r->mu);
	batch_read(b, r->keep);
	pthread_mutex_lock(&r->mu);
	b->done = true;
	pthread_cond_broadcast(&r->cv);
	return true;
}

static void *reader_main(void *arg)
{
	struct group_reader *r = arg;
	pthread_mutex_lock(&r->mu);
	while (!r->quit) {
		for (size_t i = 0; i < NSLOTS; i++)
			if (r->slot[i].held && r->slot[i].by_reader)
				drop_records(&r->slot[i]);
		if (!read_one(r, true))
			pthread_cond_wait(&r->cv, &r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	jsonl_scan_end();            /* this thread's shared frames and buffers */
	return NULL;
}

/* A second thread when there is a second processor; NULL none. */
struct group_reader *group_reader_start(const struct jsonl_keep *keep)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return NULL;
	struct group_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->keep = keep;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (pthread_create(&r->thread, NULL, reader_main, r) != 0) {
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
		free(r);
		return NULL;
	}
	return r;
}

void group_reader_window(struct group_reader *r, const char *from, const char *to, size_t chunk)
{
	pthread_mutex_lock(&r->mu);
	r->next = from;
	r->end = to;
	r->chunk = chunk ? chunk : 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

struct group_batch *group_reader_next(struct group_reader *r)
{
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (r->head < r->tail && r->slot[r->head % NSLOTS].done)
			break;
		if (r->head == r->tail && r->next >= r->end) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		/* the next in order is being read: read one after it meanwhile */
		if (!read_one(r, false))
			pthread_cond_wait(&r->cv, &r->mu);
	}
	struct group_batch *b = &r->slot[r->head % NSLOTS];
	pthread_mutex_unlock(&r->mu);
	return b;
}

void group_reader_release(struct group_reader *r, struct group_batch *b)
{
	if (!b->by_reader)
		drop_records(b); /* (the slot is this thread's until head moves) */
	pthread_mutex_lock(&r->mu);
	b->held = b->n > 0;
	r->head++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

void group_reader_cancel(struct group_reader *r)
{
	pthread_mutex_lock(&r->mu);
	r->next = r->end;
	pthread_mutex_unlock(&r->mu);
}

void group_reader_stop(struct group_reader *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->quit = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	for (size_t i = 0; i < NSLOTS; i++) {
		drop_records(&r->slot[i]);
		free(r->slot[i].line);
		free(r->slot[i].len);
		free(r->slot[i].rec);
	}
	free(r);
}
