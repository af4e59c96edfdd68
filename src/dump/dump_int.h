/* Private to dump/: the segment index, and what every format's reader uses to fill it.
 * Contract: calls run downward only: open.c -> elfcore.c, minidump.c -> files.c, place.c -> segments.c;
 * live_stop.c -> live.c -> live_refuse.c, open.c, place.c, segments.c (segments.c and open.c reach a
 * live process's reader only through dump_priv's live_read and live_free). */
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
	uint32_t flags;              /* the core's PF_* for its bytes; 0: not known */
	bool live;                   /* a live process's: read by d->p->live_read */
	bool writable;               /* (live) the process can write these pages */
};

/* A module's file, once attached (dump_attach_file): the dump's to unmap. */
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
	uint8_t **copies;            /* segments' bytes dump_patch copied (the dump's to free) */
	size_t ncopies;
	/* the C library the process ran on (dump_libc: chosen by its
	 * modules, or dump_set_libc), NULL until chosen */
	const struct libc *libc;
	bool libc_linked_in;    /* dump_set_libc gave it */
	/* glibc's struct pthread as the dump's libc describes it
	 * (dump_set_pthread_layout); else the libc seam's */
	bool pthread_known;
	int64_t pthread_from_tp;
	uint64_t pthread_tid;
	/* what opening may spend (open.c): the caller's budget copied (all
	 * zero: none), its deadline, what was written under $TMPDIR */
	struct dump_budget budget;
	uint64_t deadline_ns;
	uint64_t spooled;
	struct dump_record *rec;     /* the pages reads were served from (dump_record_start), or NULL */
	/* an ELF core's own notes, as its PT_NOTE segments hold them (for
	 * dump_save to copy) */
	struct dump_span { const uint8_t *data; size_t len; } *notes;
	size_t nnotes;
	/* the initial stack from argc to the end of the run holding
	 * AT_EXECFN, when find_argv used it; 0, 0 when not */
	uint64_t argv_start, argv_end;
	uint8_t *auxv;               /* a live process's auxv, whole (dump_save's NT_AUXV), or NULL */
	size_t auxv_len;
	/* a live process's reader (live.c), or NULL; its calls, set by
	 * live.c (reached through these so that no call runs back up to it) */
	struct dump_live *live;
	/* LEN bytes at ADDR, all in live segments; PC_ENOTCAPTURED when the
	 * process does not have them (any more) */
	enum pc_code (*live_read)(struct dump *d, uint64_t addr, void *buf, size_t len);
	void (*live_free)(struct dump *d);   /* let the process go, free the reader (dump_close) */
	char **quiet_notes;          /* dump_notes */
	size_t nquiet_notes;
	bool live_search_cut;        /* a dump_search reached DUMP_LIVE_SEARCH_MAX */
	/* a live process's recorded memory, copied while it was stopped
	 * (dump_record_snapshot, save.c): sorted runs into one buffer */
	struct dump_held { uint64_t start, end; const uint8_t *data; } *held;
	size_t nheld;
	uint8_t *held_buf;
	bool held_taken;
	/* the process's mappings (vmas.c): as the readers add them, then
	 * sorted and named by the file ranges (NT_FILE) */
	struct dump_vma *vmas, *vma_files;
	size_t nvmas, vmas_cap, nvma_files, vma_files_cap;
	size_t nvmas_recorded;       /* nvmas as recorded, when they are no list (vmas.c) */
	bool vmas_finished;
};

/* The recorder (record.c): a set of block numbers, blocks of
 * DUMP_RECORD_GRAIN bytes (a divisor of the page size). */
#ifndef DUMP_RECORD_GRAIN
#define DUMP_RECORD_GRAIN 256u
#endif
struct dump_record {
	uint64_t *slots;             /* page number + 1; 0 empty */
	size_t cap, n;               /* cap a power of two */
	uint64_t last;               /* the page last added, + 1 */
	bool failed;                 /* out of memory: the record is incomplete */
};
/* Note that [ADDR, ADDR+LEN) was served from the dump's own bytes. */
void dump_record_note(struct dump_record *r, uint64_t addr, size_t len);
void dump_record_free(struct dump_record *r);
/* The blocks recorded, by number, sorted (malloc'd; NULL when out of memory). */
uint64_t *dump_record_pages(struct dump_record *r, size_t *n);
/* Read (and so record) what a debugger needs beside what the analysis
 * read: each thread's stack top and struct pthread, the initial stack,
 * the modules' headers, build-id notes and dynamic sections, and the
 * dynamic linker's list of libraries. */
void dump_record_extras(struct dump *d);

/* The process's mappings (vmas.c): a mapping and its permissions; a
 * file's range (PATH copied; only an absolute path names a file); sort
 * and name them (dump_vmas does it once itself); free them (dump_close).
 * PC_ELIMIT past DUMP_MAX_MAPPINGS. */
enum pc_code dump_add_vma(struct dump *d, uint64_t start, uint64_t end, bool r, bool w, bool x);
enum pc_code dump_add_vma_file(struct dump *d, uint64_t start, uint64_t end, uint64_t offset, const char *path);
void dump_vmas_finish(struct dump *d);
void dump_vmas_free(struct dump *d);

/* A message to pass on in the report. */
void dump_warn(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A note that does not make the report incomplete (dump_notes). */
void dump_note(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An empty dump (open.c), NULL when out of memory. */
struct dump *dump_new(void);

/* Hard caps on what a dump may declare. */
#define DUMP_MAX_SEGMENTS  (1u << 20)
#define DUMP_MAX_THREADS   (1u << 16)
#define DUMP_MAX_MODULES   (1u << 13)     /* distinct mapped files */
#define DUMP_MAX_MAPPINGS  (1u << 18)     /* NT_FILE entries */
#define DUMP_LIVE_SEARCH_MAX (256u << 20)  /* bytes of a live process one dump_search reads */

/* The format readers (elfcore.c, minidump.c), which open.c runs on the
 * bytes at d->p->map: 0, or the error's code with d's error set. */
enum pc_code dump_elfcore_open(struct dump *d);
enum pc_code dump_minidump_open(struct dump *d);

/* After the dump's own segments are in and finished: add file-backed
 * segments for the parts of the modules' read-only mappings that the dump
 * left out, then finish again (files.c). */
enum pc_code dump_add_file_segments(struct dump *d);
/* The file-backed segments made again, over the modules as they are now. */
enum pc_code dump_redo_file_segments(struct dump *d);
/* Unmap and forget the attached files (dump_close). */
void dump_files_free(struct dump *d);

/* Append an empty module (no mappings; start UINT64_MAX, end 0) that
 * takes ownership of PATH.  NULL when out of memory. */
struct dump_module *dump_add_module(struct dump *d, char *path);
/* The module of PATH, added (a copy of PATH) when new; NULL with *FULL set
 * when DUMP_MAX_MODULES are there already, NULL alone without memory. */
struct dump_module *dump_module_for_path(struct dump *d, const char *path, bool *full);

/* Where each module is (place.c): its base as the loader's list (r_debug,
 * through AT_PHDR and AT_PHNUM in the LEN bytes of AUXV, NULL when the
 * dump has none) says, checked against the ELF header there, else its
 * file's mapping at offset 0 that heads its segments; a module keeps only
 * its segments among its file's mappings.  Call once the segments are in
 * (a live process's: readable).  LOADED (NULL: none), NLOADED entries: the
 * loader's list as a minidump's writer copied it (Breakpad's DSO debug
 * stream), read instead of the one in memory. */
struct dump_loaded {
	uint64_t addr;               /* l_addr, the load bias */
	uint64_t ld;                 /* l_ld, its dynamic section */
};
void dump_place_modules(struct dump *d, const uint8_t *auxv, size_t auxv_len, const struct dump_loaded *loaded,
			size_t nloaded);
/* Leave out the modules that are another mapping of a file the loader's
 * list placed (a minidump's module list can name a file twice: a piece
 * of it mapped again, even its first page); returns how many.  The
 * file-backed segments point to their modules: when it left one out,
 * dump_redo_file_segments. */
size_t dump_drop_unloaded_copies(struct dump *d);

/* Append a segment (caller sorts them with dump_segments_finish). */
enum pc_code dump_add_segment(struct dump *d, const struct dump_segment *s);
/* Sort, drop overlaps (earlier-added wins), index.  Returns an error if the
 * dump's own segments overlap. */
enum pc_code dump_segments_finish(struct dump *d);

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

/* Why opening failed, for dump_open's error (a later call replaces it). */
void dump_set_error(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
