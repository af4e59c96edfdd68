/* pycore coredump [--config FILE] INSTANCE: the systemd-coredump hook
 * (README, "systemd-coredump hook"; man pycore-coredump(8)).  Run as root by
 * pycore-coredump@INSTANCE.service when systemd-coredump@INSTANCE.service
 * has stored a crash: finds that crash, skips what is not Python, opens
 * the core and the report's file, drops to an unprivileged user, analyzes
 * and writes the report to the journal and to a JSON file. */
#ifndef PYCORE_CLI_COREDUMP_H
#define PYCORE_CLI_COREDUMP_H

/* pycore's own journal MESSAGE_ID for its reports (made once with
 * systemd-id128 new). */
#define PYCORE_MESSAGE_ID "bee5f1820e0c4d1fb9207024ca7e75c5"

/* ARGV[0] is "coredump".  Exit 0: the crash was analyzed, skipped (not
 * Python, over a limit) or its analysis failed, each said in the journal
 * or on standard error; 1: the hook could not do its work (no such crash,
 * the report not written); 2: usage or configuration error. */
int coredump_main(int argc, char **argv);

#endif
