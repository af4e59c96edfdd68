/* pycore batch (batch.h): a pool of worker processes, one fork per dump,
 * so that a dump that crashes pycore, hangs it or eats its memory costs
 * that dump alone.  A worker runs one analysis (analysis.h) and writes its
 * record into a pipe; the parent collects the pipes with poll(), kills a
 * worker past --timeout, writes an error record for a worker that died
 * without a whole record, and writes the records on standard output as they
 * complete or, with --ordered, in input order.
 *
 * Warm processes (batch_warm.h): a dump whose build (batch_key.h) has a
 * warm process is analyzed in a worker forked from it; the second dump of
 * a build is analyzed by a new warm process itself, which stays (the
 * first goes to a cold worker: a build seen once costs what it did).  At most
 * --warm-builds of them (the least recently used idle one makes room),
 * their resident memory together at most --warm-memory MB. */
#include "cli/batch/batch.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/batch/batch_input.h"
#include "cli/batch/batch_key.h"
#include "cli/batch/batch_warm.h"
#include "report/html.h"
#include "report/report.h"
#include "symbols/warm.h"

/* A worker's exit status: its record is a report (complete or not), or an
 * error record it wrote itself; anything else is the parent's to explain. */
enum { WORKER_OK = 0, WORKER_PARTIAL = 1, WORKER_FAILED = 2, WORKER_UNWRITTEN = 3 };

enum outcome { OUT_OK, OUT_PARTIAL, OUT_FAILED };

struct record {
	char *text;                  /* one line, '\n' included */
	size_t len;
	enum outcome outcome;
	bool ready;
};

/* A warm process (batch_warm.h), the batch's child. */
struct warm {
	uint64_t key;                /* batch_key.h; 0: the slot is free */
	pid_t pid;
	int ctl;                     /* the batch's end of its socket */
	bool ready;                  /* its first analysis is over */
	unsigned busy;               /* its dumps in analysis, its first included */
	double used;                 /* when it last got a dump: least recently used goes first */
	size_t resident;             /* bytes, after its first analysis */
};

enum worker_kind {
	COLD,                        /* forked from the batch: pid its child */
	FIRST,                       /* a new warm process's own first analysis: pid the warm process */
	WARM,                        /* forked from warm process z: pid 0, its status in a message */
};

struct worker {
	bool busy;                   /* false: the slot is free */
	enum worker_kind kind;
	pid_t pid;
	struct warm *z;
	bool ended;                  /* FIRST, WARM: the wait status came */
	int status;
	int fd;                      /* -1 once at end of file */
	size_t item;
	double deadline;             /* monotonic seconds; 0: none */
	char *buf;
	size_t len, cap;
};

struct pool {
	const struct batch_options *bo;
	const struct analysis_options *ao;
	struct batch_list list;
	struct worker *workers;
	unsigned nworkers;
	struct record *records;      /* --ordered: those not yet written */
	size_t next;                 /* next item to start */
	size_t written;              /* --ordered: items written, in order */
	size_t done, ok, partial, failed;
	struct warm *warm;           /* bo->warm_builds of them */
	struct batch_keys seen;      /* the builds of the dumps started so far */
	size_t *again;               /* items whose warm process died under them: cold again */
	size_t nagain;
	bool write_failed;
	bool progress;
	double start, last_progress;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the worker (a child process) ---- */

/* The report's page in DIR, written whole or not at all (a temporary
 * file renamed); a failure is said on standard error, the record stays. */
static void batch_write_page(const char *dir, const char *path, const struct model_report *r,
			     const struct locate_policy *files)
{
	char name[96], *tmp = NULL, *final = NULL;
	report_html_page_name(path, name, sizeof(name));
	if (asprintf(&final, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.%ld", dir, name, (long)getpid()) < 0) {
		free(final);
		return;
	}
	struct report_html_options o = { .source = true, .files = files };
	FILE *f = fopen(tmp, "w");
	int ok = f && report_html_write(f, r, &o) == 0;
	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok || rename(tmp, final) != 0) {
		fprintf(stderr, "pycore: batch: %s: cannot write its page %s: %s\n", path, final, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	free(final);
}

/* A warm process's first analysis, kept until its first worker is forked
 * (then freed: the workers inherit nothing of that dump; a build never
 * seen again costs no freeing). */
static struct analysis *first_analysis;
static struct pc_error *first_error;

static void forget_first(void *arg)
{
	(void)arg;
	analysis_free(first_analysis);
	pc_error_free(first_error);
	first_analysis = NULL;
	first_error = NULL;
#ifdef __GLIBC__
	/* the heap given back: each worker's data (--max-memory) starts small */
	malloc_trim(0);
#endif
}

/* One dump's analysis, its record written to FD: the worker's exit code.
 * KEEP: the analysis and its error kept in first_analysis, first_error. */
static int analyze(const char *path, int fd, const struct pool *p, bool keep)
{
	signal(SIGPIPE, SIG_DFL);
	if (p->bo->max_memory) {
		/* RLIMIT_DATA, not RLIMIT_AS: the dump is mapped read-only and
		 * counts against the address space, not against the data limit
		 * (the heap is then not on huge pages: pycore.c) */
		rlim_t b = (rlim_t)p->bo->max_memory << 20;
		struct rlimit rl = { b, b };
		setrlimit(RLIMIT_DATA, &rl);
	}
	struct analysis_options ao = *p->ao;
	/* the walk stops itself a little before the worker would be killed,
	 * and the report says how far it got */
	ao.py.timeout = p->bo->timeout * 0.75;
	FILE *out = fdopen(fd, "w");
	if (!out)
		return WORKER_UNWRITTEN;
	int rc;
	struct analysis *a;
	struct pc_error *e = analysis_run(path, &ao, &a);
	if (e) {
		rc = report_json_error_write(out, path, NULL, e) == 0 ? WORKER_FAILED : WORKER_UNWRITTEN;
	} else {
		const struct model_report *r = analysis_report(a);
		rc = report_json_write(out, r, false) != 0 ? WORKER_UNWRITTEN
		     : r->incomplete ? WORKER_PARTIAL : WORKER_OK;
		if (p->bo->html_dir)
			batch_write_page(p->bo->html_dir, path, r, &ao.files);
	}
	if (fclose(out) != 0)
		rc = WORKER_UNWRITTEN;
	if (keep) {
		first_analysis = a;
		first_error = e;
	}
	return rc;
}

static int analyze_one(const char *path, int fd, void *arg)
{
	return analyze(path, fd, arg, false);
}

static void __attribute__((noreturn)) work(const char *path, int fd, const struct pool *p)
{
	/* no exit handlers: the parent's stdio buffers are not this process's */
	_exit(analyze_one(path, fd, (void *)p));
}

/* ---- records ---- */

static void emit(struct pool *p, const char *text, size_t len)
{
	if (p->write_failed)
		return;
	if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
		fprintf(stderr, "pycore: batch: cannot write to standard output: %s\n", strerror(errno));
		p->write_failed = true;
	}
}

/* Item I's record is TEXT (taken over). */
static void finish(struct pool *p, size_t i, char *text, size_t len, enum outcome o)
{
	p->done++;
	*(o == OUT_OK ? &p->ok : o == OUT_PARTIAL ? &p->partial : &p->failed) += 1;
	if (!p->bo->ordered) {
		emit(p, text, len);
		free(text);
		return;
	}
	p->records[i] = (struct record){ text, len, o, true };
	while (p->written < p->list.n && p->records[p->written].ready) {
		struct record *r = &p->records[p->written++];
		emit(p, r->text, r->len);
		free(r->text);
		r->text = NULL;
	}
}

/* An error record written by the parent, of kind CODE. */
static void finish_error(struct pool *p, size_t i, enum pc_code code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void finish_error(struct pool *p, size_t i, enum pc_code code, const char *fmt, ...)
{
	char *msg = NULL, *text = NULL;
	size_t len = 0;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	FILE *m = open_memstream(&text, &len);
	struct pc_error e = { .code = code, .message = msg ? msg : (char *)pc_code_str(code) };
	if (!m || report_json_error_write(m, p->list.items[i].path, NULL, &e) != 0) {
		fprintf(stderr, "pycore: batch: %s: out of memory writing its error record\n",
			p->list.items[i].path);
		p->write_failed = true;
	}
	if (m)
		fclose(m);
	free(msg);
	finish(p, i, text, text ? len : 0, OUT_FAILED);
}

static const char *memory_note(const struct pool *p)
{
	return p->bo->max_memory ? " (a worker is limited by --max-memory)" : "";
}

/* Slot W is free again (its record written or given up). */
static void release(struct worker *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->z && w->kind != COLD && w->z->busy)
		w->z->busy--;
	free(w->buf);
	*w = (struct worker){ .fd = -1 };
}

/* Worker W has ended (STATUS, a wait status: waitpid's, or its warm
 * process's word): its record, or an error record. */
static void collect(struct pool *p, struct worker *w, int status)
{
	size_t i = w->item;
	bool whole = w->len > 0 && w->buf[w->len - 1] == '\n' && memchr(w->buf, '\n', w->len) == w->buf + w->len - 1;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (whole && (code == WORKER_OK || code == WORKER_PARTIAL || code == WORKER_FAILED)) {
		finish(p, i, w->buf, w->len, code == WORKER_OK ? OUT_OK : code == WORKER_PARTIAL ? OUT_PARTIAL
					     : OUT_FAILED);
		w->buf = NULL;
	} else if (WIFSIGNALED(status)) {
		int s = WTERMSIG(status);
		const char *name = report_signal_name(s);
		finish_error(p, i, PC_ECRASHED, "pycore's worker died of %s%s while analyzing this dump%s",
			     name ? name : "signal ", name ? "" : "?", memory_note(p));
	} else {
		finish_error(p, i, PC_EWORKER, "pycore's worker ended with status %d without a whole record%s",
			     code, memory_note(p));
	}
	release(w);
}

/* ---- warm processes ---- */

static struct warm *warm_find(struct pool *p, uint64_t key)
{
	for (unsigned k = 0; k < p->bo->warm_builds; k++)
		if (p->warm[k].key == key)
			return &p->warm[k];
	return NULL;
}

/* Z is gone (STATUS its wait status): its first analysis's worker ends
 * with it, and the dumps its workers had go to cold workers again. */
static void warm_gone(struct pool *p, struct warm *z, int status)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (!w->busy || w->z != z || w->kind == COLD)
			continue;
		if (w->kind == FIRST) {
			if (!w->ended) {
				w->ended = true;
				w->status = status;
			}
			w->z = NULL;
			if (w->fd < 0)
				collect(p, w, w->status);
		} else if (!w->ended || w->fd >= 0) {
			p->again[p->nagain++] = w->item;
			w->z = NULL;
			release(w);
		} else {
			w->z = NULL;
			collect(p, w, w->status);
		}
	}
	close(z->ctl);
	*z = (struct warm){ .ctl = -1 };
}

/* End Z (idle, or the batch is over): its workers die with it. */
static void warm_end(struct pool *p, struct warm *z)
{
	int status = 0;
	kill(z->pid, SIGKILL);
	waitpid(z->pid, &status, 0);
	warm_gone(p, z, status);
}

/* The least recently used idle warm process, or NULL. */
static struct warm *warm_idlest(struct pool *p)
{
	struct warm *best = NULL;
	for (unsigned k = 0; k < p->bo->warm_builds; k++) {
		struct warm *z = &p->warm[k];
		if (z->key && z->ready && !z->busy && (!best || z->used < best->used))
			best = z;
	}
	return best;
}

/* A slot for a new warm process: a free one, or the least recently used
 * idle one's; NULL when every one is busy. */
static struct warm *warm_slot(struct pool *p)
{
	for (unsigned k = 0; k < p->bo->warm_builds; k++)
		if (!p->warm[k].key)
			return &p->warm[k];
	struct warm *z = warm_idlest(p);
	if (z)
		warm_end(p, z);
	return z;
}

/* At most --warm-memory MB resident in warm processes. */
static void warm_trim(struct pool *p)
{
	for (;;) {
		size_t sum = 0;
		for (unsigned k = 0; k < p->bo->warm_builds; k++)
			sum += p->warm[k].key ? p->warm[k].resident : 0;
		struct warm *z = sum > ((size_t)p->bo->warm_memory << 20) ? warm_idlest(p) : NULL;
		if (!z)
			return;
		warm_end(p, z);
	}
}

static struct worker *warm_worker(struct pool *p, const struct warm *z, enum worker_kind kind, size_t item)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (w->busy && w->z == z && w->kind == kind && (kind == FIRST || w->item == item))
			return w;
	}
	return NULL;
}

/* What Z said. */
static void warm_read(struct pool *p, struct warm *z)
{
	struct warm_msg m;
	int r;
	while ((r = warm_recv(z->ctl, &m)) > 0) {
		struct worker *w = warm_worker(p, z, m.type == WARM_DONE ? FIRST : WARM, m.item);
		if (m.type == WARM_DONE) {
			z->ready = true;
			z->resident = warm_resident(z->pid);
		}
		if (!w)
			continue; /* a worker killed past --timeout */
		if (m.type == WARM_NOFORK) {
			release(w);
			finish_error(p, m.item, PC_EWORKER, "cannot start a worker: fork: %s", strerror(m.status));
		} else if (m.type == WARM_DONE || m.type == WARM_ENDED) {
			w->ended = true;
			w->status = m.status;
			if (w->fd < 0)
				collect(p, w, w->status);
		}
	}
	if (r == 0) {
		/* its end closed: it is ending */
		int status = 0;
		waitpid(z->pid, &status, 0);
		warm_gone(p, z, status);
	}
}

/* In the child that is to be a warm process: the batch's descriptors
 * closed, the first dump analyzed, then warm_serve. */
static void __attribute__((noreturn)) become_warm(const struct pool *p, pid_t batch, const char *path, int fd,
						  int ctl)
{
	for (unsigned k = 0; k < p->nworkers; k++)
		if (p->workers[k].busy && p->workers[k].fd >= 0)
			close(p->workers[k].fd);
	for (unsigned k = 0; k < p->bo->warm_builds; k++)
		if (p->warm[k].key)
			close(p->warm[k].ctl);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != batch)
		_exit(WORKER_UNWRITTEN);
	symbols_warm_enable();
	int rc = analyze(path, fd, p, true);
	warm_serve(ctl, rc, analyze_one, forget_first, (void *)p);
}

/* ---- the pool ---- */

static bool more(const struct pool *p)
{
	return p->nagain || p->next < p->list.n;
}

static int start(struct pool *p, struct worker *w)
{
	size_t i = p->nagain ? p->again[--p->nagain] : p->next++;
	const char *path = p->list.items[i].path;
	if (p->list.items[i].error) {
		finish_error(p, i, PC_EIO, "%s", p->list.items[i].error);
		return 0;
	}
	int fds[2];
	if (pipe(fds) != 0) {
		finish_error(p, i, PC_EWORKER, "cannot start a worker: pipe: %s", strerror(errno));
		return 0;
	}
	double t = now(), deadline = p->bo->timeout > 0 ? t + p->bo->timeout : 0;
	uint64_t key = p->warm && p->bo->warm_builds ? batch_build_key(path) : 0;
	struct warm *z = key ? warm_find(p, key) : NULL;
	if (z && z->ready && warm_send_start(z->ctl, i, path, fds[1]) == 0) {
		close(fds[1]);
		z->busy++;
		z->used = t;
		*w = (struct worker){ .busy = true, .kind = WARM, .z = z, .fd = fds[0], .item = i, .deadline = deadline };
		return 1;
	}
	/* a build's first dump goes to a cold worker, its second to a new warm
	 * process (while that one is busy with it, the next ones go cold) */
	int ctl[2] = { -1, -1 };
	struct warm *nz = key && !z && batch_key_seen(&p->seen, key) ? warm_slot(p) : NULL;
	if (nz && socketpair(AF_UNIX, SOCK_SEQPACKET, 0, ctl) != 0)
		nz = NULL;
	fflush(stdout);
	pid_t batch = getpid(), pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		if (nz) {
			close(ctl[0]);
			close(ctl[1]);
		}
		finish_error(p, i, PC_EWORKER, "cannot start a worker: fork: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		close(fds[0]);
		if (nz) {
			close(ctl[0]);
			become_warm(p, batch, path, fds[1], ctl[1]);
		}
		work(path, fds[1], p);
	}
	close(fds[1]);
	if (nz) {
		close(ctl[1]);
		*nz = (struct warm){ .key = key, .pid = pid, .ctl = ctl[0], .busy = 1, .used = t };
	}
	*w = (struct worker){ .busy = true, .kind = nz ? FIRST : COLD, .z = nz, .pid = pid, .fd = fds[0],
			      .item = i, .deadline = deadline };
	return 1;
}

/* Read what W wrote; at end of file, its end. */
static void drain(struct pool *p, struct worker *w)
{
	if (w->cap - w->len < 65536) {
		size_t cap = w->cap ? w->cap * 2 : 65536;
		char *b = realloc(w->buf, cap);
		if (!b) {
			if (w->kind == WARM)
				warm_send_kill(w->z->ctl, w->item);
			else
				kill(w->pid, SIGKILL);
			close(w->fd);
			w->fd = -1;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	ssize_t n = read(w->fd, w->buf + w->len, w->cap - w->len);
	if (n > 0) {
		w->len += (size_t)n;
		return;
	}
	if (n < 0 && errno == EINTR)
		return;
	close(w->fd);
	w->fd = -1;
	int status;
	if (w->kind != COLD) {
		if (w->ended)
			collect(p, w, w->status);
	} else if (waitpid(w->pid, &status, WNOHANG) == w->pid) {
		collect(p, w, status);
	}
}

static void timeouts(struct pool *p, double t)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (!w->busy || !w->deadline || t < w->deadline)
			continue;
		size_t i = w->item;
		struct warm *z = w->kind == FIRST ? w->z : NULL;
		if (w->kind == WARM) {
			warm_send_kill(w->z->ctl, i);
		} else {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
		}
		release(w);
		if (z)
			warm_gone(p, z, 0);
		finish_error(p, i, PC_ETIMEOUT, "pycore's worker was killed after --timeout %g s", p->bo->timeout);
	}
}

/* Workers that closed their pipe but had not yet exited when it did; warm
 * processes over --warm-memory. */
static void reap(struct pool *p)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		int status;
		if (w->busy && w->kind == COLD && w->fd < 0 && waitpid(w->pid, &status, WNOHANG) == w->pid)
			collect(p, w, status);
	}
	/* (a warm process that dies closes its socket: warm_read waits for it) */
	if (p->warm)
		warm_trim(p);
}

static void show_progress(struct pool *p, bool force)
{
	double t = now();
	if (!p->progress || (!force && t - p->last_progress < 0.1))
		return;
	p->last_progress = t;
	double rate = t > p->start ? p->done / (t - p->start) : 0;
	fprintf(stderr, "\r\033[Kpycore: batch: %zu/%zu dumps, %zu ok, %zu partial, %zu failed, %.1f dumps/s",
		p->done, p->list.n, p->ok, p->partial, p->failed, rate);
}

static unsigned running(const struct pool *p)
{
	unsigned n = 0;
	for (unsigned k = 0; k < p->nworkers; k++)
		n += p->workers[k].busy;
	return n;
}

/* Start workers in free slots; --ordered looks at most WINDOW items past
 * the first unwritten one, so that a slow dump cannot make the parent hold
 * the records of all the others. */
static void fill(struct pool *p)
{
	size_t window = p->nworkers * 16 > 64 ? p->nworkers * 16 : 64;
	for (unsigned k = 0; k < p->nworkers; k++) {
		if (p->workers[k].busy)
			continue;
		while (more(p) && !(p->bo->ordered && !p->nagain && p->next - p->written >= window) &&
		       !start(p, &p->workers[k]))
			;
	}
}

static void run(struct pool *p)
{
	unsigned nz = p->warm ? p->bo->warm_builds : 0, cap = p->nworkers + nz;
	struct pollfd *pfd = calloc(cap, sizeof(*pfd));
	unsigned *which = calloc(cap, sizeof(*which));
	if (!pfd || !which) {
		fprintf(stderr, "pycore: batch: out of memory\n");
		p->write_failed = true;
		goto out;
	}
	for (;;) {
		fill(p);
		if (running(p) == 0 && (!more(p) || p->write_failed))
			break;
		nfds_t n = 0;
		double t = now(), wait = p->progress ? 0.1 : 3600;
		bool exiting = false;
		for (unsigned k = 0; k < p->nworkers; k++) {
			struct worker *w = &p->workers[k];
			if (!w->busy)
				continue;
			if (w->deadline && w->deadline - t < wait)
				wait = w->deadline - t;
			if (w->fd < 0) {
				exiting = exiting || w->kind == COLD;
				continue;
			}
			pfd[n] = (struct pollfd){ .fd = w->fd, .events = POLLIN };
			which[n++] = k;
		}
		for (unsigned k = 0; k < nz; k++) {
			if (!p->warm[k].key)
				continue;
			pfd[n] = (struct pollfd){ .fd = p->warm[k].ctl, .events = POLLIN };
			which[n++] = p->nworkers + k;
		}
		if (exiting && wait > 0.001)
			wait = 0.001;
		int ms = wait > 0 ? (int)(wait * 1000) + 1 : 0;
		int r = poll(pfd, n, ms);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "pycore: batch: poll: %s\n", strerror(errno));
			p->write_failed = true;
			break;
		}
		for (nfds_t k = 0; r > 0 && k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (which[k] < p->nworkers) {
				if (p->workers[which[k]].busy && p->workers[which[k]].fd == pfd[k].fd)
					drain(p, &p->workers[which[k]]);
			} else if (p->warm[which[k] - p->nworkers].key &&
				   p->warm[which[k] - p->nworkers].ctl == pfd[k].fd) {
				warm_read(p, &p->warm[which[k] - p->nworkers]);
			}
		}
		reap(p);
		timeouts(p, now());
		show_progress(p, false);
	}
out:
	/* on an early end, no worker outlives the batch; warm processes end */
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (!w->busy)
			continue;
		if (w->kind != WARM) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
		}
		w->z = NULL;
		release(w);
	}
	for (unsigned k = 0; k < nz; k++)
		if (p->warm[k].key)
			warm_end(p, &p->warm[k]);
	free(pfd);
	free(which);
}

static void summary(const struct pool *p)
{
	double secs = now() - p->start;
	if (p->progress)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "pycore: batch: %zu dumps, %zu ok, %zu partial, %zu failed in %.2f s, %.1f dumps/s",
		p->done, p->ok, p->partial, p->failed, secs, secs > 0 ? p->done / secs : 0.0);
	const struct { size_t n; const char *what; } skipped[] = {
		{ p->list.skipped_done, "already in --skip-done" },
		{ p->list.skipped_shard, "of other shards" },
		{ p->list.skipped_files, "files in directories that are not dumps" },
	};
	const char *sep = "; not analyzed: ";
	for (size_t k = 0; k < sizeof(skipped) / sizeof(skipped[0]); k++) {
		if (skipped[k].n) {
			fprintf(stderr, "%s%zu %s", sep, skipped[k].n, skipped[k].what);
			sep = ", ";
		}
	}
	if (p->done < p->list.n)
		fprintf(stderr, "; %zu dumps without a record", p->list.n - p->done);
	fprintf(stderr, "\n");
}

int batch_run(char **paths, int npaths, const struct batch_options *bo, const struct analysis_options *ao)
{
	struct pool p = { .bo = bo, .ao = ao, .start = now(), .progress = isatty(STDERR_FILENO) };
	if (batch_input(paths, npaths, bo, &p.list) != 0) {
		batch_list_free(&p.list);
		return 2;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	p.nworkers = bo->jobs ? bo->jobs : cpus > 0 ? (unsigned)cpus : 1;
	p.workers = calloc(p.nworkers, sizeof(*p.workers));
	p.records = bo->ordered ? calloc(p.list.n ? p.list.n : 1, sizeof(*p.records)) : NULL;
	if (bo->warm_builds) {
		p.warm = calloc(bo->warm_builds, sizeof(*p.warm));
		p.again = calloc(p.nworkers, sizeof(*p.again));
	}
	for (unsigned k = 0; p.workers && k < p.nworkers; k++)
		p.workers[k].fd = -1;
	if (!p.workers || (bo->ordered && !p.records) || (bo->warm_builds && (!p.warm || !p.again))) {
		fprintf(stderr, "pycore: batch: out of memory\n");
		p.write_failed = true;
	} else {
		/* a reader that went away ends the batch with an error line,
		 * not a silent SIGPIPE */
		signal(SIGPIPE, SIG_IGN);
		run(&p);
	}
	summary(&p);
	if (p.records)
		for (size_t i = 0; i < p.list.n; i++)
			free(p.records[i].text);
	free(p.records);
	free(p.workers);
	free(p.warm);
	free(p.again);
	batch_keys_free(&p.seen);
	size_t n = p.list.n;
	batch_list_free(&p.list);
	return p.write_failed || p.done < n ? 1 : 0;
}
