/* Native frames' arguments, as gdb's `bt` shows them.
 *
 * The facts used are DWARF 5's (sections 2.5, 2.6, 3.4 and 4.1, with
 * GCC's GNU extensions of the same meaning: DW_TAG_GNU_call_site,
 * DW_AT_GNU_call_site_value, DW_OP_GNU_entry_value):
 * - a function's parameters are the DW_TAG_formal_parameter children of
 *   its DW_TAG_subprogram, or of the DW_TAG_inlined_subroutine of an
 *   inlined call; a concrete instance names them through
 *   DW_AT_abstract_origin, and a parameter of the abstract instance with
 *   no concrete one has no location at all (gdb shows it too);
 * - DW_AT_location is an expression or a location list, selected by the
 *   pc (a return address less one in an outer frame: the call);
 * - DW_OP_fbreg is relative to the subprogram's DW_AT_frame_base, in
 *   GCC's code DW_OP_call_frame_cfa: the CFA, computed here from the call
 *   frame information at the frame's pc and its registers;
 * - DW_OP_entry_value(DW_OP_regN) is register N's value when the function
 *   was entered: the caller's DW_TAG_call_site (found by its return
 *   address, DW_AT_call_return_pc, or DW_AT_low_pc for GNU_call_site) has
 *   a DW_TAG_call_site_parameter whose DW_AT_location is DW_OP_regN and
 *   whose DW_AT_call_value, evaluated in the caller's frame, is it.  As
 *   gdb, only when the call site is proven to call this function (its
 *   DW_AT_call_origin names it, or its DW_AT_call_target evaluates to its
 *   address): else the value is not known.  A function a chain of tail
 *   calls reached (tailcall.h) takes it from the tail call site that
 *   jumped to it, evaluated with the registers the frame that called the
 *   chain has (the tail-call frame's, as gdb/dwarf2/frame-tailcall.c
 *   gives them) but its stack pointer; and a function that may enter
 *   itself again by tail calls has none (gdb/dwarf2/loc.c,
 *   func_verify_no_selftailcall: the call site may be an earlier run's).
 * A register the call frame information does not restore in an outer
 * frame has no value there: what is located in it is optimized out, as
 * gdb says; nothing is guessed. */
#include "symbols/args_int.h"
#include "symbols/cuslice.h"
#include "symbols/names.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_STACK 64
#define MAX_OPS    256

/* ------------------------------------------------------------------------
 * Evaluating a location at a frame
 * ------------------------------------------------------------------------ */

enum loc_kind { LOC_MEMORY, LOC_REGISTER, LOC_VALUE, LOC_IMPLICIT };

struct loc {
	enum loc_kind k;
	uint64_t v;                  /* the address, the register's value, the value */
	unsigned reg;                /* LOC_REGISTER */
	Dwarf_Block block;           /* LOC_IMPLICIT */
};

/* Why a location cannot be evaluated: optimized out (the register is
 * not recovered here, an operation pycore does not evaluate, an entry
 * value not proven) or not read (REASON set). */
struct why {
	const char *reason;
};

static bool reg_value(const struct arg_frame *f, unsigned reg, uint64_t *v, struct why *w)
{
	if (f->dwarf_vec && reg >= f->dwarf_vec && reg - f->dwarf_vec < 32) {
		unsigned i = reg - f->dwarf_vec;
		if (!f->vecs || !(f->vecs->vec_known & (1u << i))) {
			w->reason = f->vecs ? "in a vector register the dump does not keep"
					    : "in a vector register, which only the first frame has";
			return false;
		}
		*v = f->vecs->vec[i];
		return true;
	}
	if (reg >= f->nregs || reg >= PLATFORM_DWARF_REGS || reg >= 32) {
		w->reason = "in a register pycore does not read (not a general one)";
		return false;
	}
	if (!(f->known & (1u << reg)))
		return false;
	*v = f->regs[reg];
	return true;
}

static bool eval(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, Dwarf_Attribute *attr,
		 const Dwarf_Op *ops, size_t nops, unsigned size, int depth, struct loc *out, struct why *w);

/* F's CFA, from the rule at its pc and its registers. */
static bool frame_cfa(struct symbols *s, struct arg_frame *f, uint64_t *cfa, struct why *w)
{
	if (f->cfa_state == 0) {
		struct loc l;
		struct why ignored = { 0 };
		f->cfa_state = -1;
		if (f->pa && f->pa->ncfa &&
		    eval(s, f, NULL, NULL, f->pa->cfa, f->pa->ncfa, 8, 1, &l, &ignored) && l.k == LOC_MEMORY) {
			f->cfa = l.v;
			f->cfa_state = 1;
		}
	}
	(void)w;
	*cfa = f->cfa;
	return f->cfa_state == 1;
}

/* Below SCOPE, through the blocks and inlined calls that hold PC, the
 * call site whose return address is RET. */
static bool find_call_site(Dwarf_Die *scope, Dwarf_Addr pc, Dwarf_Addr ret, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;
	if (depth > 2 * MAX_INLINE_DEPTH || dwarf_child(scope, &c) != 0)
		return false;
	int k = 0;
	do {
		Dwarf_Attribute at;
		Dwarf_Addr r;
		switch (dwarf_tag(&c)) {
		case DW_TAG_call_site:
			if (dwarf_attr(&c, DW_AT_call_return_pc, &at) && dwarf_formaddr(&at, &r) == 0 && r == ret) {
				*out = c;
				return true;
			}
			break;
		case DW_TAG_GNU_call_site:
			if (dwarf_lowpc(&c, &r) == 0 && r == ret) {
				*out = c;
				return true;
			}
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&c, pc) > 0 && find_call_site(&c, pc, ret, out, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (++k < 100000 && dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The call site in CALLER's function that returns to CALLER's pc.  A
 * frame described by its symbol alone (a quiet module's, whose DWARF was
 * not read for it) has its function's DIE looked up for this, once. */
static bool call_site(struct arg_frame *caller, Dwarf_Die *out)
{
	struct pc_args *pa = caller->pa;
	if (!pa)
		return false;
	if (pa->cs_state == 0) {
		Dwarf_Die sub = pa->sub;
		bool has = pa->has_sub;
		if (!has) {
			Dwarf_Die *cu = symbols_addrdie(caller->mod, caller->lookup, &pa->bias);
			has = cu && symbols_subprogram_at(caller->mod, cu, caller->lookup - pa->bias, &sub);
		}
		pa->cs_state = has && find_call_site(&sub, caller->lookup - pa->bias, caller->pc - pa->bias, &pa->cs, 0)
			       ? 1 : -1;
	}
	*out = pa->cs;
	return pa->cs_state == 1;
}

/* A DWARF expression's value (a call site's value or target) in frame F. */
static bool value_of(struct symbols *s, struct arg_frame *f, Dwarf_Attribute *at, uint64_t *v, struct why *w)
{
	Dwarf_Op *ops;
	size_t nops;
	struct loc l;
	if (dwarf_getlocation(at, &ops, &nops) != 0 || !nops || !eval(s, f, NULL, at, ops, nops, 8, 1, &l, w))
		return false;
	if (l.k == LOC_IMPLICIT)
		return false;
	*v = l.v;
	return true;
}

/* The offsets of DIE and of the DIEs it stands for (its abstract origin,
 * its declaration, theirs), at most 4: their number. */
static int chain(Dwarf_Die *die, Dwarf_Off *out)
{
	Dwarf_Die d = *die;
	Dwarf_Attribute at;
	int n = 0;
	while (n < 4) {
		out[n++] = dwarf_dieoffset(&d);
		if (!(dwarf_attr(&d, DW_AT_abstract_origin, &at) || dwarf_attr(&d, DW_AT_specification, &at)) ||
		    !dwarf_formref_die(&at, &d))
			break;
	}
	return n;
}

/* Whether a call site's origin O (a DIE of the caller's module, SAME
 * when that is the callee's too) is the function PA describes: they stand
 * for one DIE (themselves, an abstract instance or a declaration: with
 * LTO, the caller's partition has a DIE of its own for the callee, whose
 * abstract origin is the callee's); else an external
 * function's declaration of the same name (an external name is one
 * function of a module: a static one's need not be). */
static bool is_function(Dwarf_Die *o, bool same, struct pc_args *pa)
{
	/* (DIEs of two units given their own Dwarfs are never one: cuslice.h) */
	if (same && dwarf_cu_getdwarf(o->cu) == dwarf_cu_getdwarf(pa->sub.cu)) {
		Dwarf_Off mine[4];
		int n = chain(&pa->sub, mine);
		Dwarf_Off theirs[4];
		int m = chain(o, theirs);
		for (int i = 0; i < n; i++)
			for (int k = 0; k < m; k++)
				if (mine[i] == theirs[k])
					return true;
	}
	Dwarf_Attribute at;
	bool external = false;
	const char *name = dwarf_diename(o);
	if (dwarf_attr_integrate(o, DW_AT_external, &at))
		dwarf_formflag(&at, &external);
	return external && name && pa->sub_name && strcmp(name, pa->sub_name) == 0;
}

/* Whether call site CS of CALLER calls F's function (gdb resolves an
 * entry value only then). */
static bool calls(struct symbols *s, struct arg_frame *caller, Dwarf_Die *cs, struct arg_frame *f)
{
	Dwarf_Attribute at;
	Dwarf_Die o;
	if ((dwarf_attr(cs, DW_AT_call_origin, &at) || dwarf_attr(cs, DW_AT_abstract_origin, &at)) &&
	    dwarf_formref_die(&at, &o))
		return is_function(&o, caller->mod == f->mod, f->pa);
	uint64_t target;
	struct why ignored = { 0 };
	if ((dwarf_attr(cs, DW_AT_call_target, &at) || dwarf_attr(cs, DW_AT_GNU_call_site_target, &at)) &&
	    value_of(s, caller, &at, &target, &ignored))
		return f->pa->entry && target == f->pa->entry;
	return false;
}

bool args_call_site(struct arg_frame *caller, Dwarf_Die *cs, Dwarf_Addr *bias)
{
	*bias = caller->pa ? caller->pa->bias : 0;
	return call_site(caller, cs);
}

bool args_calls(struct symbols *s, struct arg_frame *caller, Dwarf_Die *cs, struct arg_frame *f)
{
	return f->pa && f->pa->has_sub && calls(s, caller, cs, f);
}

bool args_described(const struct pc_args *pa)
{
	return pa && pa->has_sub;
}

uint64_t args_entry(const struct pc_args *pa)
{
	return pa ? pa->entry : 0;
}

/* The register given as DW_OP_regN or DW_OP_regx by expression OPS. */
static bool single_reg(const Dwarf_Op *ops, size_t nops, unsigned *reg)
{
	if (nops != 1)
		return false;
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		*reg = ops[0].atom - DW_OP_reg0;
	else if (ops[0].atom == DW_OP_regx)
		*reg = (unsigned)ops[0].number;
	else
		return false;
	return true;
}

/* The value call site CS (in the frame whose registers are AT's) gives
 * the parameter its callee receives in register REG. */
static bool site_param(struct symbols *s, struct arg_frame *at, Dwarf_Die *cs, unsigned reg, uint64_t *v,
		       struct why *w)
{
	Dwarf_Die p;
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_child(cs, &p) != 0)
		return false;
	int k = 0;
	do {
		int tag = dwarf_tag(&p);
		Dwarf_Attribute a;
		unsigned preg;
		if ((tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter) ||
		    !dwarf_attr(&p, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &nops) != 0 ||
		    !single_reg(ops, nops, &preg) || preg != reg)
			continue;
		return (dwarf_attr(&p, DW_AT_call_value, &a) || dwarf_attr(&p, DW_AT_GNU_call_site_value, &a)) &&
		       value_of(s, at, &a, v, w);
	} while (++k < 4096 && dwarf_siblingof(&p, &p) == 0);
	return false;
}

/* REG's entry value of F's function from the tail call that jumped to it,
 * the site returning to F->tail_ret, as gdb takes it: that site's value,
 * evaluated with the registers the tail-call frame has, those CALLER (the
 * frame that called the chain) has, but its stack pointer (the frame the
 * jump left is gone, with its frame base and CFA). */
static bool tail_entry_value(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, unsigned reg,
			     uint64_t *v, struct why *w)
{
	uint64_t ret = f->tail_ret;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, ret - 1);
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? symbols_addrdie(mod, ret - 1, &bias) : NULL;
	Dwarf_Die sub, cs;
	if (!cu || !symbols_subprogram_at(mod, cu, ret - 1 - bias, &sub) ||
	    !find_call_site(&sub, ret - 1 - bias, ret - bias, &cs, 0))
		return false;
	struct pc_args none = { .bias = bias };
	struct arg_frame jumped = { .mod = mod, .pc = ret, .lookup = ret - 1, .pa = &none, .nregs = caller->nregs,
				    .known = caller->known, .cfa_state = -1 };
	memcpy(jumped.regs, caller->regs, sizeof(jumped.regs));
	unsigned sp = s->dump->platform->dwarf_sp;
	if (sp < 32)
		jumped.known &= ~(1u << sp);
	return site_param(s, &jumped, &cs, reg, v, w);
}

/* DW_OP_entry_value OP (of ATTR) of F's function, from CALLER's call site
 * (or the tail call's that jumped to it). */
static bool entry_value(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, Dwarf_Attribute *attr,
			const Dwarf_Op *op, uint64_t *v, struct why *w)
{
	Dwarf_Attribute sub;
	Dwarf_Op *ops;
	size_t nops;
	unsigned reg;
	Dwarf_Die cs;
	if (!caller || !attr || !f->pa || !f->pa->has_sub || dwarf_getlocation_attr(attr, op, &sub) != 0 ||
	    dwarf_getlocation(&sub, &ops, &nops) != 0 || !single_reg(ops, nops, &reg))
		return false;
	f->entry_asked = true;
	if (f->no_entry)
		return false;
	if (f->tail_ret)
		return tail_entry_value(s, f, caller, reg, v, w);
	return call_site(caller, &cs) && calls(s, caller, &cs, f) && site_param(s, caller, &cs, reg, v, w);
}

static bool frame_base(struct symbols *s, struct arg_frame *f, uint64_t *v, struct why *w, int depth)
{
	struct loc l;
	if (!f->pa || !f->pa->nfb || depth > 2 ||
	    !eval(s, f, NULL, &f->pa->fb_attr, f->pa->fb, f->pa->nfb, 8, depth + 1, &l, w))
		return false;
	if (l.k == LOC_IMPLICIT)
		return false;
	*v = l.v;
	return true;
}

/* Evaluate OPS (of ATTR) at frame F into OUT: false when it cannot be
 * (W's reason set when that is not "optimized out"). */
static bool eval(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, Dwarf_Attribute *attr,
		 const Dwarf_Op *ops, size_t nops, unsigned size, int depth, struct loc *out, struct why *w)
{
	uint64_t st[EVAL_STACK];
	size_t sp = 0;
#define NEED(k) do { if (sp < (k)) return false; } while (0)
#define PUSH(x) do { uint64_t v_ = (x); if (sp >= EVAL_STACK) return false; st[sp++] = v_; } while (0)
	*out = (struct loc){ .k = LOC_MEMORY };
	bool located = false;
	for (size_t i = 0; i < nops && i < MAX_OPS; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t a = op->atom;
		uint64_t x, y;
		if (located) {
			/* a location that is the whole value, as its one piece */
			return a == DW_OP_piece && op->number >= size && i + 1 == nops;
		}
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH((uint64_t)(a - DW_OP_lit0));
			continue;
		}
		if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (!reg_value(f, a - DW_OP_breg0, &x, w))
				return false;
			PUSH(x + op->number);
			continue;
		}
		if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
			if (!reg_value(f, a - DW_OP_reg0, &x, w))
				return false;
			*out = (struct loc){ .k = LOC_REGISTER, .v = x, .reg = a - DW_OP_reg0 };
			located = true;
			continue;
		}
		switch (a) {
		case DW_OP_addr:
			PUSH(op->number + (f->pa ? f->pa->bias : 0));
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_regx:
			if (!reg_value(f, (unsigned)op->number, &x, w))
				return false;
			*out = (struct loc){ .k = LOC_REGISTER, .v = x, .reg = (unsigned)op->number };
			located = true;
			break;
		case DW_OP_bregx:
			if (!reg_value(f, (unsigned)op->number, &x, w))
				return false;
			PUSH(x + op->number2);
			break;
		case DW_OP_fbreg:
			if (!frame_base(s, f, &x, w, depth))
				return false;
			PUSH(x + op->number);
			break;
		case DW_OP_call_frame_cfa:
			if (!frame_cfa(s, f, &x, w))
				return false;
			PUSH(x);
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			st[sp - 1] += op->number;
			break;
		case DW_OP_dup:
			NEED(1);
			PUSH(st[sp - 1]);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			PUSH(st[sp - 2]);
			break;
		case DW_OP_pick:
			if (op->number >= sp)
				return false;
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			NEED(2);
			x = st[sp - 1], st[sp - 1] = st[sp - 2], st[sp - 2] = x;
			break;
		case DW_OP_neg:
			NEED(1);
			st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			st[sp - 1] = ~st[sp - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and: case DW_OP_or: case DW_OP_xor:
		case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
			NEED(2);
			y = st[--sp];
			x = st[sp - 1];
			st[sp - 1] = a == DW_OP_plus ? x + y : a == DW_OP_minus ? x - y : a == DW_OP_mul ? x * y :
				     a == DW_OP_and ? (x & y) : a == DW_OP_or ? (x | y) : a == DW_OP_xor ? (x ^ y) :
				     y >= 64 ? (a == DW_OP_shra && (int64_t)x < 0 ? UINT64_MAX : 0) :
				     a == DW_OP_shl ? x << y : a == DW_OP_shr ? x >> y : (uint64_t)((int64_t)x >> y);
			break;
		case DW_OP_deref:
		case DW_OP_deref_size: {
			NEED(1);
			unsigned n = a == DW_OP_deref ? 8 : (unsigned)op->number;
			uint8_t b[8] = { 0 };
			if (n == 0 || n > 8 || dump_read(s->dump, st[sp - 1], b, n) != PC_OK) {
				w->reason = n && n <= 8 ? "memory the dump does not hold" : NULL;
				return false;
			}
			memcpy(&x, b, 8);
			st[sp - 1] = x;
			break;
		}
		case DW_OP_stack_value:
			NEED(1);
			*out = (struct loc){ .k = LOC_VALUE, .v = st[sp - 1] };
			located = true;
			break;
		case DW_OP_implicit_value:
			if (!attr || dwarf_getlocation_implicit_value(attr, op, &out->block) != 0)
				return false;
			out->k = LOC_IMPLICIT;
			located = true;
			break;
		case DW_OP_entry_value:
		case DW_OP_GNU_entry_value:
			if (!entry_value(s, f, caller, attr, op, &x, w))
				return false;
			PUSH(x);
			break;
		case DW_OP_nop:
			break;
		case DW_OP_implicit_pointer:
		case DW_OP_GNU_implicit_pointer:
			/* (gdb's <synthetic pointer>: what it points to is known, not where) */
			w->reason = "a pointer to a value the compiler did not keep in memory (DW_OP_implicit_pointer)";
			return false;
		case DW_OP_piece:
			/* a first piece holding the whole value */
			if (op->number < size || i + 1 != nops)
				return false;
			NEED(1);
			*out = (struct loc){ .k = LOC_MEMORY, .v = st[sp - 1] };
			return true;
		default:
			return false;
		}
	}
	if (located)
		return true;
	NEED(1);
	*out = (struct loc){ .k = LOC_MEMORY, .v = st[sp - 1] };
	return true;
#undef NEED
#undef PUSH
}

/* The value of A at F into OUT. */
static void eval_arg(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, struct arg_desc *a,
		     struct native_arg *out)
{
	*out = (struct native_arg){ .name = a->name, .type = a->type, .kind = a->kind, .size = a->size,
				    .state = NARG_OPTIMIZED_OUT };
	uint64_t mask = a->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (a->size * 8)) - 1;
	struct loc l;
	struct why w = { 0 };
	if (a->has_const) {
		out->value = a->cval & mask;
		out->state = NARG_KNOWN;
	} else if (!a->ops) {
		return;
	} else if (!eval(s, f, caller, &a->attr, a->ops, a->nops, a->size, 0, &l, &w)) {
		if (w.reason) {
			out->state = NARG_UNAVAILABLE;
			out->reason = w.reason;
		}
		return;
	} else if (a->kind == NARG_OTHER) {
		out->state = NARG_UNAVAILABLE;
		out->reason = "a value of this type is not printed";
		return;
	} else if (l.k == LOC_MEMORY) {
		uint8_t b[8] = { 0 };
		if (dump_read(s->dump, l.v, b, a->size) != PC_OK) {
			out->state = NARG_UNAVAILABLE;
			out->reason = "memory the dump does not hold";
			return;
		}
		memcpy(&out->value, b, 8);
		out->state = NARG_KNOWN;
	} else if (l.k == LOC_IMPLICIT) {
		uint8_t b[8] = { 0 };
		if (l.block.length < a->size)
			return;
		memcpy(b, l.block.data, a->size);
		memcpy(&out->value, b, 8);
		out->state = NARG_KNOWN;
	} else {
		/* (a register holds its value in its low bytes) */
		out->value = l.v & mask;
		out->state = NARG_KNOWN;
	}
	if (a->kind == NARG_ENUM)
		out->enumerator = NULL;
}

/* The name of enum T's value V, NULL when none has it. */
static const char *enumerator(Dwarf_Die *t, uint64_t v, unsigned size)
{
	Dwarf_Die c;
	uint64_t mask = size >= 8 ? UINT64_MAX : (UINT64_C(1) << (size * 8)) - 1;
	if (dwarf_child(t, &c) != 0)
		return NULL;
	int k = 0;
	do {
		Dwarf_Attribute at;
		Dwarf_Word u;
		Dwarf_Sword sv;
		if (dwarf_tag(&c) != DW_TAG_enumerator || !dwarf_attr(&c, DW_AT_const_value, &at))
			continue;
		if ((dwarf_formsdata(&at, &sv) == 0 && ((uint64_t)sv & mask) == v) ||
		    (dwarf_formudata(&at, &u) == 0 && (u & mask) == v))
			return dwarf_diename(&c);
	} while (++k < 100000 && dwarf_siblingof(&c, &c) == 0);
	return NULL;
}

int args_eval(struct symbols *s, struct arg_frame *f, struct arg_frame *caller, size_t e, struct native_arg *out)
{
	if (!f->pa || e >= f->pa->n || !f->pa->ent[e].known)
		return -1;
	struct entry_args *ea = &f->pa->ent[e];
	size_t n = ea->n < MAX_NATIVE_ARGS ? ea->n : MAX_NATIVE_ARGS;
	for (size_t i = 0; i < n; i++) {
		eval_arg(s, f, caller, &ea->a[i], &out[i]);
		if (out[i].kind == NARG_ENUM && out[i].state == NARG_KNOWN)
			out[i].enumerator = enumerator(&ea->a[i].type_die, out[i].value, out[i].size);
	}
	return (int)n;
}
