/* A compilation unit's DIEs without libdw reading every unit before it.
 *
 * libdw finds a unit by reading the header of every unit from the
 * section's start up to it (elfutils' libdw/libdw_findcu.c, 0.188), and
 * dwfl_module_addrdie first reads them all (dwarf_getaranges): 2063 units
 * of libc's debug file, one page of the file touched each, which cost a
 * third of `--native` on a core whose threads wait in libc.  Here the
 * module's .debug_aranges names the unit, and the unit is given to libdw
 * as a Dwarf of its own: an ELF image made of the file's sections whose
 * .debug_info is that unit alone.  A unit that refers outside itself
 * (DW_FORM_ref_addr, type units, a supplementary or split file) or a
 * module whose sections are compressed or not a 64-bit file of this
 * machine's byte order is left to libdwfl, as is an address the aranges
 * do not hold.  A DIE's offset (dwarf_dieoffset) is its unit's own: DIEs
 * of two units' Dwarfs are never one DIE. */
#ifndef PYCORE_SYMBOLS_CUSLICE_H
#define PYCORE_SYMBOLS_CUSLICE_H

#include <elfutils/libdwfl.h>

struct cuslice;

/* The unit DIE of MOD's DWARF holding ADDR (MOD's address, as libdwfl's
 * dwfl_module_addrdie), *BIAS what the DWARF's addresses lack: NULL when
 * none does.  The DIE lasts as long as the session. */
Dwarf_Die *symbols_addrdie(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias);

/* The line table's row for ADDR (as dwfl_module_getsrc's), or NULL. */
Dwarf_Line *symbols_getsrc(Dwfl_Module *mod, Dwarf_Addr addr);

void cuslice_free(struct cuslice *c);

#endif
