/* Private to the dump readers: segments and the helpers every format uses. */
#ifndef PYCORE_DUMP_INT_H
#define PYCORE_DUMP_INT_H

#include <string.h>

#include "dump.h"

/* One piece of the address space.  Either its bytes are in the mapped dump
 * (data != NULL), or it is a read-only mapping of a module's file that the
 * dump left out; those bytes come from the file, once its build-id matched. */
struct dump_segment {
	uint64_t start, end;
	const uint8_t *data;
	struct dump_module *mod;
	uint64_t file_offset;
};

/* A module's file, once attached (dump_attach_file). */
struct dump_file {
	const uint8_t *data;
	size_t size;
	bool used;                   /* a read was served from it */
};

#define DUMP_SEG_HINTS 64

struct dump_priv {
	struct dump_segment *segs;   /* sorted, not overlapping */
	size_t nsegs;
	size_t last_seg;             /* the segment the last read hit */
	uint32_t seg_hint[DUMP_SEG_HINTS];   /* by the address's MiB: a segment a read there hit (a
					      * hint, checked: any index may be stale) */
	const uint8_t *map;          /* the mapped input (decompressed) */
	size_t map_len;
	bool map_borrowed;            /* the caller's buffer (dump_open_memory): not unmapped */
	char *error;                 /* why dump_open failed */
	char **warnings;
	size_t nwarnings;
	bool truncated;              /* the file ends before the data it declares */
	char *inflate_cut;           /* a compressed stream cut short: the message */
	struct dump_file *files;     /* parallel to d->modules, or NULL */
	bool extents_changed;        /* an attached file gave a module its extent */
	size_t note_bytes;           /* of the annotations kept (minidump.c) */
	bool notes_full;             /* a cap was reached: no more are taken */
};

/* A message to pass on in the report. */
void dump_warn(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hard caps on what a dump may declare. */
#define DUMP_MAX_SEGMENTS  (1u << 20)
#define DUMP_MAX_THREADS   (1u << 16)
#define DUMP_MAX_MODULES   (1u << 13)     /* distinct mapped files */
#define DUMP_MAX_MAPPINGS  (1u << 18)     /* NT_FILE entries */

enum pc_code dump_elfcore_open(struct dump *d);
enum pc_code dump_minidump_open(struct dump *d);

/* After the dump's own segments are in and finished: add file-backed
 * segments for the parts of the modules' read-only mappings that the dump
 * left out, then finish again. */
enum pc_code dump_add_file_segments(struct dump *d);

/* Compressed dumps (compress.c).  Replace d->p->map by its decompressed
 * contents (an unlinked temporary file, mapped): d->p->map starts with one
 * of the magics dump_compression_of knows.  A stream cut short gives what
 * was decompressed, a warning, and d->p->inflate_cut (the warning's text):
 * open_mapped marks the dump truncated. */
enum pc_code dump_inflate(struct dump *d);
/* The magic of the compression NAME in *MAGIC, and its length (0: no such). */
size_t dump_compression_magic(const char *name, const uint8_t **magic);
/* The decoding itself: d->p->map's stream, decompressed and handed to SINK
 * piece by piece (non-zero from SINK: stop, an I/O error, errno set);
 * *TOTAL is the number of bytes decompressed.  MEM_LIMIT: the most the
 * decoder's window may take (0: the library's default).  PC_ETRUNCATED:
 * the input ends before the stream does, after *TOTAL good bytes. */
typedef int (*dump_sink)(void *arg, const uint8_t *p, size_t n);
enum pc_code dump_decode(struct dump *d, dump_sink sink, void *arg, uint64_t mem_limit, uint64_t *total);
/* An unlinked temporary file under $TMPDIR (else /tmp), open read-write,
 * or -1 with d's error set. */
int dump_temp_file(struct dump *d);
/* Writing a file with holes: the pages of P (N bytes) that hold something
 * are written at OFF, which advances by N; zero pages are skipped (the
 * caller sets the file's size at the end).  0, or -1 with errno set.  A
 * dump_sink, ARG a struct dump_sparse. */
struct dump_sparse {
	int fd;
	uint64_t off;     /* the file offset of the next byte */
};
int dump_sparse_write(void *arg, const uint8_t *p, size_t n);

/* An empty dump (pid and crashed_tid unknown), NULL when out of memory. */
struct dump *dump_new(void);

/* Append an empty module (no mappings; start UINT64_MAX, end 0) that
 * takes ownership of PATH.  NULL when out of memory. */
struct dump_module *dump_add_module(struct dump *d, char *path);

/* Append a segment (caller sorts them with dump_segments_finish). */
enum pc_code dump_add_segment(struct dump *d, const struct dump_segment *s);
/* Sort, drop overlaps (earlier-added wins), index.  Returns an error if the
 * dump's own segments overlap. */
enum pc_code dump_segments_finish(struct dump *d);

/* Reads the build-id note of the ELF image whose header is at BASE in the
 * process.  Returns 0 and fills id/len, or -1. */
int dump_read_build_id(struct dump *d, uint64_t base, uint8_t *id, size_t *len);


/* Little-endian fields of the dump's own structures. */
static inline uint16_t dump_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t dump_le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t dump_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

char *dump_strdup(const char *s);
void dump_set_error(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
