/* The file-search policy (locate.h): every module's file resolved once, in
 * one documented order, each with a result saying what was used and why. */
#include "locate/locate.h"
#include "locate/bytes.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files of one --search-path directory, each read once for its build-id. */
struct dir_entry {
	char *name;
	uint8_t id[64];
	size_t idlen;
};

struct search_dir {
	const char *dir;
	struct dir_entry *entries;
	size_t n;
	bool listed;
};

#define MAX_DIR_ENTRIES 100000

/* One mapping of a file, kept for the dump to read from until the
 * caller takes it (locate_take_file). */
struct mapping {
	void *data;
	size_t size;
	char *path;
	bool taken;                      /* the caller owns the mapping now */
};

struct locate {
	const struct dump *d;
	const struct locate_policy *p;
	struct locate_result *results;   /* parallel to d->modules */
	size_t nresults;
	struct mapping *maps;            /* owned; results point into them */
	size_t nmaps, maps_cap;
	struct search_dir *dirs;
	size_t ndirs;
	char **trees;                    /* build-id trees, in order */
	char *debuginfo_path;
	char **loader_dirs;              /* the main program's RUNPATH/RPATH, then the
					    loader's defaults; NULL until wanted */
	bool loader_listed;
};

const char *locate_how_str(enum locate_how how)
{
	switch (how) {
	case LOCATE_NONE: return NULL;
	case LOCATE_RECORDED: return "recorded";
	case LOCATE_EXECUTABLE: return "executable";
	case LOCATE_SYSROOT: return "sysroot";
	case LOCATE_SEARCH_PATH: return "search-path";
	case LOCATE_BUILD_ID_TREE: return "build-id-tree";
	case LOCATE_DEBUGINFOD: return "debuginfod";
	case LOCATE_LOADER_PATH: return "loader-path";
	}
	return NULL;
}

const char *locate_verified_str(enum locate_verified verified)
{
	switch (verified) {
	case LOCATE_UNVERIFIED: return NULL;
	case LOCATE_BY_BUILD_ID: return "build-id";
	case LOCATE_BY_BYTES: return "bytes";
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * One candidate file
 * ------------------------------------------------------------------------ */

/* Map PATH if it is a regular ELF file; fills its build-id (IDLEN 0: none). */
static void *map_elf(const char *path, size_t *size, uint8_t id[64], size_t *idlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return NULL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (memcmp(p, ELFMAG, SELFMAG) != 0) {
		munmap(p, (size_t)st.st_size);
		return NULL;
	}
	*size = (size_t)st.st_size;
	*idlen = 0;
	if (elf_file_build_id(p, *size, id, idlen) != 0)
		*idlen = 0;
	return p;
}

/* The same for PATH inside the sysroot's image. */
static void *map_image_elf(const struct image *img, const char *path, size_t *size, uint8_t id[64], size_t *idlen)
{
	const uint8_t *p = image_map(img, path, 0, size);
	if (!p)
		return NULL;
	if (*size < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0) {
		image_unmap(p, *size);
		return NULL;
	}
	*idlen = 0;
	if (elf_file_build_id(p, *size, id, idlen) != 0)
		*idlen = 0;
	return (void *)p;
}

static bool id_matches(const struct dump_module *m, const uint8_t *id, size_t idlen)
{
	return (m->build_id_prefix ? idlen >= m->build_id_len : idlen == m->build_id_len) &&
	       memcmp(id, m->build_id, m->build_id_len) == 0;
}

/* The search for one module: the first refusal (for the message) and, with
 * allow_mismatch, the first ELF found (used only if nothing matches). */
struct search {
	struct locate *l;
	const struct dump_module *m;
	struct locate_result *res;
	char *mismatch;
	char *fallback;
	char *fallback_in_image;     /* the fallback is the image's file at this path */
	enum locate_how fallback_how;
	bool undecided;              /* no build-id, and the dump held too little of the
					first file refused to tell */
};

static bool keep_mapping(struct locate *l, void *data, size_t size, const char *path)
{
	if (l->nmaps == l->maps_cap) {
		size_t cap = l->maps_cap ? l->maps_cap * 2 : 16;
		struct mapping *n = realloc(l->maps, cap * sizeof(*n));
		if (!n)
			return false;
		l->maps = n;
		l->maps_cap = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return false;
	l->maps[l->nmaps++] = (struct mapping){ data, size, copy, false };
	return true;
}

/* Try PATH for the module (IN_IMAGE: the image's file at IN_IMAGE, PATH
 * naming it for the report); true when it matched and is now in use. */
static bool take_from(struct search *s, const char *path, const char *in_image, enum locate_how how)
{
	uint8_t id[64];
	size_t idlen, size;
	void *data = in_image ? map_image_elf(s->l->p->image, in_image, &size, id, &idlen)
			      : map_elf(path, &size, id, &idlen);
	if (!data)
		return false;
	/* without a build-id, the file's bytes against the dump's (reading
	 * the dump changes nothing it says) */
	struct locate_bytes vb = { 0 };
	bool by_bytes = s->m->build_id_len == 0;
	if (by_bytes)
		locate_bytes_verify((struct dump *)s->l->d, s->m->base, data, size, path, &vb);
	if ((by_bytes ? vb.agree : id_matches(s->m, id, idlen)) && keep_mapping(s->l, data, size, path)) {
		struct mapping *mp = &s->l->maps[s->l->nmaps - 1];
		*s->res = (struct locate_result){ LOCATE_MATCH, how, mp->path, mp->data, mp->size, NULL,
						  in_image != NULL, by_bytes ? LOCATE_BY_BYTES : LOCATE_BY_BUILD_ID,
						  vb.compared };
		free(vb.reason);
		return true;
	}
	if (!s->mismatch && by_bytes) {
		s->undecided = !vb.differ;
		if (asprintf(&s->mismatch, "%s%s", vb.reason ? vb.reason : path,
			     s->l->p->allow_mismatch ? "" : " (--allow-mismatch would use it)") < 0)
			s->mismatch = NULL;
	}
	free(vb.reason);
	if (!s->mismatch) {
		char want[129], got[129] = "none";
		dump_hex(s->m->build_id, s->m->build_id_len, want);
		if (idlen)
			dump_hex(id, idlen, got);
		if (asprintf(&s->mismatch, "%s has build-id %s, the dump's is %s%s", path, got, want,
			     s->l->p->allow_mismatch ? "" : " (--allow-mismatch would use it)") < 0)
			s->mismatch = NULL;
	}
	if (s->l->p->allow_mismatch && !s->fallback) {
		s->fallback = strdup(path);
		s->fallback_in_image = in_image ? strdup(in_image) : NULL;
		s->fallback_how = how;
	}
	image_unmap(data, size);
	return false;
}

static bool take(struct search *s, const char *path, enum locate_how how)
{
	return take_from(s, path, NULL, how);
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b[0] == '/' ? b + 1 : b) < 0)
		return NULL;
	return s;
}

static bool take_joined(struct search *s, const char *dir, const char *name, enum locate_how how)
{
	char *p = join(dir, name);
	bool ok = p && take(s, p, how);
	free(p);
	return ok;
}

/* NAME under the sysroot: a directory's file, or its image's (named in
 * the report as the sysroot's path followed by NAME all the same). */
static bool take_under_root(struct search *s, const char *name, enum locate_how how)
{
	const struct locate_policy *p = s->l->p;
	if (!p->image)
		return take_joined(s, p->sysroot, name, how);
	char *shown = join(p->sysroot, name), *inside = join("", name);
	bool ok = shown && inside && take_from(s, shown, inside, how);
	free(shown);
	free(inside);
	return ok;
}

/* ------------------------------------------------------------------------
 * Search directories: listed once, every file's build-id read once
 * ------------------------------------------------------------------------ */

static void list_dir(struct search_dir *sd)
{
	sd->listed = true;
	DIR *dh = opendir(sd->dir);
	if (!dh)
		return;
	struct dirent *e;
	size_t cap = 0;
	while ((e = readdir(dh)) != NULL && sd->n < MAX_DIR_ENTRIES) {
		if (e->d_name[0] == '.')
			continue;
		char *p = join(sd->dir, e->d_name);
		uint8_t id[64];
		size_t idlen = 0, size;
		void *data = p ? map_elf(p, &size, id, &idlen) : NULL;
		free(p);
		if (!data)
			continue;
		munmap(data, size);
		if (!idlen)
			continue;
		if (sd->n == cap) {
			cap = cap ? cap * 2 : 32;
			struct dir_entry *n = realloc(sd->entries, cap * sizeof(*n));
			if (!n)
				break;
			sd->entries = n;
		}
		struct dir_entry *de = &sd->entries[sd->n];
		if (!(de->name = strdup(e->d_name)))
			break;
		memcpy(de->id, id, idlen);
		de->idlen = idlen;
		sd->n++;
	}
	closedir(dh);
}

static bool search_dir(struct search *s, struct search_dir *sd)
{
	/* the module's own name first, then any file with its build-id
	 * (a renamed copy) */
	const char *own = pc_basename(s->m->path);
	if (take_joined(s, sd->dir, own, LOCATE_SEARCH_PATH))
		return true;
	if (!s->m->build_id_len)
		return false;
	if (!sd->listed)
		list_dir(sd);
	for (size_t i = 0; i < sd->n; i++) {
		struct dir_entry *de = &sd->entries[i];
		if (strcmp(de->name, own) != 0 && id_matches(s->m, de->id, de->idlen) &&
		    take_joined(s, sd->dir, de->name, LOCATE_SEARCH_PATH))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * Build-id trees and debuginfod
 * ------------------------------------------------------------------------ */

/* DIR/.build-id/xx/yyyy..., the layout of /usr/lib/debug: the file without
 * a suffix is (a link to) the binary itself. */
static bool search_tree(struct search *s, const char *dir)
{
	char hex[129], *p = NULL;
	dump_hex(s->m->build_id, s->m->build_id_len, hex);
	if (asprintf(&p, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) < 0)
		return false;
	bool ok = access(p, R_OK) == 0 && take(s, p, LOCATE_BUILD_ID_TREE);
	free(p);
	return ok;
}

typedef void *(*begin_fn)(void);
typedef int (*find_fn)(void *, const unsigned char *, int, char **);
typedef void (*end_fn)(void *);

/* libdebuginfod (elfutils) is loaded at run time, so pycore runs without it. */
static bool search_debuginfod(struct search *s)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return false;
	/* Loaded once and kept: libcurl below it keeps global state that
	 * unloading would turn into leaks. */
	static void *lib;
	if (!lib)
		lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return false;
	begin_fn begin = (begin_fn)dlsym(lib, "debuginfod_begin");
	find_fn find = (find_fn)dlsym(lib, "debuginfod_find_executable");
	end_fn end = (end_fn)dlsym(lib, "debuginfod_end");
	char *path = NULL;
	void *client = begin && find && end ? begin() : NULL;
	if (client) {
		int fd = find(client, s->m->build_id, (int)s->m->build_id_len, &path);
		if (fd >= 0)
			close(fd);
		else
			path = NULL;
		end(client);
	}
	bool ok = path && take(s, path, LOCATE_DEBUGINFOD);
	free(path);
	return ok;
}

/* ------------------------------------------------------------------------
 * A module recorded by its name only (Crashpad names a library found by the
 * dynamic loader by its soname): the directories the loader searched
 * ------------------------------------------------------------------------ */

static char **list_add(char **list, size_t *n, char *item)
{
	char **l = realloc(list, (*n + 2) * sizeof(*l));
	if (!l || !item) {
		free(item);
		return l ? l : list;
	}
	l[(*n)++] = item;
	l[*n] = NULL;
	return l;
}

/* Directories the dynamic loader searches for a program's libraries when
 * no LD_LIBRARY_PATH is set (ld.so(8)): the program's DT_RPATH or
 * DT_RUNPATH, then the defaults; /etc/ld.so.cache is not read, Debian's
 * multiarch directories of the dump's platform (/lib/TUPLE,
 * /usr/lib/TUPLE) stand for it, before these. */
static const char *const LOADER_DEFAULTS[] = {
	"/usr/local/lib", "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

/* The RUNPATH (else RPATH) string of the ELF file DATA, or NULL. */
static char *elf_runpath(const uint8_t *data, size_t size)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)data, size);
	char *out = NULL, *rpath = NULL;
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *dd = elf_getdata(scn, NULL);
		for (size_t i = 0; dd && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(dd, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			const char *v = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			char **slot = dyn.d_tag == DT_RUNPATH ? &out : &rpath;
			if (v && !*slot)
				*slot = strdup(v);
		}
		break;
	}
	if (e)
		elf_end(e);
	if (out)
		free(rpath);
	return out ? out : rpath;
}

/* DIR with $ORIGIN (or ${ORIGIN}) replaced by ORIGIN. */
static char *expand_origin(const char *dir, const char *origin)
{
	const char *tok = strstr(dir, "$ORIGIN") ? "$ORIGIN" : strstr(dir, "${ORIGIN}") ? "${ORIGIN}" : NULL;
	if (!tok)
		return strdup(dir);
	const char *at = strstr(dir, tok);
	char *s = NULL;
	if (asprintf(&s, "%.*s%s%s", (int)(at - dir), dir, origin, at + strlen(tok)) < 0)
		return NULL;
	return s;
}

static void list_loader_dirs(struct locate *l)
{
	l->loader_listed = true;
	size_t n = 0;
	const struct dump *d = l->d;
	for (size_t i = 0; d->executable && i < d->nmodules; i++) {
		const struct locate_result *r = &l->results[i];
		if (strcmp(d->modules[i].path, d->executable) != 0 || !r->data)
			continue;
		char *rp = elf_runpath(r->data, r->size);
		const char *slash = strrchr(d->executable, '/');
		char *origin = slash ? strndup(d->executable, (size_t)(slash - d->executable)) : strdup(".");
		char *save = NULL;
		for (char *t = rp && origin ? strtok_r(rp, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
			if (*t)
				l->loader_dirs = list_add(l->loader_dirs, &n, expand_origin(t, origin));
		free(origin);
		free(rp);
		break;
	}
	const char *tuple = d->platform->multiarch;
	for (int k = 0; tuple && k < 2; k++) {
		char *dir = NULL;
		if (asprintf(&dir, "%s/%s", k ? "/usr/lib" : "/lib", tuple) < 0)
			dir = NULL;
		l->loader_dirs = list_add(l->loader_dirs, &n, dir);
	}
	for (const char *const *t = LOADER_DEFAULTS; *t; t++)
		l->loader_dirs = list_add(l->loader_dirs, &n, strdup(*t));
}

static bool search_loader_dirs(struct search *s)
{
	struct locate *l = s->l;
	if (!l->loader_listed)
		list_loader_dirs(l);
	for (char **t = l->loader_dirs; t && *t; t++) {
		if (l->p->sysroot) {
			char *name = join(*t, s->m->path);
			bool ok = name && take_under_root(s, name, LOCATE_LOADER_PATH);
			free(name);
			if (ok)
				return true;
			continue;
		}
		if (take_joined(s, *t, s->m->path, LOCATE_LOADER_PATH))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * One module, in the documented order
 * ------------------------------------------------------------------------ */

static void resolve(struct locate *l, const struct dump_module *m, struct locate_result *res)
{
	const struct locate_policy *p = l->p;
	const struct dump *d = l->d;
	*res = (struct locate_result){ .state = LOCATE_MISSING };
	if (m->base == 0 || m->end <= m->start) {
		res->state = LOCATE_NOT_ELF;
		return;
	}
	bool main_program = d->executable && strcmp(m->path, d->executable) == 0;
	struct search s = { .l = l, .m = m, .res = res };
	/* m->file: where a live process's file opens as the process sees it */
	bool ok = main_program && p->executable ? take(&s, p->executable, LOCATE_EXECUTABLE)
						: take(&s, m->file ? m->file : m->path, LOCATE_RECORDED);
	if (!ok && p->sysroot)
		ok = take_under_root(&s, m->path, LOCATE_SYSROOT);
	if (!ok && !strchr(m->path, '/'))
		ok = search_loader_dirs(&s);
	for (size_t i = 0; !ok && i < l->ndirs; i++)
		ok = search_dir(&s, &l->dirs[i]);
	for (char **t = l->trees; !ok && m->build_id_len && t && *t; t++)
		ok = search_tree(&s, *t);
	if (!ok && m->build_id_len)
		ok = search_debuginfod(&s);
	if (!ok && s.fallback) {
		uint8_t id[64];
		size_t idlen, size;
		void *data = s.fallback_in_image ? map_image_elf(p->image, s.fallback_in_image, &size, id, &idlen)
						 : map_elf(s.fallback, &size, id, &idlen);
		if (data && keep_mapping(l, data, size, s.fallback)) {
			struct mapping *mp = &l->maps[l->nmaps - 1];
			*res = (struct locate_result){ LOCATE_MISMATCH_USED, s.fallback_how, mp->path,
						       mp->data, mp->size, s.mismatch, s.fallback_in_image != NULL,
						       LOCATE_UNVERIFIED, 0 };
			s.mismatch = NULL;
			ok = true;
		} else if (data) {
			image_unmap(data, size);
		}
	}
	/* a file found stays here until the caller takes it (locate_take_file) */
	if (!ok && s.mismatch) {
		res->state = s.undecided ? LOCATE_NO_BUILD_ID : LOCATE_REFUSED;
		res->reason = s.mismatch;
		s.mismatch = NULL;
	} else if (!ok && asprintf((char **)&res->reason, "%s: not found%s", m->path,
			    p->sysroot || p->search ? " (nor under the sysroot or search path)" : "") < 0) {
		res->reason = NULL;
	}
	free(s.mismatch);
	free(s.fallback);
	free(s.fallback_in_image);
}

/* ------------------------------------------------------------------------
 * The whole dump
 * ------------------------------------------------------------------------ */

struct locate *locate_modules(const struct dump *d, const struct locate_policy *p, struct pc_error **err)
{
	struct locate *l = calloc(1, sizeof(*l));
	if (!l || !(l->results = calloc(d->nmodules ? d->nmodules : 1, sizeof(*l->results)))) {
		free(l);
		*err = pc_error_new(PC_ENOMEM, NULL, "out of memory");
		return NULL;
	}
	l->d = d;
	l->p = p;
	l->nresults = d->nmodules;
	size_t n = 0;
	for (char **s = p->search; s && *s; s++)
		n++;
	l->dirs = calloc(n ? n : 1, sizeof(*l->dirs));
	for (size_t i = 0; l->dirs && i < n; i++)
		l->dirs[l->ndirs++].dir = p->search[i];

	/* build-id trees: --debug-dir, the sysroot's, the host's */
	size_t nt = 0;
	for (char **t = p->debug_dirs; t && *t; t++)
		l->trees = list_add(l->trees, &nt, strdup(*t));
	/* (an image's usr/lib/debug is not searched: libdwfl opens the
	 * separate debug files by their path) */
	if (p->sysroot && !p->image)
		l->trees = list_add(l->trees, &nt, join(p->sysroot, "usr/lib/debug"));
	l->trees = list_add(l->trees, &nt, strdup("/usr/lib/debug"));

	/* libdwfl's separate-debug search: beside the file, .debug/, then the
	 * trees in the same order */
	size_t len = sizeof(":.debug");
	for (size_t i = 0; i < nt; i++)
		len += strlen(l->trees[i]) + 1;
	if ((l->debuginfo_path = malloc(len)) != NULL) {
		strcpy(l->debuginfo_path, ":.debug");
		for (size_t i = 0; i < nt; i++) {
			strcat(l->debuginfo_path, ":");
			strcat(l->debuginfo_path, l->trees[i]);
		}
	}
	/* the main program first: its RUNPATH tells where the loader found
	 * the libraries recorded by name only */
	for (size_t i = 0; i < d->nmodules; i++)
		if (d->executable && strcmp(d->modules[i].path, d->executable) == 0)
			resolve(l, &d->modules[i], &l->results[i]);
	for (size_t i = 0; i < d->nmodules; i++)
		if (!d->executable || strcmp(d->modules[i].path, d->executable) != 0)
			resolve(l, &d->modules[i], &l->results[i]);
	return l;
}

void locate_free(struct locate *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nresults; i++)
		free((char *)l->results[i].reason);
	for (size_t i = 0; i < l->nmaps; i++) {
		if (!l->maps[i].taken)
			image_unmap(l->maps[i].data, l->maps[i].size);
		free(l->maps[i].path);
	}
	for (size_t i = 0; i < l->ndirs; i++) {
		for (size_t k = 0; k < l->dirs[i].n; k++)
			free(l->dirs[i].entries[k].name);
		free(l->dirs[i].entries);
	}
	for (char **t = l->trees; t && *t; t++)
		free(*t);
	free(l->trees);
	for (char **t = l->loader_dirs; t && *t; t++)
		free(*t);
	free(l->loader_dirs);
	free(l->dirs);
	free(l->maps);
	free(l->results);
	free(l->debuginfo_path);
	free(l);
}

const struct locate_result *locate_result(const struct locate *l, const struct dump_module *m)
{
	size_t i = (size_t)(m - l->d->modules);
	return i < l->nresults ? &l->results[i] : NULL;
}

bool locate_take_file(struct locate *l, const struct dump_module *m, const uint8_t **data, size_t *size)
{
	const struct locate_result *r = locate_result(l, m);
	for (size_t i = 0; r && r->data && i < l->nmaps; i++) {
		struct mapping *mp = &l->maps[i];
		if (mp->data == r->data && !mp->taken) {
			mp->taken = true;
			*data = mp->data;
			*size = mp->size;
			return true;
		}
	}
	return false;
}

const char *locate_debug_cache(const struct locate *l)
{
	return l->p->debug_cache;
}

char *locate_debug_file(const struct locate *l, const uint8_t *id, size_t len)
{
	char hex[129];
	if (len == 0 || len > 64)
		return NULL;
	dump_hex(id, len, hex);
	for (char **t = l->trees; t && *t; t++) {
		char *p = NULL;
		if (asprintf(&p, "%s/.build-id/%.2s/%s.debug", *t, hex, hex + 2) < 0)
			return NULL;
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

const char *locate_debuginfo_path(const struct locate *l)
{
	return l->debuginfo_path;
}
