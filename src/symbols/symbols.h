/* Symbols through elfutils' libdwfl: the dump's modules are reported to
 * libdwfl with their addresses; a module's ELF is the file locate/ chose
 * for it (its build-id checked there), opened only when a look-up needs it. */
#ifndef PYCORE_SYMBOLS_SYMBOLS_H
#define PYCORE_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "locate/locate.h"

struct symbols;

/* Report every ELF module of D to libdwfl, with the files LOC resolved
 * (and its search path for separate debug files).  Returns NULL, or the
 * error when out of memory or libdwfl cannot start. */
struct pc_error *symbols_open(struct dump *d, const struct locate *loc, struct symbols **out);
void symbols_close(struct symbols *s);

/* Whether libdwfl opened M's file (a look-up or the unwinder needed it). */
bool symbols_file_used(const struct symbols *s, const struct dump_module *m);

/* One symbol wanted from a module: fill in name, get addr (0 when absent). */
struct symbol_want {
	const char *name;
	uint64_t addr;
	uint64_t size;
};

/* Look up every wanted name in module M in one pass over its symbol table
 * (.symtab when present, else .dynsym).  Returns how many were found, or -1
 * when the module has no file (locate_result says why) or no symbols. */
int symbols_lookup(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n);

/* The same from the dynamic symbol table (.dynsym) of M's own file only,
 * in one pass: no separate debug file is looked for or read (exported
 * data such as glibc's libthread_db descriptors, wanted of every dump). */
int symbols_lookup_dynamic(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n);

/* The contents of section NAME of module M's file (as the file holds them:
 * constant data, such as a module's debug offsets, needs no memory of the
 * dump): up to CAP bytes copied to BUF.  Returns the section's size, or -1
 * when the module has no file or no such section. */
long symbols_section(struct symbols *s, struct dump_module *m, const char *name, void *buf, size_t cap);
/* The same section in place: *DATA points at its bytes (valid as long as
 * S is); its size, or -1. */
long symbols_section_data(struct symbols *s, struct dump_module *m, const char *name, const void **data);
/* The same, and in *ADDR where the process had the section (the file's
 * address plus the module's load bias). */
long symbols_section_at(struct symbols *s, struct dump_module *m, const char *name, const void **data,
			uint64_t *addr);

/* What a native frame's argument is, for printing it as gdb does. */
enum native_arg_kind {
	NARG_SIGNED,                 /* a signed integer: decimal */
	NARG_UNSIGNED,               /* an unsigned integer: decimal */
	NARG_BOOL,
	NARG_CHAR,                   /* a one-byte character type */
	NARG_ENUM,
	NARG_FLOAT,                  /* the bits of a float or a double */
	NARG_POINTER,                /* 0x... */
	NARG_STRING,                 /* a pointer to characters: the pointer and its string */
	NARG_OTHER,                  /* a struct, an array, a long double: not printed */
};

/* Where a native argument's value stands (symbols/args.c). */
enum native_arg_state {
	NARG_KNOWN,                  /* value holds it */
	NARG_OPTIMIZED_OUT,          /* no location at this pc, or one this frame cannot recover
					(a register the call frame information does not restore) */
	NARG_UNAVAILABLE,            /* located, but not read: reason says why */
};

/* One formal parameter of a native frame's function, evaluated at that
 * frame from its DWARF location and the registers the unwinder recovered
 * there.  Strings are the session's: valid while S is. */
struct native_arg {
	const char *name;            /* NULL: unnamed */
	const char *type;            /* the C type as gdb names it ("PyObject *"); NULL unknown */
	enum native_arg_kind kind;
	unsigned size;               /* bytes of its type */
	enum native_arg_state state;
	const char *reason;          /* NARG_UNAVAILABLE: why */
	uint64_t value;              /* NARG_KNOWN: its bits, zero-extended from size */
	const char *enumerator;      /* NARG_ENUM: the name of value, NULL when none has it */
};

/* One native frame, innermost first. */
struct native_frame {
	uint64_t pc;
	uint64_t sp;                 /* the stack pointer in this frame; 0 unknown */
	const char *function;        /* symbol name, NULL if unknown */
	const char *module_path;     /* the file of the module, NULL if none */
	struct dump_module *module;
	const char *file;            /* source file, when debug info has it */
	int line;
	bool inlined;                /* a call inlined into the next frame (same pc) */
	/* a function that tail-called the frame below and left no frame of its
	 * own, inferred from the DWARF's call sites as gdb does (tailcall.h):
	 * PC is its call's return address, SP the frame below's */
	bool tail_call;
	/* a signal trampoline no symbol names, known by its code at PC */
	bool sigreturn;
	/* found past a frame without call frame information: "frame pointer"
	 * or "scan" (nocfi.h); NULL by CFI */
	const char *found_by;
	/* the function's formal parameters at this frame, with has_args, when
	 * the module's DWARF describes it (not for a quiet module's frames,
	 * nor for symbols_native_names); valid during the call only */
	bool has_args;
	const struct native_arg *args;
	size_t nargs;
};

/* Called per frame; non-zero stops the walk. */
typedef int (*native_frame_fn)(const struct native_frame *f, void *arg);
/* Which frames of a walk nobody prints: those of MODULE from the first
 * of them whose symbol FROM accepts on (the frame where the thread is
 * excepted: its inlined calls are wanted).  Such frames get their symbol
 * only, no source line or inlined calls: reading a module's line tables
 * and walking its DIEs is costly (the eval loop's unit is the largest),
 * for frames nobody prints. */
struct symbols_quiet {
	const struct dump_module *module;
	bool (*from)(const char *function);
};

/* Unwind thread TID of the dump (past a frame whose code has no call
 * frame information by its frame pointer or a scan of its stack, the
 * frames found so marked), the frames QUIET says (NULL: none) by their
 * symbol alone.  Returns the number of frames given to FN, -1 when unwinding
 * cannot start; *error says why the stack ends early. */
int symbols_native_stack(struct symbols *s, int64_t tid, const struct symbols_quiet *quiet,
			 native_frame_fn fn, void *arg, const char **error);

/* The same from the registers REGS (a signal frame's, the state at a
 * fault) instead of thread TID's own (whose pointer-authentication mask
 * still applies). */
int symbols_native_stack_at(struct symbols *s, int64_t tid, const struct platform_regs *regs,
			    const struct symbols_quiet *quiet, native_frame_fn fn, void *arg, const char **error);

/* The same from a stack pointer SP alone (a stack switched out by a
 * coroutine library: a greenlet's saved stack pointer): its first frame
 * the first return address above SP that a scan validates (nocfi.h),
 * marked so. */
int symbols_native_stack_scan(struct symbols *s, int64_t tid, uint64_t sp, const struct symbols_quiet *quiet,
			      native_frame_fn fn, void *arg, const char **error);

/* Thread TID's frames named by their symbols alone (no source lines,
 * nothing kept for later stacks: cheap), until FN returns non-zero, for
 * a look at what a stack holds (its signal frames); past code without
 * call frame information as symbols_native_stack goes.  The number of
 * frames given to FN, -1 when unwinding cannot start. */
int symbols_native_names(struct symbols *s, int64_t tid, native_frame_fn fn, void *arg);

/* The module's DWARF (its own or a separate debug file's), or NULL. */
struct Dwarf *symbols_dwarf(struct symbols *s, struct dump_module *m);

#endif
