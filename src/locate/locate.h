/* Where each module's files come from: the whole search policy, resolved once per analysis.
 * Contract: reads the dump, never changes it; returns a result per module, whose file the caller takes to attach.
 *
 * locate_modules tries, for every ELF module of the dump, in this
 * order: 1. the path the dump records (--executable for the main program),
 * 2. that path under --sysroot, 2b. for a module the dump records by its
 * name only (Crashpad's soname of a library the dynamic loader found), the
 * directories the loader searched: the main program's RUNPATH or RPATH
 * ($ORIGIN expanded), then its default directories, each under --sysroot
 * when given, 3. the --search-path directories (the
 * module's own name first, then any file with its build-id), 4. build-id
 * trees (DIR/.build-id/xx/yyyy) of --debug-dir, then of the sysroot's
 * usr/lib/debug, then of /usr/lib/debug, 5. debuginfod when DEBUGINFOD_URLS
 * is set.  A file is used only when its build-id is the one the dump
 * recorded (or, with allow_mismatch, when nothing matches: then with a
 * warning); for a module whose dump records none (musl-gcc links without
 * one), steps 1 to 3 by name, and a file is used only when the bytes the
 * dump holds of it agree with the file's (bytes.h).  Used files are mapped and kept until locate_free, or until
 * the caller takes them (locate_take_file) to attach them to the dump
 * (dump_attach_file), which then owns them: freeing the two in either
 * order is safe.  A file read from an image's tar (--sysroot IMAGE) is a
 * mapping whose address need not be a page's: every owner unmaps with
 * image_unmap, which takes both kinds.  The report's source lines come from files found under
 * the same policy (locate_source_map), and how each module's file was
 * found is its result's how (locate_how_str names it for the report). */
#ifndef PYCORE_LOCATE_LOCATE_H
#define PYCORE_LOCATE_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "locate/image.h"
#include "util/error.h"

struct locate_policy {
	const char *executable;       /* replaces the main program's recorded path */
	const char *sysroot;          /* the crashed machine's root, or NULL */
	const struct image *image;    /* the sysroot as a container image (image.h),
					 opened by the caller; NULL: a directory */
	char **search;                /* NULL-terminated directories, or NULL */
	char **debug_dirs;            /* NULL-terminated build-id trees, or NULL */
	bool allow_mismatch;
	const char *debug_cache;      /* where uncompressed copies of compressed debug
					 files are kept; NULL: none kept */
};

/* How a module's file was found. */
enum locate_how {
	LOCATE_NONE,                  /* not found, or not looked for */
	LOCATE_RECORDED,              /* the path the dump records */
	LOCATE_EXECUTABLE,            /* --executable */
	LOCATE_SYSROOT,               /* --sysroot + the recorded path */
	LOCATE_SEARCH_PATH,           /* a --search-path directory */
	LOCATE_BUILD_ID_TREE,         /* a build-id tree (debug dirs, usr/lib/debug) */
	LOCATE_DEBUGINFOD,
	LOCATE_LOADER_PATH,           /* a name only, found where the dynamic loader looks */
};

enum locate_state {
	LOCATE_MATCH,                 /* a file with the dump's build-id */
	LOCATE_MISMATCH_USED,         /* --allow-mismatch: a file with another id */
	LOCATE_REFUSED,               /* only files with another build-id (or, without one,
					 other bytes) were found */
	LOCATE_MISSING,               /* no file found */
	LOCATE_NO_BUILD_ID,           /* the dump records none, and holds too little of the
					 files found to verify them by their bytes */
	LOCATE_NOT_ELF,               /* not an ELF image (a data file): not looked for */
};

/* How the file used was verified to be the one the process mapped. */
enum locate_verified {
	LOCATE_UNVERIFIED,            /* no file, or --allow-mismatch's */
	LOCATE_BY_BUILD_ID,           /* its build-id is the dump's */
	LOCATE_BY_BYTES,              /* no build-id: the bytes the dump holds of it (bytes.h) */
};

struct locate_result {
	enum locate_state state;
	enum locate_how how;
	const char *path;             /* the file used, or NULL */
	const uint8_t *data;          /* its mapping, or NULL */
	size_t size;
	const char *reason;           /* why none is used, or the mismatch; else NULL */
	bool in_image;                /* read from --sysroot's image: PATH names it for
					 the report, no file is there to open (DATA is it) */
	enum locate_verified verified;
	size_t verified_bytes;        /* LOCATE_BY_BYTES: how many were compared */
};

struct locate;

/* Resolve every module of D under P.  NULL only when out of memory (*err
 * then says so). */
struct locate *locate_modules(const struct dump *d, const struct locate_policy *p, struct pc_error **err);
void locate_free(struct locate *l);

/* The result for module M of the dump given to locate_modules. */
const struct locate_result *locate_result(const struct locate *l, const struct dump_module *m);

/* Hand M's file over: true, and its mapping in *DATA and *SIZE, which the
 * caller owns from now on (munmap, or dump_attach_file); false when M has
 * no file or it was taken already.  The result still describes it (its
 * data valid as long as the new owner keeps the mapping). */
bool locate_take_file(struct locate *l, const struct dump_module *m, const uint8_t **data, size_t *size);

/* libdwfl's search path for separate debug files (.gnu_debuglink and
 * build-id), in the same order as above. */
const char *locate_debuginfo_path(const struct locate *l);

/* HOW as the report names it: "recorded", "executable", "sysroot",
 * "search-path", "build-id-tree", "debuginfod", "loader-path"; NULL for
 * LOCATE_NONE. */
const char *locate_how_str(enum locate_how how);

/* VERIFIED as the report names it: "build-id", "bytes"; NULL for
 * LOCATE_UNVERIFIED. */
const char *locate_verified_str(enum locate_verified verified);

/* A source file a Python frame names (its co_filename: from the dump,
 * trusted for nothing), under P: only an absolute path (.py, .wsgi, ...), only
 * a regular file of 1 to LOCATE_SOURCE_MAX bytes (no device; a FIFO never
 * blocks), P's sysroot + NAME first (nothing to verify it by, so the
 * crashed machine's copy wins), then NAME itself; P NULL: NAME only.
 * Mapped read-only (*LEN bytes, for the caller to image_unmap), or NULL. */
#define LOCATE_SOURCE_MAX (16u << 20)
const char *locate_source_map(const struct locate_policy *p, const char *name, size_t *len);

/* Separate debug files whose sections are compressed (as distributions
 * ship them) cost an inflation of each section at every analysis, so an
 * uncompressed copy of each is kept in DIR, named by its build-id.
 * locate_debug_cached opens the copy for build-id ID of the debug file
 * SOURCE (its descriptor and *PATH, malloc'd), or returns -1 when there is
 * none, or it is older than SOURCE; locate_debug_cache_
 * store makes one from FD, a debug file just found, if its sections are
 * compressed (for the next analysis: this one reads FD).  Failures leave
 * things as they were. */
int locate_debug_cached(const char *dir, const char *source, const uint8_t *id, size_t len, char **path);
void locate_debug_cache_store(const char *dir, int fd);
/* The policy's cache directory for those copies, or NULL. */
const char *locate_debug_cache(const struct locate *l);
/* The separate debug file for build-id ID in the build-id trees, in their
 * order (DIR/.build-id/xx/yyyy.debug), malloc'd, or NULL: a cached copy
 * stands in only for a file the search finds, never for one it does not. */
char *locate_debug_file(const struct locate *l, const uint8_t *id, size_t len);

#endif
