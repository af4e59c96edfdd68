/* libdwfl session over a dump's modules. */
#include "symbols/symbols.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct symbols {
	struct dump *dump;
	Dwfl *dwfl;
	Dwfl_Module **mods;          /* parallel to dump->modules */
	char *debuginfo_path;
	Dwfl_Callbacks cb;
};

/* libdwfl asks for a module's ELF: give it the file the dump named, but only
 * once the dump layer has checked its build-id (libdwfl checks again against
 * the id reported with dwfl_module_report_build_id). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod; (void)modname; (void)base; (void)elfp;
	struct dump_module *m = *userdata;
	/* symbols_lookup has the dump layer verify the file first */
	if (!m || m->file_state <= 0)
		return -1;
	int fd = open(m->file_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*file_name = strdup(m->file_path);
	return fd;
}

struct symbols *symbols_open(struct dump *d, char **debug_dirs, const char **err)
{
	struct symbols *s = calloc(1, sizeof(*s));
	if (!s) {
		*err = "out of memory";
		return NULL;
	}
	s->dump = d;
	s->cb.find_elf = find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	/* libdwfl's own search: next to the file, .debug/, /usr/lib/debug,
	 * then the directories given */
	size_t len = strlen(":.debug:/usr/lib/debug") + 1;
	for (char **dd = debug_dirs; dd && *dd; dd++)
		len += strlen(*dd) + 1;
	s->debuginfo_path = malloc(len);
	if (s->debuginfo_path) {
		strcpy(s->debuginfo_path, ":.debug:/usr/lib/debug");
		for (char **dd = debug_dirs; dd && *dd; dd++) {
			strcat(s->debuginfo_path, ":");
			strcat(s->debuginfo_path, *dd);
		}
	}
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->cb);
	s->mods = calloc(d->nmodules ? d->nmodules : 1, sizeof(*s->mods));
	if (!s->dwfl || !s->mods) {
		*err = s->dwfl ? "out of memory" : dwfl_errmsg(-1);
		symbols_close(s);
		return NULL;
	}
	dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		/* Only mappings of an ELF image (its header captured or not) are
		 * modules; data files such as locale archives are not. */
		if (m->base == 0 || m->end <= m->start)
			continue;
		Dwfl_Module *dm = dwfl_report_module(s->dwfl, m->path, m->start, m->end);
		if (!dm)
			continue;
		void **ud;
		dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = m;
		/* The dump layer verifies build-ids (and allows a mismatch when
		 * told to), so libdwfl is not asked to check them again. */
		s->mods[i] = dm;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	return s;
}

void symbols_close(struct symbols *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->mods);
	free(s->debuginfo_path);
	free(s);
}

static Dwfl_Module *dwfl_mod(struct symbols *s, struct dump_module *m)
{
	size_t i = (size_t)(m - s->dump->modules);
	return i < s->dump->nmodules ? s->mods[i] : NULL;
}

const char *symbols_module_error(struct symbols *s, struct dump_module *m)
{
	(void)s;
	if (m->file_error)
		return m->file_error;
	return "no symbol table";
}

struct Dwarf *symbols_dwarf(struct symbols *s, struct dump_module *m)
{
	Dwfl_Module *dm = dwfl_mod(s, m);
	Dwarf_Addr bias;
	return dm ? dwfl_module_getdwarf(dm, &bias) : NULL;
}

int symbols_lookup(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n)
{
	Dwfl_Module *dm = dwfl_mod(s, m);
	if (!dm || dump_module_file(s->dump, m) != 0)
		return -1;
	int nsym = dwfl_module_getsymtab(dm);
	if (nsym <= 0)
		return -1;
	for (size_t k = 0; k < n; k++)
		want[k].addr = 0;
	int found = 0;
	for (int i = 1; i < nsym && (size_t)found < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || sym.st_shndx == SHN_UNDEF)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (want[k].addr == 0 && strcmp(name, want[k].name) == 0) {
				want[k].addr = addr;
				want[k].size = sym.st_size;
				found++;
				break;
			}
		}
	}
	return found;
}
