/* A compilation unit's functions by address (cuindex.h). */
#include "symbols/cuindex.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbols/names.h"

struct range {
	Dwarf_Addr lo, hi;           /* [lo, hi) */
	Dwarf_Off die;               /* the function's DIE */
};

struct cuindex_unit {
	uint64_t key;                /* the unit DIE's address in its section (addrtab's key) */
	struct range *r;             /* by lo */
	size_t n;
	Dwarf_Addr max_len;          /* the longest range: none further below an address holds it */
	bool failed;                 /* out of memory: walk */
};

void cuindex_init(struct addrtab *units)
{
	*units = (struct addrtab)ADDRTAB_INIT(struct cuindex_unit);
}

static bool push(struct cuindex_unit *u, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi, Dwarf_Off die)
{
	if (u->n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct range *r = realloc(u->r, c * sizeof(*r));
		if (!r)
			return false;
		u->r = r;
		*cap = c;
	}
	u->r[u->n++] = (struct range){ lo, hi, die };
	u->max_len = hi - lo > u->max_len ? hi - lo : u->max_len;
	return true;
}

/* The functions below PARENT with their ranges, where names_subprogram_at
 * looks: namespaces, classes and structures (8 deep; C's structures hold
 * no function: STRUCTS false), not into functions. */
static bool collect(struct cuindex_unit *u, size_t *cap, Dwarf_Die *parent, int depth, bool structs)
{
	Dwarf_Die c;
	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return true;
	int k = 0;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
			if (!structs)
				break;
			/* fall through */
		case DW_TAG_namespace:
			if (!collect(u, cap, &c, depth + 1, structs))
				return false;
			break;
		case DW_TAG_subprogram: {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0)
				if (hi > lo && !push(u, cap, lo, hi, dwarf_dieoffset(&c)))
					return false;
			break;
		}
		default:
			break;
		}
	} while (++k < 1000000 && dwarf_siblingof(&c, &c) == 0);
	return true;
}

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : x->die < y->die ? -1 : x->die > y->die;
}

bool cuindex_subprogram(struct addrtab *units, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out)
{
	bool found;
	uint64_t key = (uint64_t)(uintptr_t)cu->addr;
	struct cuindex_unit *u = key ? addrtab_get(units, key, &found) : NULL;
	if (!u)
		return names_subprogram_at(cu, addr, out, 0);
	if (!found) {
		size_t cap = 0;
		int lang = dwarf_srclang(cu);
		bool c = lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;
		if (!collect(u, &cap, cu, 0, !c)) {
			free(u->r);
			*u = (struct cuindex_unit){ .key = key, .failed = true };
		} else if (u->n > 1) {
			qsort(u->r, u->n, sizeof(*u->r), by_lo);
		}
	}
	if (u->failed)
		return names_subprogram_at(cu, addr, out, 0);
	/* the last range starting at or below ADDR, then back while one could
	 * still hold it: of those that do, the first DIE */
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	Dwarf_Off best = 0;
	bool any = false;
	for (size_t i = lo; i-- > 0 && addr - u->r[i].lo < u->max_len;)
		if (addr < u->r[i].hi && (!any || u->r[i].die < best)) {
			best = u->r[i].die;
			any = true;
		}
	return any && dwarf_offdie(dwarf_cu_getdwarf(cu->cu), best, out) != NULL;
}

void cuindex_free(struct addrtab *units)
{
	for (size_t i = 0; i < units->cap; i++) {
		struct cuindex_unit *u = addrtab_slot(units, i);
		if (u)
			free(u->r);
	}
	addrtab_free(units);
}
