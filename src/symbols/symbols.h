/* Symbols through elfutils' libdwfl: the dump's modules are reported to
 * libdwfl with their addresses and build-ids; a module's ELF is opened only
 * when a look-up needs it, and only if its build-id matches the dump's. */
#ifndef PYCORE_SYMBOLS_SYMBOLS_H
#define PYCORE_SYMBOLS_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"

struct symbols;

/* Report every module of D to libdwfl.  Returns NULL only when out of
 * memory or libdwfl cannot start; *err then says why. */
struct symbols *symbols_open(struct dump *d, const char **err);
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

#endif
