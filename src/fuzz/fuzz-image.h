/* Shared by fuzz-walk and fuzz-asyncio: a real core of a Python process
 * ($PYCORE_FUZZ_CORE, plain ELF) opened, its files located and its
 * symbols read once, and its memory copied into writable buffers of this
 * process; a first walk of the intact memory names anchors (addresses of
 * what the report shows: frames, objects, tasks).  Each input is a list
 * of patches, 12 bytes each: an anchor (2 bytes, modulo their number), an
 * offset from it (2 bytes, modulo FUZZ_IMAGE_SPAN) and 8 bytes to write
 * there; the target walks the patched memory, then the bytes are put
 * back.  No file is read and libdwfl is not called per input. */
#ifndef PYCORE_FUZZ_IMAGE_H
#define PYCORE_FUZZ_IMAGE_H

#include <string.h>

#include "dump/dump_int.h"
#include "fuzz-reader.h"
#include "locate/locate.h"
#include "model/model.h"
#include "python/python.h"
#include "symbols/symbols.h"

#define FUZZ_IMAGE_ANCHORS 4096
#define FUZZ_IMAGE_PATCHES 64
#define FUZZ_IMAGE_SPAN    1024u

static struct dump *image_dump;
static struct locate *image_loc;
static struct symbols *image_sym;
static uint64_t image_anchors[FUZZ_IMAGE_ANCHORS];
static size_t image_nanchors;

static void image_anchor(uint64_t addr)
{
	if (addr && image_nanchors < FUZZ_IMAGE_ANCHORS)
		image_anchors[image_nanchors++] = addr;
}

/* Open the core, locate its files, read its symbols, copy its memory and
 * walk it once with OPT: the report of the intact memory (the caller
 * takes its anchors from it, then frees it); exits 2 with a line naming
 * TARGET and WANT (what the core must hold) when any of it fails. */
static struct model_report *image_open(const char *target, const char *want, const struct py_options *opt)
{
	const char *path = getenv("PYCORE_FUZZ_CORE");
	struct pc_error *e = path ? dump_open(path, &image_dump) : NULL;
	struct locate_policy policy = { 0 };
	if (path && !e)
		image_loc = locate_modules(image_dump, &policy, &e);
	if (path && !e)
		e = symbols_open(image_dump, image_loc, &image_sym);
	if (!path || e) {
		fprintf(stderr, "%s: set PYCORE_FUZZ_CORE to a plain ELF core of a Python process %s%s%s\n",
			target, want, e ? ": " : "", e ? e->message : "");
		exit(2);
	}
	/* the memory, writable: each segment's bytes copied once */
	for (size_t i = 0; i < image_dump->p->nsegs; i++) {
		struct dump_segment *s = &image_dump->p->segs[i];
		if (!s->data)
			continue;
		uint8_t *copy = malloc(s->end - s->start);
		if (!copy)
			abort();
		memcpy(copy, s->data, s->end - s->start);
		s->data = copy;
	}
	struct model_report *r = model_report_new();
	if (!r || (e = py_analyze(image_dump, image_loc, image_sym, opt, r)) != NULL) {
		fprintf(stderr, "%s: %s: no Python state to fuzz\n", target, path);
		exit(2);
	}
	return r;
}

static void image_anchor_frames(const struct ptrvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		image_anchor(((const struct model_frame *)v->items[i])->frame_address);
}

/* Where ADDR's 8 bytes are in the copied memory, or NULL. */
static uint8_t *image_at(uint64_t addr)
{
	const struct dump_priv *p = image_dump->p;
	size_t lo = 0, hi = p->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dump_segment *s = &p->segs[mid];
		if (addr < s->start)
			hi = mid;
		else if (addr + 8 > s->end)
			lo = mid + 1;
		else
			return s->data ? (uint8_t *)s->data + (addr - s->start) : NULL;
	}
	return NULL;
}

struct image_patches {
	uint8_t *where[FUZZ_IMAGE_PATCHES];
	uint8_t saved[FUZZ_IMAGE_PATCHES][8];
	size_t n;
};

/* Apply the input's patches. */
static void image_patch(struct image_patches *ps, const uint8_t *data, size_t size)
{
	ps->n = 0;
	for (size_t i = 0; i + 12 <= size && ps->n < FUZZ_IMAGE_PATCHES; i += 12) {
		uint16_t a, off;
		memcpy(&a, data + i, 2);
		memcpy(&off, data + i + 2, 2);
		uint8_t *p = image_at(image_anchors[a % image_nanchors] + off % FUZZ_IMAGE_SPAN);
		if (!p)
			continue;
		ps->where[ps->n] = p;
		memcpy(ps->saved[ps->n++], p, 8);
		memcpy(p, data + i + 4, 8);
	}
}

/* Put the bytes back, last patch first (patches may overlap). */
static void image_undo(struct image_patches *ps)
{
	while (ps->n-- > 0)
		memcpy(ps->where[ps->n], ps->saved[ps->n], 8);
}

/* One input: patch, walk with OPT (the report thrown away: only crashes,
 * hangs and sanitizer reports count), undo. */
static int image_walk(const struct py_options *opt, const uint8_t *data, size_t size)
{
	struct image_patches ps;
	image_patch(&ps, data, size);
	struct model_report *r = model_report_new();
	if (r) {
		struct pc_error *e = py_analyze(image_dump, image_loc, image_sym, opt, r);
		if (e)
			pc_error_free(e);
		model_report_free(r);
	}
	image_undo(&ps);
	return 0;
}

#endif
