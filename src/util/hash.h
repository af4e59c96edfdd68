/* FNV-1a, 64-bit: a small, stable, non-cryptographic hash of bytes, the
 * same on every machine and in every build (crash fingerprints, --shard,
 * sets of paths).  Constants from the FNV specification
 * (draft-eastlake-fnv: offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
#ifndef PYCORE_UTIL_HASH_H
#define PYCORE_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PC_FNV1A64_INIT UINT64_C(0xcbf29ce484222325)

/* Continue hash H over N bytes at P; start with PC_FNV1A64_INIT. */
static inline uint64_t pc_fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

#endif
