/* A dump's build key (batch_key.h).  ELF facts: the ELF-64 header
 * (e_type at 16, e_phoff at 32, e_phentsize at 54, e_phnum at 56), the
 * 56-byte program header (p_type at 0, p_offset at 8, p_filesz at 32),
 * PT_NOTE 4, ET_CORE 4 (elf(5)); the note header is namesz, descsz,
 * type, each 4 bytes, name and desc padded to 4; NT_FILE (0x46494c45,
 * name "CORE") holds count, page size, count triples of start, end and
 * file offset, then count NUL-terminated paths (the kernel's
 * fs/binfmt_elf.c, fill_files_note). */
#include "cli/batch/batch_key.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PHNUM 8192
#define MAX_NOTES (8u << 20)

static uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* The key of NT_FILE's DESC (LEN bytes), or 0. */
static uint64_t files_key(const uint8_t *desc, size_t len)
{
	if (len < 16)
		return 0;
	uint64_t count = le(desc, 8);
	if (count == 0 || count > (len - 16) / 24)
		return 0;
	const char *p = (const char *)desc + 16 + count * 24, *end = (const char *)desc + len;
	const char *last_lib = NULL;
	size_t last_len = 0;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (uint64_t i = 0; i < count && p < end; i++) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return 0;
		size_t n = (size_t)(z - p);
		if (i == 0) {
			h = fnv(h, p, n + 1);
		} else if (memmem(p, n, "libpython", 9) && !(last_lib && last_len == n && memcmp(last_lib, p, n) == 0)) {
			h = fnv(h, p, n + 1);
			last_lib = p;
			last_len = n;
		}
		p = z + 1;
	}
	return h ? h : 1;
}

/* The key in the notes NOTES (LEN bytes), or 0. */
static uint64_t notes_key(const uint8_t *notes, size_t len)
{
	size_t off = 0;
	while (len - off >= 12) {
		uint64_t namesz = le(notes + off, 4), descsz = le(notes + off + 4, 4), type = le(notes + off + 8, 4);
		uint64_t name_off = off + 12, desc_off = name_off + ((namesz + 3) & ~(uint64_t)3);
		uint64_t next = desc_off + ((descsz + 3) & ~(uint64_t)3);
		if (desc_off > len || descsz > len - desc_off || next > len)
			return 0;
		if (type == 0x46494c45 && namesz == 5 && memcmp(notes + name_off, "CORE", 5) == 0)
			return files_key(notes + desc_off, (size_t)descsz);
		off = (size_t)next;
	}
	return 0;
}

uint64_t batch_build_key(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	uint64_t key = 0;
	uint8_t eh[64], *ph = NULL, *notes = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !read_at(fd, eh, sizeof(eh), 0) ||
	    memcmp(eh, "\177ELF\2\1", 6) != 0 || le(eh + 16, 2) != 4 || le(eh + 54, 2) != 56)
		goto out;
	uint64_t phoff = le(eh + 32, 8), phnum = le(eh + 56, 2), size = (uint64_t)st.st_size;
	if (phnum == 0 || phnum > MAX_PHNUM || phoff > size || phnum * 56 > size - phoff ||
	    !(ph = malloc(phnum * 56)) || !read_at(fd, ph, phnum * 56, phoff))
		goto out;
	for (uint64_t i = 0; i < phnum && !key; i++) {
		const uint8_t *h = ph + i * 56;
		uint64_t off = le(h + 8, 8), len = le(h + 32, 8);
		if (le(h, 4) != 4 || len == 0 || len > MAX_NOTES || off > size || len > size - off)
			continue;
		free(notes);
		if (!(notes = malloc(len)) || !read_at(fd, notes, len, off))
			break;
		key = notes_key(notes, (size_t)len);
	}
out:
	free(notes);
	free(ph);
	close(fd);
	return key;
}

bool batch_key_seen(struct batch_keys *s, uint64_t key)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return true;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			size_t j = s->slots[i] & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = s->slots[i];
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	size_t j = key & (s->cap - 1);
	for (; s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (s->slots[j] == key)
			return true;
	s->slots[j] = key;
	s->n++;
	return false;
}

void batch_keys_free(struct batch_keys *s)
{
	free(s->slots);
	*s = (struct batch_keys){ 0 };
}
