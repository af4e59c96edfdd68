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

#include <stdint.h>

uint64_t batch_build_key(const char *path);

#endif
