/* Unit test of the verification of a file without a build-id by the bytes
 * a dump holds of it (locate/bytes.c), on real ELF files of this machine
 * (this test's own executable, and libc when it is there) laid out in a
 * dump of memory runs as a loader maps them: the header page alone, or
 * with the writable segment (its dynamic section relocated as glibc's
 * loader leaves it, DT_DEBUG written), or every segment; then the same
 * with one byte of the file or of the dump's copy changed.  Each case
 * states the verdict the comparison must give. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump/dump.h"
#include "locate/bytes.h"
#include "tests/unit/unit.h"

#define BASE 0x7f1234560000ull

enum { HEADER = 1, RO = 2, RW = 4 };

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st) != 0 || st.st_size <= 0) {
		if (f)
			fclose(f);
		return NULL;
	}
	uint8_t *p = malloc((size_t)st.st_size);
	*size = p ? fread(p, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	return p;
}

static const Elf64_Phdr *phdr(const uint8_t *file, size_t i)
{
	const Elf64_Ehdr *eh = (const void *)file;
	return (const Elf64_Phdr *)(file + eh->e_phoff) + i;
}

/* The loader's view of FILE at BASE, the parts HOLD names as runs of D
 * (their copies in BUFS), the dynamic section relocated as glibc leaves it
 * (its address-valued entries plus the bias, DT_DEBUG written); the byte at
 * memory offset POKE from BASE flipped in the dump's copy (0: none). */
static struct dump *lay_out(const uint8_t *file, int hold, uint64_t poke, uint8_t **bufs)
{
	const Elf64_Ehdr *eh = (const void *)file;
	struct dump_run runs[16];
	size_t n = 0;
	const Elf64_Phdr *dyn = NULL;
	for (size_t i = 0; i < eh->e_phnum; i++)
		if (phdr(file, i)->p_type == PT_DYNAMIC)
			dyn = phdr(file, i);
	for (size_t i = 0; i < eh->e_phnum && n < 16; i++) {
		const Elf64_Phdr *p = phdr(file, i);
		if (p->p_type != PT_LOAD || !p->p_filesz)
			continue;
		bool writable = p->p_flags & PF_W;
		size_t len = p->p_filesz;
		if (writable ? !(hold & RW) : !(hold & RO)) {
			if (p->p_offset != 0 || !(hold & HEADER))
				continue;
			len = len < 4096 ? len : 4096;
		}
		uint8_t *b = bufs[n] = malloc(len);
		memcpy(b, file + p->p_offset, len);
		if (dyn && dyn->p_offset >= p->p_offset && dyn->p_offset + dyn->p_filesz <= p->p_offset + len) {
			Elf64_Dyn *e = (Elf64_Dyn *)(b + (dyn->p_offset - p->p_offset));
			for (size_t k = 0; k < dyn->p_filesz / sizeof(*e) && e[k].d_tag != DT_NULL; k++) {
				if (e[k].d_tag == DT_DEBUG)
					e[k].d_un.d_ptr = 0x7fff00001000ull;
				else if (e[k].d_tag == DT_STRTAB || e[k].d_tag == DT_SYMTAB || e[k].d_tag == DT_GNU_HASH)
					e[k].d_un.d_ptr += BASE;
			}
		}
		if (poke && poke >= p->p_vaddr && poke < p->p_vaddr + len)
			b[poke - p->p_vaddr] ^= 0x5a;
		runs[n] = (struct dump_run){ BASE + p->p_vaddr, b, len };
		n++;
	}
	bufs[n] = NULL;
	struct dump *d = NULL;
	struct pc_error *e = dump_open_runs(runs, n, "test", &d);
	CHECK(!e, "the runs open");
	return e ? NULL : d;
}

static void drop(struct dump *d, uint8_t **bufs)
{
	dump_close(d);
	for (size_t i = 0; bufs[i]; i++)
		free(bufs[i]);
}

static struct locate_bytes verify(const uint8_t *file, size_t size, int hold, uint64_t poke)
{
	uint8_t *bufs[17];
	struct locate_bytes v;
	struct dump *d = lay_out(file, hold, poke, bufs);
	locate_bytes_verify(d, BASE, file, size, "f", &v);
	drop(d, bufs);
	return v;
}

/* A file offset in a read-only segment past the header page, and its
 * vaddr (0: none). */
static uint64_t ro_offset(const uint8_t *file, uint64_t *vaddr)
{
	const Elf64_Ehdr *eh = (const void *)file;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = phdr(file, i);
		if (p->p_type == PT_LOAD && !(p->p_flags & PF_W) && p->p_offset + p->p_filesz > 4096 + 64) {
			uint64_t off = p->p_offset > 4096 ? p->p_offset + p->p_filesz / 2 : 4096 + 32;
			*vaddr = p->p_vaddr + (off - p->p_offset);
			return off;
		}
	}
	return 0;
}

static void cases(const char *what, uint8_t *file, size_t size)
{
	struct locate_bytes v;

	/* a whole image: everything agrees, the DT_DEBUG and relocated entries too */
	v = verify(file, size, HEADER | RO | RW, 0);
	CHECK(v.agree && v.compared > 4096 && v.dynamic_entries > 0, "%s whole: %s", what, v.reason);
	CHECK(v.compared <= 4096 + LOCATE_BYTES_MAX + 4096 * 16, "%s: %zu bytes compared, above the cap", what,
	      v.compared);
	free(v.reason);

	/* a kernel core: the header page, the writable segment */
	v = verify(file, size, HEADER | RW, 0);
	CHECK(v.agree && v.dynamic_entries > 0, "%s kernel-like: %s", what, v.reason);
	free(v.reason);

	/* the header page alone: too little */
	v = verify(file, size, HEADER, 0);
	CHECK(!v.agree && !v.differ && v.reason && strstr(v.reason, "too little"), "%s header only: %s", what,
	      v.reason);
	free(v.reason);

	/* nothing */
	v = verify(file, size, 0, 0);
	CHECK(!v.agree && !v.differ && v.reason && strstr(v.reason, "no copy of its ELF header"), "%s none: %s",
	      what, v.reason);
	free(v.reason);

	/* one byte of the header page differs (in the dump's copy) */
	v = verify(file, size, HEADER | RW, 0x200);
	CHECK(!v.agree && v.differ && v.reason && strstr(v.reason, "ELF header page at file offset 0x200"),
	      "%s header poked: %s", what, v.reason);
	free(v.reason);

	/* one byte of a read-only segment differs in the file */
	uint64_t vaddr = 0, off = ro_offset(file, &vaddr);
	CHECK(off, "%s has a read-only segment past its header page", what);
	if (off) {
		char want[64];
		snprintf(want, sizeof(want), "read-only segments at file offset 0x%llx", (unsigned long long)off);
		v = verify(file, size, HEADER | RO | RW, vaddr);
		CHECK(!v.agree && v.differ && v.reason && strstr(v.reason, want), "%s segment changed: %s", what,
		      v.reason);
		free(v.reason);
		/* ... which a kernel core, not holding it, cannot see */
		v = verify(file, size, HEADER | RW, vaddr);
		CHECK(v.agree, "%s segment changed, not held: %s", what, v.reason);
		free(v.reason);
	}

	/* the dynamic section's DT_STRSZ differs in the dump's copy */
	const Elf64_Ehdr *eh = (const void *)file;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = phdr(file, i);
		if (p->p_type != PT_DYNAMIC)
			continue;
		const Elf64_Dyn *e = (const Elf64_Dyn *)(file + p->p_offset);
		for (size_t k = 0; k < p->p_filesz / sizeof(*e) && e[k].d_tag != DT_NULL; k++) {
			if (e[k].d_tag != DT_STRSZ)
				continue;
			v = verify(file, size, HEADER | RW, p->p_vaddr + k * sizeof(*e) + 8);
			CHECK(!v.agree && v.differ && v.reason && strstr(v.reason, "dynamic section: entry"),
			      "%s DT_STRSZ changed: %s", what, v.reason);
			free(v.reason);
		}
	}

	/* every byte of the file's ELF header and program headers changed in
	 * turn (a lying file: offsets and sizes past its end, no segment at 0,
	 * another class): refused every time, never read out of bounds */
	uint8_t *copy = malloc(size);
	size_t heads = eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr), refused = 0;
	uint8_t *lb[17];
	struct dump *ld = copy ? lay_out(file, HEADER | RW, 0, lb) : NULL;
	for (size_t i = 0; ld && i < heads && i < 4096; i++) {
		memcpy(copy, file, size);
		copy[i] ^= 0xff;
		locate_bytes_verify(ld, BASE, copy, size, "f", &v);
		refused += !v.agree && v.reason;
		free(v.reason);
	}
	CHECK(!ld || refused == (heads < 4096 ? heads : 4096), "%s: %zu of %zu header bytes changed refused", what,
	      refused, heads);
	if (ld)
		drop(ld, lb);
	free(copy);

	/* a file cut inside its last segment, and one not ELF */
	uint64_t last = 0;
	for (size_t i = 0; i < eh->e_phnum; i++)
		if (phdr(file, i)->p_type == PT_LOAD && phdr(file, i)->p_offset + phdr(file, i)->p_filesz > last)
			last = phdr(file, i)->p_offset + phdr(file, i)->p_filesz;
	uint8_t *bufs[17];
	struct dump *d = lay_out(file, HEADER | RW, 0, bufs);
	locate_bytes_verify(d, BASE, file, (size_t)last - 1, "f", &v);
	CHECK(!v.agree && v.reason && strstr(v.reason, "past the file's end"), "%s cut: %s", what, v.reason);
	free(v.reason);
	locate_bytes_verify(d, BASE, (const uint8_t *)"#!/bin/sh\n", 10, "f", &v);
	CHECK(!v.agree && v.reason && strstr(v.reason, "not a 64-bit ELF"), "%s not ELF: %s", what, v.reason);
	free(v.reason);
	drop(d, bufs);
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *files[] = { "/proc/self/exe", "/lib/x86_64-linux-gnu/libc.so.6",
				"/lib/aarch64-linux-gnu/libc.so.6" };
	int tested = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t size = 0;
		uint8_t *file = slurp(files[i], &size);
		if (!file || size < sizeof(Elf64_Ehdr) || memcmp(file, ELFMAG, SELFMAG) != 0 ||
		    file[EI_CLASS] != ELFCLASS64) {
			free(file);
			continue;
		}
		cases(i == 0 ? argv[0] : files[i], file, size);
		free(file);
		tested++;
	}
	CHECK(tested >= 1, "no ELF file to test with");
	printf("%s: %d checks, %d failures (%d files)\n", argv[0], checks, failures, tested);
	return failures ? 1 : 0;
}
