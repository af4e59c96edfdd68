/* Frames past code without call frame information.
 *
 * Facts used: the frame record both platforms keep when a function sets
 * up a frame pointer (System V x86-64 ABI 3.4.1: push %rbp; mov %rsp,%rbp
 * leaves the caller's rbp at 0(%rbp) and the return address at 8(%rbp);
 * AAPCS64 6.2.3: x29 points at {previous x29, x30}); the caller's stack
 * pointer is then the record's address plus 16.  A return address the
 * scan finds on x86-64 was pushed by the call: the caller's stack pointer
 * is the slot's address plus 8; on aarch64 it was stored with its frame
 * record, x29 the word below it. */
#include "symbols/nocfi.h"
#include "symbols/symindex.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* How far above a frame's stack pointer its frame record or return
 * address may lie: OpenBLAS's kernels keep a few hundred bytes. */
#define MAX_FRAME_BYTES (64u << 10)
#define MAX_SCAN_WORDS  4096

/* The call frame information at LOOKUP (a pc, or a return address less
 * one), or NULL; freed with free(). */
static Dwarf_Frame *frame_at(Dwfl *dwfl, uint64_t lookup)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, lookup);
	Dwarf_Addr bias;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	if (cfi && dwarf_cfi_addrframe(cfi, lookup - bias, &frame) == 0)
		return frame;
	cfi = mod ? dwfl_module_dwarf_cfi(mod, &bias) : NULL;
	if (cfi && dwarf_cfi_addrframe(cfi, lookup - bias, &frame) == 0)
		return frame;
	return NULL;
}

bool nocfi_has_cfi(Dwfl *dwfl, uint64_t lookup)
{
	Dwarf_Frame *frame = frame_at(dwfl, lookup);
	bool has = frame != NULL;
	free(frame);
	return has;
}

/* N bytes of code at ADDR: the dump's copy, else the module's file (a
 * kernel's core holds no unmodified text). */
static bool code_at(Dwfl *dwfl, struct dump *d, uint64_t addr, uint8_t *buf, size_t n)
{
	if (dump_read(d, addr, buf, n) == PC_OK)
		return true;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Dwarf_Addr bias;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	size_t nph, size;
	char *raw = elf ? elf_rawfile(elf, &size) : NULL;
	if (!raw || elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		uint64_t v = addr - bias;
		if (v < ph.p_vaddr || v - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (v - ph.p_vaddr) < n)
			continue;
		uint64_t off = ph.p_offset + (v - ph.p_vaddr);
		if (off > size || size - off < n)
			return false;
		memcpy(buf, raw + off, n);
		return true;
	}
	return false;
}

/* The address of MOD's function named NAME's first LEN bytes; 0 none. */
static uint64_t named_function(Dwfl_Module *mod, const char *name, size_t len)
{
	int n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && strncmp(s, name, len) == 0 &&
		    s[len] == '\0')
			return addr;
	}
	return 0;
}

/* The start of the function at LOOKUP by its symbol, the address its
 * callers call; 0 unknown.  A part GCC split off a function (NAME.cold,
 * NAME.cold.N: -freorder-blocks-and-partition) is entered by a jump from
 * the function, whose callers called NAME: that is the start.  A symbol
 * without a size (assembly without .size: musl's memset) is found for
 * any address after it up to the next: it may be another's, a hidden
 * function's (musl's __syscall_cp_asm), so the start is unknown. */
static uint64_t function_start(Dwfl *dwfl, uint64_t lookup)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, lookup);
	uint64_t off, size;
	const char *name = mod ? symindex_addrinfo(mod, lookup, &off, &size) : NULL;
	if (!name || size == 0)
		return 0;
	const char *cold = strstr(name, ".cold");
	if (cold && (cold[5] == '\0' || cold[5] == '.'))
		return named_function(mod, name, (size_t)(cold - name));
	return lookup - off;
}

struct step {
	Dwfl *dwfl;
	struct dump *d;
	const struct platform *p;
	const struct platform_regs *regs;
	uint64_t lookup;             /* the frame's pc, or its return address less one */
	uint64_t start;              /* its function's start; 0 unknown */
	uint64_t lo;                 /* the lowest word its callers' saved frame pointer may be in */
};

/* Does the PLT stub at TARGET jump to START (its GOT slot holds it)? */
static bool stub_reaches(const struct step *st, uint64_t target, uint64_t start)
{
	uint8_t stub[16];
	uint64_t slot, to;
	return code_at(st->dwfl, st->d, target, stub, sizeof(stub)) &&
	       (slot = st->p->plt_slot(stub, sizeof(stub), target)) != 0 &&
	       dump_read_u64(st->d, slot, &to) == PC_OK && st->p->code_address(st->regs, to) == start;
}

bool nocfi_trampoline(Dwfl *dwfl, struct dump *d, uint64_t ra)
{
	uint8_t code[16];
	size_t n = d->platform->sigframe.code_len;
	return n && n <= sizeof(code) && code_at(dwfl, d, ra, code, n) && platform_is_sigreturn_code(d->platform, code, n);
}

/* Is RA a return address into a caller of the frame: code of a module,
 * after a call instruction; a call naming its target names the frame's
 * function, or a PLT stub whose GOT slot holds it (without a symbol for
 * the frame: a target in its module, at most MAX_FRAME_BYTES before it).
 * Or a signal trampoline's start (nocfi_trampoline), looked at first: the
 * bytes before it, another function's end, might decode as a call. */
static bool returns_here(const struct step *st, uint64_t ra)
{
	uint8_t code[16];
	size_t n = st->p->call_window;
	if (ra < 4096 || n > sizeof(code) || !dwfl_addrmodule(st->dwfl, ra - 1))
		return false;
	if (nocfi_trampoline(st->dwfl, st->d, ra))
		return true;
	if (!code_at(st->dwfl, st->d, ra - n, code, n))
		return false;
	uint64_t target = 0;
	int kinds = st->p->call_before(code, n, ra, &target);
	if (kinds & PLATFORM_CALL_INDIRECT)
		return true;
	if (!(kinds & PLATFORM_CALL_DIRECT))
		return false;
	if (!st->lookup)
		return function_start(st->dwfl, target) == target; /* code unknown: a function's start */
	if (st->start)
		return target == st->start || stub_reaches(st, target, st->start);
	return target <= st->lookup && st->lookup - target < MAX_FRAME_BYTES &&
	       dwfl_addrmodule(st->dwfl, target) == dwfl_addrmodule(st->dwfl, st->lookup);
}

/* Where the caller's call frame information at LOOKUP puts its canonical
 * frame address (register *REG plus *OFF) and its own return address
 * (*RA_OFF from that): false when the rules are not of that simple kind. */
static bool simple_rules(const struct step *st, Dwarf_Frame *frame, unsigned *reg, int64_t *off, int64_t *ra_off)
{
	Dwarf_Op *ops, mem[3];
	size_t nops;
	/* (libdw gives a register-and-offset rule as DW_OP_bregx) */
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx)
		*reg = (unsigned)ops[0].number, *off = (int64_t)ops[0].number2;
	else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
		*reg = ops[0].atom - DW_OP_breg0, *off = (int64_t)ops[0].number;
	else
		return false;
	if (dwarf_frame_register(frame, (int)st->p->dwarf_ra, mem, &ops, &nops) != 0 || nops < 1 ||
	    ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1)
		*ra_off = 0;
	else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		*ra_off = (int64_t)ops[1].number;
	else if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
		*ra_off = (int64_t)ops[1].number;
	else
		return false;
	return true;
}

/* Does the return address at CFA + RA_OFF pass returns_here for the
 * caller at RA (CFA above SP, the caller's stack pointer)? */
static bool next_returns(const struct step *st, uint64_t ra, uint64_t sp, uint64_t cfa, int64_t ra_off)
{
	struct step up = *st;
	uint64_t next;
	up.lookup = ra - 1;
	up.start = function_start(st->dwfl, up.lookup);
	return cfa >= sp && cfa - sp < MAX_FRAME_BYTES && dump_read_u64(st->d, cfa + (uint64_t)ra_off, &next) == PC_OK &&
	       returns_here(&up, st->p->code_address(st->regs, next));
}

/* A return address RA found for a caller whose stack pointer is then SP:
 * when the caller's call frame information puts its canonical frame
 * address at a register plus a constant and its own return address at a
 * constant offset from that, that return address must pass returns_here
 * too: a stale return address left in a frame's unused stack by an
 * earlier call does not, its "caller's" next return address being
 * whatever the stack holds there.  A rule on the frame pointer (*FP,
 * which a function without CFI may have used for itself, having saved
 * the caller's on its stack): *FP, else the first word below SP, down
 * to LO (the callee's stack pointer), that makes the rule hold, which
 * becomes *FP.  Where the rules are of another kind, or there are none,
 * nothing contradicts RA.  (Below LO: ST's own callees, such as musl's
 * raise, may be the ones that saved the frame pointer.) */
static bool caller_consistent(const struct step *st, uint64_t ra, uint64_t sp, uint64_t lo, uint64_t *fp)
{
	Dwarf_Frame *frame = frame_at(st->dwfl, ra - 1);
	unsigned reg;
	int64_t off, ra_off;
	bool ok = true;
	if (frame && simple_rules(st, frame, &reg, &off, &ra_off)) {
		if (reg == st->p->dwarf_sp) {
			ok = next_returns(st, ra, sp, sp + (uint64_t)off, ra_off);
		} else if (reg == st->p->dwarf_fp) {
			ok = next_returns(st, ra, sp, *fp + (uint64_t)off, ra_off);
			if (st->lo < lo)
				lo = st->lo;
			for (uint64_t a = sp - 8; !ok && a >= lo && a < sp; a -= 8) {
				uint64_t w;
				if (dump_read_u64(st->d, a, &w) == PC_OK && next_returns(st, ra, sp, w + (uint64_t)off, ra_off)) {
					*fp = w;
					ok = true;
				}
			}
		}
	}
	free(frame);
	return ok;
}

static void set_caller(const struct platform *p, const struct platform_regs *regs, uint64_t pc, uint64_t sp,
		       uint64_t fp, struct platform_regs *caller)
{
	*caller = *regs;
	caller->pc = pc;
	caller->sp = caller->dwarf[p->dwarf_sp] = sp;
	caller->fp = caller->dwarf[p->dwarf_fp] = fp;
}

/* The first word above the stack pointer that is a return address into
 * a caller of ST's frame, into CALLER. */
static bool scan(const struct step *st, struct platform_regs *caller)
{
	const struct platform *p = st->p;
	struct dump *d = st->d;
	const struct platform_regs *regs = st->regs;
	uint64_t sp = regs->sp, fp = regs->fp, ra;
	for (uint64_t k = 0, slot = sp; k < MAX_SCAN_WORDS && sp % 8 == 0; k++, slot += 8) {
		if (dump_read_u64(d, slot, &ra) != PC_OK)
			break;
		ra = p->code_address(regs, ra);
		uint64_t cfp = fp;
		if (p->call_window == 4 && slot >= 8 && dump_read_u64(d, slot - 8, &cfp) != PC_OK)
			cfp = fp; /* aarch64: x29 saved beside x30 */
		if (!returns_here(st, ra) || !caller_consistent(st, ra, slot + 8, sp, &cfp))
			continue;
		set_caller(p, regs, ra, slot + 8, cfp, caller);
		return true;
	}
	return false;
}

const char *nocfi_step(Dwfl *dwfl, struct dump *d, uint64_t pc, bool activation, const struct platform_regs *regs,
		       uint64_t first_sp, struct platform_regs *caller)
{
	const struct platform *p = d->platform;
	if (!p->call_before)
		return NULL;
	struct step st = { dwfl, d, p, regs, activation ? pc : pc - 1, 0, regs->sp };
	if (first_sp <= regs->sp && regs->sp - first_sp <= MAX_SCAN_WORDS * 8)
		st.lo = first_sp;
	st.start = function_start(dwfl, st.lookup);
	uint64_t sp = regs->sp, fp = regs->fp, ra, prev;
	/* the frame record: the function's own where it sets one up (a
	 * function that does not, such as musl's __stack_chk_fail, has its
	 * caller's in the frame pointer: its caller would be skipped) */
	uint8_t code[8];
	bool own = !st.start || !p->sets_frame_pointer || !code_at(dwfl, d, st.start, code, sizeof(code)) ||
		   p->sets_frame_pointer(code, sizeof(code));
	if (own && fp % 8 == 0 && fp >= sp && fp - sp < MAX_FRAME_BYTES && dump_read_u64(d, fp, &prev) == PC_OK &&
	    dump_read_u64(d, fp + 8, &ra) == PC_OK) {
		ra = p->code_address(regs, ra);
		if (returns_here(&st, ra) && caller_consistent(&st, ra, fp + 16, fp + 16, &prev)) {
			set_caller(p, regs, ra, fp + 16, prev, caller);
			return "frame pointer";
		}
	}
	return scan(&st, caller) ? "scan" : NULL;
}

bool nocfi_scan(Dwfl *dwfl, struct dump *d, const struct platform_regs *regs, struct platform_regs *caller)
{
	struct step st = { dwfl, d, d->platform, regs, 0, 0, regs->sp };
	return d->platform->call_before && scan(&st, caller);
}
