/* Inside pycore coredump (coredump.c runs the steps in order): the crash
 * being handled, and each step's functions, by the file that holds them.
 * Messages go to standard error or the journal; nothing here exits. */
#ifndef PYCORE_CLI_COREDUMP_INT_H
#define PYCORE_CLI_COREDUMP_INT_H

#ifdef HAVE_LIBSYSTEMD

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/coredump/journal.h"

#include "cli/coredump/coredump.h"
#include "cli/coredump/coredump_config.h"
#include "dump/dump.h"

#define COREDUMP_DIR "/var/lib/systemd/coredump"
/* how much of the core the Python check reads: the notes come first */
#define PREFIX_MAX ((size_t)8 << 20)
/* the text report in the journal entry is cut here (the file has it all) */
#define JOURNAL_TEXT_MAX ((size_t)256 << 10)
#define SLOT_WAIT_SECONDS 60

/* The crash the instance stored.  Strings are the crashed process's
 * (untrusted) or systemd's, bounded when read. */
struct crash {
	char *path;                  /* the core file; NULL when in the journal */
	char *cursor;                /* its journal entry; NULL when found as a file */
	bool in_journal;             /* the core is the entry's COREDUMP field */
	bool maps_known;             /* the entry has COREDUMP_PROC_MAPS ... */
	bool maps_python;            /* ... naming a python or libpython file */
	int64_t pid;
	char *exe, *comm, *uid, *boot_id, *timestamp;
	/* process.coredump: the file's attributes, or the entry's fields for
	 * a core in the journal; read as root */
	struct dump_coredump *facts;
};

static inline const char *basename_of(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

/* coredump_find.c: the journal's entry for INSTANCE (0 found, -1 not; *J
 * stays open on it), else the newest core file in COREDUMP_DIR; the
 * entry's COREDUMP field (at most MAX bytes) copied into an unlinked
 * temporary file, its descriptor or -1 (*TOO_BIG when over MAX). */
void crash_free(struct crash *c);
int crash_find_in_journal(const char *instance, sd_journal **j, struct crash *c);
int crash_find_file(struct crash *c);
int crash_journal_core(sd_journal *j, uint64_t max, bool *too_big);

/* coredump_python.c: whether a name (a path's last component) is
 * python's or libpython's; whether C is in Executables=; whether C is
 * Python's, never parsing more than PREFIX_MAX bytes of the core. */
bool hook_name_is_python(const char *s);
bool hook_wanted(const struct coredump_config *cfg, const struct crash *c);
bool hook_is_python(sd_journal *j, const struct crash *c);

/* coredump_guard.c: a directory the unit gave ($NAME's first entry), else
 * FALLBACK, made if missing (malloc'd, or NULL); whether EXE is over the
 * rate limit (counting this analysis when not); the core's size as far as
 * cheaply known; the debug cache handed to USER (malloc'd; NULL: none);
 * the drop to USER for good (0, or -1 said on standard error); a
 * MaxConcurrent slot among the N files open at FDS, waited for up to
 * SLOT_WAIT_SECONDS. */
char *hook_state_dir(const char *name, const char *fallback);
bool hook_rate_limited(const struct coredump_config *cfg, const char *exe);
uint64_t hook_core_size(int fd);
char *hook_debug_cache(const char *user);
int hook_drop_privileges(const char *user);
bool hook_take_slot(const int *fds, unsigned n);

/* coredump_write.c: S escaped for a terminal (malloc'd); a journal note
 * that is no report (PRIORITY 6 a skip, 3 a failure); the report's file
 * name (malloc'd); the analysis of the core open at CORE_FD written to
 * SIDECAR (closed) and the journal, and (SaveCompact=) its compact dump
 * to COMPACT_FD when >= 0 (left open), returning the exit code. */
char *hook_escaped(const char *s);
void hook_journal_note(const struct crash *c, const char *core, int priority, const char *why);
char *hook_sidecar_path(const struct coredump_config *cfg, const struct crash *c);
int hook_analyze_and_report(const struct coredump_config *cfg, const struct crash *c, int core_fd,
			    const char *core_name, FILE *sidecar, const char *sidecar_name, const char *cache,
			    int compact_fd, const char *compact_name);

#endif
#endif
