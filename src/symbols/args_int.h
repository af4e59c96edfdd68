/* Inside the native frames' arguments (args.c, args_describe.c): what
 * one pc says of its functions' parameters, read once and kept in the
 * unwinder's cache entry for the pc. */
#ifndef PYCORE_SYMBOLS_ARGS_INT_H
#define PYCORE_SYMBOLS_ARGS_INT_H

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "symbols/args.h"

/* DWARF 5's call-site attributes and tags (dwarf.h of elfutils 0.188 has
 * them; named here for older headers) */
#ifndef DW_AT_call_return_pc
#define DW_AT_call_return_pc 0x7d
#endif

struct arg_desc {
	char *name;
	char *type;
	enum native_arg_kind kind;
	unsigned size;
	Dwarf_Die type_die;          /* without typedefs and qualifiers: an enum's names */
	Dwarf_Attribute attr;        /* the location's, for the operations that refer to it */
	Dwarf_Op *ops;               /* libdw's; NULL: no location at this pc */
	size_t nops;
	bool has_const;
	uint64_t cval;
};

struct entry_args {
	bool known;                  /* DWARF describes this entry's function */
	struct arg_desc *a;
	size_t n;
};

struct pc_args {
	Dwarf_Addr bias;             /* the DWARF's */
	struct entry_args *ent;      /* parallel to the pc_frames' entries */
	size_t n;
	/* the physical function: its frame base, its address and name (an
	 * entry value's call site must be shown to call it) */
	bool has_sub;
	Dwarf_Attribute fb_attr;
	Dwarf_Op *fb;
	size_t nfb;
	uint64_t entry;
	const char *sub_name;
	Dwarf_Die sub;
	/* the CFA's rule at this pc, copied from libdw's frame, and the
	 * registers it has no rule for changing */
	Dwarf_Op cfa[8];
	size_t ncfa;
	uint32_t unchanged;
	/* as a caller: the call site returning to this pc (0 not looked
	 * for, 1 found, -1 none) */
	int cs_state;
	Dwarf_Die cs;
};

#endif
