/* pymalloc's arenas: the memory CPython's small-object allocator holds
 * (objects and buffers of 512 bytes or less), and how much of it its
 * blocks in use fill, as sys._debugmallocstats() counts it.
 *
 * The arenas are an array of struct arena_object (Objects/obmalloc.c of
 * 3.6-3.11, static there as arenas and maxarenas, found by their symbols
 * (an LTO build's arenas.lto_priv.0 and maxarenas.lto_priv.0);
 * Include/internal/pycore_obmalloc.h of 3.12+, in each interpreter's
 * obmalloc state: mgmt.arenas, mgmt.maxarenas, versions/).  On LP64:
 *   uintptr_t address (0: the slot holds no arena); block *pool_address
 *   (the first pool never used); uint nfreepools, ntotalpools; then three
 *   pointers: 48 bytes.
 * An arena is ARENA_SIZE bytes from address, its pools POOL_SIZE bytes
 * from address rounded up to a pool; each pool starts with struct
 * pool_header: union { block *; uint count; } ref (its blocks in use),
 * three pointers, then uint arenaindex (its arena's slot), uint szidx (its
 * size class), uint nextoffset, uint maxnextoffset (POOL_SIZE less its
 * blocks' size, which init_pool sets): 48 bytes.
 * The sizes are the configuration's: 256 KiB arenas of 4 KiB pools to
 * 3.9, 1 MiB arenas of 16 KiB pools from 3.10 on 64-bit platforms (the
 * radix tree's USE_LARGE_ARENAS and USE_LARGE_POOLS).  Each pool read
 * proves itself by its arenaindex, and its block size by its size class
 * ((szidx + 1) times the alignment, 8 or 16 bytes: 16 in the 3.6 and 3.7
 * builds here too, where obmalloc.c's comment still says 8). */
#include "python/heap/heap.h"
#include "python/walk/walk.h"
#include "symbols/symbols.h"

#include <stdio.h>
#include <string.h>

#define ARENA_OBJECT 48
#define AO_POOL_ADDRESS 8
#define AO_NFREEPOOLS 16
#define POOL_HEADER 48
#define PH_ARENAINDEX 32
#define PH_SZIDX 36
#define PH_MAXNEXTOFFSET 44
#define SMALL_REQUEST 512
#define MAX_SLOTS (1u << 24)   /* arena slots read at most: 16 TiB of 1 MiB arenas */

struct pm {
	struct py_ctx *c;
	struct model_heap_pymalloc *m;
	uint64_t pool_size, arena_size;
	struct heap_part part;       /* the first part not read */
};

/* The arena of slot I at ADDRESS, its pools up to POOL_ADDRESS: the
 * blocks in use, into k->m. */
static void arena(struct pm *k, uint32_t i, uint64_t address, uint64_t pool_address)
{
	uint64_t first = (address + k->pool_size - 1) & ~(k->pool_size - 1);
	uint64_t end = address + k->arena_size;
	if (pool_address < first || pool_address > end) {
		heap_part_unread(&k->part, "the arena at 0x%llx gives its pools' end as 0x%llx",
				 (unsigned long long)address, (unsigned long long)pool_address);
		return;
	}
	for (uint64_t p = first; p < pool_address; p += k->pool_size) {
		uint32_t h[POOL_HEADER / 4];
		if (dump_read(k->c->d, p, h, sizeof(h)) != PC_OK) {
			heap_part_unread(&k->part, "the pool at 0x%llx is not in the dump", (unsigned long long)p);
			continue;
		}
		uint32_t count = h[0], index = h[PH_ARENAINDEX / 4], szidx = h[PH_SZIDX / 4];
		uint32_t maxnext = h[PH_MAXNEXTOFFSET / 4];
		uint64_t block = maxnext < k->pool_size ? k->pool_size - maxnext : 0;
		bool sized = block == (szidx + 1ull) * 8 || block == (szidx + 1ull) * 16;   /* 8- or 16-aligned */
		if (index != i || !sized || block > SMALL_REQUEST ||
		    (uint64_t)count * block > k->pool_size - POOL_HEADER) {
			heap_part_unread(&k->part, "the pool at 0x%llx is none of arena %u's (its header says arena "
					 "%u, %u blocks of class %u)", (unsigned long long)p, i, index, count, szidx);
			continue;
		}
		k->m->blocks += count;
		k->m->allocated += (uint64_t)count * block;
	}
}

/* The MAX slots of the arena array at ARENAS */
static void arenas(struct pm *k, uint64_t array, uint32_t max)
{
	if (max > MAX_SLOTS) {
		heap_part_unread(&k->part, "its arena array claims %u slots: read up to %u (a budget)", max, MAX_SLOTS);
		max = MAX_SLOTS;
	}
	for (uint32_t i = 0; i < max; i++) {
		uint8_t ao[ARENA_OBJECT];
		uint64_t address, pool_address;
		uint32_t nfree;
		if (dump_read(k->c->d, array + (uint64_t)i * ARENA_OBJECT, ao, sizeof(ao)) != PC_OK) {
			heap_part_unread(&k->part, "its arena array (0x%llx) is not in the dump from slot %u",
					 (unsigned long long)array, i);
			return;
		}
		memcpy(&address, ao, 8);
		if (!address)
			continue;
		memcpy(&pool_address, ao + AO_POOL_ADDRESS, 8);
		memcpy(&nfree, ao + AO_NFREEPOOLS, 4);
		k->m->arenas++;
		k->m->arena_bytes += k->arena_size;
		k->m->free_pools += nfree;
		arena(k, i, address, pool_address);
		if ((i & 0xfff) == 0xfff && py_out_of_time(k->c)) {
			heap_part_unread(&k->part, "the time budget ran out at arena slot %u", i);
			return;
		}
	}
}

/* The arena arrays of 3.12+: each interpreter's obmalloc state from HEAD
 * (those that share the main one's read once) */
static void states(struct pm *k, uint64_t head)
{
	const struct py_layout *L = k->c->L;
	uint64_t seen[64];
	size_t nseen = 0;
	for (uint64_t in = head; in && nseen < 64;) {
		uint64_t state = in + (uint64_t)L->interp_obmalloc, array;
		uint32_t max;
		if (L->interp_obmalloc < 0 && py_rd_ptr(k->c, in + (uint64_t)L->interp_obmalloc_ptr, &state) != PC_OK)
			state = 0;
		if (!state || py_rd_ptr(k->c, state + (uint64_t)L->obmalloc_arenas, &array) != PC_OK ||
		    dump_read_u32(k->c->d, state + (uint64_t)L->obmalloc_maxarenas, &max) != PC_OK) {
			heap_part_unread(&k->part, "the obmalloc state of the interpreter at 0x%llx is not in the dump",
					 (unsigned long long)in);
		} else if (array) {
			bool again = false;
			for (size_t i = 0; i < nseen; i++)
				again |= seen[i] == array;
			if (!again) {
				seen[nseen++] = array;
				arenas(k, array, max);
			}
		}
		if (py_rd_ptr(k->c, in + (uint64_t)L->interp_next, &in) != PC_OK || in == head)
			break;
	}
}

void heap_pymalloc_read(struct census *kc, struct symbols *s, struct dump_module *mod, uint64_t head)
{
	struct py_ctx *c = kc->c;
	const struct py_layout *L = c->L;
	struct model_heap_memory *mem = &kc->h->memory;
	struct pm k = { .c = c, .pool_size = L->minor >= 10 ? 16384 : 4096 };
	k.arena_size = 64 * k.pool_size;
	if (py_layout_free_threaded(L)) {
		mem->pymalloc_unread = "pymalloc is not read: a free-threaded build allocates with mimalloc";
		return;
	}
	/* (an LTO build, such as Debian's, names them arenas.lto_priv.0) */
	struct symbol_want want[] = { { "arenas", 0, 0 }, { "maxarenas", 0, 0 }, { "arenas.lto_priv.0", 0, 0 },
				      { "maxarenas.lto_priv.0", 0, 0 } };
	if (L->minor <= 11 && mod && s && symbols_lookup(s, mod, want, 4) >= 2 && !want[0].addr) {
		want[0] = want[2];
		want[1] = want[3];
	}
	if (L->minor <= 11 && (!mod || !s || !want[0].addr || !want[1].addr || want[0].size != 8 ||
			       want[1].size != 4)) {
		mem->pymalloc_unread = arena_printf(c->a, "pymalloc is not read: the symbols of %s do not name "
						    "obmalloc.c's arenas and maxarenas", mod && mod->path ? mod->path
						    : "the interpreter");
		return;
	}
	if (L->minor >= 12 && (L->obmalloc_arenas < 0 || L->obmalloc_maxarenas < 0 ||
			       (L->interp_obmalloc < 0 && L->interp_obmalloc_ptr < 0))) {
		mem->pymalloc_unread = "pymalloc is not read: the interpreter's obmalloc state is not in this "
				       "version's layout";
		return;
	}
	if (!(k.m = arena_alloc(c->a, sizeof(*k.m)))) {
		mem->pymalloc_unread = "pymalloc is not read: out of memory";
		return;
	}
	k.m->arena_size = k.arena_size;
	k.m->pool_size = k.pool_size;
	if (L->minor <= 11) {
		uint64_t array;
		uint32_t max;
		if (py_rd_ptr(c, want[0].addr, &array) != PC_OK || dump_read_u32(c->d, want[1].addr, &max) != PC_OK)
			heap_part_unread(&k.part, "%s", "obmalloc.c's arenas and maxarenas are not in the dump");
		else if (array)
			arenas(&k, array, max);
	} else {
		states(&k, head);
	}
	mem->pymalloc = k.m;
	if (k.part.why)
		mem->pymalloc_unread = arena_printf(c->a, "pymalloc is read in part: %s", k.part.why);
}
