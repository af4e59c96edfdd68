/* A tar archive's members, indexed once (image.h): every header and
 * offset checked against the archive's length before it is read.
 *
 * Facts of the format, from POSIX.1-2017's pax utility (the ustar
 * interchange format: the 512-byte header's fields and offsets, its
 * checksum, the prefix field; the pax extended header's "LEN key=value\n"
 * records and its path, linkpath and size keys) and GNU tar's manual
 * (the 'L' and 'K' members that carry a long name or link name, sizes in
 * base-256 when the first byte has its high bit set). */
#include "locate/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 512
/* A long name ('L', 'K', a pax record) longer than this is refused. */
#define NAME_MAX_LEN 4096
/* Members of one tar at most (a Debian root has some 30000). */
#define MEMBERS_MAX 4000000

/* The ustar header's fields: offset and length. */
#define F_NAME 0, 100
#define F_SIZE 124, 12
#define F_CHKSUM 148, 8
#define F_LINK 157, 100
#define F_MAGIC 257, 6
#define F_PREFIX 345, 155
#define TYPE_AT 156

/* An octal field (spaces and NULs around it), or a base-256 one: false
 * when it is neither, or too large. */
static bool number(const uint8_t *h, size_t at, size_t len, uint64_t *out)
{
	const uint8_t *f = h + at;
	uint64_t v = 0;
	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return false;    /* negative, or more than 8 bytes' worth */
		for (size_t i = 1; i < len; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	size_t i = 0;
	while (i < len && f[i] == ' ')
		i++;
	bool any = false;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
		any = true;
	}
	for (; i < len; i++)
		if (f[i] != ' ' && f[i] != 0)
			return false;
	*out = v;
	return any;
}

static bool zero_block(const uint8_t *h)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (h[i])
			return false;
	return true;
}

static bool checksum_ok(const uint8_t *h)
{
	uint64_t want;
	if (!number(h, F_CHKSUM, &want))
		return false;
	/* the sum of the header's bytes, the checksum field's taken as
	 * spaces; old writers summed signed chars */
	uint64_t u = 0;
	int64_t s = 0;
	for (size_t i = 0; i < BLOCK; i++) {
		uint8_t b = i >= 148 && i < 156 ? ' ' : h[i];
		u += b;
		s += (int8_t)b;
	}
	return want == u || (int64_t)want == s;
}

/* A field's string: up to its first NUL. */
static char *field(const uint8_t *h, size_t at, size_t len)
{
	const uint8_t *f = h + at;
	size_t n = 0;
	while (n < len && f[n])
		n++;
	return strndup((const char *)f, n);
}

/* NAME made relative to the root: no leading '/', "." components dropped,
 * ".." taking one back.  NULL with *ESCAPES when ".." would leave the root;
 * "" is the root itself. */
static char *normalize(const char *name, bool *escapes)
{
	size_t n = strlen(name);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (const char *p = name; *p;) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0) {
				*escapes = true;
				free(out);
				return NULL;
			}
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = e;
	}
	out[o] = 0;
	return out;
}

/* The pax records of an 'x' member: path, linkpath and size, each
 * replacing the next member's own. */
struct pax {
	char *path, *link;
	uint64_t size;
	bool has_size;
};

static void pax_clear(struct pax *x)
{
	free(x->path);
	free(x->link);
	*x = (struct pax){ 0 };
}

static bool pax_parse(const uint8_t *p, uint64_t n, struct pax *x)
{
	uint64_t at = 0;
	while (at < n) {
		uint64_t len = 0, i = at;
		while (i < n && p[i] >= '0' && p[i] <= '9' && len < ((uint64_t)1 << 40))
			len = len * 10 + (uint64_t)(p[i++] - '0');
		if (i >= n || p[i] != ' ' || len <= i - at + 1 || len > n - at || p[at + len - 1] != '\n')
			return p[at] == 0;   /* padding of NULs ends it */
		const char *kv = (const char *)p + i + 1;
		size_t kvlen = (size_t)(at + len - 1 - (i + 1));
		const char *eq = memchr(kv, '=', kvlen);
		if (eq) {
			size_t klen = (size_t)(eq - kv), vlen = kvlen - klen - 1;
			const char *v = eq + 1;
			if (vlen > NAME_MAX_LEN || memchr(v, 0, vlen))
				return false;
			if (klen == 4 && memcmp(kv, "path", 4) == 0) {
				free(x->path);
				x->path = strndup(v, vlen);
			} else if (klen == 8 && memcmp(kv, "linkpath", 8) == 0) {
				free(x->link);
				x->link = strndup(v, vlen);
			} else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
				uint64_t s = 0;
				size_t k = 0;
				for (; k < vlen && v[k] >= '0' && v[k] <= '9' && s < ((uint64_t)1 << 56); k++)
					s = s * 10 + (uint64_t)(v[k] - '0');
				if (k != vlen || !vlen)
					return false;
				x->size = s;
				x->has_size = true;
			}
		}
		at += len;
	}
	return true;
}

static int member_cmp(const void *a, const void *b)
{
	const struct image_member *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static void member_free(struct image_member *m)
{
	free(m->path);
	free(m->link);
}

void image_tar_free(struct image_tar *t)
{
	for (size_t i = 0; i < t->n; i++)
		member_free(&t->m[i]);
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

static struct pc_error *fail(struct image_tar *t, struct pax *x, char *long_name, char *long_link,
			     struct pc_error *e)
{
	pax_clear(x);
	free(long_name);
	free(long_link);
	image_tar_free(t);
	return e;
}

/* The members sorted, the last of each path kept (a later member
 * replaces an earlier one, as extracting the tar would). */
static void keep_last(struct image_tar *t)
{
	qsort(t->m, t->n, sizeof(*t->m), member_cmp);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (i + 1 < t->n && strcmp(t->m[i].path, t->m[i + 1].path) == 0) {
			member_free(&t->m[i]);
			continue;
		}
		t->m[k++] = t->m[i];
	}
	t->n = k;
}

struct pc_error *image_tar_index(const uint8_t *p, size_t n, struct image_tar *out)
{
	*out = (struct image_tar){ 0 };
	struct pax x = { 0 };
	char *long_name = NULL, *long_link = NULL;
	size_t cap = 0;
	uint64_t at = 0;
	uint32_t order = 0;
	bool ended = false;
	if (n < BLOCK || !checksum_ok(p))
		return pc_error_new(PC_EFORMAT, NULL, "not a tar archive (nor a compressed one, nor an OCI "
				    "image layout)");
	while (at + BLOCK <= n) {
		const uint8_t *h = p + at;
		if (zero_block(h)) {
			ended = true;
			break;
		}
		if (!checksum_ok(h))
			return fail(out, &x, long_name, long_link,
				    pc_error_new(PC_ECORRUPT, NULL, "the tar's member header at offset %llu has a "
						 "wrong checksum", (unsigned long long)at));
		uint64_t size;
		if (!number(h, F_SIZE, &size))
			return fail(out, &x, long_name, long_link,
				    pc_error_new(PC_ECORRUPT, NULL, "the tar's member header at offset %llu has no "
						 "size", (unsigned long long)at));
		char type = (char)h[TYPE_AT];
		if (x.has_size && type != 'x' && type != 'g' && type != 'L' && type != 'K')
			size = x.size;
		uint64_t data = at + BLOCK;
		if (size > n - data)
			return fail(out, &x, long_name, long_link,
				    pc_error_new(PC_ETRUNCATED, NULL, "the tar is truncated: member at offset %llu "
						 "has %llu bytes, the archive ends %llu bytes after its header",
						 (unsigned long long)at, (unsigned long long)size,
						 (unsigned long long)(n - data)));
		uint64_t next = data + (size + BLOCK - 1) / BLOCK * BLOCK;
		if (type == 'L' || type == 'K') {
			if (size > NAME_MAX_LEN)
				return fail(out, &x, long_name, long_link,
					    pc_error_new(PC_ECORRUPT, NULL, "the tar's long name at offset %llu is "
							 "longer than %d bytes", (unsigned long long)at, NAME_MAX_LEN));
			char **slot = type == 'L' ? &long_name : &long_link;
			free(*slot);
			*slot = strndup((const char *)p + data, (size_t)size);
			at = next;
			continue;
		}
		if (type == 'x' || type == 'g') {
			struct pax scratch = { 0 };
			bool ok = pax_parse(p + data, size, type == 'x' ? &x : &scratch);
			pax_clear(&scratch);  /* global records: nothing pycore needs */
			if (!ok)
				return fail(out, &x, long_name, long_link,
					    pc_error_new(PC_ECORRUPT, NULL, "the tar's pax header at offset %llu is "
							 "malformed", (unsigned long long)at));
			at = next;
			continue;
		}
		/* the member's name: pax's, GNU's long one, or prefix/name */
		char *name = NULL;
		if (x.path) {
			name = strdup(x.path);
		} else if (long_name) {
			name = strdup(long_name);
		} else {
			char *base = field(h, F_NAME);
			char *prefix = memcmp(h + 257, "ustar\0", 6) == 0 ? field(h, F_PREFIX) : NULL;
			if (base && prefix && *prefix) {
				if (asprintf(&name, "%s/%s", prefix, base) < 0)
					name = NULL;
			} else if (base) {
				name = strdup(base);
			}
			free(base);
			free(prefix);
		}
		char *link = x.link ? strdup(x.link) : long_link ? strdup(long_link) : field(h, F_LINK);
		pax_clear(&x);
		free(long_name);
		free(long_link);
		long_name = long_link = NULL;
		bool escapes = false;
		char *path = name ? normalize(name, &escapes) : NULL;
		if (!path || !link) {
			struct pc_error *e = escapes
				? pc_error_new(PC_ECORRUPT, NULL, "the tar's member '%s' at offset %llu escapes the "
					       "root", name, (unsigned long long)at)
				: pc_error_new(PC_ENOMEM, NULL, "out of memory");
			free(name);
			free(path);
			free(link);
			return fail(out, &x, NULL, NULL, e);
		}
		enum image_type it = type == '0' || type == 0 || type == '7' ? IMAGE_FILE
				     : type == '5' ? IMAGE_DIR : type == '2' ? IMAGE_SYMLINK
				     : type == '1' ? IMAGE_HARDLINK : IMAGE_OTHER;
		if (it == IMAGE_FILE && name[0] && name[strlen(name) - 1] == '/')
			it = IMAGE_DIR;  /* old tars: a directory is a name ending in '/' */
		if (it == IMAGE_HARDLINK) {
			char *target = normalize(link, &escapes);
			if (!target) {
				struct pc_error *e = escapes
					? pc_error_new(PC_ECORRUPT, NULL, "the tar's hard link '%s' -> '%s' escapes "
						       "the root", name, link)
					: pc_error_new(PC_ENOMEM, NULL, "out of memory");
				free(name);
				free(path);
				free(link);
				return fail(out, &x, NULL, NULL, e);
			}
			free(link);
			link = target;
		} else if (it != IMAGE_SYMLINK) {
			free(link);
			link = NULL;
		}
		free(name);
		if (!*path) {    /* the root itself */
			free(path);
			free(link);
			at = next;
			continue;
		}
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct image_member *nm = nc <= MEMBERS_MAX ? realloc(out->m, nc * sizeof(*nm)) : NULL;
			if (!nm) {
				free(path);
				free(link);
				return fail(out, &x, NULL, NULL,
					    nc > MEMBERS_MAX ? pc_error_new(PC_ELIMIT, NULL, "the tar has more than %d "
									    "members", MEMBERS_MAX)
							     : pc_error_new(PC_ENOMEM, NULL, "out of memory"));
			}
			out->m = nm;
			cap = nc;
		}
		out->m[out->n++] = (struct image_member){ path, link, data, size, it, order++ };
		at = next;
	}
	if (!ended)
		return fail(out, &x, long_name, long_link,
			    pc_error_new(PC_ETRUNCATED, NULL, "the tar is truncated: it ends at byte %llu without "
					 "its end-of-archive block", (unsigned long long)n));
	pax_clear(&x);
	free(long_name);
	free(long_link);
	keep_last(out);
	return NULL;
}

const struct image_member *image_tar_find(const struct image_tar *t, const char *path, size_t len)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *s = t->m[mid].path;
		int c = strncmp(s, path, len);
		if (c == 0)
			c = s[len] ? 1 : 0;
		if (c == 0)
			return &t->m[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool image_tar_has_children(const struct image_tar *t, const char *path, size_t len)
{
	/* the first path after PATH + "/" sorts at or after it; '/' sorts
	 * before every character a name may hold but those below it, so look
	 * at the first member not below PATH + "/" */
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *s = t->m[mid].path;
		int c = strncmp(s, path, len);
		if (c == 0)
			c = (unsigned char)s[len] < '/' ? -1 : 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n; i++) {
		const char *s = t->m[i].path;
		if (strncmp(s, path, len) != 0)
			return false;
		if (s[len] == '/')
			return true;
		if ((unsigned char)s[len] > '/')
			return false;
	}
	return false;
}
