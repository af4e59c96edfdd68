/* The pipeline, wired once (analysis.h): dump -> locate -> symbols ->
 * python -> model. */
#include "analysis/analysis.h"
#include "analysis/fault_kind.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump/dump.h"
#include "model/fingerprint.h"
#include "platform/libc.h"
#include "model/redact.h"
#include "report/report.h"
#include "symbols/symbols.h"

struct analysis {
	struct analysis_options opt;     /* the caller's, copied */
	struct dump *dump;
	struct locate *loc;
	struct symbols *sym;
	struct model_report *report;
	char *root;                      /* a live process's root, the sysroot (a->opt.files) */
};

/* The process facts the dump holds, into the report. */
static void fill_process(struct model_report *r, const struct dump *d, const struct dump_coredump *cd)
{
	struct arena *a = r->arena;
	r->input_path = arena_strdup(a, d->path);
	r->input_format = d->format;
	r->input_compression = d->compression;
	r->input_architecture = d->platform ? d->platform->name : NULL;
	r->input_size = d->file_size;
	r->input_kind = d->format && strcmp(d->format, "process") == 0 ? "process" : "dump";
	r->pid = d->pid;
	r->ppid = d->ppid;
	r->uid = d->uid;
	r->gid = d->gid;
	r->state = d->state;
	if (d->nannotations && (r->annotations = arena_alloc(a, d->nannotations * sizeof(*r->annotations)))) {
		for (size_t i = 0; i < d->nannotations; i++) {
			const struct dump_annotation *n = &d->annotations[i];
			r->annotations[i] = (struct model_annotation){ arena_strdup(a, n->module),
				arena_strdup(a, n->name), arena_strdup(a, n->value) };
		}
		r->nannotations = d->nannotations;
	}
	r->executable = arena_strdup(a, d->executable);
	if (d->argv) {
		size_t n = 0;
		while (d->argv[n])
			n++;
		const char **argv = arena_alloc(a, (n + 1) * sizeof(*argv));
		if (argv) {
			for (size_t i = 0; i < n; i++)
				argv[i] = arena_strdup(a, d->argv[i]);
			r->argv = argv;
		}
	}
	struct model_coredump *c = cd ? arena_alloc(a, sizeof(*c)) : NULL;
	if (c) {
		c->comm = arena_strdup(a, cd->comm);
		c->exe = arena_strdup(a, cd->exe);
		c->hostname = arena_strdup(a, cd->hostname);
		c->uid = cd->uid;
		c->gid = cd->gid;
		c->signal = cd->signal;
		c->timestamp = cd->timestamp;
		r->coredump = c;
	}
	r->tids = arena_alloc(a, (d->nthreads ? d->nthreads : 1) * sizeof(*r->tids));
	if (r->tids) {
		for (size_t i = 0; i < d->nthreads; i++)
			r->tids[i] = d->threads[i].tid;
		r->ntids = d->nthreads;
	}
	if (d->has_signal) {
		r->has_signal = true;
		r->signal_number = d->signal.number;
		r->signal_code = d->signal.code;
		r->signal_has_code = d->signal.has_code;
		r->signal_name = report_signal_name(d->signal.number);
		r->signal_has_address = d->signal.has_address;
		r->signal_address = d->signal.address;
		r->signal_has_sender = d->signal.has_sender;
		r->sender_pid = d->signal.sender_pid;
		r->sender_uid = d->signal.sender_uid;
		r->crashed_tid = d->crashed_tid;
	}
}

/* Was M's file read: by the memory reader (pages the dump left out) or by
 * libdwfl (symbols, CFI, DWARF)? */
static bool file_used(const struct analysis *a, const struct dump_module *m)
{
	return dump_file_used(a->dump, m) || symbols_file_used(a->sym, m);
}

/* The modules (ELF images) with their build-ids, the files read for them
 * and how each was found, the interpreter's binary's too. */
static void fill_modules(struct analysis *a)
{
	struct model_report *r = a->report;
	const struct dump *d = a->dump;
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct dump_module *m = &d->modules[i];
		struct model_module *mm = m->base ? arena_alloc(r->arena, sizeof(*mm)) : NULL;
		if (!mm)
			continue;
		mm->path = arena_strdup(r->arena, m->path);
		mm->start = m->start;
		mm->end = m->end;
		mm->base = m->base;
		mm->base_from = m->base_from;
		mm->base_verified = m->base_verified;
		if (m->build_id_len) {
			char hex[129];
			dump_hex(m->build_id, m->build_id_len, hex);
			mm->build_id = arena_strdup(r->arena, hex);
		}
		const struct locate_result *lr = locate_result(a->loc, m);
		if (lr && lr->data && file_used(a, m)) {
			mm->file = arena_strdup(r->arena, lr->path);
			mm->found_by = locate_how_str(lr->how);
			mm->verified_by = locate_verified_str(lr->verified);
			mm->verified_bytes = lr->verified_bytes;
		}
		if (lr && !lr->data && lr->reason && (lr->state == LOCATE_REFUSED || lr->state == LOCATE_NO_BUILD_ID))
			mm->refused = arena_strdup(r->arena, lr->reason);
		/* the walk names the file it read for the interpreter */
		if (lr && lr->data && r->binary_path && !r->binary_found_by && strcmp(lr->path, r->binary_path) == 0)
			r->binary_found_by = locate_how_str(lr->how);
		ptrvec_push(r->arena, &r->modules, mm);
	}
}

static void mismatch_warnings(struct analysis *a)
{
	for (size_t i = 0; i < a->dump->nmodules; i++) {
		const struct dump_module *m = &a->dump->modules[i];
		const struct locate_result *lr = locate_result(a->loc, m);
		if (lr && lr->state == LOCATE_MISMATCH_USED && file_used(a, m)) {
			/* a warning, not a gap: the caller accepted such files,
			 * and the exit status follows what the report holds */
			model_warn(a->report, "--allow-mismatch: using %s", lr->reason ? lr->reason : m->path);
		}
	}
}

/* Each module's file locate/ found, handed to the dump (which owns it
 * from then on): the pages the dump left out are read from it. */
static void attach_files(struct analysis *a)
{
	for (size_t i = 0; i < a->dump->nmodules; i++) {
		struct dump_module *m = &a->dump->modules[i];
		const uint8_t *data;
		size_t size;
		if (locate_take_file(a->loc, m, &data, &size))
			dump_attach_file(a->dump, m, data, size);
	}
	dump_files_attached(a->dump);
}

/* Whether PATH names glibc's libc ("libc.so.6", "libc-2.31.so"). */
static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strcmp(base, "libc.so.6") == 0 ||
	       (strncmp(base, "libc-", 5) == 0 && strlen(base) > 8 && strcmp(base + strlen(base) - 3, ".so") == 0);
}

/* glibc's struct pthread as the dump's libc describes it for
 * libthread_db, in its dynamic symbols (GLIBC_PRIVATE; no debug file
 * needed) (nptl_db/structs.def, db_info.c: _thread_db_sizeof_pthread
 * is its size, a uint32_t; _thread_db_pthread_tid is the field's
 * descriptor, three uint32_t: its size in bits (32), its count (1) and its
 * offset), read from the libc file attached: the size changes between
 * glibc versions (arm64: 0x740 in 2.36, 0x720 in 2.43), and aarch64's
 * thread pointer points just past the struct. */
static void glibc_pthread_layout(struct analysis *a)
{
	struct dump *d = a->dump;
	if (dump_libc(d) != &libc_glibc)
		return;
	for (size_t i = 0; i < d->nmodules; i++) {
		if (!d->modules[i].path || !is_libc(d->modules[i].path))
			continue;
		struct symbol_want want[] = { { "_thread_db_sizeof_pthread", 0, 0 }, { "_thread_db_pthread_tid", 0, 0 } };
		uint32_t size, tid[3];
		if (symbols_lookup_dynamic(a->sym, &d->modules[i], want, 2) == 2 &&
		    dump_read(d, want[0].addr, &size, sizeof(size)) == PC_OK &&
		    dump_read(d, want[1].addr, tid, sizeof(tid)) == PC_OK && tid[0] == 32 && tid[1] == 1)
			dump_set_pthread_layout(d, size, tid[2]);
		return;
	}
}

/* A static executable names no C library among the dump's modules: its
 * read-only pages (the file's, attached, or the dump's) may prove the one
 * linked in (libc_by_bytes), read in chunks that overlap by more than the
 * strings sought. */
#define STATIC_CHUNK (1u << 20)
#define STATIC_OVERLAP 64
static void static_libc(struct analysis *a)
{
	struct dump *d = a->dump;
	for (size_t i = 0; i < d->nmodules; i++)
		if (libc_by_module(d->modules[i].path))
			return;
	const struct dump_module *exe = NULL;
	for (size_t i = 0; i < d->nmodules && !exe; i++)
		if (d->auxv_entry && d->auxv_entry >= d->modules[i].start && d->auxv_entry < d->modules[i].end)
			exe = &d->modules[i];
	uint8_t *buf = exe ? malloc(STATIC_CHUNK) : NULL;
	if (!buf)
		return;
	const struct libc *found = NULL;
	for (size_t j = 0; j < exe->nmaps && !found; j++) {
		const struct dump_mapping *mp = &exe->maps[j];
		if (mp->writable)
			continue;
		for (uint64_t at = mp->start; at < mp->end && !found; at += STATIC_CHUNK - STATIC_OVERLAP) {
			uint64_t n = mp->end - at < STATIC_CHUNK ? mp->end - at : STATIC_CHUNK;
			if (dump_read(d, at, buf, (size_t)n) == PC_OK)
				found = libc_by_bytes(buf, (size_t)n);
			if (n < STATIC_CHUNK)
				break;
		}
	}
	free(buf);
	if (found)
		dump_set_libc(d, found);
}

/* The dump opened: its files located and attached, its symbols read;
 * what reads serve recorded from here on when a compact dump is asked for. */
static struct pc_error *prepare(struct analysis *a)
{
	struct pc_error *e = NULL;
	if (a->opt.record && dump_record_start(a->dump) != PC_OK)
		return pc_error_new(PC_ENOMEM, a->dump->path, "out of memory");
	if ((a->loc = locate_modules(a->dump, &a->opt.files, &e)) != NULL)
		attach_files(a);
	if (!e)
		e = symbols_open(a->dump, a->loc, &a->sym);
	if (!e) {
		static_libc(a);
		glibc_pthread_layout(a);
	}
	return e;
}

/* The dump opened from PATH, or from FD when FD >= 0 (PATH its name),
 * its files located and attached, its symbols read: ready to walk. */
static struct pc_error *open_analysis(int fd, const char *path, const struct analysis_options *opt,
				      struct analysis **out)
{
	struct analysis *a = calloc(1, sizeof(*a));
	*out = NULL;
	if (!a)
		return pc_error_new(PC_ENOMEM, path, "out of memory");
	a->opt = *opt;
	struct dump_budget b = opt->budget;
	b.timeout = opt->py.timeout;
	struct pc_error *e = fd >= 0 ? dump_open_fd(fd, path, &b, &a->dump) : dump_open(path, &b, &a->dump);
	if (!e)
		e = prepare(a);
	if (e) {
		analysis_free(a);
		return e;
	}
	*out = a;
	return NULL;
}

struct pc_error *analysis_walk(struct analysis *a)
{
	const struct analysis_options *opt = &a->opt;
	model_report_free(a->report);
	struct model_report *r = a->report = model_report_new();
	if (!r)
		return pc_error_new(PC_ENOMEM, a->dump->path, "out of memory");
	fill_process(r, a->dump, opt->coredump ? opt->coredump : a->dump->coredump);
	struct pc_error *e = py_analyze(a->dump, a->loc, a->sym, &opt->py, r);
	if (r->fault)
		r->fault->name = report_signal_name(r->fault->signal.number);
	fill_modules(a);
	if (!e)
		fault_kind_classify(a->dump, a->sym, a->opt.files.sysroot, r);
	size_t nw;
	const char *const *w = dump_warnings(a->dump, &nw);
	if (e && dump_truncated(a->dump)) {
		/* what is missing may be just what the walk needed */
		e = pc_error_wrap(e, "truncated beyond use (%s)", nw ? w[0] : "the file ends early");
		if (e->code != PC_ENOMEM)
			e->code = PC_ETRUNCATED;
	}
	if (e) {
		model_report_free(r);
		a->report = NULL;
		return e;
	}
	for (size_t i = 0; i < nw; i++) {
		model_warn(r, "%s", w[i]);
		r->incomplete = true;
	}
	w = dump_notes(a->dump, &nw);
	for (size_t i = 0; i < nw; i++)
		model_warn(r, "%s", w[i]);
	mismatch_warnings(a);
	r->fingerprint = model_fingerprint(r);
	/* before redaction: what it lists is what the report shows */
	if (opt->py.deep && model_share_attributes(r) != 0)
		model_warn(r, "out of memory while listing attributes once: some are listed more than once");
	if (opt->redact && model_redact(r) != 0) {
		model_warn(r, "out of memory while redacting: the list of what was redacted is incomplete");
		r->incomplete = true;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct pc_error *run(int fd, const char *path, const struct analysis_options *opt,
			    struct analysis **out)
{
	struct analysis *a;
	double t0 = now_s();
	struct pc_error *e = open_analysis(fd, path, opt, &a);
	if (!e && opt->py.timeout > 0) {
		/* one time budget: the walk gets what opening left (at least a
		 * moment, in which it stops at once and says so) */
		double left = opt->py.timeout - (now_s() - t0);
		a->opt.py.timeout = left > 1e-6 ? left : 1e-6;
	}
	if (!e && (e = analysis_walk(a)) != NULL)
		analysis_free(a);
	*out = e ? NULL : a;
	return e;
}

struct pc_error *analysis_run(const char *path, const struct analysis_options *opt, struct analysis **out)
{
	return run(-1, path, opt, out);
}

struct pc_error *analysis_run_fd(int fd, const char *name, const struct analysis_options *opt,
				 struct analysis **out)
{
	return run(fd, name, opt, out);
}

struct pc_error *analysis_open(const char *path, const struct analysis_options *opt, struct analysis **out)
{
	return open_analysis(-1, path, opt, out);
}

enum pc_code analysis_patch(struct analysis *a, uint64_t addr, const void *bytes, size_t len, void *old)
{
	return dump_patch(a->dump, addr, bytes, len, old);
}

struct pc_error *analysis_save(struct analysis *a, const char *path, struct dump_saved *saved)
{
	return dump_save(a->dump, path, saved);
}

struct pc_error *analysis_save_fd(struct analysis *a, int fd, const char *name, bool zstd)
{
	return dump_save_fd(a->dump, fd, name, zstd, NULL);
}

/* ------------------------------------------------------------------------
 * A live process
 * ------------------------------------------------------------------------ */

static bool same_frames(const struct model_thread *x, const struct model_thread *y)
{
	if (x->frames.n != y->frames.n)
		return false;
	for (size_t i = 0; i < x->frames.n; i++) {
		const struct model_frame *f = x->frames.items[i], *g = y->frames.items[i];
		if (f->kind != g->kind || f->line != g->line || f->address != g->address ||
		    f->frame_address != g->frame_address || !f->function != !g->function ||
		    (f->function && strcmp(f->function, g->function) != 0) || !f->file != !g->file ||
		    (f->file && strcmp(f->file, g->file) != 0))
			return false;
	}
	return true;
}

static const struct model_thread *thread_like(const struct model_report *r, const struct model_thread *t)
{
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *u = mi->threads.items[k];
			if (u->ident == t->ident && u->tid == t->tid)
				return u;
		}
	}
	return NULL;
}

/* --no-stop: the second walk's report, R, against the first's, FIRST: a
 * warning for each thread whose stack differs (it ran between the two
 * reads, and either may be torn), and the report incomplete. */
static void compare_walks(struct model_report *r, const struct model_report *first)
{
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k], *u = thread_like(first, t);
			if (u && same_frames(t, u))
				continue;
			if (u)
				model_warn(r, "--no-stop: thread %lld's stack changed while it was read (%zu frames, "
					   "then %zu): it may be torn", (long long)t->tid, u->frames.n, t->frames.n);
			else
				model_warn(r, "--no-stop: thread %lld appeared while the process was read: its "
					   "stack may be torn", (long long)t->tid);
			r->incomplete = true;
		}
	}
}

static struct pc_error *run_process_once(int64_t pid, bool stop, const struct analysis_options *opt,
					 struct analysis **out)
{
	struct analysis *a = calloc(1, sizeof(*a));
	*out = NULL;
	if (!a)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	a->opt = *opt;
	struct pc_error *e = dump_open_process(pid, &a->dump);
	/* a process in a container or a chroot: its root is where its
	 * files are, and the source files its frames name */
	if (!e && a->dump->root && !a->opt.files.sysroot)
		a->opt.files.sysroot = a->root = strdup(a->dump->root);
	if (!e)
		e = prepare(a);
	if (!e)
		e = dump_process_stop(a->dump, stop);
	struct model_report *first = NULL;
	if (!e && !stop) {
		/* the first read, kept to compare: then all again */
		e = analysis_walk(a);
		first = a->report;
		a->report = NULL;
		dump_process_forget(a->dump);
	}
	if (!e)
		e = analysis_walk(a);
	/* --save: what the compact dump holds, read before the process runs on */
	if (!e && a->opt.record && dump_record_snapshot(a->dump) != PC_OK)
		e = pc_error_new(PC_ENOMEM, a->dump->path, "out of memory");
	double stopped = dump_process_resume(a->dump);
	if (!e && dump_process_gone(a->dump))
		e = pc_error_new(PC_EGONE, a->dump->path, "the process exited while it was read");
	if (e) {
		model_report_free(first);
		analysis_free(a);
		return e;
	}
	a->report->stopped_ms = stopped;
	a->report->live_running = !stop;
	if (first)
		compare_walks(a->report, first);
	model_report_free(first);
	*out = a;
	return NULL;
}

/* A stopped thread's Python frames whose read failed: the stop caught
 * it mid-change (a frame pushed or popped, a thread starting or
 * ending), or its state is broken.  The first such thread's error into
 * *WHY, and up to TORN_MAX such threads' ids into TIDS (*N of them). */
#define TORN_MAX 8
static bool torn_threads(const struct model_report *r, const char **why, int64_t *tids, size_t *n)
{
	*n = 0;
	for (size_t i = 0; r && r->incomplete && i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			if (!t->walk_incomplete)
				continue;
			if (!*n && !*why)
				*why = t->error;
			if (*n < TORN_MAX)
				tids[(*n)++] = t->tid;
		}
	}
	return *n > 0;
}

/* Reads of a stopped process whose threads were caught mid-change (the
 * first read and the retries): each stops the process anew. */
#define LIVE_READS 5
/* How long the threads a read caught mid-change are given to run on
 * before the next stop, at most (milliseconds). */
#define LIVE_LET_RUN_MS 50

/* Let process PID run until each of thread TIDS has been on a CPU since
 * (its schedstat time grew), LIVE_LET_RUN_MS at most: a stop that comes
 * before a thread ran again finds it mid-change where the last one did
 * (on a busy machine a thread let go waits for a CPU). */
static void let_run(int64_t pid, const int64_t *tids, size_t n)
{
	int64_t before[TORN_MAX];
	for (size_t i = 0; i < n; i++)
		before[i] = tids[i] > 0 ? dump_thread_cpu_ns(pid, tids[i]) : -1;
	double end = now_s() + LIVE_LET_RUN_MS / 1e3;
	for (;;) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
		bool all = true;
		for (size_t i = 0; i < n && all; i++) {
			/* (a thread whose time is unknown, or gone: nothing to wait for) */
			int64_t now = before[i] < 0 ? -1 : dump_thread_cpu_ns(pid, tids[i]);
			all = now < 0 || now != before[i];
		}
		if (all || now_s() >= end)
			return;
	}
}

struct pc_error *analysis_run_process(int64_t pid, bool stop, const struct analysis_options *opt,
				      struct analysis **out)
{
	/* a thread stopped while it changed its Python state reads torn:
	 * the process is let go until that thread ran, and read again (a
	 * new stop, a new thread list), a bounded number of times, and the
	 * last read stands */
	char *first_why = NULL;
	for (int read = 1;; read++) {
		struct pc_error *e = run_process_once(pid, stop, opt, out);
		const char *why = NULL;
		int64_t tids[TORN_MAX];
		size_t ntorn = 0;
		if (e || !stop || read >= LIVE_READS || !torn_threads((*out)->report, &why, tids, &ntorn)) {
			if (!e && read > 1)
				model_warn((*out)->report, "the process was read %d times: a stop caught a thread "
					   "mid-change (%s)", read, first_why ? first_why : "its stack read incomplete");
			free(first_why);
			return e;
		}
		if (!first_why && why)
			first_why = strdup(why);
		analysis_free(*out);
		*out = NULL;
		let_run(pid, tids, ntorn);
	}
}

const struct dump_range *analysis_ranges_read(const struct analysis *a, size_t *n)
{
	return dump_ranges_read(a->dump, n);
}

const struct locate_policy *analysis_files(const struct analysis *a)
{
	return &a->opt.files;
}

const struct model_report *analysis_report(const struct analysis *a)
{
	return a->report;
}

void analysis_free(struct analysis *a)
{
	if (!a)
		return;
	symbols_close(a->sym);
	model_report_free(a->report);
	locate_free(a->loc);
	dump_close(a->dump);
	free(a->root);
	free(a);
}
