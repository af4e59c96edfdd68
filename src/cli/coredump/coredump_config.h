/* /etc/pycore/coredump.conf: the settings of pycore coredump (man
 * pycore(1), "COREDUMP.CONF").  systemd's INI style: a [Coredump]
 * section of KEY=VALUE lines, '#' and ';' comments, booleans yes/no,
 * true/false, on/off, 1/0, sizes with a K, M, G or T suffix (1024's). */
#ifndef PYCORE_CLI_COREDUMP_CONFIG_H
#define PYCORE_CLI_COREDUMP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

struct coredump_config {
	char *report_dir;            /* ReportDirectory=; NULL: next to the core */
	char **executables;          /* Executables=, NULL-terminated globs; NULL: any Python */
	bool locals;                 /* Locals= */
	bool redact;                 /* Redact= */
	unsigned max_concurrent;     /* MaxConcurrent=, at least 1 */
	uint64_t ratelimit_interval; /* RateLimitIntervalSec=, seconds; 0: no limit */
	unsigned ratelimit_burst;    /* RateLimitBurst=; 0: no limit */
	uint64_t max_core_size;      /* MaxCoreSize=, bytes */
	uint64_t max_spool;          /* MaxSpool=, bytes a compressed core may write decompressed; 0: no cap */
	uint64_t timeout;            /* TimeoutSec=, seconds for one analysis (opening it too); 0: none */
	char *user;                  /* User= */
	bool debuginfod;             /* Debuginfod= */
	bool save_compact;           /* SaveCompact=: a compact dump beside the report */
};

/* The defaults, then PATH's settings over them.  A missing PATH is no
 * error unless MUST_EXIST.  Returns 0, or -1 with *ERR (malloc'd, one
 * line naming the file and line) set; a key it does not know is named
 * on standard error and ignored, as systemd does. */
int coredump_config_load(const char *path, bool must_exist, struct coredump_config *c, char **err);
void coredump_config_free(struct coredump_config *c);

#endif
