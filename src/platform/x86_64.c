/* x86-64 Linux: the platform facts (platform.h) of a process that ran on
 * x86-64.
 *
 * Sources of each fact:
 * - NT_PRSTATUS: the kernel's struct elf_prstatus (include/linux/
 *   elfcore.h) is 336 bytes on x86-64, its pr_reg the 27 registers of
 *   user_regs_struct (arch/x86/include/asm/user_64.h) at 112: r15, r14,
 *   r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi,
 *   orig_rax, rip, cs, eflags, rsp, ss, fs_base, gs_base, ds, es, fs, gs.
 *   orig_rax is the system call a thread is in (-1 when none); rdi, its
 *   first argument, is not clobbered by the syscall instruction.
 * - DWARF numbers: the System V AMD64 psABI's: 0 rax, 1 rdx, 2 rcx, 3 rbx,
 *   4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip),
 *   all 17 given to libdwfl as its x86-64 backend's own initial frame
 *   does.
 * - Minidump: ProcessorArchitecture 9 (PROCESSOR_ARCHITECTURE_AMD64,
 *   Microsoft's minidumpapiset.h; Breakpad's MD_CPU_ARCHITECTURE_AMD64);
 *   CONTEXT_AMD64 is 1232 bytes, EFlags at 68, Rax at 120, Rcx, Rdx, Rbx,
 *   Rsp, Rbp, Rsi, Rdi, R8 ... R15 every 8 bytes to 240, Rip at 248
 *   (winnt.h's CONTEXT; Breakpad's MDRawContextAMD64).
 * - struct pthread (glibc's, musl's): the libc seam's, libc.c.
 * - NT_PRFPREG: struct user_i387_struct (arch/x86/include/asm/user_64.h),
 *   512 bytes, the FXSAVE area: cwd, swd, ftw, fop, rip, rdp, mxcsr,
 *   mxcr_mask (32 bytes), st_space (128), then xmm_space, xmm0-15 of 16
 *   bytes each at 160.  DWARF numbers xmm0-15 are 17-32 (the psABI's).
 * - futex(2) is system call 202 (arch/x86/entry/syscalls/syscall_64.tbl).
 * - The signal frame: arch/x86/include/asm/sigframe.h's struct rt_sigframe
 *   is { char *pretcode; struct ucontext uc; struct siginfo info; }.  The
 *   handler is entered as if called, its stack pointer at pretcode (the
 *   address of the restorer, glibc's __restore_rt, sysdeps/unix/sysv/
 *   linux/x86_64/libc_sigaction.c); its ret pops it, so in __restore_rt
 *   the stack pointer is &uc.  struct ucontext (include/uapi/
 *   asm-generic/ucontext.h, which arch/x86/include/uapi/asm/ucontext.h
 *   includes) is uc_flags, uc_link, uc_stack (a 24-byte stack_t), then
 *   uc_mcontext at 40, a struct sigcontext (arch/x86/include/uapi/asm/
 *   sigcontext.h, 64-bit: r8 ... r15 at 0-56, rdi 64, rsi 72, rbp 80,
 *   rbx 88, rdx 96, rax 104, rcx 112, rsp 120, rip 128, eflags 136, four
 *   16-bit selectors, err 152, trapno 160, oldmask, cr2 176, fpstate,
 *   reserved1[8]: 256 bytes), then uc_sigmask (8 bytes): 304 bytes,
 *   siginfo right after -- written only for an SA_SIGINFO handler
 *   (arch/x86/kernel/signal_64.c, x64_setup_rt_frame), while trapno, err
 *   and cr2 are always the thread's last fault's (setup_sigcontext:
 *   thread.trap_nr, error_code, cr2, which the kernel sets only on the
 *   way to a fault's signal, arch/x86/mm/fault.c set_signal_archinfo and
 *   arch/x86/kernel/traps.c): the trap numbers are the CPU's vectors
 *   (arch/x86/include/asm/trapnr.h), 14 a page fault whose address is cr2.
 */
#include "platform/platform.h"

#include <elf.h>
#include <string.h>

#define PRSTATUS_SIZE      336
#define PRSTATUS_REGS      112
/* indexes of user_regs_struct */
enum { U_R15, U_R14, U_R13, U_R12, U_RBP, U_RBX, U_R11, U_R10, U_R9, U_R8, U_RAX, U_RCX, U_RDX,
       U_RSI, U_RDI, U_ORIG_RAX, U_RIP, U_CS, U_EFLAGS, U_RSP, U_SS, U_FS_BASE };
/* DWARF numbers */
enum { D_RAX, D_RDX, D_RCX, D_RBX, D_RSI, D_RDI, D_RBP, D_RSP, D_R8, D_R9, D_R10, D_R11,
       D_R12, D_R13, D_R14, D_R15, D_RIP, D_NREGS };

#define MD_CPU_AMD64       9
/* CONTEXT_AMD64 is 1232 bytes; the registers read end with Rip's */
#define MD_CONTEXT_READ    256
#define SYS_FUTEX          202
#define UCONTEXT_MCONTEXT  40
#define UCONTEXT_SIZE      304
#define SIGCONTEXT_SIZE    256

static void parse_prstatus(const uint8_t *desc, struct platform_regs *r)
{
	uint64_t u[U_FS_BASE + 1];
	for (int i = 0; i <= U_FS_BASE; i++)
		u[i] = platform_le64(desc + PRSTATUS_REGS + 8 * i);
	static const unsigned char from_user[D_NREGS] = {
		U_RAX, U_RDX, U_RCX, U_RBX, U_RSI, U_RDI, U_RBP, U_RSP,
		U_R8, U_R9, U_R10, U_R11, U_R12, U_R13, U_R14, U_R15, U_RIP,
	};
	for (int i = 0; i < D_NREGS; i++)
		r->dwarf[i] = u[from_user[i]];
	r->pc = u[U_RIP];
	r->sp = u[U_RSP];
	r->fp = u[U_RBP];
	r->tp = u[U_FS_BASE];
	/* orig_rax is -1 outside a system call */
	r->has_syscall = r->has_syscall_arg0 = (int64_t)u[U_ORIG_RAX] >= 0;
	r->syscall_known = true;
	r->syscall = r->has_syscall ? u[U_ORIG_RAX] : 0;
	r->syscall_arg0 = r->has_syscall ? u[U_RDI] : 0;
}

static void write_prstatus(const struct platform_regs *r, uint8_t *desc)
{
	uint64_t u[U_FS_BASE + 1] = { 0 };
	static const unsigned char user_of[D_NREGS] = {
		U_RAX, U_RDX, U_RCX, U_RBX, U_RSI, U_RDI, U_RBP, U_RSP,
		U_R8, U_R9, U_R10, U_R11, U_R12, U_R13, U_R14, U_R15, U_RIP,
	};
	for (int i = 0; i < D_NREGS; i++)
		u[user_of[i]] = r->dwarf[i];
	u[U_RIP] = r->pc;
	u[U_RSP] = r->sp;
	u[U_FS_BASE] = r->tp;
	u[U_ORIG_RAX] = r->has_syscall ? r->syscall : UINT64_MAX;
	if (r->has_syscall_arg0)
		u[U_RDI] = r->syscall_arg0;
	for (int i = 0; i <= U_FS_BASE; i++)
		platform_put_le64(desc + PRSTATUS_REGS + 8 * i, u[i]);
}

/* CONTEXT_AMD64: Rax ... R15 in DWARF-unrelated order from 120 */
static void parse_minidump_context(const uint8_t *c, struct platform_regs *r)
{
	static const unsigned char dwarf_of[16] = {
		D_RAX, D_RCX, D_RDX, D_RBX, D_RSP, D_RBP, D_RSI, D_RDI,
		D_R8, D_R9, D_R10, D_R11, D_R12, D_R13, D_R14, D_R15,
	};
	for (int i = 0; i < 16; i++)
		r->dwarf[dwarf_of[i]] = platform_le64(c + 120 + 8 * i);
	r->pc = r->dwarf[D_RIP] = platform_le64(c + 248);
	r->sp = r->dwarf[D_RSP];
	r->fp = r->dwarf[D_RBP];
}

#define FPREGS_SIZE 512
#define FPREGS_XMM 160

static void parse_fpregs(const uint8_t *desc, size_t len, struct platform_regs *r)
{
	if (len < FPREGS_SIZE)
		return;
	for (int i = 0; i < 16; i++)
		r->vec[i] = platform_le64(desc + FPREGS_XMM + 16 * i);
	r->vec_known = 0xffff;
}

static void write_fpregs(const struct platform_regs *r, uint8_t *desc)
{
	for (int i = 0; i < 16; i++)
		if (r->vec_known & (1u << i))
			platform_put_le64(desc + FPREGS_XMM + 16 * i, r->vec[i]);
}

/* struct sigcontext (64-bit): r8 ... r15, rdi, rsi, rbp, rbx, rdx, rax,
 * rcx, rsp, rip */
static void parse_mcontext(const uint8_t *p, struct platform_regs *r)
{
	static const unsigned char dwarf_of[16] = {
		D_R8, D_R9, D_R10, D_R11, D_R12, D_R13, D_R14, D_R15,
		D_RDI, D_RSI, D_RBP, D_RBX, D_RDX, D_RAX, D_RCX, D_RSP,
	};
	for (int i = 0; i < 16; i++)
		r->dwarf[dwarf_of[i]] = platform_le64(p + 8 * i);
	r->pc = r->dwarf[D_RIP] = platform_le64(p + 128);
	r->sp = r->dwarf[D_RSP];
	r->fp = r->dwarf[D_RBP];
}

/* The CPU's exception vectors that end in a signal of their own, and the
 * signals the kernel sends for each (arch/x86/kernel/traps.c, mm/fault.c:
 * a page fault is SIGSEGV, or SIGBUS past a file's end): #DB 1 and #BP 3
 * SIGTRAP, #OF 4 and #BR 5 SIGSEGV, #UD 6 SIGILL, #TS 10, #NP 11, #SS 12,
 * #GP 13 SIGSEGV (#SS: SIGBUS), #PF 14, #MF 16 and #XM 19 SIGFPE, #AC 17
 * SIGBUS, #CP 21 SIGSEGV.  #DE, vector 0, is left out: it is also what a
 * thread that never faulted holds. */
static bool mcontext_fault(const uint8_t *p, int signals[2], bool *has_address, uint64_t *address)
{
	static const struct { unsigned char trap, sig[2]; } traps[] = {
		{ 1, { 5, 0 } }, { 3, { 5, 0 } }, { 4, { 11, 0 } }, { 5, { 11, 0 } }, { 6, { 4, 0 } },
		{ 10, { 11, 0 } }, { 11, { 7, 11 } }, { 12, { 7, 11 } }, { 13, { 11, 0 } }, { 14, { 11, 7 } },
		{ 16, { 8, 0 } }, { 17, { 7, 0 } }, { 19, { 8, 0 } }, { 21, { 11, 0 } },
	};
	uint64_t trapno = platform_le64(p + 160);
	*has_address = false;
	for (size_t i = 0; i < sizeof(traps) / sizeof(traps[0]); i++) {
		if (trapno == traps[i].trap) {
			signals[0] = traps[i].sig[0];
			signals[1] = traps[i].sig[1];
			if (trapno == 14) {
				*has_address = true;
				*address = platform_le64(p + 176);
			}
			return true;
		}
	}
	return false;
}

/* #DE (trap 0, which mcontext_fault cannot tell from a thread that never
 * faulted) proven by the instruction at the saved pc being a division:
 * DIV or IDIV, F6 or F7 with ModRM's reg field 6 or 7 (Intel SDM vol. 2,
 * "DIV", "IDIV"), after any legacy prefixes and a REX prefix. */
static bool divide_error(const uint8_t *p, const uint8_t *code, size_t n)
{
	if (platform_le64(p + 160) != 0)
		return false;
	size_t i = 0;
	static const uint8_t legacy[] = { 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65 };
	while (i < n && i < 4 && memchr(legacy, code[i], sizeof(legacy)))
		i++;
	if (i < n && (code[i] & 0xf0) == 0x40)
		i++;
	if (i + 1 >= n || (code[i] != 0xf6 && code[i] != 0xf7))
		return false;
	unsigned reg = code[i + 1] >> 3 & 7;
	return reg == 6 || reg == 7;
}

static uint64_t code_address(const struct platform_regs *r, uint64_t addr)
{
	(void)r;
	return addr;
}

/* The length of an instruction FF /r from its ModRM byte on (SIB and
 * displacement included): Intel SDM vol. 2, 2.1.5, tables 2-2 and 2-3. */
static size_t modrm_length(const uint8_t *m, size_t n)
{
	unsigned mod = m[0] >> 6, rm = m[0] & 7;
	size_t len = 1;
	if (mod != 3 && rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;
	}
	if (mod == 0 && rm == 5)
		len += 4;
	else if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/* call rel32 (E8 cd), or call r/m64 (FF /2, any ModRM form; a REX or
 * other prefix before the FF changes nothing here) ending at RA.  The
 * bytes may read as both (the last four of a call rel32 can end like an
 * FF /2): each reading is given. */
static int call_before(const uint8_t *c, size_t n, uint64_t ra, uint64_t *target)
{
	int kinds = 0;
	if (n >= 5 && c[n - 5] == 0xe8) {
		int32_t rel = (int32_t)((uint32_t)c[n - 4] | (uint32_t)c[n - 3] << 8 | (uint32_t)c[n - 2] << 16 |
					(uint32_t)c[n - 1] << 24);
		*target = ra + (uint64_t)(int64_t)rel;
		kinds |= PLATFORM_CALL_DIRECT;
	}
	for (size_t len = 2; len <= 7 && len <= n; len++) {
		const uint8_t *m = c + n - len + 1;
		if (c[n - len] == 0xff && (m[0] >> 3 & 7) == 2 && modrm_length(m, len - 1) == len - 1)
			kinds |= PLATFORM_CALL_INDIRECT;
	}
	return kinds;
}

/* A PLT entry: [endbr64] [bnd] jmp *disp32(%rip) (FF 25), the shapes of
 * binutils' lazy and IBT .plt/.plt.sec entries. */
static uint64_t plt_slot(const uint8_t *c, size_t n, uint64_t addr)
{
	size_t i = 0;
	if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;
	if (i < n && c[i] == 0xf2)
		i++;
	if (i + 6 > n || c[i] != 0xff || c[i + 1] != 0x25)
		return 0;
	int32_t disp = (int32_t)((uint32_t)c[i + 2] | (uint32_t)c[i + 3] << 8 | (uint32_t)c[i + 4] << 16 |
				 (uint32_t)c[i + 5] << 24);
	return addr + i + 6 + (uint64_t)(int64_t)disp;
}

/* [endbr64] push %rbp (55); mov %rsp,%rbp (48 89 e5): GCC's and clang's
 * frame setup, first in a function that keeps a frame pointer. */
static bool sets_frame_pointer(const uint8_t *c, size_t n)
{
	size_t i = 0;
	if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;
	return i + 4 <= n && c[i] == 0x55 && c[i + 1] == 0x48 && c[i + 2] == 0x89 && c[i + 3] == 0xe5;
}

/* the kernel has no trampoline of its own on x86-64: the C library's
 * (libc.c) is the sa_restorer its sigaction gives.  __restore_rt is "mov $15, %rax; syscall" (rt_sigreturn is system call
 * 15: syscall_64.tbl), glibc's (sysdeps/unix/sysv/linux/x86_64/
 * libc_sigaction.c, RESTORE) and musl's (src/signal/x86_64/restore.s)
 * alike: 48 c7 c0 0f 00 00 00, then 0f 05 */
static const uint8_t trampoline_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

const struct platform platform_x86_64 = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.elf_class = ELFCLASS64,
	.elf_data = ELFDATA2LSB,
	.minidump_cpus = { MD_CPU_AMD64 },
	.nminidump_cpus = 1,
	.minidump_context_size = MD_CONTEXT_READ,
	.parse_minidump_context = parse_minidump_context,
	.prstatus_size = PRSTATUS_SIZE,
	.parse_prstatus = parse_prstatus,
	.write_prstatus = write_prstatus,
	.parse_thread_note = NULL,
	.fpregs_size = FPREGS_SIZE,
	.parse_fpregs = parse_fpregs,
	.write_fpregs = write_fpregs,
	.dwarf_vec = 17,
	.dwarf_nregs = D_NREGS,
	.dwarf_sp = D_RSP,
	/* the System V x86-64 psABI, 3.2.1: rbx, rbp, rsp, r12-r15 belong to
	 * the caller */
	.dwarf_preserved = 1u << D_RBX | 1u << D_RBP | 1u << D_RSP | 1u << D_R12 | 1u << D_R13 | 1u << D_R14 |
			   1u << D_R15,
	.dwarf_fp = D_RBP,
	.dwarf_ra = D_RIP,
	.call_window = 8,
	.call_before = call_before,
	.plt_slot = plt_slot,
	.sets_frame_pointer = sets_frame_pointer,
	.code_address = code_address,
	.sys_futex = SYS_FUTEX,
	.multiarch = "x86_64-linux-gnu",
	.sigframe = {
		.trampolines = NULL,
		.siginfo = UCONTEXT_SIZE,
		.mcontext = UCONTEXT_MCONTEXT,
		.mcontext_size = SIGCONTEXT_SIZE,
		/* struct sigcontext: r8..r15, rdi, rsi, rbp, rbx, rdx, rax,
		 * rcx, rsp, rip (parse_mcontext) */
		.mcontext_sp = 8 * 15,
		.mcontext_pc = 8 * 16,
		.parse_mcontext = parse_mcontext,
		.mcontext_fault = mcontext_fault,
		.divide_error = divide_error,
		.code = trampoline_code,
		.code_len = sizeof(trampoline_code),
	},
};
