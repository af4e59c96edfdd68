/* Native stacks: libdwfl's unwinder over a session of symbols.c. */
#include "symbols/symbols_int.h"
#include "symbols/cuslice.h"
#include "symbols/args.h"
#include "symbols/names.h"
#include "symbols/symindex.h"
#include "symbols/tailcall.h"
#include "symbols/nocfi.h"
#include "symbols/warm.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Native stacks: libdwfl's unwinder attached to pycore's own memory reader
 * and the dump's thread registers (dwfl_attach_state), so one unwinder
 * serves every dump format.  Call frame information comes from the
 * modules' ELF files (.eh_frame, .debug_frame), found and verified like
 * every other file.
 * ------------------------------------------------------------------------ */

#define MAX_NATIVE_FRAMES 1024
/* unwinds started again, per stack: from the registers a signal frame
 * saved, or past a frame without call frame information */
#define MAX_RESTARTS 64

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
	dwfl_thread_state_register_pc(thread, unsigned_word(u->s, r, r->pc) - (u->from_return ? 1 : 0));
	return true;
}

struct unwind {
	struct symbols *s;
	Dwfl *dwfl;
	const struct platform_regs *regs;  /* the thread's, for its code addresses */
	const struct symbols_quiet *quiet; /* no line info for its module's frames, once quiet_on */
	bool quiet_on;                     /* its from() accepted a frame's symbol */
	char name[512];
	char demangled[1024];
	native_frame_fn fn;
	void *arg;
	int n;
	const char *error;
	/* registers to unwind on from, in a new unwind of the same thread:
	 * those a signal frame saved (the platform's
	 * sigframe.unwind_from_mcontext), or a caller found past a frame
	 * without call frame information (nocfi.h) */
	bool restart;
	struct platform_regs at_signal;
	bool names_only;                   /* symbols alone, nothing cached */
	bool first;                        /* the next frame is the first of this unwind */
	const char *found_by;              /* how the first frame of the next unwind was found */
	/* the stack pointer where the thread's state, or the state a signal
	 * frame saved, starts this stack: the frames below a frame found by
	 * a scan lie between it and that frame (nocfi_step's FIRST_SP) */
	uint64_t first_sp;
	/* arguments wanted: each frame is given to FN once its caller is
	 * known (an entry value is the caller's call site's), kept until then */
	bool want_args;
	struct {
		bool has;
		struct native_frame nf;
		struct pc_frames pf;       /* a copy of the cache's entry: its arrays stay */
		struct arg_frame af;
	} pend;
	struct native_arg argbuf[MAX_NATIVE_ARGS];
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
	const char *function = names_unversioned(names_demangle(symindex_addrname(mod, lookup), u->demangled,
						    sizeof(u->demangled)), u->name, sizeof(u->name));
	char *symbol = function ? strdup(function) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = quiet ? NULL : symbols_addrdie(mod, lookup, &bias);
	Dwarf_Line *line = cu ? dwarf_getsrc_die(cu, lookup - bias) : NULL;
	const char *file = NULL;
	int lineno = 0;
	if (line) {
		file = dwarf_linesrc(line, NULL, NULL);
		dwarf_lineno(line, &lineno);
		Dwarf_Die chain[MAX_INLINE_DEPTH], sub;
		bool has_sub;
		int n = symbols_inline_chain(mod, cu, lookup - bias, chain, &sub, &has_sub);
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

/* PF, a new entry of the cache (or a fresh one) for LOOKUP in MOD:
 * its module and its description (QUIET: by the symbol alone). */
static void fill(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr lookup, bool quiet, struct pc_frames *pf)
{
	void **ud;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, &pf->module_path, NULL);
	struct module_ref *ref = ud ? *ud : NULL;
	pf->module = ref ? ref->mod : NULL;
	pf->quiet = quiet;
	describe(u, mod, lookup, quiet, pf);
	/* the file is known once describe() had libdwfl find it: before,
	 * the first frame of a module would be named by the dump's path */
	const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &pf->module_path, NULL);
	if (!pf->module_path && ref && ref->vdso)
		pf->module_path = name;
}

/* LOOKUP's description in MOD: the cache's (described now if new), or
 * FRESH's when out of memory (the caller frees its entries). */
static struct pc_frames *describe_at(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr lookup, struct pc_frames *fresh)
{
	bool found;
	struct pc_frames *pf = addrtab_get(&u->s->pcs, lookup, &found);
	if (!pf)
		pf = fresh;
	if (!found || pf == fresh)
		fill(u, mod, lookup, false, pf);
	return pf;
}

/* The frame at return address PC, whose call site (PC - 1, described in
 * PF) has no symbol: when PC itself starts one of the platform's signal
 * trampolines, that, described at PC (and cached under PC). */
static struct pc_frames *trampoline_at(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr pc, struct pc_frames *pf)
{
	uint64_t off, size;
	const char *name = symindex_addrinfo(mod, pc, &off, &size);
	if (!name || off != 0 || !dump_is_sigreturn(u->s->dump, names_unversioned(name, u->name, sizeof(u->name))))
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

/* After the frame at PC (SP), whose code has no call frame information
 * for libdwfl to unwind it by: its caller by its frame pointer or a scan
 * (nocfi.c), the unwind started again from there; 0 (libdwfl goes on as
 * it can) when neither finds one. */
static int past_nocfi(struct unwind *u, Dwfl_Frame *frame, uint64_t pc, bool activation, uint64_t sp)
{
	const struct platform *p = u->s->dump->platform;
	if (u->restart || !sp || nocfi_has_cfi(u->dwfl, activation ? pc : pc - 1))
		return 0;
	struct platform_regs regs = { .pc = pc, .sp = sp };
	for (unsigned i = 0; i < p->dwarf_nregs && i < PLATFORM_DWARF_REGS; i++) {
		Dwarf_Word v;
		if (dwfl_frame_reg(frame, i, &v) == 0)
			regs.dwarf[i] = v;
	}
	regs.dwarf[p->dwarf_sp] = sp;
	regs.fp = regs.dwarf[p->dwarf_fp];
	regs.pac_mask = u->regs ? u->regs->pac_mask : 0;
	regs.tp = u->regs ? u->regs->tp : 0;
	const char *how = nocfi_step(u->dwfl, u->s->dump, pc, activation, &regs, u->first_sp ? u->first_sp : sp, &u->at_signal);
	if (!how)
		return 0;
	u->restart = true;
	u->found_by = how;
	return 1;
}

/* The symbol's name at LOOKUP (symindex.h): in a warm process, kept for
 * the next dumps of the build (warm.h), which have the file opened as the
 * look-up would have. */
static const char *addrname(struct symbols *s, const struct module_ref *ref, Dwfl_Module *mod, Dwarf_Addr lookup)
{
	const char *path = ref && ref->mod && !ref->vdso ? symbols_module_file(s, ref->mod) : NULL;
	const char *name;
	if (path && symbols_warm_name_get(ref->mod, path, lookup, &name)) {
		Dwarf_Addr bias;
		dwfl_module_getelf(mod, &bias);
		return name;
	}
	name = symindex_addrname(mod, lookup);
	if (path)
		symbols_warm_name_put(ref->mod, path, lookup, name);
	return name;
}

/* The module whose mappings hold code address ADDR, or NULL: libdwfl's
 * answer, unless the dump's mappings of that module end before ADDR
 * (code the kernel mapped right after a library's last page, a JIT's or
 * a stray pointer's, is no part of it: libdwfl gave it to libm). */
static Dwfl_Module *module_at(struct unwind *u, Dwarf_Addr addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, addr);
	const struct module_ref *ref = symbols_module_ref(mod);
	const struct dump_module *m = ref && !ref->vdso ? ref->mod : NULL;
	if (m && !m->extent_from_list && m->nmaps) {
		bool in = false;
		for (size_t i = 0; i < m->nmaps && !in; i++)
			in = addr >= m->maps[i].start && addr < m->maps[i].end;
		if (!in)
			return NULL;
	}
	return mod;
}

/* Whether the frame at LOOKUP in MOD is described by its symbol alone:
 * one of the quiet module's, from the first of them whose symbol the
 * quiet rule's from() accepts on; never where the thread is (ACTIVATION:
 * a crash inside the function itself wants its inlined calls).  CACHED:
 * the pc's description when there is one, for its symbol. */
static bool quiet_here(struct unwind *u, Dwfl_Module *mod, Dwarf_Addr lookup, bool activation,
		       const struct pc_frames *cached)
{
	if (!u->quiet || !u->quiet->module)
		return false;
	const struct module_ref *ref = symbols_module_ref(mod);
	if (!ref || ref->mod != u->quiet->module)
		return false;
	if (!u->quiet_on && !activation && u->quiet->from) {
		const char *symbol = cached && cached->n ? cached->e[cached->n - 1].function
				     : names_unversioned(symindex_addrname(mod, lookup), u->name, sizeof(u->name));
		u->quiet_on = u->quiet->from(symbol);
	}
	return u->quiet_on;
}

/* The tail calls between the frame kept (its entries just given to FN)
 * and its caller, N return addresses PCS (tailcall.h), each given to FN as
 * one frame marked tail_call: the innermost function at its call (a call
 * inlined there, or the function; gdb shows that alone), with the call's
 * file and line, without arguments (gdb's come from entry values). */
static int tail_calls(struct unwind *u, const uint64_t *pcs, size_t n)
{
	int stop = 0;
	for (size_t k = 0; k < n && !stop; k++) {
		Dwfl_Module *mod = module_at(u, pcs[k] - 1);
		struct pc_frames fresh = { .lookup = pcs[k] - 1 };
		const struct pc_frames *pf = mod ? describe_at(u, mod, pcs[k] - 1, &fresh) : NULL;
		struct native_frame nf = { .pc = pcs[k], .sp = u->pend.nf.sp, .tail_call = true,
					   .module = pf ? pf->module : NULL, .module_path = pf ? pf->module_path : NULL };
		if (pf && pf->n) {
			nf.function = pf->e[0].function;
			nf.file = pf->e[0].file;
			nf.line = pf->e[0].line;
		}
		stop = u->fn(&nf, u->arg);
		if (pf == &fresh) {
			for (size_t i = 0; i < fresh.n; i++)
				free(fresh.e[i].function);
			free(fresh.e);
		}
	}
	return stop;
}

/* Entry E of the frame kept, its arguments into U's buffer: their number,
 * -1 none described.  An entry value asked of a function that may enter
 * itself again by tail calls is taken back (tailcall.h), as gdb does. */
static int entry_args(struct unwind *u, struct arg_frame *caller, size_t e)
{
	struct arg_frame *f = &u->pend.af;
	f->entry_asked = false;
	int n = args_eval(u->s, f, caller, e, u->argbuf);
	if (n > 0 && f->entry_asked && !f->no_entry && tailcall_may_reenter(u->s, args_entry(f->pa))) {
		f->no_entry = true;
		n = args_eval(u->s, f, caller, e, u->argbuf);
	}
	return n;
}

/* The frame kept for its caller given to FN, each of its entries with
 * its arguments evaluated, then the tail calls between them; CALLER, the
 * frame that called it (NULL: not known).  Non-zero when FN stops the
 * walk. */
static int flush(struct unwind *u, struct arg_frame *caller)
{
	if (!u->pend.has)
		return 0;
	u->pend.has = false;
	struct native_frame nf = u->pend.nf;
	const struct pc_frames *pf = &u->pend.pf;
	uint64_t pcs[MAX_TAIL_FRAMES];
	size_t ntail = tailcall_chain(u->s, &u->pend.af, caller, pcs);
	u->pend.af.tail_ret = ntail ? pcs[0] : 0;
	int stop = 0;
	for (size_t i = 0; i < pf->n && !stop; i++) {
		nf.function = pf->e[i].function;
		nf.file = pf->e[i].file;
		nf.line = pf->e[i].line;
		nf.inlined = pf->e[i].inlined;
		int n = entry_args(u, caller, i);
		nf.has_args = n >= 0;
		nf.args = n > 0 ? u->argbuf : NULL;
		nf.nargs = n > 0 ? (size_t)n : 0;
		stop = u->fn(&nf, u->arg);
	}
	return stop ? stop : tail_calls(u, pcs, ntail);
}

/* The registers libdwfl recovered at FRAME (those its call frame
 * information restores; all in a first frame), into AF; past a frame
 * without call frame information only the stack pointer is believed. */
static void frame_regs(const struct unwind *u, Dwfl_Frame *frame, const char *found_by, struct arg_frame *af)
{
	const struct platform *p = u->s->dump->platform;
	af->nregs = p->dwarf_nregs;
	af->dwarf_vec = p->dwarf_vec;
	for (unsigned i = 0; i < p->dwarf_nregs && i < PLATFORM_DWARF_REGS && i < 32; i++) {
		Dwarf_Word v;
		if ((!found_by || i == p->dwarf_sp) && dwfl_frame_reg(frame, i, &v) == 0) {
			af->regs[i] = v;
			af->known |= 1u << i;
		}
	}
}

/* A caller's registers CUR as the psABI has them: only those a call
 * preserves, each the callee's (the frame kept) where libdwfl lost one
 * that the callee's call frame information does not change (args.h);
 * but all that libdwfl recovered past a signal trampoline. */
static void callers_regs(const struct unwind *u, struct arg_frame *cur)
{
	const struct platform *p = u->s->dump->platform;
	/* (past a signal trampoline, the registers its call frame
	 * information restores are the interrupted code's, every one) */
	if (u->pend.has && u->pend.pf.n && dump_is_sigreturn(u->s->dump, u->pend.pf.e[u->pend.pf.n - 1].function))
		return;
	cur->known &= p->dwarf_preserved;
	if (!u->pend.has)
		return;
	const struct arg_frame *callee = &u->pend.af;
	uint32_t carry = p->dwarf_preserved & ~cur->known & callee->known & args_unchanged(callee->pa);
	for (unsigned i = 0; i < 32; i++) {
		if (carry & (1u << i)) {
			cur->regs[i] = callee->regs[i];
			cur->known |= 1u << i;
		}
	}
}

/* Whether the frame at return address PC (its call site's description
 * PF, cached there) starts a signal trampoline that neither a symbol nor
 * call frame information describes, by its code: musl's __restore_rt
 * (stripped, built without CFI; its symbol, if any, is setjmp's, which
 * has no size).  The unwind goes on from the registers its signal frame
 * saved. */
static bool trampoline_by_code(struct unwind *u, Dwarf_Addr pc, bool activation, struct pc_frames *pf)
{
	if (activation)
		return false;
	if (!pf->tramp_checked) {
		pf->tramp = nocfi_trampoline(u->dwfl, u->s->dump, pc);
		pf->tramp_checked = true;
	}
	return pf->tramp;
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
	/* the first frame past one without CFI: its pc is a return address */
	bool first = u->first;
	const char *found_by = u->first ? u->found_by : NULL;
	u->first = false;
	u->found_by = NULL;
	activation = activation && !found_by;
	if (first && found_by)
		pc++; /* libdwfl was given the call's address (from_return) */
	/* a return address points after the call: look up the call itself */
	Dwarf_Addr lookup = activation ? pc : pc - 1;
	struct native_frame nf = { .pc = pc, .found_by = found_by };
	Dwarf_Word sp;
	if (dwfl_frame_reg(frame, u->s->dump->platform->dwarf_sp, &sp) == 0)
		nf.sp = sp;
	if (first && !found_by)
		u->first_sp = nf.sp;
	Dwfl_Module *mod = module_at(u, lookup);
	if (!mod) {
		if (flush(u, NULL) || u->fn(&nf, u->arg))
			return DWARF_CB_ABORT;
		return past_nocfi(u, frame, pc, activation, nf.sp) ? DWARF_CB_ABORT : DWARF_CB_OK;
	}
	if (u->names_only) {
		void **ud;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, &nf.module_path, NULL);
		struct module_ref *ref = ud ? *ud : NULL;
		nf.module = ref ? ref->mod : NULL;
		nf.function = names_unversioned(addrname(u->s, ref, mod, lookup), u->name, sizeof(u->name));
		struct pc_frames look = { .lookup = lookup };
		bool tramp = !dump_is_sigreturn(u->s->dump, nf.function) && trampoline_by_code(u, pc, activation, &look);
		if (tramp) {
			nf.function = NULL;
			nf.sigreturn = true;
		}
		if (u->fn(&nf, u->arg))
			return DWARF_CB_ABORT;
		if (tramp)
			return nf.sp && from_signal_frame(u, nf.sp) ? DWARF_CB_ABORT : DWARF_CB_OK;
		/* (libdwfl goes through a signal trampoline by its CFI) */
		if (dump_is_sigreturn(u->s->dump, nf.function))
			return DWARF_CB_OK;
		return past_nocfi(u, frame, pc, activation, nf.sp) ? DWARF_CB_ABORT : DWARF_CB_OK;
	}
	bool found;
	struct pc_frames *pf = addrtab_get(&u->s->pcs, lookup, &found);
	struct pc_frames fresh = { .lookup = lookup };
	if (!pf)
		pf = &fresh; /* out of memory: not cached */
	bool quiet = quiet_here(u, mod, lookup, activation, found ? pf : NULL);
	if (found && pf->quiet && !quiet) {
		/* described by its symbol alone for a frame nobody printed,
		 * and this one is printed (a full description serves a quiet
		 * frame as it is) */
		for (size_t i = 0; i < pf->n; i++)
			free(pf->e[i].function);
		free(pf->e);
		pf->e = NULL;
		pf->n = 0;
		args_free(pf->args);
		pf->args = NULL;
		pf->args_done = false;
		found = false;
	}
	if (!found)
		fill(u, mod, lookup, quiet, pf);
	/* a signal trampoline is returned to at its first instruction */
	if (!activation && pf->n && !pf->e[pf->n - 1].function && u->s->dump->platform->sigframe.entered_at_symbol)
		pf = trampoline_at(u, mod, pc, pf);
	bool tramp = !(pf->n && dump_is_sigreturn(u->s->dump, pf->e[pf->n - 1].function)) &&
		     trampoline_by_code(u, pc, activation, pf);
	nf.module = pf->module;
	nf.module_path = pf->module_path;
	int stop = 0;
	if (tramp) {
		/* no name: the symbol before it is another function's */
		nf.sigreturn = true;
		stop = (u->want_args ? flush(u, NULL) : 0) || u->fn(&nf, u->arg);
		if (!stop)
			stop = nf.sp && from_signal_frame(u, nf.sp);
	} else if (u->want_args && pf != &fresh) {
		/* (a frame described by its symbol alone: no DWARF read for it) */
		if (!pf->args_done) {
			pf->args = args_describe(mod, pf, pf->lookup, !pf->quiet);
			pf->args_done = true;
		}
		struct arg_frame cur = { .mod = mod, .pc = pc, .lookup = pf->lookup, .pa = pf->args };
		frame_regs(u, frame, found_by, &cur);
		if (!first)
			callers_regs(u, &cur);
		else if (!found_by)
			cur.vecs = u->s->unwinding;  /* the thread's own registers */
		uint64_t key = pf->lookup;
		size_t cap = u->s->pcs.cap;
		stop = flush(u, &cur);
		/* (flush may have put tail calls' descriptions in the cache: when it
		 * grew, its entries moved, and this frame's, there already, is
		 * found again) */
		bool again;
		struct pc_frames *moved = u->s->pcs.cap != cap ? addrtab_get(&u->s->pcs, key, &again) : NULL;
		if (moved && again)
			pf = moved;
		if (!stop) {
			u->pend.has = true;
			u->pend.nf = nf;
			u->pend.pf = *pf;
			u->pend.af = cur;
		}
	} else {
		stop = u->want_args ? flush(u, NULL) : 0;
		for (size_t i = 0; i < pf->n && !stop; i++) {
			nf.function = pf->e[i].function;
			nf.file = pf->e[i].file;
			nf.line = pf->e[i].line;
			nf.inlined = pf->e[i].inlined;
			stop = u->fn(&nf, u->arg);
		}
	}
	const char *function = pf->n ? pf->e[pf->n - 1].function : NULL;
	if (!stop && nf.sp && dump_is_sigreturn(u->s->dump, function) &&
	    u->s->dump->platform->sigframe.unwind_from_mcontext)
		stop = from_signal_frame(u, nf.sp);
	if (!stop && !tramp && !dump_is_sigreturn(u->s->dump, function))
		stop = past_nocfi(u, frame, pc, activation, nf.sp);
	if (pf == &fresh) {
		for (size_t i = 0; i < fresh.n; i++)
			free(fresh.e[i].function);
		free(fresh.e);
	}
	return stop ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* Unwind thread TID (its libdwfl thread argument UT) into U, started
 * again from the registers U's callback asks for (u->restart), each time
 * as thread UT with those registers. */
static int run(struct symbols *s, pid_t tid, struct unwind_thread *ut, struct unwind *u)
{
	u->first = true;
	int rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, u);
	const struct platform_regs *was = ut ? ut->from : NULL;
	struct platform_regs from;
	for (int k = 0; ut && u->restart && k < MAX_RESTARTS && !u->error; k++) {
		from = u->at_signal;
		u->restart = false;
		u->first = true;
		ut->from = &from;
		ut->from_return = u->found_by != NULL;
		rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, u);
	}
	if (ut) {
		ut->from = was;
		ut->from_return = false;
	}
	flush(u, NULL);
	return rc;
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
		s->threads[i] = (struct unwind_thread){ &d->threads[i], d->platform, s, NULL, false };
	s->attached = dwfl_attach_state(s->dwfl, NULL, (pid_t)(d->pid > 0 ? d->pid : 1), &cb, s) ? 1 : -1;
	return s->attached > 0 ? 0 : -1;
}

/* Thread TID of the dump unwound into U (its registers, its libdwfl
 * thread argument): libdwfl's return code. */
static int run_thread(struct symbols *s, int64_t tid, struct unwind *u)
{
	struct unwind_thread *ut = NULL;
	for (size_t i = 0; i < s->dump->nthreads && !u->regs; i++) {
		if (s->dump->threads[i].tid == tid) {
			u->regs = &s->dump->threads[i].regs;
			ut = &s->threads[i];
		}
	}
	s->unwinding = u->regs;
	int rc = run(s, (pid_t)tid, ut, u);
	s->unwinding = NULL;
	return rc;
}

int symbols_native_stack(struct symbols *s, int64_t tid, const struct symbols_quiet *quiet,
			 native_frame_fn fn, void *arg, const char **error)
{
	if (attach(s) != 0) {
		*error = dwfl_errmsg(-1);
		return -1;
	}
	struct unwind u = { .s = s, .dwfl = s->dwfl, .fn = fn, .arg = arg, .quiet = quiet, .want_args = true };
	int rc = run_thread(s, tid, &u);
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
	run_thread(s, tid, &u);
	return u.n;
}

/* The stack from REGS, its first frame found as FOUND_BY (NULL: REGS
 * are a thread's state at an instruction). */
static int stack_from(struct symbols *s, int64_t tid, const struct platform_regs *regs, const char *found_by,
		      const struct symbols_quiet *quiet, native_frame_fn fn, void *arg, const char **error)
{
	s->at = (struct dump_thread){ .tid = tid, .regs = *regs };
	for (size_t i = 0; i < s->dump->nthreads; i++)
		if (s->dump->threads[i].tid == tid)
			s->at.regs.pac_mask = s->dump->threads[i].regs.pac_mask;
	struct unwind_thread at = { &s->at, s->dump->platform, s, &s->at.regs, found_by != NULL };
	s->at_thread = &at;
	s->at_active = true;
	struct unwind u = { .s = s, .dwfl = s->dwfl, .fn = fn, .arg = arg, .quiet = quiet, .regs = &s->at.regs,
			    .found_by = found_by, .want_args = true };
	int rc = run(s, AT_TID, &at, &u);
	s->at_active = false;
	if (u.error)
		*error = u.error;
	else if (rc != 0 && u.n <= 1)
		*error = dwfl_errmsg(-1);
	return u.n;
}

int symbols_native_stack_at(struct symbols *s, int64_t tid, const struct platform_regs *regs,
			    const struct symbols_quiet *quiet, native_frame_fn fn, void *arg, const char **error)
{
	if (attach(s) != 0) {
		*error = dwfl_errmsg(-1);
		return -1;
	}
	return stack_from(s, tid, regs, NULL, quiet, fn, arg, error);
}

int symbols_native_stack_scan(struct symbols *s, int64_t tid, uint64_t sp, const struct symbols_quiet *quiet,
			      native_frame_fn fn, void *arg, const char **error)
{
	if (attach(s) != 0) {
		*error = dwfl_errmsg(-1);
		return -1;
	}
	struct platform_regs regs = { .sp = sp }, from;
	for (size_t i = 0; i < s->dump->nthreads; i++)
		if (s->dump->threads[i].tid == tid)
			regs.pac_mask = s->dump->threads[i].regs.pac_mask;
	regs.dwarf[s->dump->platform->dwarf_sp] = sp;
	if (!nocfi_scan(s->dwfl, s->dump, &regs, &from)) {
		*error = "no return address on the stack there is validated";
		return -1;
	}
	return stack_from(s, tid, &from, "scan", quiet, fn, arg, error);
}
