/* The options of analyze and batch (options.h): the help text, and each
 * option parsed and checked as getopt hands it over. */
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cli/coredump.h"

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

static const char usage_text[] =
	"Usage: pycore analyze [OPTIONS] DUMP...\n"
	"       pycore analyze --pid [--no-stop] [OPTIONS] PID...\n"
	"       pycore batch [OPTIONS] [PATH...]\n"
	"       pycore group [--format text|json|html] [--html-dir DIR] [FILE.jsonl...]\n"
	"       pycore coredump [--config FILE] INSTANCE\n"
	"       pycore --help | --version\n"
	"\n"
	"Reads dumps of crashed or snapshotted CPython processes (3.6 to 3.15, and the\n"
	"free-threaded builds of 3.13 to 3.15; x86_64 and aarch64 Linux, whatever the\n"
	"machine pycore runs on (tested on x86_64): ELF cores from the kernel or gdb's\n"
	"gcore, plain or zstd/gzip/xz/lz4-compressed, and minidumps; other\n"
	"architectures are refused in one line) and\n"
	"reports every Python thread's stack: function, file and line, innermost call\n"
	"last in text, innermost first in JSON; with options, locals, native frames.\n"
	"DUMP - reads standard input (coredumpctl dump | pycore analyze -).  Files of\n"
	"the interpreter are used only when their build-ids match the dump's; without\n"
	"them, 3.13+ is found by its debug offsets and older versions by a validated\n"
	"scan.\n"
	"\n"
	"A running process: analyze --pid PID... reads each process as it runs, the\n"
	"same report as a core's (input.kind \"process\"), without writing a core:\n"
	"memory through process_vm_readv (else /proc/PID/mem), a page when a read\n"
	"asks; threads from /proc/PID/task, registers through ptrace; files as the\n"
	"process sees them (/proc/PID/root: a container's, a chroot's, its sysroot\n"
	"unless --sysroot is given; /proc/PID/map_files for a deleted one).  Every\n"
	"thread is stopped for the read and let go at once; the report says for how\n"
	"long (--save FILE: a compact dump of that moment, copied before they go).\n"
	"Needs ptrace access: the same user (or root, CAP_SYS_PTRACE), and Yama's\n"
	"/proc/sys/kernel/yama/ptrace_scope 0 (1: only root).\n"
	"  -p, --pid            the operands are process ids, not dumps\n"
	"      --no-stop        read the processes running, never stopped: each walked\n"
	"                       twice, a warning (exit 1) for each thread whose stack\n"
	"                       changed between the two reads (it may be torn: a frame\n"
	"                       read as it was replaced); no registers but where a\n"
	"                       thread waits in the kernel, so --native stacks may be\n"
	"                       missing\n"
	"\n"
	"Options:\n"
	"  -f, --format FORMAT  text (default): a summary line (the signal and its code,\n"
	"                       the fault address or the sender, the thread, its Python\n"
	"                       line), then each thread's traceback, the crashed thread\n"
	"                       first, then the GIL holder, recursion collapsed as\n"
	"                       Python does; strings from the dump are\n"
	"                       escaped as repr() escapes control characters, bytes\n"
	"                       that are not UTF-8 as \\xNN.  json: one JSON object per\n"
	"                       dump, one per line (JSON Lines), schema pycore-report/1\n"
	"                       (man 5 pycore-report); bytes that are not UTF-8 as\n"
	"                       \\udcNN (os.fsdecode's form)\n"
	"                       collapsed: the folded stacks flame-graph tools read\n"
	"                       (flamegraph.pl, inferno, speedscope): a line per distinct\n"
	"                       stack, \"frame;frame;... COUNT\", outermost first, COUNT\n"
	"                       the threads with it; a frame is \"function (file:line)\"\n"
	"                       html: one self-contained page (give one dump): the\n"
	"                       warnings and summary first, facts, threads grouped as in\n"
	"                       text with source and carets, variables as tables, lock\n"
	"                       waits and asyncio tasks as pictures (SVG); no external\n"
	"                       resource, a Content-Security-Policy allowing only its\n"
	"                       own inline style and script (by hash), readable with\n"
	"                       script off; dump strings are always escaped text\n"
	"      --no-source      text: no source lines under Python frames (by default\n"
	"                       read, as Python's tracebacks show them with 3.11+ carets,\n"
	"                       from regular files named by absolute paths (.py, .wsgi),\n"
	"                       under --sysroot first; at most 16 MiB)\n"
	"      --all-threads    text: a section per thread (by default threads with one\n"
	"                       stack share one: \"N threads with this stack\")\n"
	"      --all-frames     text: every frame of a recursion, with its locals (by\n"
	"                       default, as Python does, three of a line repeated, then\n"
	"                       \"[Previous line repeated N more times]\"; JSON has all)\n"
	"  -v, --verbose        text: also every module of the process, the file read\n"
	"                       for it and how that file was found (the path the dump\n"
	"                       records, under --sysroot, a build-id tree, ...; JSON\n"
	"                       always has them: \"modules\", each with \"found_by\")\n"
	"      --color WHEN     text colours: auto (default: on a terminal, unless\n"
	"                       NO_COLOR is set), always, never\n"
	"      --pretty         indent the JSON (one object spans several lines; JSON only)\n"
	"      --locals[=deep]  also report every frame's arguments and variables, with\n"
	"                       the repr() Python itself would print for built-in types\n"
	"                       and common standard library ones (datetime, deque, ...);\n"
	"                       =deep also lists the attributes of instances among them\n"
	"                       (their __dict__ and __slots__), each object's once\n"
	"      --max-repr N     a repr is at most N characters, the ... ending a cut one\n"
	"                       included (default 256); a cut one says its value's length\n"
	"      --max-items N    show at most N items of a container (default 1000)\n"
	"      --max-depth N    show containers nested at most N deep (default 32, at most 64)\n"
	"      --native         each thread's native stack too, with its Python frames\n"
	"                       woven in where the eval loop ran them (where that is\n"
	"                       proven; else listed after it, with a warning), and\n"
	"                       every OS thread without Python; frames inside the\n"
	"                       interpreter's own module are left out\n"
	"      --native-all     the same, keeping the interpreter's own frames\n"
	"      --tasks          text: also every asyncio event loop's tasks (3.8 to 3.15),\n"
	"                       each with its state, its coroutine stack and the tasks it\n"
	"                       awaits nested under it; JSON always has them\n"
	"      --redact         replace secrets' values by their type and length: variables\n"
	"                       and attributes named like password, secret, token,\n"
	"                       api_key, auth, credential, cookie, session, private\n"
	"                       key; values holding an AWS key id, a PEM private key,\n"
	"                       a GitHub, Slack or JSON Web Token; and every value\n"
	"                       holding one of those; listed in \"redacted\" (JSON) or\n"
	"                       a Redacted: section (text).  Default in batch\n"
	"      --no-redact      do not (default in analyze)\n"
	"      --timeout S      one dump's time budget in seconds (default 60; 0: none),\n"
	"                       from opening it (reading standard input, decompressing)\n"
	"                       to the end of its walk: spent while opening, the dump is\n"
	"                       refused (exit 6, \"the time budget (--timeout S s) ran\n"
	"                       out while ...\"); spent while walking, what was read is\n"
	"                       reported with a warning and exit 1\n"
	"      --max-spool SIZE the most one dump may write to a temporary file under\n"
	"                       $TMPDIR (standard input spooled, a compressed dump\n"
	"                       decompressed; pages of zeros cost nothing): bytes, or\n"
	"                       with K, M, G, T (1024's); default 16G, else\n"
	"                       $PYCORE_MAX_SPOOL; 0: no cap.  Past it the dump is\n"
	"                       refused (exit 6, \"... would write more than --max-spool\n"
	"                       SIZE to the temporary directory\")\n"
	"      --save FILE      also write a compact dump of the one DUMP (with --pid,\n"
	"                       of the one process) to FILE (zstd when FILE ends in\n"
	"                       .zst): an ELF core gdb and pycore open, holding what\n"
	"                       this analysis read, every thread's registers and stack\n"
	"                       top, the notes and the modules' build-ids.  Analyzed\n"
	"                       with the same options it gives the same report; it\n"
	"                       records only what this analysis read: one saved\n"
	"                       without --locals has no locals to show, nor tasks\n"
	"                       without --tasks, nor native frames without --native.\n"
	"                       A process's memory is copied while it is stopped\n"
	"\n"
	"Where the interpreter's files come from, tried in this order; a file is used\n"
	"only when its build-id matches the one the core recorded:\n"
	"  1. the path the core records (for the main program: --executable, if given)\n"
	"  2. --sysroot DIR     DIR + that path: the crashed machine's root filesystem\n"
	"                       (a directory, else a usage error)\n"
	"     a module recorded by name only (Crashpad's sonames): the dynamic\n"
	"     loader's directories, the main program's RUNPATH/RPATH then the\n"
	"     defaults (the dump's multiarch /lib/x86_64-linux-gnu or\n"
	"     /lib/aarch64-linux-gnu ..., /usr/lib, ...)\n"
	"  3. --search-path DIR[:DIR...]\n"
	"                       directories of loose binaries, matched by build-id\n"
	"                       whatever their file names\n"
	"  4. build-id trees: --debug-dir DIR (DIR/.build-id/xx/...; may be repeated),\n"
	"     then DIR/usr/lib/debug of --sysroot, then /usr/lib/debug; also where\n"
	"     separate debug info is looked for\n"
	"  5. debuginfod, when DEBUGINFOD_URLS is set\n"
	"      --executable PATH  the main program's file\n"
	"      --allow-mismatch use a file whose build-id differs when none matches,\n"
	"                       with a warning in the report (which exits 0 if complete)\n"
	"      --no-debug-cache read compressed debug files as they are; by default an\n"
	"                       uncompressed copy of each is kept (by build-id) in\n"
	"                       $PYCORE_DEBUG_CACHE, else $XDG_CACHE_HOME/pycore/debug\n"
	"                       (~/.cache/pycore/debug), and later analyses read it\n"
	"      --layout auto|table|dwarf\n"
	"                       where CPython's struct offsets come from: pycore's\n"
	"                       table for the version, or the interpreter's own DWARF;\n"
	"                       auto (default) takes the DWARF when the table does not\n"
	"                       fit the build (another object header) or is missing\n"
	"\n"
	"batch: many dumps, one JSON line each (always JSON Lines), each dump in a\n"
	"worker process of its own; PATH is a dump, a directory (searched\n"
	"recursively for files that start like dumps) or - (a list of paths on\n"
	"standard input, one a line; also when no PATH is given).  A dump without a\n"
	"report gets an error record {\"schema\", \"tool\", \"input\": {\"path\"},\n"
	"\"error\": {\"code\", \"message\"}}.  A summary goes to standard error, and a\n"
	"progress line when it is a terminal.  The options above apply, and:\n"
	"  -j, --jobs N         N workers at once (default: one per CPU)\n"
	"      --timeout S      kill a dump's worker after S seconds (default 60; 0:\n"
	"                       never) and give the dump an error record \"timeout\";\n"
	"                       its walk stops itself at 3/4 of S with a partial report\n"
	"      --max-memory MB  limit each worker's data memory (RLIMIT_DATA; the mapped\n"
	"                       dump is not counted)\n"
	"      --ordered        records in input order (default: as they complete)\n"
	"  -0, --null           the list on standard input is NUL-separated\n"
	"      --skip-done FILE leave out dumps whose path has a record in FILE (JSON\n"
	"                       Lines of an earlier run; a missing FILE holds none)\n"
	"      --shard K/N      keep only the dumps whose path hashes to K (0 <= K < N):\n"
	"                       FNV-1a 64 of the path's bytes, mod N\n"
	"      --html-dir DIR   also write each report's HTML page into DIR, named\n"
	"                       NAME-HASH.html (NAME: the path's last component, safe\n"
	"                       characters only; HASH: FNV-1a 64 of the path)\n"
	"\n"
	"group: the reports of batch's JSON Lines (FILE.jsonl, - or none: standard\n"
	"input) grouped by fingerprint, most frequent first: count, first and last\n"
	"seen (by the dumps' modification times while every dump of the group exists,\n"
	"else by input order), an example dump and its summary.  Error records are\n"
	"counted apart; a line that is neither is named on standard error and\n"
	"counted (exit 1).  --format json: one object per group, {\"fingerprint\",\n"
	"\"count\", \"seen_by\", \"first_seen\", \"last_seen\", \"example\"} (README).\n"
	"--format html: the crash dashboard (counts, first/last seen, a histogram per\n"
	"day, executables, hosts, Python versions, the example's traceback, an icicle\n"
	"graph of the group's stacks); --html-dir DIR links each dump to its page there\n"
	"(batch --html-dir's; the links are relative: write the dashboard into DIR).\n"
	"\n"
	"coredump: the systemd-coredump hook, run as root by\n"
	"pycore-coredump@INSTANCE.service after systemd-coredump@INSTANCE.service\n"
	"stored a crash: finds it (the journal, else /var/lib/systemd/coredump),\n"
	"skips what is not Python in milliseconds, opens the core, drops to an\n"
	"unprivileged user, and writes the report to the journal (MESSAGE_ID\n"
	"" PYCORE_MESSAGE_ID ") and as pycore.NAME.json next to the core.\n"
	"Settings: --config FILE, default " SYSCONFDIR "/pycore/coredump.conf\n"
	"(man pycore, COREDUMP HOOK).  Exit 0 also when skipped.\n"
	"\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status of analyze (the highest over all dumps given):\n"
	"  0  every report is complete\n"
	"  1  a report was written but is incomplete (a stack or exception unreadable,\n"
	"     or a dump without the Python state, such as a stack-only minidump)\n"
	"  2  usage error\n"
	"  3  not a CPython process, its interpreter cannot be found or read, or a dump\n"
	"     pycore cannot analyze (a CPython version or an architecture it does not\n"
	"     read: a core of another machine than x86_64 or aarch64 names it)\n"
	"  4  input unreadable, truncated beyond use, or not a dump (also: a FIFO, a\n"
	"     device or a directory given as a dump, refused before it is read;\n"
	"     standard input or a compressed stream whose first bytes are no dump's)\n"
	"  5  the report could not be written (standard output failed: a full disk),\n"
	"     or the compact dump of --save\n"
	"  6  a budget ran out before a report: --timeout while opening (reading\n"
	"     standard input, decompressing), --max-spool, or the decoders' memory\n"
	"     (a compressed stream's window over 256 MiB)\n"
	"  7  --pid: no such process (or it exited during the read), or pycore may not\n"
	"     read it: another user's, Yama's ptrace_scope, a missing CAP_SYS_PTRACE\n"
	"Each failure prints one line on standard error naming the file and the cause.\n"
	"Exit status of batch: 0 when every dump got its record (whatever it says),\n"
	"1 when some record could not be written, 2 usage error (also: a list or\n"
	"--skip-done file that cannot be read).\n";

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

/* After --help or --version: whether they reached standard output. */
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
						  .timeout = 60 }, .redact = -1,
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

int options_parse(int argc, char **argv, const char *optstring, struct options *opt)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
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
			if (!S_ISDIR(st.st_mode)) {
				options_usage_error("--sysroot '%s' is not a directory", optarg);
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
			fputs(usage_text, stdout);
			return flush_stdout();
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
