/* Native frames' arguments: what a pc's DWARF says of its functions'
 * parameters (args_describe; args.c evaluates them at each frame).  The
 * facts used are args.c's. */
#include "symbols/args_int.h"
#include "symbols/cuslice.h"
#include "symbols/names.h"

#include <stdlib.h>
#include <string.h>

/* Parameter DIE P of a function at DWARF address ADDR into A. */
static void describe_param(Dwarf_Die *p, Dwarf_Addr addr, struct arg_desc *a)
{
	char buf[512];
	const char *name = dwarf_diename(p);
	a->name = name ? strdup(name) : NULL;
	Dwarf_Die t;
	bool typed = args_type_of(p, &t);
	args_type_name(typed ? &t : NULL, buf, sizeof(buf));
	a->type = strdup(buf);
	args_type_kind(typed ? &t : NULL, &a->kind, &a->size, &a->type_die);
	Dwarf_Attribute at;
	if (dwarf_attr(p, DW_AT_const_value, &at)) {
		Dwarf_Word u;
		Dwarf_Sword v;
		if (dwarf_formsdata(&at, &v) == 0)
			a->has_const = true, a->cval = (uint64_t)v;
		else if (dwarf_formudata(&at, &u) == 0)
			a->has_const = true, a->cval = u;
		return;
	}
	if (!dwarf_attr(p, DW_AT_location, &a->attr))
		return;
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_getlocation_addr(&a->attr, addr, &ops, &nops, 1) == 1 && nops > 0) {
		a->ops = ops;
		a->nops = nops;
	}
}

static void push_param(struct entry_args *ea, Dwarf_Die *p, Dwarf_Addr addr)
{
	if (ea->n >= MAX_NATIVE_ARGS)
		return;
	struct arg_desc *a = realloc(ea->a, (ea->n + 1) * sizeof(*a));
	if (!a)
		return;
	ea->a = a;
	a[ea->n] = (struct arg_desc){ 0 };
	describe_param(p, addr, &a[ea->n]);
	ea->n++;
}

/* The parameters of function (or inlined call) SCOPE at ADDR: its own
 * children, then those of its abstract origin that none of them stands
 * for (gdb's order). */
static void describe_scope(Dwarf_Die *scope, Dwarf_Addr addr, struct entry_args *ea)
{
	Dwarf_Die child, origin, ochild;
	ea->known = true;
	Dwarf_Off refs[MAX_NATIVE_ARGS];
	size_t nrefs = 0;
	if (dwarf_child(scope, &child) == 0) {
		int k = 0;
		do {
			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			Dwarf_Attribute at;
			Dwarf_Die o;
			if (nrefs < MAX_NATIVE_ARGS && dwarf_attr(&child, DW_AT_abstract_origin, &at) &&
			    dwarf_formref_die(&at, &o))
				refs[nrefs++] = dwarf_dieoffset(&o);
			push_param(ea, &child, addr);
		} while (++k < 4096 && dwarf_siblingof(&child, &child) == 0);
	}
	Dwarf_Attribute at;
	if (!dwarf_attr(scope, DW_AT_abstract_origin, &at) || !dwarf_formref_die(&at, &origin) ||
	    dwarf_child(&origin, &ochild) != 0)
		return;
	int k = 0;
	do {
		if (dwarf_tag(&ochild) != DW_TAG_formal_parameter)
			continue;
		bool have = false;
		for (size_t i = 0; i < nrefs && !have; i++)
			have = refs[i] == dwarf_dieoffset(&ochild);
		if (!have)
			push_param(ea, &ochild, addr);
	} while (++k < 4096 && dwarf_siblingof(&ochild, &ochild) == 0);
}

/* The CFA's rule at LOOKUP from MOD's call frame information. */
static void describe_cfa(Dwfl_Module *mod, uint64_t lookup, struct pc_args *pa)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfis[2] = { dwfl_module_eh_cfi(mod, &bias), NULL };
	Dwarf_Addr biases[2] = { bias, 0 };
	cfis[1] = dwfl_module_dwarf_cfi(mod, &biases[1]);
	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *fr;
		Dwarf_Op *ops;
		size_t nops;
		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], lookup - biases[i], &fr) != 0)
			continue;
		if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops > 0 && nops <= 8) {
			memcpy(pa->cfa, ops, nops * sizeof(*ops));
			pa->ncfa = nops;
		}
		/* (an undefined rule and an unspecified one look alike here) */
		for (int r = 0; r < 32; r++) {
			Dwarf_Op mem[3];
			if (dwarf_frame_register(fr, r, mem, &ops, &nops) == 0 && nops == 0)
				pa->unchanged |= 1u << r;
		}
		free(fr);
		if (pa->ncfa)
			return;
		pa->unchanged = 0;
	}
}

struct pc_args *args_describe(Dwfl_Module *mod, const struct pc_frames *pf, uint64_t lookup, bool dwarf)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwarf ? symbols_addrdie(mod, lookup, &bias) : NULL;
	struct pc_args *pa = calloc(1, sizeof(*pa));
	if (!pa)
		return NULL;
	describe_cfa(mod, lookup, pa);
	if (!cu || !pf->n)
		return pa;
	pa->bias = bias;
	Dwarf_Addr addr = lookup - bias;
	pa->ent = calloc(pf->n, sizeof(*pa->ent));
	if (!pa->ent) {
		free(pa);
		return NULL;
	}
	pa->n = pf->n;
	/* the calls inlined at the pc, innermost first, as describe() found
	 * them (unwind.c), then the function */
	Dwarf_Die chain[MAX_INLINE_DEPTH], funcs[MAX_INLINE_DEPTH + 1], function;
	bool has_function;
	int nc = symbols_inline_chain(mod, cu, addr, chain, &function, &has_function);
	size_t nf = 0;
	for (int i = nc - 1; i >= 0; i--)
		funcs[nf++] = chain[i];
	if (has_function)
		funcs[nf++] = function;
	/* the same calls as the frame's entries (names.c found them), or none */
	if (nf && nf == pf->n && dwarf_tag(&funcs[nf - 1]) == DW_TAG_subprogram) {
		for (size_t i = 0; i < nf; i++)
			describe_scope(&funcs[i], addr, &pa->ent[i]);
		Dwarf_Die *sub = &funcs[nf - 1];
		pa->has_sub = true;
		pa->sub_name = dwarf_diename(sub);
		pa->sub = *sub;
		Dwarf_Addr low;
		if (names_entry(sub, &low))
			pa->entry = low + bias;
		Dwarf_Op *ops;
		size_t nops;
		if (dwarf_attr_integrate(sub, DW_AT_frame_base, &pa->fb_attr) &&
		    dwarf_getlocation_addr(&pa->fb_attr, addr, &ops, &nops, 1) == 1) {
			pa->fb = ops;
			pa->nfb = nops;
		}
	}
	return pa;
}

uint32_t args_unchanged(const struct pc_args *pa)
{
	return pa ? pa->unchanged : 0;
}

void args_free(struct pc_args *pa)
{
	if (!pa)
		return;
	for (size_t i = 0; i < pa->n; i++) {
		for (size_t k = 0; k < pa->ent[i].n; k++) {
			free(pa->ent[i].a[k].name);
			free(pa->ent[i].a[k].type);
		}
		free(pa->ent[i].a);
	}
	free(pa->ent);
	free(pa);
}

