/* One error type for every layer: a kind (enum pc_code), a one-line
 * message with its cause chain, and the address or file it concerns.
 *
 * Contract (after drgn's libdrgn): a function that can fail returns a
 * struct pc_error *, NULL on success; the caller owns it and frees it with
 * pc_error_free.  Hot paths (a memory read) return only the code, an
 * enum pc_code, and the caller that gives up builds the error from it.
 * A caller that adds a step wraps the error (pc_error_wrap), as CPython's
 * _remote_debugging chains its causes: "reading the interpreter frame at
 * 0x7f..: memory not captured in the dump". */
#ifndef PYCORE_UTIL_ERROR_H
#define PYCORE_UTIL_ERROR_H

#include <stdbool.h>
#include <stdint.h>

/* Every kind of failure any report can carry.  Each has one stable
 * machine name (pc_code_name): the JSON's error codes, the same in
 * analyze's report, batch's records and the coredump hook's, all listed
 * in src/report/pycore-report.schema.json (check-errors.py compares).
 * Append only: the names are a contract. */
enum pc_code {
	PC_OK = 0,
	PC_ENOTCAPTURED,     /* not-captured: the dump does not hold this address */
	PC_EIO,              /* io: a file could not be opened or read */
	PC_EFORMAT,          /* format: not a dump this reader knows */
	PC_ECORRUPT,         /* corrupt: the dump holds it, but nonsense */
	PC_ENOMEM,           /* out-of-memory */
	PC_ETRUNCATED,       /* truncated: the dump ends before what the walk needed */
	PC_ENOTPYTHON,       /* not-python: no CPython interpreter in the dump */
	PC_EUNSUPPORTED,     /* unsupported: a CPython (or an object of one) pycore cannot read */
	PC_ETIMEOUT,         /* timeout: the time budget (--timeout) ran out */
	PC_ELIMIT,           /* limit: one of pycore's caps cut it short */
	PC_ECRASHED,         /* crashed: batch's worker died of a signal */
	PC_EWORKER,          /* worker-failed: batch's worker ended without a whole record */
	PC_ENOTANALYZED,     /* not-analyzed: the hook could not drop its privileges */
	PC_EBUSY,            /* busy: the hook's MaxConcurrent= slots stayed taken */
	PC_EDENIED,          /* denied: a live process pycore may not read (ptrace refused) */
	PC_EGONE,            /* gone: a live process that does not exist (any more) */
	PC_NCODES
};

struct pc_error {
	enum pc_code code;
	char *message;       /* one line, the steps first, without the file's name */
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
/* CAUSE (taken over), its message prefixed with the step that failed:
 * "STEP: cause's message"; its code, address and file are kept.  CAUSE
 * NULL gives NULL; when memory runs out CAUSE comes back unchanged. */
struct pc_error *pc_error_wrap(struct pc_error *cause, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pc_error_free(struct pc_error *e);

/* What a code means, in a few words ("memory not captured in the dump"). */
const char *pc_code_str(enum pc_code code);
/* The code's stable machine name ("not-captured", "corrupt", "timeout"):
 * the one table every JSON writer uses.  NULL for PC_OK. */
const char *pc_code_name(enum pc_code code);
/* The name the coredump hook has written for an analysis that failed
 * with CODE since before this table (kept for its readers): "bad-input"
 * for a dump it could not read, "not-python" also for an unsupported
 * CPython, else pc_code_name. */
const char *pc_code_hook_name(enum pc_code code);

/* The last component of a path ("/usr/lib/libpython3.12.so" ->
 * "libpython3.12.so"). */
const char *pc_basename(const char *path);

#endif
