/* Separate debug files with compressed sections, kept uncompressed in a
 * cache (locate.h: locate_debug_cached, locate_debug_cache_store).
 *
 * Distributions compress their debug files (SHF_COMPRESSED, zlib): libdw
 * inflates every debug section whole when it opens the file, and for the
 * line table of one libc frame that is most of an analysis's time (55 of
 * 75 ms on a 4-thread 3.12 gcore with --native --locals).  The first
 * analysis that reads such a file writes an uncompressed copy, named by
 * its build-id; later ones read that copy instead.  A copy is written to a temporary
 * name and renamed, so a reader never sees half of one; any failure leaves
 * the compressed file in use. */
#include "locate/locate.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A copy of a file larger than this is not made. */
#define MAX_DEBUG_FILE (1ull << 30)

/* Does ELF hold a section compressed with SHF_COMPRESSED, and none in the
 * old GNU .zdebug form (whose name says compressed: not rewritten here)? */
static bool compressed(Elf *elf)
{
	size_t shstrndx;
	bool any = false;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return false;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strncmp(name, ".zdebug", 7) == 0)
			return false;
		any |= (sh.sh_flags & SHF_COMPRESSED) != 0;
	}
	return any;
}

/* FROM's SIZE bytes to TO: copy_file_range within one file system, else
 * (EXDEV from another one, as /usr/lib/debug on disk and a cache on tmpfs
 * since Linux 5.19; or a file system that does not offer it) read and
 * write. */
static bool copy_fd(int from, int to, off_t size)
{
	off_t in = 0;
	while (in < size) {
		ssize_t n = copy_file_range(from, &in, to, NULL, (size_t)(size - in), 0);
		if (n > 0)
			continue;
		if (n == 0 || in != 0 || (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP))
			return false;
		break;
	}
	char buf[1 << 16];
	while (in < size) {
		ssize_t n = pread(from, buf, sizeof(buf), in);
		if (n <= 0)
			return false;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));
			if (w <= 0)
				return false;
			done += w;
		}
		in += n;
	}
	return true;
}

/* Write FD's file, every SHF_COMPRESSED section inflated, to PATH. */
static bool write_uncompressed(int fd, off_t size, const char *dir, const char *path)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s/.tmp-XXXXXX", dir) < 0)
		return false;
	int out = mkstemp(tmp);
	bool ok = out >= 0 && copy_fd(fd, out, size);
	Elf *elf = ok ? elf_begin(out, ELF_C_RDWR, NULL) : NULL;
	ok = elf != NULL;
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			ok = false;
		else if (sh.sh_flags & SHF_COMPRESSED)
			ok = elf_compress(scn, 0, 0) >= 0;
	}
	ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
	if (elf)
		elf_end(elf);
	ok = ok && fsync(out) == 0 && fchmod(out, 0644) == 0;
	if (out >= 0)
		close(out);
	ok = ok && rename(tmp, path) == 0;
	if (!ok && out >= 0)
		unlink(tmp);
	free(tmp);
	return ok;
}

static int mkdirs(const char *dir)
{
	char *p = strdup(dir);
	if (!p)
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	int rc = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

static char *cache_path(const char *dir, const uint8_t *id, size_t len)
{
	char hex[129], *p = NULL;
	if (len == 0 || len > 64)
		return NULL;
	dump_hex(id, len, hex);
	return asprintf(&p, "%s/%s.debug", dir, hex) < 0 ? NULL : p;
}

int locate_debug_cached(const char *dir, const char *source, const uint8_t *id, size_t len, char **path)
{
	char *cached = dir && *dir ? cache_path(dir, id, len) : NULL;
	int fd = cached ? open(cached, O_RDONLY | O_CLOEXEC) : -1;
	struct stat src, copy;
	if (fd >= 0 && (stat(source, &src) != 0 || fstat(fd, &copy) != 0 || copy.st_mtime < src.st_mtime)) {
		close(fd); /* the file was replaced since: its copy is not used */
		fd = -1;
	}
	if (fd < 0) {
		free(cached);
		return -1;
	}
	*path = cached;
	return fd;
}

void locate_debug_cache_store(const char *dir, int fd)
{
	struct stat st;
	if (!dir || !*dir || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size > MAX_DEBUG_FILE)
		return;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	const void *id;
	ssize_t idlen = compressed(elf) ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	char *cached = idlen > 0 ? cache_path(dir, id, (size_t)idlen) : NULL;
	elf_end(elf);
	if (cached && access(cached, R_OK) != 0 && mkdirs(dir) == 0)
		write_uncompressed(fd, st.st_size, dir, cached);
	free(cached);
}
