/* The vDSO's ELF image from the dump's memory (vdso.h).
 *
 * The image the kernel maps is the whole linked vDSO (arch/x86/entry/vdso
 * and arch/arm64/kernel/vdso: one PT_LOAD from offset 0, its section
 * headers at the end of the same pages), so the bytes from its ELF header
 * through its section header table are the file.  Its address is
 * AT_SYSINFO_EHDR of the process's auxiliary vector. */
#include "symbols/vdso.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define VDSO_MAX (1u << 20)

uint8_t *vdso_image(struct dump *d, uint64_t base, size_t *size, uint64_t *span)
{
	Elf64_Ehdr eh;
	if (!base || dump_read(d, base, &eh, sizeof(eh)) != PC_OK || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != d->platform->elf_data ||
	    eh.e_machine != d->platform->elf_machine || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > 64 || eh.e_phoff > VDSO_MAX ||
	    (eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > VDSO_MAX)))
		return NULL;
	uint64_t end = eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), lo = UINT64_MAX, hi = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (dump_read(d, base + eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph)) != PC_OK)
			return NULL;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > VDSO_MAX || ph.p_filesz > VDSO_MAX || ph.p_vaddr > VDSO_MAX || ph.p_memsz > VDSO_MAX)
			return NULL;
		if (ph.p_offset + ph.p_filesz > end)
			end = ph.p_offset + ph.p_filesz;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
	}
	if (hi <= lo || end > VDSO_MAX || end < sizeof(eh))
		return NULL;
	uint8_t *image = malloc(end);
	if (!image || dump_read(d, base, image, end) != PC_OK) {
		free(image);
		return NULL;
	}
	*size = end;
	*span = hi - lo;
	return image;
}
