/* One analysis of one dump: open it, resolve its module files, run the
 * Python walk, and hand back the report.  The CLI and the fuzz targets go
 * through this; nothing else wires the pipeline.
 *
 * Contract: analysis_run returns NULL and *out, whose report stays valid
 * until analysis_free, or the error that stopped it (then *out is NULL):
 * PC_EIO, PC_EFORMAT, PC_ECORRUPT (the input), PC_ETRUNCATED (a truncated
 * dump lacking what the walk needed), PC_ENOTPYTHON, PC_EUNSUPPORTED,
 * PC_ENOMEM.  A report that stands but is partial has ->incomplete set. */
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
	/* systemd-coredump's facts read beforehand (pycore coredump: before
	 * dropping the privileges the attributes need), over the file's own;
	 * NULL: the file's */
	const struct dump_coredump *coredump;
};

struct analysis;

struct pc_error *analysis_run(const char *path, const struct analysis_options *opt, struct analysis **out);
/* The same for the regular file open at FD (it stays the caller's), NAME
 * in messages and the report: a file opened before privileges were
 * dropped (pycore coredump). */
struct pc_error *analysis_run_fd(int fd, const char *name, const struct analysis_options *opt,
				 struct analysis **out);
const struct model_report *analysis_report(const struct analysis *a);
void analysis_free(struct analysis *a);

#endif
