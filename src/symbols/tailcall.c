/* Tail calls (tailcall.h), inferred as gdb does (gdb/dwarf2/loc.c,
 * call_site_find_chain_1 and chain_candidate; the frames' order as
 * gdb/dwarf2/frame-tailcall.c's pretend_pc gives it):
 *
 * - the caller's call site (its return address the caller's pc) calls a
 *   known function, entered at its origin's low pc, or for a declaration
 *   at its name's symbol (in the caller's module or the callee's, their
 *   symbol tables, then their dynamic ones; gdb looks in every module); an
 *   indirect call's target needs registers the frames in between did not
 *   keep;
 * - when that is not the callee's function, every chain of tail call
 *   sites (DW_AT_call_tail_call, GNU: DW_AT_GNU_tail_call, anywhere in a
 *   function's body: its blocks and inlined calls) from that function to
 *   the callee's entry is followed, no site twice in one chain, through
 *   functions whose call sites the compiler says are all described;
 * - of all the chains found, the sites they share from the caller's side
 *   and from the callee's are kept; none shared: nothing is known;
 * - a site met whose target is not known, or a target where no function
 *   the DWARF describes starts, ends the search: nothing is known (gdb
 *   throws NO_ENTRY_VALUE_ERROR there and shows no tail-call frame).
 *
 * The frames, from the callee out: the shared sites from the callee's
 * side, then, unless they are the whole chain, those from the caller's. */
#include "symbols/tailcall.h"
#include "symbols/cuslice.h"
#include "symbols/names.h"
#include "symbols/symindex.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#define MAX_SITES 64                 /* one function's tail call sites looked at */
#define MAX_VISITS 256               /* functions entered in one search */

struct site {
	uint64_t pc;                 /* its return address: gdb's call_site pc */
	uint64_t target;             /* the entry of the function it calls; 0 unknown */
};

struct search {
	struct symbols *s;
	Dwfl_Module *callee_mod;
	uint64_t callee;
	struct site chain[MAX_TAIL_FRAMES];
	size_t len;
	struct site best[MAX_TAIL_FRAMES];
	size_t blen, callers, callees;
	bool found, ambiguous;       /* (ambiguous: or not known) */
	int visits;
};

/* Where the function a call site CS of MOD (its DWARF's addresses less
 * BIAS) calls is entered, a declaration's looked for in MOD, then in
 * ALSO, or with ALSO NULL in every module in turn (as gdb's
 * lookup_minimal_symbol does for func_verify_no_selftailcall); 0
 * unknown. */
static uint64_t site_target(struct symbols *s, Dwfl_Module *mod, Dwarf_Addr bias, Dwarf_Die *cs, Dwfl_Module *also)
{
	Dwarf_Attribute at;
	Dwarf_Die o;
	if (!(dwarf_attr(cs, DW_AT_call_origin, &at) || dwarf_attr(cs, DW_AT_abstract_origin, &at)) ||
	    !dwarf_formref_die(&at, &o))
		return 0;
	/* (a declaration as gdb's die_is_declaration says: through an
	 * abstract origin, as LTO's partitions refer to the early one) */
	bool decl = false;
	Dwarf_Attribute spec;
	if (dwarf_attr_integrate(&o, DW_AT_declaration, &at) && dwarf_formflag(&at, &decl) == 0 &&
	    dwarf_attr(&o, DW_AT_specification, &spec))
		decl = false;
	if (!decl) {
		Dwarf_Addr low;
		return dwarf_lowpc(&o, &low) == 0 ? low + bias : 0;
	}
	/* a declaration: its symbol, in the caller's module */
	const char *name = NULL;
	if (dwarf_attr_integrate(&o, DW_AT_linkage_name, &at) || dwarf_attr_integrate(&o, DW_AT_MIPS_linkage_name, &at))
		name = dwarf_formstring(&at);
	if (!name)
		name = dwarf_diename(&o);
	/* (the symbol table names a versioned function "sem_wait@@GLIBC_2.34":
	 * the dynamic one, without its version, is asked next) */
	Dwfl_Module *in[2] = { mod, also != mod ? also : NULL };
	for (int k = 0; k < 2 && name; k++) {
		const struct module_ref *ref = symbols_module_ref(in[k]);
		uint64_t addr = ref && ref->mod ? symbols_function_address(s, ref->mod, name) : 0;
		if (addr)
			return addr;
	}
	for (size_t i = 0; !also && name && i < s->dump->nmodules; i++) {
		uint64_t addr = symbols_function_address(s, &s->dump->modules[i], name);
		if (addr)
			return addr;
	}
	return 0;
}

/* The tail call sites below SCOPE (blocks and inlined calls, not nested
 * functions) into OUT, their targets' declarations looked for in MOD and
 * ALSO. */
static void collect(struct symbols *s, Dwfl_Module *mod, Dwarf_Addr bias, Dwarf_Die *scope, Dwfl_Module *also,
		    struct site *out, size_t *n, int depth)
{
	Dwarf_Die c;
	if (depth > 2 * MAX_INLINE_DEPTH || dwarf_child(scope, &c) != 0)
		return;
	int k = 0;
	do {
		Dwarf_Attribute at;
		bool tail = false;
		Dwarf_Addr pc;
		switch (dwarf_tag(&c)) {
		case DW_TAG_call_site:
			if (dwarf_attr(&c, DW_AT_call_tail_call, &at))
				dwarf_formflag(&at, &tail);
			if (tail && *n < MAX_SITES && dwarf_attr(&c, DW_AT_call_return_pc, &at) && dwarf_formaddr(&at, &pc) == 0)
				out[(*n)++] = (struct site){ pc + bias, site_target(s, mod, bias, &c, also) };
			break;
		case DW_TAG_GNU_call_site:
			if (dwarf_attr(&c, DW_AT_GNU_tail_call, &at))
				dwarf_formflag(&at, &tail);
			if (tail && *n < MAX_SITES && dwarf_lowpc(&c, &pc) == 0)
				out[(*n)++] = (struct site){ pc + bias, site_target(s, mod, bias, &c, also) };
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			collect(s, mod, bias, &c, also, out, n, depth + 1);
			break;
		default:
			break;
		}
	} while (++k < 100000 && dwarf_siblingof(&c, &c) == 0);
}

/* Whether the compiler says SUB's call sites are all described
 * (DW_AT_call_all_calls, DW_AT_call_all_tail_calls or their GNU
 * forerunners): only then can a chain go through it (gdb/dwarf2/read.c,
 * read_call_site_scope, keeps no tail call list for another). */
static bool all_calls(Dwarf_Die *sub)
{
	static const unsigned names[] = { DW_AT_call_all_calls, DW_AT_call_all_tail_calls, DW_AT_GNU_all_call_sites,
					  DW_AT_GNU_all_tail_call_sites };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Dwarf_Attribute at;
		bool set = false;
		if (dwarf_attr_integrate(sub, names[i], &at) && dwarf_formflag(&at, &set) == 0 && set)
			return true;
	}
	return false;
}

/* The tail call sites of the function entered at ENTRY into OUT: their
 * number (none for a function whose call sites are not all described);
 * -1 where no function the DWARF describes starts. */
static long tail_sites(struct symbols *s, uint64_t entry, Dwfl_Module *also, struct site *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, entry);
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? symbols_addrdie(mod, entry, &bias) : NULL;
	Dwarf_Die sub;
	Dwarf_Addr low;
	if (!cu || !symbols_subprogram_at(mod, cu, entry - bias, &sub) || !names_entry(&sub, &low) ||
	    low + bias != entry)
		return -1;
	size_t n = 0;
	if (all_calls(&sub))
		collect(s, mod, bias, &sub, also, out, &n, 0);
	return (long)n;
}

/* gdb's chain_candidate: the chain found, shared with those before. */
static void candidate(struct search *q)
{
	if (!q->found) {
		memcpy(q->best, q->chain, q->len * sizeof(*q->chain));
		q->blen = q->callers = q->callees = q->len;
		q->found = true;
		return;
	}
	size_t callers = q->callers < q->len ? q->callers : q->len;
	for (size_t i = 0; i < callers; i++)
		if (q->best[i].pc != q->chain[i].pc)
			callers = i;
	size_t callees = q->callees < q->len ? q->callees : q->len;
	for (size_t i = 0; i < callees; i++)
		if (q->best[q->blen - 1 - i].pc != q->chain[q->len - 1 - i].pc)
			callees = i;
	q->callers = callers;
	q->callees = callees;
	if (!callers && !callees)
		q->ambiguous = true;
}

static void walk(struct search *q, uint64_t func)
{
	if (q->ambiguous)
		return;
	if (++q->visits > MAX_VISITS) {
		q->ambiguous = true; /* not searched through: not known */
		return;
	}
	if (func == q->callee) {
		candidate(q);
		return;
	}
	if (q->len == MAX_TAIL_FRAMES)
		return;
	struct site sites[MAX_SITES];
	long n = tail_sites(q->s, func, q->callee_mod, sites);
	if (n < 0)
		q->ambiguous = true;
	for (long i = 0; i < n && !q->ambiguous; i++) {
		if (!sites[i].target) {
			q->ambiguous = true;
			break;
		}
		bool seen = false;
		for (size_t k = 0; k < q->len && !seen; k++)
			seen = q->chain[k].pc == sites[i].pc;
		if (seen)
			continue;
		q->chain[q->len++] = sites[i];
		walk(q, sites[i].target);
		q->len--;
	}
}

size_t tailcall_chain(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, uint64_t *pcs)
{
	Dwarf_Die cs;
	Dwarf_Addr bias;
	/* (a frame shown by its symbol alone, a quiet module's, is not looked at) */
	if (!caller || !args_described(f->pa) || !args_call_site(caller, &cs, &bias) || args_calls(s, caller, &cs, f))
		return 0;
	uint64_t callee = args_entry(f->pa);
	if (!callee) {
		uint64_t off, size;
		if (!symindex_addrinfo(f->mod, f->lookup, &off, &size))
			return 0;
		callee = f->lookup - off;
	}
	uint64_t target = site_target(s, caller->mod, bias, &cs, f->mod);
	if (!target || target == callee)
		return 0;
	struct search q = { .s = s, .callee_mod = f->mod, .callee = callee };
	walk(&q, target);
	if (!q.found || q.ambiguous)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < q.callees && n < MAX_TAIL_FRAMES; i++)
		pcs[n++] = q.best[q.blen - 1 - i].pc;
	for (size_t i = 0; q.callees != q.blen && i < q.callers && n < MAX_TAIL_FRAMES; i++)
		pcs[n++] = q.best[q.callers - 1 - i].pc;
	return n;
}

bool tailcall_may_reenter(struct symbols *s, uint64_t entry)
{
	bool found;
	struct reentry *r = entry ? addrtab_get(&s->reentry, entry, &found) : NULL;
	if (r && found)
		return r->may;
	/* every function its tail calls reach, each once, from the entry */
	uint64_t todo[MAX_VISITS + 1], seen[MAX_VISITS];
	size_t ntodo = 0, nseen = 0;
	bool may = !entry;
	if (entry)
		todo[ntodo++] = entry;
	while (ntodo && !may) {
		struct site sites[MAX_SITES];
		long n = tail_sites(s, todo[--ntodo], NULL, sites);
		may = n < 0;
		for (long i = 0; i < n && !may; i++) {
			uint64_t t = sites[i].target;
			bool known = false;
			for (size_t k = 0; k < nseen && !known; k++)
				known = seen[k] == t;
			may = !t || t == entry || (!known && nseen == MAX_VISITS);
			if (!may && !known) {
				seen[nseen++] = t;
				todo[ntodo++] = t;
			}
		}
	}
	if ((r = entry ? addrtab_get(&s->reentry, entry, &found) : NULL) != NULL)
		r->may = may;
	return may;
}
