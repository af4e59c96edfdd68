/* pycore heap (analyze.h): each dump or process read as analyze reads it,
 * with the heap's census (python/heap/), written as text or as the JSON
 * report, whose "heap" holds it. */
#include "cli/analyze/analyze.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap.h"
#include "report/heap.h"
#include "report/report.h"

/* The census of one dump or process (PATH, a pid with --pid), or with
 * --diff that of NEW (a dump, or with --pid a process) against the dump
 * PATH's. */
static enum exit_code heap_one(const char *path, const char *new, const struct options *opt, bool *written)
{
	struct analysis *a;
	struct pc_error *e;
	char label[48];
	if (new) {
		long long pid = opt->pid ? strtoll(new, NULL, 10) : 0;
		if (pid > 0)
			snprintf(label, sizeof(label), "pid %lld", pid);
		e = pid > 0 ? analysis_heap_diff_process(path, pid, !opt->no_stop, &opt->analysis, &a)
			    : analysis_heap_diff(path, new, &opt->analysis, &a);
		if (e)
			return analyze_failed(e->file ? e->file : "--diff", e);
		path = pid > 0 ? label : new;
	} else if (opt->pid) {
		long long pid = strtoll(path, NULL, 10);
		snprintf(label, sizeof(label), "pid %lld", pid);
		path = label;
		e = analysis_run_process(pid, !opt->no_stop, &opt->analysis, &a);
	} else {
		e = analysis_run(path, &opt->analysis, &a);
	}
	if (e)
		return analyze_failed(path, e);
	const struct model_report *r = analysis_report(a);
	if (!opt->json && !opt->html && *written)
		putchar('\n');
	*written = true;
	enum exit_code rc = EXIT_COMPLETE;
	errno = 0;
	if ((opt->json ? report_json_write(stdout, r, opt->pretty)
	     : opt->html ? report_heap_html(stdout, r, opt->top)
	     : new ? report_heap_diff_text(stdout, r, opt->top) : report_heap_text(stdout, r, opt->top)) != 0 ||
	    fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "pycore: %s: cannot write the census to standard output%s%s\n", path,
			errno ? ": " : "", errno ? strerror(errno) : "");
		rc = EXIT_WRITE;
	} else if (!r->heap || model_report_incomplete(r)) {
		fprintf(stderr, "pycore: %s: the census is incomplete (see what it could not read)\n", path);
		rc = EXIT_INCOMPLETE;
	}
	analysis_free(a);
	return rc;
}

int heap_command(struct options *opt, int argc, char **argv, int first)
{
	if (opt->not_heap) {
		options_usage_error("%s is not an option of heap", opt->not_heap);
		return EXIT_USAGE;
	}
	if (opt->collapsed) {
		options_usage_error("%s", "heap writes text, JSON or HTML: --format text, json or html");
		return EXIT_USAGE;
	}
	if (opt->html && opt->heap_diff) {
		options_usage_error("%s", "heap --diff writes text or JSON: --format text or json");
		return EXIT_USAGE;
	}
	if (opt->heap_diff && argc - first != 2) {
		options_usage_error("%s", opt->pid ? "--diff --pid compares a dump with the process: give the dump, "
				    "then the process id" : "--diff compares two dumps of one process: give the older, "
				    "then the newer");
		return EXIT_USAGE;
	}
	/* (with --diff --pid the first operand is a dump, the second a pid) */
	if (opt->heap_diff && opt->pid ? !analyze_operands_ok(opt, argc, argv, first + 1)
				       : !analyze_operands_ok(opt, argc, argv, first))
		return EXIT_USAGE;
	opt->analysis.py.heap = true;
	/* (the frames' locals are roots of the census's graph) */
	opt->analysis.py.locals = true;
	opt->analysis.redact = false;
	char *cache = opt->no_debug_cache ? NULL : options_debug_cache_dir();
	opt->analysis.files.debug_cache = cache;
	enum exit_code worst = EXIT_COMPLETE;
	bool written = false;
	for (int i = first; i < argc; i += opt->heap_diff ? 2 : 1) {
		enum exit_code one = heap_one(argv[i], opt->heap_diff ? argv[i + 1] : NULL, opt, &written);
		if (one > worst)
			worst = one;
		if (one == EXIT_WRITE)
			break;
	}
	opt->analysis.files.debug_cache = NULL;
	free(cache);
	return worst;
}
