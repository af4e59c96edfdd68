/* Shared by the fuzz targets: run the whole pipeline over a dump file, the
 * way pycore analyze --locals=deep --format json does (native unwinding is
 * libdwfl's own code, and slow to set up per input: left out), and throw
 * the report away.  Only crashes, hangs and sanitizer reports count. */
#ifndef PYCORE_FUZZ_COMMON_H
#define PYCORE_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "report/report.h"

static void fuzz_analyze(const char *path)
{
	struct analysis_options opt = {
		.py = { .locals = true, .deep = true, .max_repr = 256, .max_items = 100, .max_depth = 16,
			.timeout = 10 },
	};
	struct analysis *a;
	struct pc_error *e = analysis_run(path, &opt, &a);
	if (e) {
		pc_error_free(e);
		return;
	}
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		report_json_write(null, analysis_report(a), false);
		report_text_write(null, analysis_report(a));
		fclose(null);
	}
	analysis_free(a);
}

/* A memfd holding DATA, named by its /proc path in PATH. */
static int fuzz_memfd(const void *data, size_t n, char *path, size_t cap)
{
	int fd = memfd_create("pycore-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
