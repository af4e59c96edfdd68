/* Finding a module's ELF by build-id: build-id directories of the debug
 * directories, then debuginfod when DEBUGINFOD_URLS is set.  libdebuginfod
 * (elfutils) is loaded at run time, so pycore runs without it. */
#include "symbols/symbols.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* DIR/.build-id/xx/yyyy..., the layout of /usr/lib/debug: the file without
 * a suffix is (a link to) the binary itself. */
static char *in_build_id_dir(const char *dir, const uint8_t *id, size_t len)
{
	char hex[129];
	dump_hex(id, len, hex);
	char *p = NULL;
	if (asprintf(&p, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) < 0)
		return NULL;
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

typedef void *(*begin_fn)(void);
typedef int (*find_fn)(void *, const unsigned char *, int, char **);
typedef void (*end_fn)(void *);

static char *from_debuginfod(const uint8_t *id, size_t len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return NULL;
	/* Loaded once and kept: libcurl below it keeps global state that
	 * unloading would turn into leaks. */
	static void *lib;
	if (!lib)
		lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return NULL;
	begin_fn begin = (begin_fn)dlsym(lib, "debuginfod_begin");
	find_fn find = (find_fn)dlsym(lib, "debuginfod_find_executable");
	end_fn end = (end_fn)dlsym(lib, "debuginfod_end");
	char *path = NULL;
	void *client = begin && find && end ? begin() : NULL;
	if (client) {
		int fd = find(client, id, (int)len, &path);
		if (fd >= 0)
			close(fd);
		else
			path = NULL;
		end(client);
	}
	return path;
}

char *symbols_find_by_build_id(const uint8_t *id, size_t len, void *arg)
{
	char **dirs = arg;
	for (char **d = dirs; d && *d; d++) {
		char *p = in_build_id_dir(*d, id, len);
		if (p)
			return p;
	}
	char *p = in_build_id_dir("/usr/lib/debug", id, len);
	return p ? p : from_debuginfod(id, len);
}
