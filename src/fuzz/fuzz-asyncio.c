/* Fuzz target: the asyncio structure reader (src/python/asyncio.c), and
 * the walk around it, over the memory of a real core of a process with an
 * event loop and tasks, corrupted by the input.  The core is
 * $PYCORE_FUZZ_CORE (plain ELF; scripts/fuzz-lib.sh takes one of the
 * asyncio scenario with an interpreter present); it is opened, its files
 * located and its symbols read once, and its memory copied into buffers
 * of this process.  A first walk of the intact memory gives the anchors:
 * every loop, task, awaited future and task frame the report names.  Each
 * input is a list of patches, 12 bytes each: an anchor (2 bytes, modulo
 * their number), an offset from it (2 bytes, modulo 1024) and 8 bytes to
 * write there; the Python walk (py_analyze, which reads the tasks) runs
 * over the patched memory, then the bytes are put back.  No file is read
 * and libdwfl is not called per input. */
#include <string.h>

#include "dump/dump_int.h"
#include "fuzz-reader.h"
#include "locate/locate.h"
#include "model/model.h"
#include "python/python.h"
#include "symbols/symbols.h"

#define MAX_ANCHORS 4096
#define MAX_PATCHES 64
#define SPAN        1024u

static struct dump *dump;
static struct locate *loc;
static struct symbols *sym;
static uint64_t anchors[MAX_ANCHORS];
static size_t nanchors;
static const struct py_options opt = { .max_repr = 256, .max_items = 100,
				       .max_depth = 16, .timeout = 10 };

static void anchor(uint64_t addr)
{
	if (addr && nanchors < MAX_ANCHORS)
		anchors[nanchors++] = addr;
}

static void anchor_frames(const struct ptrvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		anchor(((const struct model_frame *)v->items[i])->frame_address);
}

static void setup(void)
{
	const char *path = getenv("PYCORE_FUZZ_CORE");
	struct pc_error *e = path ? dump_open(path, &dump) : NULL;
	struct locate_policy policy = { 0 };
	if (path && !e)
		loc = locate_modules(dump, &policy, &e);
	if (path && !e)
		e = symbols_open(dump, loc, &sym);
	if (!path || e) {
		fprintf(stderr, "fuzz-asyncio: set PYCORE_FUZZ_CORE to a plain ELF core of a Python process "
			"running asyncio tasks%s%s\n", e ? ": " : "", e ? e->message : "");
		exit(2);
	}
	/* the memory, writable: each segment's bytes copied once */
	for (size_t i = 0; i < dump->p->nsegs; i++) {
		struct dump_segment *s = &dump->p->segs[i];
		if (!s->data)
			continue;
		uint8_t *copy = malloc(s->end - s->start);
		if (!copy)
			abort();
		memcpy(copy, s->data, s->end - s->start);
		s->data = copy;
	}
	struct model_report *r = model_report_new();
	if (!r || (e = py_analyze(dump, loc, sym, &opt, r)) != NULL) {
		fprintf(stderr, "fuzz-asyncio: %s: no Python state to fuzz\n", path);
		exit(2);
	}
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			anchor(l->address);
			for (size_t j = 0; j < l->tasks.n; j++) {
				const struct model_task *t = l->tasks.items[j];
				anchor(t->address);
				anchor(t->waiter);
				anchor_frames(&t->stack);
			}
		}
		for (size_t k = 0; k < mi->threads.n; k++)
			anchor_frames(&((const struct model_thread *)mi->threads.items[k])->frames);
	}
	if (!nanchors) {
		fprintf(stderr, "fuzz-asyncio: %s: no asyncio loop or task in it\n", path);
		exit(2);
	}
	fprintf(stderr, "fuzz-asyncio: %zu anchors\n", nanchors);
	model_report_free(r);
}

/* Where ADDR's bytes are in the copied memory, or NULL. */
static uint8_t *at(uint64_t addr)
{
	const struct dump_priv *p = dump->p;
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

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!dump)
		setup();
	uint8_t *where[MAX_PATCHES];
	uint8_t saved[MAX_PATCHES][8];
	size_t n = 0;
	for (size_t i = 0; i + 12 <= size && n < MAX_PATCHES; i += 12) {
		uint16_t a, off;
		memcpy(&a, data + i, 2);
		memcpy(&off, data + i + 2, 2);
		uint8_t *p = at(anchors[a % nanchors] + off % SPAN);
		if (!p)
			continue;
		where[n] = p;
		memcpy(saved[n++], p, 8);
		memcpy(p, data + i + 4, 8);
	}
	struct model_report *r = model_report_new();
	if (r) {
		struct pc_error *e = py_analyze(dump, loc, sym, &opt, r);
		if (e)
			pc_error_free(e);
		model_report_free(r);
	}
	while (n-- > 0) /* last patch first: they may overlap */
		memcpy(where[n], saved[n], 8);
	return 0;
}
