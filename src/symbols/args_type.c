/* The C types of native frames' arguments, from their DWARF: a type's
 * name as gdb prints it and how a value of it is printed. */
#include "symbols/args.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <string.h>

#define MAX_TYPE_DEPTH 16

struct kind {
	enum native_arg_kind kind;
	unsigned size;
	Dwarf_Die type_die;
};

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

bool args_type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;
	return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, out);
}

/* T's name as gdb prints it ("PyObject *", "const char *"), into BUF. */
static void type_name(Dwarf_Die *t, char *buf, size_t cap, int depth)
{
	Dwarf_Die inner;
	bool has_inner = t && args_type_of(t, &inner);
	char sub[256];
	if (!t) {
		snprintf(buf, cap, "void");
		return;
	}
	if (depth > MAX_TYPE_DEPTH) {
		snprintf(buf, cap, "?");
		return;
	}
	const char *name = dwarf_diename(t);
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
		if (has_inner && dwarf_tag(&inner) == DW_TAG_subroutine_type) {
			Dwarf_Die ret;
			type_name(args_type_of(&inner, &ret) ? &ret : NULL, sub, sizeof(sub), depth + 1);
			snprintf(buf, cap, "%s (*)()", sub);
			return;
		}
		type_name(has_inner ? &inner : NULL, sub, sizeof(sub), depth + 1);
		snprintf(buf, cap, "%s%s%s", sub, sub[0] && sub[strlen(sub) - 1] == '*' ? "" : " ",
			 dwarf_tag(t) == DW_TAG_pointer_type ? "*" : "&");
		return;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type: {
		const char *q = dwarf_tag(t) == DW_TAG_const_type ? "const" :
				dwarf_tag(t) == DW_TAG_volatile_type ? "volatile" : "restrict";
		type_name(has_inner ? &inner : NULL, sub, sizeof(sub), depth + 1);
		if (has_inner && dwarf_tag(&inner) == DW_TAG_pointer_type)
			snprintf(buf, cap, "%s %s", sub, q);
		else
			snprintf(buf, cap, "%s %s", q, sub);
		return;
	}
	case DW_TAG_structure_type:
		snprintf(buf, cap, "struct %s", name ? name : "{...}");
		return;
	case DW_TAG_union_type:
		snprintf(buf, cap, "union %s", name ? name : "{...}");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, cap, "enum %s", name ? name : "{...}");
		return;
	case DW_TAG_array_type:
		type_name(has_inner ? &inner : NULL, sub, sizeof(sub), depth + 1);
		snprintf(buf, cap, "%s []", sub);
		return;
	default:
		snprintf(buf, cap, "%s", name ? name : "?");
		return;
	}
}

static void type_kind(Dwarf_Die *t, struct kind *a)
{
	Dwarf_Die cur, next;
	a->kind = NARG_OTHER;
	a->size = 0;
	if (!t)
		return;
	cur = *t;
	for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
		int tag = dwarf_tag(&cur);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type)
			break;
		if (!args_type_of(&cur, &next))
			return;
		cur = next;
	}
	a->type_die = cur;
	Dwarf_Word size;
	Dwarf_Attribute at;
	switch (dwarf_tag(&cur)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type: {
		a->kind = NARG_POINTER;
		a->size = dwarf_aggregate_size(&cur, &size) == 0 ? (unsigned)size : 8;
		/* a pointer to a one-byte character type is a string to gdb */
		struct kind target = { 0 };
		if (args_type_of(&cur, &next)) {
			type_kind(&next, &target);
			if (target.kind == NARG_CHAR && dwarf_tag(&cur) == DW_TAG_pointer_type)
				a->kind = NARG_STRING;
		}
		return;
	}
	case DW_TAG_enumeration_type:
		a->kind = NARG_ENUM;
		break;
	case DW_TAG_base_type: {
		Dwarf_Word enc = 0;
		if (dwarf_attr(&cur, DW_AT_encoding, &at))
			dwarf_formudata(&at, &enc);
		a->kind = enc == DW_ATE_signed ? NARG_SIGNED : enc == DW_ATE_unsigned ? NARG_UNSIGNED :
			  enc == DW_ATE_boolean ? NARG_BOOL : enc == DW_ATE_float ? NARG_FLOAT :
			  enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char ? NARG_CHAR :
			  enc == DW_ATE_UTF ? NARG_UNSIGNED : NARG_OTHER;
		break;
	}
	default:
		break;
	}
	if (dwarf_aggregate_size(&cur, &size) == 0)
		a->size = size > 64 ? 64 : (unsigned)size;
	if (a->kind == NARG_CHAR && a->size != 1)
		a->kind = NARG_SIGNED;
	if (a->size > 8 || (a->kind == NARG_FLOAT && a->size != 4 && a->size != 8) || a->size == 0)
		a->kind = NARG_OTHER;
}

void args_type_kind(Dwarf_Die *t, enum native_arg_kind *kind, unsigned *size, Dwarf_Die *bare)
{
	struct kind k = { 0 };
	type_kind(t, &k);
	*kind = k.kind;
	*size = k.size;
	*bare = k.type_die;
}

void args_type_name(Dwarf_Die *t, char *buf, size_t cap)
{
	type_name(t, buf, cap, 0);
}
