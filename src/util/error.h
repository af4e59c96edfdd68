/* One error type for every layer: a code, a one-line message, and the
 * address or file it concerns.
 *
 * Contract (after drgn's libdrgn): a function that can fail returns a
 * struct pc_error *, NULL on success; the caller owns it and frees it with
 * pc_error_free.  Hot paths (a memory read) return only the code, an
 * enum pc_code, and the caller that gives up builds the error from it. */
#ifndef PYCORE_UTIL_ERROR_H
#define PYCORE_UTIL_ERROR_H

#include <stdbool.h>
#include <stdint.h>

enum pc_code {
	PC_OK = 0,
	PC_ENOTCAPTURED,     /* the dump does not hold this address */
	PC_EIO,              /* a file could not be opened or read */
	PC_EFORMAT,          /* not a dump this reader knows */
	PC_ECORRUPT,         /* a dump, but damaged beyond use */
	PC_ENOMEM,
	PC_ETRUNCATED,       /* the dump ends before what the walk needed */
	PC_ENOTPYTHON,       /* no CPython interpreter in the dump */
	PC_EUNSUPPORTED,     /* a CPython this build cannot read */
};

struct pc_error {
	enum pc_code code;
	char *message;       /* one line, without the file's name */
	char *file;          /* the file concerned, or NULL */
	uint64_t address;    /* the address concerned, when has_address */
	bool has_address;
};

/* A new error; on allocation failure, a static out-of-memory error
 * (pc_error_free accepts it).  FILE may be NULL. */
struct pc_error *pc_error_new(enum pc_code code, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, concerning ADDR. */
struct pc_error *pc_error_at(enum pc_code code, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pc_error_free(struct pc_error *e);

/* What a code means, in a few words ("memory not captured in the dump"). */
const char *pc_code_str(enum pc_code code);

/* The last component of a path ("/usr/lib/libpython3.12.so" ->
 * "libpython3.12.so"). */
const char *pc_basename(const char *path);

#endif
