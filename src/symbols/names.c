/* Names of native functions (names.h): demangled, without a symbol
 * version, and the calls the compiler inlined at an address. */
#include "symbols/names.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C++ names are demangled by the C++ runtime's own demangler
 * (__cxa_demangle, the Itanium ABI's), loaded at run time so that pycore
 * needs no C++ library to run. */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

const char *names_demangle(const char *name, char *buf, size_t cap)
{
	static demangle_fn fn;
	static bool tried;
	if (!name || strncmp(name, "_Z", 2) != 0)
		return name;
	if (!tried) {
		tried = true;
		void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		if (lib)
			fn = (demangle_fn)dlsym(lib, "__cxa_demangle");
	}
	int status = -1;
	char *out = fn ? fn(name, NULL, NULL, &status) : NULL;
	if (!out || status != 0) {
		free(out);
		return name;
	}
	snprintf(buf, cap, "%s", out);
	free(out);
	return buf;
}

/* NAME without a symbol version ("clock_nanosleep@GLIBC_2.2.5": the version
 * is no part of the function's name), into BUF when it must be cut. */
const char *names_unversioned(const char *name, char *buf, size_t cap)
{
	const char *at = name ? strchr(name, '@') : NULL;
	if (!at || at == name)
		return name;
	size_t n = (size_t)(at - name);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

/* The name of an inlined subroutine's DIE: its abstract origin's, the
 * linkage name demangled when it has one. */
const char *names_inlined(Dwarf_Die *die, char *buf, size_t cap)
{
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (linkage && strncmp(linkage, "_Z", 2) == 0)
		return names_demangle(linkage, buf, cap);
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

/* The file of a DW_AT_call_file index in CU's line table. */
const char *names_call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

int names_call_line(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word line;
	return dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) == 0 ? (int)line : 0;
}

/* The calls inlined at PC inside the concrete function that holds it,
 * outermost first, into CHAIN: below PARENT, the children whose ranges
 * hold PC (through namespaces and classes, which have none), keeping the
 * inlined subroutines on the way.  Returns their number. */
int names_inline_chain(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int n, int depth)
{
	Dwarf_Die child;
	if (depth > 2 * MAX_INLINE_DEPTH || dwarf_child(parent, &child) != 0)
		return n;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_namespace: {
			int m = names_inline_chain(&child, pc, chain, n, depth + 1);
			if (m != n)
				return m;
			break;
		}
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) <= 0)
				break;
			if (dwarf_tag(&child) == DW_TAG_inlined_subroutine && n < MAX_INLINE_DEPTH)
				chain[n++] = child;
			return names_inline_chain(&child, pc, chain, n, depth + 1);
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* The concrete function below PARENT whose ranges hold ADDR. */
bool names_subprogram_at(Dwarf_Die *parent, Dwarf_Addr addr, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;
	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return false;
	int k = 0;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
			if (names_subprogram_at(&c, addr, out, depth + 1))
				return true;
			break;
		case DW_TAG_subprogram:
			if (dwarf_haspc(&c, addr) > 0) {
				*out = c;
				return true;
			}
			break;
		default:
			break;
		}
	} while (++k < 1000000 && dwarf_siblingof(&c, &c) == 0);
	return false;
}

bool names_entry(Dwarf_Die *sub, Dwarf_Addr *entry)
{
	Dwarf_Addr base, lo, hi;
	if (dwarf_entrypc(sub, entry) == 0)
		return true;
	if (dwarf_ranges(sub, 0, &base, &lo, &hi) <= 0)
		return false;
	*entry = lo;
	return true;
}
