/* Build-ids: the NT_GNU_BUILD_ID note of an ELF image, read from the
 * process's own copy of its headers or from a file in memory. */
#include "dump.h"

#include <elf.h>
#include <string.h>

void dump_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

/* Walk a block of ELF notes looking for NT_GNU_BUILD_ID. */
static int notes_build_id(const uint8_t *p, size_t len, uint8_t *id, size_t *idlen)
{
	size_t off = 0;
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + off, sizeof(nh));
		off += sizeof(nh);
		size_t namesz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (namesz > len - off || descsz > len - off - namesz)
			return -1;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + off, "GNU", 4) == 0 && nh.n_descsz > 0 && nh.n_descsz <= 64) {
			memcpy(id, p + off + namesz, nh.n_descsz);
			*idlen = nh.n_descsz;
			return 0;
		}
		off += namesz + descsz;
	}
	return -1;
}

int dump_read_build_id(struct dump *d, uint64_t base, uint8_t *id, size_t *len)
{
	Elf64_Ehdr eh;
	if (dump_read(d, base, &eh, sizeof(eh)) != PC_OK)
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
		return -1;
	Elf64_Phdr ph[256];
	if (dump_read(d, base + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) != PC_OK)
		return -1;
	/* The load bias: where the first PT_LOAD (file offset 0) landed. */
	uint64_t bias = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			bias = base - (ph[i].p_vaddr - ph[i].p_offset);
			break;
		}
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > 8192)
			continue;
		uint8_t buf[8192];
		if (dump_read(d, bias + ph[i].p_vaddr, buf, ph[i].p_filesz) != PC_OK)
			continue;
		if (notes_build_id(buf, ph[i].p_filesz, id, len) == 0)
			return 0;
	}
	return -1;
}

int elf_file_build_id(const uint8_t *data, size_t size, uint8_t *id, size_t *len)
{
	Elf64_Ehdr eh;
	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			continue;
		if (notes_build_id(data + ph.p_offset, ph.p_filesz, id, len) == 0)
			return 0;
	}
	return -1;
}
