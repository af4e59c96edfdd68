/* aarch64 Linux: the platform facts (platform.h) of a process that ran on
 * arm64.  Unit-tested on synthetic notes and frames (test-platform) and
 * checked on real arm64 kernel cores and gcores of Debian 12 and unstable
 * (check-arm64, src/tests/arm64-facts.txt).
 *
 * Sources of each fact:
 * - NT_PRSTATUS: struct elf_prstatus (include/linux/elfcore.h) with
 *   pr_reg an elf_gregset_t, which on arm64 is struct user_pt_regs
 *   (arch/arm64/include/uapi/asm/ptrace.h: regs[31], sp, pc, pstate) at
 *   112, then pr_fpvalid: 392 bytes.
 * - Other register sets, notes named "LINUX" after each thread's
 *   NT_PRSTATUS (include/uapi/linux/elf.h; arch/arm64/kernel/ptrace.c's
 *   aarch64_regsets): NT_ARM_TLS 0x401 (tpidr_el0, then tpidr2_el0 on
 *   kernels with SME), NT_ARM_SYSTEM_CALL 0x404 (the int syscallno, -1
 *   when none: do_signal's forget_syscall sets that before a fatal signal
 *   is taken, so a core's threads mostly say none), NT_ARM_PAC_MASK 0x406
 *   (struct user_pac_mask: data_mask, insn_mask).  The first argument of
 *   a system call (orig_x0) is in no note: x0 may hold its result.
 * - DWARF numbers: the DWARF for the Arm 64-bit Architecture (AADWARF64):
 *   0-30 x0-x30, 31 sp; the pc is given to libdwfl apart, as its aarch64
 *   backend's own initial frame does.
 * - Pointer authentication: a return address signed by PAC holds its code
 *   in the bits insn_mask names; the address is the value with them
 *   cleared (user addresses have bit 55 clear).
 * - Minidump: ProcessorArchitecture 12 (PROCESSOR_ARCHITECTURE_ARM64) and
 *   Breakpad's older 0x8003 (MD_CPU_ARCHITECTURE_ARM64_OLD).  Breakpad's
 *   src/google_breakpad/common/minidump_cpu_arm64.h (read in a copy of
 *   Breakpad's tree, github.com/renewedvision/breakpad at 2c4e4501):
 *   MDRawContextARM64 (Microsoft's ARM64_NT_CONTEXT, which lldb and
 *   Crashpad write) is uint32 context_flags, uint32 cpsr, then
 *   uint64 iregs[33] (x0-x30, x31 = sp, then pc) at 8;
 *   MDRawContextARM64_Old (packed to 4) is uint64 context_flags, then the
 *   same iregs[33] at 8.  So in both x0-x30 are at 8-248, sp at 256 and
 *   pc at 264.
 * - struct pthread (glibc's, musl's): the libc seam's, libc.c.
 * - futex(2) is system call 98 (include/uapi/asm-generic/unistd.h).
 * - The signal frame (arch/arm64/kernel/signal.c): struct rt_sigframe is
 *   { struct siginfo info; struct ucontext uc; }, and setup_return sets
 *   the handler's sp to it and x30 to the trampoline (the vDSO's
 *   __kernel_rt_sigreturn, or the sa_restorer given), so in the
 *   trampoline sp is the frame: siginfo at 0 (128 bytes), uc at 128.
 *   struct ucontext (arch/arm64/include/uapi/asm/ucontext.h): uc_flags,
 *   uc_link, uc_stack (24 bytes), uc_sigmask (8) and padding to 1024 bits
 *   of mask, then uc_mcontext, 16-byte aligned, at 176: struct sigcontext
 *   (arch/arm64/include/uapi/asm/sigcontext.h): fault_address, regs[31],
 *   sp, pc, pstate, then __reserved (4096 bytes, 16-byte aligned, at 288
 *   in it): records of { u32 magic, u32 size } (struct _aarch64_ctx),
 *   fpsimd_context (FPSIMD_MAGIC 0x46508001, 528 bytes) first, then,
 *   when the thread has taken a fault (current->thread.fault_code, set
 *   on the way to a fault's signal: mm/fault.c set_thread_esr, traps.c
 *   arm64_notify_die; signal.c setup_sigframe_layout), esr_context
 *   (ESR_MAGIC 0x45535201, 16 bytes: the head, then the ESR), ended by a
 *   record of magic 0.  So the saved registers are at sp + 304.
 * - A fault's ESR (arch/arm64/include/asm/esr.h): its class in bits
 *   31-26; what each ends in (mm/fault.c's fault_info and
 *   do_sp_pc_abort, kernel/traps.c): data and instruction aborts from
 *   EL0 (0x24, 0x20) SIGSEGV, or SIGBUS (alignment, external abort), at
 *   fault_address; PC and SP alignment (0x22, 0x26) SIGBUS there; unknown
 *   (0x00), illegal state (0x0e), BTI (0x0d), trapped system register
 *   (0x18), pointer authentication (0x1c) SIGILL; floating point (0x2c)
 *   SIGFPE; breakpoints, steps, watchpoints, BRK (0x30, 0x32, 0x34,
 *   0x3c) SIGTRAP.
 */
#include "platform/platform.h"

#include <elf.h>

#define PRSTATUS_SIZE      392
#define PRSTATUS_REGS      112
#define NT_TLS             0x401   /* NT_ARM_TLS */
#define NT_SYSTEM_CALL     0x404   /* NT_ARM_SYSTEM_CALL */
#define NT_PAC_MASK        0x406   /* NT_ARM_PAC_MASK */
#define D_SP               31
#define D_NREGS            32
#define MD_CPU_ARM64       12
#define MD_CPU_ARM64_OLD   0x8003
#define MD_CONTEXT_READ    272     /* through pc */
#define SYS_FUTEX          98
#define PAC_MASK_VA48      0x007f000000000000ull
#define SIGFRAME_UC        128
#define UCONTEXT_MCONTEXT  176
#define SIGCONTEXT_REGS    280     /* fault_address, regs[31], sp, pc, pstate */
#define SIGCONTEXT_RESERVED 288
#define SIGCONTEXT_READ    (SIGCONTEXT_RESERVED + 4096)
#define ESR_MAGIC          0x45535201u

/* x0-x30 then sp, pc at P */
static void take_gregs(const uint8_t *p, struct platform_regs *r)
{
	for (int i = 0; i < D_NREGS; i++)
		r->dwarf[i] = platform_le64(p + 8 * i);
	r->sp = r->dwarf[D_SP];
	r->pc = platform_le64(p + 8 * D_NREGS);
	r->fp = r->dwarf[29];
}

static void parse_prstatus(const uint8_t *desc, struct platform_regs *r)
{
	take_gregs(desc + PRSTATUS_REGS, r);
}

/* NT_PRFPREG: struct user_fpsimd_state (arch/arm64/include/uapi/asm/
 * ptrace.h), __uint128_t vregs[32] at 0 then fpsr and fpcr: 528 bytes.
 * DWARF numbers v0-v31 are 64-95 (the AArch64 DWARF ABI). */
#define FPREGS_SIZE 528

static void parse_fpregs(const uint8_t *desc, size_t len, struct platform_regs *r)
{
	if (len < FPREGS_SIZE)
		return;
	for (int i = 0; i < 32; i++)
		r->vec[i] = platform_le64(desc + 16 * i);
	r->vec_known = 0xffffffffu;
}

static void write_fpregs(const struct platform_regs *r, uint8_t *desc)
{
	for (int i = 0; i < 32; i++)
		if (r->vec_known & (1u << i))
			platform_put_le64(desc + 16 * i, r->vec[i]);
}

static void parse_thread_note(uint32_t type, const uint8_t *desc, size_t len, struct platform_regs *r)
{
	switch (type) {
	case NT_TLS:
		if (len >= 8)
			r->tp = platform_le64(desc);
		break;
	case NT_SYSTEM_CALL:
		r->syscall_known = len >= 4;
		if (len >= 4 && (int32_t)platform_le32(desc) >= 0) {
			r->has_syscall = true;
			r->syscall = platform_le32(desc);
		}
		break;
	case NT_PAC_MASK:
		if (len >= 16)
			r->pac_mask = platform_le64(desc + 8);
		break;
	default:
		break;
	}
}

/* A minidump keeps no PAC mask: Linux's for 48-bit user addresses, the
 * mask every thread of the arm64 cores here had (arm64-facts.txt; the
 * kernel's ptrauth_user_pac_mask() is bits 54 down to the number of
 * virtual address bits, 48 unless a process asks for more). */
static void parse_minidump_context(const uint8_t *c, struct platform_regs *r)
{
	take_gregs(c + 8, r);
	r->pac_mask = PAC_MASK_VA48;
}

/* struct sigcontext: the registers after fault_address */
static void parse_mcontext(const uint8_t *p, struct platform_regs *r)
{
	take_gregs(p + 8, r);
}

/* The saved state's fault: the ESR record among __reserved's, and what
 * its exception class ends in (see above) */
static bool mcontext_fault(const uint8_t *p, int signals[2], bool *has_address, uint64_t *address)
{
	static const struct { unsigned char ec, sig[2]; bool address; } classes[] = {
		{ 0x24, { 11, 7 }, true }, { 0x20, { 11, 7 }, true }, { 0x22, { 7, 0 }, true },
		{ 0x26, { 7, 0 }, true }, { 0x00, { 4, 0 }, false }, { 0x0e, { 4, 0 }, false },
		{ 0x0d, { 4, 0 }, false }, { 0x18, { 4, 0 }, false }, { 0x1c, { 4, 0 }, false },
		{ 0x2c, { 8, 0 }, false }, { 0x30, { 5, 0 }, false }, { 0x32, { 5, 0 }, false },
		{ 0x34, { 5, 0 }, false }, { 0x3c, { 5, 0 }, false },
	};
	*has_address = false;
	for (size_t off = SIGCONTEXT_RESERVED; off + 16 <= SIGCONTEXT_READ;) {
		uint32_t magic = platform_le32(p + off), size = platform_le32(p + off + 4);
		if (magic == 0 || size < 8 || size % 8 != 0 || size > SIGCONTEXT_READ - off)
			return false;
		if (magic == ESR_MAGIC && size >= 16) {
			uint64_t esr = platform_le64(p + off + 8);
			unsigned ec = (unsigned)(esr >> 26) & 0x3f;
			for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
				if (classes[i].ec != ec)
					continue;
				signals[0] = classes[i].sig[0];
				signals[1] = classes[i].sig[1];
				if ((*has_address = classes[i].address))
					*address = platform_le64(p);
				return true;
			}
			return false;
		}
		off += size;
	}
	return false;
}

static uint64_t code_address(const struct platform_regs *r, uint64_t addr)
{
	return addr & ~r->pac_mask;
}

static uint32_t insn_at(const uint8_t *c)
{
	return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

/* The instruction before RA: BL imm26 (100101 imm26), or BLR Xn and the
 * pointer-authenticating BLRAA/BLRAB/BLRAAZ/BLRABZ (Arm ARM, C6.2). */
static int call_before(const uint8_t *c, size_t n, uint64_t ra, uint64_t *target)
{
	if (n < 4)
		return 0;
	uint32_t i = insn_at(c + n - 4);
	if ((i & 0xfc000000u) == 0x94000000u) {
		int64_t imm = (int64_t)((uint64_t)(i & 0x03ffffffu) << 38) >> 36;  /* imm26 * 4, signed */
		*target = ra - 4 + (uint64_t)imm;
		return PLATFORM_CALL_DIRECT;
	}
	if ((i & 0xfffffc1fu) == 0xd63f0000u || (i & 0xfefff800u) == 0xd63f0800u)
		return PLATFORM_CALL_INDIRECT;
	return 0;
}

/* A PLT entry: [BTI c] ADRP x16, page; LDR x17, [x16, #off]; ... BR x17
 * (binutils' aarch64 PLT entries). */
static uint64_t plt_slot(const uint8_t *c, size_t n, uint64_t addr)
{
	size_t k = 0;
	if (n >= 4 && insn_at(c) == 0xd503245fu)
		k = 4;
	if (k + 8 > n)
		return 0;
	uint32_t adrp = insn_at(c + k), ldr = insn_at(c + k + 4);
	if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u)
		return 0;
	uint64_t imm = (uint64_t)((adrp >> 29 & 3) | (adrp >> 5 & 0x7ffff) << 2);
	int64_t off = (int64_t)(imm << 43) >> 31;  /* imm21 << 12, signed */
	return ((addr + k) & ~(uint64_t)0xfff) + (uint64_t)off + (uint64_t)(ldr >> 10 & 0xfff) * 8;
}

static const char *const trampolines[] = { "__kernel_rt_sigreturn", NULL };
/* the vDSO's __kernel_rt_sigreturn (arch/arm64/kernel/vdso/sigreturn.S)
 * and musl's __restore_rt: "mov x8, #139; svc #0" (rt_sigreturn is 139 in
 * asm-generic/unistd.h): movz x8 is 0xd2801168, svc #0 0xd4000001 */
static const uint8_t trampoline_code[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };

const struct platform platform_aarch64 = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.elf_class = ELFCLASS64,
	.elf_data = ELFDATA2LSB,
	.minidump_cpus = { MD_CPU_ARM64, MD_CPU_ARM64_OLD },
	.nminidump_cpus = 2,
	.minidump_context_size = MD_CONTEXT_READ,
	.parse_minidump_context = parse_minidump_context,
	.prstatus_size = PRSTATUS_SIZE,
	.parse_prstatus = parse_prstatus,
	.parse_thread_note = parse_thread_note,
	.fpregs_size = FPREGS_SIZE,
	.parse_fpregs = parse_fpregs,
	.write_fpregs = write_fpregs,
	.dwarf_vec = 64,
	.dwarf_nregs = D_NREGS,
	.dwarf_sp = D_SP,
	/* AAPCS64, 6.1.1: x19-x29 and sp are preserved across a call */
	.dwarf_preserved = 0xffu << 19 | 7u << 27 | 1u << D_SP,
	.dwarf_fp = 29,
	.dwarf_ra = 30,
	.call_window = 4,
	.call_before = call_before,
	.plt_slot = plt_slot,
	.code_address = code_address,
	.sys_futex = SYS_FUTEX,
	.multiarch = "aarch64-linux-gnu",
	.sigframe = {
		.trampolines = trampolines,
		.siginfo = 0,
		.mcontext = SIGFRAME_UC + UCONTEXT_MCONTEXT,
		.mcontext_size = SIGCONTEXT_READ,
		/* struct sigcontext: fault_address, regs[31], sp, pc
		 * (take_gregs from its second word) */
		.mcontext_sp = 8 + 8 * D_SP,
		.mcontext_pc = 8 + 8 * D_NREGS,
		.parse_mcontext = parse_mcontext,
		.mcontext_fault = mcontext_fault,
		.unwind_from_mcontext = true,
		.entered_at_symbol = true,
		.code = trampoline_code,
		.code_len = sizeof(trampoline_code),
	},
};
