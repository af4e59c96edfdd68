/* One analysis of one dump: open it, resolve and attach its module files, walk it, report.
 * Contract: the pipeline's only wiring (the CLI, the fuzz targets); a report lives as long as its analysis.
 *
 * analysis_run returns NULL and *out, whose report stays valid
 * until analysis_free, or the error that stopped it (then *out is NULL):
 * PC_EIO, PC_EFORMAT, PC_ECORRUPT (the input), PC_ETRUNCATED (a truncated
 * dump lacking what the walk needed), PC_ENOTPYTHON, PC_EUNSUPPORTED,
 * PC_ENOMEM, PC_ETIMEOUT or PC_ELIMIT (the budget ran out before a report).  A report that stands but is partial has ->incomplete set. */
#ifndef PYCORE_ANALYSIS_ANALYSIS_H
#define PYCORE_ANALYSIS_ANALYSIS_H

#include "dump/dump.h"
#include "locate/locate.h"
#include "model/model.h"
#include "python/python.h"
#include "util/error.h"

struct analysis_options {
	struct locate_policy files;
	struct py_options py;
	bool redact;                 /* replace secrets' values (model/redact.h) */
	/* what opening the dump may cost (dump.h): the disk budget and the
	 * settings' names; its time is py.timeout, one budget for opening,
	 * spooling, decompressing and walking (the walk gets what is left) */
	struct dump_budget budget;
	/* systemd-coredump's facts read beforehand (pycore coredump: before
	 * dropping the privileges the attributes need), over the file's own;
	 * NULL: the file's */
	const struct dump_coredump *coredump;
	/* record the pages of the dump the analysis reads, for analysis_save */
	bool record;
};

struct analysis;

/* OPT is copied; its strings, lists and coredump stay the caller's, alive
 * until analysis_free. */
struct pc_error *analysis_run(const char *path, const struct analysis_options *opt, struct analysis **out);
/* The same for the regular file open at FD (it stays the caller's), NAME
 * in messages and the report: a file opened before privileges were
 * dropped (pycore coredump). */
struct pc_error *analysis_run_fd(int fd, const char *name, const struct analysis_options *opt,
				 struct analysis **out);
/* A live process, PID (dump.h's dump_open_process): opened, its files
 * located (as the process sees them) and symbols read while it runs;
 * then, with STOP, every thread stopped, the walk, and every thread let
 * go at once (the report says for how long); without, the walk twice
 * over the running process, a warning for each thread whose stack
 * differs between the two (it may be torn).  The errors of analysis_run,
 * and PC_EDENIED (pycore may not read it: the message names what is
 * missing) and PC_EGONE (no such process, or it exited while read). */
struct pc_error *analysis_run_process(int64_t pid, bool stop, const struct analysis_options *opt,
				      struct analysis **out);
/* The policy the analysis found files by: the caller's, but for a live
 * process in another root (a container, a chroot), whose root it takes
 * as the sysroot unless the caller gave one (source lines too). */
const struct locate_policy *analysis_files(const struct analysis *a);
/* The memory the walk read (dump.h's dump_ranges_read): a live
 * process's; NULL for a dump. */
const struct dump_range *analysis_ranges_read(const struct analysis *a, size_t *n);

/* The report of the last walk; NULL before one, or after one that failed. */
const struct model_report *analysis_report(const struct analysis *a);
void analysis_free(struct analysis *a);
/* After a walk of an analysis run with opt->record: a compact dump of
 * what it read, written to PATH (dump_save, dump.h): NULL and *SAVED
 * filled (may be NULL), or the error. */
struct pc_error *analysis_save(struct analysis *a, const char *path, struct dump_saved *saved);
/* The same into the file open at FD (dump_save_fd). */
struct pc_error *analysis_save_fd(struct analysis *a, int fd, const char *name, bool zstd);

/* Patched memory: what the walk makes of other bytes.  For the fuzz
 * targets that walk a real core's memory thousands of times, a few words
 * changed each time (fuzz-walk, fuzz-asyncio), with no private header.
 *
 * analysis_open is analysis_run without the walk: the dump opened, its
 * files located and attached, its symbols read, no report yet (the same
 * errors, but those of the walk).  analysis_patch writes LEN bytes at
 * ADDR over the memory the dump captured, the bytes there before into OLD
 * (LEN bytes: patching them back undoes it): PC_ENOTCAPTURED, and nothing
 * written, unless one captured run holds all of them (pages of a module's
 * file are not patched).  Only this process's copy changes, never a file:
 * each run is copied on its first patch, so memory grows by the runs
 * patched.  analysis_walk walks the memory as it is now into a new report
 * (the previous one freed): NULL, or the error of analysis_run's walk (the
 * report then NULL); the analysis stays usable either way. */
struct pc_error *analysis_open(const char *path, const struct analysis_options *opt, struct analysis **out);
enum pc_code analysis_patch(struct analysis *a, uint64_t addr, const void *bytes, size_t len, void *old);
struct pc_error *analysis_walk(struct analysis *a);

#endif
