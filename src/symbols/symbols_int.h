/* The libdwfl session's insides (symbols.c), shared with the look-ups by
 * name (lookup.c) and the native stacks (unwind.c): not for other layers. */
#ifndef PYCORE_SYMBOLS_SYMBOLS_INT_H
#define PYCORE_SYMBOLS_SYMBOLS_INT_H

#include <elfutils/libdwfl.h>

#include "symbols/cuindex.h"
#include "symbols/names.h"
#include "symbols/symbols.h"
#include "util/addrtab.h"

/* What each reported module's userdata points to. */
struct module_ref {
	struct symbols *s;
	struct dump_module *mod;
	bool opened;                 /* libdwfl asked for its file, and got it */
	bool vdso;                   /* the vDSO: its ELF is the dump's copy */
	struct symindex *index;      /* its symbols by address, once asked (symindex.h) */
	struct name_table *names[2]; /* its .symtab's and .dynsym's names, once asked (lookup.c) */
	struct cuslice *slice;       /* its units as Dwarfs of their own, once asked (cuslice.h) */
};

/* What the unwinder learns of one code address, kept for the next stack
 * that passes there (the threads of a service mostly share their stacks,
 * and reading the line and inline information costs): the calls
 * inlined there, innermost first, then the function the symbol names. */
struct pc_entry {
	char *function;
	const char *file;            /* libdw's, valid while the session lasts */
	int line;
	bool inlined;
};

struct pc_frames {
	uint64_t lookup;             /* the key: the pc, or a return address - 1 */
	struct dump_module *module;
	const char *module_path;
	struct pc_entry *e;
	size_t n;
	bool quiet;                  /* described by its symbol alone (a quiet module's) */
	/* a return address's (lookup + 1): whether it starts the platform's
	 * signal trampoline by its code, once looked at (nocfi_trampoline) */
	bool tramp_checked, tramp;
	/* its functions' parameters (args.h), read when first wanted */
	bool args_done;
	struct pc_args *args;
};

struct symbols {
	struct dump *dump;
	struct addrtab pcs;          /* struct pc_frames */
	struct addrtab cus;          /* each unit's functions by address (cuindex.h) */
	struct addrtab reentry;      /* struct reentry: functions that may tail-call themselves (tailcall.h) */
	const struct locate *loc;
	Dwfl *dwfl;
	struct module_ref *refs;     /* parallel to dump->modules */
	int attached;                /* dwfl_attach_state: 0 not yet, 1 done, -1 failed */
	Dwfl_Module **mods;          /* parallel to dump->modules */
	char *debuginfo_path;        /* locate's, for libdwfl */
	Dwfl_Callbacks cb;
	struct symbol_memo *memo;    /* symbols_lookup's answers, found or not */
	size_t nmemo, capmemo;
	struct unwind_thread *threads;  /* libdwfl's thread arguments, parallel to dump->threads */
	const struct platform_regs *unwinding;  /* the registers of the thread being unwound */
	/* the vDSO's image from the dump (vdso.h), and its module when the
	 * dump lists none there */
	uint8_t *vdso;
	size_t vdso_size;
	struct module_ref vdso_ref;
	/* symbols_native_stack_at's registers, as a thread of tid AT_TID */
	struct dump_thread at;
	struct unwind_thread *at_thread;
	bool at_active;
};

/* The tid of symbols_native_stack_at's thread: above any pid_max */
#define AT_TID 0x7ffffffe

/* What libdwfl's callbacks get for a thread: it, and how its dump's
 * platform numbers its registers. */
struct unwind_thread {
	const struct dump_thread *t;
	const struct platform *platform;
	const struct symbols *s;
	/* the registers its first frame starts from: the dump's, or those a
	 * signal frame on its stack saved (unwinding on from there) */
	const struct platform_regs *from;
	/* FROM's pc is a return address a frame pointer or a scan found:
	 * libdwfl is given the call's address (pc - 1), which the call frame
	 * information describes (after a call to a noreturn function the
	 * return address is the next function's first byte) */
	bool from_return;
};

struct symbol_memo {
	const struct dump_module *m;
	char *name;
	uint64_t addr, size;
};


/* The .symtab section libdwfl's table of a module is, read in place
 * (symbols_raw_symtab): libdwfl's symbol I is SYMS[I], its name STR +
 * st_name when st_name < STRSIZE (STR ends in a zero byte). */
struct raw_symtab {
	Elf *elf;
	const Elf64_Sym *syms;
	size_t nsym;
	const char *str;
	size_t strsize;
};

/* DM's table of NSYM symbols (dwfl_module_getsymtab) in place, when it is
 * one 64-bit .symtab section alone (not when libdwfl merged a second table
 * in, as for a MiniDebugInfo): false otherwise. */
bool symbols_raw_symtab(Dwfl_Module *dm, int nsym, struct raw_symtab *rt);

/* The code address of function NAME in M, from its symbol table, then its
 * dynamic one (symbols_lookup's and symbols_lookup_dynamic's answer for
 * the one name), 0 when neither has it: the tables read in place, each
 * name's answer kept (the targets of tail calls, one name at a time). */
uint64_t symbols_function_address(struct symbols *s, struct dump_module *m, const char *name);

/* Releases REF's name tables. */
void symbols_name_tables_free(struct module_ref *ref);

/* The module_ref a module of a session carries (its userdata), or NULL. */
static inline struct module_ref *symbols_module_ref(Dwfl_Module *mod)
{
	void **ud = NULL;
	return mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud ? *ud : NULL;
}

/* The function of MOD's unit CU whose ranges hold ADDR (the unit's own
 * addresses), by the session's index of the unit (cuindex.h). */
static inline bool symbols_subprogram_at(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out)
{
	struct module_ref *ref = symbols_module_ref(mod);
	return ref && ref->s ? cuindex_subprogram(&ref->s->cus, cu, addr, out) : names_subprogram_at(cu, addr, out, 0);
}

/* The calls inlined at ADDR in that function, outermost first, into CHAIN
 * (MAX_INLINE_DEPTH): their number; *SUB the function, when found. */
static inline int symbols_inline_chain(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *chain,
				       Dwarf_Die *sub, bool *has_sub)
{
	*has_sub = symbols_subprogram_at(mod, cu, addr, sub);
	return *has_sub ? names_inline_chain(sub, addr, chain, 0, 1) : 0;
}

/* The file locate/ chose for a module, or NULL. */
static inline const char *symbols_module_file(const struct symbols *s, const struct dump_module *m)
{
	const struct locate_result *r = locate_result(s->loc, m);
	return r && r->data ? r->path : NULL;
}

/* M's libdwfl module, or NULL. */
static inline Dwfl_Module *symbols_dwfl_mod(const struct symbols *s, const struct dump_module *m)
{
	size_t i = (size_t)(m - s->dump->modules);
	return i < s->dump->nmodules ? s->mods[i] : NULL;
}

#endif
