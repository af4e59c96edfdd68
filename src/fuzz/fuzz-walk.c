/* Fuzz target: the Python walk (src/python/: thread states, frames, code
 * objects, line tables, locals and their reprs, exceptions, lock waits)
 * over the memory of a real core, corrupted by the input (fuzz-image.h;
 * the core is $PYCORE_FUZZ_CORE, scripts/fuzz-lib.sh's sample core).  The
 * anchors: every Python frame the intact report shows (the handled
 * exceptions' tracebacks too), every local's object and the objects
 * threads wait on, so that patches land on frames (their code, previous
 * frame, locals), objects (their type, size, items) and what they point
 * to.  Each input's walk is py_analyze with --locals; the instances'
 * attributes (--locals=deep) would halve the speed, and are left to
 * fuzz-dump, which runs the whole pipeline with them; the core's headers
 * and notes are fuzz-elfcore's. */
#include "fuzz-image.h"

/* pycore's defaults are larger (max_repr 256, max_items 1000, max_depth
 * 32): the sample's reprs to them cost time and meet no other code */
static const struct py_options opt = { .locals = true, .deep = false, .max_repr = 64, .max_items = 4,
				       .max_depth = 3, .timeout = 10 };

static void anchor_locals(const struct ptrvec *frames)
{
	image_anchor_frames(frames);
	for (size_t i = 0; i < frames->n; i++) {
		const struct model_frame *f = frames->items[i];
		for (size_t k = 0; k < f->locals.n; k++)
			image_anchor(((const struct model_local *)f->locals.items[k])->address);
	}
}

static void setup(void)
{
	const struct model_report *r = core_image_open("fuzz-walk", "", &opt);
	for (size_t i = 0; i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++) {
			const struct model_thread *t = mi->threads.items[k];
			anchor_locals(&t->frames);
			if (t->exception)
				anchor_locals(&t->exception->traceback);
			if (t->waiting_on)
				image_anchor(t->waiting_on->address);
		}
	}
	if (!image_nanchors) {
		fprintf(stderr, "fuzz-walk: no Python frame in the core\n");
		exit(2);
	}
	fprintf(stderr, "fuzz-walk: %zu anchors\n", image_nanchors);
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!image_an)
		setup();
	return image_walk(data, size);
}
