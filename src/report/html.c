/* The HTML report: one self-contained page per dump (html.h).  The answer
 * first, as the text report's summary gives it (what happened, in which
 * thread, at which Python line), every warning above it, then the
 * process's facts, the lock-wait picture, the threads in the text's order
 * and grouping, the asyncio tasks, what was redacted, the modules.
 * Native frames show or hide with one checkbox (CSS, no script);
 * collapsing is <details>. */
#include "report/html_int.h"
#include "report/samples.h"

#include <stdlib.h>
#include <string.h>

#include "model/redact.h"

/* ------------------------------------------------------------------------
 * The answer and the facts
 * ------------------------------------------------------------------------ */

static void tid_link(FILE *out, int64_t tid, const char *name)
{
	if (tid >= 0)
		fprintf(out, "<a href=\"#tid-%lld\">", (long long)tid);
	html_thread_ref(out, tid, name);
	if (tid >= 0)
		fputs("</a>", out);
}

static void write_deadlocks(FILE *out, const struct report_summary *s)
{
	for (size_t i = 0; i < s->ndeadlock;) {
		size_t start = i;
		fputs("<p class=\"deadlock\">Deadlock: ", out);
		tid_link(out, s->deadlock[i]->tid, s->deadlock[i]->name);
		for (;;) {
			const struct model_thread *t = s->deadlock[i];
			bool more = i + 1 < s->ndeadlock && s->deadlock[i + 1]->tid == t->waiting_on->owner;
			const struct model_thread *next = more ? s->deadlock[i + 1] : s->deadlock[start];
			fputs(i == start ? " waits for " : ", which waits for ", out);
			tid_link(out, next->tid, next->name);
			i++;
			if (!more)
				break;
		}
		fputs("</p>\n", out);
	}
}

static void write_summary(const struct hx *x, const struct report_summary *s)
{
	FILE *out = x->out;
	fprintf(out, "<section class=\"card summary\" id=\"summary\"><h2>What happened</h2>\n"
		"<p class=\"answer\"><span class=\"kind %s\">%s</span>", s->kind, s->kind);
	html_text(out, s->text ? s->text : "(out of memory)");
	fputs("</p>\n<dl class=\"facts\">\n", out);
	if (s->tid >= 0 || s->thread) {
		fputs("<dt>Thread</dt><dd>", out);
		tid_link(out, s->tid, s->thread ? s->thread->name : NULL);
		fputs("</dd>\n", out);
	}
	const struct model_frame *pf = s->python_frame, *nf = s->native_frame;
	if (pf) {
		fputs("<dt>Python line</dt><dd><span class=\"file\">", out);
		html_text(out, pf->file);
		fputs("</span>:", out);
		if (pf->line > 0)
			fprintf(out, "%d", pf->line);
		else
			fputs("?", out);
		fputs(" in <span class=\"func\">", out);
		html_text(out, pf->function);
		fputs("</span></dd>\n", out);
	}
	if (nf) {
		fputs("<dt>Native frame</dt><dd>", out);
		if (nf->function)
			html_text(out, nf->function);
		else
			fprintf(out, "0x%llx", (unsigned long long)nf->address);
		fputs(" in ", out);
		html_text(out, nf->file);
		fputs("</dd>\n", out);
	}
	if (s->exception) {
		fputs("<dt>Handling</dt><dd><span class=\"func\">", out);
		html_text(out, s->exception->type ? s->exception->type : "an exception");
		fputs("</span>", out);
		if (s->exception->message && *s->exception->message) {
			fputs(": ", out);
			html_text(out, s->exception->message);
		}
		fputs("</dd>\n", out);
	}
	fputs("</dl>\n", out);
	write_deadlocks(out, s);
	fputs("</section>\n", out);
}

static void write_warnings(const struct hx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	bool incomplete = model_report_incomplete(r);
	if (!r->warnings.n && !incomplete)
		return;
	fprintf(out, "<section class=\"card warnings\" id=\"warnings\"><h2>%zu warning%s%s</h2>\n<ul>\n",
		r->warnings.n, r->warnings.n == 1 ? "" : "s",
		incomplete ? ": the report is incomplete" : "");
	for (size_t i = 0; i < r->warnings.n; i++) {
		fputs("<li class=\"warning\">", out);
		html_text(out, r->warnings.items[i]);
		fputs("</li>\n", out);
	}
	fputs("</ul></section>\n", out);
}

static const char *state_name(char c)
{
	switch (c) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'W': return "paging";
	default: return NULL;
	}
}

static void fact(FILE *out, const char *name)
{
	fprintf(out, "<dt>%s</dt><dd>", name);
}

static void write_facts(const struct hx *x)
{
	FILE *out = x->out;
	const struct model_report *r = x->r;
	fputs("<section class=\"card process\" id=\"process\"><h2>Process</h2>\n<dl class=\"facts\">\n", out);
	fact(out, "Process");
	if (r->pid >= 0)
		fprintf(out, "pid %lld", (long long)r->pid);
	else
		fputs("pid unknown", out);
	if (r->ppid >= 0)
		fprintf(out, ", parent %lld", (long long)r->ppid);
	if (r->uid >= 0)
		fprintf(out, ", uid %lld", (long long)r->uid);
	if (r->gid >= 0)
		fprintf(out, ", gid %lld", (long long)r->gid);
	if (r->state) {
		const char *name = state_name(r->state);
		fprintf(out, ", state %s", name ? name : "?");
	}
	fputs("</dd>\n", out);
	if (r->argv) {
		fact(out, "Arguments");
		for (const char **a = r->argv; *a; a++) {
			fputs("<code class=\"arg\">", out);
			html_text(out, *a);
			fputs("</code> ", out);
		}
		fputs("</dd>\n", out);
	}
	if (r->executable) {
		fact(out, "Executable");
		html_text(out, r->executable);
		fputs("</dd>\n", out);
	}
	if (r->coredump) {
		const struct model_coredump *c = r->coredump;
		char when[32];
		fact(out, "systemd-coredump");
		if (c->comm) {
			fputs("comm ", out);
			html_text(out, c->comm);
		}
		if (c->hostname) {
			fputs(", host ", out);
			html_text(out, c->hostname);
		}
		if (report_iso8601(c->timestamp, when, sizeof(when)))
			fprintf(out, ", at %s", when);
		fputs("</dd>\n", out);
	}
	fact(out, "Python");
	if (r->has_python) {
		html_text(out, r->version ? r->version : "(version unknown)");
		if (r->free_threaded)
			fputs(" free-threaded", out);
		if (r->binary_path) {
			fputs(" (", out);
			html_text(out, r->binary_path);
			fputs(")", out);
		}
	} else {
		fputs("not found", out);
	}
	fputs("</dd>\n", out);
	fact(out, "Signal");
	if (r->has_signal) {
		char line[256];
		report_signal_line(r, line, sizeof(line));
		html_text(out, line);
		if (r->crashed_tid >= 0) {
			fputs(", received by ", out);
			tid_link(out, r->crashed_tid, NULL);
		}
	} else {
		fputs("none (a snapshot, not a crash)", out);
	}
	fputs("</dd>\n", out);
	if (r->fault) {
		/* the chain: what the handler caught, where from, who re-raised */
		char line[320];
		fact(out, strcmp(r->fault->origin ? r->fault->origin : "fault", "fault") ? "Caught" : "Fault");
		report_caught_text(r, line, sizeof(line));
		fputs("<span class=\"caught\">", out);
		html_text(out, line);
		fputs("</span> in ", out);
		tid_link(out, r->fault->tid, NULL);
		report_reraise_line(r, line, sizeof(line));
		fputs("; <span class=\"reraise\">", out);
		html_text(out, line);
		fputs("</span></dd>\n", out);
	}
	size_t npy = 0;
	for (size_t i = 0; i < r->interps.n; i++)
		npy += ((const struct model_interp *)r->interps.items[i])->threads.n;
	fact(out, "Threads");
	fprintf(out, "<span id=\"count-python\">%zu</span> Python, <span id=\"count-os\">%zu</span> in the dump",
		npy, r->ntids);
	if (r->interps.n > 1)
		fprintf(out, ", %zu interpreters", r->interps.n);
	fputs("</dd>\n", out);
	if (r->fingerprint) {
		const struct model_fingerprint *fp = r->fingerprint;
		fact(out, "Fingerprint");
		fprintf(out, "<code>%s</code> ", fp->hash);
		html_text(out, fp->kind);
		for (size_t i = 0; i < fp->nframes; i++) {
			fputs(i ? " &lt; " : ": ", out);
			html_text(out, fp->frames[i]);
		}
		if (fp->message) {
			fputs("; abort: &quot;", out);
			html_text(out, fp->message);
			fputs("&quot;", out);
		}
		fputs("</dd>\n", out);
	}
	if (r->input_kind && strcmp(r->input_kind, "process") == 0) {
		fact(out, "Process");
		html_text(out, r->input_path);
		if (r->stopped_ms >= 0)
			fprintf(out, " (live, its threads stopped for %.1f ms)</dd>\n</dl>\n", r->stopped_ms);
		else
			fputs(" (live, read running: --no-stop)</dd>\n</dl>\n", out);
	} else {
		fact(out, "Dump");
		html_text(out, r->input_path);
		fputs(" (", out);
		html_text(out, r->input_format ? r->input_format : "dump");
		if (r->input_compression) {
			fputs(", ", out);
			html_text(out, r->input_compression);
		}
		fprintf(out, ", %llu bytes)</dd>\n</dl>\n", (unsigned long long)r->input_size);
	}
	fputs("</section>\n", out);
}

/* ------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------ */

static void thread_anchor(FILE *out, const struct model_thread *t)
{
	if (t->tid >= 0)
		fprintf(out, "<span id=\"tid-%lld\"></span>", (long long)t->tid);
}

static void write_wait(FILE *out, const struct model_wait *w)
{
	fputs("<div class=\"wait\">waiting for &lt;", out);
	html_text(out, w->type);
	fprintf(out, " object at 0x%llx", (unsigned long long)w->address);
	if (w->owner >= 0) {
		fputs(w->joins ? " to end: " : " owned by ", out);
		tid_link(out, w->owner, w->owner_name);
	}
	if (w->count > 0)
		fprintf(out, " (%lld level%s)", (long long)w->count, w->count == 1 ? "" : "s");
	fputs("&gt;</div>\n", out);
}

static void write_stack(const struct hx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	if (t->frames.n)
		html_frames(x, &t->frames);
	else
		fprintf(out, "<p class=\"muted\">%s</p>\n", mi ? "(no Python frames)" : "(no frames)");
	if (t->waiting_on)
		write_wait(out, t->waiting_on);
	if (t->error) {
		fputs("<div class=\"err\">incomplete: ", out);
		html_text(out, t->error);
		fputs("</div>\n", out);
	}
	if (t->exception)
		html_exception(x, t->exception);
	html_greenlets(x, &t->greenlets);
}

/* A thread's heading after its ident: ", "NAME"" and, among several
 * interpreters, ", interpreter N". */
static void name_and_interp(const struct hx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	if (t->name) {
		fputs(", &quot;<span class=\"tname\">", out);
		html_text(out, t->name);
		fputs("</span>&quot;", out);
	}
	if (x->r->interps.n > 1)
		fprintf(out, ", interpreter %lld", (long long)mi->id);
}

static void write_thread(const struct hx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	fprintf(out, "<section class=\"card thread%s%s%s\" data-tids=\"%lld\">", t->crashed ? " crashed" : "",
		t->holds_gil ? " gil" : "", mi ? "" : " os-thread native", (long long)t->tid);
	thread_anchor(out, t);
	bool folded = x->fold && !t->crashed && !t->holds_gil;
	fputs(folded ? "<details class=\"stack\"><summary><h3>Thread " : "<h3>Thread ", out);
	if (t->tid >= 0)
		fprintf(out, "%lld", (long long)t->tid);
	else
		fputs("(tid unknown)", out);
	if (mi) {
		fprintf(out, " (ident 0x%llx", (unsigned long long)t->ident);
		name_and_interp(x, mi, t);
	} else {
		fprintf(out, " (%s", x->r->state_missing ? "Python state not in the dump" : "no Python thread state");
	}
	fprintf(out, "%s%s)</h3>%s\n", t->holds_gil ? ", holds the GIL" : "",
		t->crashed ? ", <span class=\"err\">crashed</span>" : "", folded ? "</summary>" : "");
	write_stack(x, mi, t);
	fputs(folded ? "</details></section>\n" : "</section>\n", out);
}

/* Thread K of MI and the later threads with its stack (DONE marks them). */
static void write_thread_or_group(const struct hx *x, const struct model_interp *mi, size_t k, bool *done)
{
	const struct model_thread *t = mi->threads.items[k];
	size_t n = 1;
	for (size_t i = k + 1; !x->o->all_threads && report_stack_groupable(t) && i < mi->threads.n; i++)
		n += !done[i] && report_stack_groupable(mi->threads.items[i]) &&
		     report_same_stack(t, mi->threads.items[i]);
	if (n == 1) {
		write_thread(x, mi, t);
		return;
	}
	FILE *out = x->out;
	fputs("<section class=\"card thread group\" data-tids=\"", out);
	const char *sep = "";
	for (size_t i = k; i < mi->threads.n; i++) {
		const struct model_thread *u = mi->threads.items[i];
		if (i > k && (done[i] || !report_stack_groupable(u) || !report_same_stack(t, u)))
			continue;
		fprintf(out, "%s%lld", sep, (long long)u->tid);
		sep = " ";
	}
	fputs("\">", out);
	for (size_t i = k; i < mi->threads.n; i++) {
		const struct model_thread *u = mi->threads.items[i];
		if (i > k && (done[i] || !report_stack_groupable(u) || !report_same_stack(t, u)))
			continue;
		thread_anchor(out, u);
	}
	fprintf(out, "<h3>%zu threads with this stack</h3>\n<details class=\"members\"><summary>which</summary>"
		"<p>", n);
	sep = "";
	for (size_t i = k; i < mi->threads.n; i++) {
		const struct model_thread *u = mi->threads.items[i];
		if (i > k && (done[i] || !report_stack_groupable(u) || !report_same_stack(t, u)))
			continue;
		done[i] = true;
		fputs(sep, out);
		sep = ", ";
		html_thread_ref(out, u->tid, u->name);
	}
	if (x->r->interps.n > 1)
		fprintf(out, " (interpreter %lld)", (long long)mi->id);
	fputs("</p></details>\n", out);
	write_stack(x, mi, t);
	fputs("</section>\n", out);
}

/* report_threads_in_order's visitor: thread K of MI (MI NULL: an OS
 * thread without Python, T), alone, or with DONE those sharing its stack. */
static void visit_thread(void *arg, const struct model_interp *mi, const struct model_thread *t, size_t k,
			 bool *done)
{
	const struct hx *x = arg;
	if (done)
		write_thread_or_group(x, mi, k, done);
	else
		write_thread(x, mi, t);
}

/* A thread state no thread of the process has (model_thread's stale, left
 * by fork): apart, after every thread, what it holds, as the text says it. */
static void write_stale(const struct hx *x, const struct model_interp *mi, const struct model_thread *t)
{
	FILE *out = x->out;
	fprintf(out, "<section class=\"card stale-thread\" data-ident=\"%llu\"><h3>%s (ident 0x%llx",
		(unsigned long long)t->ident, report_stale_heading(x->r), (unsigned long long)t->ident);
	if (t->tid >= 0)
		fprintf(out, ", recorded tid %lld", (long long)t->tid);
	name_and_interp(x, mi, t);
	fputs(")</h3>\n<p class=\"muted\">What it holds (most recent call last):</p>\n", out);
	write_stack(x, mi, t);
	fputs("</section>\n", out);
}

/* The text's order: the thread that received the signal (a crashed OS
 * thread without Python first of all), the GIL holder, the rest with
 * identical stacks grouped, then the OS threads without Python, then the
 * thread states left by fork. */
static void write_threads(const struct hx *x)
{
	const struct model_report *r = x->r;
	fputs(x->fold ? "<div id=\"threads\" class=\"folded\">\n" : "<div id=\"threads\">\n", x->out);
	report_threads_in_order(r, visit_thread, (void *)x);
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		if (!t->crashed)
			write_thread(x, NULL, t);
	}
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->stale_threads.n; k++)
			write_stale(x, mi, mi->stale_threads.items[k]);
	}
	fputs("</div>\n", x->out);
}

/* ------------------------------------------------------------------------
 * The rest
 * ------------------------------------------------------------------------ */

static void write_redacted(FILE *out, const struct model_report *r)
{
	if (!r->redact)
		return;
	fputs("<section class=\"card\" id=\"redacted\"><h2>Redacted</h2>\n", out);
	if (!r->redactions.n) {
		fputs("<p>Nothing (no name or value looked secret).</p></section>\n", out);
		return;
	}
	fputs("<p>Values replaced by their type and length:</p><table><thead><tr><th>where</th>"
	      "<th>name</th><th>why</th></tr></thead><tbody>\n", out);
	for (size_t i = 0; i < r->redactions.n; i++) {
		const struct model_redaction *e = r->redactions.items[i];
		fputs("<tr><td>", out);
		if (strcmp(e->in, "task") == 0)
			fprintf(out, "task 0x%llx", (unsigned long long)e->task);
		else
			html_thread_ref(out, e->thread, NULL);
		if (strcmp(e->in, "exception") == 0)
			fputs(", its exception", out);
		if (strcmp(e->in, "greenlet") == 0)
			fprintf(out, ", greenlet 0x%llx", (unsigned long long)e->greenlet);
		if (e->frame >= 0)
			fprintf(out, ", frame %lld", (long long)e->frame);
		fputs("</td><td>", out);
		if (e->name) {
			html_text(out, e->name);
			if (e->attribute) {
				fputs(".", out);
				html_text(out, e->attribute);
			}
		} else {
			fputs("its message or result", out);
		}
		fputs("</td><td>", out);
		html_text(out, e->reason);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
}

static void write_annotations(FILE *out, const struct model_report *r)
{
	if (!r->nannotations)
		return;
	fputs("<section class=\"card\" id=\"annotations\"><h2>Annotations</h2><table><tbody>\n", out);
	for (size_t i = 0; i < r->nannotations; i++) {
		const struct model_annotation *n = &r->annotations[i];
		fputs("<tr><td>", out);
		if (n->module)
			html_text(out, n->module);
		fputs("</td><td>", out);
		if (n->name)
			html_text(out, n->name);
		fputs("</td><td>", out);
		html_text(out, n->value ? n->value : "(not text)");
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
}

static void write_modules(FILE *out, const struct model_report *r)
{
	if (!r->modules.n)
		return;
	fprintf(out, "<section class=\"card\" id=\"modules\"><details><summary>%zu modules</summary>"
		"<table><thead><tr><th>path</th><th>start</th><th>base</th><th>base from</th><th>build-id</th>"
		"<th>file read</th></tr></thead>"
		"<tbody>\n", r->modules.n);
	for (size_t i = 0; i < r->modules.n; i++) {
		const struct model_module *m = r->modules.items[i];
		fputs("<tr><td>", out);
		html_text(out, m->path);
		fprintf(out, "</td><td>0x%llx</td><td>", (unsigned long long)m->start);
		if (m->base)
			fprintf(out, "0x%llx", (unsigned long long)m->base);
		fputs("</td><td>", out);
		if (m->base_from)
			html_text(out, m->base_from);
		fputs("</td><td>", out);
		if (m->build_id)
			html_text(out, m->build_id);
		fputs("</td><td>", out);
		if (m->file)
			html_text(out, m->file);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></details></section>\n", out);
}

static bool any_native(const struct model_report *r)
{
	if (r->native_threads.n)
		return true;
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			for (size_t j = 0; j < t->frames.n; j++)
				if (((const struct model_frame *)t->frames.items[j])->kind == FRAME_NATIVE)
					return true;
		}
	}
	return false;
}

int report_html_write(FILE *out, const struct model_report *r, const struct report_html_options *o)
{
	struct hx x = { out, r, o, o->source ? source_cache_new(o->files) : NULL, false };
	size_t nthreads = r->native_threads.n;
	for (size_t i = 0; i < r->interps.n; i++)
		nthreads += ((const struct model_interp *)r->interps.items[i])->threads.n;
	x.fold = nthreads > HTML_FOLD_THREADS;
	char *title = NULL;
	if (asprintf(&title, "pycore: %s", r->input_path ? r->input_path : "dump") < 0)
		title = NULL;
	report_html_begin(out, title ? title : "pycore report", "report");
	free(title);
	fputs("<header class=\"top\"><h1>pycore report</h1><div class=\"sub\">", out);
	html_text(out, r->input_path);
	fputs("</div></header>\n", out);
	/* the switch must precede <main> as its sibling: the CSS hides
	 * .native under an unchecked #show-native */
	if (any_native(r))
		fputs("<input type=\"checkbox\" id=\"show-native\" checked>"
		      "<label for=\"show-native\">native frames (and threads without Python)</label>", out);
	fputs("<span id=\"tools\"></span>\n<main>\n", out);
	struct report_summary s;
	report_summary(r, &s);
	write_warnings(&x);
	write_summary(&x, &s);
	write_facts(&x);
	report_samples_html(out, r->samples);
	html_waits(&x, &s);
	fputs("<h2>Threads</h2>\n", out);
	write_threads(&x);
	html_tasks(&x);
	write_redacted(out, r);
	write_annotations(out, r);
	write_modules(out, r);
	report_summary_free(&s);
	fputs("</main>\n", out);
	report_html_end(out);
	source_cache_free(x.src);
	return ferror(out) ? -1 : 0;
}
