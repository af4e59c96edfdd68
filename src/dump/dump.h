/* The memory-reader interface: what every dump format gives the layers
 * above it.
 *
 * A dump is a sorted set of non-overlapping segments of the dead process's
 * address space, its threads with their registers, the modules (mapped ELF
 * files) with their build-ids, and a few process facts.  Every read is
 * bounds-checked: an address no segment holds is a fault (DUMP_ENOTCAPTURED),
 * never a guess.  Nothing here knows about Python.
 */
#ifndef PYCORE_DUMP_DUMP_H
#define PYCORE_DUMP_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results of dump_open and dump_read. */
enum dump_status {
	DUMP_OK = 0,
	DUMP_ENOTCAPTURED,   /* the dump does not hold this address */
	DUMP_EIO,            /* the input could not be opened or read */
	DUMP_EFORMAT,        /* not a dump this reader knows */
	DUMP_ECORRUPT,       /* a dump, but damaged beyond use */
	DUMP_ENOMEM,
};

/* x86_64 general registers, in the order of the kernel's user_regs_struct. */
struct dump_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	uint64_t rax, rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss;
	uint64_t fs_base, gs_base, ds, es, fs, gs;
};

struct dump_thread {
	int64_t tid;                 /* OS thread id (LWP) */
	int signal;                  /* pending/current signal (pr_cursig), 0 if none */
	struct dump_regs regs;
};

struct dump_mapping {
	uint64_t start, end;         /* [start, end) in the process */
	uint64_t file_offset;        /* offset of start in the file */
	bool writable;               /* the process could change these pages */
};

struct dump_module {
	char *path;                  /* as the dump names it */
	uint64_t start, end;         /* lowest and highest address of its mappings */
	uint64_t base;               /* address of its ELF header (mapping at offset 0) */
	struct dump_mapping *maps;
	size_t nmaps;
	uint8_t build_id[64];        /* read from the process's own copy of the headers */
	size_t build_id_len;         /* 0: not known */
	bool build_id_prefix;        /* only the first build_id_len bytes are known */
	/* State of the on-disk file, opened only when a read needs it. */
	int file_state;              /* 0 untried, 1 usable, -1 refused or missing */
	const uint8_t *file_data;
	size_t file_size;
	char *file_path;             /* the file in use, when file_state is 1 */
	bool file_mismatch;          /* used despite a different build-id */
	char *file_error;            /* why no file was used */
};

/* Where the files of a dump's modules are looked for, in this order: the
 * path the dump records (or --executable for the main program), the same
 * path under the sysroot, every file of the search directories (matched by
 * build-id, whatever its name), then by_build_id (build-id directories,
 * debuginfod).  A file is used only when its build-id matches the dump's,
 * unless allow_mismatch, and then with a warning. */
struct dump_files {
	const char *sysroot;
	char **search;                /* NULL-terminated directories, or NULL */
	const char *executable;       /* replaces the main program's path */
	bool allow_mismatch;
	/* Returns a malloc'd path holding the ELF with this build-id, or NULL. */
	char *(*by_build_id)(const uint8_t *id, size_t len, void *arg);
	void *arg;
};

struct dump_signal {
	int number;
	int code;
	uint64_t address;            /* si_addr, for faults */
	bool has_address;
};

struct dump_segment;

struct dump {
	char *path;
	const char *format;          /* "elf-core" or "minidump" */
	const char *compression;     /* NULL or "zstd" */
	uint64_t file_size;

	/* process facts; pid < 0 when unknown */
	int64_t pid;
	char *fname;                 /* short executable name (PRPSINFO) */
	char *psargs;                /* the kernel's truncated command line */
	char *executable;            /* path of the main program, NULL if unknown */
	char **argv;                 /* NULL-terminated, NULL if unknown */
	bool has_signal;
	struct dump_signal signal;
	int64_t crashed_tid;         /* -1 when no thread received a signal */
	uint64_t auxv_entry;         /* AT_ENTRY, 0 if unknown */

	struct dump_thread *threads;
	size_t nthreads;
	struct dump_module *modules;
	size_t nmodules;

	/* private to the readers */
	struct dump_segment *segs;
	size_t nsegs;
	size_t last_seg;
	const uint8_t *map;          /* the mapped input */
	size_t map_len;
	char *error;                 /* message for the last failure of dump_open */
	char **warnings;
	size_t nwarnings;
	struct dump_files files;     /* set by the caller after dump_open */
	bool truncated;              /* the file ends before the data it declares */
};

/* Open PATH, whatever its format.  On failure returns a status and, when
 * *out is non-NULL afterwards, (*out)->error says why; free it with
 * dump_close either way. */
enum dump_status dump_open(const char *path, struct dump **out);
void dump_close(struct dump *d);

/* Copy LEN bytes at ADDR.  DUMP_ENOTCAPTURED when any byte is missing. */
enum dump_status dump_read(struct dump *d, uint64_t addr, void *buf, size_t len);
/* Convenience readers for native-endian (x86_64: little) integers. */
enum dump_status dump_read_u64(struct dump *d, uint64_t addr, uint64_t *out);
enum dump_status dump_read_u32(struct dump *d, uint64_t addr, uint32_t *out);
/* Read a NUL-terminated string of at most MAX-1 bytes into BUF. */
enum dump_status dump_read_cstr(struct dump *d, uint64_t addr, char *buf, size_t max);

/* The first address at or after ADDR that the dump holds (captured, or
 * backed by a module's file), with *END the end of that run; 0 when there
 * is none.  Lets a scan skip what is missing instead of stepping through it. */
uint64_t dump_next_held(struct dump *d, uint64_t addr, uint64_t *end);

/* Search the memory the dump itself captured (not file pages) for NEEDLE,
 * in the segments for which KEEP(d, start, arg) is true (all when KEEP is
 * NULL), calling FOUND(d, address, arg) for each hit until it returns
 * non-zero.  Returns that address, or 0. */
uint64_t dump_search(struct dump *d, const void *needle, size_t len,
		     bool (*keep)(struct dump *d, uint64_t start, void *arg),
		     bool (*found)(struct dump *d, uint64_t addr, void *arg), void *arg);

/* The module whose mappings contain ADDR, or NULL. */
struct dump_module *dump_module_at(struct dump *d, uint64_t addr);

/* Map the module's file from disk, but only once its build-id matches the
 * one the dump recorded; the outcome is remembered (m->file_state) and a
 * refusal explained in m->file_error.  Returns 0 when m->file_data is usable. */
int dump_module_file(struct dump *d, struct dump_module *m);

/* A message to pass on in the report (the dump layer keeps a list). */
void dump_warn(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *dump_status_str(enum dump_status s);

/* Format the build-id as lowercase hex into BUF (at least 2*len+1 bytes). */
void dump_hex(const uint8_t *id, size_t len, char *buf);

#endif
