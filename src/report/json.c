/* The JSON report, exactly as man/pycore-report.5 and the schema beside
 * this file (pycore-report.schema.json) describe it: every key always
 * present, null where a value is unknown.  A key added here is added to
 * both; the tests check every report against the schema. */
#include "report/report.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "model/redact.h"
#include "report/json_args.h"
#include "report/json_text.h"
#include "report/json_crash.h"
#include "report/heap.h"
#include "report/samples.h"
#include "util/unicode.h"

/* Strings from a dump (argv, paths) need not be UTF-8, and JSON text must
 * be.  Each byte that is not part of a valid UTF-8 sequence is written as
 * Python's os.fsdecode() (surrogateescape) decodes it: U+DC80 + the byte,
 * which JSON spells "\udcXX"; os.fsencode() gives the bytes back.  Jansson
 * holds only valid UTF-8, so such a byte is kept as MARK and two hex
 * digits (and a MARK of the input as two MARKs) until report_json_write
 * spells it out.  MARK is U+FFFF, a noncharacter. */
#define MARK "\xef\xbf\xbf"
#define MARK_LEN 3

/* S as a JSON string holds it: *OUT is S itself when it is ASCII (*LEN
 * its length), else a malloc'd copy with its MARKs (*OWNED, to free);
 * false when out of memory.  Either is valid UTF-8: the copy holds only
 * what utf8_decode took (RFC 3629's sequences, jansson's rules too) and
 * MARKs with ASCII digits. */
static bool marked(const char *s, const char **out, size_t *len, char **owned)
{
	size_t n = strlen(s), o = 0;
	size_t ascii = 0;
	*owned = NULL;
	while (ascii < n && (unsigned char)s[ascii] < 0x80)
		ascii++;
	if (ascii == n) {
		/* ASCII is UTF-8 as it is, and holds no MARK */
		*out = s;
		*len = n;
		return true;
	}
	char *buf = malloc(n * (MARK_LEN + 2) + 1); /* a bad byte: 5 bytes */
	if (!buf)
		return false;
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n;) {
		const unsigned char *p = (const unsigned char *)s + i;
		uint32_t cp;
		size_t seq = utf8_decode(p, n - i, &cp);
		if (seq == 0) {
			memcpy(buf + o, MARK, MARK_LEN);
			buf[o + MARK_LEN] = hex[p[0] >> 4];
			buf[o + MARK_LEN + 1] = hex[p[0] & 15];
			o += MARK_LEN + 2;
			i++;
			continue;
		}
		if (cp == 0xffff) {
			memcpy(buf + o, MARK, MARK_LEN);
			o += MARK_LEN;
		}
		memcpy(buf + o, p, seq);
		o += seq;
		i += seq;
	}
	*out = *owned = buf;
	*len = o;
	return true;
}

static json_t *str_or_null(const char *s)
{
	const char *m;
	size_t n;
	char *owned;
	if (!s || !marked(s, &m, &n, &owned))
		return json_null();
	json_t *j = json_stringn_nocheck(m, n);
	free(owned);
	return j ? j : json_null();
}

/* TEXT (LEN bytes) with its MARKs spelled out, to OUT. */
static int write_unmarked(FILE *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *m = text;
	/* (memchr for MARK's first byte: memmem is byte by byte) */
	while ((m = memchr(m, MARK[0], (size_t)(end - m))) != NULL) {
		if (end - m < MARK_LEN || memcmp(m, MARK, MARK_LEN) != 0) {
			m++;
			continue;
		}
		if (fwrite(p, 1, (size_t)(m - p), out) != (size_t)(m - p))
			return -1;
		m += MARK_LEN;
		if (strncmp(m, MARK, MARK_LEN) == 0) {
			if (fwrite(MARK, 1, MARK_LEN, out) != MARK_LEN)
				return -1;
			p = m + MARK_LEN;
		} else {
			if (fprintf(out, "\\udc%.2s", m) < 0)
				return -1;
			p = m + 2;
		}
		m = p;
	}
	return fwrite(p, 1, (size_t)(end - p), out) == (size_t)(end - p) ? 0 : -1;
}

static json_t *addr_or_null(uint64_t a, bool known)
{
	if (!known)
		return json_null();
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
	return json_string(buf);
}

/* error_code and error_address, beside a node's error: its kind's name
 * (error.h's one table) and the address concerned; null when the node has
 * no error, or its kind or address is not known. */
static json_t *error_code(const char *error, struct model_error_info e)
{
	const char *name = error ? pc_code_name(e.code) : NULL;
	return name ? json_string(name) : json_null();
}

static json_t *error_address(const char *error, struct model_error_info e)
{
	return addr_or_null(e.address, error && e.code != PC_OK && e.has_address);
}

/* A list of variables (or of an instance's attributes). */
static json_t *locals_json(const struct ptrvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++) {
		const struct model_local *l = v->items[i];
		/* (one by one, as frame_json's) */
		json_t *o = json_object();
		json_object_set_new_nocheck(o, "name", str_or_null(l->name));
		json_object_set_new_nocheck(o, "kind", str_or_null(l->kind));
		json_object_set_new_nocheck(o, "type", str_or_null(l->type));
		json_object_set_new_nocheck(o, "address", addr_or_null(l->address, true));
		json_object_set_new_nocheck(o, "repr", str_or_null(l->repr));
		json_object_set_new_nocheck(o, "error", str_or_null(l->error));
		json_object_set_new_nocheck(o, "error_code", error_code(l->error, l->error_info));
		json_object_set_new_nocheck(o, "error_address", error_address(l->error, l->error_info));
		json_object_set_new_nocheck(o, "length", l->has_length ? json_integer(l->length) : json_null());
		json_object_set_new_nocheck(o, "attributes",
					    l->has_attributes ? locals_json(&l->attributes) : json_null());
		json_object_set_new_nocheck(o, "attributes_shown_in", l->attributes_elsewhere
			? json_pack("{s:o, s:I}", "thread", l->attributes_thread >= 0
				    ? json_integer(l->attributes_thread) : json_null(),
				    "frame", (json_int_t)l->attributes_frame)
			: json_null());
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- frames, written straight into the text ----
 *
 * A frame is most of a report's nodes, and none is made: each list of
 * frames (and the summary's frame) is an empty array (an empty object) in
 * the tree, kept in this table with what it stands for, and frames_hook
 * writes the frames where json_text meets it.  --pretty's text is the
 * compact text read back and written indented by jansson. */
struct placeholder {
	json_t *node;
	const struct ptrvec *frames; /* a list of frames */
	const struct model_frame *frame;     /* else one frame, without its locals */
};

static struct {
	size_t n, cap;
	struct placeholder *p;       /* by node once the tree is made (direct_sort) */
	bool failed;                 /* out of memory */
} direct;

/* (a node's address names it: the arena, jarena_free, never gives a
 * node's memory to another while the report is made and written) */
static json_t *placeholder(json_t *node, const struct ptrvec *frames, const struct model_frame *frame)
{
	if (!node) {
		direct.failed = true;
		return NULL;
	}
	if (direct.n == direct.cap) {
		size_t cap = direct.cap ? 2 * direct.cap : 64;
		struct placeholder *p = realloc(direct.p, cap * sizeof(*p));
		if (!p) {
			direct.failed = true;
			json_decref(node);
			return NULL;
		}
		direct.p = p;
		direct.cap = cap;
	}
	direct.p[direct.n++] = (struct placeholder){ node, frames, frame };
	return node;
}

static json_t *frames_json(const struct ptrvec *v)
{
	return placeholder(json_array(), v, NULL);
}

static json_t *frame_json(const struct model_frame *f)
{
	return f ? placeholder(json_object(), NULL, f) : json_null();
}

static void text_str(struct json_text *t, const char *s)
{
	const char *m;
	size_t n;
	char *owned = NULL;
	if (s && marked(s, &m, &n, &owned))
		json_text_put_string(t, m, n);
	else
		json_text_put(t, "null", 4);
	free(owned);
}

static void text_addr(struct json_text *t, uint64_t a, bool known)
{
	char buf[32];
	int n = known ? snprintf(buf, sizeof(buf), "\"0x%llx\"", (unsigned long long)a) : 0;
	json_text_put(t, known ? buf : "null", known ? (size_t)n : 4);
}

static void text_int(struct json_text *t, bool known, json_int_t v)
{
	known ? json_text_put_int(t, v) : json_text_put(t, "null", 4);
}

#define KEY(t, k) json_text_put(t, k, sizeof(k) - 1)

/* A frame, its keys in the report's order; its locals only when
 * WITH_LOCALS. */
static void frame_text(struct json_text *t, const struct model_frame *f, bool with_locals)
{
	static const char *const kinds[] = { "\"python\"", "\"native\"", "\"gc\"" };
	KEY(t, "{\"kind\":");
	json_text_put(t, kinds[f->kind], strlen(kinds[f->kind]));
	KEY(t, ",\"source_file\":");
	text_str(t, f->source_file);
	KEY(t, ",\"function\":");
	text_str(t, f->function);
	KEY(t, ",\"qualname\":");
	text_str(t, f->qualname);
	KEY(t, ",\"file\":");
	text_str(t, f->file);
	KEY(t, ",\"line\":");
	text_int(t, f->line > 0, f->line);
	KEY(t, ",\"address\":");
	text_addr(t, f->address, f->kind == FRAME_NATIVE);
	KEY(t, ",\"inlined\":");
	json_text_put_bool(t, f->inlined);
	KEY(t, ",\"recovered\":");
	json_text_put_bool(t, f->recovered);
	KEY(t, ",\"locals\":");
	if (f->has_locals && with_locals) {
		json_t *l = locals_json(&f->locals);
		json_text_put_value(t, l ? l : json_null());
		json_decref(l);
	} else {
		json_text_put(t, "null", 4);
	}
	bool p = f->has_position;
	KEY(t, ",\"column\":");
	text_int(t, p && f->column >= 0, f->column);
	KEY(t, ",\"end_line\":");
	text_int(t, p && f->end_line > 0, f->end_line);
	KEY(t, ",\"end_column\":");
	text_int(t, p && f->end_column >= 0, f->end_column);
	if (f->kind == FRAME_NATIVE) {
		KEY(t, ",\"found_by\":");
		text_str(t, f->found_by);
		KEY(t, ",\"tail_call\":");
		json_text_put_bool(t, f->tail_call);
		KEY(t, ",\"greenlet\":");
		text_addr(t, f->greenlet, f->greenlet != 0);
		KEY(t, ",\"args\":");
		json_args_text(t, f, text_str);
	}
	KEY(t, "}");
}

static int by_node(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct placeholder *)a)->node;
	uintptr_t y = (uintptr_t)((const struct placeholder *)b)->node;
	return x < y ? -1 : x > y;
}

/* (every empty array and object of the tree is looked up: by bisection,
 * as a report of many threads has many of both) */
static void direct_sort(void)
{
	if (direct.n)
		qsort(direct.p, direct.n, sizeof(*direct.p), by_node);
}

static bool frames_hook(struct json_text *t, json_t *node, void *arg)
{
	(void)arg;
	struct placeholder key = { .node = node };
	const struct placeholder *found = direct.n ? bsearch(&key, direct.p, direct.n, sizeof(key), by_node) : NULL;
	if (!found)
		return false;
	const struct ptrvec *v = found->frames;
	if (!v) {
		frame_text(t, found->frame, false);
		return true;
	}
	KEY(t, "[");
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			KEY(t, ",");
		frame_text(t, v->items[i], true);
	}
	KEY(t, "]");
	return true;
}

static void direct_end(void)
{
	free(direct.p);
	memset(&direct, 0, sizeof(direct));
}

static json_t *exception_json(const struct model_exception *e)
{
	if (!e)
		return json_null();
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "type", str_or_null(e->type),
			      "message", str_or_null(e->message), "error", str_or_null(e->error),
			      "error_code", error_code(e->error, e->error_info),
			      "error_address", error_address(e->error, e->error_info),
			      "traceback", frames_json(&e->traceback), "repr", str_or_null(e->repr));
	if (e->relation) {
		json_object_set_new(o, "relation", json_string(e->relation));
	} else {
		json_t *chain = json_array();
		for (size_t i = 0; i < e->chain.n; i++)
			json_array_append_new(chain, exception_json(e->chain.items[i]));
		json_object_set_new(o, "chain", chain);
	}
	return o;
}

/* A Python thread, or (PYTHON false) an OS thread without a Python thread
 * state: ident null. */
static json_t *wait_json(const struct model_wait *w)
{
	if (!w)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "type", str_or_null(w->type),
			 "address", addr_or_null(w->address, true), "repr", str_or_null(w->repr),
			 "owner", w->owner >= 0 ? json_integer(w->owner) : json_null(),
			 "count", w->count >= 0 ? json_integer(w->count) : json_null(),
			 "owner_ident", w->owner_ident_known ? json_integer((json_int_t)w->owner_ident) : json_null(),
			 "owner_in_process", w->owner_ident_known ? json_boolean(!w->owner_elsewhere) : json_null());
}

static json_t *greenlets_json(const struct ptrvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++) {
		const struct model_greenlet *g = v->items[i];
		json_array_append_new(a, json_pack("{s:o, s:o, s:s, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o}",
			"address", addr_or_null(g->address, true), "type", str_or_null(g->type),
			"state", g->state, "main", g->main, "hub", g->hub, "run", str_or_null(g->run),
			"parent", addr_or_null(g->parent, g->parent != 0), "stack", frames_json(&g->stack),
			"error", str_or_null(g->error), "error_code", error_code(g->error, g->error_info),
			"error_address", error_address(g->error, g->error_info)));
	}
	return a;
}

static json_t *thread_json(const struct model_thread *t, bool python)
{
	/* (one by one, as frame_json's) */
	json_t *j = json_object();
	json_object_set_new_nocheck(j, "tid", t->tid >= 0 ? json_integer(t->tid) : json_null());
	/* jansson integers are signed 64-bit; pthread_t values fit */
	json_object_set_new_nocheck(j, "ident", python ? json_integer((json_int_t)t->ident) : json_null());
	json_object_set_new_nocheck(j, "name", str_or_null(t->name));
	json_object_set_new_nocheck(j, "holds_gil", json_boolean(t->holds_gil));
	json_object_set_new_nocheck(j, "crashed", json_boolean(t->crashed));
	json_object_set_new_nocheck(j, "error", str_or_null(t->error));
	json_object_set_new_nocheck(j, "error_code", error_code(t->error, t->error_info));
	json_object_set_new_nocheck(j, "error_address", error_address(t->error, t->error_info));
	json_object_set_new_nocheck(j, "frames", frames_json(&t->frames));
	json_object_set_new_nocheck(j, "exception", exception_json(t->exception));
	json_object_set_new_nocheck(j, "waiting_on", wait_json(t->waiting_on));
	json_object_set_new_nocheck(j, "fault_frame",
				    t->fault_frame ? json_integer((json_int_t)t->fault_frame - 1) : json_null());
	json_object_set_new_nocheck(j, "stale", json_boolean(t->stale));
	json_object_set_new_nocheck(j, "greenlets", greenlets_json(&t->greenlets));
	return j;
}

static json_t *task_refs(const struct ptrvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, addr_or_null(((const struct model_task *)v->items[i])->address, true));
	return a;
}

static json_t *task_json(const struct model_task *t)
{
	json_t *exc = t->exception_type ? json_pack("{s:o, s:o}", "type", str_or_null(t->exception_type),
						    "message", str_or_null(t->exception_message))
		      : json_null();
	json_t *waiting = t->waiter ? json_pack("{s:o, s:o}", "type", str_or_null(t->waiter_type),
						"address", addr_or_null(t->waiter, true))
			  : json_null();
	return json_pack("{s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "name", str_or_null(t->name), "address", addr_or_null(t->address, true),
			 "state", str_or_null(t->state), "running", t->running,
			 "coroutine", str_or_null(t->coroutine), "stack", frames_json(&t->stack),
			 "awaiting", task_refs(&t->awaiting), "awaited_by", task_refs(&t->awaited_by),
			 "waiting_on", waiting, "result", str_or_null(t->result), "exception", exc,
			 "error", str_or_null(t->error),
			 "error_code", error_code(t->error, t->error_info),
			 "error_address", error_address(t->error, t->error_info));
}

/* The interpreter's event loops; null when they were not read. */
static json_t *asyncio_json(const struct model_interp *mi)
{
	if (!mi->asyncio_read)
		return json_null();
	json_t *loops = json_array();
	for (size_t i = 0; i < mi->loops.n; i++) {
		const struct model_loop *l = mi->loops.items[i];
		json_t *tasks = json_array();
		for (size_t k = 0; k < l->tasks.n; k++)
			json_array_append_new(tasks, task_json(l->tasks.items[k]));
		json_array_append_new(loops, json_pack("{s:o, s:o, s:o, s:o, s:o}",
			"thread", l->thread >= 0 ? json_integer(l->thread) : json_null(),
			"loop", addr_or_null(l->address, l->address != 0),
			"type", str_or_null(l->type),
			"running", l->running < 0 ? json_null() : json_boolean(l->running),
			"tasks", tasks));
	}
	return loops;
}

static json_t *int_or_null(int64_t v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* process.coredump: systemd-coredump's attributes of the file */
static json_t *coredump_json(const struct model_coredump *c)
{
	if (!c)
		return json_null();
	char when[32];
	bool has_when = report_iso8601(c->timestamp, when, sizeof(when));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "comm", str_or_null(c->comm), "exe", str_or_null(c->exe),
			 "uid", int_or_null(c->uid), "gid", int_or_null(c->gid),
			 "signal", int_or_null(c->signal),
			 "timestamp", has_when ? json_string(when) : json_null(),
			 "hostname", str_or_null(c->hostname));
}

static json_t *fingerprint_json(const struct model_fingerprint *fp)
{
	if (!fp)
		return json_null();
	json_t *frames = json_array();
	for (size_t i = 0; i < fp->nframes; i++)
		json_array_append_new(frames, str_or_null(fp->frames[i]));
	return json_pack("{s:s, s:i, s:o, s:o, s:o}", "hash", fp->hash, "version", fp->version,
			 "kind", str_or_null(fp->kind), "frames", frames, "message", str_or_null(fp->message));
}

/* What redact.c replaced: always a list, empty when nothing was (or
 * redaction was not asked for). */
static json_t *redacted_json(const struct model_report *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->redactions.n; i++) {
		const struct model_redaction *e = r->redactions.items[i];
		json_array_append_new(a, json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:s}",
			"thread", e->thread >= 0 ? json_integer(e->thread) : json_null(),
			"in", e->in,
			"task", addr_or_null(e->task, e->task != 0),
			"greenlet", addr_or_null(e->greenlet, e->greenlet != 0),
			"frame", e->frame >= 0 ? json_integer(e->frame) : json_null(),
			"name", str_or_null(e->name),
			"attribute", str_or_null(e->attribute),
			"reason", e->reason));
	}
	return a;
}

/* The summary object; its frames are the threads' frame objects without
 * their locals. */
static json_t *summary_json(const struct model_report *r)
{
	struct report_summary s;
	report_summary(r, &s);
	json_t *exc = json_null();
	if (s.exception)
		exc = json_pack("{s:o, s:o}", "type", str_or_null(s.exception->type),
				"message", str_or_null(s.exception->message));
	json_t *deadlock = json_null();
	if (s.deadlock) {
		deadlock = json_array();
		for (size_t i = 0; i < s.ndeadlock; i++)
			json_array_append_new(deadlock, json_integer(s.deadlock[i]->tid)); /* owners: tid known */
	}
	json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			      "kind", s.kind,
			      "text", str_or_null(s.text),
			      "thread", s.tid >= 0 ? json_integer(s.tid) : json_null(),
			      "python_frame", frame_json(s.python_frame), "native_frame", frame_json(s.native_frame),
			      "native_caller", frame_json(s.native_caller),
			      "exception", exc,
			      "deadlock", deadlock);
	if (j)
		json_object_set_new(j, "abort", str_or_null(r->abort ? r->abort->message : NULL));
	report_summary_free(&s);
	return j;
}

static json_t *signal_json(const struct model_signal *sg)
{
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "number", sg->number,
			 "name", str_or_null(report_signal_name(sg->number)),
			 "code", sg->has_code ? json_integer(sg->code) : json_null(),
			 "code_name", sg->has_code ? str_or_null(report_signal_code_name(sg->number, sg->code))
			 : json_null(),
			 "address", addr_or_null(sg->address, sg->has_address),
			 "sender_pid", sg->has_sender ? json_integer(sg->sender_pid) : json_null(),
			 "sender_uid", sg->has_sender ? json_integer(sg->sender_uid) : json_null());
}

/* process.fault: the signal a handler caught, with where (.handling: a live
 * process's handler runs now); reraised_by: who sent the core's again */
static void fault_json(json_t *process, const struct model_report *r)
{
	const struct model_fault *f = r->fault;
	json_t *fault = json_null(), *by = json_null();
	if (f) {
		fault = signal_json(&f->signal);
		json_object_set_new(fault, "thread", json_integer(f->tid));
		json_object_set_new(fault, "pc", addr_or_null(f->pc, true));
		json_object_set_new(fault, "sp", addr_or_null(f->sp, true));
		json_object_set_new(fault, "origin", str_or_null(f->origin));
		json_object_set_new(fault, "siginfo", json_boolean(f->siginfo));
		json_object_set_new(fault, "number_assumed", json_boolean(f->number_assumed));
		json_object_set_new(fault, "handling", json_boolean(f->handling));
		by = f->handling ? json_null() : json_pack("{s:o, s:o, s:o, s:I, s:o, s:o}", "handler", str_or_null(f->handler),
			       "function", str_or_null(f->handler_function),
			       "module", str_or_null(f->handler_module), "thread", (json_int_t)f->tid,
			       "received_by", f->received_tid >= 0 ? json_integer(f->received_tid) : json_null(),
			       "proof", str_or_null(f->handler_proof));
	}
	json_object_set_new(process, "fault", fault);
	json_object_set_new(process, "reraised_by", by);
}

static json_t *report_json(const struct model_report *r)
{
	json_t *argv = json_null();
	if (r->argv) {
		argv = json_array();
		for (const char **a = r->argv; *a; a++)
			json_array_append_new(argv, str_or_null(*a));
	}
	json_t *signal = json_null();
	if (r->has_signal)
		signal = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "number", r->signal_number,
				   "name", str_or_null(r->signal_name),
				   "code", r->signal_has_code ? json_integer(r->signal_code) : json_null(),
				   "code_name", r->signal_has_code ? str_or_null(report_signal_code_name(
						r->signal_number, r->signal_code)) : json_null(),
				   "address", addr_or_null(r->signal_address, r->signal_has_address),
				   "sender_pid", r->signal_has_sender ? json_integer(r->sender_pid) : json_null(),
				   "sender_uid", r->signal_has_sender ? json_integer(r->sender_uid) : json_null());
	json_t *modules = json_array();
	for (size_t i = 0; i < r->modules.n; i++) {
		const struct model_module *m = r->modules.items[i];
		json_array_append_new(modules, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
			"path", str_or_null(m->path), "start", addr_or_null(m->start, true),
			"end", addr_or_null(m->end, true), "build_id", str_or_null(m->build_id),
			"file", str_or_null(m->file), "found_by", str_or_null(m->found_by),
			"base", addr_or_null(m->base, m->base != 0), "base_from", str_or_null(m->base_from),
			"base_verified", m->base_verified));
		json_t *jm = json_array_get(modules, json_array_size(modules) - 1);
		if (jm) {
			json_object_set_new(jm, "verified_by", str_or_null(m->verified_by));
			json_object_set_new(jm, "verified_bytes", m->verified_by && strcmp(m->verified_by, "bytes") == 0
						? json_integer((json_int_t)m->verified_bytes) : json_null());
			json_object_set_new(jm, "refused", str_or_null(m->refused));
		}
	}
	json_t *annotations = json_array();
	for (size_t i = 0; i < r->nannotations; i++) {
		const struct model_annotation *n = &r->annotations[i];
		json_array_append_new(annotations, json_pack("{s:o, s:o, s:o}", "module", str_or_null(n->module),
							     "name", str_or_null(n->name),
							     "value", str_or_null(n->value)));
	}
	json_t *tids = json_array();
	for (size_t i = 0; i < r->ntids; i++)
		json_array_append_new(tids, json_integer(r->tids[i]));
	json_t *python = json_null();
	if (r->has_python) {
		json_t *binary = json_pack("{s:o, s:o, s:o}", "path", str_or_null(r->binary_path),
					   "build_id", str_or_null(r->binary_build_id),
					   "found_by", str_or_null(r->binary_found_by));
		python = json_pack("{s:o, s:o, s:b, s:o, s:o, s:o}",
				   /* only a full version: one told by its minor alone
				    * ("3.7", the text's) is null here, a warning says it */
				   "version", str_or_null(r->hexversion ? r->version : NULL),
				   "hexversion", r->hexversion ? json_integer((json_int_t)r->hexversion) : json_null(),
				   "free_threaded", r->free_threaded,
				   "binary", binary,
				   "runtime_address", addr_or_null(r->runtime_address, r->runtime_address != 0),
				   "located_by", str_or_null(r->located_by));
	}
	json_t *interps = json_array();
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		json_t *threads = json_array(), *stale = json_array();
		for (size_t k = 0; k < mi->threads.n; k++)
			json_array_append_new(threads, thread_json(mi->threads.items[k], true));
		for (size_t k = 0; k < mi->stale_threads.n; k++)
			json_array_append_new(stale, thread_json(mi->stale_threads.items[k], true));
		json_array_append_new(interps, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)mi->id,
							 "gc_collecting", mi->gc_collecting < 0 ? json_null()
							 : json_boolean(mi->gc_collecting),
							 "gil_enabled", mi->gil_enabled < 0 ? json_null()
							 : json_boolean(mi->gil_enabled),
							 "threads", threads,
							 "asyncio", asyncio_json(mi),
							 "stale_threads", stale,
							 "greenlet_version", str_or_null(mi->greenlet_version),
							 "greenlets", greenlets_json(&mi->greenlets)));

	}
	json_t *native_threads = json_null();
	if (r->has_native_threads) {
		native_threads = json_array();
		for (size_t i = 0; i < r->native_threads.n; i++)
			json_array_append_new(native_threads, thread_json(r->native_threads.items[i], false));
	}
	json_t *warnings = json_array();
	for (size_t i = 0; i < r->warnings.n; i++)
		json_array_append_new(warnings, str_or_null(r->warnings.items[i]));

	json_t *j = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o, s:o, s:o, s:o, s:I, s:o}, "
			 "s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:o, s:o, s:o, s:o}",
			 "schema", REPORT_SCHEMA,
			 "tool", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
			 "summary", summary_json(r),
			 "input", "path", str_or_null(r->input_path), "format", str_or_null(r->input_format),
			 "compression", str_or_null(r->input_compression),
			 "architecture", str_or_null(r->input_architecture),
			 "size", (json_int_t)r->input_size, "annotations", annotations,
			 "process", "pid", r->pid >= 0 ? json_integer(r->pid) : json_null(),
			 "ppid", r->ppid >= 0 ? json_integer(r->ppid) : json_null(),
			 "uid", r->uid >= 0 ? json_integer(r->uid) : json_null(),
			 "gid", r->gid >= 0 ? json_integer(r->gid) : json_null(),
			 "executable", str_or_null(r->executable), "argv", argv, "signal", signal,
			 "crashed_tid", r->crashed_tid >= 0 ? json_integer(r->crashed_tid) : json_null(),
			 "modules", modules, "threads", tids,
			 "python", python,
			 "interpreters", interps,
			 "native_threads", native_threads,
			 "warnings", warnings);
	if (j) {
		json_object_set_new(json_object_get(j, "input"), "kind", json_string(r->input_kind ? r->input_kind : "dump"));
		json_object_set_new(json_object_get(j, "process"), "stopped_ms",
				    r->stopped_ms >= 0 ? json_real(r->stopped_ms) : json_null());
		json_object_set_new(json_object_get(j, "process"), "coredump", coredump_json(r->coredump));
		fault_json(json_object_get(j, "process"), r);
		json_object_set_new(j, "fingerprint", fingerprint_json(r->fingerprint));
		json_object_set_new(j, "fault_kind", report_fault_kind_json(r->fault_kind, str_or_null));
		json_object_set_new(j, "redacted", redacted_json(r));
		json_object_set_new(j, "abort", report_abort_json(r->abort, str_or_null));
		json_object_set_new(j, "samples", report_samples_json(r->samples, str_or_null));
		json_object_set_new(j, "heap", report_heap_json(r->heap, str_or_null));
	}
	return j;
}

/* A report's JSON is built, written and dropped in one go.  With locals it
 * is hundreds of thousands of jansson nodes, each a malloc and a free:
 * perf put a third of `analyze --pid --locals --format json` of 100
 * threads in malloc, free and the heap's consolidation.  While a report is
 * built and written, jansson's memory comes from a bump arena instead,
 * released whole afterwards (nothing jansson allocates then outlives it:
 * the tree and its text are gone when report_json_write returns; pycore
 * builds JSON on one thread). */
#define ARENA_CHUNK ((size_t)1 << 20)

struct jarena_chunk {
	struct jarena_chunk *next;
	size_t size, used;
	max_align_t data[];
};
static struct jarena_chunk *jarena_head;

static void *jarena_malloc(size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	struct jarena_chunk *c = jarena_head;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (!(c = malloc(sizeof(*c) + size)))
			return NULL;
		*c = (struct jarena_chunk){ jarena_head, size, 0 };
		jarena_head = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void jarena_free(void *p)
{
	(void)p;   /* released with the arena */
}

static void jarena_release(void)
{
	json_set_alloc_funcs(malloc, free);
	while (jarena_head) {
		struct jarena_chunk *next = jarena_head->next;
		free(jarena_head);
		jarena_head = next;
	}
}

static int write_line(FILE *out, json_t *j, bool pretty)
{
	if (!j)
		return -1;
	size_t flags = JSON_PRESERVE_ORDER | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
	char *text = json_dumps(j, flags);
	json_decref(j);
	int rc = text ? write_unmarked(out, text, strlen(text)) : -1;
	free(text);
	if (rc != 0 || fputc('\n', out) == EOF)
		return -1;
	return 0;
}

int report_json_write(FILE *out, const struct model_report *r, bool pretty)
{
	json_set_alloc_funcs(jarena_malloc, jarena_free);
	json_t *j = report_json(r);
	size_t len = 0;
	/* json_text.c's, the same bytes as jansson's, faster */
	direct_sort();
	char *text = j && !direct.failed ? json_text_compact_hooked(j, &len, frames_hook, NULL) : NULL;
	if (text && pretty) {
		json_t *again = json_loadb(text, len, 0, NULL);
		text = again ? json_dumps(again, JSON_PRESERVE_ORDER | JSON_INDENT(2)) : NULL;
		len = text ? strlen(text) : 0;
	}
	int rc = text && write_unmarked(out, text, len) == 0 && fputc('\n', out) != EOF ? 0 : -1;
	/* (the tree and the texts are the arena's, released below) */
	direct_end();
	jarena_release();
	return rc;
}

int report_json_error_write(FILE *out, const char *path, const char *code, const struct pc_error *e)
{
	const char *kind = pc_code_name(e->code);
	return write_line(out, json_pack("{s:s, s:{s:s, s:s}, s:{s:o}, s:{s:s, s:o, s:o, s:o}}",
					 "schema", REPORT_SCHEMA,
					 "tool", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
					 "input", "path", str_or_null(path),
					 "error", "code", code ? code : kind ? kind : "corrupt",
					 "message", str_or_null(e->message),
					 "kind", kind ? json_string(kind) : json_null(),
					 "address", addr_or_null(e->address, e->has_address)), false);
}
