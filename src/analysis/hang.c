/* What each thread did across the reads of a process (samples.h's
 * samples_classify), and the process's findings.  A class is made only
 * when every read the thread is in supports it; a thread seen in fewer
 * than two reads is "not-enough-samples".
 *
 *   deadlocked   in a wait cycle (report_summary's) in every read
 *   waiting      the same stack in every read, waiting on an object pycore
 *                reads (a lock, a queue, a condition, a thread joined), or
 *                for the GIL (--native: in take_gil)
 *   idle         waiting so, in a pool's worker (concurrent.futures,
 *                multiprocessing.pool): a worker with no work
 *   busy-c-gil   the same Python stack in every read, the GIL held in
 *                every one, and its native frames (--native) in the same C
 *                call under it in every one: one C call that keeps the GIL
 *                (without native frames that is "stuck": a loop that every
 *                read catches at one instruction looks the same)
 *   blocked      the same stack in every read, the GIL held in none, no
 *                wait pycore knows: a C call that released it (I/O, sleep,
 *                a C library's wait)
 *   spinning     the same stack in every read, the GIL held in not all,
 *                yet CPU time used between them (a live process: 10% of a CPU
 *                or more): a retry loop, a livelock, work in C without
 *                the GIL
 *   stuck        the same stack in every read, the GIL held in some
 *   busy-python  its Python stack differs between reads, or native frames
 *                show it running bytecode: it runs Python
 *
 * A free-threaded build has no GIL to prove that a thread ran: its CPU time
 * between the reads of a live process does (10% of a CPU or more), and
 *   busy-c       the same Python stack in every read, running, and its
 *                native frames (--native) in the same C call in every one
 * stands for busy-c-gil; without native frames a running thread at one
 * place is spinning, one that is not blocked.  A dump records no CPU
 * time: there the registers do, where the kernel kept whether the thread
 * was inside a system call (blocked in every read) or not (running user
 * code in every read); else, or when the reads part, it is stuck (running
 * or blocked cannot be told). */
#include "analysis/samples.h"

#include <stdlib.h>
#include <string.h>

/* One thread's reads. */
struct acc {
	int64_t tid;
	const char *name;
	size_t present, gil, waits, deadlocked, stacks, gil_waits;
	size_t in_syscall, syscall_known;  /* reads in a system call; reads that say */
	bool instruction_unknown;    /* in a read of a CPython that does not record each one */
	size_t native, in_bytecode;  /* reads with native frames; of those, running bytecode */
	const char *c_entry, *c_inner;   /* the C call of the reads with native frames */
	size_t tasks;                /* reads in which one task, the same, ran at one place */
	char *timeline;              /* model_hang_thread's, malloc'd */
	const char *prev_stack;      /* its stack in its previous read */
	int64_t cpu_first, cpu_last; /* its CPU time at its first and last reads that have one */
	double at_first, at_last;    /* those reads' times */
	const char *task, *task_where;
	bool same_c;                 /* ... the same in all of them */
	const char *first_stack, *where, *wait, *wait_key;
	int64_t owner;
	const char *owner_name;
	bool same_wait;
};

static int by_tid(const void *x, const void *y)
{
	const struct model_hang_thread *a = *(const struct model_hang_thread *const *)x;
	const struct model_hang_thread *b = *(const struct model_hang_thread *const *)y;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static bool in_pool_worker(const char *stack)
{
	return stack && (strstr(stack, "/concurrent/futures/thread.py") || strstr(stack, "/multiprocessing/pool.py"));
}

static const char *owner_text(struct arena *a, const struct acc *c)
{
	if (c->owner < 0)
		return "";
	if (c->owner_name)
		return arena_printf(a, ", held by thread %lld \"%s\"", (long long)c->owner, c->owner_name);
	return arena_printf(a, ", held by thread %lld", (long long)c->owner);
}

/* A thread "blocked" at one place that used this share of a CPU between
 * its reads is not: it runs (a livelock, a stream read in C) */
#define SPINNING_SHARE 0.10

/* The share of one CPU C used between its first and last reads; -1
 * unknown (a dump: gcore records no thread's CPU time). */
static double busy_share(const struct acc *c)
{
	double wall = c->at_last - c->at_first;
	if (c->cpu_first < 0 || wall < 1 || c->cpu_last < c->cpu_first)
		return -1;
	return (double)(c->cpu_last - c->cpu_first) / 1e6 / wall;
}

/* A thread at one place in no known wait, on a build without a GIL
 * (the classes above). */
static void classify_nogil(struct arena *a, const struct acc *c, const char *of, const char *at,
			   struct model_hang_thread *h)
{
	/* whether it runs: its CPU time (a live read), else its registers in
	 * every read (a dump: inside a system call in all, or in none) */
	double busy = busy_share(c);
	bool said = c->syscall_known == c->present;
	int runs = busy >= 0 ? busy >= SPINNING_SHARE : !said ? -1 : c->in_syscall == c->present ? 0
		   : c->in_syscall == 0 ? 1 : -1;
	const char *cpu = busy >= 0 ? arena_printf(a, "%.0f%% of a CPU between them; no GIL in this build", 100 * busy)
		: runs ? "in no system call in any; no GIL in this build"
		       : "inside a system call in every one; no GIL in this build";
	if (runs < 0) {
		h->state = "stuck";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s, at %s: no GIL in this build, and "
					   "no CPU time in dumps%s, so running and blocked cannot be told", c->present, of,
					   at, said ? ", inside a system call in some only" : " nor whether it was in a system call");
	} else if (runs && c->native == c->present && c->same_c) {
		h->state = "busy-c";
		h->evidence = arena_printf(a, "ran in one C call in all %zu samples%s (%s): in %s, under %s, from %s",
					   c->present, of, cpu, c->c_inner, c->c_entry, at);
	} else if (runs && c->native == c->present) {
		h->state = "busy-python";
		h->evidence = arena_printf(a, "ran at one line in all %zu samples%s (%s), %s: %s", c->present, of, cpu, at,
					   c->in_bytecode ? arena_printf(a, "running its bytecode in %zu of them",
									  c->in_bytecode)
							  : "in other C calls from one sample to the next");
	} else if (runs) {
		h->state = "spinning";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s, yet running (%s): it comes back "
					   "to %s (a retry loop, a livelock, work in C; --native tells)", c->present, of, cpu,
					   at);
	} else {
		h->state = "blocked";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s (%s), in no wait pycore reads: a C "
					   "call from %s (I/O, sleep, a C library's wait)", c->present, of, cpu, at);
	}
}

static void classify_one(struct arena *a, const struct acc *c, size_t taken, bool nogil, struct model_hang_thread *h)
{
	/* (the reads' records are the caller's, freed after: copies) */
	h->tid = c->tid;
	h->name = arena_strdup(a, c->name);
	h->present = c->present;
	h->stacks = c->stacks;
	h->gil = c->gil;
	h->where = arena_strdup(a, c->where);
	h->timeline = arena_strdup(a, c->timeline);
	const char *at = c->where ? c->where : "no Python frame";
	/* a thread started or ended between the reads: its class is of the
	 * reads it is in, and says so */
	const char *of = c->present < taken ? arena_printf(a, " (seen in %zu of %zu)", c->present, taken) : "";
	if (c->present < 2) {
		h->state = "not-enough-samples";
		h->evidence = arena_printf(a, "seen in %zu of %zu samples: a class needs two", c->present, taken);
	} else if (c->deadlocked == c->present) {
		h->state = "deadlocked";
		h->evidence = arena_printf(a, "in a wait cycle in all %zu samples%s: waits on %s%s", c->present, of,
					   c->wait ? c->wait : "?", owner_text(a, c));
	} else if (c->stacks == 1 && c->waits == c->present && c->same_wait) {
		bool idle = in_pool_worker(c->first_stack);
		h->state = idle ? "idle" : "waiting";
		h->evidence = arena_printf(a, "%son %s%s, the same stack in all %zu samples%s, at %s",
					   idle ? "a pool's worker waiting for work " : "waits ", c->wait, owner_text(a, c),
					   c->present, of, at);
	} else if (nogil && c->stacks == 1) {
		classify_nogil(a, c, of, at, h);
	} else if (nogil) {
		h->state = "busy-python";
		h->evidence = arena_printf(a, "%zu different Python stacks in %zu samples%s: last at %s", c->stacks,
					   c->present, of, at);
	} else if (c->stacks == 1 && c->gil == c->present && c->native == c->present && c->same_c) {
		h->state = "busy-c-gil";
		h->evidence = arena_printf(a, "held the GIL in all %zu samples%s, in one C call in every one: in %s, "
					   "under %s, from %s", c->present, of, c->c_inner, c->c_entry, at);
	} else if (c->stacks == 1 && c->gil == c->present && c->native == c->present) {
		h->state = "busy-python";
		h->evidence = arena_printf(a, "held the GIL in all %zu samples%s at one line, %s: %s", c->present, of,
					   at, c->in_bytecode ? arena_printf(a, "running its bytecode in %zu of them",
									      c->in_bytecode)
							      : "in other C calls from one read to the next");
	} else if (c->stacks == 1 && c->gil == c->present) {
		/* without native frames, a loop that every read catches at one
		 * instruction (or, 3.9 and older, that records none) looks the
		 * same as one C call: neither is claimed */
		h->state = "stuck";
		h->evidence = arena_printf(a, "held the GIL in all %zu samples%s, its Python stack unchanged at %s: one "
					   "C call that keeps it, or a loop there (%s; --native tells)", c->present, of, at,
					   c->instruction_unknown ? "CPython 3.9 and older do not record each instruction"
								  : "the same instruction in every sample");
	} else if (c->stacks == 1 && c->gil < c->present && busy_share(c) >= SPINNING_SHARE) {
		h->state = "spinning";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s, the GIL held in %zu, yet it used "
					   "%.0f%% of a CPU between them: it runs and comes back to %s (a retry loop, a "
					   "livelock), or works in C without the GIL", c->present, of, c->gil,
					   100 * busy_share(c), at);
	} else if (c->stacks == 1 && c->gil == 0) {
		h->state = "blocked";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s, the GIL released, in no wait "
					   "pycore reads: a C call from %s (I/O, sleep, a C library's wait)", c->present, of, at);
	} else if (c->stacks == 1) {
		h->state = "stuck";
		h->evidence = arena_printf(a, "the same stack in all %zu samples%s, the GIL held in %zu: at %s",
					   c->present, of, c->gil, at);
	} else {
		h->state = "busy-python";
		h->evidence = arena_printf(a, "%zu different Python stacks in %zu samples%s, the GIL held in %zu: "
					   "last at %s", c->stacks, c->present, of, c->gil, at);
	}
}

/* The accumulated threads of READS: one per tid, in the order first seen. */
static struct acc *accumulate(const struct sample *reads, size_t n, size_t *count)
{
	size_t cap = 0;
	for (size_t i = 0; i < n; i++)
		cap += reads[i].n;
	struct acc *acc = calloc(cap ? cap : 1, sizeof(*acc));
	size_t m = 0;
	if (!acc)
		return NULL;
	/* stacks of one thread: compared against every earlier read's of it */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < reads[i].n; k++) {
			const struct sample_thread *t = &reads[i].threads[k];
			size_t j = 0;
			while (j < m && acc[j].tid != t->tid)
				j++;
			struct acc *c = &acc[j];
			if (j == m) {
				m++;
				if (!(c->timeline = malloc(n + 1))) {
					for (size_t f = 0; f + 1 < m; f++)
						free(acc[f].timeline);
					free(acc);
					return NULL;
				}
				memset(c->timeline, '-', n);
				c->timeline[n] = '\0';
				c->tid = t->tid;
				c->owner = -1;
				c->cpu_first = c->cpu_last = -1;
				c->first_stack = t->stack;
				c->same_wait = true;
			}
			bool new_stack = true;
			for (size_t p = 0; p < i && new_stack; p++)
				for (size_t q = 0; q < reads[p].n; q++)
					if (reads[p].threads[q].tid == t->tid && reads[p].threads[q].stack && t->stack &&
					    strcmp(reads[p].threads[q].stack, t->stack) == 0) {
						new_stack = false;
						break;
					}
			c->stacks += new_stack;
			c->present++;
			char mark = t->deadlocked ? 'D' : t->holds_gil ? 'G' : t->wait ? 'W' : 'R';
			bool moved = c->prev_stack && t->stack && strcmp(c->prev_stack, t->stack) != 0;
			c->timeline[i] = moved ? (char)(mark - 'A' + 'a') : mark;
			c->prev_stack = t->stack;
			c->gil += t->holds_gil;
			c->deadlocked += t->deadlocked;
			c->in_syscall += t->syscall_known && t->in_syscall;
			c->syscall_known += t->syscall_known;
			c->gil_waits += t->waits_gil;
			c->instruction_unknown |= !t->instruction_known;
			/* the first read's running task, and the reads that run it
			 * at the same place */
			if (t->task && t->task_where && !c->task) {
				c->task = t->task;
				c->task_where = t->task_where;
				c->tasks = 1;
			} else if (t->task && t->task_where && strcmp(c->task, t->task) == 0 &&
				   strcmp(c->task_where, t->task_where) == 0) {
				c->tasks++;
			}
			if (t->native_known) {
				if (!t->c_entry)
					c->in_bytecode++;
				else if (!c->native || (c->c_entry && strcmp(c->c_entry, t->c_entry) == 0))
					c->c_inner = t->c_inner;
				if (c->native && (!t->c_entry || !c->c_entry || strcmp(c->c_entry, t->c_entry) != 0))
					c->same_c = false;
				if (!c->native) {
					c->same_c = t->c_entry != NULL;
					c->c_entry = t->c_entry;
				}
				c->native++;
			}
			if (t->wait) {
				/* (one object: its repr may change, an RLock's owner) */
				if (c->wait_key && t->wait_key && strcmp(c->wait_key, t->wait_key) != 0)
					c->same_wait = false;
				c->waits++;
				c->wait = t->wait;
				c->wait_key = t->wait_key;
				c->owner = t->wait_owner;
				c->owner_name = t->wait_owner_name;
			}
			if (t->cpu_ns >= 0 && reads[i].at_ms >= 0) {
				if (c->cpu_first < 0) {
					c->cpu_first = t->cpu_ns;
					c->at_first = reads[i].at_ms;
				}
				c->cpu_last = t->cpu_ns;
				c->at_last = reads[i].at_ms;
			}
			if (t->name)
				c->name = t->name;
			if (t->where)
				c->where = t->where;
		}
	*count = m;
	return acc;
}

/* A convoy: CONVOY_WAITERS threads or more waiting on one lock (the same
 * object) in every read, while its owner changes between
 * reads: the lock is handed round, each holder's turn long. */
#define CONVOY_WAITERS 2

static void convoys(struct arena *a, struct model_samples *s, const struct sample *reads, size_t n)
{
	if (n < 2)
		return;
	/* the candidates: the first read's waits (each once) */
	for (size_t k = 0; k < reads[0].n; k++) {
		const char *w = reads[0].threads[k].wait_key;
		bool first = w != NULL && !reads[0].threads[k].waits_gil;
		for (size_t j = 0; first && j < k; j++)
			first = !reads[0].threads[j].wait_key || strcmp(reads[0].threads[j].wait_key, w) != 0;
		if (!first)
			continue;
		size_t least = SIZE_MAX;
		int64_t owner0 = -2;
		bool moved = false, every = true;
		for (size_t i = 0; i < n && every; i++) {
			size_t waiters = 0;
			int64_t owner = -2;
			for (size_t j = 0; j < reads[i].n; j++)
				if (reads[i].threads[j].wait_key && strcmp(reads[i].threads[j].wait_key, w) == 0) {
					waiters++;
					owner = reads[i].threads[j].wait_owner;
				}
			every = waiters >= CONVOY_WAITERS;
			least = waiters < least ? waiters : least;
			if (i == 0)
				owner0 = owner;
			else if (owner != owner0)
				moved = true;
		}
		const char *at = strrchr(w, '@');
		if (every && moved && at)
			ptrvec_push(a, &s->findings,
				    arena_printf(a, "a lock convoy: %zu threads or more wait on the %.*s at %s in every "
						 "sample, while its owner changes from one sample to the next", least,
						 (int)(at - w), w, at + 1));
	}
}

/* S's kind, the first of its threads' states in this order, and the
 * first thread (by tid) of that state into *TID. */
static const char *kind_of(const struct model_samples *s, int64_t *tid)
{
	/* (a thread that holds the GIL and does not move, stuck, before those
	 * blocked without it) */
	static const char *const order[][2] = {
		{ "deadlocked", "deadlock" }, { "busy-c-gil", "gil-held" }, { "busy-c", "busy-c" },
		{ "busy-python", "busy" },
		{ "spinning", "spinning" }, { "stuck", "stuck" }, { "blocked", "blocked" },
		{ "waiting", "waiting" }, { "idle", "idle" },
	};
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (size_t i = 0; i < s->threads.n; i++) {
			const struct model_hang_thread *h = s->threads.items[i];
			if (strcmp(h->state, order[o][0]) == 0) {
				*tid = h->tid;
				return order[o][1];
			}
		}
	*tid = -1;
	return "not-enough-samples";
}

void samples_classify(struct model_report *r, struct model_samples *s, const struct sample *reads, size_t n)
{
	s->kind_tid = -1;
	struct arena *a = r->arena;
	size_t m = 0, stopped = 0;
	double *st = calloc(n ? n : 1, sizeof(*st));
	for (size_t i = 0; st && i < n; i++)
		if (reads[i].stopped_ms >= 0)
			st[stopped++] = reads[i].stopped_ms;
	s->stopped_median_ms = s->stopped_max_ms = -1;
	if (stopped) {
		for (size_t i = 1; i < stopped; i++)   /* insertion sort: a few reads */
			for (size_t j = i; j > 0 && st[j - 1] > st[j]; j--) {
				double t = st[j];
				st[j] = st[j - 1];
				st[j - 1] = t;
			}
		s->stopped_median_ms = stopped % 2 ? st[stopped / 2] : (st[stopped / 2 - 1] + st[stopped / 2]) / 2;
		s->stopped_max_ms = st[stopped - 1];
	}
	free(st);
	struct acc *acc = accumulate(reads, n, &m);
	if (!acc) {
		model_warn(r, "out of memory: the samples' threads are not classified");
		return;
	}
	for (size_t i = 0; i < m; i++) {
		struct model_hang_thread *h = arena_alloc(a, sizeof(*h));
		if (!h || ptrvec_push(a, &s->threads, h) != 0)
			break;
		classify_one(a, &acc[i], n, r->free_threaded, h);
	}
	if (s->threads.n > 1)
		qsort(s->threads.items, s->threads.n, sizeof(void *), by_tid);
	/* the process's findings */
	size_t dl = 0, moved = 0, classed = 0;
	for (size_t i = 0; i < s->threads.n; i++) {
		const struct model_hang_thread *h = s->threads.items[i];
		dl += strcmp(h->state, "deadlocked") == 0;
		moved += strcmp(h->state, "busy-python") == 0;
		classed += strcmp(h->state, "not-enough-samples") != 0;
	}
	if (dl)
		ptrvec_push(a, &s->findings, arena_printf(a, "a deadlock in every sample: %zu thread%s in a wait cycle in "
							    "all %zu", dl, dl == 1 ? "" : "s", n));
	size_t gil_waiters = 0;
	for (size_t i = 0; i < m; i++)
		gil_waiters += acc[i].present >= 2 && acc[i].gil_waits == acc[i].present;
	for (size_t i = 0; i < s->threads.n; i++) {
		const struct model_hang_thread *h = s->threads.items[i];
		if (h->present >= 2 && h->gil == n && n >= 2)
			ptrvec_push(a, &s->findings,
				    arena_printf(a, "the GIL held by thread %lld%s%s%s in all %zu samples%s%s", (long long)h->tid,
						 h->name ? " \"" : "", h->name ? h->name : "", h->name ? "\"" : "", n,
						 strcmp(h->state, "busy-c-gil") == 0 ? ", in one C call" : "",
						 gil_waiters ? arena_printf(a, ", while %zu thread%s waited for it in all",
									    gil_waiters, gil_waiters == 1 ? "" : "s")
							     : ""));
	}
	/* an event loop's thread that does not move, one task running at one
	 * place in every read: a synchronous call in a coroutine */
	for (size_t i = 0; i < m; i++) {
		const struct acc *c = &acc[i];
		const struct model_hang_thread *h = NULL;
		for (size_t k = 0; k < s->threads.n; k++)
			if (((const struct model_hang_thread *)s->threads.items[k])->tid == c->tid)
				h = s->threads.items[k];
		if (h && c->present >= 2 && c->tasks == c->present && c->task_where &&
		    (strcmp(h->state, "blocked") == 0 || strcmp(h->state, "busy-c-gil") == 0 ||
		     strcmp(h->state, "busy-c") == 0 ||
		     strcmp(h->state, "stuck") == 0))
			ptrvec_push(a, &s->findings,
				    arena_printf(a, "the event loop of thread %lld is blocked in all %zu samples: task %s "
						 "makes a synchronous call at %s (%s)", (long long)c->tid, c->present, c->task,
						 c->task_where, h->state));
	}
	convoys(a, s, reads, n);
	if (classed && !moved && n >= 2)
		ptrvec_push(a, &s->findings, arena_printf(a, "no thread's Python stack moved in %zu samples", n));
	if (n < 2)
		ptrvec_push(a, &s->findings, arena_printf(a, "not enough samples: %zu taken, a class needs two", n));
	s->kind = kind_of(s, &s->kind_tid);
	for (size_t i = 0; i < m; i++)
		free(acc[i].timeline);
	free(acc);
}
