/* pycore coredump, step 2: is the crash Python's?  Cheap checks only,
 * before the core is opened in earnest: the process's names (comm, exe),
 * else the files it mapped (systemd's COREDUMP_PROC_MAPS, else the core's
 * NT_FILE note in its first PREFIX_MAX bytes); or, with Executables=, the
 * configured globs. */
#include "cli/coredump/coredump_int.h"

#ifdef HAVE_LIBSYSTEMD

#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

bool hook_name_is_python(const char *s)
{
	const char *b = basename_of(s);
	return strncmp(b, "python", 6) == 0 || strncmp(b, "libpython", 9) == 0;
}

/* Whether the ELF core's first N bytes at P hold an NT_FILE note naming a
 * python or libpython file.  Layouts from <elf.h> and the kernel's
 * fs/binfmt_elf.c (fill_files_note): count, page size, count triples
 * (start, end, file offset), then count NUL-terminated names. */
static bool prefix_maps_python(const uint8_t *p, size_t n)
{
	Elf64_Ehdr eh;
	if (n < sizeof(eh))
		return false;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_CORE || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n)
		return false;
	for (size_t i = 0; i < eh.e_phnum && (n - eh.e_phoff) / sizeof(Elf64_Phdr) > i; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset >= n)
			continue;
		size_t off = ph.p_offset, end = ph.p_filesz < n - off ? off + ph.p_filesz : n;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p + off, sizeof(nh));
			size_t name_len = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
			size_t desc_len = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
			off += sizeof(nh);
			if (name_len > end - off || desc_len > end - off - name_len)
				break;
			const uint8_t *desc = p + off + name_len;
			off += name_len + desc_len;
			if (nh.n_type != NT_FILE || nh.n_descsz < 16)
				continue;
			uint64_t count;
			memcpy(&count, desc, 8);
			if (count > (nh.n_descsz - 16) / 24)
				continue;
			const char *s = (const char *)desc + 16 + count * 24, *stop = (const char *)desc + nh.n_descsz;
			while (s < stop) {
				const char *z = memchr(s, '\0', (size_t)(stop - s));
				size_t len = z ? (size_t)(z - s) : (size_t)(stop - s);
				char name[256];
				const char *slash = memrchr(s, '/', len);
				const char *b = slash ? slash + 1 : s;
				size_t blen = (size_t)(s + len - b) < sizeof(name) - 1 ? (size_t)(s + len - b) : sizeof(name) - 1;
				memcpy(name, b, blen);
				name[blen] = '\0';
				if (hook_name_is_python(name))
					return true;
				s += len + 1;
			}
		}
	}
	return false;
}

/* The first PREFIX_MAX bytes of the core file at PATH, decompressed if
 * it is zstd, into *OUT (malloc'd); their number, or 0. */
static size_t read_prefix(const char *path, uint8_t **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	uint8_t *raw = malloc(PREFIX_MAX), *dec = NULL;
	ssize_t got = raw ? pread(fd, raw, PREFIX_MAX, 0) : -1;
	close(fd);
	if (got <= 0) {
		free(raw);
		return 0;
	}
	static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	if (got < 4 || memcmp(raw, zmagic, 4) != 0) {
		*out = raw;
		return (size_t)got;
	}
	ZSTD_DCtx *z = ZSTD_createDCtx();
	dec = z ? malloc(PREFIX_MAX) : NULL;
	size_t have = 0;
	if (dec) {
		ZSTD_inBuffer in = { raw, (size_t)got, 0 };
		ZSTD_outBuffer o = { dec, PREFIX_MAX, 0 };
		while (o.pos < o.size && in.pos < in.size) {
			size_t r = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		have = o.pos;
	}
	ZSTD_freeDCtx(z);
	free(raw);
	*out = dec;
	return have;
}

/* The prefix of the journal entry's COREDUMP field; its length, or 0. */
static size_t journal_prefix(sd_journal *j, uint8_t **out)
{
	const void *d;
	size_t n;
	*out = NULL;
	sd_journal_set_data_threshold(j, PREFIX_MAX + 9);
	if (sd_journal_get_data(j, "COREDUMP", &d, &n) < 0 || n <= 9)
		return 0;
	n -= 9;
	if (!(*out = malloc(n)))
		return 0;
	memcpy(*out, (const uint8_t *)d + 9, n);
	return n;
}

bool hook_wanted(const struct coredump_config *cfg, const struct crash *c)
{
	for (char **g = cfg->executables; g && *g; g++)
		if ((c->exe && fnmatch(*g, c->exe, 0) == 0) || (c->comm && fnmatch(*g, c->comm, 0) == 0))
			return true;
	return false;
}

/* Whether the crash is Python's: names first, then the mapped files
 * (systemd's COREDUMP_PROC_MAPS, else the core's NT_FILE note).  Never parses more than PREFIX_MAX bytes. */
bool hook_is_python(sd_journal *j, const struct crash *c)
{
	if (hook_name_is_python(c->comm) || hook_name_is_python(c->exe))
		return true;
	if (c->maps_known)
		return c->maps_python;
	uint8_t *p = NULL;
	size_t n = c->in_journal ? journal_prefix(j, &p) : c->path ? read_prefix(c->path, &p) : 0;
	bool yes = n && prefix_maps_python(p, n);
	free(p);
	return yes;
}

#endif
