/* A struct py_layout read from an interpreter's own DWARF, for builds the
 * versions/ tables do not describe (other configure options, patched
 * builds).  The fields and where to find them are versions/fields.txt, the
 * same list scripts/gen-versions uses to make the tables. */
#include "python/runtime/dwarf_layout.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field_spec {
	const char *name;
	size_t offset;        /* in struct py_layout */
	int lo, hi;           /* versions that must have it; lo 0: none must */
	const char *alts;     /* alternatives separated by '|' */
};

static const struct field_spec fields[] = {
#include "layout_fields.h"
};

#define MAX_TYPES 64

/* The named types the alternatives mention, found in one pass over the CUs. */
struct types {
	const char *name[MAX_TYPES];
	size_t len[MAX_TYPES];
	bool is_struct[MAX_TYPES];   /* "struct X" (a tag) rather than a typedef */
	bool found[MAX_TYPES];
	Dwarf_Die die[MAX_TYPES];
	int n;
};

static void want_type(struct types *t, const char *name, size_t len)
{
	bool tag = len > 7 && strncmp(name, "struct ", 7) == 0;
	if (tag) {
		name += 7;
		len -= 7;
	}
	for (int i = 0; i < t->n; i++)
		if (t->len[i] == len && t->is_struct[i] == tag && strncmp(t->name[i], name, len) == 0)
			return;
	if (t->n < MAX_TYPES) {
		t->name[t->n] = name;
		t->len[t->n] = len;
		t->is_struct[t->n] = tag;
		t->n++;
	}
}

/* Split "prefix:TYPE:path" into its parts; prefix may be absent. */
struct alt {
	char kind;            /* 'o' offset, 'p' pointer only, 'i' inline only, 's' sizeof, 'b' bit */
	const char *type;
	size_t type_len;
	const char *path;     /* not NUL-terminated at the end of the alternative */
	size_t path_len;
};

static bool parse_alt(const char *s, size_t n, struct alt *a)
{
	a->kind = 'o';
	static const struct { const char *p; char k; } prefixes[] = {
		{ "ptr:", 'p' }, { "inline:", 'i' }, { "sizeof:", 's' }, { "bit:", 'b' },
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i].p);
		if (n > pl && strncmp(s, prefixes[i].p, pl) == 0) {
			a->kind = prefixes[i].k;
			s += pl;
			n -= pl;
			break;
		}
	}
	const char *colon = memchr(s, ':', n);
	if (a->kind == 's') {
		a->type = s;
		a->type_len = n;
		a->path = NULL;
		a->path_len = 0;
		return true;
	}
	if (!colon)
		return false;
	a->type = s;
	a->type_len = (size_t)(colon - s);
	a->path = colon + 1;
	a->path_len = n - a->type_len - 1;
	return true;
}

static void find_types(Dwarf *dw, struct types *t)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int left = t->n;
	while (left > 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				int tag = dwarf_tag(&die);
				if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
					continue;
				const char *name = dwarf_diename(&die);
				if (!name || (tag == DW_TAG_structure_type && dwarf_hasattr(&die, DW_AT_declaration)))
					continue;
				size_t len = strlen(name);
				for (int i = 0; i < t->n; i++) {
					if (!t->found[i] && t->len[i] == len && memcmp(t->name[i], name, len) == 0 &&
					    t->is_struct[i] == (tag == DW_TAG_structure_type)) {
						t->die[i] = die;
						t->found[i] = true;
						left--;
					}
				}
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
}

/* Follow typedefs and qualifiers to the type itself. */
static bool peel(Dwarf_Die *die)
{
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(die);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_atomic_type)
			return true;
		Dwarf_Attribute at;
		if (!dwarf_attr_integrate(die, DW_AT_type, &at) || !dwarf_formref_die(&at, die))
			return false;
	}
	return false;
}

static bool member_type(Dwarf_Die *member, Dwarf_Die *type)
{
	Dwarf_Attribute at;
	return dwarf_attr_integrate(member, DW_AT_type, &at) && dwarf_formref_die(&at, type);
}

static bool member_location(Dwarf_Die *member, Dwarf_Word *off)
{
	Dwarf_Attribute at;
	*off = 0;
	if (!dwarf_attr(member, DW_AT_data_member_location, &at))
		return true; /* union members and the first member may omit it */
	return dwarf_formudata(&at, off) == 0;
}

/* Bit position of a member from its parent's start. */
static bool member_bitpos(Dwarf_Die *member, Dwarf_Word *bit)
{
	Dwarf_Attribute at;
	Dwarf_Word v;
	if (dwarf_attr(member, DW_AT_data_bit_offset, &at) && dwarf_formudata(&at, &v) == 0) {
		*bit = v;
		return true;
	}
	Dwarf_Word loc;
	if (!member_location(member, &loc))
		return false;
	if (dwarf_attr(member, DW_AT_bit_offset, &at) && dwarf_formudata(&at, &v) == 0) {
		/* DWARF 2/3: counted from the storage unit's most significant bit */
		int size = dwarf_bytesize(member), bits = dwarf_bitsize(member);
		if (size <= 0 || bits <= 0)
			return false;
		*bit = loc * 8 + (Dwarf_Word)size * 8 - v - (Dwarf_Word)bits;
		return true;
	}
	*bit = loc * 8;
	return true;
}

/* Find NAME (LEN bytes) among TYPE's members, through anonymous members.
 * On success *type is the member's DIE and *bit its bit position. */
static bool find_member(Dwarf_Die *type, const char *name, size_t len, Dwarf_Die *out, Dwarf_Word *bit,
			int depth)
{
	Dwarf_Die child;
	if (depth > 8 || !peel(type) || dwarf_child(type, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		const char *n = dwarf_diename(&child);
		Dwarf_Word pos;
		if (!member_bitpos(&child, &pos))
			continue;
		if (n && strlen(n) == len && memcmp(n, name, len) == 0) {
			*out = child;
			*bit = pos;
			return true;
		}
		Dwarf_Die sub, inner;
		Dwarf_Word ipos;
		if (!n && member_type(&child, &sub) && find_member(&sub, name, len, &inner, &ipos, depth + 1)) {
			*out = inner;
			*bit = pos + ipos;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The value an alternative gives, or -1 when this build lacks it. */
static int64_t resolve(struct types *t, const struct alt *a)
{
	int k = -1;
	bool tag = a->type_len > 7 && strncmp(a->type, "struct ", 7) == 0;
	const char *tn = tag ? a->type + 7 : a->type;
	size_t tl = tag ? a->type_len - 7 : a->type_len;
	for (int i = 0; i < t->n; i++)
		if (t->found[i] && t->is_struct[i] == tag && t->len[i] == tl && memcmp(t->name[i], tn, tl) == 0)
			k = i;
	if (k < 0)
		return -1;
	Dwarf_Die type = t->die[k];
	if (!peel(&type))
		return -1;
	if (a->kind == 's') {
		int size = dwarf_bytesize(&type);
		return size > 0 ? size : -1;
	}
	Dwarf_Word total = 0, bit = 0, last_bit = 0;
	const char *p = a->path, *end = a->path + a->path_len;
	Dwarf_Die member;
	while (p < end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		size_t len = dot ? (size_t)(dot - p) : (size_t)(end - p);
		if (!find_member(&type, p, len, &member, &bit, 0))
			return -1;
		last_bit = bit;
		total += bit;
		p += len + (dot ? 1 : 0);
		if (p < end && !member_type(&member, &type))
			return -1;
	}
	if (a->kind == 'b')
		return (int64_t)last_bit;   /* inside the containing member */
	Dwarf_Die mt;
	if (a->kind == 'p' || a->kind == 'i') {
		if (!member_type(&member, &mt) || !peel(&mt))
			return -1;
		bool pointer = dwarf_tag(&mt) == DW_TAG_pointer_type;
		if (pointer != (a->kind == 'p'))
			return -1;
	}
	return total % 8 == 0 ? (int64_t)(total / 8) : -1;
}

/* Note the types alternatives ALTS ('|'-separated) mention. */
static void want_alts(struct types *t, const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "|");
		struct alt a;
		if (parse_alt(s, n, &a))
			want_type(t, a.type, a.type_len);
		s += n + (s[n] == '|');
	}
}

/* The value of the first of ALTS this build has, or -1. */
static int64_t resolve_alts(struct types *t, const char *s)
{
	int64_t v = -1;
	while (*s && v < 0) {
		size_t n = strcspn(s, "|");
		struct alt a;
		if (parse_alt(s, n, &a))
			v = resolve(t, &a);
		s += n + (s[n] == '|');
	}
	return v;
}

int py_dwarf_values(Dwarf *dw, const char *const *alts, size_t n, int64_t *out)
{
	struct types *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < n; i++)
		want_alts(t, alts[i]);
	find_types(dw, t);
	for (size_t i = 0; i < n; i++)
		out[i] = resolve_alts(t, alts[i]);
	free(t);
	return 0;
}

int py_layout_from_dwarf(Dwarf *dw, unsigned minor, struct py_layout *out, const char **why)
{
	static char missing[256];
	struct types *t = calloc(1, sizeof(*t));
	if (!t) {
		*why = "out of memory";
		return -1;
	}
	size_t nfields = sizeof(fields) / sizeof(fields[0]);
	for (size_t i = 0; i < nfields; i++)
		want_alts(t, fields[i].alts);
	find_types(dw, t);
	int rc = 0;
	for (size_t i = 0; i < nfields; i++) {
		int64_t v = resolve_alts(t, fields[i].alts);
		memcpy((char *)out + fields[i].offset, &v, sizeof(v));
		if (v < 0 && fields[i].lo && (int)minor >= fields[i].lo && (int)minor <= fields[i].hi && rc == 0) {
			snprintf(missing, sizeof(missing), "the DWARF has no %s for CPython 3.%u", fields[i].name, minor);
			*why = missing;
			rc = -1;
		}
	}
	out->minor = minor;
	out->source = "the interpreter's own DWARF";
	free(t);
	return rc;
}

const char *py_layout_field_name(size_t offset)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].offset == offset)
			return fields[i].name;
	return NULL;
}
