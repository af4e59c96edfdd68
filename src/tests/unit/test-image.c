/* Unit test of images as the sysroot (src/locate/image.h): small tars
 * written here (a ustar writer of a few lines, GNU long names and pax
 * headers among them), read back through image_open and image_map:
 * members' bytes at offsets that are not a page's, symbolic links
 * (absolute, relative, chained, through a directory, ".." stopping at the
 * root), hard links, implied directories, a later member replacing an
 * earlier one, a zstd-compressed tar within and beyond --max-spool, an OCI
 * layout of two layers (a whiteout, an opaque directory), and the bad
 * images refused with their codes: not a tar, a wrong checksum, a cut
 * tar, a member or hard link escaping the root, a symbolic link loop. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "locate/image.h"
#include "util/sha256.h"
#include "tests/unit/unit.h"

static char tmpdir[] = "/tmp/pycore-test-image-XXXXXX";


/* ---- writing a tar ---- */


static void pad(struct buf *b)
{
	static const uint8_t zero[512];
	if (b->n % 512)
		put(b, zero, 512 - b->n % 512);
}

/* One header (POSIX ustar: name 0, mode 100, size 124, checksum 148,
 * type 156, link name 157, magic 257) and its data. */
static void member(struct buf *b, const char *name, char type, const char *link, const void *data, size_t n)
{
	uint8_t h[512] = { 0 };
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 124, 12, "%011o", (unsigned)n);
	h[156] = (uint8_t)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	put(b, h, 512);
	if (n) {
		put(b, data, n);
		pad(b);
	}
}

static void file(struct buf *b, const char *name, const char *text)
{
	member(b, name, '0', NULL, text, strlen(text));
}

static void end(struct buf *b)
{
	static const uint8_t zero[1024];
	put(b, zero, sizeof(zero));
}

static char *write_file(const char *name, const void *p, size_t n)
{
	char *path = NULL;
	if (asprintf(&path, "%s/%s", tmpdir, name) < 0)
		abort();
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
	return path;
}

/* The bytes image_map gives for PATH, as a string (NULL: none). */
static char *read_member(const struct image *img, const char *path)
{
	size_t n;
	const uint8_t *p = image_map(img, path, 0, &n);
	if (!p)
		return NULL;
	char *s = strndup((const char *)p, n);
	image_unmap(p, n);
	return s;
}

static void expect(const struct image *img, const char *path, const char *want)
{
	char *got = read_member(img, path);
	if (want)
		CHECK(got && strcmp(got, want) == 0, "%s: got %s, want %s", path, got ? got : "nothing", want);
	else
		CHECK(!got, "%s: got %s, want nothing", path, got);
	free(got);
}

static struct image *open_ok(const char *path, const struct dump_budget *budget)
{
	struct image *img = NULL;
	struct pc_error *e = image_open(path, budget, &img);
	CHECK(!e, "%s: %s", path, e ? e->message : "");
	pc_error_free(e);
	return img;
}

static void expect_refused(const char *label, const void *p, size_t n, enum pc_code code, const char *words)
{
	char *path = write_file(label, p, n);
	struct image *img = NULL;
	struct pc_error *e = image_open(path, NULL, &img);
	CHECK(e && e->code == code && strstr(e->message, words), "%s: %s (code %d), want code %d saying '%s'",
	      label, e ? e->message : "accepted", e ? (int)e->code : 0, (int)code, words);
	CHECK(!img, "%s: an image despite the error", label);
	pc_error_free(e);
	image_free(img);
	unlink(path);
	free(path);
}

/* ---- cases ---- */

static void build_root(struct buf *b)
{
	/* sizes chosen so that data lands off page boundaries */
	char big[5000];
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	file(b, "./usr/lib/libpython.so", "first version");
	file(b, "usr/bin/python3", big);
	member(b, "usr/lib/libpython.so", '0', NULL, "second version", 14);  /* replaces the first */
	member(b, "bin", '2', "usr/bin", NULL, 0);
	member(b, "usr/lib64", '2', "/usr/lib", NULL, 0);
	member(b, "usr/lib/current", '2', "libpython.so", NULL, 0);
	member(b, "usr/lib/chain", '2', "current", NULL, 0);
	member(b, "usr/lib/up", '2', "../../../../usr/lib/libpython.so", NULL, 0);
	member(b, "usr/lib/hard", '1', "usr/lib/libpython.so", NULL, 0);
	member(b, "usr/lib/dangling", '2', "nowhere", NULL, 0);
	/* a GNU long name ('L' member: the next member's name) */
	char longname[300];
	snprintf(longname, sizeof(longname), "opt/%0250d/deep.py", 0);
	member(b, "././@LongLink", 'L', NULL, longname, strlen(longname) + 1);
	file(b, "placeholder", "long");
	/* a pax header's path */
	const char rec[] = "29 path=opt/pax/named-by-pax\n";   /* 29 bytes, its length included */
	member(b, "PaxHeaders/x", 'x', NULL, rec, strlen(rec));
	file(b, "ignored-name", "pax");
	end(b);
}

static void test_tar(void)
{
	struct buf b = { 0 };
	build_root(&b);
	char *path = write_file("root.tar", b.p, b.n);
	struct image *img = open_ok(path, NULL);
	if (img) {
		CHECK(strcmp(image_kind(img), "tar") == 0, "kind %s", image_kind(img));
		expect(img, "/usr/lib/libpython.so", "second version");
		expect(img, "/usr/lib/current", "second version");
		expect(img, "/usr/lib/chain", "second version");
		expect(img, "/usr/lib/up", "second version");
		expect(img, "/usr/lib/hard", "second version");
		expect(img, "/usr/lib64/libpython.so", "second version");
		expect(img, "/usr/lib64/../lib/./libpython.so", "second version");
		expect(img, "/../../usr/lib/libpython.so", "second version");
		expect(img, "/usr/lib/dangling", NULL);
		expect(img, "/usr/lib", NULL);               /* a directory (implied) */
		expect(img, "/usr/lib/libpython.so/x", NULL); /* not a directory */
		expect(img, "/nothing", NULL);
		char longname[300];
		snprintf(longname, sizeof(longname), "/opt/%0250d/deep.py", 0);
		expect(img, longname, "long");
		expect(img, "/opt/pax/named-by-pax", "pax");
		expect(img, "/ignored-name", NULL);
		size_t n;
		const uint8_t *p = image_map(img, "/bin/python3", 0, &n);
		CHECK(p && n == 4999 && p[0] == 'b' && p[4998] == 'b', "the big member through /bin: %zu bytes", p ? n : 0);
		if (p)
			image_unmap(p, n);
		CHECK(!image_map(img, "/bin/python3", 100, &n), "a member over the size limit is not mapped");
		CHECK(image_has_file(img, "/usr/lib/chain") && !image_has_file(img, "/usr/lib"), "image_has_file");
	}
	image_free(img);

	/* compressed: decompressed into the spool, within --max-spool */
	size_t cap = ZSTD_compressBound(b.n);
	uint8_t *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, b.p, b.n, 3);
	CHECK(!ZSTD_isError(zn), "zstd");
	char *zpath = write_file("root.tar.zst", z, zn);
	img = open_ok(zpath, NULL);
	if (img) {
		CHECK(strcmp(image_kind(img), "tar+zstd") == 0, "kind %s", image_kind(img));
		expect(img, "/usr/lib/chain", "second version");
	}
	image_free(img);
	struct dump_budget tight = { .max_spool = 4096 };
	struct pc_error *e = image_open(zpath, &tight, &img);
	CHECK(e && e->code == PC_ELIMIT && strstr(e->message, "--max-spool"), "the spool's cap: %s",
	      e ? e->message : "no error");
	pc_error_free(e);
	unlink(zpath);
	free(zpath);
	free(z);
	unlink(path);
	free(path);
	free(b.p);
}

/* blobs/sha256/HEX of P, its descriptor's digest in DIGEST */
static void blob(const char *layout, const void *p, size_t n, char digest[72])
{
	uint8_t d[32];
	pc_sha256(p, n, d);
	strcpy(digest, "sha256:");
	for (int i = 0; i < 32; i++)
		sprintf(digest + 7 + 2 * i, "%02x", d[i]);
	char name[256];
	snprintf(name, sizeof(name), "%s/blobs/sha256/%s", layout, digest + 7);
	FILE *f = fopen(name, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

static void test_oci(void)
{
	char layout[128], dir[160];
	snprintf(layout, sizeof(layout), "%s/oci", tmpdir);
	snprintf(dir, sizeof(dir), "%s/blobs/sha256", layout);
	mkdir(layout, 0755);
	snprintf(dir, sizeof(dir), "%s/blobs", layout);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/blobs/sha256", layout);
	mkdir(dir, 0755);
	struct buf l1 = { 0 }, l2 = { 0 };
	file(&l1, "usr/lib/libpython.so", "base");
	file(&l1, "usr/lib/libc.so", "base libc");
	file(&l1, "etc/deleted", "gone");
	file(&l1, "etc/kept", "kept");
	file(&l1, "opt/app/old.py", "old");
	end(&l1);
	file(&l2, "usr/lib/.wh..wh..opq", "");
	file(&l2, "usr/lib/libpython.so", "top");
	file(&l2, "etc/.wh.deleted", "");
	file(&l2, "opt/.wh.app", "");
	end(&l2);
	char d1[72], d2[72], dm[72], json[1024];
	blob(layout, l1.p, l1.n, d1);
	blob(layout, l2.p, l2.n, d2);
	snprintf(json, sizeof(json), "{\"schemaVersion\":2,\"layers\":[{\"digest\":\"%s\"},{\"digest\":\"%s\"}]}", d1, d2);
	blob(layout, json, strlen(json), dm);
	snprintf(json, sizeof(json), "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"%s\"}]}", dm);
	free(write_file("oci/index.json", json, strlen(json)));
	free(write_file("oci/oci-layout", "{}", 2));
	CHECK(image_is_image(layout) && !image_is_image(tmpdir), "an OCI layout is an image, a directory is not");
	struct image *img = open_ok(layout, NULL);
	if (img) {
		CHECK(strcmp(image_kind(img), "oci") == 0, "kind %s", image_kind(img));
		expect(img, "/usr/lib/libpython.so", "top");
		expect(img, "/usr/lib/libc.so", NULL);       /* the opaque directory hides it */
		expect(img, "/etc/deleted", NULL);           /* the whiteout */
		expect(img, "/etc/kept", "kept");
		expect(img, "/opt/app/old.py", NULL);        /* a whited-out directory */
	}
	image_free(img);
	/* a digest that would leave the layout */
	snprintf(json, sizeof(json), "{\"manifests\":[{\"digest\":\"sha256:../../etc/passwd\"}]}");
	free(write_file("oci/index.json", json, strlen(json)));
	struct pc_error *e = image_open(layout, NULL, &img);
	CHECK(e && e->code == PC_EFORMAT && strstr(e->message, "not by a sha256 digest"), "a bad digest: %s",
	      e ? e->message : "accepted");
	pc_error_free(e);
	free(l1.p);
	free(l2.p);
}

static void test_bad(void)
{
	struct buf b = { 0 };
	file(&b, "a", "aaaa");
	file(&b, "b", "bbbb");
	end(&b);
	uint8_t *p = malloc(b.n);
	expect_refused("not-a-tar", "plain text, no tar here", 23, PC_EFORMAT, "not a tar");
	memcpy(p, b.p, b.n);
	p[1024 + 10] ^= 1;  /* the second header's name, its checksum unchanged */
	expect_refused("checksum", p, b.n, PC_ECORRUPT, "wrong checksum");
	expect_refused("cut-data", b.p, 512 + 2, PC_ETRUNCATED, "truncated");
	expect_refused("cut-end", b.p, 2048, PC_ETRUNCATED, "end-of-archive");
	free(p);
	free(b.p);

	struct buf e = { 0 };
	file(&e, "usr/../../x", "x");
	end(&e);
	expect_refused("escape", e.p, e.n, PC_ECORRUPT, "escapes the root");
	free(e.p);
	struct buf h = { 0 };
	member(&h, "a", '1', "../b", NULL, 0);
	end(&h);
	expect_refused("hard-escape", h.p, h.n, PC_ECORRUPT, "escapes the root");
	free(h.p);
	struct buf l = { 0 };
	member(&l, "x", '2', "y", NULL, 0);
	member(&l, "y", '2', "/x", NULL, 0);
	end(&l);
	expect_refused("loop", l.p, l.n, PC_ECORRUPT, "loop");
	free(l.p);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 99;
	}
	test_tar();
	test_oci();
	test_bad();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("cannot remove %s\n", tmpdir);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
