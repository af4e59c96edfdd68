/* Which interpreter build a dump is of, as pycore batch routes dumps to its
 * warm processes (batch_warm.h).
 * Contract: batch_build_key reads a few kilobytes of the file at PATH in
 * the batch's own process, so it trusts nothing it reads and parses only
 * an uncompressed 64-bit little-endian ELF core's program headers and its
 * NT_FILE note: the key hashes the first mapped file's path (the
 * executable) and every mapped path holding "libpython".  0: no key (not
 * such a core, or no NT_FILE): the dump goes to a cold worker.  A key is
 * only a guess worth a warm process; the worker checks each file's
 * build-id as any other does, so a wrong guess costs time, never truth. */
#ifndef PYCORE_CLI_BATCH_KEY_H
#define PYCORE_CLI_BATCH_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint64_t batch_build_key(const char *path);

/* The keys seen so far: a build gets a warm process at its second dump,
 * so that dumps of builds never seen again cost what they did before. */
struct batch_keys {
	uint64_t *slots;             /* 0: empty */
	size_t n, cap;
};

/* Whether KEY (non-zero) was seen; it is from now on.  Out of memory: seen
 * (a warm process for it, as without this set). */
bool batch_key_seen(struct batch_keys *s, uint64_t key);
void batch_keys_free(struct batch_keys *s);

#endif
