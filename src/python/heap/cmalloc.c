/* The C library's heap, as glibc's malloc records it: its arenas (the
 * main one, main_arena, on the brk heap; the threads' in heaps mapped apart)
 * and the blocks it mapped apart, counted as its own mallinfo2() counts
 * them (malloc/malloc.c, int_mallinfo): an arena's memory from the system
 * (system_mem), free in it its top chunk, the chunks of its bins and those
 * of its fastbins, the rest in use (a thread's tcache among them); the
 * mmapped blocks from mp_'s n_mmaps and mmapped_mem.
 *
 * main_arena, mp_ and __libc_version are local symbols: they are in
 * libc's .symtab, which Debian strips into libc6-dbg's debug file.  The
 * layouts are glibc's for LP64 (x86-64 and aarch64), from
 * malloc/malloc.c, and checked by the symbols' own sizes: struct
 * malloc_state is 2200 bytes from 2.27 (have_fastchunks) on, as Debian
 * 12's 2.36 debug info has it (gdb's ptype /o); struct malloc_par 112
 * bytes, or 136 with 2.35's tunables (thp_pagesize, hp_pagesize,
 * hp_flags) before n_mmaps.  Since 2.32 a fastbin's links are mangled
 * (safe-linking: stored as (&fd >> 12) ^ fd).
 *
 * A thread's arena lives in heaps of its own (arena.c): each a
 * HEAP_MAX_SIZE-aligned mapping of HEAP_MAX_SIZE bytes (2 *
 * DEFAULT_MMAP_THRESHOLD_MAX: 64 MiB on LP64, unless glibc.malloc.hugetlb
 * sets 2.35's mp_.hp_pagesize), from a struct heap_info: ar_ptr (its
 * arena), prev (the arena's heap before), size, mprotect_size (what is
 * readable and writable; the rest of the mapping is PROT_NONE).  Those
 * reserved tails are said, and moved from the anonymous memory to the
 * reserved where the dump records them as readable (gdb's gcore does). */
#include "python/heap/heap.h"
#include "python/walk/walk.h"
#include "platform/libc.h"
#include "symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_FASTBINS 16          /* mfastbinptr fastbinsY[NFASTBINS] */
#define MS_TOP 96               /* mchunkptr top */
#define MS_BINS 112             /* mchunkptr bins[NBINS * 2 - 2] */
#define MS_NEXT 2160            /* struct malloc_state *next (a ring from main_arena) */
#define MS_SYSTEM_MEM 2184
#define MS_SIZE 2200
#define NFASTBINS 10
#define NBINS 128
/* struct malloc_chunk: prev_size, size (its three low bits flags), fd, bk */
#define CHUNK_SIZE 8
#define CHUNK_FD 16
#define CHUNK_BK 24
#define SIZE_BITS 7ull
#define MIN_CHUNK 32ull
#define ALIGN_MASK 15ull

#define HEAP_MAX ((uint64_t)64 << 20)
#define HI_AR_PTR 0
#define HI_PREV 8
#define HI_MPROTECT_SIZE 24
#define MAX_HEAPS (1u << 16)

/* arenas read at most (glibc's arena_max is 8 a processor) and free chunks
 * over all of them: budgets of pycore's, not glibc's */
#define MAX_ARENAS 4096
#define MAX_FREE_CHUNKS (1ull << 28)

/* printf's %llu of any unsigned */
#define U(x) ((unsigned long long)(x))

struct cm {
	struct census *k;
	struct py_ctx *c;
	struct model_heap_malloc *m;
	bool mangled;                /* 2.32+: fastbin links safe-linked */
	bool heap_max_known;         /* HEAP_MAX (no hugetlb tunable set) */
	uint64_t main;               /* main_arena */
	struct heap_part part;       /* the first part not read */
};

static bool rd(struct cm *k, uint64_t addr, uint64_t *out)
{
	return dump_read_u64(k->c->d, addr, out) == PC_OK;
}

/* A free chunk at P of an arena of SYSTEM_MEM bytes: its size, 0 when P
 * is no chunk. */
static uint64_t chunk_size(struct cm *k, uint64_t p, uint64_t system_mem)
{
	uint64_t size;
	if (!p || (p & ALIGN_MASK) || !rd(k, p + CHUNK_SIZE, &size))
		return 0;
	size &= ~SIZE_BITS;
	return size >= MIN_CHUNK && size <= system_mem ? size : 0;
}

/* Whether a free list of the arena at A, of SYSTEM_MEM bytes, is to stop
 * before its next chunk: the chunks' budget, or more free bytes (FREE)
 * than the arena has (a list that does not end: each chunk is 32 bytes at
 * least, so a cycle stops within SYSTEM_MEM / 32 steps), said. */
static bool over_budget(struct cm *k, uint64_t a, uint64_t system_mem, uint64_t free_)
{
	if (free_ > system_mem) {
		heap_part_unread(&k->part, "a free list of the arena at 0x%llx does not end: it counts more free "
				 "bytes than its %llu", U(a), U(system_mem));
		return true;
	}
	if (k->m->free_chunks < MAX_FREE_CHUNKS)
		return false;
	heap_part_unread(&k->part, "the free chunks were counted up to %llu (a budget), in the arena at 0x%llx",
			 U(MAX_FREE_CHUNKS), U(a));
	return true;
}

/* The chunks of fastbin I of the arena at A: their bytes into *FREE. */
static void fastbin(struct cm *k, uint64_t a, int i, uint64_t system_mem, uint64_t *free_)
{
	uint64_t p, link, size;
	if (!rd(k, a + MS_FASTBINS + 8 * (uint64_t)i, &p)) {
		heap_part_unread(&k->part, "fastbin %llu of the arena at 0x%llx is not in the dump", U(i), U(a));
		return;
	}
	while (p) {
		if (over_budget(k, a, system_mem, *free_))
			return;
		if (!(size = chunk_size(k, p, system_mem)) || !rd(k, p + CHUNK_FD, &link)) {
			heap_part_unread(&k->part, "a fastbin of the arena at 0x%llx holds 0x%llx, no chunk", U(a),
					 U(p));
			return;
		}
		*free_ += size;
		k->m->free_chunks++;
		p = k->mangled ? ((p + CHUNK_FD) >> 12) ^ link : link;
	}
}

/* The chunks of bin I (1 to NBINS - 1) of the arena at A, as mallinfo
 * walks them (from the bin's last chunk by the bk links back to the bin):
 * their bytes into *FREE. */
static void bin(struct cm *k, uint64_t a, int i, uint64_t system_mem, uint64_t *free_)
{
	/* bin_at(a, i): the bin's two links seen as a chunk's fd and bk */
	uint64_t b = a + MS_BINS + 16 * (uint64_t)(i - 1) - CHUNK_FD, p, size;
	if (!rd(k, b + CHUNK_BK, &p)) {
		heap_part_unread(&k->part, "bin %llu of the arena at 0x%llx is not in the dump", U(i), U(a));
		return;
	}
	while (p != b) {
		if (over_budget(k, a, system_mem, *free_))
			return;
		if ((k->m->free_chunks & 0xffff) == 0xffff && py_out_of_time(k->c)) {
			heap_part_unread(&k->part, "the time budget ran out in the bins of the arena at 0x%llx", U(a));
			return;
		}
		if (!(size = chunk_size(k, p, system_mem)) || !rd(k, p + CHUNK_BK, &p)) {
			heap_part_unread(&k->part, "a bin of the arena at 0x%llx holds 0x%llx, no chunk", U(a), U(p));
			return;
		}
		*free_ += size;
		k->m->free_chunks++;
	}
}

/* The heaps of a thread's arena A, from the one its TOP is in: their
 * reserved tails. */
static void heaps(struct cm *k, uint64_t a, uint64_t top)
{
	uint64_t h = top & ~(HEAP_MAX - 1), ar, mprotect_size;
	for (unsigned n = 0; h; n++) {
		if (n == MAX_HEAPS) {
			heap_part_unread(&k->part, "the heaps of the arena at 0x%llx were read up to %u (a budget)",
					 U(a), MAX_HEAPS);
			return;
		}
		if (!rd(k, h + HI_AR_PTR, &ar) || ar != a || !rd(k, h + HI_MPROTECT_SIZE, &mprotect_size) ||
		    mprotect_size > HEAP_MAX) {
			heap_part_unread(&k->part, "the heap at 0x%llx is none of the arena at 0x%llx's: its reserved "
					 "tail is not counted", U(h), U(a));
			return;
		}
		k->m->reserved += HEAP_MAX - mprotect_size;
		k->m->reserved_anonymous += heap_memory_reserved(k->k, h + mprotect_size, h + HEAP_MAX);
		if (!rd(k, h + HI_PREV, &h))
			return;
	}
}

/* The arena at A: its memory, its top and free chunks, into k->m. */
static bool arena(struct cm *k, uint64_t a)
{
	uint64_t system_mem, top, top_size, free_ = 0;
	if (!rd(k, a + MS_SYSTEM_MEM, &system_mem) || !rd(k, a + MS_TOP, &top)) {
		heap_part_unread(&k->part, "the arena at 0x%llx is not in the dump", U(a));
		return false;
	}
	if (!(top_size = chunk_size(k, top, system_mem))) {
		heap_part_unread(&k->part, "the top chunk of the arena at 0x%llx (0x%llx) is no chunk", U(a), U(top));
		return false;
	}
	free_ = top_size;
	for (int i = 0; i < NFASTBINS; i++)
		fastbin(k, a, i, system_mem, &free_);
	for (int i = 1; i < NBINS; i++)
		bin(k, a, i, system_mem, &free_);
	if (free_ > system_mem) {
		heap_part_unread(&k->part, "the arena at 0x%llx counts more free bytes than its %llu", U(a),
				 U(system_mem));
		free_ = system_mem;
	}
	k->m->arenas++;
	k->m->arena_bytes += system_mem;
	k->m->free += free_;
	k->m->in_use += system_mem - free_;
	k->m->top += top_size;
	if (a != k->main && k->heap_max_known)
		heaps(k, a, top);
	return true;
}

/* "2.36" at VERSION (SIZE bytes): *MAJOR, *MINOR */
static bool libc_version(struct cm *k, const struct symbol_want *v, int *major, int *minor)
{
	char s[16] = { 0 };
	if (!v->addr || v->size < 4 || v->size >= sizeof(s) ||
	    dump_read(k->c->d, v->addr, s, v->size) != PC_OK)
		return false;
	return sscanf(s, "%d.%d", major, minor) == 2;
}

/* The mmapped blocks, from mp_ (WANT) */
static void mmapped(struct cm *k, const struct symbol_want *mp)
{
	uint64_t n_at = mp->size == 112 ? 40 : mp->size == 136 ? 60 : 0;
	uint64_t mem_at = mp->size == 112 ? 56 : 80;
	uint32_t n;
	uint64_t mem;
	if (!mp->addr || !n_at) {
		heap_part_unread(&k->part, "the blocks malloc mapped apart are not counted: its mp_ is %llu bytes, "
				 "not the 112 or 136 pycore reads", U(mp->size));
		return;
	}
	if (dump_read_u32(k->c->d, mp->addr + n_at, &n) != PC_OK || !rd(k, mp->addr + mem_at, &mem)) {
		heap_part_unread(&k->part, "the blocks malloc mapped apart are not counted: its mp_ (0x%llx) is not "
				 "in the dump", U(mp->addr));
		return;
	}
	k->m->mmapped = mem;
	k->m->mmapped_blocks = n;
}

/* Why the C heap of C (whose C library is glibc when MOD is its module) is
 * not read; NULL when it can be, with main_arena, mp_ and __libc_version
 * in WANT and the version in *MAJOR, *MINOR. */
static const char *refusal(struct cm *k, struct symbols *s, struct symbol_want *want, int *major, int *minor)
{
	struct py_ctx *c = k->c;
	const struct libc *libc = dump_libc(c->d);
	if (libc != &libc_glibc)
		return arena_printf(c->a, "the C heap is not read: the C library is %s, whose malloc pycore does "
				    "not read", libc ? libc->name : "unknown");
	bool dynamic = false;
	struct dump_module *mod = py_glibc_module(c->d, &dynamic);
	int found = mod && s ? symbols_lookup(s, mod, want, 3) : -1;
	const char *path = mod && mod->path ? mod->path : "the C library";
	if (found < 0)
		return arena_printf(c->a, "the C heap is not read: the symbols of %s cannot be read (no file)", path);
	if (!want[0].addr)
		return arena_printf(c->a, "the C heap is not read: the symbols of %s do not name main_arena (in its "
				    "debug file, as Debian's libc6-dbg has it, which is not found)", path);
	if (want[0].size != MS_SIZE || !libc_version(k, &want[2], major, minor) || *major * 100 + *minor < 227)
		return arena_printf(c->a, "the C heap is not read: glibc's main_arena is %llu bytes (glibc %d.%d): "
				    "pycore reads the %d of glibc 2.27 and later", U(want[0].size), *major, *minor,
				    MS_SIZE);
	return NULL;
}

void heap_malloc_read(struct census *kc, struct symbols *s)
{
	struct py_ctx *c = kc->c;
	struct symbol_want want[] = { { "main_arena", 0, 0 }, { "mp_", 0, 0 }, { "__libc_version", 0, 0 } };
	int major = 0, minor = 0;
	struct cm k = { .k = kc, .c = c };
	if ((kc->h->memory.malloc_unread = refusal(&k, s, want, &major, &minor)) != NULL)
		return;
	if (!(k.m = arena_alloc(c->a, sizeof(*k.m)))) {
		kc->h->memory.malloc_unread = "the C heap is not read: out of memory";
		return;
	}
	k.m->allocator = arena_printf(c->a, "glibc %d.%d", major, minor);
	k.mangled = major * 100 + minor >= 232;
	k.main = want[0].addr;
	/* mp_.hp_pagesize (2.35+, after five size_t and thp_pagesize): 0
	 * unless glibc.malloc.hugetlb made the heaps' size another */
	uint64_t hp_pagesize = 0;
	k.heap_max_known = want[1].size == 112 || (want[1].size == 136 && rd(&k, want[1].addr + 48, &hp_pagesize) &&
						   hp_pagesize == 0);
	uint64_t a = want[0].addr;
	do {
		if (k.m->arenas >= MAX_ARENAS) {
			heap_part_unread(&k.part, "the arenas were read up to %llu (a budget)", U(MAX_ARENAS));
			break;
		}
		if (!arena(&k, a))
			break;
		uint64_t next;
		if (!rd(&k, a + MS_NEXT, &next)) {
			heap_part_unread(&k.part, "the arena list breaks after 0x%llx", U(a));
			break;
		}
		a = next;
	} while (a != want[0].addr);
	mmapped(&k, &want[1]);
	kc->h->memory.malloc = k.m;
	if (k.part.why)
		kc->h->memory.malloc_unread = arena_printf(c->a, "the C heap is read in part: %s", k.part.why);
}
