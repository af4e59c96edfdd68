/* A compilation unit's functions by address, for the native frames'
 * look-ups: which function's ranges hold an address.  Walking the unit's
 * DIEs for each address (names_subprogram_at) read every type and
 * declaration before it, a quarter of --native's instructions on a
 * libpython's ceval.c; the index is built by one such walk, the first
 * time a unit is asked, and answers by a binary search. */
#ifndef PYCORE_SYMBOLS_CUINDEX_H
#define PYCORE_SYMBOLS_CUINDEX_H

#include <stdbool.h>
#include <elfutils/libdw.h>

#include "util/addrtab.h"

/* The units' indexes of one session, in an addrtab made by cuindex_init. */
void cuindex_init(struct addrtab *units);

/* The concrete function below CU (namespaces and classes included) whose
 * ranges hold ADDR (the unit's own addresses), into *OUT: the first in the
 * DIEs' order, as names_subprogram_at finds it; false none.  UNITS keeps
 * each unit's index (cuindex_free); out of memory, the walk itself. */
bool cuindex_subprogram(struct addrtab *units, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out);

void cuindex_free(struct addrtab *units);

#endif
