/* A file without a build-id, verified by the bytes the dump holds of it.
 * Contract: reads the dump and the file, changes neither; the verdict says how much was compared, or why not.
 *
 * A module whose ELF header carries no GNU build-id note (musl-gcc links
 * without --build-id) can still be told apart from another build by what
 * the process's memory holds of it: the file's bytes at the same offsets.
 * Compared: the ELF header page (the mapping at file offset 0, which the
 * kernel dumps), every read-only PT_LOAD segment where the dump holds its
 * pages (all of them, or an even sample of LOCATE_BYTES_MAX bytes when the
 * dump holds more), and the dynamic section entry by entry (PT_DYNAMIC is
 * writable: the loader writes DT_DEBUG's value and glibc relocates the
 * address-valued entries it keeps in l_info, so those compare as the file's
 * value or the file's value plus the load bias).  Writable segments are
 * not compared (relocations change them), nor read-only ones of a file with
 * text relocations (the loader writes those too).  The file is used when all
 * that was compared agrees and there is enough of it: the header page, plus
 * the whole dynamic section or LOCATE_BYTES_ENOUGH bytes of read-only
 * segments beyond the header page.  What the dump does not hold cannot
 * tell two builds apart: a file that differs only there passes. */
#ifndef PYCORE_LOCATE_BYTES_H
#define PYCORE_LOCATE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"

#define LOCATE_BYTES_MAX (256u << 10)  /* read-only segment bytes compared at most, per module */
#define LOCATE_BYTES_ENOUGH 4096u      /* without the dynamic section: this much beyond the header */

struct locate_bytes {
	bool agree;                    /* the file may be used */
	bool differ;                   /* refused: bytes the dump holds differ (else: too
					  little held, or not an ELF file this can read) */
	size_t compared;               /* bytes compared (header page, segments, dynamic entries) */
	size_t dynamic_entries;        /* entries of the dynamic section compared */
	char *reason;                  /* malloc'd, why not (agree false); NULL when it agrees or
					  out of memory */
};

/* Compare FILE (SIZE bytes, a 64-bit ELF image, untrusted) with the bytes
 * dump D holds at BASE, the address of its mapping at file offset 0; NAME
 * names the file in the reason.  Fills *OUT (free its reason). */
void locate_bytes_verify(struct dump *d, uint64_t base, const uint8_t *file, size_t size, const char *name,
			 struct locate_bytes *out);

#endif
