/* Native frames' arguments: each function's formal parameters, described
 * once per pc from its DWARF, evaluated per frame.  Internal to symbols/. */
#ifndef PYCORE_SYMBOLS_ARGS_H
#define PYCORE_SYMBOLS_ARGS_H

#include "symbols/symbols_int.h"

/* The most parameters shown of one function (of one inlined call) */
#define MAX_NATIVE_ARGS 32

struct pc_args;

/* What a frame's arguments are evaluated from: its code address, the
 * registers the unwinder recovered there (known: a bit per DWARF number;
 * a register the call frame information cannot restore has none) and its
 * description (PF, PA).  The CFA is computed once, when asked for. */
struct arg_frame {
	Dwfl_Module *mod;
	uint64_t pc, lookup;         /* lookup: pc, or a return address - 1 */
	const struct pc_frames *pf;
	struct pc_args *pa;          /* NULL: no DWARF describes it */
	uint64_t regs[PLATFORM_DWARF_REGS];
	uint32_t known;
	unsigned nregs;              /* the platform's general registers: DWARF 0 .. nregs-1 */
	/* the thread's vector registers (floating-point arguments), in its
	 * first frame only (a call keeps none whole); DWARF dwarf_vec on */
	const struct platform_regs *vecs;
	unsigned dwarf_vec;
	/* its entry values (DW_OP_entry_value): from the tail call site
	 * returning to TAIL_RET (a tail call jumped to its function: the
	 * nearest tail-call frame's), else its caller's call site; none with
	 * NO_ENTRY; ENTRY_ASKED set when one was asked for */
	uint64_t tail_ret;
	bool no_entry, entry_asked;
	int cfa_state;               /* 0 not computed, 1 known, -1 unknown */
	uint64_t cfa;
};

/* What LOOKUP in MOD says of its frames: the rules of its call frame
 * information for the CFA and the registers, and with DWARF the
 * parameters of each function there (PF's entries, the calls inlined
 * there and the function itself), read once.  NULL when out of memory.
 * Freed by args_free. */
struct pc_args *args_describe(Dwfl_Module *mod, const struct pc_frames *pf, uint64_t lookup, bool dwarf);
void args_free(struct pc_args *pa);

/* The registers (a bit per DWARF number below 32) PA's call frame
 * information has no rule for changing: a callee-saved one of them is
 * the caller's too, whatever libdwfl says (elfutils' x86-64 ABI defaults,
 * backends/x86_64_cfi.c up to 0.193 at least, name DWARF 0, %rax, where
 * %rbx, 3, is meant: libdwfl loses %rbx in a caller whose callee does not
 * save it, and keeps %rax there, which a call need not preserve). */
uint32_t args_unchanged(const struct pc_args *pa);

/* The arguments of entry E of frame F (its PF's order) into OUT (at most
 * MAX_NATIVE_ARGS), CALLER the frame that called F's function (for an
 * entry value: the call site's parameter there), NULL when not known.
 * The number filled in, or -1 when no DWARF describes the function. */
int args_eval(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, size_t e, struct native_arg *out);

/* The call site in CALLER's function that returns to its pc, into *CS
 * (its DWARF's addresses less *BIAS); false when none is known. */
bool args_call_site(struct arg_frame *caller, Dwarf_Die *cs, Dwarf_Addr *bias);
/* Whether call site CS of CALLER is shown to call F's function. */
bool args_calls(struct symbols *s, struct arg_frame *caller, Dwarf_Die *cs, struct arg_frame *f);
/* Whether PA's function was described by its DWARF. */
bool args_described(const struct pc_args *pa);
/* The address PA's function is entered at; 0 unknown. */
uint64_t args_entry(const struct pc_args *pa);

/* args_type.c: the type of DIE (through its abstract origin), false when
 * none (void); T's name as gdb prints it ("PyObject *", "const char *");
 * how a value of T is printed, its size (0 unknown), and T without its
 * typedefs and qualifiers (an enum's names) into *BARE. */
bool args_type_of(Dwarf_Die *die, Dwarf_Die *out);
void args_type_name(Dwarf_Die *t, char *buf, size_t cap);
void args_type_kind(Dwarf_Die *t, enum native_arg_kind *kind, unsigned *size, Dwarf_Die *bare);

#endif
