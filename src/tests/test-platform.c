/* Unit test of the platform seam (src/platform/) on synthetic input: the
 * x86-64 kernel signal frame as arch/x86/include/asm/sigframe.h and the
 * uapi ucontext and sigcontext headers lay it out (declared here as C
 * structs, apart from x86_64.c's offsets, so that the two agree only if
 * both follow the kernel), the platform lookups by ELF machine and
 * minidump processor, and the names of machines pycore does not read.
 * A parser test: no real process's frame is read here. */
#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"

static int failures, checks;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		checks++;                                                       \
		if (!(cond)) {                                                  \
			failures++;                                             \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
		}                                                               \
	} while (0)

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
	CHECK(!platform_parse_sigframe(p, sp, platform_sigframe_size(p) - 1, &out), "short frame refused");

	CHECK(platform_is_sigreturn(p, "__restore_rt"), "__restore_rt");
	CHECK(!platform_is_sigreturn(p, "__restore") && !platform_is_sigreturn(p, NULL), "others");
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

int main(void)
{
	test_x86_64_sigframe();
	test_lookups();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
