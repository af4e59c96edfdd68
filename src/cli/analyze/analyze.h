/* pycore analyze and pycore batch, once their options are parsed
 * (options.h): the checks that tie options to the command, the debug
 * cache's place, then the run.
 *
 * Contract: ARGV[FIRST..ARGC) are the operands (dumps, or batch's
 * paths); each returns the command's exit code (options.h's exit_code for
 * analyze, batch.h's for batch), having said every failure in one line on
 * standard error.  OPT stays the caller's. */
#ifndef PYCORE_CLI_ANALYZE_H
#define PYCORE_CLI_ANALYZE_H

#include "cli/options.h"

int analyze_command(struct options *opt, int argc, char **argv, int first);
int batch_command(struct options *opt, int argc, char **argv, int first);
/* pycore heap (cli/heap.c): the census of each dump or process. */
int heap_command(struct options *opt, int argc, char **argv, int first);
/* The exit code of an analysis that failed with E, said on standard
 * error as "pycore: WHAT: MESSAGE"; E is freed. */
enum exit_code analyze_failed(const char *what, struct pc_error *e);
/* The checks analyze and heap share: --pretty needs JSON, an operand is
 * given, --no-stop needs --pid, $PYCORE_MAX_SPOOL is a size, --pid's
 * operands are process ids; else false after the usage error. */
bool analyze_operands_ok(const struct options *opt, int argc, char **argv, int first);

#endif
