/* pycore: the command line.  Options before the command, then dispatch
 * to analyze, batch and heap (cli/analyze/analyze.h, options in cli/options.h), group
 * (cli/group/group.h), coredump (cli/coredump/coredump.h) or help (cli/help.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/analyze/analyze.h"
#include "cli/coredump/coredump.h"
#include "cli/group/group.h"
#include "cli/help.h"
#include "cli/options.h"
#include "util/hugeheap.h"

int main(int argc, char **argv)
{
	struct options opt;
	options_init(&opt);
	int rc = options_parse(argc, argv, "+:f:hVj:0vp", &opt);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		options_usage_error("%s", "no command given: use 'pycore analyze DUMP...'");
		return EXIT_USAGE;
	}
	if (strcmp(argv[optind], "group") == 0)
		return group_main(argc - optind, argv + optind);
	if (strcmp(argv[optind], "help") == 0)
		return help_main(argc - optind, argv + optind);
	/* The commands that analyze dumps, not group's threads over records */
	if (strcmp(argv[optind], "coredump") == 0) {
		hugeheap_init();
		return coredump_main(argc - optind, argv + optind);
	}
	bool batch = strcmp(argv[optind], "batch") == 0, heap = strcmp(argv[optind], "heap") == 0;
	if (!batch && !heap && strcmp(argv[optind], "analyze") != 0) {
		options_usage_error("unknown command '%s': the commands are 'analyze', 'batch', 'heap', 'group', "
				    "'coredump' and 'help'", argv[optind]);
		return EXIT_USAGE;
	}
	/* Options may also follow the command, mixed with the dumps: parse
	 * again from the command on, as if it were the program name (optind 0
	 * makes GNU getopt start afresh). */
	argc -= optind;
	argv += optind;
	optind = 0;
	opt.command = batch ? "batch" : heap ? "heap" : "analyze";
	rc = options_parse(argc, argv, ":f:hVj:0vp", &opt);
	/* (not under batch --max-memory: its workers' RLIMIT_DATA would count
	 * the heap's reserve, and the part below its first huge page) */
	if (rc < 0 && !(batch && opt.batch.max_memory))
		hugeheap_init();
	if (rc < 0)
		rc = options_open_image(&opt);
	if (rc < 0)
		rc = batch ? batch_command(&opt, argc, argv, optind)
		     : heap ? heap_command(&opt, argc, argv, optind) : analyze_command(&opt, argc, argv, optind);
	options_free(&opt);
	return rc;
}
