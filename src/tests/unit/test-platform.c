/* Unit test of the platform seam (src/platform/) on synthetic input: the
 * x86-64 kernel signal frame as arch/x86/include/asm/sigframe.h and the
 * uapi ucontext and sigcontext headers lay it out (declared here as C
 * structs, apart from x86_64.c's offsets, so that the two agree only if
 * both follow the kernel), the platform lookups by ELF machine and
 * minidump processor, the names of machines pycore does not read, and
 * aarch64.c's parsers: NT_PRSTATUS, NT_ARM_TLS, NT_ARM_SYSTEM_CALL,
 * NT_ARM_PAC_MASK, a minidump ARM64 context and the signal frame of
 * arch/arm64/kernel/signal.c, each built here from the kernel's structs,
 * and both trampolines' code (the assembler's, the Arm ARM's encoding).
 * Parser tests only: no real process's notes or frames are read here. */
#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"
#include "platform/libc.h"
#include "tests/unit/unit.h"



/* The kernel's x86-64 structures (uapi asm/sigcontext.h, asm-generic/
 * ucontext.h, asm/sigframe.h), field by field. */
struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, pad0;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved1[8];
};
struct k_stack {
	uint64_t ss_sp;
	int32_t ss_flags;
	uint64_t ss_size;
};
struct k_ucontext {
	uint64_t uc_flags, uc_link;
	struct k_stack uc_stack;
	struct k_sigcontext uc_mcontext;
	uint64_t uc_sigmask;
};
struct k_siginfo {
	int32_t si_signo, si_errno, si_code, pad;
	uint64_t si_addr;
	uint8_t rest[128 - 24];
};
struct k_rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	struct k_siginfo info;
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext is 256 bytes");
_Static_assert(sizeof(struct k_ucontext) == 304, "ucontext is 304 bytes");

static void test_x86_64_sigframe(void)
{
	const struct platform *p = &platform_x86_64;
	struct k_rt_sigframe f;
	memset(&f, 0, sizeof(f));
	f.pretcode = 0x7f0000001000;          /* __restore_rt */
	struct k_sigcontext *sc = &f.uc.uc_mcontext;
	uint64_t *gp = &sc->r8;
	for (int i = 0; i < 16; i++)
		gp[i] = 0x1000 + (uint64_t)i;    /* r8 = 0x1000 ... rsp = 0x100f */
	sc->rsp = 0x7ffc0000f000;
	sc->rbp = 0x7ffc0000f100;
	sc->rip = 0x401234;
	sc->cr2 = 0xdead;
	f.info.si_signo = 11;
	f.info.si_code = 1;                   /* SEGV_MAPERR */
	f.info.si_addr = 0xdead;

	/* the handler returned into __restore_rt: its ret popped pretcode */
	const uint8_t *sp = (const uint8_t *)&f + offsetof(struct k_rt_sigframe, uc);
	size_t n = sizeof(f) - offsetof(struct k_rt_sigframe, uc);
	CHECK(platform_sigframe_size(p) <= n, "frame size %zu, have %zu", platform_sigframe_size(p), n);
	struct platform_signal_frame out;
	CHECK(platform_parse_sigframe(p, sp, n, &out), "parsed");
	CHECK(out.signo == 11 && out.code == 1 && out.word == 0xdead, "siginfo: %d %d %llx", out.signo,
	      out.code, (unsigned long long)out.word);
	CHECK(out.regs.pc == 0x401234, "pc %llx", (unsigned long long)out.regs.pc);
	CHECK(out.regs.sp == 0x7ffc0000f000, "sp %llx", (unsigned long long)out.regs.sp);
	CHECK(out.regs.fp == 0x7ffc0000f100, "fp %llx", (unsigned long long)out.regs.fp);
	/* DWARF numbering: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 8 r8,
	 * 15 r15, 16 the return address */
	CHECK(out.regs.dwarf[0] == sc->rax && out.regs.dwarf[1] == sc->rdx && out.regs.dwarf[2] == sc->rcx &&
	      out.regs.dwarf[3] == sc->rbx && out.regs.dwarf[4] == sc->rsi && out.regs.dwarf[5] == sc->rdi,
	      "rax rdx rcx rbx rsi rdi");
	CHECK(out.regs.dwarf[6] == sc->rbp && out.regs.dwarf[7] == sc->rsp, "rbp rsp");
	CHECK(out.regs.dwarf[8] == 0x1000 && out.regs.dwarf[15] == 0x1007, "r8 r15");
	CHECK(out.regs.dwarf[16] == 0x401234, "return address column");
	CHECK(out.siginfo_written, "siginfo written (signo 11, errno and padding 0)");
	CHECK(!out.trap_fault, "trapno 0 (what a thread that never faulted holds) is no fault");
	/* the saved state of a page fault (#PF, vector 14): cr2 its address,
	 * whatever siginfo holds (none for a handler without SA_SIGINFO) */
	sc->trapno = 14;
	f.info.si_signo = 0x5a5a5a;
	CHECK(platform_parse_sigframe(p, sp, n, &out) && out.trap_fault && out.has_fault_address &&
	      out.fault_address == 0xdead && out.trap_signals[0] == 11 && out.trap_signals[1] == 7,
	      "page fault from the saved state: %d %d %llx", out.trap_fault, out.has_fault_address,
	      (unsigned long long)out.fault_address);
	CHECK(!out.siginfo_written, "stack garbage is no siginfo");
	sc->trapno = 13;
	CHECK(platform_parse_sigframe(p, sp, n, &out) && out.trap_fault && !out.has_fault_address &&
	      out.trap_signals[0] == 11, "#GP: SIGSEGV, no address");
	CHECK(!platform_parse_sigframe(p, sp, platform_sigframe_size(p) - 1, &out), "short frame refused");
	/* #DE: trap 0 is proven only by a division at the pc (F7 /6 div,
	 * F7 /7 idiv, after a REX prefix; not F7 /0 test) */
	{
		const uint8_t *mc = sp + p->sigframe.mcontext;
		static const uint8_t div_rcx[] = { 0x48, 0xf7, 0xf1, 0x90 }, idiv_m[] = { 0xf7, 0x7d, 0xf8, 0x90 },
				     test_eax[] = { 0xf7, 0xc0, 0x01, 0x00, 0x00, 0x00 };
		sc->trapno = 0;
		CHECK(p->sigframe.divide_error(mc, div_rcx, sizeof(div_rcx)), "div %%rcx at trap 0: #DE");
		CHECK(p->sigframe.divide_error(mc, idiv_m, sizeof(idiv_m)), "idiv -8(%%rbp) at trap 0: #DE");
		CHECK(!p->sigframe.divide_error(mc, test_eax, sizeof(test_eax)), "test $1, %%eax: no division");
		sc->trapno = 14;
		CHECK(!p->sigframe.divide_error(mc, div_rcx, sizeof(div_rcx)), "a page fault's trap: no #DE");
	}

	/* x86-64's kernel has no trampoline of its own: the C library's */
	CHECK(!platform_is_sigreturn(p, "__restore_rt") && !platform_is_sigreturn(p, NULL), "no kernel trampoline");
	CHECK(p->code_address(&out.regs, 0x002b7fff81b0c064) == 0x002b7fff81b0c064, "no PAC on x86-64");
}

static void test_lookups(void)
{
	CHECK(platform_by_elf(EM_X86_64, ELFCLASS64, ELFDATA2LSB) == &platform_x86_64, "x86-64 core");
	CHECK(!platform_by_elf(EM_X86_64, ELFCLASS32, ELFDATA2LSB), "x32 core");
	CHECK(!platform_by_elf(EM_PPC64, ELFCLASS64, ELFDATA2MSB), "ppc64 core");
	CHECK(platform_by_minidump(9) == &platform_x86_64, "AMD64 minidump");
	CHECK(!platform_by_minidump(0), "x86 minidump");
	char buf[48];
	CHECK(strcmp(platform_elf_name(EM_PPC64, ELFCLASS64, ELFDATA2MSB, buf, sizeof(buf)), "ppc64") == 0, "ppc64");
	CHECK(strcmp(platform_elf_name(EM_S390, ELFCLASS64, ELFDATA2MSB, buf, sizeof(buf)), "s390x") == 0, "s390x");
	CHECK(strcmp(platform_elf_name(7777, ELFCLASS64, ELFDATA2LSB, buf, sizeof(buf)), "machine type 7777") == 0,
	      "unknown machine");
	CHECK(strcmp(platform_minidump_name(12, buf, sizeof(buf)), "aarch64") == 0, "ARM64 minidump");
	CHECK(strcmp(platform_minidump_name(0x8003, buf, sizeof(buf)), "aarch64") == 0, "Breakpad's old ARM64");
	CHECK(strcmp(platform_article("aarch64"), "an") == 0 && strcmp(platform_article("ppc64le"), "a") == 0 &&
	      strcmp(platform_article("s390x"), "an") == 0, "articles");
	CHECK(strcmp(platform_x86_64.multiarch, "x86_64-linux-gnu") == 0, "multiarch");
}

/* arm64's structures (uapi asm/ptrace.h, asm/sigcontext.h, asm/ucontext.h,
 * kernel/signal.c), field by field */
struct a64_user_pt_regs {
	uint64_t regs[31], sp, pc, pstate;
};
struct a64_sigcontext {
	uint64_t fault_address;
	uint64_t regs[31], sp, pc, pstate;
	uint8_t reserved[4096] __attribute__((aligned(16)));
};
struct a64_ucontext {
	uint64_t uc_flags, uc_link;
	struct k_stack uc_stack;
	uint64_t uc_sigmask;
	uint8_t unused[1024 / 8 - 8];
	struct a64_sigcontext uc_mcontext;
};
struct a64_rt_sigframe {
	struct k_siginfo info;
	struct a64_ucontext uc;
};
_Static_assert(sizeof(struct a64_user_pt_regs) == 272, "user_pt_regs is 34 words");

static void fill_a64(uint64_t *x, uint64_t *sp, uint64_t *pc)
{
	for (int i = 0; i < 31; i++)
		x[i] = 0xa000 + (uint64_t)i;
	*sp = 0xffffc0001000;
	*pc = 0xaaaab0001234;
}

static void test_aarch64(void)
{
	const struct platform *p = &platform_aarch64;
	/* NT_PRSTATUS: pr_cursig at 12, pr_pid at 32, user_pt_regs at 112 */
	uint8_t pr[392] = { 0 };
	CHECK(p->prstatus_size == sizeof(pr), "prstatus size %zu", p->prstatus_size);
	struct a64_user_pt_regs g;
	fill_a64(g.regs, &g.sp, &g.pc);
	g.pstate = 0x60001000;
	memcpy(pr + 112, &g, sizeof(g));
	struct platform_regs r;
	memset(&r, 0, sizeof(r));
	p->parse_prstatus(pr, &r);
	CHECK(r.dwarf[0] == 0xa000 && r.dwarf[30] == 0xa01e && r.dwarf[31] == 0xffffc0001000, "x0 x30 sp");
	CHECK(r.pc == 0xaaaab0001234 && r.sp == 0xffffc0001000 && r.fp == 0xa01d, "pc sp fp");
	CHECK(p->dwarf_nregs == 32 && p->dwarf_sp == 31, "DWARF: x0-x30, sp");

	/* the thread's other register sets */
	uint64_t tls[2] = { 0xffffb7ff8020, 0 };
	p->parse_thread_note(0x401, (const uint8_t *)tls, 8, &r);
	CHECK(r.tp == 0xffffb7ff8020, "NT_ARM_TLS (8 bytes): tp %llx", (unsigned long long)r.tp);
	tls[0] = 0xffffb7ff9020;
	p->parse_thread_note(0x401, (const uint8_t *)tls, 16, &r);
	CHECK(r.tp == 0xffffb7ff9020, "NT_ARM_TLS with tpidr2 (16 bytes)");
	int32_t no = -1;
	p->parse_thread_note(0x404, (const uint8_t *)&no, 4, &r);
	CHECK(!r.has_syscall, "NT_ARM_SYSTEM_CALL -1: none");
	no = 98;
	p->parse_thread_note(0x404, (const uint8_t *)&no, 4, &r);
	CHECK(r.has_syscall && r.syscall == p->sys_futex && !r.has_syscall_arg0, "NT_ARM_SYSTEM_CALL futex");
	uint64_t pac[2] = { 0x007f000000000000, 0x007f000000000000 };  /* data_mask, insn_mask */
	CHECK(p->code_address(&r, 0x002bffff81b0c064) == 0x002bffff81b0c064, "no mask: unchanged");
	p->parse_thread_note(0x406, (const uint8_t *)pac, sizeof(pac), &r);
	CHECK(p->code_address(&r, 0x002bffff81b0c064) == 0xffff81b0c064, "PAC stripped: %llx",
	      (unsigned long long)p->code_address(&r, 0x002bffff81b0c064));
	p->parse_thread_note(0x402, (const uint8_t *)pac, sizeof(pac), &r);   /* NT_ARM_HW_BREAK */
	CHECK(r.tp == 0xffffb7ff9020 && r.pac_mask == 0x007f000000000000, "other notes ignored");
	/* glibc: pthread_self() is the thread pointer less sizeof(struct pthread) */
	CHECK(r.tp + (uint64_t)libc_pthread_from_tp(libc_pthread(&libc_glibc, p->elf_machine)) ==
		      0xffffb7ff9020 - 1856, "pthread_self");

	/* a minidump ARM64 context: flags and cpsr, x0-x30, sp, pc */
	uint8_t ctx[272] = { 0 };
	memcpy(ctx + 8, g.regs, sizeof(g.regs));
	memcpy(ctx + 256, &g.sp, 8);
	memcpy(ctx + 264, &g.pc, 8);
	memset(&r, 0, sizeof(r));
	CHECK(p->minidump_context_size <= sizeof(ctx), "context size");
	p->parse_minidump_context(ctx, &r);
	CHECK(r.dwarf[5] == 0xa005 && r.sp == g.sp && r.pc == g.pc, "minidump context");
	CHECK(platform_by_minidump(12) == p && platform_by_minidump(0x8003) == p, "ARM64 minidumps");
	CHECK(platform_by_elf(EM_AARCH64, ELFCLASS64, ELFDATA2LSB) == p, "aarch64 core");
	CHECK(!platform_by_elf(EM_AARCH64, ELFCLASS64, ELFDATA2MSB), "aarch64_be core");

	/* the signal frame: sp at __kernel_rt_sigreturn is the rt_sigframe */
	static struct a64_rt_sigframe f;
	memset(&f, 0, sizeof(f));
	f.info.si_signo = 7;                  /* SIGBUS on arm64 too */
	f.info.si_code = 2;                   /* BUS_ADRERR */
	f.info.si_addr = 0xbeef;
	fill_a64(f.uc.uc_mcontext.regs, &f.uc.uc_mcontext.sp, &f.uc.uc_mcontext.pc);
	f.uc.uc_mcontext.fault_address = 0xbeef;
	struct platform_signal_frame out;
	CHECK(platform_parse_sigframe(p, (const uint8_t *)&f, sizeof(f), &out), "parsed");
	CHECK(out.signo == 7 && out.code == 2 && out.word == 0xbeef, "siginfo");
	CHECK(out.regs.pc == 0xaaaab0001234 && out.regs.sp == 0xffffc0001000 && out.regs.dwarf[30] == 0xa01e,
	      "registers at the signal: pc %llx", (unsigned long long)out.regs.pc);
	CHECK(offsetof(struct a64_rt_sigframe, uc.uc_mcontext) == p->sigframe.mcontext, "mcontext at %zu",
	      offsetof(struct a64_rt_sigframe, uc.uc_mcontext));
	CHECK(platform_is_sigreturn(p, "__kernel_rt_sigreturn"), "trampoline");
	CHECK(!out.trap_fault, "no ESR record: no fault the saved state names");

	/* a handler without SA_SIGINFO (siginfo unwritten) of a data abort:
	 * fpsimd_context, then esr_context, then the terminator */
	memset(&f.info, 0, sizeof(f.info));
	uint8_t *rec = f.uc.uc_mcontext.reserved;
	uint32_t fpsimd[2] = { 0x46508001u, 528 }, esr_head[2] = { 0x45535201u, 16 };
	uint64_t esr = (uint64_t)0x24 << 26 | 0x07;   /* DABT_LOW, translation fault level 3 */
	memcpy(rec, fpsimd, 8);
	memcpy(rec + 528, esr_head, 8);
	memcpy(rec + 536, &esr, 8);
	CHECK(platform_parse_sigframe(p, (const uint8_t *)&f, sizeof(f), &out), "parsed");
	CHECK(!out.siginfo_written, "siginfo unwritten");
	CHECK(out.trap_fault && out.trap_signals[0] == 11 && out.trap_signals[1] == 7 && out.has_fault_address &&
	      out.fault_address == 0xbeef, "a data abort: SIGSEGV or SIGBUS at 0xbeef");
	esr = (uint64_t)0x3c << 26;                   /* BRK64 */
	memcpy(rec + 536, &esr, 8);
	CHECK(platform_parse_sigframe(p, (const uint8_t *)&f, sizeof(f), &out) && out.trap_fault &&
	      out.trap_signals[0] == 5 && !out.has_fault_address, "BRK: SIGTRAP");
	esr = (uint64_t)0x15 << 26;                   /* SVC64: no fault */
	memcpy(rec + 536, &esr, 8);
	CHECK(platform_parse_sigframe(p, (const uint8_t *)&f, sizeof(f), &out) && !out.trap_fault, "SVC: none");
	fpsimd[1] = 4;                                /* a record too short: nothing believed */
	memcpy(rec, fpsimd, 8);
	CHECK(platform_parse_sigframe(p, (const uint8_t *)&f, sizeof(f), &out) && !out.trap_fault, "bad record");
}

/* The trampolines' code, as this machine's assembler writes it (x86-64:
 * "mov $15, %rax; syscall", glibc's and musl's __restore_rt), and as the
 * Arm ARM encodes aarch64's "mov x8, #139; svc #0" (MOVZ, 64-bit: 1 10
 * 100101 hw imm16 Rd; SVC: 11010100 000 imm16 000 01), compared with the
 * platforms' own tables. */
#if defined(__x86_64__)
__asm__(".pushsection .rodata\n.globl pt_restore_rt\npt_restore_rt:\n\tmov $15, %rax\n\tsyscall\n"
	".popsection\n");
extern const uint8_t pt_restore_rt[];
#endif

/* The frame setup GCC writes first in a function that keeps a frame
 * pointer, with and without an IBT landing pad, as this machine's
 * assembler writes it; and beginnings that keep none (musl's
 * __stack_chk_fail: sub $8, %rsp). */
#if defined(__x86_64__)
__asm__(".pushsection .rodata\n.globl pt_prologues\npt_prologues:\n"
	"\tpush %rbp\n\tmov %rsp, %rbp\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tendbr64\n\tpush %rbp\n\tmov %rsp, %rbp\n"
	"\tsub $8, %rsp\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tpush %rbx\n\tmov %rsp, %rbx\n\tnop\n\tnop\n\tnop\n\tnop\n.popsection\n");
extern const uint8_t pt_prologues[];

static void test_frame_setup(void)
{
	const struct platform *p = &platform_x86_64;
	CHECK(p->sets_frame_pointer(pt_prologues, 8), "push %%rbp; mov %%rsp,%%rbp");
	CHECK(p->sets_frame_pointer(pt_prologues + 8, 8), "endbr64 first");
	CHECK(!p->sets_frame_pointer(pt_prologues + 8, 7), "a shorter read");
	CHECK(!p->sets_frame_pointer(pt_prologues + 16, 8), "sub $8,%%rsp: no frame pointer");
	CHECK(!p->sets_frame_pointer(pt_prologues + 24, 8), "another register");
}
#endif

static void test_trampoline_code(void)
{
#if defined(__x86_64__)
	CHECK(platform_is_sigreturn_code(&platform_x86_64, pt_restore_rt, 9), "x86-64 __restore_rt's code");
	CHECK(!platform_is_sigreturn_code(&platform_x86_64, pt_restore_rt, 8), "a shorter read");
#endif
	uint32_t movz = 0xd2800000u | (139u << 5) | 8u, svc = 0xd4000001u;
	uint8_t a64[8];
	for (int i = 0; i < 4; i++) {
		a64[i] = (uint8_t)(movz >> (8 * i));
		a64[4 + i] = (uint8_t)(svc >> (8 * i));
	}
	CHECK(platform_is_sigreturn_code(&platform_aarch64, a64, sizeof(a64)), "aarch64 rt_sigreturn's code");
	CHECK(!platform_is_sigreturn_code(&platform_x86_64, a64, sizeof(a64)), "aarch64's code on x86-64");
	a64[0] ^= 1;   /* mov x9: another register, another call */
	CHECK(!platform_is_sigreturn_code(&platform_aarch64, a64, sizeof(a64)), "another instruction");
}

/* The libc seam: each C library's modules, trampolines and struct pthread
 * (the facts libc.c cites; check-musl checks musl's against real cores) */
static void test_libc(void)
{
	CHECK(libc_by_module("/lib/ld-musl-x86_64.so.1") == &libc_musl, "Alpine's loader");
	CHECK(libc_by_module("/usr/lib/x86_64-linux-musl/libc.so") == &libc_musl, "Debian's musl libc.so");
	CHECK(libc_by_module("/lib/libc.musl-aarch64.so.1") == &libc_musl, "Alpine's libc link");
	CHECK(libc_by_module("/lib64/ld-linux-x86-64.so.2") == &libc_glibc, "glibc's loader");
	CHECK(libc_by_module("/usr/lib/x86_64-linux-gnu/libc.so.6") == &libc_glibc, "glibc's libc");
	CHECK(!libc_by_module("/usr/lib/x86_64-linux-gnu/libc.so.6-musl/x") && !libc_by_module(NULL) &&
		      !libc_by_module("/opt/x86_64-linux-musl/libcrypto.so.3") && !libc_by_module("/usr/bin/python3"),
	      "others name none");
	CHECK(libc_holds_thread_list(&libc_musl, "/usr/lib/x86_64-linux-musl/libc.so") &&
		      !libc_holds_thread_list(&libc_musl, "/usr/lib/x86_64-linux-gnu/libc.so.6") &&
		      libc_holds_thread_list(&libc_glibc, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
	      "thread lists");
	CHECK(libc_is_sigreturn(&libc_glibc, "__restore_rt") && !libc_is_sigreturn(&libc_glibc, "__restore") &&
		      libc_is_sigreturn(&libc_musl, "__restore") && !libc_is_sigreturn(&libc_musl, NULL),
	      "trampolines");
	const struct libc_pthread *m = libc_pthread(&libc_musl, EM_X86_64), *a = libc_pthread(&libc_musl, 183);
	CHECK(m && libc_pthread_from_tp(m) == 0 && m->tid == 48, "musl x86-64: tp is struct pthread, tid at 48");
	CHECK(a && libc_pthread_from_tp(a) == -200 && a->tid == 32, "musl aarch64: 200 bytes below tp, tid at 32");
	CHECK(!libc_pthread(&libc_musl, 3), "no i386 facts");
	static const uint8_t musl_ro[] = "x\0No error information\0Illegal byte sequence\0Value too large for data type\0";
	static const uint8_t glibc_ro[] = "Success\0No error information\0Value too large for defined data type\0";
	static const uint8_t inside[] = "xNo error information\0Value too large for data type\0";
	CHECK(libc_by_bytes(musl_ro, sizeof(musl_ro)) == &libc_musl, "musl's strerror table");
	CHECK(!libc_by_bytes(glibc_ro, sizeof(glibc_ro)) && !libc_by_bytes(inside, sizeof(inside)) &&
		      !libc_by_bytes(musl_ro, 20) && !libc_by_bytes(NULL, 0),
	      "glibc's, a string inside another, a short read");
}

int main(void)
{
	test_trampoline_code();
#if defined(__x86_64__)
	test_frame_setup();
#endif
	test_x86_64_sigframe();
	test_lookups();
	test_aarch64();
	test_libc();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
