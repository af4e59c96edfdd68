/* Source lines for the text report's Python frames, read from the files
 * the code objects name: in --sysroot first (the crashed machine's root),
 * then on this machine.  The name comes from the dump, so it is trusted
 * for nothing: only an absolute path, only a regular file (no device, no
 * FIFO: opened without blocking), at most SOURCE_MAX_FILE bytes, mapped
 * read-only; the line it gives is escaped when written like every string
 * from the dump.  Files are kept mapped for the report (at most
 * SOURCE_MAX_OPEN of them; a file that could not be read is remembered as
 * such). */
#include "report/source.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOURCE_MAX_FILE  (16u << 20)
#define SOURCE_MAX_OPEN  64
#define SOURCE_MAX_LINE  4096

struct source_file {
	char *name;                  /* as the code object names it */
	const char *data;            /* NULL: not readable */
	size_t len;
};

struct source_cache {
	char *sysroot;
	struct source_file files[SOURCE_MAX_OPEN];
	size_t n;
	char line[SOURCE_MAX_LINE + 1];
};

struct source_cache *source_cache_new(const char *sysroot)
{
	struct source_cache *c = calloc(1, sizeof(*c));
	if (c && sysroot && !(c->sysroot = strdup(sysroot))) {
		free(c);
		return NULL;
	}
	return c;
}

void source_cache_free(struct source_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->files[i].data)
			munmap((void *)c->files[i].data, c->files[i].len);
		free(c->files[i].name);
	}
	free(c->sysroot);
	free(c);
}

/* PATH mapped, if it is a regular file of 1 to SOURCE_MAX_FILE bytes. */
static const char *map_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size <= SOURCE_MAX_FILE) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		*len = (size_t)st.st_size;
	}
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

static const struct source_file *file_for(struct source_cache *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->files[i].name, name) == 0)
			return &c->files[i];
	if (c->n == SOURCE_MAX_OPEN)
		return NULL;
	struct source_file *f = &c->files[c->n];
	if (!(f->name = strdup(name)))
		return NULL;
	c->n++;
	if (c->sysroot) {
		char *p = malloc(strlen(c->sysroot) + strlen(name) + 1);
		if (p) {
			strcpy(p, c->sysroot);
			strcat(p, name);
			f->data = map_file(p, &f->len);
			free(p);
		}
	}
	if (!f->data)
		f->data = map_file(name, &f->len);
	return f;
}

const char *source_line(struct source_cache *c, const char *file, int line)
{
	size_t n = file ? strlen(file) : 0;
	if (!c || n < 4 || file[0] != '/' || strcmp(file + n - 3, ".py") != 0 || line <= 0)
		return NULL;
	const struct source_file *f = file_for(c, file);
	if (!f || !f->data)
		return NULL;
	const char *p = f->data, *end = f->data + f->len;
	for (int k = 1; k < line; k++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	n = (size_t)((nl ? nl : end) - p);
	if (n > SOURCE_MAX_LINE)
		n = SOURCE_MAX_LINE;
	memcpy(c->line, p, n);
	c->line[n] = '\0';
	if (n && c->line[n - 1] == '\r')
		c->line[n - 1] = '\0';
	return c->line;
}
