/* The platforms pycore reads, found by what a dump says about its
 * machine, and the names of the machines it does not read. */
#include "platform/platform.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

/* Every platform file's struct platform. */
static const struct platform *const platforms[] = {
	&platform_x86_64,
	&platform_aarch64,
};
#define NPLATFORMS (sizeof(platforms) / sizeof(platforms[0]))

const struct platform *platform_by_elf(uint16_t machine, uint8_t elf_class, uint8_t data)
{
	for (size_t i = 0; i < NPLATFORMS; i++)
		if (platforms[i]->elf_machine == machine && platforms[i]->elf_class == elf_class &&
		    platforms[i]->elf_data == data)
			return platforms[i];
	return NULL;
}

const struct platform *platform_by_minidump(uint32_t cpu)
{
	for (size_t i = 0; i < NPLATFORMS; i++)
		for (unsigned k = 0; k < platforms[i]->nminidump_cpus && k < 2; k++)
			if (platforms[i]->minidump_cpus[k] == cpu)
				return platforms[i];
	return NULL;
}

const struct platform *platform_minidump_default(void)
{
	return &platform_x86_64;
}

const char *platform_article(const char *name)
{
	return strchr("aeiox", name[0]) || strncmp(name, "s390", 4) == 0 ? "an" : "a";
}

/* e_machine values from glibc's elf.h (the System V gABI's registry);
 * names as the Linux kernel's uname -m gives them for each class and
 * byte order */
const char *platform_elf_name(uint16_t machine, uint8_t elf_class, uint8_t data, char *buf, size_t cap)
{
	bool b64 = elf_class == ELFCLASS64, le = data == ELFDATA2LSB;
	switch (machine) {
	case 2: return "sparc";                                  /* EM_SPARC */
	case 3: return "i386";                                   /* EM_386 */
	case 4: return "m68k";                                   /* EM_68K */
	case 8: return b64 ? (le ? "mips64el" : "mips64") : (le ? "mipsel" : "mips"); /* EM_MIPS */
	case 15: return b64 ? "parisc64" : "parisc";             /* EM_PARISC */
	case 20: return "ppc";                                   /* EM_PPC */
	case 21: return le ? "ppc64le" : "ppc64";                /* EM_PPC64 */
	case 22: return b64 ? "s390x" : "s390";                  /* EM_S390 */
	case 40: return le ? "arm" : "armeb";                    /* EM_ARM */
	case 42: return "sh";                                    /* EM_SH */
	case 43: return "sparc64";                               /* EM_SPARCV9 */
	case 50: return "ia64";                                  /* EM_IA_64 */
	case 62: return b64 ? "x86_64" : "x32";                  /* EM_X86_64 */
	case 183: return le ? "aarch64" : "aarch64_be";          /* EM_AARCH64 */
	case 243: return b64 ? "riscv64" : "riscv32";            /* EM_RISCV */
	case 258: return "loongarch64";                          /* EM_LOONGARCH */
	case 0x9026: return "alpha";                             /* EM_ALPHA */
	default:
		snprintf(buf, cap, "machine type %u", machine);
		return buf;
	}
}

/* ProcessorArchitecture values: Microsoft's PROCESSOR_ARCHITECTURE_*
 * (winnt.h) and Breakpad's additions (minidump_format.h,
 * MD_CPU_ARCHITECTURE_*) */
const char *platform_minidump_name(uint32_t cpu, char *buf, size_t cap)
{
	switch (cpu) {
	case 0: return "i386";
	case 1: return "mips";
	case 2: return "alpha";
	case 3: return "ppc";
	case 4: return "sh";
	case 5: return "arm";
	case 6: return "ia64";
	case 9: return "x86_64";
	case 12: return "aarch64";         /* PROCESSOR_ARCHITECTURE_ARM64 */
	case 0x8001: return "sparc";
	case 0x8002: return "ppc64";
	case 0x8003: return "aarch64";     /* Breakpad's MD_CPU_ARCHITECTURE_ARM64_OLD */
	case 0x8004: return "mips64";
	case 0x8005: return "riscv32";
	case 0x8006: return "riscv64";
	default:
		snprintf(buf, cap, "processor architecture %u", cpu);
		return buf;
	}
}

bool platform_is_sigreturn(const struct platform *p, const char *name)
{
	for (const char *const *t = p->sigframe.trampolines; name && t && *t; t++)
		if (strcmp(*t, name) == 0)
			return true;
	return false;
}

bool platform_is_sigreturn_code(const struct platform *p, const uint8_t *code, size_t n)
{
	return p->sigframe.code_len && n >= p->sigframe.code_len &&
	       memcmp(code, p->sigframe.code, p->sigframe.code_len) == 0;
}

/* si_signo, si_errno, si_code, padding, then the union whose first word
 * is si_addr (or si_pid and si_uid) */
#define SIGINFO_SIGNO 0
#define SIGINFO_ERRNO 4
#define SIGINFO_CODE  8
#define SIGINFO_PAD   12
#define SIGINFO_WORD  16
#define SIGINFO_READ  24

size_t platform_sigframe_size(const struct platform *p)
{
	size_t a = p->sigframe.siginfo + SIGINFO_READ, b = p->sigframe.mcontext + p->sigframe.mcontext_size;
	return a > b ? a : b;
}

bool platform_parse_sigframe(const struct platform *p, const uint8_t *mem, size_t n,
			     struct platform_signal_frame *out)
{
	memset(out, 0, sizeof(*out));
	if (!p->sigframe.parse_mcontext || n < platform_sigframe_size(p))
		return false;
	const uint8_t *si = mem + p->sigframe.siginfo;
	out->signo = (int32_t)platform_le32(si + SIGINFO_SIGNO);
	out->code = (int32_t)platform_le32(si + SIGINFO_CODE);
	out->word = platform_le64(si + SIGINFO_WORD);
	out->siginfo_written = out->signo >= 1 && out->signo <= 64 && platform_le32(si + SIGINFO_ERRNO) == 0 &&
			       platform_le32(si + SIGINFO_PAD) == 0;
	p->sigframe.parse_mcontext(mem + p->sigframe.mcontext, &out->regs);
	if (p->sigframe.mcontext_fault)
		out->trap_fault = p->sigframe.mcontext_fault(mem + p->sigframe.mcontext, out->trap_signals,
							     &out->has_fault_address, &out->fault_address);
	return true;
}
