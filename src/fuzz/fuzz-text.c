/* Fuzz target: the text renderer (src/report/text.c, escape.c) over a
 * report whose every string that a dump can supply comes from the input:
 * the input path, argv, the executable, thread and loop names, file and
 * function names, locals' names, types, reprs and errors, exceptions'
 * types and messages, tasks' names, coroutines, results and errors,
 * thread errors and warnings.  The input is those strings, split at NUL
 * bytes and taken in turn (a string "\x01" stands for NULL); its first
 * bytes choose the shape (how many threads, frames, locals, tasks, which
 * flags).  The fingerprint and the redaction pass run over it as the
 * analysis runs them.
 *
 * The checks, independent of escape.c's own tables:
 * - the text holds no C0 control byte but the renderer's own newlines, no
 *   DEL, no C1 control (U+0080-U+009F), no line or paragraph separator,
 *   no bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E,
 *   U+2066-U+2069), and is valid UTF-8 (a stray byte 0x9b is CSI on an
 *   8-bit terminal);
 * - it has exactly as many newlines as the same report rendered with each
 *   non-empty string replaced by a placeholder, "x" and the string's
 *   FNV-1a hash (equal strings stay equal, so identical stacks are grouped
 *   and recursions collapsed the same way; empty ones kept empty, NULL
 *   kept NULL): no newline of the input's reached the output.  Source
 *   lines are off (a path from the input could name a real file).  That second
 *   render runs without the redaction pass, whose choices depend on what
 *   the strings say; the first is checked for control characters both
 *   with and without it. */
#include <string.h>

#include "fuzz-reader.h"
#include "util/hash.h"
#include "model/fingerprint.h"
#include "model/redact.h"
#include "report/report.h"

struct src {
	const uint8_t *p, *end;
	unsigned shape_bits;
	bool skeleton;       /* every string a placeholder ("x" and its hash) or "" */
	struct arena *a;
};

/* The next string of the input; NULL when the input is used up or the
 * string is "\x01". */
static const char *next(struct src *s)
{
	if (s->p >= s->end)
		return NULL;
	const uint8_t *z = memchr(s->p, 0, (size_t)(s->end - s->p));
	size_t n = z ? (size_t)(z - s->p) : (size_t)(s->end - s->p);
	const uint8_t *start = s->p;
	s->p += n + (z != NULL);
	if (n == 1 && start[0] == 1)
		return NULL;
	if (s->skeleton && !n)
		return "";
	if (s->skeleton) {
		/* one placeholder per distinct string: equal strings stay equal,
		 * so stacks are grouped and recursions collapsed alike */
		char *x = arena_alloc(s->a, 18);
		if (x)
			snprintf(x, 18, "x%016llx", (unsigned long long)pc_fnv1a64(PC_FNV1A64_INIT, start, n));
		return x;
	}
	char *str = arena_alloc(s->a, n + 1);
	if (str)
		memcpy(str, start, n);
	return str;
}

/* A small number from the shape bytes; 0 once the strings are used up,
 * so that the report grows with the input, not beyond it. */
static unsigned pick(struct src *s, unsigned bits)
{
	if (s->p >= s->end)
		return 0;
	unsigned v = s->shape_bits & ((1u << bits) - 1);
	s->shape_bits = (s->shape_bits >> bits) | (v << (32 - bits));
	return v;
}

static void push(struct arena *a, struct ptrvec *v, void *item)
{
	if (item)
		ptrvec_push(a, v, item);
}

static struct model_local *make_local(struct src *s, int depth)
{
	struct model_local *l = arena_alloc(s->a, sizeof(*l));
	if (!l)
		return NULL;
	static const char *const kinds[] = { "argument", "local", "cell", "free" };
	l->name = next(s);
	l->kind = kinds[pick(s, 2)];
	l->type = next(s);
	l->address = 0x7f0000001000u;
	l->repr = next(s);
	l->error = pick(s, 1) ? next(s) : NULL;
	if (depth < 2 && pick(s, 1)) {
		l->has_attributes = true;
		for (unsigned i = pick(s, 2); i > 0; i--)
			push(s->a, &l->attributes, make_local(s, depth + 1));
	}
	return l;
}

static struct model_frame *make_frame(struct src *s, enum frame_kind kind)
{
	struct model_frame *f = arena_alloc(s->a, sizeof(*f));
	if (!f)
		return NULL;
	f->kind = kind;
	f->function = next(s);
	f->qualname = next(s);
	f->file = next(s);
	f->line = (int)pick(s, 3) - 1;
	if (kind == FRAME_NATIVE) {
		f->address = 0x401000;
		f->source_file = next(s);
		f->inlined = pick(s, 1);
		f->tail_call = pick(s, 1);
	} else {
		f->recovered = pick(s, 1);
	}
	if (pick(s, 1)) {
		f->has_locals = true;
		for (unsigned i = pick(s, 2); i > 0; i--)
			push(s->a, &f->locals, make_local(s, 0));
	}
	return f;
}

static struct model_thread *make_thread(struct src *s, int64_t tid, bool python)
{
	struct model_thread *t = arena_alloc(s->a, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->ident = 0x7f0000000000u + (uint64_t)tid;
	t->name = next(s);
	t->crashed = pick(s, 2) == 0;
	t->holds_gil = python && pick(s, 1);
	for (unsigned i = pick(s, 3); i > 0; i--) {
		unsigned k = pick(s, 3);
		push(s->a, &t->frames, make_frame(s, !python || k == 0 ? FRAME_NATIVE : k == 1 ? FRAME_GC
						: FRAME_PYTHON));
	}
	t->error = pick(s, 1) ? next(s) : NULL;
	if (python && pick(s, 1)) {
		struct model_exception *e = arena_alloc(s->a, sizeof(*e));
		if (e) {
			e->type = next(s);
			e->message = next(s);
			e->error = pick(s, 1) ? next(s) : NULL;
			for (unsigned i = pick(s, 2); i > 0; i--)
				push(s->a, &e->traceback, make_frame(s, FRAME_PYTHON));
			t->exception = e;
		}
	}
	return t;
}

static struct model_task *make_task(struct src *s, unsigned i)
{
	static const char *const states[] = { "pending", "cancelling", "done", "cancelled" };
	struct model_task *t = arena_alloc(s->a, sizeof(*t));
	if (!t)
		return NULL;
	t->name = next(s);
	t->address = 0x7f0000100000u + 0x100u * i;
	t->state = states[pick(s, 2)];
	t->running = pick(s, 1);
	t->coroutine = next(s);
	for (unsigned k = pick(s, 2); k > 0; k--)
		push(s->a, &t->stack, make_frame(s, FRAME_PYTHON));
	if (pick(s, 1)) {
		t->waiter_type = next(s);
		t->waiter = 0x7f0000200000u;
	}
	t->result = next(s);
	t->exception_type = next(s);
	t->exception_message = next(s);
	t->error = next(s);
	return t;
}

static struct model_report *make_report(const uint8_t *data, size_t size, bool skeleton)
{
	struct model_report *r = model_report_new();
	if (!r)
		return NULL;
	struct src s = { data + 4, data + size, 0, skeleton, r->arena };
	memcpy(&s.shape_bits, data, 4);
	r->input_path = next(&s);
	if (!r->input_path)
		r->input_path = "core";
	r->input_format = pick(&s, 1) ? "elf-core" : "minidump";
	r->input_compression = pick(&s, 1) ? "zstd" : NULL;
	r->input_size = size;
	r->pid = 4242;
	r->executable = next(&s);
	unsigned nargv = pick(&s, 2);
	if (nargv) {
		const char **argv = arena_alloc(r->arena, (nargv + 1) * sizeof(*argv));
		if (argv) {
			/* argv has no NULL inside: "\x01" is a one-byte string here */
			for (unsigned i = 0; i < nargv; i++) {
				const char *a = next(&s);
				argv[i] = a ? a : skeleton ? "x" : "\x01";
			}
			r->argv = argv;
		}
	}
	r->has_signal = pick(&s, 1);
	r->signal_number = 11;
	r->signal_code = 1;
	r->signal_has_code = true;
	r->signal_name = "SIGSEGV";
	r->signal_has_address = true;
	r->crashed_tid = 100;
	r->has_python = true;
	r->version = "3.13.1";
	r->hexversion = 0x030d01f0;
	r->free_threaded = pick(&s, 1);
	r->binary_path = next(&s);
	unsigned ninterps = 1 + pick(&s, 1);
	int64_t tid = 100;
	for (unsigned i = 0; i < ninterps; i++) {
		struct model_interp *mi = arena_alloc(r->arena, sizeof(*mi));
		if (!mi)
			break;
		mi->id = i;
		mi->gil_enabled = (int)pick(&s, 1);
		for (unsigned k = 1 + pick(&s, 2); k > 0; k--)
			push(r->arena, &mi->threads, make_thread(&s, tid++, true));
		mi->asyncio_read = pick(&s, 2) != 0;
		for (unsigned k = mi->asyncio_read ? pick(&s, 1) + 1 : 0; k > 0; k--) {
			struct model_loop *l = arena_alloc(r->arena, sizeof(*l));
			if (!l)
				break;
			l->address = 0x7f0000300000u + k;
			l->thread = pick(&s, 1) ? 100 : -1;
			l->thread_name = next(&s);
			unsigned ntasks = pick(&s, 3);
			for (unsigned j = 0; j < ntasks; j++)
				push(r->arena, &l->tasks, make_task(&s, j));
			/* who awaits whom, cycles allowed */
			for (unsigned j = 0; ntasks > 1 && j < ntasks; j++) {
				unsigned to = pick(&s, 3) % ntasks;
				if (j < l->tasks.n && to < l->tasks.n && pick(&s, 1)) {
					struct model_task *from = l->tasks.items[j], *t = l->tasks.items[to];
					ptrvec_push(r->arena, &from->awaiting, t);
					ptrvec_push(r->arena, &t->awaited_by, from);
				}
			}
			push(r->arena, &mi->loops, l);
		}
		push(r->arena, &r->interps, mi);
	}
	r->has_native_threads = pick(&s, 1);
	for (unsigned k = r->has_native_threads ? pick(&s, 2) : 0; k > 0; k--)
		push(r->arena, &r->native_threads, make_thread(&s, tid++, false));
	r->state_missing = pick(&s, 1);
	for (const char *w; (w = next(&s)) != NULL || s.p < s.end;)
		if (w)
			push(r->arena, &r->warnings, (void *)w);
	r->fingerprint = model_fingerprint(r);
	return r;
}

static char *render(const struct model_report *r, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	if (!out)
		abort();
	struct report_text_options o = { .tasks = true, .source = false };
	report_text_write_options(out, r, &o);
	fclose(out);
	return buf;
}

/* The first control character in TEXT (see the top), or NULL. */
PC_NOT_COVERED static const char *control(const char *text, size_t n, uint32_t *what)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0;
	while (i < n) {
		uint32_t cp;
		size_t len;
		unsigned char b = p[i];
		if (b < 0x80) {
			cp = b, len = 1;
		} else if (b >= 0xc2 && b <= 0xdf) {
			cp = b & 0x1fu, len = 2;
		} else if (b >= 0xe0 && b <= 0xef) {
			cp = b & 0x0fu, len = 3;
		} else if (b >= 0xf0 && b <= 0xf4) {
			cp = b & 0x07u, len = 4;
		} else {
			*what = b;
			return "a byte that starts no UTF-8 sequence";
		}
		if (i + len > n) {
			*what = b;
			return "a UTF-8 sequence cut short";
		}
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80) {
				*what = b;
				return "a UTF-8 sequence cut short";
			}
			cp = cp << 6 | (p[i + k] & 0x3fu);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			*what = cp;
			return "an overlong or invalid UTF-8 sequence";
		}
		*what = cp;
		if ((cp < 0x20 && cp != '\n') || cp == 0x7f)
			return "a C0 control character or DEL";
		if (cp >= 0x80 && cp <= 0x9f)
			return "a C1 control character";
		if (cp == 0x2028 || cp == 0x2029)
			return "a line or paragraph separator";
		if (cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069))
			return "a bidirectional control";
		i += len;
	}
	return NULL;
}

PC_NOT_COVERED static size_t newlines(const char *text, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += text[i] == '\n';
	return k;
}

PC_NOT_COVERED static void check(const char *text, size_t n, const char *pass)
{
	uint32_t what;
	const char *why = control(text, n, &what);
	if (why) {
		fprintf(stderr, "fuzz-text (%s): the text holds %s (0x%x):\n%.*s\n", pass, why, (unsigned)what,
			(int)(n > 4000 ? 4000 : n), text);
		abort();
	}
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct model_report *r = make_report(data, size, false);
	struct model_report *sk = make_report(data, size, true);
	if (!r || !sk) {
		model_report_free(r);
		model_report_free(sk);
		return 0;
	}
	size_t n, skn;
	char *text = render(r, &n);
	char *sktext = render(sk, &skn);
	check(text, n, "as given");
	check(sktext, skn, "skeleton");
	if (newlines(text, n) != newlines(sktext, skn)) {
		fprintf(stderr, "fuzz-text: %zu newlines, %zu with every string a placeholder: a newline of the input's "
			"reached the text:\n%s\n", newlines(text, n), newlines(sktext, skn), text);
		abort();
	}
	free(text);
	free(sktext);
	/* the redaction pass, as --redact runs it */
	r->redact = true;
	model_redact(r);
	text = render(r, &n);
	check(text, n, "redacted");
	free(text);
	model_report_free(r);
	model_report_free(sk);
	return 0;
}
