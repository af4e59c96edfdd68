/* The command line of analyze and batch: the options (also those given
 * before the command), checked one by one as they are parsed, and the exit
 * codes of analyze.  Each command's help text (--help) is help.c's. */
#ifndef PYCORE_CLI_OPTIONS_H
#define PYCORE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "cli/batch/batch.h"

enum exit_code {
	EXIT_COMPLETE = 0,
	EXIT_INCOMPLETE = 1,
	EXIT_USAGE = 2,
	EXIT_NOT_PYTHON = 3,
	EXIT_BAD_INPUT = 4,
	EXIT_WRITE = 5,
	EXIT_BUDGET = 6,
	EXIT_PROCESS = 7,            /* --pid: the process is gone, or pycore may not read it */
	EXIT_NO_MANUAL = 8,          /* pycore help: man or the manual page is missing */
	EXIT_IMAGE = 9,              /* --sysroot's image cannot be read */
};

enum color_when { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct options {
	const char *command;         /* "analyze" or "batch" once given; NULL before (--help: which) */
	bool json;
	bool collapsed;              /* --format collapsed */
	bool html;                   /* --format html */
	bool pretty;
	bool no_source;
	bool all_threads;
	bool all_frames;             /* text: a recursion's frames all shown */
	bool verbose;                /* text: the modules' files and how each was found */
	enum color_when color;
	bool tasks;                  /* text: a section of asyncio tasks */
	bool format_given;
	const char *batch_only;      /* the last batch option given, for analyze's error */
	const char *heap_only;       /* the last option of heap only given (--top, --diff) */
	bool heap_diff;              /* heap --diff OLD NEW */
	const char *not_heap;        /* the last option given heap does not take */
	char not_heap_buf[32];
	size_t top;                  /* heap --top N: types in the text census; 0 all */
	bool no_debug_cache;
	bool pid;                    /* --pid: the operands are running processes */
	bool no_stop;                /* --no-stop: read them running */
	size_t samples;              /* --samples N: N reads of each process; 0 one read */
	double interval;             /* --interval SECONDS between two samples' starts */
	bool interval_given;
	bool compare;                /* --compare: the dumps, of one process, read as samples */
	int redact;                  /* --redact 1, --no-redact 0, neither -1 */
	const char *spool_env_bad;   /* $PYCORE_MAX_SPOOL when it is no size (and no --max-spool) */
	const char *save;            /* --save FILE: a compact dump of the one dump */
	struct analysis_options analysis;
	struct batch_options batch;
	struct image *image;         /* --sysroot's image, once opened (options_open_image) */
};

/* The defaults (--max-repr 256, --max-items 1000, --max-depth 32,
 * --timeout 60, --max-spool $PYCORE_MAX_SPOOL or 16G, neither --redact
 * nor --no-redact). */
void options_init(struct options *opt);
/* Parse options up to the first operand (OPTSTRING starts with '+') or
 * through all of them, getopt's optind after them.  Returns -1 to go on,
 * or the exit code to end with (a usage error said on standard error,
 * --help or --version written). */
int options_parse(int argc, char **argv, const char *optstring, struct options *opt);
void options_free(struct options *opt);
/* After the options: --sysroot's image (a tar or an OCI layout, not a
 * plain directory) opened once for every dump, within --timeout and
 * --max-spool.  -1 to go on, or EXIT_IMAGE (the reason said on standard
 * error in one line). */
int options_open_image(struct options *opt);
/* ARG as a size (bytes, or with K, M, G or T: powers of 1024) in *V;
 * false when it is none. */
bool options_size(const char *arg, uint64_t *v);
/* "pycore: MESSAGE (try 'pycore --help')" on standard error. */
void options_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Where uncompressed copies of compressed debug files are kept:
 * $PYCORE_DEBUG_CACHE (empty: none), else ${XDG_CACHE_HOME:-$HOME/.cache}
 * /pycore/debug; malloc'd, NULL when there is no such place. */
char *options_debug_cache_dir(void);

#endif
