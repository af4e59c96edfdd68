/* A module's symbol table sorted by address, for the look-ups of native
 * frames.  libdwfl's dwfl_module_addrinfo scans the whole table on every
 * call (elfutils' libdwfl/dwfl_module_addrsym.c): 2.4 M instructions a
 * look-up in libpython's debug file.  The index is built by one such scan,
 * the first time a module is asked, and answers by a binary search. */
#ifndef PYCORE_SYMBOLS_SYMINDEX_H
#define PYCORE_SYMBOLS_SYMINDEX_H

#include <stdint.h>

#include <elfutils/libdwfl.h>

struct symindex;

/* The symbol at code address ADDR in MOD, as dwfl_module_addrinfo names it
 * (symindex.c says where the two may differ): its name (libelf's,
 * valid while the session lasts) or NULL, *OFF ADDR's offset in it, *SIZE
 * its size (0: a label without one).  A module of a pycore session (its
 * userdata a module_ref) keeps its index; any other is asked of libdwfl. */
const char *symindex_addrinfo(Dwfl_Module *mod, uint64_t addr, uint64_t *off, uint64_t *size);

static inline const char *symindex_addrname(Dwfl_Module *mod, uint64_t addr)
{
	uint64_t off, size;
	return symindex_addrinfo(mod, addr, &off, &size);
}

void symindex_free(struct symindex *x);

#endif
