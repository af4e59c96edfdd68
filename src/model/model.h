/* The report's model: plain C structs, no I/O, no elfutils types.
 * Everything hangs off one arena and is freed with it. */
#ifndef PYCORE_MODEL_MODEL_H
#define PYCORE_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct arena;
struct model_fingerprint;

struct arena *arena_new(void);
void arena_free(struct arena *a);
void *arena_alloc(struct arena *a, size_t n);       /* zeroed; NULL when out of memory */
char *arena_strdup(struct arena *a, const char *s); /* NULL stays NULL */
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable array of pointers kept in the arena. */
struct ptrvec {
	void **items;
	size_t n, cap;
};
int ptrvec_push(struct arena *a, struct ptrvec *v, void *item);

/* A node's error as a value, beside its message (the node's `error`,
 * text as before): the kind of failure (error.h; the JSON's error_code)
 * and the address it concerns, when known (error_address).  Code PC_OK
 * with the message NULL: nothing failed. */
struct model_error_info {
	enum pc_code code;
	bool has_address;
	uint64_t address;
};

static inline struct model_error_info model_err(enum pc_code code)
{
	return (struct model_error_info){ code, false, 0 };
}

static inline struct model_error_info model_err_at(enum pc_code code, uint64_t address)
{
	return (struct model_error_info){ code, true, address };
}

enum frame_kind { FRAME_PYTHON, FRAME_NATIVE, FRAME_GC };

struct model_local {
	const char *name;
	const char *kind;            /* "argument", "local", "cell", "free" */
	const char *type;
	uint64_t address;
	const char *repr;            /* NULL when it could not be formed */
	const char *error;
	struct model_error_info error_info;
	int64_t length;              /* len() when a limit cut repr (str, bytes, containers) */
	bool has_length;
	bool has_attributes;         /* --locals=deep, for instances */
	bool attributes_elsewhere;   /* --locals=deep: the same object's attributes are
					listed at an earlier variable, in this thread's
					frame (by index) below */
	int64_t attributes_thread;   /* tid */
	size_t attributes_frame;
	const struct model_frame *attributes_at;
	bool redacted;               /* repr is redact.c's placeholder */
	struct ptrvec attributes;    /* of struct model_local (kind "attribute") */
};

struct model_frame {
	enum frame_kind kind;
	const char *function;
	const char *qualname;        /* NULL when unknown */
	const char *file;
	int line;                    /* <= 0: unknown */
	/* python frames, 3.11+: the rest of the instruction's position
	 * (co_positions(); columns are 0-based UTF-8 byte offsets), with
	 * has_position; each -1 when the table does not say */
	bool has_position;
	int end_line, column, end_column;
	/* python frames: the instruction as read (f_lasti, or the instruction
	 * pointer's offset in its code), a key that moves as the frame runs
	 * even on one line (analysis/samples.c); -1 unknown; not reported */
	int64_t instruction;
	uint64_t address;            /* native frames: pc; 0 otherwise */
	const char *source_file;     /* native frames: source file from debug info */
	bool inlined;                /* native frames: a call inlined into the next frame */
	bool tail_call;              /* native frames: a function that tail-called the frame
					below, inferred (native_frame.tail_call) */
	bool interpreter;            /* native frames: in the interpreter's own module (libpython,
					or the executable it is linked into) */
	bool sigreturn;              /* native frames: a signal trampoline no symbol names,
					known by its code (native_frame.sigreturn) */
	/* native frames: how the unwinder found it past a frame whose code has
	 * no call frame information: "frame pointer" or "scan" (a return
	 * address validated on the stack, symbols/nocfi.c); NULL by CFI */
	const char *found_by;
	uint64_t greenlet;           /* native frames: the suspended greenlet whose stack slice
					holds it (its stack pointer), not the thread's running
					one; 0 none */
	bool recovered;              /* python frames: found on the data stack, not by the chain */
	bool eval_entry;             /* python frames: the outermost run by its eval loop call */
	uint64_t entry_frame;        /* with eval_entry, 3.12+: the shim frame that call began
					with (it lives on the C stack); 0 unknown */
	bool has_locals;
	struct ptrvec locals;        /* of struct model_local */
	uint64_t frame_address;      /* python frames: the frame read (PyFrameObject or
					_PyInterpreterFrame); not reported */
	/* native frames: the function's arguments at this frame, with
	 * has_args when its DWARF describes them (python/walk/native_args.c) */
	bool has_args;
	struct ptrvec args;          /* of struct model_arg */
};

/* One argument of a native frame's function, as gdb's `bt` shows it. */
struct model_arg {
	const char *name;            /* NULL: unnamed */
	const char *type;            /* the C type as gdb names it ("PyObject *"); NULL unknown */
	const char *value;           /* as gdb prints it: "-1", "0x10", "true"; a char pointer's
					without its string; NULL when not known */
	bool optimized_out;          /* no value at this pc (gdb's <optimized out>) */
	const char *unavailable;     /* not optimized out, yet no value: why */
	/* a char pointer's string, read from the dump (at most
	 * MODEL_ARG_STRING_MAX bytes, string_truncated when it goes on), NULL
	 * when not read */
	const char *string;
	bool string_truncated;
	const char *repr;            /* a PyObject pointer: pycore's repr of it, NULL when not formed */
};

#define MODEL_ARG_STRING_MAX 200

/* The exception a thread was handling (inside an except block). */
struct model_exception {
	const char *type;            /* "ValueError", "mymod.MyError" */
	const char *message;         /* str(exception), NULL when unreadable */
	const char *error;           /* why something is missing */
	struct model_error_info error_info;
	struct ptrvec traceback;     /* of struct model_frame, innermost first */
	const char *repr;            /* repr(exception), NULL when it cannot be formed */
	const char *relation;        /* in chain: "cause" (raise ... from) or "context" */
	struct ptrvec chain;         /* of struct model_exception: the handled one's
					__cause__ (or unsuppressed __context__), then
					that one's, ... nearest first */
};

/* The object a blocked thread waits on (python/walk/waits.c). */
struct model_wait {
	const char *type;            /* "_thread.RLock", "queue.Queue" */
	uint64_t address;
	const char *repr;            /* Python's repr of it, NULL when pycore cannot form it */
	int64_t owner;               /* the OS thread holding it (an RLock's owner, a
					Thread being joined); -1 none or unknown */
	const char *owner_name;      /* that thread's name, NULL unknown */
	int64_t count;               /* an RLock's recursion level; -1 not one */
	bool joins;                  /* it is a threading.Thread: owner is the thread joined */
	/* the owner's thread ident as the object holds it, when it holds one
	 * (owner_ident_known); with owner -1, owner_elsewhere when no thread of
	 * this process has it (a lock held across fork() by a parent's thread) */
	bool owner_ident_known;
	uint64_t owner_ident;
	bool owner_elsewhere;
};

/* One greenlet (python/walk/greenlet.c): a stack of Python frames that
 * the greenlet module switches in and out of its OS thread. */
struct model_greenlet {
	uint64_t address;            /* the greenlet object */
	const char *type;            /* its class: "greenlet.greenlet", "gevent.hub.Hub" */
	const char *state;           /* "running" (its thread's frames are its), "suspended",
					"not started", "dead" */
	bool main;                   /* its thread's main greenlet */
	bool hub;                    /* gevent's hub (gevent.hub.Hub or a subclass) */
	const char *run;             /* what it runs: its run callable, its class's run, or
					the function its outermost frame runs; NULL unknown */
	uint64_t parent;             /* the greenlet it returns to; 0 none or unknown */
	/* the C stack it runs on: from stack_start (its stack pointer when
	 * switched out) up to stack_stop (UINT64_MAX: a main greenlet's, the
	 * whole stack); 0 unknown; not reported */
	uint64_t stack_start, stack_stop;
	/* the part of it another greenlet needed, copied to the heap:
	 * stack_saved bytes from stack_start, kept at stack_copy */
	uint64_t stack_copy, stack_saved;
	struct ptrvec stack;         /* suspended: its frames, innermost first */
	const char *error;           /* why its stack is incomplete */
	struct model_error_info error_info;
};

struct model_thread {
	int64_t tid;                 /* -1: unknown */
	uint64_t ident;
	const char *name;
	bool holds_gil;
	/* inside a system call when it was read (the registers the kernel kept:
	 * x86-64's orig_rax, aarch64's NT_ARM_SYSTEM_CALL, a live thread's
	 * /proc syscall), with in_syscall_known; not reported */
	bool in_syscall, in_syscall_known;
	bool crashed;
	const char *error;
	struct model_error_info error_info;
	struct ptrvec frames;        /* of struct model_frame, innermost first */
	struct model_exception *exception;   /* NULL: none being handled */
	struct model_wait *waiting_on; /* NULL: not known to wait on anything */
	size_t gc_native;            /* 1 + the index in frames where its native stack runs the
					garbage collector; 0: it does not (or not known) */
	size_t fault_frame;          /* 1 + the index in frames of the first frame at the fault
					(below the kernel's signal frame: the stack a handler
					interrupted, the report's crash site); 0: none */
	bool walk_incomplete;        /* reading it left the report incomplete (walk's own) */
	int64_t recorded_tid;        /* the tid the thread state recorded (3.8+); -1 unknown */
	bool stale;                  /* a thread state no OS thread of the dump has (left by
					fork(): the parent's threads); tid is the one it
					recorded, frames are what it holds */
	struct ptrvec greenlets;     /* of struct model_greenlet: the greenlets of this thread,
					its main greenlet first */
};

/* One asyncio task (or a future of asyncio's, where one is awaited). */
struct model_task {
	const char *name;            /* get_name(); NULL when unreadable */
	uint64_t address;
	const char *state;           /* "pending", "cancelling", "done", "cancelled" */
	bool running;                /* its loop's thread runs its coroutine now */
	const char *coroutine;       /* the coroutine's __qualname__, NULL unknown */
	struct ptrvec stack;         /* of struct model_frame, innermost first */
	struct ptrvec awaiting;      /* of struct model_task: the tasks it waits for */
	struct ptrvec awaited_by;    /* of struct model_task */
	const char *waiter_type;     /* the future it waits on (_fut_waiter), NULL: none */
	uint64_t waiter;
	const char *result;          /* done: repr of its result, NULL otherwise */
	const char *exception_type;  /* done with an exception: its type, and str() */
	const char *exception_message;
	const char *error;           /* why something of it could not be read */
	struct model_error_info error_info;
};

/* An event loop and the tasks that belong to it. */
struct model_loop {
	uint64_t address;
	const char *type;            /* its class ("uvloop.Loop", "asyncio.unix_events._UnixSelectorEventLoop"); NULL unknown */
	int running;                 /* 1 running, 0 not, -1 cannot tell */
	int64_t thread;              /* OS thread running it; -1 none or unknown */
	const char *thread_name;
	struct ptrvec tasks;         /* of struct model_task */
};

struct model_interp {
	int64_t id;
	int gc_collecting;           /* 1 yes, 0 no, -1 unknown */
	int gil_enabled;             /* 1 yes, 0 disabled (free-threaded), -1 unknown */
	struct ptrvec threads;
	struct ptrvec stale_threads; /* of struct model_thread: stale ones, kept apart */
	bool asyncio_read;           /* the asyncio registries were read (loops may be none) */
	struct ptrvec loops;         /* of struct model_loop */
	const char *greenlet_version; /* the greenlet module's __version__ when its greenlets
					 were read; NULL: not imported, or not read */
	struct ptrvec greenlets;     /* of struct model_greenlet: those of no thread the
					dump proves (their thread ended, or no stack
					address of theirs names one) */
};

/* A mapped ELF image of the process. */
struct model_module {
	const char *path;            /* as the dump names it */
	uint64_t start, end;
	const char *build_id;        /* hex, NULL if the dump does not say */
	const char *file;            /* the file pycore read for it, NULL if none */
	const char *found_by;        /* how that file was found (locate.h's
					locate_how_str: "recorded", "sysroot",
					"build-id-tree", ...); NULL with file */
	uint64_t base;               /* its ELF header's address */
	const char *base_from;       /* how base was found: "link_map", "mappings",
					"module list" (dump.h's base_from); NULL unknown */
	bool base_verified;          /* the dump holds an ELF header at base */
	const char *verified_by;     /* how file was verified (locate.h's
					locate_verified_str: "build-id", "bytes"); NULL:
					not (--allow-mismatch), or no file */
	uint64_t verified_bytes;     /* "bytes": how many were compared */
	const char *refused;         /* why no file was used though one was found, or NULL */
};

/* What systemd-coredump recorded about the crash (dump.h's
 * dump_coredump): strings NULL, numbers -1 when absent. */
struct model_coredump {
	const char *comm, *exe, *hostname;
	int64_t uid, gid, signal;
	int64_t timestamp;           /* microseconds since the epoch */
};

/* A crash reporter's note (Crashpad's annotations), as the dump holds it. */
struct model_annotation {
	const char *module;          /* NULL: the process's own */
	const char *name;            /* NULL: a list annotation */
	const char *value;           /* NULL: not text */
};

/* A signal as siginfo_t says (dump.h's struct dump_signal, in the model). */
struct model_signal {
	int number;
	bool has_code;
	int code;
	bool has_address;            /* a fault address the kernel gave */
	uint64_t address;
	bool has_sender;             /* sent with kill, tkill or sigqueue */
	int64_t sender_pid, sender_uid;
};

/* The signal behind a re-raised one: a handler (faulthandler's,
 * Apache's, uWSGI's, gdb's, a program's own) caught it, then sent the
 * process a signal again (mostly the same one), which the core records
 * instead; the kernel's signal frame on the stack of the thread that ran
 * the handler keeps the registers it interrupted and, for a handler
 * given siginfo (SA_SIGINFO), the original siginfo: a fault, or a signal
 * sent from outside (kill, sigqueue, a timer). */
struct model_fault {
	struct model_signal signal;  /* the original's */
	/* where it came from: "fault" (the kernel raised it for a fault of
	 * the thread: siginfo's code, or the saved state's trap), "kill",
	 * "tkill", "sigqueue" (sent: signal.sender_pid), "timer" (a POSIX
	 * timer), "kernel" (SI_KERNEL: alarm(), a pipe, ...), "other" (another
	 * code), "unrecorded" (the handler took no siginfo and the saved
	 * state names no fault) */
	const char *origin;
	bool siginfo;                /* the frame held the handler's siginfo */
	bool number_assumed;         /* nothing records its number: the re-raised one's */
	const char *name;            /* its name ("SIGSEGV"), NULL when it has none */
	int64_t tid;                 /* the thread that faulted (and ran the handler) */
	uint64_t pc, sp;             /* its registers at the fault */
	uint64_t sp_frame;           /* the signal frame's (the trampoline frame's sp) */
	const char *handler;         /* "faulthandler", "Apache", "uWSGI"; NULL: not proven */
	/* what proved handler: "frame" (a frame of the handler's own function),
	 * "module" (a frame in the program's file), "program" (the process is
	 * that program), "faulthandler-table-symbol" or "-scan" (faulthandler's
	 * table, found by its symbol or by its contents); NULL: not proven */
	const char *handler_proof;
	const char *handler_function;/* the handler's frame, as its symbol names it; NULL */
	const char *handler_module;  /* that frame's file; NULL */
	int64_t received_tid;        /* the thread the core's (re-raised) signal went to; -1 */
	bool handler_returned;       /* the handler had returned (its frame, below the stack
					pointer, holds the thread's registers exactly);
					handler is then the program's (Apache, uWSGI) */
	bool handling;               /* a running process: the handler runs now, nothing
					re-raised yet (received_tid -1) */
};

/* The abort's own words (python/walk/abort.c, abort_cxx.c): what the C
 * library or the C++ runtime kept of why the process aborted. */
struct model_abort {
	const char *message;         /* as the process kept it, its final newline left out;
					NULL: an exception whose what() is not proven */
	bool truncated;              /* message cut at 4096 bytes */
	const char *source;          /* "glibc" (its __abort_msg), "c++" (an uncaught exception) */
	const char *exception_type;  /* c++: the exception's type, demangled; NULL otherwise */
};

/* The fault named (analysis/fault_kind.c): the kind of failure the dump
 * proves, with its evidence.  kind: "null-dereference", "stack-overflow",
 * "unmapped-near", "write-to-readonly", "sigbus-past-eof" (a SIGBUS in a
 * file's mapping: past its end where the file could be measured),
 * "divide-by-zero", "illegal-instruction-anonymous", "abort",
 * "signal-sent", "unrecorded".  Numbers -1, strings NULL when not said. */
struct model_fault_kind {
	const char *kind;
	const char *text;            /* the one line: "NULL pointer + 0x10 (SEGV_MAPERR)" */
	/* what proves it: "siginfo" (the kernel's siginfo: code, address,
	 * sender), "saved-state" (the registers and trap a handler's signal
	 * frame saved), "stack" (abort() on the thread's stack), "none" */
	const char *evidence;
	int64_t thread;              /* the thread that faulted (stack-overflow: whose stack) */
	bool has_address;
	uint64_t address;            /* the fault address (SIGILL: the instruction's) */
	bool has_offset;
	/* null-dereference: the address itself; unmapped-near: how far from
	 * the mapping; sigbus-past-eof: the offset in the file */
	uint64_t offset;
	bool has_mapping;            /* the mapping it hit or is next to */
	uint64_t mapping_start, mapping_end;
	const char *mapping_permissions;  /* "r-x", "---" */
	const char *mapping_file;    /* NULL: anonymous */
	/* where the address lies: "in" the mapping, "below" or "above" it
	 * (unmapped-near); stack-overflow: "guard-page" (a PROT_NONE mapping
	 * under the stack: glibc's threads) or "guard-gap" (the unmapped gap
	 * the kernel keeps under a stack that grows) */
	const char *where;
	/* stack-overflow: the frames that repeat on that thread's stack */
	const char *recursion_kind;  /* "python", "native"; NULL: none found */
	const char *recursion_function, *recursion_file;
	int64_t recursion_count;
	bool recursion_at_least;     /* the thread's stack was not read whole: a lower bound */
	int64_t sender_pid;          /* signal-sent */
	const char *sender_name;     /* from the dump's process list (ELF cores have none) */
	int64_t file_size;           /* sigbus-past-eof: the file's size on this machine */
	const char *message;         /* abort: its words, where another part finds them */
};

struct model_report {
	struct arena *arena;
	/* input */
	const char *input_path;
	const char *input_format;
	const char *input_compression;
	const char *input_architecture;  /* the dump's platform's name ("x86_64") */
	uint64_t input_size;
	const char *input_kind;      /* "dump", or "process": a live process (analyze --pid) */
	/* a live process: how long its threads were stopped for the read, in
	 * milliseconds; < 0: not stopped (--no-stop) or a dump */
	double stopped_ms;
	bool live_running;           /* a live process read running (--no-stop) */
	struct model_annotation *annotations;
	size_t nannotations;
	/* process */
	int64_t pid;                 /* -1: unknown */
	int64_t ppid, uid, gid;      /* -1: unknown */
	const char *executable;
	const char **argv;           /* NULL-terminated or NULL */
	char state;                  /* the kernel's state letter; 0 unknown */
	bool has_signal;
	int signal_number, signal_code;
	bool signal_has_code;        /* si_code is known */
	const char *signal_name;
	bool signal_has_address;     /* a fault address the kernel gave */
	uint64_t signal_address;
	bool signal_has_sender;      /* sent with kill, tkill or sigqueue */
	int64_t sender_pid, sender_uid;
	int64_t crashed_tid;         /* -1: none (the core's: the thread that received it) */
	struct model_fault *fault;   /* NULL: no re-raise found (the signal is the crash) */
	struct model_abort *abort;   /* NULL: no abort's message found */
	struct model_fault_kind *fault_kind;   /* NULL: no kind of fault proven */
	const struct model_coredump *coredump;   /* NULL: not a systemd-coredump file */
	struct ptrvec modules;       /* of struct model_module */
	int64_t *tids;               /* every OS thread the dump holds */
	size_t ntids;
	/* python */
	bool has_python;
	const char *version;
	uint64_t hexversion;         /* 0: unknown */
	bool free_threaded;
	const char *binary_path;
	const char *binary_found_by; /* how binary_path was found (as a module's
					found_by); NULL: no file was read */
	const char *binary_build_id;
	uint64_t runtime_address;
	const char *located_by;
	struct ptrvec interps;       /* of struct model_interp */
	bool has_native_threads;     /* native stacks were asked for */
	struct ptrvec native_threads; /* of struct model_thread: OS threads without a
					 Python thread state */
	struct ptrvec warnings;      /* of char * */
	bool incomplete;             /* something could not be read */
	bool state_missing;          /* the dump holds no interpreter state (its
				      * threads' Python state is unknown) */
	struct model_fingerprint *fingerprint;   /* fingerprint.h; NULL: none */
	bool redact;                 /* redact.c's pass ran */
	struct ptrvec redactions;    /* of struct model_redaction (redact.h) */
	struct model_samples *samples;  /* analyze --samples: the last sample's report
					   carries them all (analysis/samples.h); NULL */
	struct model_heap *heap;     /* pycore heap: the census (python/heap/); NULL */
};

/* The objects of one type in a heap census. */
struct model_heap_type {
	const char *module, *qualname;   /* as object.__repr__ names the type; NULL unread */
	uint64_t address;                /* the type object */
	uint64_t count, bytes;           /* bytes: sys.getsizeof's sum */
	uint64_t permanent, permanent_bytes;  /* of count and bytes, in the permanent
						 generation (gc.get_objects() leaves it out) */
	/* the bytes are sys.getsizeof's exactly; false: the type's __sizeof__
	 * (owner names its class) is one pycore does not know, and bytes are
	 * the type's basic size and GC header only */
	bool exact;
	const char *sizeof_owner;
};

/* One object of a heap census: among the largest, or one that grew. */
struct model_heap_object {
	uint64_t address;
	const char *module, *qualname;   /* its type's; NULL unread */
	uint64_t bytes;                  /* sys.getsizeof's (the type's basic size when inexact) */
	uint64_t bytes_old;              /* heap --diff's grown: its size in the old dump */
};

/* One type's change between two censuses (heap --diff). */
struct model_heap_delta {
	const char *module, *qualname;
	uint64_t count_old, count_new, bytes_old, bytes_new;
};

/* heap --diff OLD NEW: what changed from the census of OLD to NEW's. */
struct model_heap_diff {
	const char *old_input;           /* the old dump's path */
	uint64_t objects_old, bytes_old;
	struct ptrvec types;             /* of struct model_heap_delta: those that changed, most
					    bytes added first */
	struct ptrvec grown;             /* of struct model_heap_object: of NEW's largest,
					    those OLD holds at one address, of one type,
					    smaller; most growth first */
	struct ptrvec roots;             /* of struct model_heap_root_delta: NEW's largest
					    retainers whose retained size changed, by path;
					    most bytes added first */
	bool roots_known;                /* both dumps' retained sizes were computed */
};

/* A retainer's path in both dumps: what it retained in each (0 and NULL
 * module in OLD: OLD has no object there, or none it reached). */
struct model_heap_root_delta {
	const char *path;
	const char *module, *qualname;   /* NEW's object's type */
	uint64_t retained_old, retained_new, objects_old, objects_new;
};

/* An object that retains much: what would be freed with it. */
struct model_heap_retainer {
	uint64_t address;
	const char *module, *qualname;   /* its type's; NULL unread */
	uint64_t bytes;                  /* its own size (sys.getsizeof's) */
	uint64_t retained;               /* its own and every object's it dominates */
	uint64_t objects;                /* how many objects that is, itself included */
	const char *path;                /* the shortest path to it from a root, in Python's
					    words ("sys.modules['app'].CACHE[12]") */
};

/* A node of the dominator tree: an object and what it alone holds. */
struct model_heap_node {
	int64_t parent;                  /* its immediate dominator's index in the tree; -1:
					    the roots together (no one object dominates it) */
	uint64_t address;
	const char *module, *qualname;   /* its type's; NULL unread */
	const char *name;                /* a root's name ("sys.modules"), a module's
					    __name__, a class's qualified name; NULL for
					    any other object */
	uint64_t bytes, retained, objects;   /* as a retainer's */
};
#define MODEL_HEAP_TREE 1000

/* Who holds the memory (python/heap/retain.c): the graph of the objects
 * counted and the references the census follows, from the roots. */
struct model_heap_retained {
	struct ptrvec roots;             /* of const char *: what the roots are, one line each */
	uint64_t reached_objects, reached_bytes;   /* from the roots */
	uint64_t edges;                  /* references between objects counted */
	/* garbage: the objects on the GC's lists that only references from
	 * each other hold (the GC's own test: ob_refcnt less the references
	 * from tracked objects the census reads, then what the others reach),
	 * which a collection would free; and the untracked objects they alone
	 * hold */
	uint64_t garbage_objects, garbage_bytes, garbage_untracked, garbage_untracked_bytes;
	struct ptrvec garbage_types;     /* of struct model_heap_type (count, bytes; the
					    tracked garbage), most bytes first */
	struct ptrvec retainers;         /* of struct model_heap_retainer: most retained
					    first (MODEL_HEAP_LARGEST) */
	struct ptrvec watched;           /* of struct model_heap_retainer: those of
					    py_options.heap_watch reached (heap --diff's) */
	struct ptrvec tree;              /* of struct model_heap_node: the top of the
					    dominator tree (MODEL_HEAP_TREE nodes of most
					    retained), most retained first: a node's parent
					    before it */
	double ms;                       /* how long the graph and its dominators took */
};

/* Where a process's memory is, from the mappings the dump records. */
struct model_heap_memory {
	bool known;                      /* the dump records its mappings */
	uint64_t mapped;                 /* every mapping's size */
	uint64_t files;                  /* mapped from files (code, data, mapped files),
					    and the kernel's [vdso], [vvar], [vsyscall] */
	uint64_t stacks;                 /* the mappings holding a thread's stack pointer */
	uint64_t reserved;               /* no access at all: guard pages, malloc's arenas'
					    reserved tails (no memory behind them) */
	uint64_t anonymous;              /* the rest: the C heap, malloc's and pymalloc's
					    arenas, mmapped blocks */
	uint64_t python;                 /* of anonymous: the objects counted (tracked and
					    untracked) that lie there */
	uint64_t buffers;                /* of python: what bytearray, array.array and numpy
					    arrays among them hold outside themselves (their
					    items, their data and dimensions), as their
					    __sizeof__ counts it */
	uint64_t modules_bss;            /* of anonymous: the modules' zero-initialised data */
	struct model_heap_malloc *malloc; /* the C library's heap; NULL: not read */
	const char *malloc_unread;       /* why it was not read (or read in part); NULL */
	struct model_heap_pymalloc *pymalloc; /* pymalloc's arenas; NULL: not read */
	const char *pymalloc_unread;     /* why not (or read in part); NULL */
	struct model_heap_mimalloc *mimalloc; /* a free-threaded build's mimalloc; NULL: not read */
	const char *mimalloc_unread;     /* why not (or read in part); NULL */
};

/* pymalloc's arenas (python/heap/pymalloc.c), as sys._debugmallocstats()
 * counts them. */
struct model_heap_pymalloc {
	uint64_t arenas, arena_size, pool_size;
	uint64_t arena_bytes;            /* arenas * arena_size */
	uint64_t allocated, blocks;      /* the blocks in use: bytes, how many */
	uint64_t free_pools;             /* pools holding no block (never used, or emptied) */
};

/* mimalloc's arenas (python/heap/mimalloc.c), a free-threaded build's
 * allocator of objects and their buffers, as its own records count them:
 * the memory it reserved from the system, the segments of it in use, their
 * pages in use, and those pages' blocks in use. */
struct model_heap_mimalloc {
	uint64_t arenas, arena_bytes;    /* its arenas (mi_arenas), their memory */
	uint64_t segments, segment_bytes; /* of it, the segments in use (32 MiB, or a
					    huge block's) */
	uint64_t pages, page_bytes;      /* of them, the pages in use (one size's
					    blocks each), their 64 KiB slices */
	uint64_t blocks, allocated;      /* of them, the blocks in use (each page's
					    used) and their bytes (used times the size) */
};

/* glibc's malloc as its own state records it (python/heap/cmalloc.c): its
 * arenas (the main one on the brk heap, the threads' in heaps of their
 * own) and the blocks it mapped apart, as mallinfo2() counts them. */
struct model_heap_malloc {
	const char *allocator;           /* "glibc 2.36" */
	uint64_t arenas;
	uint64_t arena_bytes;            /* the arenas' memory from the system (system_mem) */
	uint64_t in_use;                 /* of it, in blocks in use (or in a thread's tcache) */
	uint64_t free;                   /* of it, free: the top chunks, bins and fastbins */
	uint64_t top;                    /* of free, the arenas' top chunks (can go back to the system) */
	uint64_t free_chunks;            /* the free chunks in bins and fastbins (tops apart) */
	uint64_t mmapped, mmapped_blocks; /* blocks mmapped apart (mp_.mmapped_mem, n_mmaps) */
	uint64_t reserved;               /* the threads' heaps' reserved tails (no access) */
	uint64_t reserved_anonymous;     /* of it, what the dump recorded as readable: moved
					    from the anonymous memory to the reserved */
};

/* pycore heap: every object on the GC's lists, counted by type. */
struct model_heap {
	uint64_t objects, bytes;     /* over every list read */
	uint64_t generation[3];      /* objects in each generation's list */
	const char *found_in;        /* "gc lists", or "mimalloc heaps" (a free-threaded
					build's: no generations, its GC has none) */
	uint64_t permanent;          /* in the permanent generation (gc.freeze()) */
	bool exact;                  /* every type's bytes exact, every list read whole */
	struct ptrvec types;         /* of struct model_heap_type, most bytes first */
	struct ptrvec unread;        /* of const char *: what could not be read, one line each */
	double read_ms;              /* the census's time */
	struct ptrvec largest;       /* of struct model_heap_object: the biggest objects,
					biggest first (MODEL_HEAP_LARGEST) */
	struct model_heap_diff *diff;   /* heap --diff: against the old dump; NULL */
	/* the objects the GC does not track, reached from those it does
	 * through the references pycore reads (python/heap/reach.c) */
	uint64_t untracked_objects, untracked_bytes;
	struct ptrvec untracked_types;  /* of struct model_heap_type (permanent 0), most
					   bytes first */
	uint64_t unreadable_references; /* references to no readable object */
	struct ptrvec watched;          /* of struct model_heap_object: those of
					   py_options.heap_watch found on the lists */
	struct model_heap_memory memory;
	struct model_heap_retained *retained;   /* NULL: not computed (said in unread) */
};
#define MODEL_HEAP_LARGEST 50

/* One thread of a process read several times (analysis/samples.h): what
 * it did over the samples, with the evidence. */
struct model_hang_thread {
	int64_t tid;
	const char *name;
	/* "deadlocked", "waiting", "idle", "blocked", "spinning",
	 * "busy-c-gil", "busy-python", "stuck", "not-enough-samples" */
	const char *state;
	const char *evidence;        /* one line: why that state */
	size_t present;              /* the samples it is in */
	size_t stacks;               /* its different Python stacks among them */
	size_t gil;                  /* the samples in which it held the GIL */
	const char *where;           /* its innermost Python frame, last seen: "function (file:line)" */
	/* a character a sample: G held the GIL, W waited on an object pycore
	 * reads (or the GIL), D in a wait cycle, R released the GIL in no wait
	 * pycore reads, - not seen; lower case where its Python stack differs
	 * from its previous sample's */
	const char *timeline;
};

struct model_samples {
	const char *source;          /* "process" (reads of a live one), "dumps" (--compare) */
	const char *ordered_by;      /* how the samples are in time: "the reads' times", "the time
					systemd-coredump recorded", "the files' modification times",
					"the order given" */
	size_t asked, taken;
	double interval_ms;          /* asked between two reads' starts; < 0: dumps */
	double duration_ms;          /* from the first read's start to the last's; < 0 unknown */
	double stopped_median_ms, stopped_max_ms;   /* each read's stop; < 0 not stopped */
	const char *ended;           /* why fewer were taken than asked; NULL */
	struct ptrvec threads;       /* of struct model_hang_thread, by tid */
	struct ptrvec findings;      /* of const char *: the process's, one line each */
	const char *kind;            /* the hang's kind (the fingerprint's): "deadlock",
					"gil-held", "busy", "spinning", "stuck", "blocked",
					"waiting", "idle", "not-enough-samples" */
	int64_t kind_tid;            /* the first thread (by tid) whose state makes the
					kind; -1 none */
};

struct model_report *model_report_new(void);
void model_report_free(struct model_report *r);
void model_warn(struct model_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the report lacks something: ->incomplete, or a thread's stack
 * or its exception (the type, the traceback) that could not be read. */
bool model_report_incomplete(const struct model_report *r);
/* --locals=deep: list one object's attributes once per report, at its
 * first variable (threads and frames in report order); every later
 * variable holding the same object refers to it instead.  0, or -1 when
 * out of memory (nothing is lost: later variables keep their lists). */
int model_share_attributes(struct model_report *r);
/* The Python thread (of any interpreter) whose OS thread id is TID, or,
 * with TID < 0, whose threading ident is IDENT (non-zero); NULL if none. */
const struct model_thread *model_find_thread(const struct model_report *r, int64_t tid, uint64_t ident);

#endif
