/* The dumps of a batch (batch_input.h): arguments, directories (searched
 * recursively in name order, symbolic links to files followed, to
 * directories not, so that no loop is possible), lists on standard input;
 * then --shard and --skip-done. */
#include "cli/batch/batch_input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonl/surrogates.h"
#include "dump/dump.h"
#include "util/hash.h"

#define MAX_DEPTH 256

/* FNV-1a 64 of PATH's bytes mod N: the shard --shard K/N keeps when K. */
static unsigned long shard_of(const char *path, unsigned long n)
{
	return (unsigned long)(pc_fnv1a64(PC_FNV1A64_INIT, path, strlen(path)) % n);
}

/* ---- the paths of --skip-done: an open-addressing set of strings ---- */

struct path_set {
	char **slots;
	size_t n, cap;               /* cap: a power of two */
};

static uint64_t path_hash(const char *s)
{
	return pc_fnv1a64(PC_FNV1A64_INIT, s, strlen(s));
}

static bool set_has(const struct path_set *s, const char *p)
{
	if (!s->cap)
		return false;
	for (size_t i = path_hash(p) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (strcmp(s->slots[i], p) == 0)
			return true;
	return false;
}

static int set_add(struct path_set *s, const char *p)
{
	if (set_has(s, p))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		char **slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			size_t k = path_hash(s->slots[i]) & (cap - 1);
			while (slots[k])
				k = (k + 1) & (cap - 1);
			slots[k] = s->slots[i];
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	size_t i = path_hash(p) & (s->cap - 1);
	while (s->slots[i])
		i = (i + 1) & (s->cap - 1);
	if (!(s->slots[i] = strdup(p)))
		return -1;
	s->n++;
	return 0;
}

static void set_free(struct path_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
}

/* Every input.path of the records in FILE (a missing file holds none;
 * lines that are not records, such as a line cut short by an interrupted
 * run, are passed over, so that their dumps are analyzed again).  When FILE
 * is standard output too (--skip-done FILE ... >> FILE) and ends in such a
 * cut line, a newline ends it first: the first new record gets a line of
 * its own instead of being glued to the cut one. */
static int read_done(const char *file, struct path_set *s)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "pycore: batch: --skip-done %s: %s\n", file, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	bool cut = false;
	ssize_t n;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		cut = line[n - 1] != '\n';
		/* a path that is not UTF-8 is written with lone surrogates */
		char *paired = jsonl_pair_surrogates(line, (size_t)n);
		json_t *j = paired ? json_loads(paired, 0, NULL) : NULL;
		const char *p = json_string_value(json_object_get(json_object_get(j, "input"), "path"));
		char *bytes = p ? jsonl_unmark(p, false) : NULL;
		if (!paired || (p && (!bytes || set_add(s, bytes) != 0))) {
			fprintf(stderr, "pycore: batch: --skip-done %s: out of memory\n", file);
			rc = -1;
		}
		free(bytes);
		free(paired);
		json_decref(j);
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "pycore: batch: --skip-done %s: read error\n", file);
		rc = -1;
	}
	struct stat in, out;
	if (rc == 0 && cut && fstat(fileno(f), &in) == 0 && fstat(STDOUT_FILENO, &out) == 0 &&
	    in.st_dev == out.st_dev && in.st_ino == out.st_ino && (fputc('\n', stdout) == EOF || fflush(stdout) != 0)) {
		fprintf(stderr, "pycore: batch: cannot write to standard output: %s\n", strerror(errno));
		rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- the list ---- */

struct collect {
	const struct batch_options *bo;
	struct path_set done;
	struct batch_list *l;
};

static int push(struct batch_list *l, const char *path, char *error)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct batch_item *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			goto oom;
		l->items = items;
		l->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		goto oom;
	l->items[l->n++] = (struct batch_item){ p, error };
	return 0;
oom:
	free(error);
	fprintf(stderr, "pycore: batch: out of memory listing the dumps\n");
	return -1;
}

/* The shard and --skip-done filters, in that order (a path of another
 * shard is never looked up). */
static bool wanted(struct collect *c, const char *path)
{
	if (c->bo->shard_n && shard_of(path, c->bo->shard_n) != c->bo->shard_k) {
		c->l->skipped_shard++;
		return false;
	}
	if (set_has(&c->done, path)) {
		c->l->skipped_done++;
		return false;
	}
	return true;
}

/* Does the file start like a dump: an ELF core (e_type ET_CORE), a
 * minidump ("MDMP") or a compressed file (zstd, gzip, xz, lz4)?  Files found in directories are
 * analyzed only then; an unreadable one is, so that its record says why. */
static bool looks_like_dump(const char *path)
{
	unsigned char b[18];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, b, sizeof(b));
	close(fd);
	if (n < 0)
		return true;
	if (n >= 18 && memcmp(b, "\177ELF", 4) == 0)
		return b[16] == 4 && b[17] == 0;       /* ET_CORE, little-endian */
	if (n >= 4 && memcmp(b, "MDMP", 4) == 0)
		return true;
	return dump_compression_of(b, (size_t)n) != NULL;
}

static int add_dir(struct collect *c, const char *dir, int depth);

static int add_entry(struct collect *c, const char *path, int depth)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;       /* gone since it was listed */
	if (S_ISDIR(st.st_mode))
		return add_dir(c, path, depth + 1);
	if (S_ISLNK(st.st_mode) && (stat(path, &st) != 0 || !S_ISREG(st.st_mode)))
		return 0;       /* links to directories are not followed */
	if (!S_ISREG(st.st_mode) || !wanted(c, path))
		return 0;
	if (!looks_like_dump(path)) {
		c->l->skipped_files++;
		return 0;
	}
	return push(c->l, path, NULL);
}

static int add_dir(struct collect *c, const char *dir, int depth)
{
	if (depth > MAX_DEPTH)
		return 0;
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		if (!wanted(c, dir))
			return 0;
		char *why = NULL;
		if (asprintf(&why, "cannot read the directory: %s", strerror(errno)) < 0)
			why = NULL;
		return push(c->l, dir, why);
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		if (rc == 0 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
			size_t len = strlen(dir);
			char *path = NULL;
			if (asprintf(&path, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name) < 0) {
				fprintf(stderr, "pycore: batch: out of memory listing the dumps\n");
				rc = -1;
			} else {
				rc = add_entry(c, path, depth);
				free(path);
			}
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/* A path given by the user (argument or list line): a directory is
 * searched; anything else is a dump, even if it cannot be opened (its
 * record then says so). */
static int add_given(struct collect *c, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(c, path, 0);
	return wanted(c, path) ? push(c->l, path, NULL) : 0;
}

static int add_stdin(struct collect *c)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int sep = c->bo->nul ? '\0' : '\n';
	int rc = 0;
	while (rc == 0 && (n = getdelim(&line, &cap, sep, stdin)) > 0) {
		if (line[n - 1] == sep)
			line[--n] = '\0';
		if (n > 0)
			rc = add_given(c, line);
	}
	if (rc == 0 && ferror(stdin)) {
		fprintf(stderr, "pycore: batch: cannot read the list of dumps on standard input\n");
		rc = -1;
	}
	free(line);
	return rc;
}

int batch_input(char **paths, int npaths, const struct batch_options *bo, struct batch_list *l)
{
	struct collect c = { .bo = bo, .l = l };
	int rc = bo->skip_done ? read_done(bo->skip_done, &c.done) : 0;
	bool stdin_read = false;
	for (int i = 0; rc == 0 && i < npaths; i++) {
		if (strcmp(paths[i], "-") == 0) {
			if (!stdin_read)
				rc = add_stdin(&c);
			stdin_read = true;
		} else {
			rc = add_given(&c, paths[i]);
		}
	}
	if (rc == 0 && npaths == 0)
		rc = add_stdin(&c);
	set_free(&c.done);
	return rc;
}

void batch_list_free(struct batch_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].path);
		free(l->items[i].error);
	}
	free(l->items);
}
