/* A live process read several times apart (samples.h): the reads, each
 * thread's record of each, and their folded stacks summed. */
#include "analysis/samples.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/fingerprint.h"
#include "python/python.h"
#include "report/report.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	if (ms <= 0)
		return;
	struct timespec t = { (time_t)(ms / 1e3), (long)((ms - (double)(time_t)(ms / 1e3) * 1e3) * 1e6) };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Thread T's Python frames as one key, innermost first; its innermost
 * Python frame as "function (file:line)" into *WHERE. */
static char *stack_of(struct arena *a, const struct model_thread *t, const char **where)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	*where = NULL;
	if (!m)
		return NULL;
	for (size_t i = 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_PYTHON)
			continue;
		/* (the instruction: a loop on one line moves, a C call does not) */
		fprintf(m, "%s@%s:%d+%lld\n", f->function ? f->function : "?", f->file ? f->file : "?", f->line,
			(long long)f->instruction);
		if (!*where)
			*where = arena_printf(a, "%s (%s:%d)", f->function ? f->function : "?", f->file ? f->file : "?",
					      f->line);
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	char *s = arena_strdup(a, buf);
	free(buf);
	return s;
}

/* What T waits on, in words: its type and repr. */
static const char *wait_of(struct arena *a, const struct model_wait *w)
{
	if (!w)
		return NULL;
	return w->repr ? arena_strdup(a, w->repr) : arena_printf(a, "%s at 0x%llx", w->type ? w->type : "an object",
								 (unsigned long long)w->address);
}

/* Whether T's native frames (--native) are in the GIL's take_gil
 * (Python/ceval_gil.c, 3.2 to 3.14; a clone's suffix allowed): the thread
 * waits for the GIL. */
static bool takes_gil(const struct model_thread *t)
{
	for (size_t i = 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			break;
		if (f->function && strncmp(f->function, "take_gil", 8) == 0 &&
		    (f->function[8] == '\0' || f->function[8] == '.'))
			return true;
	}
	return false;
}

/* T's C call under its innermost Python frame, from its native frames
 * (--native): into ST's c_entry and c_inner, NULL both when it runs
 * bytecode (no native frame but the eval loop's before its first Python
 * frame); native_known when it has native frames at all. */
static void c_call_of(struct arena *a, const struct model_thread *t, struct sample_thread *st)
{
	for (size_t i = 0; i < t->frames.n && !st->native_known; i++)
		st->native_known = ((const struct model_frame *)t->frames.items[i])->kind == FRAME_NATIVE;
	const struct model_frame *inner = NULL, *entry = NULL;
	for (size_t i = 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != FRAME_NATIVE)
			break;
		if (f->inlined || py_is_eval_loop(f->function))
			continue;
		if (!inner)
			inner = f;
		entry = f;
	}
	if (entry) {
		st->c_entry = entry->function ? arena_strdup(a, entry->function)
					      : arena_printf(a, "0x%llx", (unsigned long long)entry->address);
		st->c_inner = inner->function ? arena_strdup(a, inner->function)
					      : arena_printf(a, "0x%llx", (unsigned long long)inner->address);
	}
}

/* The task MI's event loop on thread T runs now, into ST. */
static void running_task(struct arena *a, const struct model_interp *mi, const struct model_thread *t,
			 struct sample_thread *st)
{
	for (size_t i = 0; i < mi->loops.n; i++) {
		const struct model_loop *l = mi->loops.items[i];
		if (l->thread != t->tid)
			continue;
		for (size_t k = 0; k < l->tasks.n; k++) {
			const struct model_task *task = l->tasks.items[k];
			if (!task->running)
				continue;
			st->task = arena_printf(a, "%s%s%s at 0x%llx", task->name ? "\"" : "", task->name ? task->name : "a task",
						task->name ? "\"" : "", (unsigned long long)task->address);
			const struct model_frame *f = task->stack.n ? task->stack.items[0] : NULL;
			if (f)
				st->task_where = arena_printf(a, "%s (%s:%d)", f->function ? f->function : "?",
							      f->file ? f->file : "?", f->line);
			return;
		}
	}
}

/* Report R's Python threads as one read's records, in arena A. */
static int record(struct arena *a, const struct model_report *r, struct sample *out)
{
	struct report_summary sum;
	report_summary(r, &sum);
	size_t n = 0;
	for (size_t i = 0; i < r->interps.n; i++)
		n += ((const struct model_interp *)r->interps.items[i])->threads.n;
	out->threads = n ? arena_alloc(a, n * sizeof(*out->threads)) : NULL;
	out->n = 0;
	out->stopped_ms = r->stopped_ms;
	out->at_ms = -1;
	if (n && !out->threads) {
		report_summary_free(&sum);
		return -1;
	}
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		const struct model_thread *holder = NULL;
		for (size_t k = 0; k < mi->threads.n; k++)
			if (((const struct model_thread *)mi->threads.items[k])->holds_gil)
				holder = mi->threads.items[k];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			struct sample_thread *st = &out->threads[out->n++];
			st->tid = t->tid;
			st->name = arena_strdup(a, t->name);
			st->stack = stack_of(a, t, &st->where);
			st->holds_gil = t->holds_gil;
			st->in_syscall = t->in_syscall;
			st->syscall_known = t->in_syscall_known;
			st->instruction_known = r->hexversion >= 0x030a0000;
			c_call_of(a, t, st);
			running_task(a, mi, t, st);
			st->cpu_ns = -1;
			st->wait = wait_of(a, t->waiting_on);
			if (t->waiting_on)
				st->wait_key = arena_printf(a, "%s@0x%llx", t->waiting_on->type ? t->waiting_on->type : "?",
							    (unsigned long long)t->waiting_on->address);
			st->wait_owner = t->waiting_on ? t->waiting_on->owner : -1;
			st->wait_owner_name = t->waiting_on ? arena_strdup(a, t->waiting_on->owner_name) : NULL;
			if (!t->waiting_on && !t->holds_gil && takes_gil(t)) {
				st->wait = st->wait_key = "the GIL";
				st->waits_gil = true;
				st->wait_owner = holder ? holder->tid : -1;
				st->wait_owner_name = holder ? arena_strdup(a, holder->name) : NULL;
			}
			for (size_t d = 0; d < sum.ndeadlock; d++)
				if (sum.deadlock[d] == t)
					st->deadlocked = true;
		}
	}
	report_summary_free(&sum);
	return 0;
}

/* Folded stacks: each distinct line ("frame;...;frame") and its count,
 * summed over the reads. */
struct folded {
	char **stack;
	unsigned long long *count;
	size_t n, cap;
};

static int fold_add(struct folded *f, const char *line, size_t len)
{
	const char *sp = len ? memrchr(line, ' ', len) : NULL;
	char *end;
	if (!sp)
		return 0;
	unsigned long long c = strtoull(sp + 1, &end, 10);
	size_t klen = (size_t)(sp - line);
	for (size_t i = 0; i < f->n; i++)
		if (strlen(f->stack[i]) == klen && memcmp(f->stack[i], line, klen) == 0) {
			f->count[i] += c;
			return 0;
		}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		char **s = realloc(f->stack, cap * sizeof(*s));
		if (!s)
			return -1;
		f->stack = s;
		unsigned long long *k = realloc(f->count, cap * sizeof(*k));
		if (!k)
			return -1;
		f->count = k;
		f->cap = cap;
	}
	if (!(f->stack[f->n] = strndup(line, klen)))
		return -1;
	f->count[f->n++] = c;
	return 0;
}

static int fold_report(struct folded *f, const struct model_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	int rc = report_collapsed_write(m, r);
	if (fclose(m) != 0 || rc != 0) {
		free(buf);
		return -1;
	}
	for (char *p = buf; p < buf + len && rc == 0;) {
		char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(buf + len - p);
		rc = fold_add(f, p, l);
		p += l + 1;
	}
	free(buf);
	return rc;
}

static char *fold_text(struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	for (size_t i = 0; m && i < f->n; i++)
		fprintf(m, "%s %llu\n", f->stack[i], f->count[i]);
	if (!m || fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void fold_free(struct folded *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->stack[i]);
	free(f->stack);
	free(f->count);
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether reads A and B are of one program: one executable and argv, its
 * runtime at one address, and every module both have at one address (an
 * exec maps the new program anew: its shared libraries elsewhere, even
 * where the executable is not position-independent). */
static bool same_program(const struct model_report *a, const struct model_report *b)
{
	if (!same_text(a->executable, b->executable) || a->runtime_address != b->runtime_address)
		return false;
	/* (argv compared where both reads have it) */
	size_t i = 0;
	for (; a->argv && b->argv && a->argv[i] && b->argv[i]; i++)
		if (strcmp(a->argv[i], b->argv[i]) != 0)
			return false;
	if (a->argv && b->argv && (a->argv[i] || b->argv[i]))
		return false;
	for (size_t k = 0; k < a->modules.n; k++) {
		const struct model_module *ma = a->modules.items[k];
		for (size_t j = 0; ma->path && j < b->modules.n; j++) {
			const struct model_module *mb = b->modules.items[j];
			if (mb->path && strcmp(ma->path, mb->path) == 0 && ma->start != mb->start)
				return false;
		}
	}
	return true;
}

struct pc_error *analysis_sample_process(int64_t pid, const struct analysis_options *opt,
					 const struct samples_options *so, struct analysis **out, char **folded)
{
	struct arena *keep = arena_new();
	struct sample *reads = calloc(so->count ? so->count : 1, sizeof(*reads));
	struct folded fold = { 0 };
	struct analysis *last = NULL;
	struct pc_error *e = NULL;
	char *ended = NULL;
	double start = now_ms(), last_start = start;
	size_t taken = 0;
	*out = NULL;
	if (folded)
		*folded = NULL;
	if (!keep || !reads) {
		arena_free(keep);
		free(reads);
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	}
	for (size_t i = 0; i < so->count; i++) {
		if (i)
			sleep_ms(start + (double)i * so->interval_s * 1e3 - now_ms());
		double t0 = now_ms();
		struct analysis *a;
		struct pc_error *err = analysis_run_process(pid, so->stop, opt, &a);
		if (err) {
			if (!taken) {
				e = err;
				break;
			}
			ended = strdup(err->code == PC_EGONE ? "the process exited" : err->message);
			pc_error_free(err);
			break;
		}
		const struct model_report *r = analysis_report(a);
		if (last && !same_program(analysis_report(last), r)) {
			/* exec(): another program in the same process */
			ended = strdup("the process ran another program (exec)");
			analysis_free(a);
			break;
		}
		if (record(keep, r, &reads[taken]) != 0 || (folded && fold_report(&fold, r) != 0)) {
			analysis_free(a);
			e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
			break;
		}
		/* each thread's CPU time, after the read: a thread that comes
		 * back to one place uses it, one that is blocked does not */
		reads[taken].at_ms = now_ms();
		for (size_t k = 0; k < reads[taken].n; k++)
			reads[taken].threads[k].cpu_ns = dump_thread_cpu_ns(pid, reads[taken].threads[k].tid);
		taken++;
		last_start = t0;
		analysis_free(last);
		last = a;
	}
	if (!e && last) {
		struct model_report *r = (struct model_report *)analysis_report(last);
		struct model_samples *s = arena_alloc(r->arena, sizeof(*s));
		if (s) {
			s->asked = so->count;
			s->taken = taken;
			s->source = "process";
			s->ordered_by = "the reads' times";
			s->interval_ms = so->interval_s * 1e3;
			s->duration_ms = last_start - start;
			if (ended) {
				s->ended = arena_printf(r->arena, "%s after %zu of %zu samples", ended, taken, so->count);
				model_warn(r, "sampling ended: %s", s->ended);
			}
			samples_classify(r, s, reads, taken);
			r->samples = s;
			r->fingerprint = model_fingerprint(r);   /* the hang's, now */
		}
		if (folded)
			*folded = fold_text(&fold);
		*out = last;
		last = NULL;
	}
	analysis_free(last);
	fold_free(&fold);
	free(ended);
	free(reads);
	arena_free(keep);
	return e;
}

/* When dump A was taken, in microseconds since the epoch: the time
 * systemd-coredump recorded, else its file's modification time (*BY says
 * which); -1 unknown. */
static int64_t dump_time(const struct model_report *r, const char *path, const char **by)
{
	struct stat st;
	if (r->coredump && r->coredump->timestamp >= 0) {
		*by = "the time systemd-coredump recorded";
		return r->coredump->timestamp;
	}
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0) {
		*by = "the files' modification times";
		return (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
	}
	*by = "the order given";
	return -1;
}

struct pc_error *analysis_compare_dumps(char *const *paths, size_t n, const struct analysis_options *opt,
					struct analysis **out, char **folded)
{
	struct arena *keep = arena_new();
	struct sample *reads = calloc(n ? n : 1, sizeof(*reads));
	struct analysis **all = calloc(n ? n : 1, sizeof(*all));
	int64_t *when = calloc(n ? n : 1, sizeof(*when));
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	struct folded fold = { 0 };
	struct pc_error *e = NULL;
	const char *by = NULL;
	int64_t pid = -1;
	*out = NULL;
	if (folded)
		*folded = NULL;
	if (!keep || !reads || !all || !when || !order)
		e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
	for (size_t i = 0; !e && i < n; i++) {
		if ((e = analysis_run(paths[i], opt, &all[i])) != NULL)
			break;
		const struct model_report *r = analysis_report(all[i]);
		const char *this_by = NULL;
		if (i && r->pid != pid) {
			e = pc_error_new(PC_EFORMAT, paths[i], "--compare reads dumps of one process: this is of pid %lld, "
				      "%s of pid %lld", (long long)r->pid, paths[0], (long long)pid);
			break;
		}
		pid = r->pid;
		order[i] = i;
		when[i] = dump_time(r, paths[i], &this_by);
		/* one clock for all: else the order given */
		by = !by || strcmp(by, this_by) == 0 ? this_by : "the order given";
		if (record(keep, r, &reads[i]) != 0 || (folded && fold_report(&fold, r) != 0))
			e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
	}
	struct sample *sorted = e ? NULL : calloc(n ? n : 1, sizeof(*sorted));
	if (!e && !sorted)
		e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
	if (!e) {
		/* the reads in time (insertion: a few dumps), ties in the order given */
		bool given = strcmp(by, "the order given") == 0;
		for (size_t i = 1; !given && i < n; i++)
			for (size_t j = i; j > 0 && when[order[j - 1]] > when[order[j]]; j--) {
				size_t t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		for (size_t i = 0; i < n; i++)
			sorted[i] = reads[order[i]];
		/* the report is the latest dump's */
		struct analysis *latest = all[order[n - 1]];
		all[order[n - 1]] = NULL;
		struct model_report *r = (struct model_report *)analysis_report(latest);
		struct model_samples *s = arena_alloc(r->arena, sizeof(*s));
		if (s) {
			s->asked = s->taken = n;
			s->source = "dumps";
			s->ordered_by = by;
			s->interval_ms = -1;
			s->duration_ms = given ? -1 : (double)(when[order[n - 1]] - when[order[0]]) / 1e3;
			samples_classify(r, s, sorted, n);
			r->samples = s;
			r->fingerprint = model_fingerprint(r);   /* the hang's, now */
		}
		if (folded)
			*folded = fold_text(&fold);
		*out = latest;
	}
	for (size_t i = 0; all && i < n; i++)
		analysis_free(all[i]);
	free(sorted);
	fold_free(&fold);
	free(all);
	free(order);
	free(when);
	free(reads);
	arena_free(keep);
	return e;
}
