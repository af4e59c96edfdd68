/* A container image as the sysroot, read in place: an exported container's tar (plain or compressed) or an OCI layout.
 * Contract: nothing is unpacked to disk; every offset and name of the input is checked before it is used.
 *
 * image_open indexes the tar members of each layer once (path -> offset,
 * size, type, link target) and keeps the layers' bytes: an uncompressed tar
 * is mapped where it is; a compressed one (zstd, gzip, xz, lz4, told by its
 * magic) is decompressed once into an unlinked temporary file under
 * $TMPDIR, within the budget's --max-spool and --timeout, and mapped.  An
 * OCI image layout (a directory holding oci-layout and index.json) is
 * index.json -> manifest -> layers, applied in order: a layer's .wh.NAME
 * hides NAME of the layers below, its .wh..wh..opq the whole of its
 * directory below.  Paths resolve through the merged layers component by
 * component, symbolic links followed inside the image's root (an absolute
 * target starts again at the image's root, ".." stops at it).
 *
 * Bad input is refused by image_open with one line: PC_EFORMAT (not a
 * tar, a compressed stream or an OCI layout; a manifest pycore cannot
 * follow), PC_ETRUNCATED (a member's header or data past the end),
 * PC_ECORRUPT (a header whose checksum is wrong, a member path or
 * hard link escaping the root, a symbolic link loop), PC_EIO, PC_ENOMEM,
 * PC_ETIMEOUT and PC_ELIMIT (the budget). */
#ifndef PYCORE_LOCATE_IMAGE_H
#define PYCORE_LOCATE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/dump.h"
#include "util/error.h"

struct image;

/* True when PATH is an image pycore would open (a regular file, or a
 * directory holding an OCI layout): a plain directory is not one. */
bool image_is_image(const char *path);

/* Open the image at PATH within BUDGET (NULL: none). */
struct pc_error *image_open(const char *path, const struct dump_budget *budget, struct image **out);
void image_free(struct image *img);

/* What the image is: "tar", "tar+zstd" (+gzip, +xz, +lz4), "oci". */
const char *image_kind(const struct image *img);

/* The regular file at PATH (absolute, as the crashed process saw it)
 * inside the image: a mapping of its MAXLEN bytes at most (0: no limit;
 * a larger file gives NULL) that the caller owns and unmaps with
 * image_unmap (its address need not be a page's), with *SIZE set; NULL
 * when there is no such regular file, or it is empty. */
const uint8_t *image_map(const struct image *img, const char *path, size_t maxlen, size_t *size);
/* Unmap what image_map (or mmap) gave: any address inside the first page. */
void image_unmap(const void *data, size_t size);
/* Whether PATH names a regular file in the image. */
bool image_has_file(const struct image *img, const char *path);

/* ------------------------------------------------------------------------
 * One tar's members (image_tar.c): bounds-checked, for image.c and the fuzz
 * target.
 * ------------------------------------------------------------------------ */

enum image_type {
	IMAGE_FILE,
	IMAGE_DIR,
	IMAGE_SYMLINK,
	IMAGE_HARDLINK,
	IMAGE_OTHER,                 /* a device, a FIFO, a sparse or unknown member */
};

struct image_member {
	char *path;                  /* normalized: no leading '/', no "." or ".." */
	char *link;                  /* a symbolic link's target as written; a hard
					link's target normalized; else NULL */
	uint64_t offset, size;       /* the data's, in the tar */
	enum image_type type;
	uint32_t order;              /* its place in the tar: the last of a path wins */
};

struct image_tar {
	struct image_member *m;      /* sorted by path, one per path */
	size_t n;
};

/* Index the tar of N bytes at P.  NULL, or the error (the codes of
 * image_open; *OUT then empty). */
struct pc_error *image_tar_index(const uint8_t *p, size_t n, struct image_tar *out);
void image_tar_free(struct image_tar *t);
/* The member at PATH (normalized), or NULL. */
const struct image_member *image_tar_find(const struct image_tar *t, const char *path, size_t len);
/* Whether some member lies under the directory PATH (LEN bytes). */
bool image_tar_has_children(const struct image_tar *t, const char *path, size_t len);

#endif
