/* Redaction (redact.h).
 *
 *   names   a variable or attribute is secret when its name, split into
 *           words at "_", "-", "." and lower-to-upper case changes and
 *           lowercased, has a word password, passwd, pwd, passphrase,
 *           secret, token, auth, authorization, credential, creds, cookie,
 *           session, sessionid, private, apikey, privkey, jwt or bearer
 *           (or one of them with an "s"), a word ending in "token"
 *           (csrftoken), or the pair api/private/access/secret/signing/
 *           encryption + key; or when the name holds password, passwd,
 *           passphrase, secret, credential or apikey anywhere
 *           (mypassword).  The attributes of an instance held by such a
 *           variable are all secret too.  Functions, methods, classes and
 *           modules are never redacted by name: their repr holds no value.
 *   values  a repr holding an AWS access key id (AKIA or ASIA and 16 of
 *           [0-9A-Z]), a PEM private key ("-----BEGIN ... PRIVATE
 *           KEY-----"), a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_ and 30
 *           or more letters and digits; github_pat_), a Slack token
 *           (xoxb-, xoxa-, xoxp-, xoxr-, xoxs- and 10 or more of
 *           [A-Za-z0-9-]) or a JSON Web Token (eyJ....eyJ...).
 *   args    a native frame's argument's string (char *) or repr
 *           (PyObject *): by its name or a format as a variable's, and
 *           its whole text is a secret found.
 *   spread  then every other variable, attribute, argument, exception
 *           message and task result whose text holds one of the secrets found (a
 *           redacted string's content of 6 characters or more, a matched
 *           format) is redacted as well, reason "secret-value".
 *
 * The placeholder keeps the type and the length: "<redacted str of 24
 * characters>" (len() of the string, decoded from its repr), "<redacted
 * bytes of 16 bytes>", "<redacted dict, repr of 80 characters>"; a repr
 * that was cut (--max-repr) gives "more than N". */
#include "model/redact.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static bool alnum(char c)
{
	return isalnum((unsigned char)c);
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static size_t run_of(const char *p, const char *extra)
{
	size_t n = 0;
	while (p[n] && (alnum(p[n]) || (extra && strchr(extra, p[n]))))
		n++;
	return n;
}

/* The well-known format at P (a word boundary before it), with its length. */
static const char *format_at(const char *p, size_t *len)
{
	size_t n;
	if ((starts(p, "AKIA") || starts(p, "ASIA"))) {
		for (n = 4; n < 20 && (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n])); n++)
			;
		if (n == 20 && !alnum(p[20])) {
			*len = 20;
			return "aws-access-key-id";
		}
	}
	if (starts(p, "-----BEGIN ")) {
		const char *end = strstr(p + 11, "-----");
		if (end && end - p < 80 && end - p >= 22 && memcmp(end - 11, "PRIVATE KEY", 11) == 0) {
			*len = (size_t)(end - p) + 5;
			return "private-key";
		}
	}
	if (p[0] == 'g' && p[1] == 'h' && p[2] && strchr("pousr", p[2]) && p[3] == '_' && (n = run_of(p + 4, NULL)) >= 30) {
		*len = 4 + n;
		return "github-token";
	}
	if (starts(p, "github_pat_") && (n = run_of(p + 11, "_")) >= 22) {
		*len = 11 + n;
		return "github-token";
	}
	if (starts(p, "xox") && p[3] && strchr("baprs", p[3]) && p[4] == '-' && (n = run_of(p + 5, "-")) >= 10) {
		*len = 5 + n;
		return "slack-token";
	}
	if (starts(p, "eyJ") && (n = run_of(p, "_-")) >= 13 && p[n] == '.' && starts(p + n + 1, "eyJ")) {
		size_t m = run_of(p + n + 1, "_-");
		if (m >= 13) {
			*len = n + 1 + m;
			return "jwt";
		}
	}
	return NULL;
}

/* The first well-known format in S: its reason, where and how long. */
static const char *find_format(const char *s, const char **at, size_t *len)
{
	for (const char *p = s; p && *p; p++) {
		if (p > s && alnum(p[-1]))
			continue;
		const char *why = format_at(p, len);
		if (why) {
			*at = p;
			return why;
		}
	}
	return NULL;
}

const char *model_secret_format(const char *value)
{
	const char *at;
	size_t len;
	return find_format(value, &at, &len);
}

static bool word_is(const char *w, size_t n, const char *want)
{
	size_t k = strlen(want);
	return (n == k || (n == k + 1 && w[k] == 's')) && memcmp(w, want, k) == 0;
}

bool model_secret_name(const char *name)
{
	static const char *const words[] = {
		"password", "passwd", "pwd", "passphrase", "secret", "token", "auth", "authorization",
		"credential", "creds", "cookie", "session", "sessionid", "private", "apikey", "privkey",
		"jwt", "bearer",
	};
	static const char *const anywhere[] = {
		"password", "passwd", "passphrase", "secret", "credential", "apikey",
	};
	static const char *const before_key[] = { "api", "private", "access", "secret", "signing", "encryption" };
	if (!name)
		return false;
	char low[128], prev[32] = "";
	size_t n = strlen(name);
	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = 0;
	for (size_t i = 0; i < sizeof(anywhere) / sizeof(*anywhere); i++)
		if (strstr(low, anywhere[i]))
			return true;
	for (size_t i = 0; i < n;) {
		if (!alnum(name[i])) {
			i++;
			continue;
		}
		size_t j = i + 1;
		while (j < n && alnum(name[j]) && !(islower((unsigned char)name[j - 1]) && isupper((unsigned char)name[j])))
			j++;
		const char *w = low + i;
		size_t wn = j - i;
		for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++)
			if (word_is(w, wn, words[k]))
				return true;
		if ((wn >= 5 && memcmp(w + wn - 5, "token", 5) == 0) || (wn >= 6 && memcmp(w + wn - 6, "tokens", 6) == 0))
			return true;
		if (word_is(w, wn, "key"))
			for (size_t k = 0; k < sizeof(before_key) / sizeof(*before_key); k++)
				if (strcmp(prev, before_key[k]) == 0)
					return true;
		snprintf(prev, sizeof(prev), "%.*s", (int)(wn < sizeof(prev) - 1 ? wn : sizeof(prev) - 1), w);
		i = j;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * The placeholder
 * ------------------------------------------------------------------------ */

/* The characters (bytes for a bytes repr) of the value a str or bytes
 * repr spells, from its opening quote to END. */
static size_t literal_length(const char *p, const char *end, bool bytes)
{
	char quote = *p++;
	size_t n = 0;
	while (p < end && *p != quote) {
		if (*p == '\\' && p + 1 < end) {
			char e = p[1];
			p += 2 + (e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0);
			n++;
		} else {
			/* one character per UTF-8 sequence (a bytes repr is ASCII) */
			if (bytes || ((unsigned char)*p & 0xc0) != 0x80)
				n++;
			p++;
		}
	}
	return n;
}

static char *placeholder(struct arena *a, const struct model_local *l)
{
	const char *repr = l->repr;
	size_t len = strlen(repr);
	bool cut = l->error && starts(l->error, "repr cut");
	const char *end = repr + len;
	if (cut && len >= 3 && strcmp(end - 3, "...") == 0)
		end -= 3;
	const char *more = cut ? "more than " : "";
	const char *type = l->type ? l->type : "object";
	if (strcmp(type, "str") == 0 && (*repr == '\'' || *repr == '"')) {
		size_t n = literal_length(repr, end, false);
		return arena_printf(a, "<redacted str of %s%zu character%s>", more, n, n == 1 && !cut ? "" : "s");
	}
	if (strcmp(type, "bytes") == 0 && repr[0] == 'b' && (repr[1] == '\'' || repr[1] == '"')) {
		size_t n = literal_length(repr + 1, end, true);
		return arena_printf(a, "<redacted bytes of %s%zu byte%s>", more, n, n == 1 && !cut ? "" : "s");
	}
	return arena_printf(a, "<redacted %s, repr of %s%zu characters>", type, more, (size_t)(end - repr));
}

/* ------------------------------------------------------------------------
 * The pass
 * ------------------------------------------------------------------------ */

struct redactor {
	struct model_report *r;
	struct ptrvec secrets;       /* of char *: texts that are secret wherever they appear */
	int pass;                    /* 1: names and formats; 2: spread */
	int failed;
	/* where the variables being visited are */
	int64_t thread;
	const char *in;
	uint64_t task;
	uint64_t greenlet;
	int64_t frame;
};

#define MIN_SECRET 6

static void remember(struct redactor *w, const char *s, size_t n)
{
	if (n < MIN_SECRET)
		return;
	char *copy = arena_alloc(w->r->arena, n + 1);
	if (!copy || ptrvec_push(w->r->arena, &w->secrets, copy) != 0) {
		w->failed = 1;
		return;
	}
	memcpy(copy, s, n);
}

/* The secrets a redacted text held: its formats, and a string's content. */
static void remember_value(struct redactor *w, const struct model_local *l, const char *text)
{
	const char *at;
	size_t len;
	for (const char *p = text; find_format(p, &at, &len); p = at + len)
		remember(w, at, len);
	if (!l || !l->type || (strcmp(l->type, "str") != 0 && strcmp(l->type, "bytes") != 0))
		return;
	const char *q = text + (*text == 'b');
	if (*q != '\'' && *q != '"')
		return;
	const char *close = strrchr(q + 1, *q);
	size_t n = close ? (size_t)(close - q - 1) : strlen(q + 1);
	if (!close && n >= 3)
		n -= 3;    /* a cut repr's "..." */
	remember(w, q + 1, n);
}

static const char *known_secret(const struct redactor *w, const char *text)
{
	for (size_t i = 0; text && i < w->secrets.n; i++)
		if (strstr(text, w->secrets.items[i]))
			return "secret-value";
	return NULL;
}

static void record(struct redactor *w, const char *name, const char *attribute, const char *reason)
{
	struct model_redaction *e = arena_alloc(w->r->arena, sizeof(*e));
	if (!e || ptrvec_push(w->r->arena, &w->r->redactions, e) != 0) {
		w->failed = 1;
		return;
	}
	*e = (struct model_redaction){ w->thread, w->in, w->task, w->greenlet, w->frame, name, attribute, reason };
}

static bool never_by_name(const char *type)
{
	static const char *const kinds[] = { "function", "builtin_function_or_method", "method", "type", "module" };
	for (size_t i = 0; type && i < sizeof(kinds) / sizeof(*kinds); i++)
		if (strcmp(type, kinds[i]) == 0)
			return true;
	return false;
}

/* Variables V (of the variable NAME when they are its attributes, PATH
 * the attribute path to them); INHERITED: their owner was secret. */
static void visit_locals(struct redactor *w, const struct ptrvec *v, const char *name, const char *path,
			 bool inherited)
{
	struct arena *a = w->r->arena;
	for (size_t i = 0; i < v->n; i++) {
		struct model_local *l = v->items[i];
		const char *attr = NULL;
		if (name) {
			attr = path ? arena_printf(a, "%s.%s", path, l->name ? l->name : "?") : l->name;
			if (!attr)
				w->failed = 1;
		}
		const char *reason = NULL;
		bool by_name = inherited || (model_secret_name(l->name) && !never_by_name(l->type));
		if (!l->redacted && l->repr) {
			if (w->pass == 1)
				reason = by_name ? "name" : model_secret_format(l->repr);
			else
				reason = known_secret(w, l->repr);
		}
		if (reason) {
			if (w->pass == 1)
				remember_value(w, l, l->repr);
			char *p = placeholder(a, l);
			l->repr = p ? p : "<redacted>";
			l->redacted = true;
			l->has_length = false;   /* the placeholder says what it may */
			record(w, name ? name : l->name, attr, reason);
		}
		if (l->has_attributes)
			visit_locals(w, &l->attributes, name ? name : l->name, attr, by_name && w->pass == 1);
	}
}

/* A native argument's text (a char pointer's string, a PyObject's
 * repr), as a variable's: by its name or a format in pass 1, by a known
 * secret in pass 2. */
static void visit_arg_text(struct redactor *w, const struct model_arg *a, const char **text, const char *what)
{
	if (!*text || strncmp(*text, "<redacted", 9) == 0)
		return;
	const char *reason = w->pass == 1 ? (model_secret_name(a->name) ? "name" : model_secret_format(*text))
			     : known_secret(w, *text);
	if (!reason)
		return;
	if (w->pass == 1) {
		remember_value(w, NULL, *text);
		remember(w, *text, strlen(*text));
	}
	char *p = arena_printf(w->r->arena, "<redacted %s of %zu characters>", what, strlen(*text));
	*text = p ? p : "<redacted>";
	record(w, a->name, NULL, reason);
}

static void visit_frames(struct redactor *w, const struct ptrvec *frames, const char *in)
{
	w->in = in;
	for (size_t i = 0; i < frames->n; i++) {
		const struct model_frame *f = frames->items[i];
		w->frame = (int64_t)i;
		if (f->has_locals)
			visit_locals(w, &f->locals, NULL, NULL, false);
		for (size_t k = 0; k < f->args.n; k++) {
			struct model_arg *a = f->args.items[k];
			visit_arg_text(w, a, &a->string, "string");
			visit_arg_text(w, a, &a->repr, "repr");
		}
	}
	w->frame = -1;
}

/* A message or a result: by format in pass 1, by a known secret in 2. */
static void visit_text(struct redactor *w, const char **text, const char *what)
{
	if (!*text || strncmp(*text, "<redacted", 9) == 0)
		return;
	const char *reason = w->pass == 1 ? model_secret_format(*text) : known_secret(w, *text);
	if (!reason)
		return;
	if (w->pass == 1)
		remember_value(w, NULL, *text);
	char *p = arena_printf(w->r->arena, "<redacted %s of %zu characters>", what, strlen(*text));
	*text = p ? p : "<redacted>";
	record(w, NULL, NULL, reason);
}

static void visit_all(struct redactor *w)
{
	struct model_report *r = w->r;
	/* (threads without Python: their native frames' arguments) */
	for (size_t i = 0; i < r->native_threads.n; i++) {
		const struct model_thread *t = r->native_threads.items[i];
		w->thread = t->tid;
		visit_frames(w, &t->frames, "stack");
	}
	w->thread = -1;
	for (size_t i = 0; i < r->interps.n; i++) {
		struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			struct model_thread *t = mi->threads.items[k];
			w->thread = t->tid;
			w->task = 0;
			visit_frames(w, &t->frames, "stack");
			if (t->exception) {
				visit_frames(w, &t->exception->traceback, "exception");
				visit_text(w, &t->exception->message, "message");
			}
			for (size_t g = 0; g < t->greenlets.n; g++) {
				const struct model_greenlet *gl = t->greenlets.items[g];
				w->greenlet = gl->address;
				visit_frames(w, &gl->stack, "greenlet");
			}
			w->greenlet = 0;
		}
		w->thread = -1;
		for (size_t g = 0; g < mi->greenlets.n; g++) {
			const struct model_greenlet *gl = mi->greenlets.items[g];
			w->greenlet = gl->address;
			visit_frames(w, &gl->stack, "greenlet");
		}
		w->greenlet = 0;
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *lp = mi->loops.items[k];
			w->thread = lp->thread;
			for (size_t j = 0; j < lp->tasks.n; j++) {
				struct model_task *tk = lp->tasks.items[j];
				w->task = tk->address;
				visit_frames(w, &tk->stack, "task");
				w->in = "task";
				visit_text(w, &tk->result, "result");
				visit_text(w, &tk->exception_message, "message");
			}
		}
	}
}

int model_redact(struct model_report *r)
{
	struct redactor w = { .r = r, .frame = -1 };
	r->redact = true;
	for (w.pass = 1; w.pass <= 2; w.pass++)
		visit_all(&w);
	return w.failed ? -1 : 0;
}
