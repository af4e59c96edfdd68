/* The objects of a free-threaded build (3.13t), which has no GC lists
 * (heap_mimalloc_objects), and its mimalloc's memory for the split
 * (heap_mimalloc_memory, at the end).  Every object with a GC is a
 * block of one of mimalloc's heaps, as its
 * collector finds them (Python/gc_free_threading.c, gc_visit_heaps): each
 * thread state's heaps _Py_MIMALLOC_HEAP_GC (the object at the block's
 * start) and _Py_MIMALLOC_HEAP_GC_PRE (after the two words of its
 * pre-header), each heap's page queues, each page's blocks that are on
 * none of its free lists; an object is counted when its ob_gc_bits say
 * the GC tracks it (_PyGC_BITS_TRACKED, Include/internal/pycore_gc.h), as
 * gc.get_objects() counts.
 *
 * mimalloc's facts (CPython's Objects/mimalloc, mimalloc 2.1.2, and
 * Include/internal/mimalloc/mimalloc/types.h and internal.h): a segment is
 * 32 MiB, aligned, its pages' headers (mi_page_t, one per 64 KiB slice) in
 * its slices[] array, so a page's segment is its header's address rounded
 * down and its data starts at the slice's index times 64 KiB, plus 3
 * blocks for blocks of 8 to 64 bytes and one for blocks up to 512
 * (segment.c, _mi_segment_page_start_from_slice); a block of 2 GiB or more
 * is a huge page's only one, its size the page's.  The free lists (free,
 * local_free, and the other threads' xthread_free with two flag bits) link
 * blocks through their first word, not encoded in a release build
 * (MI_ENCODE_FREELIST needs MI_SECURE >= 3 or MI_DEBUG).  The blocks from
 * capacity to reserved were never used.
 *
 * A thread that ends leaves the segments that still hold blocks in its
 * interpreter's pool of abandoned segments (two lists through each
 * segment's abandoned_next, the first's head tagged in its low bits, as
 * mi_tagged_segment_ptr clears them), until another thread reclaims them:
 * there each page in use (a slice whose xblock_size is set, after the
 * segment's own first one, the next one slice_count slices on) is read
 * when its tag says it was a GC heap's (_mi_abandoned_pool_visit_blocks).
 *
 * The offsets below are those of 3.13's headers compiled with
 * Py_GIL_DISABLED (src/tests/dist/test-versions.sh checks them).  3.14t
 * and later have another mimalloc (its page has block_size and
 * page_start): not read yet, and said so. */
#include "python/heap/heap.h"
#include "python/objects/objects.h"
#include "python/walk/walk.h"
#include "symbols/symbols.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MI_QUEUES 75                 /* MI_BIN_FULL + 1 */
#define MI_QUEUE_SIZE 24             /* mi_page_queue_t: first, last, block_size */
#define MI_SEGMENT_SIZE (32ull << 20)
#define MI_SLICE_SIZE (64ull << 10)
#define MI_HUGE_BLOCK (2ull << 30)
#define MI_HEAP_GC 2                 /* _Py_MIMALLOC_HEAP_GC, Include/internal/pycore_mimalloc.h */
#define MI_HEAP_GC_PRE 3             /* _Py_MIMALLOC_HEAP_GC_PRE */
#define GC_BITS_TRACKED 1
#define GC_BITS_DEFERRED 64          /* _PyGC_BITS_DEFERRED */
#define REF_SHARED_SHIFT 2           /* _Py_REF_SHARED_SHIFT, Include/object.h */
#define MAX_THREADS 100000           /* thread states read at most */
#define MAX_PAGES (1u << 24)         /* pages read at most, over every heap */
#define MAX_SEGMENTS (1u << 20)      /* abandoned segments read at most */

/* where a free-threaded build keeps mimalloc's heaps, by its minor version */
struct heap_mimalloc_layout {
	unsigned minor;
	int64_t tstate_heaps, tstate_initialized, heap_size, heap_pages;
	int64_t page_slice_count, page_capacity, page_free, page_xblock_size, page_local_free,
		page_xthread_free, page_next, page_size;
	int64_t segment_slices, object_gc_bits, interp_pool, pool_abandoned, pool_visited;
	int64_t object_ref_local, object_ref_shared, segment_slice_entries, segment_abandoned_next;
	int64_t page_tag_byte, page_tag_shift;
	int64_t page_used, segment_size, segment_used;
};

static const struct heap_mimalloc_layout layouts[] = {
	/* 3.13: offsetof(_PyThreadStateImpl, mimalloc.heaps), .initialized;
	 * sizeof(mi_heap_t), offsetof(mi_heap_t, pages); mi_page_t's
	 * slice_count, capacity, free, xblock_size, local_free,
	 * xthread_free, next and size; offsetof(mi_segment_t, slices);
	 * offsetof(PyObject, ob_gc_bits); offsetof(PyInterpreterState,
	 * mimalloc.abandoned_pool), and its abandoned and abandoned_visited;
	 * PyObject's ob_ref_local and ob_ref_shared; mi_segment_t's
	 * slice_entries and abandoned_next; the byte of mi_page_t's tag and
	 * its shift there; mi_page_t's used, mi_segment_t's segment_size
	 * and used */
	{ 13, 360, 14224, 3064, 1040, 0, 10, 16, 28, 32, 40, 56, 96, 264, 11, 10816, 64, 0, 12, 16, 248, 176, 8, 3,
	  24, 32, 208 },
};

static const struct heap_mimalloc_layout *layout_of(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

struct mwalk {
	const struct heap_mimalloc_visit *v;
	struct py_ctx *c;
	const struct heap_mimalloc_layout *M;
	uint64_t pages;
	bool stopped;
	uint64_t freebits[65536 / 64];   /* a page's free blocks (capacity is 16 bits) */
};

static void said(struct mwalk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void said(struct mwalk *w, const char *fmt, ...)
{
	char line[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	w->v->unread(w->v->arg, line);
}

/* The blocks of the list at BLOCK marked free, each proven one of the
 * page's (START, block size BS, CAP blocks); false when one is not. */
static bool mark_free(struct mwalk *w, uint64_t block, uint64_t start, uint64_t bs, uint32_t cap)
{
	for (uint32_t n = 0; block; n++) {
		uint64_t i = (block - start) / bs;
		if (n > cap || block < start || (block - start) % bs || i >= cap)
			return false;
		w->freebits[i / 64] |= 1ull << (i % 64);
		if (py_rd_ptr(w->c, block, &block) != PC_OK)
			return false;
	}
	return true;
}

/* The objects of the page at PAGE (its header's bytes in P), the object
 * OFF bytes into each block; false when the page is not one. */
static bool walk_page(struct mwalk *w, uint64_t page, const unsigned char *p, uint64_t off, const char *what)
{
	const struct heap_mimalloc_layout *M = w->M;
	uint16_t cap;
	uint32_t bs32, slices;
	uint64_t freel, local, thread;
	memcpy(&slices, p + M->page_slice_count, 4);
	memcpy(&cap, p + M->page_capacity, 2);
	memcpy(&bs32, p + M->page_xblock_size, 4);
	memcpy(&freel, p + M->page_free, 8);
	memcpy(&local, p + M->page_local_free, 8);
	memcpy(&thread, p + M->page_xthread_free, 8);
	uint64_t segment = (page - 1) & ~(MI_SEGMENT_SIZE - 1), slices0 = segment + (uint64_t)M->segment_slices;
	if (page < slices0 || (page - slices0) % (uint64_t)M->page_size || bs32 == 0)
		return false;
	uint64_t idx = (page - slices0) / (uint64_t)M->page_size, bs = bs32, start_offset = 0;
	if (idx >= MI_SEGMENT_SIZE / MI_SLICE_SIZE)
		return false;
	if (bs >= MI_HUGE_BLOCK && (bs = (uint64_t)slices * MI_SLICE_SIZE) == 0)
		return false;
	else if (bs >= 8 && bs <= 64)
		start_offset = 3 * bs;
	else if (bs >= 8 && bs <= 512)
		start_offset = bs;
	uint64_t start = segment + idx * MI_SLICE_SIZE + start_offset;
	memset(w->freebits, 0, ((size_t)cap + 63) / 64 * 8);
	if (!mark_free(w, freel, start, bs, cap) || !mark_free(w, local, start, bs, cap) ||
	    !mark_free(w, thread & ~(uint64_t)3, start, bs, cap))
		return false;
	for (uint32_t i = 0; i < cap && !w->stopped; i++) {
		if (w->freebits[i / 64] & (1ull << (i % 64)))
			continue;
		uint64_t obj = start + (uint64_t)i * bs + off;
		uint8_t bits;
		if (dump_read(w->c->d, obj + (uint64_t)M->object_gc_bits, &bits, 1) == PC_OK &&
		    (bits & GC_BITS_TRACKED) && !w->v->object(w->v->arg, obj, what))
			w->stopped = true;
	}
	return true;
}

/* The pages of the heap at HEAP, each object OFF bytes into its block */
static void walk_heap(struct mwalk *w, uint64_t heap, uint64_t off, const char *what)
{
	const struct heap_mimalloc_layout *M = w->M;
	struct py_ctx *c = w->c;
	unsigned char p[256];
	for (int q = 0; q < MI_QUEUES && !w->stopped; q++) {
		uint64_t page;
		if (py_rd_ptr(c, heap + (uint64_t)M->heap_pages + (uint64_t)q * MI_QUEUE_SIZE, &page) != PC_OK) {
			said(w, "%s: its page queue %d is not in the dump", what, q);
			continue;
		}
		for (uint64_t n = 0; page && !w->stopped; n++) {
			if (++w->pages > MAX_PAGES) {
				said(w, "%s: the census stopped at %u mimalloc pages (its budget)", what, MAX_PAGES);
				w->stopped = true;
				break;
			}
			if ((size_t)M->page_size > sizeof(p) || dump_read(c->d, page, p, (size_t)M->page_size) != PC_OK) {
				said(w, "%s: the page at 0x%llx of queue %d is not in the dump: the rest of the queue "
				     "is not read", what, (unsigned long long)page, q);
				break;
			}
			if (!walk_page(w, page, p, off, what)) {
				said(w, "%s: the page at 0x%llx of queue %d is no mimalloc page (or its free lists "
				     "lead out of it): the rest of the queue is not read", what, (unsigned long long)page, q);
				break;
			}
			memcpy(&page, p + M->page_next, 8);
		}
	}
}

/* The pages of the GC heaps in the abandoned segment SEG */
static void walk_segment(struct mwalk *w, uint64_t seg)
{
	const struct heap_mimalloc_layout *M = w->M;
	unsigned char p[256];
	uint64_t entries;
	char what[96];
	snprintf(what, sizeof(what), "the abandoned mimalloc segment at 0x%llx", (unsigned long long)seg);
	if (py_rd_ptr(w->c, seg + (uint64_t)M->segment_slice_entries, &entries) != PC_OK ||
	    entries > MI_SEGMENT_SIZE / MI_SLICE_SIZE) {
		said(w, "%s: its number of slices is not in the dump, or is none of a segment's", what);
		return;
	}
	for (uint64_t i = 0; i < entries && !w->stopped;) {
		uint64_t page = seg + (uint64_t)M->segment_slices + i * (uint64_t)M->page_size;
		uint32_t count, bs;
		if ((size_t)M->page_size > sizeof(p) || dump_read(w->c->d, page, p, (size_t)M->page_size) != PC_OK) {
			said(w, "%s: its slice %llu is not in the dump: the rest is not read", what, (unsigned long long)i);
			return;
		}
		memcpy(&count, p + M->page_slice_count, 4);
		memcpy(&bs, p + M->page_xblock_size, 4);
		if (count == 0) {
			said(w, "%s: its slice %llu spans no slice: the rest is not read", what, (unsigned long long)i);
			return;
		}
		unsigned tag = (p[M->page_tag_byte] >> M->page_tag_shift) & 0xf;
		if (i > 0 && bs && (tag == MI_HEAP_GC || tag == MI_HEAP_GC_PRE)) {
			if (++w->pages > MAX_PAGES) {
				said(w, "%s: the census stopped at %u mimalloc pages (its budget)", what, MAX_PAGES);
				w->stopped = true;
				return;
			}
			if (!walk_page(w, page, p, tag == MI_HEAP_GC_PRE ? 16 : 0, what)) {
				said(w, "%s: the page at 0x%llx is no mimalloc page (or its free lists lead out of it)", what,
				     (unsigned long long)page);
			}
		}
		i += count;
	}
}

/* The segments of threads that ended, in interpreter IN's pool */
static void walk_abandoned(struct mwalk *w, uint64_t in)
{
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	const struct heap_mimalloc_layout *M = w->M;
	uint64_t pool = in + (uint64_t)M->interp_pool;
	static const char *const lists[] = { "abandoned", "visited abandoned" };
	for (int l = 0; l < 2 && !w->stopped; l++) {
		uint64_t seg, n = 0;
		if (py_rd_ptr(w->c, pool + (uint64_t)(l ? M->pool_visited : M->pool_abandoned), &seg) != PC_OK) {
			said(w, "the interpreter at 0x%llx: its list of %s mimalloc segments is not in the dump",
			     (unsigned long long)in, lists[l]);
			continue;
		}
		for (seg &= ~(MI_SEGMENT_SIZE - 1); seg && !w->stopped; n++) {
			if (n >= MAX_SEGMENTS || addrtab_add(&seen, seg) != 0) {
				said(w, "the interpreter at 0x%llx: its list of %s mimalloc segments comes back to 0x%llx, "
				     "or is longer than %u: read so far", (unsigned long long)in, lists[l],
				     (unsigned long long)seg, MAX_SEGMENTS);
				break;
			}
			walk_segment(w, seg);
			if (py_rd_ptr(w->c, seg + (uint64_t)M->segment_abandoned_next, &seg) != PC_OK) {
				said(w, "the interpreter at 0x%llx: its list of %s mimalloc segments breaks after 0x%llx",
				     (unsigned long long)in, lists[l], (unsigned long long)seg);
				break;
			}
		}
	}
	addrtab_free(&seen);
}

void heap_mimalloc_objects(const struct heap_mimalloc_visit *v, uint64_t head)
{
	struct py_ctx *c = v->c;
	const struct py_layout *L = c->L;
	struct mwalk w = { .v = v, .c = c, .M = layout_of(L->minor) };
	if (!w.M) {
		said(&w, "a free-threaded 3.%u keeps its objects in mimalloc's heaps, whose layout in this version "
		     "(its pages' differs from 3.13's) pycore does not read yet: no object is counted", L->minor);
		return;
	}
	struct addrtab seen = ADDRTAB_INIT(uint64_t);
	for (uint64_t in = head; in && addrtab_add(&seen, in) == 0 && !w.stopped;) {
		uint64_t ts = 0, n = 0;
		if (py_rd_ptr(c, in + (uint64_t)L->interp_tstate_head, &ts) != PC_OK)
			said(&w, "the interpreter at 0x%llx: its thread states are not in the dump", (unsigned long long)in);
		for (; ts && n < MAX_THREADS && addrtab_add(&seen, ts) == 0 && !w.stopped; n++) {
			int32_t initialized = 0;
			char what[80];
			snprintf(what, sizeof(what), "the mimalloc heaps of the thread state at 0x%llx",
				 (unsigned long long)ts);
			if (py_rd_i32(c, ts + (uint64_t)w.M->tstate_initialized, &initialized) != PC_OK)
				said(&w, "%s are not in the dump", what);
			else if (initialized) {
				uint64_t heaps = ts + (uint64_t)w.M->tstate_heaps;
				walk_heap(&w, heaps + MI_HEAP_GC * (uint64_t)w.M->heap_size, 0, what);
				walk_heap(&w, heaps + MI_HEAP_GC_PRE * (uint64_t)w.M->heap_size, 16, what);
			}
			if (py_rd_ptr(c, ts + (uint64_t)L->tstate_next, &ts) != PC_OK)
				break;
		}
		if (ts && n == MAX_THREADS)
			said(&w, "the interpreter at 0x%llx: its thread states were read up to %u (a budget)",
			     (unsigned long long)in, MAX_THREADS);
		walk_abandoned(&w, in);
		if (py_rd_ptr(c, in + (uint64_t)L->interp_next, &in) != PC_OK)
			break;
	}
	addrtab_free(&seen);
}

bool heap_mimalloc_tracked(struct py_ctx *c, uint64_t obj)
{
	const struct heap_mimalloc_layout *M = layout_of(c->L->minor);
	uint8_t bits;
	return M && dump_read(c->d, obj + (uint64_t)M->object_gc_bits, &bits, 1) == PC_OK &&
	       (bits & GC_BITS_TRACKED);
}

uint64_t heap_mimalloc_refcnt(struct py_ctx *c, uint64_t obj)
{
	const struct heap_mimalloc_layout *M = layout_of(c->L->minor);
	uint32_t local;
	int64_t shared;
	uint8_t bits;
	/* Py_REFCNT: ob_ref_local (UINT32_MAX: immortal) plus ob_ref_shared
	 * shifted past its two flag bits; an object with deferred reference
	 * counting (_PyGC_BITS_DEFERRED) has references from the stacks its
	 * count does not hold: as if held from outside */
	if (!M || dump_read(c->d, obj + (uint64_t)M->object_ref_local, &local, 4) != PC_OK ||
	    dump_read(c->d, obj + (uint64_t)M->object_ref_shared, &shared, 8) != PC_OK ||
	    dump_read(c->d, obj + (uint64_t)M->object_gc_bits, &bits, 1) != PC_OK || local == UINT32_MAX ||
	    (bits & GC_BITS_DEFERRED) || shared < 0)
		return UINT64_MAX;
	return (uint64_t)local + ((uint64_t)shared >> REF_SHARED_SHIFT);
}

/* mimalloc's memory: its arenas (Objects/mimalloc/arena.c of 3.13,
 * mimalloc 2.1.2), the static array mi_arenas (MI_MAX_ARENAS pointers:
 * the symbol's size) and mi_arena_count.  mi_arena_t is that file's own:
 * start at 32, block_count at 40 (blocks of MI_ARENA_BLOCK_SIZE, a
 * segment's 32 MiB), field_count at 48 (the bitmaps' words) and the bitmap
 * of the blocks in use at 136 (gdb's ptype/o of 3.13t's libpython;
 * check-heap's allocators case holds the arenas' bytes to what mimalloc's
 * own statistics say it reserved).  A segment in use starts at the first
 * of its blocks, segment_size long (a huge one spans more than one); its
 * pages are the slices after its first with a block size, slice_count
 * slices each, which it counts itself (used): a proof it was read whole. */
#define ARENA_START 32
#define ARENA_BLOCK_COUNT 40
#define ARENA_FIELD_COUNT 48
#define ARENA_INUSE 136
#define MAX_ARENA_BLOCKS (1ull << 20)   /* 32 TiB an arena */

struct mmem {
	struct py_ctx *c;
	const struct heap_mimalloc_layout *M;
	struct model_heap_mimalloc *m;
	struct heap_part part;       /* the first part not read */
	unsigned char *slices;       /* a segment's table of pages */
};

/* The segment in use at SEG (at most MAX bytes: the arena's blocks left):
 * its pages and blocks into k->m; its size, 0 when it is not read */
static uint64_t mem_segment(struct mmem *k, uint64_t seg, uint64_t max)
{
	const struct heap_mimalloc_layout *M = k->M;
	const uint64_t most = MI_SEGMENT_SIZE / MI_SLICE_SIZE + 1;   /* MI_SLICES_PER_SEGMENT + 1 */
	uint64_t size, entries, used, pages = 0;
	if (py_rd_ptr(k->c, seg + (uint64_t)M->segment_size, &size) != PC_OK ||
	    py_rd_ptr(k->c, seg + (uint64_t)M->segment_slice_entries, &entries) != PC_OK ||
	    py_rd_ptr(k->c, seg + (uint64_t)M->segment_used, &used) != PC_OK) {
		heap_part_unread(&k->part, "the segment at 0x%llx is not in the dump", (unsigned long long)seg);
		return 0;
	}
	if (!size || size % MI_SLICE_SIZE || size > max || !entries || entries > most ||
	    dump_read(k->c->d, seg + (uint64_t)M->segment_slices, k->slices, entries * (uint64_t)M->page_size) != PC_OK) {
		heap_part_unread(&k->part, "the segment at 0x%llx gives its size as 0x%llx bytes and %llu slices, "
				 "or its table of pages is not in the dump", (unsigned long long)seg,
				 (unsigned long long)size, (unsigned long long)entries);
		return 0;
	}
	for (uint64_t i = 0; i < entries;) {
		const unsigned char *p = k->slices + i * (uint64_t)M->page_size;
		uint32_t count, bs, n;
		memcpy(&count, p + M->page_slice_count, 4);
		memcpy(&bs, p + M->page_xblock_size, 4);
		memcpy(&n, p + M->page_used, 4);
		/* (a huge segment's one page spans past its table: its slices
		 * are the segment's, its table MI_SLICES_PER_SEGMENT at most) */
		if (count == 0 || count > size / MI_SLICE_SIZE - i) {
			heap_part_unread(&k->part, "the segment at 0x%llx: its slice %llu spans %u slices", (unsigned long long)seg,
					 (unsigned long long)i, count);
			return size;
		}
		uint64_t block = bs >= MI_HUGE_BLOCK ? (uint64_t)count * MI_SLICE_SIZE : bs;
		if (i > 0 && bs && (uint64_t)n * block > (uint64_t)count * MI_SLICE_SIZE) {
			heap_part_unread(&k->part, "the page at 0x%llx counts %u blocks of %llu bytes in use, more than "
					 "its %u slices hold: not counted", (unsigned long long)(seg + (uint64_t)M->segment_slices +
					 i * (uint64_t)M->page_size), n, (unsigned long long)block, count);
		} else if (i > 0 && bs) {
			pages++;
			k->m->page_bytes += (uint64_t)count * MI_SLICE_SIZE;
			k->m->blocks += n;
			k->m->allocated += (uint64_t)n * block;
		}
		i += count;
	}
	k->m->pages += pages;
	if (pages != used)
		heap_part_unread(&k->part, "the segment at 0x%llx counts %llu pages in use, its table of pages %llu",
				 (unsigned long long)seg, (unsigned long long)used, (unsigned long long)pages);
	return size;
}

/* The arena at A: its memory, and each segment in use in it */
static void mem_arena(struct mmem *k, uint64_t a)
{
	uint64_t start, blocks, fields;
	if (py_rd_ptr(k->c, a + ARENA_START, &start) != PC_OK || py_rd_ptr(k->c, a + ARENA_BLOCK_COUNT, &blocks) != PC_OK ||
	    py_rd_ptr(k->c, a + ARENA_FIELD_COUNT, &fields) != PC_OK) {
		heap_part_unread(&k->part, "the arena at 0x%llx is not in the dump", (unsigned long long)a);
		return;
	}
	/* field_count is block_count over 64, rounded up (_mi_divide_up) */
	if (!start || start % MI_SEGMENT_SIZE || !blocks || blocks > MAX_ARENA_BLOCKS || fields != (blocks + 63) / 64) {
		heap_part_unread(&k->part, "the arena at 0x%llx gives its memory as %llu blocks at 0x%llx (%llu bitmap "
				 "words): no arena's", (unsigned long long)a, (unsigned long long)blocks,
				 (unsigned long long)start, (unsigned long long)fields);
		return;
	}
	uint64_t *inuse = malloc(fields * 8);
	if (!inuse || dump_read(k->c->d, a + ARENA_INUSE, inuse, fields * 8) != PC_OK) {
		heap_part_unread(&k->part, "the arena at 0x%llx: its bitmap of blocks in use is not in the dump",
				 (unsigned long long)a);
		free(inuse);
		return;
	}
	k->m->arenas++;
	k->m->arena_bytes += blocks * MI_SEGMENT_SIZE;
	for (uint64_t b = 0; b < blocks;) {
		if (!(inuse[b / 64] >> (b % 64) & 1)) {
			b++;
			continue;
		}
		uint64_t seg = start + b * MI_SEGMENT_SIZE;
		uint64_t size = mem_segment(k, seg, (blocks - b) * MI_SEGMENT_SIZE);
		if (size) {
			k->m->segments++;
			k->m->segment_bytes += size;
		}
		b += size ? (size + MI_SEGMENT_SIZE - 1) / MI_SEGMENT_SIZE : 1;
		if (py_out_of_time(k->c)) {
			heap_part_unread(&k->part, "the time budget ran out in the arena at 0x%llx", (unsigned long long)a);
			break;
		}
	}
	free(inuse);
}

void heap_mimalloc_memory(struct py_ctx *c, struct symbols *s, struct dump_module *mod,
			  struct model_heap_memory *mem)
{
	struct mmem k = { .c = c, .M = layout_of(c->L->minor) };
	/* (an LTO build would name them mi_arenas.lto_priv.0, ...) */
	struct symbol_want want[] = { { "mi_arenas", 0, 0 }, { "mi_arena_count", 0, 0 },
				      { "mi_arenas.lto_priv.0", 0, 0 }, { "mi_arena_count.lto_priv.0", 0, 0 } };
	if (!k.M) {
		mem->mimalloc_unread = arena_printf(c->a, "mimalloc is not read: a free-threaded 3.%u's mimalloc "
						    "differs from 3.13's", c->L->minor);
		return;
	}
	if (mod && s && symbols_lookup(s, mod, want, 4) >= 2 && !want[0].addr) {
		want[0] = want[2];
		want[1] = want[3];
	}
	if (!mod || !s || !want[0].addr || !want[1].addr || !want[0].size || want[0].size % 8 || want[1].size != 8) {
		mem->mimalloc_unread = arena_printf(c->a, "mimalloc is not read: the symbols of %s do not name its "
						    "arenas (mi_arenas, mi_arena_count)",
						    mod && mod->path ? mod->path : "the interpreter");
		return;
	}
	uint64_t count, slots = want[0].size / 8;
	if (!(k.m = arena_alloc(c->a, sizeof(*k.m))) ||
	    !(k.slices = malloc((MI_SEGMENT_SIZE / MI_SLICE_SIZE + 1) * (size_t)k.M->page_size))) {
		mem->mimalloc_unread = "mimalloc is not read: out of memory";
		k.m = NULL;
	} else if (py_rd_ptr(c, want[1].addr, &count) != PC_OK) {
		heap_part_unread(&k.part, "%s", "mi_arena_count is not in the dump");
	} else {
		if (count > slots) {
			heap_part_unread(&k.part, "mi_arena_count says %llu arenas, more than mi_arenas holds (%llu): "
					 "read those", (unsigned long long)count, (unsigned long long)slots);
			count = slots;
		}
		for (uint64_t i = 0; i < count; i++) {
			uint64_t a;
			if (py_rd_ptr(c, want[0].addr + i * 8, &a) != PC_OK) {
				heap_part_unread(&k.part, "mi_arenas is not in the dump from slot %llu", (unsigned long long)i);
				break;
			}
			if (a)   /* (0: a slot being filled) */
				mem_arena(&k, a);
		}
	}
	free(k.slices);
	mem->mimalloc = k.m;
	if (k.m && k.part.why)
		mem->mimalloc_unread = arena_printf(c->a, "mimalloc is read in part: %s", k.part.why);
}
