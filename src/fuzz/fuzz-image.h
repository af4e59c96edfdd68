/* Shared by fuzz-walk and fuzz-asyncio: a real core of a Python process
 * ($PYCORE_FUZZ_CORE, plain ELF) opened, its files located and its
 * symbols read once, through the analysis object (analysis_open); a first
 * walk of the intact memory names anchors (addresses of what the report
 * shows: frames, objects, tasks).  Each input is a list of patches, 12
 * bytes each: an anchor (2 bytes, modulo their number), an offset from it
 * (2 bytes, modulo FUZZ_IMAGE_SPAN) and 8 bytes to write there
 * (analysis_patch: the memory the core captured, copied once); the target
 * walks the patched memory (analysis_walk), then the bytes are put back.
 * No file is read and libdwfl is not called per input. */
#ifndef PYCORE_FUZZ_IMAGE_H
#define PYCORE_FUZZ_IMAGE_H

#include <string.h>

#include "analysis/analysis.h"
#include "fuzz-reader.h"
#include "model/model.h"

#define FUZZ_IMAGE_ANCHORS 4096
#define FUZZ_IMAGE_PATCHES 64
#define FUZZ_IMAGE_SPAN    1024u

static struct analysis *image_an;
static uint64_t image_anchors[FUZZ_IMAGE_ANCHORS];
static size_t image_nanchors;

static void image_anchor(uint64_t addr)
{
	if (addr && image_nanchors < FUZZ_IMAGE_ANCHORS)
		image_anchors[image_nanchors++] = addr;
}

/* Open the core, locate its files, read its symbols and walk it once
 * with OPT: the report of the intact memory (the caller takes its anchors
 * from it; the analysis keeps it until the next walk); exits 2 with a
 * line naming TARGET and WANT (what the core must hold) when any of it
 * fails. */
static const struct model_report *core_image_open(const char *target, const char *want, const struct py_options *opt)
{
	const char *path = getenv("PYCORE_FUZZ_CORE");
	struct analysis_options ao = { .py = *opt };
	struct pc_error *e = path ? analysis_open(path, &ao, &image_an) : NULL;
	if (!path || e) {
		fprintf(stderr, "%s: set PYCORE_FUZZ_CORE to a plain ELF core of a Python process %s%s%s\n",
			target, want, e ? ": " : "", e ? e->message : "");
		exit(2);
	}
	if ((e = analysis_walk(image_an)) != NULL) {
		fprintf(stderr, "%s: %s: no Python state to fuzz\n", target, path);
		exit(2);
	}
	return analysis_report(image_an);
}

static void image_anchor_frames(const struct ptrvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		image_anchor(((const struct model_frame *)v->items[i])->frame_address);
}

struct image_patches {
	uint64_t where[FUZZ_IMAGE_PATCHES];
	uint8_t saved[FUZZ_IMAGE_PATCHES][8];
	size_t n;
};

/* Apply the input's patches (those the core's captured memory holds). */
static void image_patch(struct image_patches *ps, const uint8_t *data, size_t size)
{
	ps->n = 0;
	for (size_t i = 0; i + 12 <= size && ps->n < FUZZ_IMAGE_PATCHES; i += 12) {
		uint16_t a, off;
		memcpy(&a, data + i, 2);
		memcpy(&off, data + i + 2, 2);
		uint64_t at = image_anchors[a % image_nanchors] + off % FUZZ_IMAGE_SPAN;
		if (analysis_patch(image_an, at, data + i + 4, 8, ps->saved[ps->n]) == PC_OK)
			ps->where[ps->n++] = at;
	}
}

/* Put the bytes back, last patch first (patches may overlap). */
static void image_undo(struct image_patches *ps)
{
	uint8_t was[8];
	while (ps->n-- > 0)
		if (analysis_patch(image_an, ps->where[ps->n], ps->saved[ps->n], 8, was) != PC_OK)
			abort();
}

/* One input: patch, walk (the report thrown away at the next walk: only
 * crashes, hangs and sanitizer reports count), undo. */
static int image_walk(const uint8_t *data, size_t size)
{
	struct image_patches ps;
	image_patch(&ps, data, size);
	pc_error_free(analysis_walk(image_an));
	image_undo(&ps);
	return 0;
}

#endif
