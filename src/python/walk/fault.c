/* The fault behind a re-raised signal.
 *
 * faulthandler (Modules/faulthandler.c: faulthandler_fatal_error puts the
 * previous handler back, then raise(signum)), Apache (server/mpm_unix.c's
 * sig_coredump: SIG_DFL, then kill(getpid(), sig)) and uWSGI (core/
 * uwsgi.c's uwsgi_segfault: SIG_DFL, then kill(getpid(), signum)) catch a
 * fatal signal and send it again: the core then records a signal the
 * process sent itself, received by whatever thread the kernel picked.
 * The handler ran on the faulting thread, entered through the kernel's
 * signal frame, whose return address is the platform's trampoline (x86-64
 * glibc's __restore_rt, aarch64's __kernel_rt_sigreturn): that frame keeps
 * the original siginfo (signal, code, fault address) and the registers at
 * the fault (platform.h).  So when the core's signal came from the process
 * itself and is one a fault raises (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGTRAP: not SIGABRT, which abort() sends so), each thread's stack is
 * unwound, by symbols alone, to its first
 * trampoline frame, and the signal frame found there of the core's signal
 * (one the kernel raised first, then the receiving thread's, then the
 * first thread's) is the crash; any fault the kernel raised serves when
 * none is of the same signal.
 *
 * The handler is named only where symbols prove it: a frame of the
 * handler's part of the stack is faulthandler_fatal_error, uwsgi_segfault
 * or sig_coredump, or lies in the apache2/httpd or uwsgi executable; or,
 * where no frame of the handler is left (it returned, or tail-called
 * kill(): Debian's apache2 names no static function), the executable is
 * apache2/httpd or uwsgi, whose handler re-raises so; or
 * (faulthandler_fatal_error tail-calls raise, so no frame of its own is
 * left) faulthandler's own table, faulthandler_handlers, says its handler
 * of this signal ran: that one entry disabled (faulthandler_disable_fatal_
 * handler, which the handler calls before it re-raises) while another is
 * still enabled (faulthandler.enable() enables them all, disable() clears
 * them all).  fault_handler_t is { int signum; int enabled; const char
 * *name; struct sigaction previous; int all_threads; } in 3.6-3.15, the
 * table SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSEGV on Linux: its entries are
 * checked to be those before a word of it is believed. */
#include "python/walk/walk.h"
#include "python/python_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_HANDLER_FRAMES 256

struct look {
	struct py_ctx *c;
	int n;
	uint64_t tramp_sp;           /* the trampoline frame's stack pointer; 0 none */
	const char *adjacent;        /* the frame the trampoline returns from: the handler */
	const char *adjacent_module;
	const char *proven;          /* the handler, as a frame names it */
	const char *proven_function;
	bool proven_by_name;         /* proven by a known handler's name, not only its module */
};

/* NAME without a compiler clone's suffix equals WANT. */
static bool named(const char *name, const char *want)
{
	size_t n = strlen(want);
	return name && strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

static const char *program_of(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	if (!base)
		return NULL;
	if (strcmp(base, "apache2") == 0 || strcmp(base, "httpd") == 0)
		return "Apache";
	if (strcmp(base, "uwsgi") == 0 || strncmp(base, "uwsgi-", 6) == 0)
		return "uWSGI";
	return NULL;
}

static int look_frame(const struct native_frame *nf, void *arg)
{
	struct look *l = arg;
	struct py_ctx *c = l->c;
	if (++l->n > MAX_HANDLER_FRAMES)
		return 1;
	if (platform_is_sigreturn(c->d->platform, nf->function)) {
		l->tramp_sp = nf->sp;
		return 1;
	}
	static const struct { const char *fn, *handler; } known[] = {
		{ "faulthandler_fatal_error", "faulthandler" },
		{ "uwsgi_segfault", "uWSGI" }, { "uwsgi_fpe", "uWSGI" },
		{ "sig_coredump", "Apache" },
	};
	const char *path = nf->module_path ? nf->module_path : nf->module ? nf->module->path : NULL;
	/* a known handler's own frame names it even where an inner frame of
	 * its module proved it first (uwsgi_segfault calls uwsgi_exit after
	 * its kill(): a thread caught there is in uwsgi_exit) */
	for (size_t i = 0; !l->proven_by_name && i < sizeof(known) / sizeof(known[0]); i++) {
		if (named(nf->function, known[i].fn)) {
			l->proven = known[i].handler;
			l->proven_function = arena_strdup(c->a, nf->function);
			l->proven_by_name = true;
		}
	}
	if (!l->proven && (l->proven = program_of(path)) != NULL)
		l->proven_function = arena_strdup(c->a, nf->function);
	l->adjacent = arena_strdup(c->a, nf->function);
	l->adjacent_module = arena_strdup(c->a, path);
	return 0;
}

struct candidate {
	struct dump_signal sig;
	bool siginfo;                /* sig is the signal frame's siginfo */
	bool returned;               /* the handler returned: its frame is below sp */
	struct platform_regs regs;
	int64_t tid;
	struct look look;
};

/* A signal the kernel raised for a fault (si_code > 0, not SI_KERNEL;
 * or a hardware fault the saved state names). */
static bool kernel_fault(const struct dump_signal *s)
{
	/* (without a code: read_frame's hardware fault) */
	return !s->has_code || (s->code > 0 && s->code != 0x80);
}

/* The signal of the frame at SP: its siginfo when the kernel wrote it
 * (an SA_SIGINFO handler; a fault's address the same as the saved
 * state's when that has one), else what the saved state says of a
 * hardware fault: one of the signals the kernel sends for it (the core's
 * when it is one of them: the handlers re-raise what they caught), its
 * address, no code.  false when neither says anything. */
static bool read_frame(struct py_ctx *c, uint64_t sp, struct candidate *k)
{
	const struct platform *p = c->d->platform;
	size_t n = platform_sigframe_size(p);
	uint8_t *buf = malloc(n ? n : 1);
	struct platform_signal_frame f;
	bool ok = buf && dump_read(c->d, sp, buf, n) == PC_OK && platform_parse_sigframe(p, buf, n, &f);
	free(buf);
	if (!ok)
		return false;
	k->regs = f.regs;
	k->sig = (struct dump_signal){ .number = f.signo, .code = f.code, .has_code = true };
	dump_signal_decode(&k->sig, f.word);
	k->siginfo = f.siginfo_written && !(f.trap_fault && f.has_fault_address && k->sig.has_address &&
					    k->sig.address != f.fault_address);
	if (k->siginfo)
		return true;
	if (!f.trap_fault)
		return false;
	int want = c->d->signal.number;
	k->sig = (struct dump_signal){
		.number = f.trap_signals[1] == want ? want : f.trap_signals[0],
		.has_address = f.has_fault_address, .address = f.fault_address,
	};
	return k->sig.number > 0;
}

static int rank(const struct py_ctx *c, const struct candidate *k)
{
	const struct dump *d = c->d;
	if (k->returned && (k->sig.number != d->signal.number || !kernel_fault(&k->sig)))
		return 9; /* only a fault's frame proves a re-raise */
	if (k->sig.number != d->signal.number)
		return kernel_fault(&k->sig) ? 3 : 9;
	return (kernel_fault(&k->sig) ? 0 : 2) + (k->tid == d->crashed_tid ? 0 : 1);
}

/* How far below a thread's stack pointer a signal frame its handler
 * returned from is looked for: the red zone, the frame, the saved FPU
 * state (an AVX-512 XSAVE area is under 3 KiB, AMX's 11 KiB) */
#define RETURNED_FRAME_WINDOW (64 * 1024)

/* A handler that returned (Apache's and uWSGI's do, after kill()): the
 * kernel restored the registers its signal frame saved, then delivered
 * the re-raised signal before the next instruction, so the thread's
 * registers are exactly those of a signal frame left below its stack
 * pointer (memory nobody reused).  Every general register equal, pc and
 * sp too, is the proof; the frame's trap and address are then the
 * fault's. */
static bool returned_frame(struct py_ctx *c, const struct dump_thread *t, struct candidate *k)
{
	const struct platform *p = c->d->platform;
	uint64_t sp = t->regs.sp, end, lo = sp > RETURNED_FRAME_WINDOW ? sp - RETURNED_FRAME_WINDOW : 0;
	uint64_t held = dump_next_held(c->d, lo, &end);
	if (!sp || !held || held >= sp || end < sp)
		return false;
	size_t n = (size_t)(sp - held), need = platform_sigframe_size(p);
	uint8_t *buf = malloc(n);
	if (!buf || dump_read(c->d, held, buf, n) != PC_OK) {
		free(buf);
		return false;
	}
	bool found = false;
	for (size_t off = 0; !found && off + need <= n; off += 8) {
		struct platform_regs r;
		const uint8_t *m = buf + off + p->sigframe.mcontext;
		if (platform_le64(m + 0) != t->regs.dwarf[8] && p->dwarf_nregs > 8)
			continue; /* (a quick test first: x86-64's first saved register, r8) */
		memset(&r, 0, sizeof(r));
		p->sigframe.parse_mcontext(m, &r);
		bool same = r.pc == t->regs.pc && r.sp == t->regs.sp;
		for (unsigned i = 0; same && i < p->dwarf_nregs; i++)
			same = r.dwarf[i] == t->regs.dwarf[i];
		if (same && read_frame(c, held + off, k)) {
			k->look.tramp_sp = held + off;
			found = true;
		}
	}
	free(buf);
	return found;
}

void py_find_fault(struct py_ctx *c, struct symbols *s)
{
	struct dump *d = c->d;
	/* a signal the process sent itself, of the kind a fault raises (not
	 * SIGABRT: abort() sends it so, and every thread's unwinding would
	 * cost each abort's analysis for nothing: the abort is the crash) */
	int n = d->signal.number;
	if (!d->has_signal || !d->signal.has_sender || d->pid < 0 || d->signal.sender_pid != d->pid ||
	    (n != 4 && n != 5 && n != 7 && n != 8 && n != 11) || !d->platform ||
	    !d->platform->sigframe.parse_mcontext)
		return;
	struct candidate best = { 0 }, k;
	int best_rank = 9;
	for (size_t i = 0; i < d->nthreads && !py_out_of_time(c); i++) {
		k = (struct candidate){ .tid = d->threads[i].tid, .look = { .c = c } };
		if (symbols_native_names(s, k.tid, look_frame, &k.look) <= 0 || !k.look.tramp_sp ||
		    !read_frame(c, k.look.tramp_sp, &k)) {
			k = (struct candidate){ .tid = d->threads[i].tid, .look = { .c = c } };
			if (!returned_frame(c, &d->threads[i], &k))
				continue;
			k.returned = true;
		}
		int r = rank(c, &k);
		if (r < best_rank) {
			best = k;
			best_rank = r;
		}
	}
	if (best_rank >= 9)
		return;
	struct model_fault *f = arena_alloc(c->a, sizeof(*f));
	if (!f)
		return;
	f->signal = (struct model_signal){
		.number = best.sig.number, .has_code = best.sig.has_code, .code = best.sig.code,
		.has_address = best.sig.has_address, .address = best.sig.address,
		.has_sender = best.sig.has_sender, .sender_pid = best.sig.sender_pid,
		.sender_uid = best.sig.sender_uid,
	};
	f->tid = best.tid;
	f->pc = best.regs.pc;
	f->sp = best.regs.sp;
	f->sp_frame = best.look.tramp_sp;
	f->handler = best.look.proven;
	f->handler_function = best.look.proven ? best.look.proven_function : best.look.adjacent;
	f->handler_module = best.look.adjacent_module;
	f->handler_returned = best.returned;
	/* no frame left of the handler (it returned, or it tail-called kill()):
	 * the program whose handler re-raises so, when the process is one */
	if (!f->handler)
		f->handler = program_of(d->executable);
	f->received_tid = d->crashed_tid;
	c->r->fault = f;
}

/* faulthandler_handlers of module M: whether its entry for SIGNO was
 * disabled by the fatal handler (see above). */
static bool faulthandler_ran(struct py_ctx *c, struct symbols *s, struct dump_module *m, int signo)
{
	static const int32_t order[] = { 7, 4, 8, 6, 11 };   /* Linux's numbers, every platform's */
	const size_t n = sizeof(order) / sizeof(order[0]);
	struct symbol_want want[] = { { "faulthandler_handlers", 0, 0 },
				      { "faulthandler_handlers.lto_priv.0", 0, 0 } };
	if (!m || symbols_lookup(s, m, want, 2) <= 0)
		return false;
	struct symbol_want *w = want[0].addr ? &want[0] : &want[1];
	if (w->size == 0 || w->size % n != 0 || w->size / n < 16 || w->size / n > 1024)
		return false;
	uint64_t elem = w->size / n;
	bool disabled = false, enabled = false;
	for (size_t i = 0; i < n; i++) {
		int32_t sig, on;
		if (py_rd_i32(c, w->addr + i * elem, &sig) != PC_OK || sig != order[i] ||
		    py_rd_i32(c, w->addr + i * elem + 4, &on) != PC_OK || (on != 0 && on != 1))
			return false;
		if (sig == signo)
			disabled = on == 0;
		else
			enabled |= on == 1;
	}
	return disabled && enabled;
}

void py_fault_handler(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct model_fault *f = c->r->fault;
	if (!f || f->handler)
		return;
	if (faulthandler_ran(c, s, interp_module, f->signal.number))
		f->handler = "faulthandler";
}

int64_t py_crash_tid(const struct py_ctx *c)
{
	return c->r->fault ? c->r->fault->tid : c->d->crashed_tid;
}
