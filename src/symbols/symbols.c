/* libdwfl session over a dump's modules. */
#include "symbols/symbols_int.h"
#include "symbols/cuslice.h"
#include "symbols/tailcall.h"
#include "symbols/args.h"
#include "symbols/names.h"
#include "symbols/symindex.h"
#include "symbols/vdso.h"
#include "symbols/symbols_int.h"
#include "symbols/warm.h"
#include "util/addrtab.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdio.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libdwfl asks for a module's ELF: give it the file locate/ chose, whose
 * build-id it checked (or that --allow-mismatch let through). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod; (void)modname; (void)base; (void)elfp;
	struct module_ref *ref = *userdata;
	const char *path = ref && ref->mod ? symbols_module_file(ref->s, ref->mod) : NULL;
	if (!path && ref && ref->vdso && ref->s->vdso) {
		*elfp = elf_memory((char *)ref->s->vdso, ref->s->vdso_size);
		return -1;
	}
	if (!path)
		return -1;
	const struct locate_result *r = locate_result(ref->s->loc, ref->mod);
	if (r->in_image)   /* inside --sysroot's image: its mapping, no path to open */
		ref->opened = (*elfp = elf_memory((char *)r->data, r->size)) != NULL;
	int fd = r->in_image ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		*file_name = strdup(path);
		ref->opened = true;
	}
	return fd;
}

/* Separate debug info: its uncompressed copy from the cache when the
 * build-id trees hold the debug file and the cache a copy of it (by the
 * module's build-id, which its debug file shares), else
 * libdwfl's own search (the path locate/ gives, .gnu_debuglink and
 * build-id), a compressed file found that way copied into the cache for
 * the next analysis.  (libdwfl keeps the ELF it validated a build-id
 * match with, so the copy cannot replace it in this one.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	struct module_ref *ref = *userdata;
	const char *dir = ref ? locate_debug_cache(ref->s->loc) : NULL;
	const unsigned char *id;
	GElf_Addr vaddr;
	int len = dir ? dwfl_module_build_id(mod, &id, &vaddr) : 0;
	char *source = len > 0 ? locate_debug_file(ref->s->loc, id, (size_t)len) : NULL;
	int fd = source ? locate_debug_cached(dir, source, id, (size_t)len, debuginfo_file_name) : -1;
	free(source);
	if (fd >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 && dir)
		locate_debug_cache_store(dir, fd);
	return fd;
}

/* Whether a module's name is the vDSO's as a dump lists it: Breakpad's
 * "linux-gate.so", lldb's "[vdso] (0x...)", the kernel's soname. */
static bool vdso_name(const char *path)
{
	return path && (strncmp(path, "[vdso]", 6) == 0 || strcmp(path, "linux-gate.so") == 0 ||
			strcmp(path, "linux-vdso.so.1") == 0);
}

/* The vDSO (AT_SYSINFO_EHDR; in a minidump without the auxiliary vector,
 * the module named as the vDSO), which no file on disk holds: the dump's
 * module there or a module "[vdso]" of its own, its ELF the copy in the
 * dump. */
static void report_vdso(struct symbols *s)
{
	struct dump *d = s->dump;
	uint64_t span, base = d->auxv_vdso;
	for (size_t i = 0; i < d->nmodules && !base; i++)
		if (vdso_name(d->modules[i].path))
			base = d->modules[i].base;
	if (!(s->vdso = vdso_image(d, base, &s->vdso_size, &span)))
		return;
	for (size_t i = 0; i < d->nmodules; i++) {
		if (d->modules[i].base == base && s->mods[i]) {
			s->refs[i].vdso = true;
			return;
		}
	}
	Dwfl_Module *dm = dwfl_report_module(s->dwfl, "[vdso]", base, base + span);
	void **ud;
	if (dm && dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL)) {
		s->vdso_ref = (struct module_ref){ .s = s, .vdso = true };
		*ud = &s->vdso_ref;
	}
}

struct pc_error *symbols_open(struct dump *d, const struct locate *loc, struct symbols **out)
{
	struct symbols *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (!s)
		return pc_error_new(PC_ENOMEM, NULL, "out of memory");
	s->dump = d;
	s->loc = loc;
	s->pcs = (struct addrtab)ADDRTAB_INIT(struct pc_frames);
	cuindex_init(&s->cus);
	s->reentry = (struct addrtab)ADDRTAB_INIT(struct reentry);
	s->cb.find_elf = find_elf;
	s->cb.find_debuginfo = find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->debuginfo_path = strdup(locate_debuginfo_path(loc) ? locate_debuginfo_path(loc) : ":.debug");
	s->cb.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->cb);
	s->mods = calloc(d->nmodules ? d->nmodules : 1, sizeof(*s->mods));
	s->refs = calloc(d->nmodules ? d->nmodules : 1, sizeof(*s->refs));
	if (!s->dwfl || !s->mods || !s->refs || !s->debuginfo_path) {
		struct pc_error *e = s->dwfl ? pc_error_new(PC_ENOMEM, NULL, "out of memory")
					     : pc_error_new(PC_ENOMEM, NULL, "%s", dwfl_errmsg(-1));
		symbols_close(s);
		return e;
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
		s->refs[i] = (struct module_ref){ .s = s, .mod = m };
		*ud = &s->refs[i];
		/* The dump layer verifies build-ids (and allows a mismatch when
		 * told to), so libdwfl is not asked to check them again. */
		s->mods[i] = dm;
	}
	report_vdso(s);
	dwfl_report_end(s->dwfl, NULL, NULL);
	*out = s;
	return NULL;
}

bool symbols_file_used(const struct symbols *s, const struct dump_module *m)
{
	size_t i = (size_t)(m - s->dump->modules);
	return i < s->dump->nmodules && s->refs[i].opened;
}

void symbols_close(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->pcs.cap; i++) {
		struct pc_frames *pf = addrtab_slot(&s->pcs, i);
		for (size_t k = 0; pf && k < pf->n; k++)
			free(pf->e[k].function);
		if (pf) {
			free(pf->e);
			args_free(pf->args);
		}
	}
	addrtab_free(&s->pcs);
	cuindex_free(&s->cus);
	addrtab_free(&s->reentry);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; s->refs && i < s->dump->nmodules; i++) {
		symindex_free(s->refs[i].index);
		cuslice_free(s->refs[i].slice);
		symbols_name_tables_free(&s->refs[i]);
	}
	symindex_free(s->vdso_ref.index);
	cuslice_free(s->vdso_ref.slice);
	free(s->vdso);
	free(s->mods);
	free(s->refs);
	free(s->threads);
	for (size_t i = 0; i < s->nmemo; i++)
		free(s->memo[i].name);
	free(s->memo);
	free(s->debuginfo_path);
	free(s);
}

struct Dwarf *symbols_dwarf(struct symbols *s, struct dump_module *m)
{
	Dwfl_Module *dm = symbols_dwfl_mod(s, m);
	Dwarf_Addr bias;
	return dm ? dwfl_module_getdwarf(dm, &bias) : NULL;
}

long symbols_section_at(struct symbols *s, struct dump_module *m, const char *name, const void **data,
			uint64_t *addr)
{
	Dwfl_Module *dm = symbols_dwfl_mod(s, m);
	GElf_Addr bias;
	size_t shstrndx;
	Elf *elf = dm && symbols_module_file(s, m) ? dwfl_module_getelf(dm, &bias) : NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -1;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		const char *sname;
		if (!gelf_getshdr(scn, &shdr) || !(sname = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
		    strcmp(sname, name) != 0)
			continue;
		Elf_Data *d = shdr.sh_type == SHT_NOBITS ? NULL : elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != shdr.sh_size || shdr.sh_size > (uint64_t)LONG_MAX)
			return -1;
		*data = d->d_buf;
		if (addr)
			*addr = shdr.sh_addr + bias;
		return (long)shdr.sh_size;
	}
	return -1;
}
