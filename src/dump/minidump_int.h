/* What the minidump reader's files share (minidump.c reads the streams,
 * minidump_crashpad.c Crashpad's annotations): the file's bytes by RVA. */
#ifndef PYCORE_DUMP_MINIDUMP_INT_H
#define PYCORE_DUMP_MINIDUMP_INT_H

#include <stdint.h>

#include "dump_int.h"

struct md_stream {
	uint32_t type, size, rva;
};

/* Bytes [rva, rva+size) of the file, or NULL when they run past its end. */
static inline const uint8_t *md_at(struct dump *d, uint64_t rva, uint64_t size)
{
	if (rva > d->p->map_len || size > d->p->map_len - rva)
		return NULL;
	return d->p->map + rva;
}

/* A counted string at RVA (a 32-bit byte length, then the bytes): the
 * bytes and *LEN, or NULL when it runs past the file or MAX bytes. */
static inline const uint8_t *md_counted(struct dump *d, uint32_t rva, uint32_t max, uint32_t *len)
{
	const uint8_t *p = md_at(d, rva, 4);
	if (!p)
		return NULL;
	*len = dump_le32(p);
	const uint8_t *s = md_at(d, (uint64_t)rva + 4, *len);
	return s && *len <= max ? s : NULL;
}

#define MD_CRASHPAD_STRING  1             /* Annotation::Type::kString */
/* Crashpad's own limits are 256 bytes a simple annotation's key or value
 * (client/simple_string_dictionary.h) and 20 KiB an annotation object's
 * value (client/annotation.h, kValueMaxSize); what a dump may make pycore
 * keep is capped in all */
#define MD_MAX_ANNOTATIONS  4096
#define MD_MAX_NOTE         20480            /* bytes of one annotation string */
#define MD_MAX_NOTE_BYTES   (1u << 20)       /* bytes of all annotations */

/* Crashpad's info stream S: its annotations into D (after the module
 * list: they name modules by index). */
void md_crashpad_info(struct dump *d, const struct md_stream *s);

#endif
