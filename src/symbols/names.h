/* Names of native functions for the unwinder's frames.
 * Contract: pure functions over a name or libdw's DIEs; a result is the
 * argument itself, BUF, or libdw's string (valid while its Dwarf is). */
#ifndef PYCORE_SYMBOLS_NAMES_H
#define PYCORE_SYMBOLS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>

/* The most calls inlined into one another at one address that are named */
#define MAX_INLINE_DEPTH 64

/* NAME demangled into BUF when it is a C++ (Itanium ABI) name and the C++
 * runtime's demangler can be loaded; NAME otherwise. */
const char *names_demangle(const char *name, char *buf, size_t cap);
/* NAME without its symbol version ("clock_nanosleep@GLIBC_2.2.5"). */
const char *names_unversioned(const char *name, char *buf, size_t cap);
/* The name of an inlined subroutine's DIE (its abstract origin's). */
const char *names_inlined(Dwarf_Die *die, char *buf, size_t cap);
/* The file and line of the call an inlined subroutine's DIE stands for,
 * in CU's line table; NULL, 0 when not said. */
const char *names_call_file(Dwarf_Die *cu, Dwarf_Die *die);
int names_call_line(Dwarf_Die *die);
/* The calls inlined at PC below PARENT, outermost first, into CHAIN
 * (MAX_INLINE_DEPTH at most), after the N already there: their number. */
int names_inline_chain(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int n, int depth);
/* Where function SUB is entered, as gdb's BLOCK_ENTRY_PC has it: its
 * DW_AT_entry_pc or DW_AT_low_pc, else (a function split into ranges, a
 * hot part and a .cold one) the start of its first range; false none. */
bool names_entry(Dwarf_Die *sub, Dwarf_Addr *entry);
/* The concrete function below PARENT (a CU, or a namespace or class in it)
 * whose ranges hold ADDR, into *OUT. */
bool names_subprogram_at(Dwarf_Die *parent, Dwarf_Addr addr, Dwarf_Die *out, int depth);

#endif
