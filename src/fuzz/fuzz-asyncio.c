/* Fuzz target: the asyncio structure reader (src/python/walk/asyncio.c), and
 * the walk around it, over the memory of a real core of a process with an
 * event loop and tasks, corrupted by the input (fuzz-image.h: the core,
 * $PYCORE_FUZZ_CORE, is one scripts/fuzz-lib.sh takes of the asyncio
 * scenario with an interpreter present).  The anchors: every loop, task,
 * awaited future and task frame the intact report names, and the
 * threads' frames.  Each input's walk is py_analyze, which reads the
 * tasks. */
#include "fuzz-image.h"

static const struct py_options opt = { .max_repr = 256, .max_items = 100,
				       .max_depth = 16, .timeout = 10 };

static void setup(void)
{
	const struct model_report *r = core_image_open("fuzz-asyncio", "running asyncio tasks", &opt);
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->loops.n; k++) {
			const struct model_loop *l = mi->loops.items[k];
			image_anchor(l->address);
			for (size_t j = 0; j < l->tasks.n; j++) {
				const struct model_task *t = l->tasks.items[j];
				image_anchor(t->address);
				image_anchor(t->waiter);
				image_anchor_frames(&t->stack);
			}
		}
		for (size_t k = 0; k < mi->threads.n; k++)
			image_anchor_frames(&((const struct model_thread *)mi->threads.items[k])->frames);
	}
	if (!image_nanchors) {
		fprintf(stderr, "fuzz-asyncio: no asyncio loop or task in the core\n");
		exit(2);
	}
	fprintf(stderr, "fuzz-asyncio: %zu anchors\n", image_nanchors);
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!image_an)
		setup();
	return image_walk(data, size);
}
