/* Symbols through elfutils' libdwfl: the dump's modules are reported to
 * libdwfl with their addresses and build-ids; a module's ELF is opened only
 * when a look-up needs it, and only if its build-id matches the dump's. */
#ifndef PYCORE_SYMBOLS_SYMBOLS_H
#define PYCORE_SYMBOLS_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"

struct symbols;

/* Report every module of D to libdwfl.  DEBUG_DIRS (NULL-terminated, or
 * NULL) are searched for separate debug files before /usr/lib/debug.
 * Returns NULL only when out of memory or libdwfl cannot start; *err then
 * says why. */
struct symbols *symbols_open(struct dump *d, char **debug_dirs, const char **err);

/* A dump_files.by_build_id hook: DIR/.build-id/xx/yyyy in each of the
 * NULL-terminated directories ARG and /usr/lib/debug, then debuginfod
 * (when DEBUGINFOD_URLS is set).  Returns a malloc'd path or NULL. */
char *symbols_find_by_build_id(const uint8_t *id, size_t len, void *arg);
void symbols_close(struct symbols *s);

/* One symbol wanted from a module: fill in name, get addr (0 when absent). */
struct symbol_want {
	const char *name;
	uint64_t addr;
	uint64_t size;
};

/* Look up every wanted name in module M in one pass over its symbol table
 * (.symtab when present, else .dynsym).  Returns how many were found, or -1
 * when the module's ELF could not be had (why: symbols_module_error). */
int symbols_lookup(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n);
const char *symbols_module_error(struct symbols *s, struct dump_module *m);

/* One native frame, innermost first. */
struct native_frame {
	uint64_t pc;
	const char *function;        /* symbol name, NULL if unknown */
	const char *module_path;     /* the file of the module, NULL if none */
	struct dump_module *module;
	const char *file;            /* source file, when debug info has it */
	int line;
};

/* Called per frame; non-zero stops the walk. */
typedef int (*native_frame_fn)(const struct native_frame *f, void *arg);

/* Unwind thread TID of the dump.  Returns the number of frames given to FN,
 * -1 when unwinding cannot start; *error says why the stack ends early. */
int symbols_native_stack(struct symbols *s, int64_t tid, native_frame_fn fn, void *arg, const char **error);

/* The module's DWARF (its own or a separate debug file's), or NULL. */
struct Dwarf *symbols_dwarf(struct symbols *s, struct dump_module *m);

#endif
