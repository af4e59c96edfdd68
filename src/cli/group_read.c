/* pycore group's second thread (group_read.h). */
#include "cli/group_read.h"

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

struct group_reader {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct group_batch *job;     /* posted, until read */
	bool quit;
	const struct jsonl_keep *keep;
};

static int batch_grow(struct group_batch *b)
{
	size_t cap = b->cap ? 2 * b->cap : 256;
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

static void *reader_main(void *arg)
{
	struct group_reader *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->job && !r->quit)
			pthread_cond_wait(&r->cv, &r->mu);
		if (!r->job)
			break;
		struct group_batch *b = r->job;
		pthread_mutex_unlock(&r->mu);
		/* each line split then read at once, while its bytes are in cache */
		for (const char *q = b->from; !b->oom && q < b->to;) {
			const char *nl = memchr(q, '\n', (size_t)(b->to - q));
			if (!(b->oom = b->n == b->cap && batch_grow(b) != 0)) {
				b->line[b->n] = q;
				b->len[b->n] = (size_t)(nl - q + 1);
				size_t n = group_line_text(q, b->len[b->n]);
				b->rec[b->n++] = n ? jsonl_scan(q, n, r->keep) : NULL;
				q = nl + 1;
			}
		}
		pthread_mutex_lock(&r->mu);
		r->job = NULL;
		pthread_cond_broadcast(&r->cv);
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
		free(r);
		return NULL;
	}
	return r;
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
	free(r);
}

void group_reader_post(struct group_reader *r, struct group_batch *b)
{
	pthread_mutex_lock(&r->mu);
	r->job = b;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

void group_reader_wait(struct group_reader *r)
{
	pthread_mutex_lock(&r->mu);
	while (r->job)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}
