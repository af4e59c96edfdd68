/* Fuzz target: the heap census (src/python/heap/: the GC's lists, each
 * object's size, the untracked objects reached, the object graph, its
 * dominators and the retainers' paths) over the memory of a real core,
 * corrupted by the input (fuzz-image.h; the core is $PYCORE_FUZZ_CORE,
 * scripts/fuzz-lib.sh's sample core).  The anchors: the types the intact
 * census counts, its largest objects and its largest retainers, so that
 * patches land on type objects (flags, sizes, tp_traverse), objects
 * (their type, size, items) and the lists' links before them.  Each
 * input's walk is py_analyze with the census. */
#include "fuzz-image.h"

static const struct py_options opt = { .heap = true, .max_repr = 64, .max_items = 4, .max_depth = 3,
				       .timeout = 10 };

static void setup(void)
{
	const struct model_report *r = core_image_open("fuzz-heap", "", &opt);
	const struct model_heap *h = r->heap;
	for (size_t i = 0; h && i < h->types.n; i++)
		image_anchor(((const struct model_heap_type *)h->types.items[i])->address);
	for (size_t i = 0; h && i < h->largest.n; i++) {
		/* (the object, and its GC header 16 bytes before it) */
		uint64_t a = ((const struct model_heap_object *)h->largest.items[i])->address;
		image_anchor(a);
		image_anchor(a - 16);
	}
	for (size_t i = 0; h && h->retained && i < h->retained->retainers.n; i++)
		image_anchor(((const struct model_heap_retainer *)h->retained->retainers.items[i])->address);
	if (!image_nanchors) {
		fprintf(stderr, "fuzz-heap: no object counted in the core\n");
		exit(2);
	}
	fprintf(stderr, "fuzz-heap: %zu anchors\n", image_nanchors);
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!image_an)
		setup();
	return image_walk(data, size);
}
