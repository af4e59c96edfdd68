/* The help texts and pycore help (help.h).  Each text is one screen: the
 * synopsis and the options, a line each; the manual pages say the rest
 * (src/tests/dist/test-help.sh checks that both name the same options). */
#include "cli/help.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "cli/coredump/coredump.h"
#include "cli/options.h"

extern char **environ;

static const char overview[] =
	"Usage: pycore COMMAND [OPTIONS] [ARGUMENTS...]\n"
	"       pycore help [COMMAND]\n"
	"       pycore --help | --version\n"
	"\n"
	"Reads dumps of crashed or snapshotted CPython processes (3.6 to 3.15, and the\n"
	"free-threaded builds of 3.13 to 3.15; x86_64 and aarch64 Linux: ELF cores,\n"
	"plain or zstd/gzip/xz/lz4-compressed, and minidumps), or running processes,\n"
	"and reports every Python thread's stack: function, file and line; with\n"
	"options, locals, native frames and asyncio tasks.\n"
	"\n"
	"Commands:\n"
	"  analyze   report on each dump given (or each process, with --pid): text,\n"
	"            JSON, folded stacks or an HTML page\n"
	"  batch     many dumps, each analyzed in a worker process of its own: JSON\n"
	"            Lines, a report or an error record per dump\n"
	"  heap      the census of each dump's (or process's) Python heap: objects\n"
	"            and bytes by type\n"
	"  group     batch's reports grouped by crash fingerprint; the HTML dashboard\n"
	"  coredump  the systemd-coredump hook (run by pycore-coredump@.service)\n"
	"  help      show a command's manual page: pycore help analyze (also: help\n"
	"            report, the JSON; help coredump.conf, the hook's settings)\n"
	"\n"
	"Options:\n"
	"  -h, --help     show this help and exit\n"
	"  -V, --version  show the version and exit\n"
	"The options of analyze and batch may also come before the command.\n"
	"\n"
	"pycore COMMAND --help lists a command's options; pycore help COMMAND (man\n"
	"pycore-COMMAND) describes them.  Manual pages: pycore(1), pycore-analyze(1),\n"
	"pycore-batch(1), pycore-heap(1), pycore-group(1), pycore-coredump(8),\n"
	"pycore-coredump.conf(5) (the hook's settings), pycore-report(5) (the JSON).\n"
	"\n"
	"Exit status of analyze: 0 complete, 1 incomplete, 2 usage error, 3 not a\n"
	"CPython pycore reads, 4 bad input, 5 output failed, 6 a budget ran out,\n"
	"7 --pid: no such process or not permitted, 9 the --sysroot image cannot be\n"
	"read; of help: 8 no manual page.\n"
	"\n"
	"Examples:\n"
	"  pycore analyze core.1234\n"
	"  coredumpctl dump 1234 | pycore analyze -\n"
	"  pycore analyze --pid 1234\n"
	"  pycore batch --jobs 4 /var/lib/systemd/coredump > reports.jsonl\n"
	"  pycore group reports.jsonl\n";

static const char analyze_help[] =
	"Usage: pycore analyze [OPTIONS] DUMP...\n"
	"       pycore analyze --pid [--no-stop] [--samples N] [OPTIONS] PID...\n"
	"Reports every Python thread's stack of each dump (an ELF core, plain or\n"
	"compressed, or a minidump; - is standard input), or of each running process\n"
	"with --pid.  Details: pycore help analyze (man pycore-analyze).\n"
	"\n"
	"  -f, --format FORMAT  text (default), json (JSON Lines, pycore-report(5)),\n"
	"                       collapsed (folded stacks), html (a page; one dump)\n"
	"      --pretty         indent the JSON (needs --format json)\n"
	"      --no-source      text: no source lines under Python frames\n"
	"      --all-threads    text: a section per thread, same stacks not grouped\n"
	"      --all-frames     text: every frame of a recursion\n"
	"  -v, --verbose        text: also every module, its file and how it was found\n"
	"      --color WHEN     text colours: auto (default), always, never\n"
	"      --tasks          text: also each asyncio event loop's tasks\n"
	"      --locals[=deep]  every frame's arguments and variables; =deep also\n"
	"                       the attributes of instances among them\n"
	"      --max-repr N     a repr is at most N characters (default 256)\n"
	"      --max-items N    at most N items of a container (default 1000)\n"
	"      --max-depth N    containers nested at most N deep (default 32, max 64)\n"
	"      --native         also native stacks, the Python frames woven in, and\n"
	"                       every OS thread without Python (interpreter's frames\n"
	"                       out, but those above a thread's innermost Python frame)\n"
	"      --native-all     the same, keeping the interpreter's own frames\n"
	"      --redact         replace secrets' values by their type and length\n"
	"      --no-redact      do not (the default of analyze)\n"
	"      --timeout S      one dump's time budget in seconds (default 60; 0: none)\n"
	"      --max-spool SIZE the most one dump may write under $TMPDIR (K, M, G, T;\n"
	"                       default 16G, else $PYCORE_MAX_SPOOL; 0: no cap)\n"
	"      --save FILE      also a compact dump of the one DUMP or PID (zstd when\n"
	"                       FILE ends in .zst)\n"
	"\n"
	"A running process (ptrace access needed: the same user, or root):\n"
	"  -p, --pid            the operands are process ids, not dumps\n"
	"      --no-stop        read them running, never stopped: stacks may be torn\n"
	"      --samples N      read each N times: each thread's state across the reads\n"
	"      --interval S     seconds between two reads' starts (default 0.2)\n"
	"      --compare        the DUMPs, of one process, read as --samples reads\n"
	"\n"
	"Where the interpreter's files come from (used only when the build-id\n"
	"matches the dump's): the path the dump records, then\n"
	"      --executable PATH\n"
	"                       the main program's file, instead of its recorded path\n"
	"      --sysroot ROOT   the crashed machine's root: a directory, or an image\n"
	"                       read in place (a tar, maybe compressed; an OCI layout)\n"
	"      --search-path DIR[:DIR...]\n"
	"                       directories of loose binaries, matched by build-id\n"
	"      --debug-dir DIR  a build-id tree, before /usr/lib/debug (repeatable);\n"
	"                       then debuginfod, when DEBUGINFOD_URLS is set\n"
	"      --allow-mismatch use a file whose build-id differs, with a warning\n"
	"      --no-debug-cache read compressed debug files as they are (no cached copy)\n"
	"      --layout WHICH   CPython's struct offsets: auto (default), table, dwarf\n"
	"\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status, the highest over all dumps: 0 complete, 1 incomplete, 2 usage\n"
	"error, 3 not a CPython pycore reads, 4 unreadable or not a dump, 5 output or\n"
	"--save failed, 6 a budget ran out, 7 --pid: no such process or not permitted,\n"
	"9 the --sysroot image cannot be read.\n";

static const char batch_help[] =
	"Usage: pycore batch [OPTIONS] [PATH...]\n"
	"Analyzes many dumps, each in a worker process of its own, and writes JSON\n"
	"Lines: each dump's report (pycore-report(5)) or an error record.  A PATH is\n"
	"a dump, a directory (searched for files that start like dumps) or - (a list\n"
	"of paths on standard input, one a line; also when no PATH is given).\n"
	"Details: pycore help batch (man pycore-batch).\n"
	"\n"
	"  -j, --jobs N         N workers at once (default: one per CPU)\n"
	"      --timeout S      kill a dump's worker after S seconds (default 60; 0:\n"
	"                       never): record \"timeout\"; its walk stops at 3/4 of S\n"
	"      --max-memory MB  limit each worker's data memory (RLIMIT_DATA)\n"
	"      --ordered        records in input order (default: as they complete)\n"
	"      --warm-builds N  keep up to N interpreter builds warm (default 16; 0:\n"
	"                       none): later dumps of a build forked from its warm\n"
	"                       process, the same records for less CPU\n"
	"      --warm-memory MB the warm processes' memory together at most MB (1024)\n"
	"  -0, --null           the list on standard input is NUL-separated\n"
	"      --skip-done FILE leave out dumps whose path has a record in FILE\n"
	"      --shard K/N      only the dumps whose path hashes to K (0 <= K < N)\n"
	"      --html-dir DIR   also each report's HTML page in DIR\n"
	"\n"
	"As in analyze (pycore-analyze(1)):\n"
	"  -f, --format json    the only format\n"
	"      --locals[=deep]  every frame's variables; =deep also instances' attributes\n"
	"      --max-repr N     a repr is at most N characters (default 256)\n"
	"      --max-items N    at most N items of a container (default 1000)\n"
	"      --max-depth N    containers nested at most N deep (default 32, max 64)\n"
	"      --native         also native stacks, the Python frames woven in\n"
	"      --native-all     the same, keeping the interpreter's own frames\n"
	"      --redact         replace secrets' values (the default of batch)\n"
	"      --no-redact      do not\n"
	"      --max-spool SIZE the most one dump may write under $TMPDIR (default 16G)\n"
	"      --executable PATH\n"
	"                       the main program's file, instead of its recorded path\n"
	"      --sysroot ROOT   the crashed machines' root: a directory or an image\n"
	"      --search-path DIR[:DIR...]\n"
	"                       directories of loose binaries, matched by build-id\n"
	"      --debug-dir DIR  a build-id tree, before /usr/lib/debug (repeatable)\n"
	"      --allow-mismatch use a file whose build-id differs, with a warning\n"
	"      --no-debug-cache read compressed debug files as they are\n"
	"      --layout WHICH   CPython's struct offsets: auto (default), table, dwarf\n"
	"  -v, --verbose, --no-source, --all-threads, --all-frames, --tasks, --color WHEN\n"
	"                       accepted, without effect: they shape the text report\n"
	"\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status: 0 every dump got its record (whatever it says), 1 a record\n"
	"could not be written, 2 usage error (also: a list or --skip-done file that\n"
	"cannot be read), 9 the --sysroot image cannot be read.  A summary goes to\n"
	"standard error.\n";

static const char heap_help[] =
	"Usage: pycore heap [OPTIONS] DUMP...\n"
	"       pycore heap --pid [--no-stop] [OPTIONS] PID...\n"
	"       pycore heap --diff [OPTIONS] OLD NEW\n"
	"       pycore heap --diff --pid [--no-stop] [OPTIONS] OLD PID\n"
	"The census of each dump's Python heap (or each running process's, with\n"
	"--pid): every object on the GC's lists, counted by type, with the size\n"
	"sys.getsizeof gives it, and the largest retainers (what would be freed with\n"
	"each object) with their paths from sys.modules.  Nothing runs in the\n"
	"process.  Details: pycore help heap (man pycore-heap).\n"
	"\n"
	"  -f, --format FORMAT  text (default), json (the report of pycore-report(5),\n"
	"                       its heap filled), html (a self-contained page: the\n"
	"                       retainers as a treemap to zoom into, sortable tables)\n"
	"      --pretty         indent the JSON (needs --format json)\n"
	"      --top N          text and html: the N types of most bytes, text the N\n"
	"                       largest retainers too (default 30; 0: all)\n"
	"      --diff           OLD NEW, two dumps of one process (with --pid: OLD and\n"
	"                       the process, read now): what grew, by type, by root\n"
	"                       (what the largest retainers retain, by path), and\n"
	"                       the largest objects that grew in place\n"
	"      --timeout S      one dump's time budget in seconds (default 60; 0: none)\n"
	"      --max-spool SIZE the most one dump may write under $TMPDIR (K, M, G, T;\n"
	"                       default 16G, else $PYCORE_MAX_SPOOL; 0: no cap)\n"
	"  -p, --pid            the operands are process ids, not dumps\n"
	"      --no-stop        read them running, never stopped: counts may be torn\n"
	"\n"
	"Where the interpreter's files come from, as in analyze (pycore-analyze(1)):\n"
	"      --executable PATH, --sysroot ROOT, --search-path DIR[:DIR...],\n"
	"      --debug-dir DIR, --allow-mismatch, --no-debug-cache, --layout WHICH\n"
	"\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status, the highest over all operands: 0 complete, 1 incomplete (what\n"
	"was not read is said), 2 usage error, 3 not a CPython pycore reads, 4 not a\n"
	"dump, 5 output failed, 6 a budget ran out, 7 --pid: no such process or not\n"
	"permitted, 9 the --sysroot image cannot be read.\n";

static const char group_help[] =
	"Usage: pycore group [OPTIONS] [FILE.jsonl...]\n"
	"Groups the reports of pycore batch (JSON Lines; - or no FILE: standard\n"
	"input) by crash fingerprint, most frequent first: count, first and last\n"
	"seen, an example dump and its summary; error records counted apart.\n"
	"Details: pycore help group (man pycore-group).\n"
	"\n"
	"  -f, --format FORMAT  text (default); json: one object per group per line;\n"
	"                       html: the crash dashboard, one self-contained page\n"
	"      --html-dir DIR   html: link each dump to its page in DIR (written by\n"
	"                       batch --html-dir); write the dashboard into DIR\n"
	"      --output-dir DIR html: the dashboard as pages in DIR (made if missing):\n"
	"                       index.html, a row per group, and group-N.html each\n"
	"  -h, --help           show this help and exit\n"
	"\n"
	"Exit status: 0 every line was a report or an error record, 1 some were not\n"
	"(each named on standard error; the groups are written), 2 usage error or an\n"
	"input that cannot be read, 5 standard output (or an --output-dir page) failed.\n";

static const char coredump_help[] =
	"Usage: pycore coredump [--config FILE] INSTANCE\n"
	"The systemd-coredump hook, run as root by pycore-coredump@INSTANCE.service\n"
	"once systemd-coredump@INSTANCE.service has stored a crash (INSTANCE:\n"
	"NUMBER-PID-UID).  Finds that crash, skips what is not Python, opens the\n"
	"core, drops to an unprivileged user, and writes the report to the journal\n"
	"(MESSAGE_ID=" PYCORE_MESSAGE_ID ") and as pycore.NAME.json\n"
	"beside the core.  Details: pycore help coredump (man 8 pycore-coredump).\n"
	"\n"
	"  -c, --config FILE    the settings, pycore-coredump.conf(5); the default file,\n"
	"                       which may be missing, is\n"
	"                       " SYSCONFDIR "/pycore/coredump.conf\n"
	"  -h, --help           show this help and exit\n"
	"\n"
	"Exit status: 0 the crash was analyzed, skipped, or its analysis failed (each\n"
	"said in the journal or on standard error), 1 the hook could not do its work\n"
	"(no such crash, the report not written), 2 usage or configuration error.\n";

/* A command's manual page (and the two of the files): name and section. */
static const struct {
	const char *command, *page, *section;
} pages[] = {
	{ "analyze", "pycore-analyze", "1" },
	{ "batch", "pycore-batch", "1" },
	{ "heap", "pycore-heap", "1" },
	{ "group", "pycore-group", "1" },
	{ "coredump", "pycore-coredump", "8" },
	{ "help", "pycore", "1" },
	{ "report", "pycore-report", "5" },            /* the JSON report */
	{ "coredump.conf", "pycore-coredump.conf", "5" },  /* the hook's settings */
};

int help_write(const char *command)
{
	const char *text = !command ? overview
			   : strcmp(command, "analyze") == 0 ? analyze_help
			   : strcmp(command, "batch") == 0 ? batch_help
			   : strcmp(command, "heap") == 0 ? heap_help
			   : strcmp(command, "group") == 0 ? group_help
			   : strcmp(command, "coredump") == 0 ? coredump_help : overview;
	fputs(text, stdout);
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_COMPLETE;
	fprintf(stderr, "pycore: cannot write to standard output: %s\n", strerror(errno));
	return EXIT_WRITE;
}

/* Whether man(1) finds PAGE(SECTION): `man -w SECTION PAGE`, quiet.  1
 * found, 0 not found, -1 no man to ask. */
static int man_has(const char *section, const char *page)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	char *argv[] = { (char *)"man", (char *)"-w", (char *)section, (char *)page, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, "man", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -1; /* the shell's "command not found", should man be a wrapper */
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int help_main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		return help_write(NULL);
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "pycore: help takes one command: pycore help [COMMAND] (try 'pycore --help')\n");
		return EXIT_USAGE;
	}
	const char *command = argc == 2 ? argv[1] : "help", *page = NULL, *section = NULL;
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		if (strcmp(command, pages[i].command) == 0) {
			page = pages[i].page;
			section = pages[i].section;
		}
	}
	if (!page) {
		fprintf(stderr, "pycore: help: no command '%s': the commands are analyze, batch, heap, group, coredump "
			"and help, the other pages report and coredump.conf (try 'pycore --help')\n", command);
		return EXIT_USAGE;
	}
	/* the hint: this command's --help, which needs no manual */
	char hint[48];
	bool file = strcmp(section, "5") == 0;
	snprintf(hint, sizeof(hint), strcmp(command, "help") == 0 || file ? "pycore --help" : "pycore %s --help",
		 command);
	int has = man_has(section, page);
	if (has == 0) {
		fprintf(stderr, "pycore: help: no manual page %s(%s) (is pycore's man directory in MANPATH?): "
			"try '%s'\n", page, section, hint);
		return EXIT_NO_MANUAL;
	}
	if (has > 0) {
		fflush(stdout);
		execlp("man", "man", section, page, (char *)NULL);
	}
	fprintf(stderr, "pycore: help: cannot run man to show %s(%s)%s%s: try '%s'\n", page, section,
		has < 0 ? " (is man installed?)" : ": ", has < 0 ? "" : strerror(errno), hint);
	return EXIT_NO_MANUAL;
}
