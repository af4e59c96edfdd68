/* libdwfl session over a dump's modules. */
#include "symbols/symbols.h"
#include "symbols/names.h"
#include "symbols/vdso.h"
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

/* What each reported module's userdata points to. */
struct module_ref {
	struct symbols *s;
	struct dump_module *mod;
	bool opened;                 /* libdwfl asked for its file, and got it */
	bool vdso;                   /* the vDSO: its ELF is the dump's copy */
};

/* What the unwinder learns of one code address, kept for the next stack
 * that passes there (the threads of a service mostly share their stacks,
 * and libdwfl looks a symbol up by scanning the whole table): the calls
 * inlined there, innermost first, then the function the symbol names. */
struct pc_entry {
	char *function;
	const char *file;            /* libdw's, valid while the session lasts */
	int line;
	bool inlined;
};

struct pc_frames {
	uint64_t lookup;             /* the key: the pc, or a return address - 1 */
	struct dump_module *module;
	const char *module_path;
	struct pc_entry *e;
	size_t n;
};

struct symbols {
	struct dump *dump;
	struct addrtab pcs;          /* struct pc_frames */
	const struct locate *loc;
	Dwfl *dwfl;
	struct module_ref *refs;     /* parallel to dump->modules */
	int attached;                /* dwfl_attach_state: 0 not yet, 1 done, -1 failed */
	Dwfl_Module **mods;          /* parallel to dump->modules */
	char *debuginfo_path;        /* locate's, for libdwfl */
	Dwfl_Callbacks cb;
	struct symbol_memo *memo;    /* symbols_lookup's answers, found or not */
	size_t nmemo, capmemo;
	struct unwind_thread *threads;  /* libdwfl's thread arguments, parallel to dump->threads */
	const struct platform_regs *unwinding;  /* the registers of the thread being unwound */
	/* the vDSO's image from the dump (vdso.h), and its module when the
	 * dump lists none there */
	uint8_t *vdso;
	size_t vdso_size;
	struct module_ref vdso_ref;
	/* symbols_native_stack_at's registers, as a thread of tid AT_TID */
	struct dump_thread at;
	struct unwind_thread *at_thread;
	bool at_active;
};

/* The tid of symbols_native_stack_at's thread: above any pid_max */
#define AT_TID 0x7ffffffe

/* What libdwfl's callbacks get for a thread: it, and how its dump's
 * platform numbers its registers. */
struct unwind_thread {
	const struct dump_thread *t;
	const struct platform *platform;
	const struct symbols *s;
	/* the registers its first frame starts from: the dump's, or those a
	 * signal frame on its stack saved (unwinding on from there) */
	const struct platform_regs *from;
};

struct symbol_memo {
	const struct dump_module *m;
	char *name;
	uint64_t addr, size;
};

/* The file locate/ chose for a module, or NULL. */
static const char *module_file(const struct symbols *s, const struct dump_module *m)
{
	const struct locate_result *r = locate_result(s->loc, m);
	return r && r->data ? r->path : NULL;
}

/* libdwfl asks for a module's ELF: give it the file locate/ chose, whose
 * build-id it checked (or that --allow-mismatch let through). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod; (void)modname; (void)base; (void)elfp;
	struct module_ref *ref = *userdata;
	const char *path = ref && ref->mod ? module_file(ref->s, ref->mod) : NULL;
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
		s->refs[i] = (struct module_ref){ s, m, false, false };
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
		if (pf)
			free(pf->e);
	}
	addrtab_free(&s->pcs);
	if (s->dwfl)
		dwfl_end(s->dwfl);
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

static Dwfl_Module *dwfl_mod(struct symbols *s, struct dump_module *m)
{
	size_t i = (size_t)(m - s->dump->modules);
	return i < s->dump->nmodules ? s->mods[i] : NULL;
}

struct Dwarf *symbols_dwarf(struct symbols *s, struct dump_module *m)
{
	Dwfl_Module *dm = dwfl_mod(s, m);
	Dwarf_Addr bias;
	return dm ? dwfl_module_getdwarf(dm, &bias) : NULL;
}

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

/* The wanted names in a small open-addressing table by key: each symbol's
 * name is compared only with the wanted names of its key (a scan comparing
 * every name with every wanted one took most of a batch's time on
 * libpython's 20,000 symbols). */
int symbols_lookup(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n)
{
	int found;
	if (memo_get(s, m, want, n, &found))
		return found;
	Dwfl_Module *dm = dwfl_mod(s, m);
	if (!dm || !module_file(s, m))
		return -1;
	int nsym = dwfl_module_getsymtab(dm);
	if (nsym <= 0)
		return -1;
	size_t cap = 16;
	while (cap < 4 * n)
		cap *= 2;
	size_t *slot = calloc(cap, sizeof(*slot));     /* 1 + index in WANT; 0: empty */
	uint64_t *hash = malloc((n ? n : 1) * sizeof(*hash));
	if (!slot || !hash) {
		free(slot);
		free(hash);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		want[k].addr = 0;
		hash[k] = name_key(want[k].name, strlen(want[k].name));
		size_t j = hash[k] & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = k + 1;
	}
	found = 0;
	for (int i = 1; i < nsym && (size_t)found < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || sym.st_shndx == SHN_UNDEF)
			continue;
		uint64_t h = name_key(name, strlen(name));
		for (size_t j = h & (cap - 1); slot[j]; j = (j + 1) & (cap - 1)) {
			size_t k = slot[j] - 1;
			if (hash[k] == h && want[k].addr == 0 && strcmp(name, want[k].name) == 0) {
				want[k].addr = addr;
				want[k].size = sym.st_size;
				found++;
				break;
			}
		}
	}
	memo_put(s, m, want, n);
	free(slot);
	free(hash);
	return found;
}

int symbols_lookup_dynamic(struct symbols *s, struct dump_module *m, struct symbol_want *want, size_t n)
{
	Dwfl_Module *dm = dwfl_mod(s, m);
	GElf_Addr bias;
	Elf *elf = dm && module_file(s, m) ? dwfl_module_getelf(dm, &bias) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_DYNSYM)
			break;
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !shdr.sh_entsize)
		return -1;
	for (size_t k = 0; k < n; k++)
		want[k].addr = 0;
	int found = 0;
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
	return found;
}

long symbols_section_data(struct symbols *s, struct dump_module *m, const char *name, const void **data)
{
	Dwfl_Module *dm = dwfl_mod(s, m);
	GElf_Addr bias;
	size_t shstrndx;
	Elf *elf = dm && module_file(s, m) ? dwfl_module_getelf(dm, &bias) : NULL;
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
		return (long)shdr.sh_size;
	}
	return -1;
}

long symbols_section(struct symbols *s, struct dump_module *m, const char *name, void *buf, size_t cap)
{
	const void *data;
	long n = symbols_section_data(s, m, name, &data);
	if (n >= 0)
		memcpy(buf, data, (size_t)n < cap ? (size_t)n : cap);
	return n;
}

/* ------------------------------------------------------------------------
 * Native stacks: libdwfl's unwinder attached to pycore's own memory reader
 * and the dump's thread registers (dwfl_attach_state), so one unwinder
 * serves every dump format.  Call frame information comes from the
 * modules' ELF files (.eh_frame, .debug_frame), found and verified like
 * every other file.
 * ------------------------------------------------------------------------ */

#define MAX_NATIVE_FRAMES 1024
/* signal frames unwound through by their saved registers, per stack */
#define MAX_SIGNAL_FRAMES 16

/* The thread argument is the thread's struct unwind_thread. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct symbols *s = arg;
	struct unwind_thread *prev = *thread_argp;
	size_t i = prev ? (size_t)(prev - s->threads) + 1 : 0;
	if (i >= s->dump->nthreads)
		return 0;
	*thread_argp = &s->threads[i];
	return (pid_t)s->dump->threads[i].tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct symbols *s = arg;
	if (tid == AT_TID && s->at_active) {
		*thread_argp = s->at_thread;
		return true;
	}
	for (size_t i = 0; i < s->dump->nthreads; i++) {
		if (s->dump->threads[i].tid == tid) {
			*thread_argp = &s->threads[i];
			return true;
		}
	}
	return false;
}

/* A word the unwinder takes from a register or memory, without the
 * pointer-authentication code a signed return address carries.  libdwfl
 * (elfutils 0.188, Debian 12's) does not strip it: it would look the
 * signed address up, find no module and fall back to the frame pointers,
 * repeating or losing frames.  The word is taken for a signed code
 * address when it has bits of the thread's PAC mask set and, without
 * them, is a user-space address (bits 55 and up clear); anything else
 * (the values of other saved registers) is left as it is. */
static uint64_t unsigned_word(const struct symbols *s, const struct platform_regs *r, uint64_t v)
{
	uint64_t stripped = r ? s->dump->platform->code_address(r, v) : v;
	return stripped != v && stripped >> 55 == 0 ? stripped : v;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	const struct symbols *s = arg;
	uint64_t v;
	if (dump_read_u64(s->dump, addr, &v) != PC_OK)
		return false;
	*result = unsigned_word(s, s->unwinding, v);
	return true;
}

/* The thread's first frame: the general registers by DWARF number, as
 * the dump's platform numbers them, and the pc. */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct unwind_thread *u = thread_arg;
	const struct platform_regs *r = u->from ? u->from : &u->t->regs;
	Dwarf_Word regs[PLATFORM_DWARF_REGS];
	unsigned n = u->platform->dwarf_nregs;
	/* the link register may hold a signed return address */
	for (unsigned i = 0; i < n && i < PLATFORM_DWARF_REGS; i++)
		regs[i] = unsigned_word(u->s, r, r->dwarf[i]);
	if (!dwfl_thread_state_registers(thread, 0, n, regs))
		return false;
	dwfl_thread_state_register_pc(thread, unsigned_word(u->s, r, r->pc));
	return true;
}

struct unwind {
	struct symbols *s;
	Dwfl *dwfl;
	const struct platform_regs *regs;  /* the thread's, for its code addresses */
	const struct dump_module *quiet;   /* no line info for its frames */
	char name[512];
	char demangled[1024];
	native_frame_fn fn;
	void *arg;
	int n;
	const char *error;
	/* the registers a signal frame saved, to unwind on from (the
	 * platform's sigframe.unwind_from_mcontext) */
	bool restart;
	struct platform_regs at_signal;
	bool names_only;                   /* symbols alone, nothing cached */
};

/* Append an entry to PF (strings copied; FILE is libdw's). */
static bool pc_add(struct pc_frames *pf, const char *function, const char *file, int line, bool inlined)
{
	struct pc_entry *e = realloc(pf->e, (pf->n + 1) * sizeof(*e));
	if (!e)
		return false;
	pf->e = e;
	e[pf->n] = (struct pc_entry){ function ? strdup(function) : NULL, file, line, inlined };
	pf->n++;
	return true;
}

/* What is at LOOKUP in MOD: the calls inlined there, innermost first (the
 * innermost with the pc's own file and line, each outer one with the call
 * site in the next inner one), then the function the symbol names, with
 * the call site of the outermost inlined call: the line in that function.
 * Without line information (a QUIET module's frames are not shown), only
 * the symbol. */
static void describe(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr lookup, bool quiet, struct pc_frames *pf)
{
	const char *function = names_unversioned(names_demangle(dwfl_module_addrname(mod, lookup), u->demangled,
						    sizeof(u->demangled)), u->name, sizeof(u->name));
	char *symbol = function ? strdup(function) : NULL;
	Dwfl_Line *line = quiet ? NULL : dwfl_module_getsrc(mod, lookup);
	const char *file = NULL;
	int lineno = 0;
	if (line) {
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		Dwarf_Addr bias;
		Dwarf_Die *cu = dwfl_module_addrdie(mod, lookup, &bias);
		Dwarf_Die chain[MAX_INLINE_DEPTH];
		int n = cu ? names_inline_chain(cu, lookup - bias, chain, 0, 0) : 0;
		for (int i = n - 1; i >= 0; i--) {
			char buf[1024];
			if (!pc_add(pf, names_inlined(&chain[i], buf, sizeof(buf)), file, lineno, true))
				break;
			/* the caller's line is this call's site */
			file = names_call_file(cu, &chain[i]);
			lineno = names_call_line(&chain[i]);
		}
	}
	pc_add(pf, symbol, file, lineno, false);
	free(symbol);
}

/* The frame at return address PC, whose call site (PC - 1, described in
 * PF) has no symbol: when PC itself starts one of the platform's signal
 * trampolines, that, described at PC (and cached under PC). */
static struct pc_frames *trampoline_at(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr pc, struct pc_frames *pf)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (!name || off != 0 || !platform_is_sigreturn(u->s->dump->platform, names_unversioned(name, u->name, sizeof(u->name))))
		return pf;
	bool found;
	struct pc_frames *at = addrtab_get(&u->s->pcs, pc, &found);
	if (!at)
		return pf;
	if (!found) {
		at->module = pf->module;
		at->module_path = pf->module_path;
		describe(u, mod, pc, true, at);
	}
	return at;
}

/* Stop this unwind and go on from the registers the signal frame at SP
 * saved (symbols_native_stack starts the next one); 0 when the dump does
 * not hold it: libdwfl goes on as it can. */
static int from_signal_frame(struct unwind *u, uint64_t sp)
{
	struct dump_signal sig;
	if (u->restart || dump_signal_frame(u->s->dump, sp, &sig, &u->at_signal) != PC_OK)
		return 0;
	u->at_signal.pac_mask = u->regs ? u->regs->pac_mask : 0;
	u->at_signal.tp = u->regs ? u->regs->tp : 0;
	u->restart = true;
	return 1;
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a return address without its pointer-authentication code */
	if (u->regs)
		pc = u->s->dump->platform->code_address(u->regs, pc);
	if (u->n++ >= MAX_NATIVE_FRAMES) {
		u->error = "native stack cut at 1024 frames";
		return DWARF_CB_ABORT;
	}
	/* a return address points after the call: look up the call itself */
	Dwarf_Addr lookup = activation ? pc : pc - 1;
	struct native_frame nf = { .pc = pc };
	Dwarf_Word sp;
	if (dwfl_frame_reg(frame, u->s->dump->platform->dwarf_sp, &sp) == 0)
		nf.sp = sp;
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, lookup);
	if (!mod)
		return u->fn(&nf, u->arg) ? DWARF_CB_ABORT : DWARF_CB_OK;
	if (u->names_only) {
		void **ud;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, &nf.module_path, NULL);
		struct module_ref *ref = ud ? *ud : NULL;
		nf.module = ref ? ref->mod : NULL;
		nf.function = names_unversioned(dwfl_module_addrname(mod, lookup), u->name, sizeof(u->name));
		return u->fn(&nf, u->arg) ? DWARF_CB_ABORT : DWARF_CB_OK;
	}
	bool found;
	struct pc_frames *pf = addrtab_get(&u->s->pcs, lookup, &found);
	struct pc_frames fresh = { .lookup = lookup };
	if (!pf)
		pf = &fresh; /* out of memory: not cached */
	if (!found) {
		void **ud;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, &pf->module_path, NULL);
		struct module_ref *ref = ud ? *ud : NULL;
		pf->module = ref ? ref->mod : NULL;
		describe(u, mod, lookup, pf->module && pf->module == u->quiet, pf);
		/* the file is known once describe() had libdwfl find it: before,
		 * the first frame of a module would be named by the dump's path */
		const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &pf->module_path, NULL);
		if (!pf->module_path && ref && ref->vdso)
			pf->module_path = name;
	}
	/* a signal trampoline is returned to at its first instruction */
	if (!activation && pf->n && !pf->e[pf->n - 1].function && u->s->dump->platform->sigframe.entered_at_symbol)
		pf = trampoline_at(u, mod, pc, pf);
	nf.module = pf->module;
	nf.module_path = pf->module_path;
	int stop = 0;
	for (size_t i = 0; i < pf->n && !stop; i++) {
		nf.function = pf->e[i].function;
		nf.file = pf->e[i].file;
		nf.line = pf->e[i].line;
		nf.inlined = pf->e[i].inlined;
		stop = u->fn(&nf, u->arg);
	}
	const char *function = pf->n ? pf->e[pf->n - 1].function : NULL;
	if (!stop && nf.sp && platform_is_sigreturn(u->s->dump->platform, function) &&
	    u->s->dump->platform->sigframe.unwind_from_mcontext)
		stop = from_signal_frame(u, nf.sp);
	if (pf == &fresh) {
		for (size_t i = 0; i < fresh.n; i++)
			free(fresh.e[i].function);
		free(fresh.e);
	}
	return stop ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int attach(struct symbols *s)
{
	static const Dwfl_Thread_Callbacks cb = {
		.next_thread = next_thread,
		.get_thread = get_thread,
		.memory_read = memory_read,
		.set_initial_registers = set_initial_registers,
	};
	if (s->attached)
		return s->attached > 0 ? 0 : -1;
	struct dump *d = s->dump;
	s->threads = calloc(d->nthreads ? d->nthreads : 1, sizeof(*s->threads));
	if (!s->threads) {
		s->attached = -1;
		return -1;
	}
	for (size_t i = 0; i < d->nthreads; i++)
		s->threads[i] = (struct unwind_thread){ &d->threads[i], d->platform, s, NULL };
	s->attached = dwfl_attach_state(s->dwfl, NULL, (pid_t)(d->pid > 0 ? d->pid : 1), &cb, s) ? 1 : -1;
	return s->attached > 0 ? 0 : -1;
}

int symbols_native_stack(struct symbols *s, int64_t tid, const struct dump_module *quiet,
			 native_frame_fn fn, void *arg, const char **error)
{
	if (attach(s) != 0) {
		*error = dwfl_errmsg(-1);
		return -1;
	}
	struct unwind u = { .s = s, .dwfl = s->dwfl, .fn = fn, .arg = arg, .quiet = quiet };
	struct unwind_thread *ut = NULL;
	for (size_t i = 0; i < s->dump->nthreads && !u.regs; i++) {
		if (s->dump->threads[i].tid == tid) {
			u.regs = &s->dump->threads[i].regs;
			ut = &s->threads[i];
		}
	}
	s->unwinding = u.regs;
	int rc = dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, &u);
	/* through signal frames whose trampoline's CFI cannot unwind: on from
	 * the registers each saved, a new unwind of the same thread */
	struct platform_regs at_signal;
	for (int k = 0; ut && u.restart && k < MAX_SIGNAL_FRAMES && !u.error; k++) {
		at_signal = u.at_signal;
		u.restart = false;
		ut->from = &at_signal;
		rc = dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, &u);
		ut->from = NULL;
	}
	s->unwinding = NULL;
	if (u.error)
		*error = u.error;
	else if (rc != 0 && u.n <= 1)
		*error = dwfl_errmsg(-1);
	return u.n;
}

int symbols_native_names(struct symbols *s, int64_t tid, native_frame_fn fn, void *arg)
{
	if (attach(s) != 0)
		return -1;
	struct unwind u = { .s = s, .dwfl = s->dwfl, .fn = fn, .arg = arg, .names_only = true };
	for (size_t i = 0; i < s->dump->nthreads && !u.regs; i++)
		if (s->dump->threads[i].tid == tid)
			u.regs = &s->dump->threads[i].regs;
	dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, &u);
	return u.n;
}

int symbols_native_stack_at(struct symbols *s, int64_t tid, const struct platform_regs *regs,
			    const struct dump_module *quiet, native_frame_fn fn, void *arg, const char **error)
{
	if (attach(s) != 0) {
		*error = dwfl_errmsg(-1);
		return -1;
	}
	s->at = (struct dump_thread){ .tid = tid, .regs = *regs };
	for (size_t i = 0; i < s->dump->nthreads; i++)
		if (s->dump->threads[i].tid == tid)
			s->at.regs.pac_mask = s->dump->threads[i].regs.pac_mask;
	struct unwind_thread at = { &s->at, s->dump->platform, s, &s->at.regs };
	s->at_thread = &at;
	s->at_active = true;
	struct unwind u = { .s = s, .dwfl = s->dwfl, .fn = fn, .arg = arg, .quiet = quiet, .regs = &s->at.regs };
	int rc = dwfl_getthread_frames(s->dwfl, AT_TID, frame_cb, &u);
	s->at_active = false;
	if (u.error)
		*error = u.error;
	else if (rc != 0 && u.n <= 1)
		*error = dwfl_errmsg(-1);
	return u.n;
}
