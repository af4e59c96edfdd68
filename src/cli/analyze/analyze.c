/* The analyze and batch commands (analyze.h): analyze renders each
 * dump's report on standard output and owns the exit code; batch hands
 * the dumps to batch.c's workers. */
#include "cli/analyze/analyze.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/samples.h"
#include "report/html.h"
#include "report/report.h"
#include "symbols/warm.h"

/* --color: auto is a terminal on standard output and no NO_COLOR (set
 * and not empty) in the environment. */
static bool use_color(enum color_when when)
{
	if (when != COLOR_AUTO)
		return when == COLOR_ALWAYS;
	const char *no = getenv("NO_COLOR");
	return isatty(STDOUT_FILENO) && !(no && *no);
}

static enum exit_code write_one(const char *path, struct pc_error *e, struct analysis *a, char *folded,
				const struct options *opt, bool *written, bool last);

/* --compare: the dumps of one process as samples, one report */
static enum exit_code analyze_compare(char *const *paths, size_t n, const struct options *opt, bool *written)
{
	struct analysis *a;
	char *folded = NULL;
	struct pc_error *e = analysis_compare_dumps(paths, n, &opt->analysis, &a, opt->collapsed ? &folded : NULL);
	return write_one(e && e->file ? e->file : "--compare", e, a, folded, opt, written, false);
}

/* LAST: the last dump of the command (its analysis left to the exit) */
static enum exit_code analyze_one(const char *path, const struct options *opt, bool *written, bool last)
{
	struct analysis *a;
	struct pc_error *e;
	char label[48], *folded = NULL;
	if (opt->pid) {
		/* a process id: "pid 1234" in messages */
		long long pid = strtoll(path, NULL, 10);
		snprintf(label, sizeof(label), "pid %lld", pid);
		path = label;
		if (opt->samples) {
			struct samples_options so = { opt->samples, opt->interval_given ? opt->interval : 0.2,
						      !opt->no_stop };
			symbols_warm_enable();   /* what one read learns of the files, the next keeps */
			e = analysis_sample_process(pid, &opt->analysis, &so, &a, opt->collapsed ? &folded : NULL);
		} else {
			e = analysis_run_process(pid, !opt->no_stop, &opt->analysis, &a);
		}
	} else {
		e = analysis_run(path, &opt->analysis, &a);
	}
	return write_one(path, e, a, folded, opt, written, last && !opt->pid);
}

/* The report of A (or E's line) for PATH; frees A, E and FOLDED.
 * *WRITTEN: a report was written (by an earlier call); set once this
 * call writes one.  LAST: the command's last dump, whose analysis the
 * process's exit frees: its mappings (the dump, the debug files) go with
 * the process at once, where unmapping them one by one costs about a
 * twentieth of a small read (scripts/bench --native's core: 0.94x with
 * it left); a build with sanitizers frees it, for their leak check.
 * (Never a live process: closing its dump resumes it.) */
static enum exit_code write_one(const char *path, struct pc_error *e, struct analysis *a, char *folded,
				const struct options *opt, bool *written, bool last)
{
	if (e) {
		free(folded);
		return analyze_failed(path, e);
	}
	const struct model_report *r = analysis_report(a);
	enum exit_code rc = EXIT_COMPLETE;
	struct report_text_options text = { .tasks = opt->tasks, .source = !opt->no_source,
					    .files = analysis_files(a),
					    .all_threads = opt->all_threads, .all_frames = opt->all_frames, .modules = opt->verbose, .color = use_color(opt->color) };
	struct report_html_options html = { .source = !opt->no_source, .files = analysis_files(a),
					    .all_threads = opt->all_threads };
	/* text reports of several dumps: a blank line between two */
	if (!opt->json && !opt->collapsed && !opt->html && *written)
		putchar('\n');
	*written = true;
	if (opt->json ? report_json_write(stdout, r, opt->pretty)
	    : opt->collapsed && folded ? (fputs(folded, stdout) == EOF)
	    : opt->collapsed ? report_collapsed_write(stdout, r)
	    : opt->html ? report_html_write(stdout, r, &html)
	    : report_text_write_options(stdout, r, &text))
		rc = EXIT_WRITE;
	int err = errno;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		err = errno ? errno : err;
		rc = EXIT_WRITE;
	}
	if (rc == EXIT_WRITE) {
		fprintf(stderr, "pycore: %s: cannot write the report to standard output%s%s\n", path,
			err ? ": " : "", err ? strerror(err) : "");
	} else if (opt->save && (e = analysis_save(a, opt->save, NULL)) != NULL) {
		fprintf(stderr, "pycore: %s: cannot save the compact dump: %s\n", path, e->message);
		pc_error_free(e);
		rc = EXIT_WRITE;
	} else if (model_report_incomplete(r)) {
		fprintf(stderr, "pycore: %s: the report is incomplete (see its warnings and thread errors)\n",
			path);
		rc = EXIT_INCOMPLETE;
	}
#if !defined(__SANITIZE_ADDRESS__)
	if (last) {
		free(folded);
		return rc;
	}
#else
	(void)last;
#endif
	analysis_free(a);
	free(folded);
	return rc;
}

enum exit_code analyze_failed(const char *what, struct pc_error *e)
{
	fprintf(stderr, "pycore: %s: %s\n", what, e->message);
	enum exit_code rc = e->code == PC_ENOMEM ? EXIT_INCOMPLETE
			    : e->code == PC_ENOTPYTHON || e->code == PC_EUNSUPPORTED ? EXIT_NOT_PYTHON
			    : e->code == PC_ETIMEOUT || e->code == PC_ELIMIT ? EXIT_BUDGET
			    : e->code == PC_EDENIED || e->code == PC_EGONE ? EXIT_PROCESS
			    : EXIT_BAD_INPUT;
	pc_error_free(e);
	return rc;
}

/* --pid's operands ARGV[FIRST..ARGC) are process ids; else false after
 * the usage error. */
static bool pids_ok(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++) {
		char *end;
		long long pid = strtoll(argv[i], &end, 10);
		if (!*argv[i] || *end || argv[i][0] == '-' || argv[i][0] == '+' || pid <= 0 || pid > 0x7fffffff) {
			options_usage_error("--pid: '%s' is not a process id", argv[i]);
			return false;
		}
	}
	return true;
}

/* $PYCORE_MAX_SPOOL that is no size: a usage error (0), else 1. */
static int spool_env_ok(const struct options *opt)
{
	if (!opt->spool_env_bad)
		return 1;
	options_usage_error("PYCORE_MAX_SPOOL needs a size (bytes, or with K, M, G or T; 0 for no cap), not '%s'",
			    opt->spool_env_bad);
	return 0;
}

bool analyze_operands_ok(const struct options *opt, int argc, char **argv, int first)
{
	if (opt->pretty && !opt->json) {
		options_usage_error("%s", "--pretty indents JSON: it needs --format json");
		return false;
	}
	if (first >= argc) {
		if (opt->pid)
			options_usage_error("%s --pid: no process id given", opt->command);
		else
			options_usage_error("%s: no dump given", opt->command);
		return false;
	}
	if (opt->no_stop && !opt->pid) {
		options_usage_error("%s", "--no-stop reads a running process: it needs --pid");
		return false;
	}
	return spool_env_ok(opt) && (!opt->pid || pids_ok(argc, argv, first));
}

int analyze_command(struct options *opt, int argc, char **argv, int first)
{
	opt->analysis.redact = opt->redact < 0 ? false : opt->redact;
	if (opt->batch_only || opt->heap_only) {
		options_usage_error("%s is an option of %s, not of analyze", opt->batch_only ? opt->batch_only
				    : opt->heap_only, opt->batch_only ? "batch" : "heap");
		return EXIT_USAGE;
	}
	if (!analyze_operands_ok(opt, argc, argv, first))
		return EXIT_USAGE;
	if (opt->compare && (opt->pid || opt->samples || opt->interval_given)) {
		options_usage_error("%s", "--compare reads dumps as samples: not with --pid, --samples or --interval");
		return EXIT_USAGE;
	}
	if (opt->compare && argc - first < 2) {
		options_usage_error("%s", "--compare needs two dumps of one process at least");
		return EXIT_USAGE;
	}
	if (opt->compare && opt->save) {
		options_usage_error("%s", "--save writes the compact dump of one read: not with --compare");
		return EXIT_USAGE;
	}
	if ((opt->samples || opt->interval_given) && !opt->pid) {
		options_usage_error("%s", "--samples reads a running process several times: it needs --pid");
		return EXIT_USAGE;
	}
	if (opt->interval_given && !opt->samples) {
		options_usage_error("%s", "--interval is the time between samples: it needs --samples");
		return EXIT_USAGE;
	}
	if (opt->samples && opt->save) {
		options_usage_error("%s", "--save writes the compact dump of one read: not with --samples");
		return EXIT_USAGE;
	}
	if (opt->save && argc - first != 1) {
		options_usage_error("%s", opt->pid ? "--save writes the compact dump of one process: give one" : "--save writes the compact dump of one dump: give one");
		return EXIT_USAGE;
	}
	/* the debug cache's directory, made when the dumps are analyzed */
	char *cache = opt->no_debug_cache ? NULL : options_debug_cache_dir();
	opt->analysis.files.debug_cache = cache;
	enum exit_code worst = EXIT_COMPLETE;
	bool written = false;
	if (opt->compare) {
		worst = analyze_compare(argv + first, (size_t)(argc - first), opt, &written);
		first = argc;
	}
	for (int i = first; i < argc; i++) {
		errno = 0;
		enum exit_code one = analyze_one(argv[i], opt, &written, i == argc - 1);
		if (one > worst)
			worst = one;
		if (one == EXIT_WRITE)
			break; /* the other reports could not be written either */
	}
	opt->analysis.files.debug_cache = NULL;
	free(cache);
	return worst;
}

int batch_command(struct options *opt, int argc, char **argv, int first)
{
	/* reports that leave the machine: batch redacts unless told not to */
	opt->analysis.redact = opt->redact < 0 ? true : opt->redact;
	if (opt->save || opt->heap_only) {
		options_usage_error("%s is an option of %s, not of batch", opt->save ? "--save" : opt->heap_only,
				    opt->save ? "analyze" : "heap");
		return EXIT_USAGE;
	}
	if (opt->pid || opt->no_stop || opt->samples || opt->interval_given || opt->compare) {
		options_usage_error("%s is an option of analyze, not of batch",
				    opt->pid ? "--pid" : opt->no_stop ? "--no-stop" : opt->samples ? "--samples"
				    : opt->compare ? "--compare" : "--interval");
		return EXIT_USAGE;
	}
	if (opt->pretty || (opt->format_given && !opt->json)) {
		options_usage_error("%s", "batch writes JSON Lines only: no --pretty, no --format text");
		return EXIT_USAGE;
	}
	if (first >= argc && isatty(STDIN_FILENO)) {
		options_usage_error("%s", "batch: no dump given (paths, or a list of them on standard input)");
		return EXIT_USAGE;
	}
	if (!spool_env_ok(opt))
		return EXIT_USAGE;
	opt->batch.timeout = opt->analysis.py.timeout;
	char *cache = opt->no_debug_cache ? NULL : options_debug_cache_dir();
	opt->analysis.files.debug_cache = cache;
	int rc = batch_run(argv + first, argc - first, &opt->batch, &opt->analysis);
	opt->analysis.files.debug_cache = NULL;
	free(cache);
	return rc;
}
