/* pycore batch (batch.h): a pool of worker processes, one fork per dump,
 * so that a dump that crashes pycore, hangs it or eats its memory costs
 * that dump alone.  A worker runs one analysis (analysis.h) and writes its
 * record into a pipe; the parent collects the pipes with poll(), kills a
 * worker past --timeout, writes an error record for a worker that died
 * without a whole record, and writes the records on standard output as they
 * complete or, with --ordered, in input order. */
#include "cli/batch.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/batch_input.h"
#include "report/html.h"
#include "report/report.h"

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

struct worker {
	pid_t pid;                   /* 0: the slot is free */
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

static void __attribute__((noreturn)) work(const char *path, int fd, const struct pool *p)
{
	signal(SIGPIPE, SIG_DFL);
	if (p->bo->max_memory) {
		/* RLIMIT_DATA, not RLIMIT_AS: the dump is mapped read-only and
		 * counts against the address space, not against the data limit */
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
		_exit(WORKER_UNWRITTEN);
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
	/* no exit handlers: the parent's stdio buffers are not this process's */
	_exit(rc);
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

/* Worker W has ended (STATUS from waitpid): its record, or an error record. */
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
		free(w->buf);
	} else {
		finish_error(p, i, PC_EWORKER, "pycore's worker ended with status %d without a whole record%s",
			     code, memory_note(p));
		free(w->buf);
	}
	w->buf = NULL;
	w->len = w->cap = 0;
	w->pid = 0;
}

static int start(struct pool *p, struct worker *w)
{
	size_t i = p->next++;
	if (p->list.items[i].error) {
		finish_error(p, i, PC_EIO, "%s", p->list.items[i].error);
		return 0;
	}
	int fds[2];
	if (pipe(fds) != 0) {
		finish_error(p, i, PC_EWORKER, "cannot start a worker: pipe: %s", strerror(errno));
		return 0;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		finish_error(p, i, PC_EWORKER, "cannot start a worker: fork: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		close(fds[0]);
		work(p->list.items[i].path, fds[1], p);
	}
	close(fds[1]);
	*w = (struct worker){ .pid = pid, .fd = fds[0], .item = i,
			      .deadline = p->bo->timeout > 0 ? now() + p->bo->timeout : 0 };
	return 1;
}

/* Read what W wrote; at end of file, wait for it. */
static void drain(struct pool *p, struct worker *w)
{
	if (w->cap - w->len < 65536) {
		size_t cap = w->cap ? w->cap * 2 : 65536;
		char *b = realloc(w->buf, cap);
		if (!b) {
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
	if (waitpid(w->pid, &status, WNOHANG) == w->pid)
		collect(p, w, status);
}

static void timeouts(struct pool *p, double t)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (!w->pid || !w->deadline || t < w->deadline)
			continue;
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
		free(w->buf);
		w->buf = NULL;
		w->len = w->cap = 0;
		w->pid = 0;
		finish_error(p, w->item, PC_ETIMEOUT, "pycore's worker was killed after --timeout %g s", p->bo->timeout);
	}
}

/* Workers that closed their pipe but had not yet exited when it did. */
static void reap(struct pool *p)
{
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		int status;
		if (w->pid && w->fd < 0 && waitpid(w->pid, &status, WNOHANG) == w->pid)
			collect(p, w, status);
	}
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
		n += p->workers[k].pid != 0;
	return n;
}

/* Start workers in free slots; --ordered looks at most WINDOW items past
 * the first unwritten one, so that a slow dump cannot make the parent hold
 * the records of all the others. */
static void fill(struct pool *p)
{
	size_t window = p->nworkers * 16 > 64 ? p->nworkers * 16 : 64;
	for (unsigned k = 0; k < p->nworkers; k++) {
		if (p->workers[k].pid)
			continue;
		while (p->next < p->list.n && !(p->bo->ordered && p->next - p->written >= window) &&
		       !start(p, &p->workers[k]))
			;
	}
}

static void run(struct pool *p)
{
	struct pollfd *pfd = calloc(p->nworkers, sizeof(*pfd));
	unsigned *which = calloc(p->nworkers, sizeof(*which));
	if (!pfd || !which) {
		fprintf(stderr, "pycore: batch: out of memory\n");
		p->write_failed = true;
		goto out;
	}
	for (;;) {
		fill(p);
		if (running(p) == 0 && (p->next >= p->list.n || p->write_failed))
			break;
		nfds_t n = 0;
		double t = now(), wait = p->progress ? 0.1 : 3600;
		bool exiting = false;
		for (unsigned k = 0; k < p->nworkers; k++) {
			struct worker *w = &p->workers[k];
			if (!w->pid)
				continue;
			if (w->deadline && w->deadline - t < wait)
				wait = w->deadline - t;
			if (w->fd < 0) {
				exiting = true;
				continue;
			}
			pfd[n] = (struct pollfd){ .fd = w->fd, .events = POLLIN };
			which[n++] = k;
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
		for (nfds_t k = 0; r > 0 && k < n; k++)
			if (pfd[k].revents)
				drain(p, &p->workers[which[k]]);
		reap(p);
		timeouts(p, now());
		show_progress(p, false);
	}
out:
	/* on an early end, no worker outlives the batch */
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct worker *w = &p->workers[k];
		if (!w->pid)
			continue;
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		if (w->fd >= 0)
			close(w->fd);
		free(w->buf);
	}
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
	if (!p.workers || (bo->ordered && !p.records)) {
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
	size_t n = p.list.n;
	batch_list_free(&p.list);
	return p.write_failed || p.done < n ? 1 : 0;
}
