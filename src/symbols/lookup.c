/* Symbols by name (symbols.h's symbols_lookup, symbols_lookup_dynamic):
 * one pass over a module's table, each answer kept for the session (and,
 * in a warm process of pycore batch, for the process: warm.h). */
#include "symbols/symbols_int.h"
#include "symbols/warm.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* WANT's answer for M from an earlier symbols_lookup: true when every
 * name was asked before (the walk asks the same names again when a dump
 * is analysed more than once, as the asyncio fuzz target does). */
static bool memo_get(const struct symbols *s, const struct dump_module *m, struct symbol_want *want, size_t n,
		     int *found)
{
	*found = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = 0;
		while (i < s->nmemo && (s->memo[i].m != m || strcmp(s->memo[i].name, want[k].name) != 0))
			i++;
		if (i == s->nmemo)
			return false;
		want[k].addr = s->memo[i].addr;
		want[k].size = s->memo[i].size;
		*found += want[k].addr != 0;
	}
	return true;
}

static void memo_put(struct symbols *s, const struct dump_module *m, const struct symbol_want *want, size_t n)
{
	if (s->nmemo + n > s->capmemo) {
		size_t cap = 2 * (s->nmemo + n);
		struct symbol_memo *memo = realloc(s->memo, cap * sizeof(*memo));
		if (!memo)
			return; /* only the next lookup is slower */
		s->memo = memo;
		s->capmemo = cap;
	}
	for (size_t k = 0; k < n; k++) {
		char *name = strdup(want[k].name);
		if (!name)
			return;
		s->memo[s->nmemo++] = (struct symbol_memo){ m, name, want[k].addr, want[k].size };
	}
}

/* A name's key for symbols_lookup: its length and its first and last eight
 * bytes, mixed (a multiply-xorshift step), in constant time per name. */
static uint64_t name_key(const char *name, size_t len)
{
	uint64_t a = 0, b = 0;
	if (len >= 8) {
		memcpy(&a, name, 8);
		memcpy(&b, name + len - 8, 8);
	} else {
		memcpy(&a, name, len);
	}
	uint64_t h = (a ^ (b * UINT64_C(0x9e3779b97f4a7c15)) ^ len) * UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 32);
}

/* Whether libdwfl opened M's file (symbols_file_used). */
static bool *opened_flag(struct symbols *s, const struct dump_module *m)
{
	size_t i = (size_t)(m - s->dump->modules);
	return i < s->dump->nmodules ? &s->refs[i].opened : NULL;
}

/* A warm answer (warm.h) for M: true, *RESULT the look-up's value, and M's
 * file marked opened when the cold look-up opened it. */
static bool warm_answer(struct symbols *s, enum warm_kind kind, struct dump_module *m, struct symbol_want *want,
			size_t n, int *result)
{
	bool opened;
	bool *flag = opened_flag(s, m);
	if (!flag || !symbols_warm_get(kind, m, symbols_module_file(s, m), want, n, result, &opened))
		return false;
	*flag = *flag || opened;
	return true;
}

/* Keep a cold answer for the warm process's next dumps (not when WANT
 * names a symbol twice: a cold look-up fills only one of them). */
static void warm_keep(struct symbols *s, enum warm_kind kind, struct dump_module *m,
		      const struct symbol_want *want, size_t n, int result)
{
	bool *flag = opened_flag(s, m);
	if (!symbols_warm_enabled() || !flag)
		return;
	for (size_t k = 0; k < n; k++)
		for (size_t j = k + 1; j < n; j++)
			if (strcmp(want[k].name, want[j].name) == 0)
				return;
	symbols_warm_put(kind, m, symbols_module_file(s, m), want, n, result, *flag);
}

/* The wanted names of a look-up, in a small open-addressing table by key. */
struct wanted {
	struct symbol_want *want;
	size_t n;
	const size_t *slot;          /* 1 + index in WANT; 0: empty */
	size_t cap;                  /* a power of two */
	const uint64_t *hash;        /* each wanted name's key */
	const uint64_t *first2;      /* a bit for each wanted name's first two bytes */
};

/* The bit of NAME's first two bytes (one if it has one): most symbols of
 * a table are passed over by it alone, without their name's length or key. */
static inline size_t first2_bit(const char *name)
{
	unsigned char a = (unsigned char)name[0];
	return (size_t)a << 8 | (a ? (unsigned char)name[1] : 0);
}

/* The wanted name NAME is, not yet found, or NULL. */
static struct symbol_want *wanted_name(const struct wanted *w, const char *name)
{
	size_t bit = first2_bit(name);
	if (!(w->first2[bit / 64] >> (bit % 64) & 1))
		return NULL;
	uint64_t h = name_key(name, strlen(name));
	for (size_t j = h & (w->cap - 1); w->slot[j]; j = (j + 1) & (w->cap - 1)) {
		size_t k = w->slot[j] - 1;
		if (w->hash[k] == h && w->want[k].addr == 0 && strcmp(name, w->want[k].name) == 0)
			return &w->want[k];
	}
	return NULL;
}

/* Symbols 1 to NSYM - 1 of DM as libdwfl gives them: the names found. */
static int scan(Dwfl_Module *dm, int nsym, const struct wanted *w)
{
	int found = 0;
	for (int i = 1; i < nsym && (size_t)found < w->n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		struct symbol_want *k = name && sym.st_shndx != SHN_UNDEF ? wanted_name(w, name) : NULL;
		if (k) {
			k->addr = addr;
			k->size = sym.st_size;
			found++;
		}
	}
	return found;
}

/* ELF's first section of TYPE (SHT_SYMTAB, SHT_DYNSYM), a 64-bit symbol
 * table whose string table ends in a zero byte, into *RT: false none. */
static bool table_in_place(Elf *elf, GElf_Word type, struct raw_symtab *rt)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	if (!elf || gelf_getclass(elf) != ELFCLASS64)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			break;
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	Elf_Scn *strscn = data ? elf_getscn(elf, shdr.sh_link) : NULL;
	Elf_Data *strdata = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!data || data->d_type != ELF_T_SYM || !strdata || !strdata->d_size ||
	    ((const char *)strdata->d_buf)[strdata->d_size - 1] != '\0')
		return false;
	*rt = (struct raw_symtab){ elf, data->d_buf, data->d_size / sizeof(Elf64_Sym), strdata->d_buf,
				   strdata->d_size };
	return true;
}

bool symbols_raw_symtab(Dwfl_Module *dm, int nsym, struct raw_symtab *rt)
{
	GElf_Sym first;
	GElf_Addr at;
	Elf *elf = NULL;               /* the file of the table's first symbol */
	return nsym >= 2 && dwfl_module_getsym_info(dm, 1, &first, &at, NULL, &elf, NULL) &&
	       table_in_place(elf, SHT_SYMTAB, rt) && rt->nsym == (size_t)nsym;
}

/* The same from the .symtab section libdwfl's table comes from, read in
 * place (symbols_raw_symtab): most of a cold analysis went to
 * dwfl_module_getsym_info's work for every symbol (its section's header,
 * the address's adjustment), needed only for the few names wanted.  -1
 * when libdwfl's table is not that section alone, or a name found is not
 * libdwfl's symbol of the same index; the address and size are
 * libdwfl's. */
static int scan_raw(Dwfl_Module *dm, int nsym, const struct wanted *w)
{
	struct raw_symtab rt;
	if (!symbols_raw_symtab(dm, nsym, &rt))
		return -1;
	int found = 0;
	for (int i = 1; i < nsym && (size_t)found < w->n; i++) {
		if (rt.syms[i].st_shndx == SHN_UNDEF || rt.syms[i].st_name >= rt.strsize)
			continue;
		const char *name = rt.str + rt.syms[i].st_name;
		struct symbol_want *k = wanted_name(w, name);
		if (!k)
			continue;
		GElf_Sym sym;
		GElf_Addr addr;
		const char *theirs = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		if (!theirs || strcmp(theirs, name) != 0 || sym.st_shndx == SHN_UNDEF)
			return -1;
		k->addr = addr;
		k->size = sym.st_size;
		found++;
	}
	return found;
}

/* The wanted names in a small open-addressing table by key: each symbol's
 * name is compared only with the wanted names of its key (a scan comparing
 * every name with every wanted one took most of a batch's time on
 * libpython's 20,000 symbols). */
int symbols_lookup(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n)
{
	int found;
	if (memo_get(s, m, want, n, &found))
		return found;
	if (warm_answer(s, WARM_SYMTAB, m, want, n, &found)) {
		if (found >= 0)
			memo_put(s, m, want, n);
		return found;
	}
	Dwfl_Module *dm = symbols_dwfl_mod(s, m);
	if (!dm || !symbols_module_file(s, m))
		return -1;
	int nsym = dwfl_module_getsymtab(dm);
	if (nsym <= 0) {
		warm_keep(s, WARM_SYMTAB, m, want, n, -1);
		return -1;
	}
	size_t cap = 16;
	while (cap < 4 * n)
		cap *= 2;
	size_t *slot = calloc(cap, sizeof(*slot));
	uint64_t *hash = malloc((n ? n : 1) * sizeof(*hash));
	if (!slot || !hash) {
		free(slot);
		free(hash);
		return -1;
	}
	uint64_t first2[(1 << 16) / 64] = { 0 };
	for (size_t k = 0; k < n; k++) {
		want[k].addr = 0;
		size_t bit = first2_bit(want[k].name);
		first2[bit / 64] |= UINT64_C(1) << (bit % 64);
		hash[k] = name_key(want[k].name, strlen(want[k].name));
		size_t j = hash[k] & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = k + 1;
	}
	struct wanted w = { want, n, slot, cap, hash, first2 };
	found = scan_raw(dm, nsym, &w);
	if (found < 0) {
		for (size_t k = 0; k < n; k++)
			want[k].addr = 0;
		found = scan(dm, nsym, &w);
	}
	memo_put(s, m, want, n);
	warm_keep(s, WARM_SYMTAB, m, want, n, found);
	free(slot);
	free(hash);
	return found;
}

int symbols_lookup_dynamic(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n)
{
	int found;
	if (warm_answer(s, WARM_DYNSYM, m, want, n, &found))
		return found;
	Dwfl_Module *dm = symbols_dwfl_mod(s, m);
	GElf_Addr bias;
	Elf *elf = dm && symbols_module_file(s, m) ? dwfl_module_getelf(dm, &bias) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_DYNSYM)
			break;
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !shdr.sh_entsize) {
		if (elf)
			warm_keep(s, WARM_DYNSYM, m, want, n, -1);
		return -1;
	}
	for (size_t k = 0; k < n; k++)
		want[k].addr = 0;
	found = 0;
	size_t nsym = shdr.sh_size / shdr.sh_entsize;
	for (size_t i = 1; i < nsym && (size_t)found < n; i++) {
		GElf_Sym sym;
		const char *name = gelf_getsym(data, (int)i, &sym) ? elf_strptr(elf, shdr.sh_link, sym.st_name) : NULL;
		if (!name || sym.st_shndx == SHN_UNDEF)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (!want[k].addr && strcmp(name, want[k].name) == 0) {
				want[k].addr = sym.st_value + bias;
				want[k].size = sym.st_size;
				found++;
				break;
			}
		}
	}
	warm_keep(s, WARM_DYNSYM, m, want, n, found);
	return found;
}


/* A table of a module read in place, for symbols_function_address: the
 * names it was asked and their answers. */
struct name_table {
	struct raw_symtab rt;
	uint64_t bias;               /* added to a .dynsym symbol's value */
	bool failed;                 /* no such table in place: ask the scans */
	struct { char *name; uint64_t addr; } *memo;
	size_t nmemo;
};

/* Table K (0 .symtab as libdwfl's, 1 .dynsym) of M's module. */
static struct name_table *name_table(struct symbols *s, struct dump_module *m, int k)
{
	size_t i = (size_t)(m - s->dump->modules);
	Dwfl_Module *dm = symbols_dwfl_mod(s, m);
	if (i >= s->dump->nmodules || !dm || !symbols_module_file(s, m))
		return NULL;
	struct module_ref *ref = &s->refs[i];
	if (!ref->names[k] && (ref->names[k] = calloc(1, sizeof(*ref->names[k])))) {
		struct name_table *t = ref->names[k];
		int nsym = k == 0 ? dwfl_module_getsymtab(dm) : 0;
		GElf_Addr bias = 0;
		t->failed = k == 0 ? nsym <= 0 || !symbols_raw_symtab(dm, nsym, &t->rt)
				   : !table_in_place(dwfl_module_getelf(dm, &bias), SHT_DYNSYM, &t->rt);
		t->bias = bias;
	}
	return ref->names[k] && !ref->names[k]->failed ? ref->names[k] : NULL;
}

/* NAME's first defined symbol in T: its index, or 0.  Two bytes compared
 * in place before the name: most symbols are passed over there. */
static size_t name_find(const struct name_table *t, const char *name)
{
	for (size_t i = 1; i < t->rt.nsym; i++) {
		const Elf64_Sym *sym = &t->rt.syms[i];
		if (sym->st_name >= t->rt.strsize || sym->st_shndx == SHN_UNDEF)
			continue;
		const char *theirs = t->rt.str + sym->st_name;
		if (theirs[0] == name[0] && (!name[0] || theirs[1] == name[1]) && strcmp(theirs, name) == 0)
			return i;
	}
	return 0;
}

/* NAME's address in T (0 none), asked once for each name. */
static uint64_t table_address(struct symbols *s, struct dump_module *m, struct name_table *t, bool dynamic,
			      const char *name)
{
	for (size_t i = 0; i < t->nmemo; i++)
		if (strcmp(t->memo[i].name, name) == 0)
			return t->memo[i].addr;
	size_t i = name_find(t, name);
	uint64_t addr = 0;
	GElf_Sym sym;
	GElf_Addr value;
	if (i && dynamic)
		addr = t->rt.syms[i].st_value + t->bias;
	else if (i && dwfl_module_getsym_info(symbols_dwfl_mod(s, m), (int)i, &sym, &value, NULL, NULL, NULL))
		addr = value;  /* the address libdwfl gives: its bias, its rules */
	__typeof__(t->memo) memo = realloc(t->memo, (t->nmemo + 1) * sizeof(*memo));
	if (memo) {
		t->memo = memo;
		if ((memo[t->nmemo].name = strdup(name)) != NULL)
			memo[t->nmemo++].addr = addr;
	}
	return addr;
}

uint64_t symbols_function_address(struct symbols *s, struct dump_module *m, const char *name)
{
	struct symbol_want want = { .name = name }, dyn = { .name = name };
	struct name_table *t = name_table(s, m, 0);
	uint64_t addr = t ? table_address(s, m, t, false, name)
			  : symbols_lookup(s, m, &want, 1) > 0 ? want.addr : 0;
	if (addr)
		return addr;
	if ((t = name_table(s, m, 1)) != NULL)
		return table_address(s, m, t, true, name);
	return symbols_lookup_dynamic(s, m, &dyn, 1) > 0 ? dyn.addr : 0;
}

void symbols_name_tables_free(struct module_ref *ref)
{
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; ref->names[k] && i < ref->names[k]->nmemo; i++)
			free(ref->names[k]->memo[i].name);
		if (ref->names[k])
			free(ref->names[k]->memo);
		free(ref->names[k]);
		ref->names[k] = NULL;
	}
}
