/* The memory-reader interface: one reader over every dump format, for the layers above.
 * Contract: a read of an address the dump lacks fails (PC_ENOTCAPTURED); the caller owns a dump until dump_close.
 *
 * A dump is a sorted set of non-overlapping segments of the dead process's
 * address space, its threads with their registers, the modules (mapped ELF
 * files) with their build-ids, and a few process facts.  Every read is
 * bounds-checked: an address no segment holds is a fault, never a guess.
 * Nothing here knows about Python.
 */
#ifndef PYCORE_DUMP_DUMP_H
#define PYCORE_DUMP_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "util/error.h"

struct dump_thread {
	int64_t tid;                 /* OS thread id (LWP) */
	int signal;                  /* pending/current signal (pr_cursig), 0 if none */
	struct platform_regs regs;   /* as the dump's platform parsed them */
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
	/* where this machine opens the file the process mapped, when that is
	 * not path (a live process: /proc/PID/root/PATH in a container or a
	 * chroot, /proc/PID/map_files/... for a deleted or replaced file);
	 * NULL: path */
	char *file;
	uint8_t build_id[64];        /* read from the process's own copy of the headers */
	size_t build_id_len;         /* 0: not known */
	bool build_id_prefix;        /* only the first build_id_len bytes are known */
	/* the extent is only what the dump's module list says (a minidump
	 * without a maps stream; lldb's covers the first segment only): the
	 * attached file's program headers replace it */
	bool extent_from_list;
	/* how base was found: "link_map" (the dynamic linker's list),
	 * "mappings" (the file's mapping at offset 0 in NT_FILE or
	 * /proc/PID/maps) or "module list" (a minidump's); NULL: no base */
	const char *base_from;
	bool base_verified;          /* the dump holds an ELF header at base */
};

/* One note a crash reporter put in the dump: Crashpad's process-wide
 * simple annotations (module NULL), a module's simple annotations, list
 * annotations (name NULL) and string annotation objects. */
struct dump_annotation {
	char *module;                /* the module's path, NULL: the process's */
	char *name;                  /* NULL for a list annotation */
	char *value;                 /* bytes as the producer stored them */
};

/* The signal that ended (or snapshotted) the process, as siginfo_t says.
 * A fault the kernel raised (si_code > 0, not SI_KERNEL) has an address;
 * a signal another process or the process itself sent (SI_USER, SI_TKILL,
 * SI_QUEUE) has its sender instead, in the same bytes of siginfo_t. */
struct dump_signal {
	int number;
	int code;                    /* si_code, when has_code */
	bool has_code;
	uint64_t address;            /* si_addr, for faults */
	bool has_address;
	bool has_sender;
	int64_t sender_pid;          /* si_pid, si_uid of the sender */
	int64_t sender_uid;
};

/* Fill S's address or sender from WORD, the 8 bytes at offset 16 of a
 * 64-bit Linux siginfo_t (si_addr; or si_pid at 16 and si_uid at 20),
 * given S's number and code (has_code set). */
void dump_signal_decode(struct dump_signal *s, uint64_t word);
/* Where a signal of siginfo's si_code CODE came from: "fault" (the
 * kernel's code for a fault, > 0), "kill" (SI_USER), "tkill", "sigqueue",
 * "timer", "kernel" (SI_KERNEL), "other". */
const char *dump_signal_origin(int code);

/* What systemd-coredump recorded about the crash in the extended
 * attributes of the file it stored (user.coredump.*).  Untrusted: strings
 * as stored (at most DUMP_XATTR_MAX bytes, never NUL inside), NULL when
 * absent; numbers -1 when absent or not a number. */
#define DUMP_XATTR_MAX 1024
struct dump_coredump {
	char *comm, *exe, *hostname;
	int64_t pid, uid, gid, signal;
	int64_t timestamp;            /* microseconds since the epoch */
	uint64_t rlimit;              /* RLIMIT_CORE's soft limit; UINT64_MAX when absent */
};

struct dump_priv;

/* What dump_open found.  Callers read these fields and never change them;
 * everything else is the readers' (dump_priv). */
struct dump {
	char *path;
	const char *format;          /* "elf-core", "minidump", "process" (a live
				      * process, dump_open_process) or "memory"
				      * (dump_open_runs) */
	/* the machine the process ran on (never the one pycore runs on):
	 * its registers, thread pointer, glibc and kernel layouts */
	const struct platform *platform;
	const char *compression;     /* NULL, "zstd", "gzip", "xz" or "lz4" */
	uint64_t file_size;

	/* process facts; pid, ppid, uid and gid < 0 when unknown */
	int64_t pid;
	int64_t ppid, uid, gid;      /* the real ids (PRPSINFO, or /proc/PID/status
				      * as Breakpad's minidumps copy it) */
	char *fname;                 /* short executable name (PRPSINFO) */
	char *psargs;                /* the kernel's truncated command line */
	char *executable;            /* path of the main program, NULL if unknown */
	char **argv;                 /* NULL-terminated, NULL if unknown */
	char state;                  /* the kernel's state letter ('R', 'S', 'D', ...); 0 unknown */
	/* a live process whose root is not pycore's (a container, a chroot):
	 * that root as this machine opens it, "/proc/PID/root"; else NULL */
	char *root;
	bool has_signal;
	struct dump_signal signal;
	int64_t crashed_tid;         /* -1 when no thread received a signal */
	uint64_t auxv_entry;         /* AT_ENTRY, 0 if unknown */
	uint64_t auxv_vdso;          /* AT_SYSINFO_EHDR: the vDSO's ELF header, 0 if unknown */
	/* for a dump that lacks the process's data memory: which setting of
	 * its producer would have captured it (one clause), or NULL */
	const char *capture_hint;
	/* systemd-coredump's extended attributes on the file; NULL when it
	 * has none */
	struct dump_coredump *coredump;

	struct dump_thread *threads;
	size_t nthreads;
	struct dump_module *modules;
	size_t nmodules;
	/* a crash reporter's key/value notes (Crashpad's annotations) */
	struct dump_annotation *annotations;
	size_t nannotations;

	struct dump_priv *p;          /* the readers' own state */
};

/* What opening one dump may cost: time, and the disk under $TMPDIR
 * (memory: the decoders' windows are held to DUMP_INFLATE_MEM_MAX).
 * The names are the settings' as the user knows them, for the messages. */
struct dump_budget {
	double timeout;              /* seconds for opening, spooling standard input and
				      * decompressing; 0: none */
	uint64_t max_spool;          /* bytes one dump may write under $TMPDIR (standard
				      * input spooled plus a stream decompressed; pages of
				      * zeros are holes and cost nothing); 0: no cap */
	const char *timeout_name;    /* "--timeout" (NULL), or the hook's key */
	const char *spool_name;      /* "--max-spool" (NULL), or the hook's key */
};
/* --max-spool's default: 16 GiB. */
#define DUMP_MAX_SPOOL_DEFAULT ((uint64_t)16 << 30)

/* Open PATH, whatever its format, within BUDGET (NULL: none).  PATH must
 * be a regular file: anything else (a FIFO, a device, a directory) is
 * refused before it is opened for reading.  "-" is standard input (a
 * regular file is mapped; anything else, a pipe, is first copied to an
 * unlinked temporary file under $TMPDIR, runs of zeros left as holes,
 * once its first bytes are a dump's or a compressed stream's).  A
 * compressed stream is dropped as soon as its first decompressed bytes
 * are not a dump's.  Returns NULL, or the error (code PC_EIO, PC_EFORMAT,
 * PC_ECORRUPT, PC_ENOMEM, PC_EUNSUPPORTED; PC_ETIMEOUT or PC_ELIMIT when
 * the budget ran out; its message in one line); free *out with
 * dump_close either way. */
struct pc_error *dump_open(const char *path, const struct dump_budget *budget, struct dump **out);
/* The same for the regular file open at FD (which stays the caller's),
 * named NAME in messages and reports: for a file opened with privileges
 * the reader no longer has. */
struct pc_error *dump_open_fd(int fd, const char *name, const struct dump_budget *budget, struct dump **out);
/* systemd-coredump's attributes of the file open at FD, or NULL when it
 * has none of them (or out of memory); free with dump_coredump_free. */
struct dump_coredump *dump_coredump_read(int fd);
void dump_coredump_free(struct dump_coredump *c);
/* The same for a dump already in memory (SIZE bytes at DATA, named NAME
 * in messages), which the caller keeps alive until dump_close: for the
 * fuzz targets, which open thousands of inputs a second. */
struct pc_error *dump_open_memory(const void *data, size_t size, const char *name, struct dump **out);
/* A dump of memory alone, laid out by the caller (unit tests, the fuzz
 * targets of the object readers): N runs of bytes, each SIZE bytes at
 * DATA (kept alive by the caller until dump_close) placed at START; no
 * threads, modules or process facts.  NULL, or the error (PC_ECORRUPT:
 * runs overlap; PC_ENOMEM); free *out with dump_close either way. */
struct dump_run {
	uint64_t start;
	const void *data;
	size_t size;
};
struct pc_error *dump_open_runs(const struct dump_run *runs, size_t n, const char *name, struct dump **out);
void dump_close(struct dump *d);

/* A live process (dump/live.c): the same reader over the memory of
 * process PID as it runs, read through process_vm_readv (else
 * /proc/PID/mem) a page at a time when a read asks, never copied whole;
 * its segments from /proc/PID/maps, modules (build-ids from their memory,
 * files opened as the process sees them: file above), facts from /proc.
 * The process is not stopped yet and d->threads is empty: that is
 * dump_process_stop's.  NULL, or the error: PC_EGONE (no such process),
 * PC_EDENIED (pycore may not read it: the message names what is missing,
 * another user, the capability, Yama's ptrace_scope), PC_EUNSUPPORTED,
 * PC_ENOMEM; free *out with dump_close either way (which lets the process
 * go if it is still stopped). */
struct pc_error *dump_open_process(int64_t pid, struct dump **out);
/* Its threads, from /proc/PID/task.  With STOP, every thread is stopped
 * (ptrace: seized, interrupted, its registers read) until
 * dump_process_resume, threads created meanwhile too; a thread that
 * exits meanwhile is left out with a note (dump_notes).  Without, the
 * threads run on and their registers are what /proc/PID/task/TID/syscall
 * says (the stack and program counters of a thread blocked in the
 * kernel; none of a running one).  The same errors as dump_open_process. */
struct pc_error *dump_process_stop(struct dump *d, bool stop);
/* Let every stopped thread go (detached, any signal it held passed on);
 * nothing when none is stopped.  How long the first was stopped before
 * the last went on, in milliseconds; -1 when none was stopped. */
double dump_process_resume(struct dump *d);
/* Forget what was read (a live process's page cache): the next reads see
 * its memory as it is then.  Nothing for a dump. */
void dump_process_forget(struct dump *d);
/* Whether the process was found gone while it was read (its memory no
 * longer readable). */
bool dump_process_gone(const struct dump *d);
/* The CPU time thread TID of process PID has used, in nanoseconds
 * (/proc's schedstat, else its stat's clock ticks); -1 unknown. */
int64_t dump_thread_cpu_ns(int64_t pid, int64_t tid);
/* Whether thread TID of a live process blocks a signal a fault raises
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP: /proc's SigBlk), as
 * the kernel makes it while a handler of it runs (one installed without
 * SA_NODEFER); true when that cannot be told, and for a dump. */
bool dump_thread_blocks_fault(struct dump *d, int64_t tid);
/* The ranges of a live process's memory that reads asked for, sorted and
 * merged (page-aligned); NULL and 0 for a dump.  Valid until the next
 * read. */
struct dump_range {
	uint64_t start, end;
};
const struct dump_range *dump_ranges_read(struct dump *d, size_t *n);

/* Notes the readers left that do not make a report incomplete (a live
 * thread that exited while the process was read). */
const char *const *dump_notes(const struct dump *d, size_t *n);

/* The compression whose magic starts the N bytes at P ("zstd", "gzip",
 * "xz", "lz4"), NULL if none: such a file is decompressed by dump_open. */
const char *dump_compression_of(const uint8_t *p, size_t n);

/* Copy LEN bytes at ADDR.  PC_ENOTCAPTURED when any byte is missing. */
enum pc_code dump_read(struct dump *d, uint64_t addr, void *buf, size_t len);
/* Start fetching the dump's byte at ADDR into the cache, for a read soon
 * after: a hint, for a byte in the segment the last read found (no search,
 * nothing changes). */
void dump_prefetch(const struct dump *d, uint64_t addr);
/* Convenience readers for the process's integers (little-endian: every
 * platform pycore reads is). */
enum pc_code dump_read_u64(struct dump *d, uint64_t addr, uint64_t *out);
enum pc_code dump_read_u32(struct dump *d, uint64_t addr, uint32_t *out);
/* Read a NUL-terminated string of at most MAX-1 bytes into BUF. */
enum pc_code dump_read_cstr(struct dump *d, uint64_t addr, char *buf, size_t max);

/* Write LEN bytes at ADDR over the memory the dump captured, the bytes
 * there before into OLD: PC_ENOTCAPTURED, and nothing written, unless one
 * captured run holds them all (never a module file's pages).  Only this
 * process's copy changes: a run is copied on its first patch.  For the
 * walks of patched memory (analysis_patch). */
enum pc_code dump_patch(struct dump *d, uint64_t addr, const void *bytes, size_t len, void *old);

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

/* One mapping of the process (a VMA), as the dump records it (dump/vmas.c):
 * an ELF core's program headers named by NT_FILE, a live process's or a
 * minidump's maps lines. */
struct dump_vma {
	uint64_t start, end;         /* [start, end) */
	bool readable, writable, executable;
	const char *file;            /* the file mapped there ("[vdso]": the kernel's image);
					NULL: anonymous, or the dump names none */
	uint64_t file_offset;        /* of start in file */
};
/* The process's mappings, sorted by address and not overlapping; NULL
 * with *N 0 when the dump records none (then nothing is known of what
 * was mapped where).  Valid until dump_close. */
const struct dump_vma *dump_vmas(struct dump *d, size_t *n);
/* What the dump records of the mappings, as it records them, each sorted:
 * the memory ranges (an ELF core's PT_LOADs, dumped or not; maps lines)
 * and the file-backed ranges (NT_FILE; maps lines), whether or not they
 * agree as dump_vmas needs: gdb's gcore leaves the read-only file
 * mappings out of its PT_LOADs, so that the two together are what was
 * mapped.  Valid until dump_close. */
void dump_vmas_recorded(struct dump *d, const struct dump_vma **loads, size_t *nloads,
			const struct dump_vma **files, size_t *nfiles);
/* The mapping holding ADDR, or NULL; *BELOW and *ABOVE (either may be
 * NULL) the nearest mappings wholly below and above ADDR, or NULL. */
const struct dump_vma *dump_vma_near(struct dump *d, uint64_t addr, const struct dump_vma **below,
				     const struct dump_vma **above);

/* The module whose mappings contain ADDR, or NULL. */
struct dump_module *dump_module_at(struct dump *d, uint64_t addr);

/* Attach the bytes of M's file (a mapping, its build-id already checked),
 * which D owns from then on (dump_close unmaps it; so does this call when
 * out of memory): the read-only pages the dump left out of M's mappings
 * are read from it. */
void dump_attach_file(struct dump *d, struct dump_module *m, const uint8_t *data, size_t size);
/* Unmap a module's file: DATA need not be on a page (a file inside an
 * image's tar starts on a 512-byte block), the mapping starts on the page
 * that holds it. */
void dump_unmap(const void *data, size_t size);
/* Call once every file is attached: extents learned from the files'
 * program headers (extent_from_list) take effect, and a warning names
 * what stays unknown. */
void dump_files_attached(struct dump *d);
/* Whether a read was served from M's attached file. */
bool dump_file_used(const struct dump *d, const struct dump_module *m);

/* Compact dumps (dump/record.c, dump/save.c).  From dump_record_start
 * on, the bytes every read is served from out of the dump's own are
 * recorded, rounded to blocks of 256 bytes (whole pages made an asyncio
 * core's compact dump 1.9 % of it, these 0.4 %; bytes of module files are
 * not recorded: the compact dump needs those files as the original did).  dump_save then writes
 * to PATH an ELF core (one zstd frame when PATH ends in ".zst"; written
 * beside PATH and renamed over it once whole) of those pages, plus each
 * thread's stack from 256 bytes below its stack pointer to 64 KiB above
 * it and its struct pthread, the initial stack, each module's ELF
 * header, program headers, notes (the build-id) and dynamic section, and
 * the dynamic linker's list of libraries (what gdb reads of a core); and
 * the dump's notes: an ELF core's own, copied, else (a minidump, a live
 * process: its memory as dump_record_snapshot copied it) NT_PRSTATUS per
 * thread, NT_PRPSINFO, NT_SIGINFO, NT_AUXV (AT_ENTRY) and NT_FILE written
 * from what the dump says.  Memory held while recording grows with the
 * pages read, never with the dump.  dump_save returns NULL and fills
 * *SAVED (may be NULL), or the error (PC_EIO, PC_ENOMEM, PC_EUNSUPPORTED). */
enum pc_code dump_record_start(struct dump *d);
/* A live process's memory is gone once it runs on: while it is still
 * stopped, read what dump_save needs beside the analysis's reads and copy
 * every recorded block, so that the compact dump is of that moment (its
 * size grows with what was read, never with the process).  Nothing for a
 * dump, or without dump_record_start; again: nothing.  PC_ENOMEM. */
enum pc_code dump_record_snapshot(struct dump *d);
struct dump_saved {
	uint64_t core_size;          /* bytes of the core (before compression) */
	uint64_t memory;             /* bytes of memory it holds */
	size_t nloads;               /* in that many PT_LOAD segments */
};
struct pc_error *dump_save(struct dump *d, const char *path, struct dump_saved *saved);
/* The same into the file open at FD (the caller's: not closed), NAME in
 * messages, compressed when ZSTD: for a file opened with privileges the
 * writer no longer has (pycore coredump). */
struct pc_error *dump_save_fd(struct dump *d, int fd, const char *name, bool zstd, struct dump_saved *saved);

/* The OS threads of the dump (dump/thread.c), as the dump's platform
 * locates them. */

/* The OS thread whose glibc pthread_t (pthread_self(), and so CPython's
 * thread ident) is PTHREAD: the thread whose thread pointer gives it, -1
 * if none.  When the dump keeps no thread pointers: the thread whose tid
 * glibc's struct pthread at PTHREAD holds, if the dump captured it. */
int64_t dump_tid_of_pthread(struct dump *d, uint64_t pthread);

/* The C library the process ran on: the one whose dynamic linker (or
 * libc) is among the dump's modules (libc_by_module), else the one
 * dump_set_libc gave, else glibc.  Chosen at the first call. */
const struct libc *dump_libc(struct dump *d);
/* L, proved by other means (a static executable's bytes: libc_by_bytes),
 * for a dump whose modules name no C library; false (nothing changed)
 * when they do. */
bool dump_set_libc(struct dump *d, const struct libc *l);
/* Whether the C library is linked into the main executable (dump_set_libc
 * gave it: no module of the dump is a C library). */
bool dump_libc_linked_in(const struct dump *d);
/* Whether NAME is a signal return trampoline of the dump's kernel
 * (platform_is_sigreturn) or C library (libc_is_sigreturn). */
bool dump_is_sigreturn(struct dump *d, const char *name);

/* What the dump's glibc says of its struct pthread (the libthread_db
 * descriptors in libc.so.6: _thread_db_sizeof_pthread, the field
 * _thread_db_pthread_tid): its SIZE and the offset of its tid, over the
 * platform's defaults.  false (nothing changed) when they make no sense. */
bool dump_set_pthread_layout(struct dump *d, uint64_t size, uint64_t tid);
/* The struct pthread (pthread_self()) of the thread whose thread pointer
 * is TP, through the dump's libc (dump_libc); false when TP is 0 or the
 * libc's layout on the dump's architecture is not known. */
bool dump_pthread_of_tp(struct dump *d, uint64_t tp, uint64_t *pthread);
/* Where the dump's libc's struct pthread keeps the thread's tid (an
 * int); false when not known. */
bool dump_pthread_tid_offset(struct dump *d, uint64_t *tid);

/* The OS thread whose stack holds ADDR: the thread whose stack pointer is
 * at or below ADDR in the same run of captured memory (thread stacks are
 * mappings of their own, between unmapped guard pages), -1 if none. */
int64_t dump_tid_of_stack_address(struct dump *d, uint64_t addr);

/* The same, or else the thread whose stack pointer is above ADDR in one
 * run of captured memory from ADDR through it: ADDR in the part of that
 * thread's stack mapping below its live frames, where a call that has
 * returned ran (a greenlet's stack region, saved when it switched away
 * from a deeper call than its thread is in now).  -1 if none. */
int64_t dump_tid_of_stack_region(struct dump *d, uint64_t addr);

/* The kernel's signal frame of a handler that returned into the signal
 * trampoline (platform_is_sigreturn) whose frame has stack pointer SP:
 * the signal as its siginfo says (number, code, and address or sender,
 * decoded as dump_signal_decode does) and the registers at the signal.
 * PC_ENOTCAPTURED when the dump does not hold the frame. */
enum pc_code dump_signal_frame(struct dump *d, uint64_t sp, struct dump_signal *sig,
			       struct platform_regs *regs);

/* The warnings the readers collected (a truncated file, ...), and whether
 * the file ends before the data it declares. */
const char *const *dump_warnings(const struct dump *d, size_t *n);
bool dump_truncated(const struct dump *d);

/* The build-id note of the ELF image whose header is at BASE in the
 * process.  Returns 0 and fills ID (64 bytes) and *LEN, or -1. */
int dump_read_build_id(struct dump *d, uint64_t base, uint8_t *id, size_t *len);

/* The build-id note of an ELF file held in memory (a mapped file).
 * Returns 0 and fills ID (64 bytes) and *LEN, or -1. */
int elf_file_build_id(const uint8_t *data, size_t size, uint8_t *id, size_t *len);

/* Format the build-id as lowercase hex into BUF (at least 2*len+1 bytes). */
void dump_hex(const uint8_t *id, size_t len, char *buf);

#endif
