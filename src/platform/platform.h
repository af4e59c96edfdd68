/* The platform seam: every fact that depends on the machine a process ran
 * on, one file per architecture (x86_64.c; aarch64.c to come), behind one
 * interface.
 *
 * Contract: a platform is a constant table of facts and small pure
 * functions over bytes (no dump, no memory reads, no allocation), found by
 * the dump's ELF e_machine or minidump processor architecture -- never by
 * the machine pycore runs on.  The readers turn the dump's register notes
 * into a struct platform_regs through it; the layers above read those
 * architecture-neutral fields and ask the dump's platform for the rest.
 * Adding an architecture: one file defining a struct platform, named in
 * platform.c's list and in Makefile.am.
 */
#ifndef PYCORE_PLATFORM_PLATFORM_H
#define PYCORE_PLATFORM_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most DWARF registers a platform gives libdwfl for a thread's first
 * frame (aarch64: x0-x30 and sp are DWARF 0-31; x86_64: 0-16, rip last). */
#define PLATFORM_DWARF_REGS 32

/* A thread's registers as the dump recorded them, in terms every layer
 * above the readers can use.  All zero when unknown. */
struct platform_regs {
	/* the general registers by DWARF number (0 .. platform->dwarf_nregs-1),
	 * the program counter apart: libdwfl's first frame */
	uint64_t dwarf[PLATFORM_DWARF_REGS];
	uint64_t pc;                 /* program counter */
	uint64_t sp;                 /* stack pointer */
	uint64_t fp;                 /* frame pointer (x86_64 rbp, aarch64 x29) */
	uint64_t tp;                 /* thread pointer (x86_64 fs_base, aarch64
				      * tpidr_el0); 0: the dump does not say */
	/* the system call the thread is in, where the kernel kept it (x86_64
	 * orig_rax, aarch64's NT_ARM_SYSTEM_CALL note), and its first
	 * argument where it survives */
	uint64_t syscall, syscall_arg0;
	bool has_syscall, has_syscall_arg0;
	bool syscall_known;          /* the dump says whether it is in one (has_syscall) */
	/* the bits of a code address that hold a pointer-authentication code
	 * (aarch64's NT_ARM_PAC_MASK insn_mask); 0: none */
	uint64_t pac_mask;
	/* the vector registers' low 64 bits (x86_64 xmm0-15, aarch64
	 * v0-31), which hold floating-point arguments, from the thread's
	 * NT_PRFPREG (a core's note, or ptrace's); a bit per register known */
	uint64_t vec[32];
	uint32_t vec_known;
};

/* The kernel's signal frame as a handler sees it: where the kernel put
 * siginfo and the saved registers, relative to the stack pointer of the
 * frame in the return trampoline (the stack pointer the unwinder gives the
 * trampoline's frame, the handler having returned into it). */
struct platform_sigframe {
	/* the kernel's own trampolines' symbol names (aarch64's vDSO), NULL-
	 * terminated, or NULL; the C library's are the libc seam's */
	const char *const *trampolines;
	uint64_t siginfo;                 /* siginfo_t at sp + siginfo */
	uint64_t mcontext;                /* the saved registers at sp + mcontext */
	size_t mcontext_size;             /* bytes parse_mcontext reads */
	/* where in those bytes the saved stack pointer and pc are (a quick
	 * look before parse_mcontext, in a search over many words) */
	size_t mcontext_sp, mcontext_pc;
	/* The registers at the signal from the MCONTEXT_SIZE bytes at P. */
	void (*parse_mcontext)(const uint8_t *p, struct platform_regs *r);
	/* The trampoline's call frame information does not restore the
	 * registers at the signal (aarch64's vDSO gives only x29 and x30, the
	 * frame record of the interrupted code: the interrupted function
	 * would be skipped and its caller's registers wrong): an unwinder
	 * goes on from the registers the frame saved (parse_mcontext).
	 * false where the CFI describes them all (x86_64: glibc's
	 * __restore_rt). */
	bool unwind_from_mcontext;
	/* The trampoline's symbol starts at the return address a handler
	 * returns to (no call precedes it: a return address's usual look-up
	 * at the address less one finds no symbol there). */
	bool entered_at_symbol;
	/* What the saved state at P says of a hardware fault being delivered
	 * (the kernel writes it whatever the handler asked for, while siginfo
	 * is written only for an SA_SIGINFO handler): true when it names one,
	 * with the signals (one or two, else 0) the kernel sends for such a
	 * fault and its address when it has one.  NULL: the platform's state
	 * does not say. */
	bool (*mcontext_fault)(const uint8_t *p, int signals[2], bool *has_address, uint64_t *address);
	/* Whether the saved state at P and the N bytes of code at its pc
	 * prove an integer divide error there (the platform's divide
	 * instruction, and a saved trap that does not contradict it); NULL:
	 * the platform's division does not trap (arm64's gives 0). */
	bool (*divide_error)(const uint8_t *p, const uint8_t *code, size_t n);
	/* The trampoline's first instructions (the rt_sigreturn system
	 * call), CODE_LEN bytes: what names it where no symbol does (a C
	 * library read without its symbol table); 0: not known. */
	const uint8_t *code;
	size_t code_len;
};

#define PLATFORM_CALL_DIRECT   1
#define PLATFORM_CALL_INDIRECT 2

struct platform {
	const char *name;                 /* "x86_64", as uname -m says */
	/* ELF: e_machine, and the class and data encoding of its cores */
	uint16_t elf_machine;
	uint8_t elf_class, elf_data;
	/* minidump: MINIDUMP_SYSTEM_INFO's ProcessorArchitecture values (up
	 * to two: Breakpad wrote arm64 under a number of its own before
	 * Microsoft's), and the bytes of a thread's CONTEXT that
	 * parse_minidump_context reads (a shorter context: the thread's
	 * registers are missing) */
	uint32_t minidump_cpus[2];
	unsigned nminidump_cpus;
	size_t minidump_context_size;
	/* The registers of the context at C (minidump_context_size bytes);
	 * tp is left as it is (a minidump keeps it apart, in the Teb field). */
	void (*parse_minidump_context)(const uint8_t *c, struct platform_regs *r);

	/* ELF core notes: NT_PRSTATUS's whole size (pr_cursig at 12 and
	 * pr_pid at 32 are every 64-bit Linux's; the registers follow at 112)
	 * and its registers; NULL for a note the platform does not take */
	size_t prstatus_size;
	void (*parse_prstatus)(const uint8_t *desc, struct platform_regs *r);
	/* The inverse of parse_prstatus: R's registers into the NT_PRSTATUS
	 * at DESC (prstatus_size bytes, zeroed by the caller; what R does not
	 * hold stays zero), for the compact cores of dumps that have no such
	 * notes (a minidump's); NULL when the platform cannot. */
	void (*write_prstatus)(const struct platform_regs *r, uint8_t *desc);
	/* Another register set of a thread (a core's note named "LINUX", of
	 * type TYPE, LEN bytes at DESC, which the kernel and gdb write after
	 * the thread's NT_PRSTATUS): the thread pointer, PAC masks or system
	 * call some architectures keep apart.  NULL when the platform takes
	 * none. */
	void (*parse_thread_note)(uint32_t type, const uint8_t *desc, size_t len,
				  struct platform_regs *r);

	/* NT_PRFPREG (a core's "CORE" note after the thread's NT_PRSTATUS,
	 * or PTRACE_GETREGSET's): FPREGS_SIZE bytes, whose vector registers
	 * parse_fpregs takes (LEN bytes at DESC: nothing when too short) */
	size_t fpregs_size;
	void (*parse_fpregs)(const uint8_t *desc, size_t len, struct platform_regs *r);
	/* its inverse, for compact cores: R's known vector registers' low
	 * bits into DESC (fpregs_size bytes, zeroed by the caller) */
	void (*write_fpregs)(const struct platform_regs *r, uint8_t *desc);
	/* the DWARF number of the first vector register, vec[0] */
	unsigned dwarf_vec;

	/* libdwfl: the general registers set for a thread's first frame
	 * (DWARF 0 .. dwarf_nregs-1, the pc apart) and the stack pointer's
	 * number */
	unsigned dwarf_nregs;
	unsigned dwarf_sp;
	/* the general registers (a bit per DWARF number) a call preserves,
	 * the psABI's callee-saved ones and the stack pointer: in a caller's
	 * frame only these can be known (native frames' arguments) */
	uint32_t dwarf_preserved;

	/* Unwinding where code has no call frame information (symbols/
	 * nocfi.c): the frame pointer's DWARF number (its frame record holds
	 * the caller's frame pointer at fp and the return address at fp + 8:
	 * x86-64 after push %rbp; mov %rsp,%rbp, aarch64's x29/x30 record),
	 * how many bytes of code before a return address call_before wants,
	 * and the size of a return address's stack slot. */
	unsigned dwarf_fp;
	unsigned dwarf_ra;                /* the return address's column in call frame information */
	unsigned call_window;
	/* What the N bytes of code ending at return address RA end with:
	 * PLATFORM_CALL_DIRECT, a call naming its target (*TARGET), and/or
	 * PLATFORM_CALL_INDIRECT, a call through a register or memory (its
	 * target unknown); 0 no call instruction. */
	int (*call_before)(const uint8_t *code, size_t n, uint64_t ra, uint64_t *target);
	/* When the N bytes at ADDR are a PLT stub, the address of the GOT
	 * slot it jumps through; 0 otherwise. */
	uint64_t (*plt_slot)(const uint8_t *code, size_t n, uint64_t addr);
	/* Whether the N bytes at a function's start set up its frame
	 * pointer (its frame record is then its own, not its caller's);
	 * NULL where that is not told by the code (every frame record is
	 * tried). */
	bool (*sets_frame_pointer)(const uint8_t *code, size_t n);
	/* A code address (a return address read from memory, a saved pc)
	 * without its pointer-authentication bits, given the thread's
	 * registers; the identity where there are none. */
	uint64_t (*code_address)(const struct platform_regs *r, uint64_t addr);

	/* futex(2)'s system call number */
	uint64_t sys_futex;

	/* (what depends on the C library -- struct pthread, its signal
	 * return trampolines -- is the libc seam's: libc.h) */

	/* Debian's multiarch tuple ("x86_64-linux-gnu"): the loader's
	 * default directories /lib/TUPLE and /usr/lib/TUPLE */
	const char *multiarch;

	struct platform_sigframe sigframe;
};

/* The platform of a core whose ELF header says MACHINE, CLASS (EI_CLASS)
 * and DATA (EI_DATA); NULL when pycore has none. */
const struct platform *platform_by_elf(uint16_t machine, uint8_t elf_class, uint8_t data);
/* The platform of a minidump whose system info says CPU; NULL when none. */
const struct platform *platform_by_minidump(uint32_t cpu);

/* The architecture's name, as uname -m says it ("aarch64", "ppc64le",
 * "s390x", "i386"), for any ELF machine, class and data encoding; for a
 * machine this table does not know, "machine type N" written into BUF. */
const char *platform_elf_name(uint16_t machine, uint8_t elf_class, uint8_t data, char *buf, size_t cap);
/* The same for a minidump's processor architecture. */
const char *platform_minidump_name(uint32_t cpu, char *buf, size_t cap);

/* The platform of a minidump that has no system info stream (every
 * producer on Linux writes one; a minidump without was read as x86_64's
 * before there were platforms, and still is). */
const struct platform *platform_minidump_default(void);
/* "an" or "a", for NAME ("an aarch64", "a ppc64le"). */
const char *platform_article(const char *name);

/* Whether NAME is one of P's (the kernel's) signal return trampolines
 * (dump_is_sigreturn adds the C library's). */
bool platform_is_sigreturn(const struct platform *p, const char *name);
/* Whether the N bytes at CODE are P's trampoline's first instructions. */
bool platform_is_sigreturn_code(const struct platform *p, const uint8_t *code, size_t n);

/* What the kernel's signal frame holds: the N bytes at P are the memory
 * from the trampoline frame's stack pointer on.  Fills the signal's
 * number, code and the word at siginfo's offset 16 (si_addr, or si_pid
 * and si_uid: every 64-bit Linux's siginfo_t, include/uapi/asm-generic/
 * siginfo.h) and the registers at the signal.  false when N is too short. */
struct platform_signal_frame {
	int signo, code;
	uint64_t word;
	struct platform_regs regs;
	/* siginfo looks written (si_signo 1-64, si_errno and the padding after
	 * si_code 0, as the kernel's zeroed copy has them): the kernel writes
	 * it for SA_SIGINFO handlers only, and the bytes are otherwise
	 * whatever the stack held */
	bool siginfo_written;
	/* the saved state names a hardware fault (mcontext_fault): the
	 * signals it may have been, and its address */
	bool trap_fault, has_fault_address;
	int trap_signals[2];
	uint64_t fault_address;
};
/* The bytes platform_parse_sigframe needs from the stack pointer on. */
size_t platform_sigframe_size(const struct platform *p);
bool platform_parse_sigframe(const struct platform *p, const uint8_t *mem, size_t n,
			     struct platform_signal_frame *out);

/* Little-endian integers (every platform here is little-endian). */
static inline uint64_t platform_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline void platform_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t platform_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

extern const struct platform platform_x86_64;
/* Written from the kernel's and glibc's facts and unit-tested, but not in
 * platform.c's list (so not in pycore) until real arm64 cores prove it. */
extern const struct platform platform_aarch64;

#endif
