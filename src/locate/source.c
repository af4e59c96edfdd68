/* Source files for the report's Python frames, found under the same
 * policy as the modules' files (locate.h, locate_source_map): the name
 * comes from the dump, so it is trusted for nothing. */
#include "locate/locate.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH mapped, if it is a regular file of 1 to LOCATE_SOURCE_MAX bytes;
 * opened without blocking (a FIFO named by the dump must not hang the
 * report) and never a device. */
static const char *map_regular(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size <= LOCATE_SOURCE_MAX) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		*len = (size_t)st.st_size;
	}
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

const char *locate_source_map(const struct locate_policy *p, const char *name, size_t *len)
{
	/* any absolute path a code object names: .py, and Apache's .wsgi
	 * scripts, a Cython module's .pyx, ... (a regular file, bounded) */
	if (!name || name[0] != '/' || !name[1])
		return NULL;
	const char *m = NULL;
	if (p && p->image) {
		m = (const char *)image_map(p->image, name, LOCATE_SOURCE_MAX, len);
	} else if (p && p->sysroot) {
		char *under = NULL;
		if (asprintf(&under, "%s%s", p->sysroot, name) >= 0) {
			m = map_regular(under, len);
			free(under);
		}
	}
	return m ? m : map_regular(name, len);
}
