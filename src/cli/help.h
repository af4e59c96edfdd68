/* Help: each command's --help (its synopsis and options, one screen:
 * at most 60 lines of at most 80 columns), the overview of pycore --help,
 * and pycore help [COMMAND], which opens the command's manual page.
 *
 * Contract: help_write(NULL) writes the overview, help_write("analyze")
 * (batch, group, coredump) that command's help, on standard output;
 * returns 0, or 5 (said on standard error) when standard output failed.
 * help_main takes the command line from "help" on (ARGV[0] is "help") and
 * replaces pycore by man(1) on the page (of a command, or "report" for
 * pycore-report(5), "coredump.conf" for pycore-coredump.conf(5)); it returns only when it cannot:
 * 2 for an unknown command (one line), 8 when man or the page is missing
 * (one line, naming the page and the --help to use instead; options.h's
 * EXIT_NO_MANUAL). */
#ifndef PYCORE_CLI_HELP_H
#define PYCORE_CLI_HELP_H

int help_write(const char *command);
int help_main(int argc, char **argv);

#endif
