/* Fuzz target: the tar index of images as the sysroot (src/locate/
 * image_tar.c), on the input in memory.  Not only no crash: an input it
 * accepts gives members that each lie inside the input (header and data),
 * sorted, one per path, each found again by its path, its parent
 * directory seen to have children, and no path that starts with '/' or
 * holds a "." or ".." component.  Built as fuzz-replay-tar too
 * (fuzz-reader.h), which replays testdata/fuzz-regressions/tar/. */
#include <string.h>

#include "fuzz-reader.h"
#include "locate/image.h"

static void bad_path(const char *p)
{
	if (p[0] == '/' || !p[0])
		abort();
	for (const char *c = p; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			abort();
		c += n + (e ? 1 : 0);
	}
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	struct image_tar t;
	struct pc_error *e = image_tar_index(data, size, &t);
	if (e) {
		if (!e->message || !*e->message || t.n || t.m)
			abort();
		pc_error_free(e);
		return 0;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct image_member *m = &t.m[i];
		if (m->offset < 512 || m->offset > size || m->size > size - m->offset)
			abort();
		if (i && strcmp(t.m[i - 1].path, m->path) >= 0)
			abort();
		bad_path(m->path);
		if (m->type == IMAGE_HARDLINK && m->link && *m->link)
			bad_path(m->link);
		if (image_tar_find(&t, m->path, strlen(m->path)) != m)
			abort();
		const char *slash = strrchr(m->path, '/');
		if (slash && !image_tar_has_children(&t, m->path, (size_t)(slash - m->path)))
			abort();
	}
	image_tar_free(&t);
	return 0;
}
