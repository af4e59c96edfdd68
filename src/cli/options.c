/* The options of analyze and batch (options.h): each option parsed and
 * checked as getopt hands it over (their help text: help.c). */
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cli/help.h"

/* "a:b:c" appended to a NULL-terminated list of strings. */
static char **split_append(char **list, const char *spec)
{
	size_t n = 0;
	while (list && list[n])
		n++;
	size_t more = 1;
	for (const char *p = spec; *p; p++)
		more += *p == ':';
	char **l = realloc(list, (n + more + 1) * sizeof(*l));
	if (!l)
		return list;
	char *copy = strdup(spec), *save = NULL;
	for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
		l[n++] = strdup(t);
	l[n] = NULL;
	free(copy);
	return l;
}

void options_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "pycore: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (try 'pycore --help')\n");
	va_end(ap);
}

/* OPTION's value ARG as a whole number from 1 to MAX, or false after the
 * usage error. */
static bool whole_number(const char *option, const char *arg, unsigned long max, unsigned long *v)
{
	char *end;
	*v = strtoul(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-' || *v == 0 || *v > max) {
		options_usage_error("%s needs a whole number from 1 to %lu, not '%s'", option, max, arg);
		return false;
	}
	return true;
}

/* After --version: whether it reached standard output. */
static enum exit_code flush_stdout(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_COMPLETE;
	fprintf(stderr, "pycore: cannot write to standard output: %s\n", strerror(errno));
	return EXIT_WRITE;
}

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "pretty", no_argument, NULL, 'P' },
	{ "locals", optional_argument, NULL, 'L' },
	{ "sysroot", required_argument, NULL, 'S' },
	{ "search-path", required_argument, NULL, 's' },
	{ "debug-dir", required_argument, NULL, 'd' },
	{ "executable", required_argument, NULL, 'e' },
	{ "allow-mismatch", no_argument, NULL, 'M' },
	{ "no-debug-cache", no_argument, NULL, 'C' },
	{ "layout", required_argument, NULL, 'Y' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "native", no_argument, NULL, 'N' },
	{ "native-all", no_argument, NULL, 'A' },
	{ "tasks", no_argument, NULL, 'W' },
	{ "no-source", no_argument, NULL, 'n' },
	{ "all-threads", no_argument, NULL, 'a' },
	{ "all-frames", no_argument, NULL, 'F' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "color", required_argument, NULL, 'c' },
	{ "max-repr", required_argument, NULL, 'R' },
	{ "max-items", required_argument, NULL, 'I' },
	{ "max-depth", required_argument, NULL, 'D' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "max-memory", required_argument, NULL, 'm' },
	{ "warm-builds", required_argument, NULL, 0x100 },
	{ "warm-memory", required_argument, NULL, 0x101 },
	{ "max-spool", required_argument, NULL, 'Z' },
	{ "ordered", no_argument, NULL, 'O' },
	{ "null", no_argument, NULL, '0' },
	{ "skip-done", required_argument, NULL, 'k' },
	{ "shard", required_argument, NULL, 'H' },
	{ "html-dir", required_argument, NULL, 'J' },
	{ "redact", no_argument, NULL, 'X' },
	{ "no-redact", no_argument, NULL, 'x' },
	{ "save", required_argument, NULL, 'E' },
	{ "pid", no_argument, NULL, 'p' },
	{ "no-stop", no_argument, NULL, 'B' },
	{ "samples", required_argument, NULL, 0x102 },
	{ "interval", required_argument, NULL, 0x103 },
	{ "compare", no_argument, NULL, 0x104 },
	{ "top", required_argument, NULL, 0x105 },
	{ "diff", no_argument, NULL, 0x106 },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* A size: bytes, or with a K, M, G or T suffix (powers of 1024); 0 is
 * allowed.  False when ARG is none. */
bool options_size(const char *arg, uint64_t *v)
{
	char *end;
	if (!*arg || *arg < '0' || *arg > '9')
		return false;
	errno = 0;
	unsigned long long n = strtoull(arg, &end, 10);
	unsigned shift = 0;
	if (*end) {
		const char *units = "KMGT", *u = strchr(units, *end & ~0x20);
		if (!u || end[1])
			return false;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (errno || n > (UINT64_MAX >> shift))
		return false;
	*v = (uint64_t)n << shift;
	return true;
}

void options_init(struct options *opt)
{
	*opt = (struct options){ .analysis.py = { .max_repr = 256, .max_items = 1000, .max_depth = 32,
						  .timeout = 60 }, .redact = -1, .top = 30,
				 .batch = { .warm_builds = BATCH_WARM_BUILDS, .warm_memory = BATCH_WARM_MEMORY } };
	opt->analysis.budget.max_spool = DUMP_MAX_SPOOL_DEFAULT;
	const char *env = getenv("PYCORE_MAX_SPOOL");
	uint64_t v;
	if (env && *env) {
		if (options_size(env, &v))
			opt->analysis.budget.max_spool = v;
		else
			opt->spool_env_bad = env;
	}
}

/* The options heap takes (by their getopt values): what finds and opens
 * the dump, its budgets, the format, --top and --diff. */
static bool heap_takes(int c)
{
	return c < 0x80 ? c > 0 && strchr("fPSsdeMCYTZpBhV:?", c) != NULL : c == 0x105 || c == 0x106;
}

/* The long name of getopt's value C, for "--x is not an option of y". */
static const char *long_name(int c, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(longopts) / sizeof(longopts[0]) - 1; i++)
		if (longopts[i].val == c) {
			snprintf(buf, n, "--%s", longopts[i].name);
			return buf;
		}
	snprintf(buf, n, "-%c", c);
	return buf;
}

int options_parse(int argc, char **argv, const char *optstring, struct options *opt)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (!heap_takes(c))
			opt->not_heap = long_name(c, opt->not_heap_buf, sizeof(opt->not_heap_buf));
		switch (c) {
		case 0x105: {
			unsigned long v;
			if (!whole_number("--top", optarg, 1ul << 24, &v))
				return EXIT_USAGE;
			opt->top = v;
			opt->heap_only = "--top";
			break;
		}
		case 0x106:
			opt->heap_diff = true;
			opt->heap_only = "--diff";
			break;
		case 'f':
			opt->format_given = true;
			opt->json = strcmp(optarg, "json") == 0;
			opt->collapsed = strcmp(optarg, "collapsed") == 0;
			opt->html = strcmp(optarg, "html") == 0;
			if (!opt->json && !opt->collapsed && !opt->html && strcmp(optarg, "text") != 0) {
				options_usage_error("unknown format '%s': use text, json, collapsed or html", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'P':
			opt->pretty = true;
			break;
		case 'S': {
			struct stat st;
			if (stat(optarg, &st) != 0) {
				options_usage_error("--sysroot '%s': %s", optarg, strerror(errno));
				return EXIT_USAGE;
			}
			if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
				options_usage_error("--sysroot '%s' is neither a directory nor an image file", optarg);
				return EXIT_USAGE;
			}
			opt->analysis.files.sysroot = optarg;
			break;
		}
		case 's':
			opt->analysis.files.search = split_append(opt->analysis.files.search, optarg);
			break;
		case 'd':
			opt->analysis.files.debug_dirs = split_append(opt->analysis.files.debug_dirs, optarg);
			break;
		case 'e':
			opt->analysis.files.executable = optarg;
			break;
		case 'M':
			opt->analysis.files.allow_mismatch = true;
			break;
		case 'C':
			opt->no_debug_cache = true;
			break;
		case 'N':
			if (opt->analysis.py.native < 1)
				opt->analysis.py.native = 1;
			break;
		case 'A':
			opt->analysis.py.native = 2;
			break;
		case 'W':
			opt->tasks = true;
			break;
		case 'n':
			opt->no_source = true;
			break;
		case 'a':
			opt->all_threads = true;
			break;
		case 'F':
			opt->all_frames = true;
			break;
		case 'v':
			opt->verbose = true;
			break;
		case 'c':
			if (strcmp(optarg, "auto") == 0) {
				opt->color = COLOR_AUTO;
			} else if (strcmp(optarg, "always") == 0) {
				opt->color = COLOR_ALWAYS;
			} else if (strcmp(optarg, "never") == 0) {
				opt->color = COLOR_NEVER;
			} else {
				options_usage_error("--color takes auto, always or never, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'X':
		case 'x':
			opt->redact = c == 'X';
			break;
		case 0x102: {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (!*optarg || *end || *optarg == '-' || errno || n < 1 || n > 10000) {
				options_usage_error("--samples needs a number of reads from 1 to 10000, not '%s'", optarg);
				return EXIT_USAGE;
			}
			opt->samples = (size_t)n;
			break;
		}
		case 0x103: {
			char *end;
			double v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0) || v > 3600) {
				options_usage_error("--interval needs a number of seconds from 0 to 3600, not '%s'", optarg);
				return EXIT_USAGE;
			}
			opt->interval = v;
			opt->interval_given = true;
			break;
		}
		case 0x104:
			opt->compare = true;
			break;
		case 'T': {
			char *end;
			double v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0) || v > 1e6) {
				options_usage_error("--timeout needs a number of seconds (0 for none), not '%s'", optarg);
				return EXIT_USAGE;
			}
			opt->analysis.py.timeout = v;
			break;
		}
		case 'Z':
			if (!options_size(optarg, &opt->analysis.budget.max_spool)) {
				options_usage_error("--max-spool needs a size (bytes, or with K, M, G or T; 0 for no "
						    "cap), not '%s'", optarg);
				return EXIT_USAGE;
			}
			opt->spool_env_bad = NULL;
			break;
		case 'Y':
			if (strcmp(optarg, "auto") == 0) {
				opt->analysis.py.layout = LAYOUT_AUTO;
			} else if (strcmp(optarg, "table") == 0) {
				opt->analysis.py.layout = LAYOUT_TABLE;
			} else if (strcmp(optarg, "dwarf") == 0) {
				opt->analysis.py.layout = LAYOUT_DWARF;
			} else {
				options_usage_error("unknown layout '%s': use auto, table or dwarf", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L':
			opt->analysis.py.locals = true;
			if (!optarg && optind < argc && strcmp(argv[optind], "deep") == 0) {
				/* getopt took "deep" for a dump: say what was meant */
				options_usage_error("%s", "--locals takes its value after '=': --locals=deep");
				return EXIT_USAGE;
			}
			if (optarg && strcmp(optarg, "deep") == 0) {
				opt->analysis.py.deep = true;
			} else if (optarg) {
				options_usage_error("--locals takes no value or =deep, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'R':
		case 'I':
		case 'D': {
			unsigned long v;
			if (!whole_number(c == 'R' ? "--max-repr" : c == 'I' ? "--max-items" : "--max-depth",
					  optarg, c == 'D' ? 64 : 1ul << 24, &v))
				return EXIT_USAGE;
			if (c == 'R')
				opt->analysis.py.max_repr = v;
			else if (c == 'I')
				opt->analysis.py.max_items = v;
			else
				opt->analysis.py.max_depth = (int)v;
			break;
		}
		case 'j':
		case 'm': {
			unsigned long v;
			if (!whole_number(c == 'j' ? "--jobs" : "--max-memory", optarg, c == 'j' ? 1024 : 1ul << 30, &v))
				return EXIT_USAGE;
			if (c == 'j')
				opt->batch.jobs = (unsigned)v;
			else
				opt->batch.max_memory = v;
			opt->batch_only = c == 'j' ? "--jobs" : "--max-memory";
			break;
		}
		case 0x100:
		case 0x101: {
			unsigned long v = 0;
			/* --warm-builds 0: no warm process, every dump cold */
			char *end;
			if (c == 0x100 && ((v = strtoul(optarg, &end, 10)) > 1024 || !*optarg || *end || *optarg == '-')) {
				options_usage_error("--warm-builds needs a whole number from 0 (no warm process) to 1024, "
						    "not '%s'", optarg);
				return EXIT_USAGE;
			}
			if (c == 0x101 && !whole_number("--warm-memory", optarg, 1ul << 30, &v))
				return EXIT_USAGE;
			if (c == 0x100)
				opt->batch.warm_builds = (unsigned)v;
			else
				opt->batch.warm_memory = v;
			opt->batch_only = c == 0x100 ? "--warm-builds" : "--warm-memory";
			break;
		}
		case 'O':
			opt->batch.ordered = true;
			opt->batch_only = "--ordered";
			break;
		case '0':
			opt->batch.nul = true;
			opt->batch_only = "--null";
			break;
		case 'k':
			opt->batch.skip_done = optarg;
			opt->batch_only = "--skip-done";
			break;
		case 'H': {
			unsigned long k, n;
			int used = -1;
			if (sscanf(optarg, "%lu/%lu%n", &k, &n, &used) != 2 || used < 0 || optarg[used] ||
			    optarg[0] == '-' || strchr(optarg, '-') || n == 0 || k >= n || n > 1ul << 30) {
				options_usage_error("--shard needs K/N with 0 <= K < N, not '%s'", optarg);
				return EXIT_USAGE;
			}
			opt->batch.shard_k = k;
			opt->batch.shard_n = n;
			opt->batch_only = "--shard";
			break;
		}
		case 'J': {
			struct stat st;
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode)) {
				options_usage_error("--html-dir '%s' is not a directory", optarg);
				return EXIT_USAGE;
			}
			opt->batch.html_dir = optarg;
			opt->batch_only = "--html-dir";
			break;
		}
		case 'E':
			if (!*optarg) {
				options_usage_error("%s", "--save needs a file name");
				return EXIT_USAGE;
			}
			opt->save = optarg;
			opt->analysis.record = true;
			break;
		case 'p':
			opt->pid = true;
			break;
		case 'B':
			opt->no_stop = true;
			break;
		case 'h':
			return help_write(opt->command);
		case 'V':
			printf("pycore %s\n", PACKAGE_VERSION);
			return flush_stdout();
		case ':':
			options_usage_error("option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			options_usage_error("unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	return -1;
}

static void free_list(char **l)
{
	for (char **p = l; p && *p; p++)
		free(*p);
	free(l);
}

void options_free(struct options *opt)
{
	free_list(opt->analysis.files.search);
	free_list(opt->analysis.files.debug_dirs);
	opt->analysis.files.search = opt->analysis.files.debug_dirs = NULL;
	image_free(opt->image);
	opt->image = NULL;
	opt->analysis.files.image = NULL;
}

int options_open_image(struct options *opt)
{
	const char *root = opt->analysis.files.sysroot;
	if (!root || opt->image || !image_is_image(root))
		return -1;
	struct dump_budget b = opt->analysis.budget;
	b.timeout = opt->analysis.py.timeout;
	struct pc_error *e = image_open(root, &b, &opt->image);
	if (e) {
		fprintf(stderr, "pycore: --sysroot %s: %s%s%s\n", root, e->file && strcmp(e->file, root) ? e->file : "",
			e->file && strcmp(e->file, root) ? ": " : "", e->message);
		pc_error_free(e);
		return EXIT_IMAGE;
	}
	opt->analysis.files.image = opt->image;
	return -1;
}

char *options_debug_cache_dir(void)
{
	const char *env = getenv("PYCORE_DEBUG_CACHE");
	if (env)
		return *env == '/' ? strdup(env) : NULL;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;
	if (xdg && *xdg == '/')
		return asprintf(&dir, "%s/pycore/debug", xdg) < 0 ? NULL : dir;
	if (home && *home == '/')
		return asprintf(&dir, "%s/.cache/pycore/debug", home) < 0 ? NULL : dir;
	return NULL;
}
