/* A module's symbols by address (symindex.h).
 *
 * libdwfl's rule, read in elfutils' libdwfl/dwfl_module_addrsym.c (0.188):
 * a candidate is a symbol with a name, defined, not a section, file or TLS
 * symbol, at or below the address.  The global symbols (from the table's
 * first global on) are searched first; the locals only when no global
 * symbol with a size holds the address and no global label without one is
 * exactly at it.  Of the symbols whose size holds the address, the one at
 * the highest address wins, a stronger binding (global, weak, local)
 * breaking a tie, then the table's order.  When none holds it, the
 * highest label without a size wins, unless a symbol with a size ends
 * above it (below the address): a label inside a function is not the
 * function.
 *
 * Where the index differs: it holds no data objects (it is asked for code
 * addresses), and libdwfl's scan lets a stronger binding win over a closer
 * symbol that it met first, when two symbols of one pass both hold the
 * address, where the index keeps the closer one (nested functions of
 * different bindings: a name either way). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbols/symbols_int.h"
#include "symbols/symindex.h"

struct entry {
	uint64_t addr;
	uint32_t size;
	uint32_t ndx : 29;           /* in libdwfl's table: a tie goes to the first */
	uint32_t global : 1;
	uint32_t rank : 2;           /* libdwfl's binding_value: global 3, weak 2, local 1 */
};

struct symindex {
	struct entry *e;             /* the candidates, by address, then rank (strongest first), then ndx */
	size_t n;
	uint64_t max_size;           /* the largest: no entry further below an address holds it */
	uint32_t *labels[2];         /* the sizeless ones (indices into e), globals [0] and locals [1] */
	size_t nlabels[2];
	bool failed;                 /* not built (out of memory, no symbol table, a table too large
					or a function over 4 GB): ask libdwfl */
};

static int rank_of(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Sort X's entries by address, then rank (strongest first), then table
 * index: a stable radix sort of the addresses (a comparison sort of a
 * debug file's thousands of functions cost more than reading them), the
 * entries given in table order, then each run of one address (a function
 * and its aliases: a few) put in rank order by insertion. */
static bool sort_entries(struct symindex *x)
{
	if (x->n < 2)
		return true;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < x->n; i++) {
		lo = x->e[i].addr < lo ? x->e[i].addr : lo;
		hi = x->e[i].addr > hi ? x->e[i].addr : hi;
	}
	struct entry *tmp = malloc(x->n * sizeof(*tmp));
	if (!tmp)
		return false;
	enum { BITS = 11, DIGITS = 1 << BITS };
	for (unsigned shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += BITS) {
		size_t count[DIGITS] = { 0 };
		for (size_t i = 0; i < x->n; i++)
			count[((x->e[i].addr - lo) >> shift) & (DIGITS - 1)]++;
		size_t sum = 0;
		for (size_t d = 0; d < DIGITS; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < x->n; i++)
			tmp[count[((x->e[i].addr - lo) >> shift) & (DIGITS - 1)]++] = x->e[i];
		struct entry *t = x->e;
		x->e = tmp;
		tmp = t;
	}
	free(tmp);
	for (size_t i = 1; i < x->n; i++) {
		struct entry e = x->e[i];
		size_t j = i;
		for (; j > 0 && x->e[j - 1].addr == e.addr && x->e[j - 1].rank < e.rank; j--)
			x->e[j] = x->e[j - 1];
		x->e[j] = e;
	}
	return true;
}

/* Whether a symbol of type TYPE may name code: not a data object (which
 * holds no code address: leaving them out keeps the index small), a
 * section, a file or a thread-local. */
static bool code_type(int type)
{
	return type != STT_SECTION && type != STT_FILE && type != STT_TLS && type != STT_OBJECT && type != STT_COMMON;
}

static bool add(struct symindex *x, int i, uint64_t value, const GElf_Sym *sym, int first_global)
{
	if (sym->st_size > UINT32_MAX)
		return false;
	x->e[x->n++] = (struct entry){ .addr = value, .size = (uint32_t)sym->st_size, .ndx = (uint32_t)i,
				       .global = first_global >= 0 && i >= first_global,
				       .rank = (uint32_t)rank_of(sym->st_info) };
	x->max_size = sym->st_size > x->max_size ? sym->st_size : x->max_size;
	return true;
}

/* The symbols 1 to TOTAL - 1 of RT, libdwfl's table of MOD read in place,
 * with the address dwfl_module_getsym_info would give each (elfutils'
 * libdwfl/dwfl_module_getsym.c, 0.188): the bias of the table's file
 * added to a symbol of an allocated section, an absolute one's or one of
 * an unallocated section's value as it is.  The bias is libdwfl's, taken
 * from the first symbol of an allocated section and checked on the last;
 * a symbol of an extended section index is asked of libdwfl.  False when
 * the two disagree: build() then asks libdwfl for every symbol. */
static bool build_raw(struct symindex *x, Dwfl_Module *mod, const struct raw_symtab *rt, int first_global)
{
	size_t nscn = 0;
	if (elf_getshdrnum(rt->elf, &nscn) != 0 || nscn > (1 << 20))
		return false;
	/* each section's flag, 0 not yet read, 1 allocated, 2 not */
	unsigned char *alloc = calloc(nscn ? nscn : 1, 1);
	if (!alloc)
		return false;
	bool have_bias = false, ok = true;
	uint64_t bias = 0;
	int last = 0;
	for (size_t i = 1; i < rt->nsym && ok; i++) {
		const Elf64_Sym *r = &rt->syms[i];
		int type = GELF_ST_TYPE(r->st_info);
		if (r->st_shndx == SHN_UNDEF || !code_type(type) || r->st_name >= rt->strsize || !rt->str[r->st_name])
			continue;
		GElf_Sym sym = *r;
		uint64_t value = r->st_value;
		if (r->st_shndx == SHN_XINDEX) {
			GElf_Addr v;
			const char *name = dwfl_module_getsym_info(mod, (int)i, &sym, &v, NULL, NULL, NULL);
			if (!name || strcmp(name, rt->str + r->st_name) != 0) {
				ok = false;
				break;
			}
			value = v;
		} else if (r->st_shndx < SHN_LORESERVE) {
			if (r->st_shndx >= nscn) {
				ok = false;
				break;
			}
			if (!alloc[r->st_shndx]) {
				GElf_Shdr sh;
				Elf_Scn *scn = elf_getscn(rt->elf, r->st_shndx);
				alloc[r->st_shndx] = !scn || !gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_ALLOC) ? 1 : 2;
			}
			if (alloc[r->st_shndx] == 1) {
				if (!have_bias) {
					GElf_Sym theirs;
					GElf_Addr v;
					const char *name = dwfl_module_getsym_info(mod, (int)i, &theirs, &v, NULL, NULL, NULL);
					if (!name || strcmp(name, rt->str + r->st_name) != 0 || theirs.st_value != r->st_value) {
						ok = false;
						break;
					}
					bias = v - r->st_value;
					have_bias = true;
				}
				value += bias;
				last = (int)i;
			}
		}
		ok = add(x, (int)i, value, &sym, first_global);
	}
	free(alloc);
	if (ok && last) {
		GElf_Sym theirs;
		GElf_Addr v;
		const char *name = dwfl_module_getsym_info(mod, last, &theirs, &v, NULL, NULL, NULL);
		ok = name && strcmp(name, rt->str + rt->syms[last].st_name) == 0 && v == rt->syms[last].st_value + bias;
	}
	return ok;
}

/* Index MOD's code symbols: functions and labels.  From the table in
 * place where libdwfl's is one section (build_raw), else each symbol as
 * libdwfl gives it. */
static bool build(struct symindex *x, Dwfl_Module *mod)
{
	int total = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	if (total <= 0 || total >= (1 << 29))
		return false;
	if (!(x->e = malloc((size_t)total * sizeof(*x->e))))
		return false;
	struct raw_symtab rt;
	if (!symbols_raw_symtab(mod, total, &rt) || !build_raw(x, mod, &rt, first_global)) {
		x->n = 0;
		x->max_size = 0;
		for (int i = 1; i < total; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
			if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || !code_type(GELF_ST_TYPE(sym.st_info)))
				continue;
			if (!add(x, i, value, &sym, first_global))
				return false;
		}
	}
	if (!sort_entries(x))
		return false;
	for (int g = 0; g < 2; g++)
		if (!(x->labels[g] = malloc((x->n ? x->n : 1) * sizeof(*x->labels[g]))))
			return false;
	for (size_t i = 0; i < x->n; i++) {
		if (x->e[i].size == 0) {
			int g = x->e[i].global ? 0 : 1;
			x->labels[g][x->nlabels[g]++] = (uint32_t)i;
		}
	}
	return true;
}

/* How many of the N entries IDX names (NULL: the first N themselves), in
 * address order, are at or below ADDR. */
static size_t upto(const struct symindex *x, const uint32_t *idx, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->e[idx ? idx[mid] : mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The best label of kind G at or below ADDR (the first of the highest
 * address's, which the order puts first), or NULL. */
static const struct entry *label(const struct symindex *x, int g, uint64_t addr)
{
	size_t n = upto(x, x->labels[g], x->nlabels[g], addr);
	if (n == 0)
		return NULL;
	size_t i = n - 1;
	while (i > 0 && x->e[x->labels[g][i - 1]].addr == x->e[x->labels[g][i]].addr)
		i--;
	return &x->e[x->labels[g][i]];
}

/* Whether one of the first N entries (the global ones alone: GLOBALS)
 * ends above AT: only one starting less than the largest size below AT,
 * or above it, can. */
static bool ends_above(const struct symindex *x, size_t n, uint64_t at, bool globals)
{
	for (size_t i = n; i-- > 0 && (x->e[i].addr > at || at - x->e[i].addr < x->max_size);)
		if ((x->e[i].global || !globals) && x->e[i].addr + x->e[i].size > at)
			return true;
	return false;
}

static const struct entry *lookup(const struct symindex *x, uint64_t addr)
{
	size_t n = upto(x, NULL, x->n, addr);
	if (n == 0)
		return NULL;
	const struct entry *held[2] = { NULL, NULL };
	/* Only an entry less than the largest size below ADDR can hold it.
	 * Walking back, the first holder met is at the highest address, and
	 * the last one met at that address is the first in the order: the
	 * best. */
	for (size_t i = n; i-- > 0 && addr - x->e[i].addr < x->max_size;) {
		const struct entry *e = &x->e[i];
		int g = e->global ? 0 : 1;
		if (addr - e->addr < e->size && (!held[g] || e->addr == held[g]->addr))
			held[g] = e;
	}
	if (held[0])
		return held[0];
	const struct entry *sizeless = label(x, 0, addr);
	bool globals = true;
	if (!sizeless || sizeless->addr != addr) {
		if (held[1])
			return held[1];
		const struct entry *local = label(x, 1, addr);
		if (local && (!sizeless || local->addr > sizeless->addr ||
			      (local->addr == sizeless->addr && local->rank > sizeless->rank)))
			sizeless = local;
		globals = false;
	}
	return sizeless && !ends_above(x, n, sizeless->addr, globals) ? sizeless : NULL;
}

/* MOD's index, built the first time it is asked; NULL: none (out of
 * memory, no symbol table, a module of no session). */
static struct symindex *index_of(Dwfl_Module *mod)
{
	struct module_ref *ref = symbols_module_ref(mod);
	if (ref && !ref->index && (ref->index = calloc(1, sizeof(*ref->index))) && !build(ref->index, mod))
		ref->index->failed = true;
	return ref && ref->index && !ref->index->failed ? ref->index : NULL;
}

const char *symindex_addrinfo(Dwfl_Module *mod, uint64_t addr, uint64_t *off, uint64_t *size)
{
	struct symindex *x = index_of(mod);
	if (!x) {
		/* libdwfl's own scan */
		GElf_Off o = 0;
		GElf_Sym sym;
		const char *name = mod ? dwfl_module_addrinfo(mod, addr, &o, &sym, NULL, NULL, NULL) : NULL;
		*off = name ? o : 0;
		*size = name ? sym.st_size : 0;
		return name;
	}
	const struct entry *e = lookup(x, addr);
	GElf_Sym sym;
	GElf_Addr value;
	const char *name = e ? dwfl_module_getsym_info(mod, (int)e->ndx, &sym, &value, NULL, NULL, NULL) : NULL;
	*off = name ? addr - e->addr : 0;
	*size = name ? e->size : 0;
	return name;
}

void symindex_free(struct symindex *x)
{
	if (!x)
		return;
	free(x->e);
	free(x->labels[0]);
	free(x->labels[1]);
	free(x);
}
