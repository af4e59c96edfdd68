/* pycore batch: many dumps, one JSON line each, every dump analyzed in a
 * worker process of its own (README, "Batch mode").
 *
 * Contract: batch_run analyzes the dumps PATHS name (files, directories
 * searched recursively, "-" for a list on standard input; none: the list on
 * standard input), writes one record per dump on standard output and a
 * summary on standard error, and returns the exit code: 0 when every dump
 * got its record, 1 when a record could not be written, 2 for a usage
 * error (a list or --skip-done file that cannot be read). */
#ifndef PYCORE_CLI_BATCH_H
#define PYCORE_CLI_BATCH_H

#include <stdbool.h>

#include "analysis/analysis.h"

struct batch_options {
	unsigned jobs;               /* worker processes at once; 0: one per CPU */
	double timeout;              /* seconds per dump before its worker is killed; 0: none */
	unsigned long max_memory;    /* MB of data memory per worker; 0: no limit */
	bool ordered;                /* records in input order, not as completed */
	bool nul;                    /* the list on standard input is NUL-separated */
	const char *skip_done;       /* JSON Lines of earlier records, or NULL */
	unsigned long shard_k, shard_n;  /* keep paths hashing to K mod N; N 0: all */
	const char *html_dir;        /* also each report's HTML page there (report_html_page_name); NULL: none */
	/* warm processes (batch_warm.h): at most WARM_BUILDS interpreter
	 * builds kept warm (0: none, every dump in a cold worker), their
	 * resident memory together at most WARM_MEMORY MB */
	unsigned warm_builds;
	unsigned long warm_memory;
};

#define BATCH_WARM_BUILDS 16
#define BATCH_WARM_MEMORY 1024

int batch_run(char **paths, int npaths, const struct batch_options *bo, const struct analysis_options *ao);

#endif
