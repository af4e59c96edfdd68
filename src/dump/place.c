/* Where each module is: its base as the dynamic linker placed it, and
 * only its own segments among the mappings of its file.
 *
 * A file can be mapped more than once: the loader maps its segments, and
 * a debugger, a crash reporter (gdb's libbacktrace), a JIT or the program
 * itself may map pieces of it again, at other addresses and other file
 * offsets, even its first page.  The loader's own list says which
 * mapping is the module: glibc's and musl's r_debug, found through the
 * executable's DT_DEBUG (its PT_DYNAMIC, found through AT_PHDR), lists
 * the loaded objects as struct link_map.  Facts used (glibc's <link.h>,
 * <elf.h>; musl's <link.h> agrees on these words): struct r_debug
 * { int r_version; struct link_map *r_map at 8; ... }; struct link_map
 * { l_addr (the load bias) at 0, l_name at 8, l_ld (its dynamic
 * section) at 16, l_next at 24, l_prev at 32 }.  A Breakpad minidump
 * holds its writer's copy of the list (l_addr and l_ld of each object, in
 * its DSO debug stream: minidump.c), read instead.
 *
 * Each base the list gives is checked in the dump: the module's file is
 * mapped there at file offset 0, and the ELF header there (when the dump
 * holds it) is an ELF header.  Modules the list does not name (the list
 * not captured, a minidump's module list, a file mapped but not loaded)
 * keep the mapping at offset 0 that heads the longest run of the file's
 * segments.  Then each module keeps the mappings that are its segments
 * (within its image's span by its program headers, else the run of
 * address-contiguous mappings from its base); the others are not the
 * module (their pages, read-only file pages, stay readable from the
 * file). */
#include "dump_int.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define LINK_MAP_MAX 8192            /* loaded objects walked at most */
#define LINK_MAP_MISSES 256          /* ... and in a row that name no module of the dump */
#define BASE_CANDIDATES 64           /* a module's mappings at offset 0 weighed at most */
#define PHNUM_MAX 128

static bool is_elf_at(struct dump *d, uint64_t base, bool *captured)
{
	uint8_t h[SELFMAG];
	*captured = dump_read(d, base, h, sizeof(h)) == PC_OK;
	return !*captured || memcmp(h, ELFMAG, SELFMAG) == 0;
}

/* The span of the image whose ELF header is at BASE, by its program
 * headers in memory (lowest PT_LOAD page to the end of the highest): 0
 * when the dump does not hold them or they make no sense. */
static uint64_t image_span(struct dump *d, uint64_t base)
{
	Elf64_Ehdr eh;
	if (dump_read(d, base, &eh, sizeof(eh)) != PC_OK || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > PHNUM_MAX || eh.e_phoff > (1u << 20))
		return 0;
	Elf64_Phdr ph[PHNUM_MAX];
	if (dump_read(d, base + eh.e_phoff, ph, eh.e_phnum * sizeof(*ph)) != PC_OK)
		return 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
			continue;
		uint64_t a = ph[i].p_vaddr & ~(uint64_t)0xfff, b = ph[i].p_vaddr + ph[i].p_memsz;
		if (b < a)
			return 0;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (hi <= lo || hi - lo > ((uint64_t)1 << 40))
		return 0;
	return ((hi - lo) + 0xffff) & ~(uint64_t)0xffff;   /* up to the largest page size (64 KiB) */
}

static int map_cmp(const void *a, const void *b)
{
	const struct dump_mapping *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* How far a segment's address may run ahead of its file offset (from
 * the base) when the program headers are not at hand: the padding the
 * linker adds to align segments (up to 2 MiB each, a few of them), never
 * the distance to a mapping the process made elsewhere. */
#define SEGMENT_DELTA_MAX ((uint64_t)64 << 20)

/* Whether MP, after a mapping ending at END whose address ran DELTA
 * ahead of its file offset, continues the image based at BASE: above
 * it, its offset in step with its address. */
static bool continues(const struct dump_mapping *mp, uint64_t base, uint64_t end, uint64_t delta)
{
	if (mp->start < end || mp->file_offset > mp->start - base)
		return false;
	uint64_t dd = (mp->start - base) - mp->file_offset;
	return dd >= delta && dd - delta <= SEGMENT_DELTA_MAX;
}

/* The mappings of M that are its segments, from its mapping at BASE: in
 * the image's span when its program headers are in the dump, else the
 * run of mappings from BASE whose offsets keep in step with their
 * addresses (the loader maps the whole span and protects its holes, which
 * stay mappings of the file; a minidump's maps leave those out). */
static size_t segment_run(struct dump *d, const struct dump_module *m, size_t at, bool *keep)
{
	uint64_t base = m->maps[at].start, span = image_span(d, base), end = base, delta = 0;
	size_t n = 0;
	for (size_t j = at; j < m->nmaps; j++) {
		const struct dump_mapping *mp = &m->maps[j];
		bool in = span ? mp->end - base <= span : j == at || continues(mp, base, end, delta);
		if (j > at && mp->file_offset == 0 && !span)
			in = false;              /* the file mapped again, just after */
		if (in && !span)
			delta = (mp->start - base) - mp->file_offset;
		if (!in) {
			if (span)
				continue;
			break;
		}
		if (keep)
			keep[j] = true;
		end = mp->end;
		n++;
	}
	return n;
}

/* Make M's mapping AT its base, keep only its segments, and say how. */
static void settle(struct dump *d, struct dump_module *m, size_t at, const char *how)
{
	bool *keep = calloc(m->nmaps, sizeof(*keep));
	if (!keep)
		return;
	segment_run(d, m, at, keep);
	m->base = m->maps[at].start;
	size_t k = 0;
	m->start = UINT64_MAX;
	m->end = 0;
	for (size_t j = 0; j < m->nmaps; j++) {
		if (!keep[j])
			continue;
		m->maps[k++] = m->maps[j];
		m->start = m->maps[j].start < m->start ? m->maps[j].start : m->start;
		m->end = m->maps[j].end > m->end ? m->maps[j].end : m->end;
	}
	free(keep);
	if (k < m->nmaps)
		dump_note(d, "%s: %zu mapping%s of the file at other places (not the loader's) left out of the module",
			  m->path, m->nmaps - k, m->nmaps - k == 1 ? "" : "s");
	m->nmaps = k;
	bool captured;
	m->base_verified = is_elf_at(d, m->base, &captured) && captured;
	m->base_from = how;
}

/* The module and mapping whose start is ADDR at file offset 0. */
static struct dump_module *mapping_at(struct dump *d, uint64_t addr, size_t *at)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		for (size_t j = 0; j < m->nmaps; j++)
			if (m->maps[j].start == addr && m->maps[j].file_offset == 0) {
				*at = j;
				return m;
			}
	}
	return NULL;
}

/* The module and mapping holding ADDR. */
static struct dump_module *mapping_holding(struct dump *d, uint64_t addr, size_t *at)
{
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		for (size_t j = 0; j < m->nmaps; j++)
			if (addr >= m->maps[j].start && addr < m->maps[j].end) {
				*at = j;
				return m;
			}
	}
	return NULL;
}

/* The base of the module whose mapping AT holds an address of its image
 * (its dynamic section): down the address-contiguous run to the mapping
 * at offset 0. */
static bool walk_down_to_base(const struct dump_module *m, size_t *at)
{
	size_t j = *at;
	while (m->maps[j].file_offset != 0) {
		const struct dump_mapping *lo = j ? &m->maps[j - 1] : NULL, *hi = &m->maps[j];
		if (!lo || lo->end > hi->start || lo->file_offset > hi->file_offset ||
		    hi->start - lo->start < hi->file_offset - lo->file_offset ||
		    (hi->start - lo->start) - (hi->file_offset - lo->file_offset) > SEGMENT_DELTA_MAX)
			return false;
		j--;
	}
	*at = j;
	return true;
}

/* ------------------------------------------------------------------------
 * The loader's list
 * ------------------------------------------------------------------------ */

/* r_debug, through the executable's program headers (AT_PHDR, AT_PHNUM):
 * PT_PHDR gives the load bias, PT_DYNAMIC the dynamic section, DT_DEBUG
 * r_debug.  0 when the dump does not hold them (or a static program). */
static uint64_t find_r_debug(struct dump *d, uint64_t phdr, uint64_t phnum)
{
	if (!phdr || phnum == 0 || phnum > PHNUM_MAX)
		return 0;
	Elf64_Phdr ph[PHNUM_MAX];
	if (dump_read(d, phdr, ph, phnum * sizeof(*ph)) != PC_OK)
		return 0;
	uint64_t bias = 0, dyn = 0, dynsz = 0;
	bool have_bias = false;
	for (uint64_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_PHDR) {
			bias = phdr - ph[i].p_vaddr;
			have_bias = true;
		}
	if (!have_bias) {
		/* no PT_PHDR: the headers follow the ELF header in the first
		 * PT_LOAD, as linkers put them */
		for (uint64_t i = 0; i < phnum && !have_bias; i++)
			if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
				bias = phdr - sizeof(Elf64_Ehdr) - ph[i].p_vaddr;
				have_bias = true;
			}
	}
	for (uint64_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC) {
			dyn = bias + ph[i].p_vaddr;
			dynsz = ph[i].p_memsz;
		}
	if (!have_bias || !dyn || dynsz > (1u << 20))
		return 0;
	for (uint64_t off = 0; off + 16 <= dynsz; off += 16) {
		uint64_t e[2];
		if (dump_read(d, dyn + off, e, sizeof(e)) != PC_OK || e[0] == DT_NULL)
			break;
		if (e[0] == DT_DEBUG)
			return e[1];
	}
	return 0;
}

/* Place the module the loader's entry names (its load bias L_ADDR, its
 * dynamic section L_LD): true when it did. */
static bool place_entry(struct dump *d, uint64_t l_addr, uint64_t l_ld, bool *placed)
{
	size_t at;
	struct dump_module *m = mapping_at(d, l_addr, &at);
	if (!m && l_ld && (m = mapping_holding(d, l_ld, &at)) != NULL && !walk_down_to_base(m, &at))
		m = NULL;
	bool captured;
	if (!m || placed[m - d->modules] || !is_elf_at(d, m->maps[at].start, &captured))
		return false;
	placed[m - d->modules] = true;
	settle(d, m, at, "link_map");
	return true;
}

/* Place the modules the loader's list in memory names; returns how many. */
static size_t place_from_link_map(struct dump *d, uint64_t rdebug, bool *placed)
{
	uint32_t version;
	uint64_t lm, prev = 0;
	if (!rdebug || dump_read_u32(d, rdebug, &version) != PC_OK || version == 0 || version > 16 ||
	    dump_read_u64(d, rdebug + 8, &lm) != PC_OK)
		return 0;
	size_t n = 0, misses = 0;
	for (int k = 0; lm && k < LINK_MAP_MAX && n < d->nmodules && misses < LINK_MAP_MISSES; k++) {
		uint64_t w[5];
		if (dump_read(d, lm, w, sizeof(w)) != PC_OK || w[4] != prev)
			break;
		if (place_entry(d, w[0], w[2], placed)) {
			n++;
			misses = 0;
		} else {
			misses++;
		}
		prev = lm;
		lm = w[3];
	}
	return n;
}

/* ------------------------------------------------------------------------
 * The fallback: the mappings themselves
 * ------------------------------------------------------------------------ */

/* Of M's mappings at offset 0 holding an ELF header, the one that heads
 * the longest run of segments (ties: the first); M's base when it has
 * several, or mappings below its base. */
static void place_from_mappings(struct dump *d, struct dump_module *m, const char *how)
{
	size_t best = SIZE_MAX, best_n = 0, tried = 0;
	for (size_t j = 0; j < m->nmaps && tried < BASE_CANDIDATES; j++) {
		bool captured;
		if (m->maps[j].file_offset != 0 || !is_elf_at(d, m->maps[j].start, &captured))
			continue;
		tried++;
		size_t n = segment_run(d, m, j, NULL);
		if (best == SIZE_MAX || n > best_n) {
			best = j;
			best_n = n;
		}
	}
	if (best != SIZE_MAX)
		settle(d, m, best, how);
}

void dump_place_modules(struct dump *d, const uint8_t *auxv, size_t auxv_len, const struct dump_loaded *loaded,
			size_t nloaded)
{
	uint64_t phdr = 0, phnum = 0;
	for (size_t off = 0; auxv && off + 16 <= auxv_len; off += 16) {
		uint64_t type = dump_le64(auxv + off), val = dump_le64(auxv + off + 8);
		if (type == AT_PHDR)
			phdr = val;
		else if (type == AT_PHNUM)
			phnum = val;
	}
	bool *placed = calloc(d->nmodules ? d->nmodules : 1, sizeof(*placed));
	if (!placed)
		return;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (m->nmaps > 1)
			qsort(m->maps, m->nmaps, sizeof(*m->maps), map_cmp);
		/* a minidump's module list named the base already */
		if (m->base_from == NULL && m->base)
			m->base_from = "mappings";
	}
	if (loaded) {
		for (size_t k = 0; k < nloaded; k++)
			place_entry(d, loaded[k].addr, loaded[k].ld, placed);
	} else {
		place_from_link_map(d, find_r_debug(d, phdr, phnum), placed);
	}
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (placed[i] || m->extent_from_list)
			continue;
		/* the list's own base, when a minidump's list gave one */
		size_t at;
		if (strcmp(m->base_from ? m->base_from : "", "module list") == 0 &&
		    mapping_at(d, m->base, &at) == m) {
			settle(d, m, at, "module list");
			continue;
		}
		if (m->base)
			place_from_mappings(d, m, m->base_from);
	}
	free(placed);
}

static bool from_loader(const struct dump_module *m)
{
	return m->base_from && strcmp(m->base_from, "link_map") == 0;
}

size_t dump_drop_unloaded_copies(struct dump *d)
{
	bool *drop = calloc(d->nmodules ? d->nmodules : 1, sizeof(*drop));
	if (!drop)
		return 0;
	for (size_t i = 0; i < d->nmodules; i++)
		for (size_t j = 0; j < d->nmodules && !from_loader(&d->modules[i]) && !drop[i]; j++)
			drop[i] = j != i && from_loader(&d->modules[j]) && strcmp(d->modules[j].path, d->modules[i].path) == 0;
	size_t k = 0;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (!drop[i]) {
			d->modules[k++] = *m;
			continue;
		}
		dump_note(d, "%s: the file mapped again at 0x%llx (not the loader's) left out of the modules",
			  m->path, (unsigned long long)(m->base ? m->base : m->start));
		free(m->path);
		free(m->file);
		free(m->maps);
	}
	size_t n = d->nmodules - k;
	d->nmodules = k;
	free(drop);
	return n;
}
