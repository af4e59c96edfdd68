/* Source lines for the text report's Python frames, read from the files
 * locate/ finds for the names the code objects give (locate_source_map:
 * --sysroot first, only absolute paths of regular files (.py, .wsgi, ...), bounded,
 * never blocking).  The line a file gives is escaped when written like
 * every string from the dump.  Files are kept mapped for the report (at
 * most SOURCE_MAX_OPEN of them; a file that could not be read is
 * remembered as such). */
#include "report/source.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "locate/locate.h"

#define SOURCE_MAX_OPEN  64
#define SOURCE_MAX_LINE  4096

struct source_file {
	char *name;                  /* as the code object names it */
	const char *data;            /* NULL: not readable */
	size_t len;
};

struct source_cache {
	const struct locate_policy *files;
	struct source_file files_open[SOURCE_MAX_OPEN];
	size_t n;
	char line[SOURCE_MAX_LINE + 1];
};

struct source_cache *source_cache_new(const struct locate_policy *files)
{
	struct source_cache *c = calloc(1, sizeof(*c));
	if (c)
		c->files = files;
	return c;
}

void source_cache_free(struct source_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->files_open[i].data)
			image_unmap(c->files_open[i].data, c->files_open[i].len);
		free(c->files_open[i].name);
	}
	free(c);
}

static const struct source_file *file_for(struct source_cache *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->files_open[i].name, name) == 0)
			return &c->files_open[i];
	if (c->n == SOURCE_MAX_OPEN)
		return NULL;
	struct source_file *f = &c->files_open[c->n];
	if (!(f->name = strdup(name)))
		return NULL;
	c->n++;
	f->data = locate_source_map(c->files, name, &f->len);
	return f;
}

const char *source_line(struct source_cache *c, const char *file, int line)
{
	if (!c || !file || line <= 0)
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
	size_t n = (size_t)((nl ? nl : end) - p);
	if (n > SOURCE_MAX_LINE)
		n = SOURCE_MAX_LINE;
	memcpy(c->line, p, n);
	c->line[n] = '\0';
	if (n && c->line[n - 1] == '\r')
		c->line[n - 1] = '\0';
	return c->line;
}
