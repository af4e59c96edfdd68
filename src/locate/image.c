/* A container image as the sysroot (image.h): its layers' tars indexed
 * once, paths resolved through them, members mapped in place.
 *
 * Facts of the OCI image layout, from the OCI image specification
 * (image-layout.md: the oci-layout file, index.json, blobs/ALG/HEX;
 * manifest.md and image-index.md: "manifests", "layers", "digest";
 * layer.md: whiteouts ".wh.NAME" and the opaque marker ".wh..wh..opq"
 * hide the layers below, never their own layer's files). */
#include "locate/image.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump/compress.h"

/* Symbolic links followed in one resolution at most (Linux's MAXSYMLINKS). */
#define LINKS_MAX 40
/* Layers of one image at most. */
#define LAYERS_MAX 256
/* index.json or a manifest larger than this is refused. */
#define JSON_MAX (4u << 20)

struct layer {
	int fd;                      /* the tar's bytes: the file, or its decompressed copy */
	const uint8_t *map;
	size_t len;
	struct image_tar tar;
};

struct image {
	char *kind;
	struct layer *layers;        /* bottom first */
	size_t nlayers;
};

/* ------------------------------------------------------------------------
 * Opening: a tar (maybe compressed), or an OCI layout's layers
 * ------------------------------------------------------------------------ */

bool image_is_image(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	if (S_ISREG(st.st_mode))
		return true;
	if (!S_ISDIR(st.st_mode))
		return false;
	char *p = NULL;
	if (asprintf(&p, "%s/oci-layout", path) < 0)
		return false;
	bool is = access(p, F_OK) == 0;
	free(p);
	return is;
}

/* The file at PATH read into a layer: mapped, or decompressed into an
 * unlinked temporary file and mapped; *COMPRESSION names its compression
 * (NULL: none).  SPEND counts what the spool costs. */
static struct pc_error *load_layer(const char *path, struct dump_spend *spend, struct layer *l,
				   const char **compression)
{
	*l = (struct layer){ .fd = -1 };
	*compression = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pc_error_new(PC_EIO, path, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return pc_error_new(PC_EFORMAT, path, "not a regular file with contents");
	}
	size_t len = (size_t)st.st_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return pc_error_new(PC_EIO, path, "cannot map: %s", strerror(errno));
	}
	*compression = dump_compression_of(m, len);
	if (!*compression) {
		*l = (struct layer){ fd, m, len, { 0 } };
		return NULL;
	}
	close(fd);
	/* decompressed once, into the spool: pages of zeros left as holes */
	struct pc_error *e = NULL;
	int out = dump_temp_file(&e);
	if (out < 0) {
		munmap(m, len);
		return e;
	}
	const struct dump_budget *b = spend->budget;
	uint64_t limit = 0;
	if (b && b->max_spool)
		limit = b->max_spool > spend->written ? b->max_spool - spend->written : 1;
	struct dump_sparse sp = { out, 0, 0, limit };
	uint64_t total = 0;
	e = dump_decode_spend(m, len, dump_sparse_write, &sp, DUMP_INFLATE_MEM_MAX, spend, &total);
	munmap(m, len);
	spend->written += sp.written;
	if (e && e->code == PC_EIO && errno == EFBIG) {
		pc_error_free(e);
		e = dump_spool_error(b, "decompressing the image");
	}
	if (!e && (total == 0 || ftruncate(out, (off_t)total) != 0))
		e = pc_error_new(total ? PC_EIO : PC_EFORMAT, path, total ? "cannot write its decompressed copy"
								 : "decompressed, it is empty");
	void *dm = e ? MAP_FAILED : mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, out, 0);
	if (!e && dm == MAP_FAILED)
		e = pc_error_new(PC_EIO, path, "cannot map its decompressed copy: %s", strerror(errno));
	if (e) {
		close(out);
		return pc_error_wrap(e, "decompressing %s (%s)", path, *compression);
	}
	*l = (struct layer){ out, dm, (size_t)total, { 0 } };
	return NULL;
}

static void layer_free(struct layer *l)
{
	image_tar_free(&l->tar);
	if (l->map)
		munmap((void *)l->map, l->len);
	if (l->fd >= 0)
		close(l->fd);
}

static struct pc_error *add_layer(struct image *img, const char *path, struct dump_spend *spend,
				  const char **compression)
{
	if (img->nlayers == LAYERS_MAX)
		return pc_error_new(PC_ELIMIT, path, "the image has more than %d layers", LAYERS_MAX);
	struct layer *n = realloc(img->layers, (img->nlayers + 1) * sizeof(*n));
	if (!n)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	img->layers = n;
	struct layer *l = &img->layers[img->nlayers];
	struct pc_error *e = load_layer(path, spend, l, compression);
	if (!e && (e = image_tar_index(l->map, l->len, &l->tar)) != NULL)
		e->file = e->file ? e->file : strdup(path);
	if (e) {
		layer_free(l);
		return e;
	}
	img->nlayers++;
	return NULL;
}

/* DIR/blobs/sha256/HEX for a descriptor's digest ("sha256:HEX"), checked:
 * no other algorithm, and no '/' or ".." to leave the layout by. */
static char *blob_path(const char *dir, json_t *desc, struct pc_error **e)
{
	const char *d = json_string_value(json_object_get(desc, "digest"));
	size_t n = d ? strlen(d) : 0;
	bool ok = n == 7 + 64 && strncmp(d, "sha256:", 7) == 0;
	for (size_t i = 7; ok && i < n; i++)
		ok = (d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f');
	char *p = NULL;
	if (!ok)
		*e = pc_error_new(PC_EFORMAT, dir, "the OCI layout names a blob by '%s', not by a sha256 digest",
				  d ? d : "(no digest)");
	else if (asprintf(&p, "%s/blobs/sha256/%s", dir, d + 7) < 0)
		*e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
	return p;
}

static json_t *load_json(const char *path, struct pc_error **e)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		*e = pc_error_new(PC_EFORMAT, path, "the OCI layout lacks it: %s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > JSON_MAX) {
		*e = pc_error_new(PC_EFORMAT, path, "not a regular file of at most %u bytes", JSON_MAX);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	if (!j || !json_is_object(j)) {
		*e = pc_error_new(PC_EFORMAT, path, "not a JSON object: %s", j ? "another type" : je.text);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* index.json -> (an image index ->) a manifest -> its layers, in order. */
static struct pc_error *open_oci(struct image *img, const char *dir, struct dump_spend *spend)
{
	struct pc_error *e = NULL;
	char *p = NULL;
	if (asprintf(&p, "%s/index.json", dir) < 0)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	json_t *j = load_json(p, &e);
	free(p);
	/* an index's first manifest; an index inside it once more (a
	 * multi-platform image: its first platform's) */
	for (int depth = 0; j && depth < 3 && !json_object_get(j, "layers"); depth++) {
		json_t *ms = json_object_get(j, "manifests");
		json_t *first = json_is_array(ms) ? json_array_get(ms, 0) : NULL;
		if (!first) {
			e = pc_error_new(PC_EFORMAT, dir, "the OCI layout's index names no manifest");
			break;
		}
		p = blob_path(dir, first, &e);
		json_t *next = p ? load_json(p, &e) : NULL;
		free(p);
		json_decref(j);
		j = next;
	}
	json_t *layers = j ? json_object_get(j, "layers") : NULL;
	if (j && !e && !json_is_array(layers))
		e = pc_error_new(PC_EFORMAT, dir, "the OCI layout's manifest has no layers");
	size_t i;
	json_t *desc;
	json_array_foreach(e ? NULL : layers, i, desc) {
		const char *compression;
		if ((p = blob_path(dir, desc, &e)) != NULL) {
			e = add_layer(img, p, spend, &compression);
			free(p);
		}
		if (e) {
			e = pc_error_wrap(e, "layer %zu of the OCI layout", i + 1);
			break;
		}
	}
	json_decref(j);
	if (!e && !img->nlayers)
		e = pc_error_new(PC_EFORMAT, dir, "the OCI layout has no layer");
	return e;
}

static struct pc_error *check_links(const struct image *img);

struct pc_error *image_open(const char *path, const struct dump_budget *budget, struct image **out)
{
	*out = NULL;
	struct image *img = calloc(1, sizeof(*img));
	if (!img)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	struct dump_spend spend = { .budget = budget, .deadline_ns = dump_deadline_ns(budget) };
	struct stat st;
	struct pc_error *e = NULL;
	if (stat(path, &st) != 0) {
		e = pc_error_new(PC_EIO, path, "%s", strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		img->kind = strdup("oci");
		e = open_oci(img, path, &spend);
	} else {
		const char *compression;
		e = add_layer(img, path, &spend, &compression);
		if (!e && asprintf(&img->kind, "tar%s%s", compression ? "+" : "", compression ? compression : "") < 0)
			img->kind = NULL;
	}
	if (!e && !img->kind)
		e = pc_error_new(PC_ENOMEM, NULL, "out of memory");
	if (!e)
		e = check_links(img);
	if (e) {
		image_free(img);
		return e;
	}
	*out = img;
	return NULL;
}

void image_free(struct image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nlayers; i++)
		layer_free(&img->layers[i]);
	free(img->layers);
	free(img->kind);
	free(img);
}

const char *image_kind(const struct image *img)
{
	return img->kind;
}

/* ------------------------------------------------------------------------
 * Resolving a path through the layers
 * ------------------------------------------------------------------------ */

/* What a name is in the merged layers. */
struct found {
	const struct image_member *m;    /* NULL: a directory no member names (implied by
					    members under it), or the root */
	const struct layer *l;
	bool dir;
};

static bool hidden_in(const struct image_tar *t, const char *path, size_t len)
{
	/* a whiteout of PATH or of one of its directories, or an opaque
	 * marker in one of its directories: the layers below are hidden */
	char buf[4096 + 32];
	if (len > 4096)
		return true;
	for (size_t end = len;;) {
		/* X = path[0..end): its directory path[0..slash) (with its '/'),
		 * its name path[slash..end) */
		size_t slash = end;
		while (slash > 0 && path[slash - 1] != '/')
			slash--;
		int n = snprintf(buf, sizeof(buf), "%.*s.wh.%.*s", (int)slash, path, (int)(end - slash), path + slash);
		if (n > 0 && image_tar_find(t, buf, (size_t)n))
			return true;
		n = snprintf(buf, sizeof(buf), "%.*s.wh..wh..opq", (int)slash, path);
		if (n > 0 && image_tar_find(t, buf, (size_t)n))
			return true;
		if (slash == 0)
			return false;
		end = slash - 1;
	}
}

/* PATH (LEN bytes, normalized, no symbolic link resolved) in the merged
 * layers, the top one first. */
static bool lookup(const struct image *img, const char *path, size_t len, struct found *f)
{
	for (size_t i = img->nlayers; i-- > 0;) {
		const struct layer *l = &img->layers[i];
		const struct image_member *m = image_tar_find(&l->tar, path, len);
		if (m) {
			*f = (struct found){ m, l, m->type == IMAGE_DIR };
			return true;
		}
		if (image_tar_has_children(&l->tar, path, len)) {
			*f = (struct found){ NULL, l, true };
			return true;
		}
		if (hidden_in(&l->tar, path, len))
			return false;
	}
	return false;
}

enum { R_OK_ = 0, R_MISSING, R_LOOP, R_NOTDIR, R_NOMEM };

/* PATH resolved (symbolic links followed, the last one too), into *F. */
static int resolve(const struct image *img, const char *path, struct found *f)
{
	/* CUR: the resolved directory so far; REST: what is left to walk */
	size_t cap = strlen(path) + 2;
	char *cur = malloc(cap), *rest = strdup(path);
	if (!cur || !rest) {
		free(cur);
		free(rest);
		return R_NOMEM;
	}
	size_t clen = 0;
	int links = 0, rc = R_OK_;
	*f = (struct found){ NULL, NULL, true };
	const char *r = rest;
	while (rc == R_OK_) {
		while (*r == '/')
			r++;
		if (!*r)
			break;
		const char *e = strchrnul(r, '/');
		size_t n = (size_t)(e - r);
		if (n == 1 && r[0] == '.') {
			r = e;
			continue;
		}
		if (n == 2 && r[0] == '.' && r[1] == '.') {
			/* never above the image's root */
			while (clen > 0 && cur[clen - 1] != '/')
				clen--;
			if (clen > 0)
				clen--;
			cur[clen] = 0;
			*f = (struct found){ NULL, NULL, true };
			r = e;
			continue;
		}
		if (!f->dir) {
			rc = R_NOTDIR;
			break;
		}
		if (clen + 1 + n + 1 > cap) {
			char *nc = realloc(cur, cap = clen + n + 2 + cap);
			if (!nc) {
				rc = R_NOMEM;
				break;
			}
			cur = nc;
		}
		size_t keep = clen;
		if (clen)
			cur[clen++] = '/';
		memcpy(cur + clen, r, n);
		clen += n;
		cur[clen] = 0;
		r = e;
		if (!lookup(img, cur, clen, f)) {
			rc = R_MISSING;
			break;
		}
		/* a hard link: the member it names, in its layer or below */
		for (int k = 0; f->m && f->m->type == IMAGE_HARDLINK && k < 8; k++) {
			const struct image_member *t = image_tar_find(&f->l->tar, f->m->link, strlen(f->m->link));
			struct found g;
			if (t)
				*f = (struct found){ t, f->l, t->type == IMAGE_DIR };
			else if (lookup(img, f->m->link, strlen(f->m->link), &g))
				*f = g;
			else
				break;
		}
		if (!f->m || f->m->type != IMAGE_SYMLINK)
			continue;
		if (++links > LINKS_MAX) {
			rc = R_LOOP;
			break;
		}
		/* the link's target, then what was left */
		const char *target = f->m->link;
		char *nr = NULL;
		if (asprintf(&nr, "%s/%s", target, r) < 0) {
			rc = R_NOMEM;
			break;
		}
		free(rest);
		r = rest = nr;
		clen = target[0] == '/' ? 0 : keep;
		cur[clen] = 0;
		*f = (struct found){ NULL, NULL, true };
	}
	free(cur);
	free(rest);
	return rc;
}

/* Every symbolic link of the image resolved once: a loop is refused at
 * the start, not met later as a file that is not there. */
static struct pc_error *check_links(const struct image *img)
{
	for (size_t i = 0; i < img->nlayers; i++) {
		const struct image_tar *t = &img->layers[i].tar;
		for (size_t k = 0; k < t->n; k++) {
			if (t->m[k].type != IMAGE_SYMLINK)
				continue;
			struct found f;
			int rc = resolve(img, t->m[k].path, &f);
			if (rc == R_LOOP)
				return pc_error_new(PC_ECORRUPT, NULL, "the image's symbolic link /%s -> %s is a loop "
						    "(more than %d links to follow)", t->m[k].path, t->m[k].link,
						    LINKS_MAX);
			if (rc == R_NOMEM)
				return pc_error_new(PC_ENOMEM, NULL, "out of memory");
		}
	}
	return NULL;
}

static const struct image_member *regular(const struct image *img, const char *path, const struct layer **l)
{
	struct found f;
	if (!path || resolve(img, path, &f) != R_OK_ || !f.m || f.m->type != IMAGE_FILE)
		return NULL;
	*l = f.l;
	return f.m;
}

bool image_has_file(const struct image *img, const char *path)
{
	const struct layer *l;
	return regular(img, path, &l) != NULL;
}

const uint8_t *image_map(const struct image *img, const char *path, size_t maxlen, size_t *size)
{
	const struct layer *l;
	const struct image_member *m = regular(img, path, &l);
	if (!m || m->size == 0 || (maxlen && m->size > maxlen) || m->size > SIZE_MAX / 2)
		return NULL;
	/* the member's own pages of the layer's file: its data starts on a
	 * 512-byte block, not always on a page */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t base = m->offset / page * page, delta = m->offset - base;
	void *p = mmap(NULL, (size_t)(m->size + delta), PROT_READ, MAP_PRIVATE, l->fd, (off_t)base);
	if (p == MAP_FAILED)
		return NULL;
	*size = (size_t)m->size;
	return (const uint8_t *)p + delta;
}

void image_unmap(const void *data, size_t size)
{
	dump_unmap(data, size);
}
