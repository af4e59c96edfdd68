/* pycore group: reports grouped by crash fingerprint (README, "Grouping").
 *
 * Contract: group_main takes the command line from "group" on (ARGV[0] is
 * "group"), reads report JSON Lines from the files it names ("-" or none:
 * standard input), writes the groups on standard output and returns the
 * exit code: 0 every line was a report or an error record, 1 some lines
 * were not (each said on standard error, the groups still written), 2
 * usage error or an input that cannot be read, 5 standard output failed. */
#ifndef PYCORE_CLI_GROUP_H
#define PYCORE_CLI_GROUP_H

int group_main(int argc, char **argv);

#endif
