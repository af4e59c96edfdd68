/* pycore coredump, step 6: what it writes: the report's file
 * (pycore.NAME.json beside the core), the journal entry of a report, and
 * the journal note of a skip or a failure. */
#include "cli/coredump/coredump_int.h"

#ifdef HAVE_LIBSYSTEMD

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "report/report.h"

/* S escaped for a terminal (report_put_escaped), malloc'd. */
char *hook_escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	report_put_escaped(f, s ? s : "?");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A journal entry of pycore's about C that is no report: a skip (PRIORITY
 * 6) or a failure (3).  WHY is pycore's own text. */
void hook_journal_note(const struct crash *c, const char *core, int priority, const char *why)
{
	char *comm = hook_escaped(c->comm), *name = hook_escaped(core);
	sd_journal_send("MESSAGE_ID=" PYCORE_MESSAGE_ID, "PRIORITY=%d", priority,
			"MESSAGE=pycore: process %lld (%s): %s", (long long)c->pid, comm ? comm : "?", why,
			"COREDUMP_PID=%lld", (long long)c->pid, "COREDUMP_FILENAME=%s", name ? name : "",
			"COREDUMP_EXE=%s", c->exe ? c->exe : "", "PYCORE_RESULT=%s", priority <= 3 ? "error" : "skipped",
			NULL);
	fprintf(stderr, "pycore: coredump: process %lld (%s): %s\n", (long long)c->pid, comm ? comm : "?", why);
	free(comm);
	free(name);
}

/* The report's file name: pycore.<the core's name without "core." and
 * its compression suffix>.json (never core.*: systemd's vacuum parses
 * those), in DIR. */
char *hook_sidecar_path(const struct coredump_config *cfg, const struct crash *c)
{
	char *stem = NULL, *path = NULL;
	if (c->path) {
		const char *b = basename_of(c->path);
		if (strncmp(b, "core.", 5) == 0)
			b += 5;
		stem = strdup(b);
		static const char *const suffixes[] = { ".zst", ".xz", ".lz4" };
		for (size_t i = 0; stem && i < 3; i++) {
			size_t n = strlen(stem), k = strlen(suffixes[i]);
			if (n > k && strcmp(stem + n - k, suffixes[i]) == 0)
				stem[n - k] = '\0';
		}
	} else if (asprintf(&stem, "%s.%s.%s.%lld.%s", c->comm ? c->comm : "unknown", c->uid ? c->uid : "unknown",
			    c->boot_id ? c->boot_id : "unknown", (long long)c->pid,
			    c->timestamp ? c->timestamp : "0") < 0) {
		stem = NULL;
	}
	if (!stem)
		return NULL;
	for (char *s = stem; *s; s++)  /* untrusted: no /, nothing hidden */
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') &&
		    *s != '.' && *s != '-' && *s != '_' && *s != '\\')
			*s = '_';
	char *dir = cfg->report_dir ? strdup(cfg->report_dir) : c->path ? strdup(c->path) : strdup(COREDUMP_DIR);
	if (dir && !cfg->report_dir && c->path)
		*strrchr(dir, '/') = '\0';
	if (!dir || asprintf(&path, "%s/pycore.%s.json", *dir ? dir : "/", stem) < 0)
		path = NULL;
	free(dir);
	free(stem);
	return path;
}



/* The analysis, written: the JSON to the report's file, a journal entry.
 * Returns the exit code. */
int hook_analyze_and_report(const struct coredump_config *cfg, const struct crash *c, int core_fd,
			      const char *core_name, FILE *sidecar, const char *sidecar_name, const char *cache,
			      int compact_fd, const char *compact_name)
{
	struct analysis_options opt = { .py = { .max_repr = 256, .max_items = 1000, .max_depth = 32,
						.timeout = (double)cfg->timeout, .locals = cfg->locals },
					.budget = { .max_spool = cfg->max_spool, .timeout_name = "TimeoutSec=",
						    .spool_name = "MaxSpool=" } };
	opt.files.debug_cache = cache;
	opt.redact = cfg->redact;
	opt.coredump = c->facts;
	opt.record = compact_fd >= 0;
	struct analysis *a;
	struct pc_error *e = analysis_run_fd(core_fd, core_name, &opt, &a);
	if (e) {
		int bad = report_json_error_write(sidecar, core_name, pc_code_hook_name(e->code), e);
		char *why = NULL;
		if (asprintf(&why, "cannot analyze the core: %s", e->message) < 0)
			why = NULL;
		hook_journal_note(c, core_name, 3, why ? why : "cannot analyze the core");
		free(why);
		pc_error_free(e);
		return bad || fclose(sidecar) != 0 ? 1 : 0;
	}
	const struct model_report *r = analysis_report(a);
	int rc = report_json_write(sidecar, r, false) != 0;
	if (fclose(sidecar) != 0)
		rc = 1;
	if (rc)
		fprintf(stderr, "pycore: coredump: cannot write %s\n", sidecar_name);
	/* SaveCompact=: what the report read, kept after the core is gone */
	if (compact_fd >= 0 && (e = analysis_save_fd(a, compact_fd, compact_name, true)) != NULL) {
		fprintf(stderr, "pycore: coredump: cannot save the compact dump %s: %s\n", compact_name, e->message);
		pc_error_free(e);
		if (ftruncate(compact_fd, 0) != 0)
			fprintf(stderr, "pycore: coredump: %s is left incomplete\n", compact_name);
	}
	char *text = NULL;
	size_t text_len = 0;
	FILE *t = open_memstream(&text, &text_len);
	if (t) {
		report_text_write(t, r);
		fclose(t);
	}
	if (text && text_len > JOURNAL_TEXT_MAX)
		strcpy(text + JOURNAL_TEXT_MAX - 64, "\n(cut here: the whole report is in PYCORE_REPORT's file)\n");
	struct report_summary s;
	report_summary(r, &s);
	char *summary = hook_escaped(s.text ? s.text : "(no summary)"), *comm = hook_escaped(c->comm);
	char *name = hook_escaped(core_name);
	sd_journal_send("MESSAGE_ID=" PYCORE_MESSAGE_ID, "PRIORITY=%d", 4,
			"MESSAGE=Python process %lld (%s) crashed: %s", (long long)c->pid, comm ? comm : "?",
			summary ? summary : "?",
			"COREDUMP_PID=%lld", (long long)c->pid, "COREDUMP_FILENAME=%s", name ? name : "",
			"COREDUMP_EXE=%s", c->exe ? c->exe : "", "PYCORE_REPORT=%s", sidecar_name,
			"PYCORE_FINGERPRINT=%s", r->fingerprint ? r->fingerprint->hash : "",
			"PYCORE_RESULT=%s", model_report_incomplete(r) ? "incomplete" : "complete",
			"PYCORE_TEXT=%s", text ? text : "", NULL);
	report_summary_free(&s);
	free(summary);
	free(comm);
	free(name);
	free(text);
	analysis_free(a);
	return rc;
}

#endif
