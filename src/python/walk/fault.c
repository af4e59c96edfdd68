/* The signal behind a re-raised one: a fault, or a signal from outside.
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
 * itself, each thread's stack is unwound, by symbols alone, to its
 * first trampoline frame (named by its symbol, or, in a C library read
 * without its symbol table, by its code: platform.h), on past it while
 * that frame's signal is one the process sent itself (a handler that
 * caught its own re-raise), and the signal frame found there says what
 * the handler caught, whatever its origin: a fault, a signal sent with
 * kill or sigqueue from another process, a timer's.  Of the core's
 * signal first (a fault the kernel raised, then one siginfo records,
 * the receiving thread's first), then a fault of another signal; then,
 * where the thread's handler sent the core's signal itself (it received
 * it: raise() sends to its own thread; or its frames call raise, kill,
 * abort), a signal of another number (SIGALRM caught, SIGABRT raised) or
 * one nothing records (a handler installed without SA_SIGINFO, as gdb's
 * and faulthandler's are, is given no siginfo: an outside kill leaves no
 * sender, and the number is taken to be the re-raised one's).  A handler
 * that returned before its re-raise was delivered (one that raised its
 * own signal while the kernel blocked it: Apache's, uWSGI's, many
 * programs') left its frame below the stack pointer, found by the
 * registers it saved being the thread's own.  A signal sent with tkill
 * (raise(), abort()) is looked for on the receiving thread only.
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
 * table SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSEGV on Linux, named "Bus
 * error", "Illegal instruction", "Floating point exception" ("Floating-
 * point exception" from 3.13), "Aborted", "Segmentation fault"
 * (Modules/faulthandler.c): its entries are checked
 * to be those, names too, before a word of it is believed.  Without a
 * symbol for it (a stripped interpreter without its debug file: it is a
 * static array) it is found by those contents in the module's .data. */
#include "python/walk/walk.h"
#include "python/python_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_HANDLER_FRAMES 512
#define MAX_NESTED 8                 /* signal frames followed on one thread */

struct look {
	struct py_ctx *c;
	int n;
	int nested;                  /* trampolines passed */
	uint64_t tramp_sp;           /* the trampoline frame's stack pointer; 0 none */
	const char *adjacent;        /* the frame the trampoline returns from: the handler */
	const char *adjacent_module;
	const char *proven;          /* the handler, as a frame names it */
	const char *proven_function;
	bool proven_by_name;         /* proven by a known handler's name, not only its module */
	bool sends;                  /* a frame above the trampoline sends a signal */
};

struct candidate {
	struct dump_signal sig;
	bool siginfo;                /* sig is the signal frame's siginfo */
	bool trap;                   /* sig is the saved state's fault */
	bool returned;               /* the handler returned: its frame is below sp */
	struct platform_regs regs;
	int64_t tid;
	struct look look;
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

bool py_sigreturn_at(struct py_ctx *c, const char *function, uint64_t pc, bool by_code)
{
	const struct platform *p = c->d->platform;
	uint8_t code[16];
	if (by_code || dump_is_sigreturn(c->d, function))
		return true;
	/* (a named function is not one: the C library's own name says so) */
	return !function && p->sigframe.code_len && p->sigframe.code_len <= sizeof(code) &&
	       dump_read(c->d, pc, code, p->sigframe.code_len) == PC_OK &&
	       platform_is_sigreturn_code(p, code, p->sigframe.code_len);
}

/* The C library's functions that send a signal, as their symbols (the
 * dynamic ones too) name them. */
static bool sends_signal(const char *fn)
{
	static const char *const senders[] = {
		"raise", "gsignal", "kill", "tgkill", "tkill", "pthread_kill", "abort", "sigqueue",
		"killpg", "pthread_sigqueue", "__pthread_kill_implementation", "__pthread_kill_internal",
	};
	for (size_t i = 0; fn && i < sizeof(senders) / sizeof(senders[0]); i++)
		if (named(fn, senders[i]) || (strncmp(fn, "__", 2) == 0 && named(fn + 2, senders[i])))
			return true;
	return false;
}

static bool read_frame(struct py_ctx *c, uint64_t sp, struct candidate *k);

static int look_frame(const struct native_frame *nf, void *arg)
{
	struct look *l = arg;
	struct py_ctx *c = l->c;
	if (++l->n > MAX_HANDLER_FRAMES)
		return 1;
	if (py_sigreturn_at(c, nf->function, nf->pc, nf->sigreturn)) {
		l->tramp_sp = nf->sp;
		/* a signal the process sent itself, caught there: a handler's
		 * re-raise caught by a handler; what it caught is further out */
		struct candidate k = { .look = { .c = c } };
		if (++l->nested < MAX_NESTED && read_frame(c, nf->sp, &k) && k.siginfo && k.sig.has_sender &&
		    k.sig.sender_pid == c->d->pid)
			return 0;
		return 1;
	}
	l->sends |= sends_signal(nf->function);
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


/* A signal the kernel raised for a fault: siginfo's code > 0, not
 * SI_KERNEL, or a hardware fault the saved state names. */
static bool kernel_fault(const struct candidate *k)
{
	return k->trap || (k->siginfo && k->sig.code > 0 && k->sig.code != 0x80);
}

/* Linux's PID_MAX_LIMIT on 64-bit machines (include/linux/threads.h:
 * 4 * 1024 * 1024): no process id is above it */
#define PID_LIMIT 4194304

/* Whether the siginfo slot of a signal frame was written by the kernel.
 * It writes it only for a handler installed with SA_SIGINFO (x86-64:
 * arch/x86/kernel/signal_64.c, x64_setup_rt_frame, copy_siginfo_to_user
 * under `sa_flags & SA_SIGINFO`; arm64: arch/arm64/kernel/signal.c,
 * setup_rt_frame the same); otherwise the slot holds whatever the stack
 * held, and old bytes can look like a siginfo (signo in range, errno and
 * padding zero: the kernel's zeroed copies left there by an earlier
 * signal).  So it is believed only on evidence, never for looking right:
 *  - never when the handler is one installed without SA_SIGINFO:
 *    faulthandler's (Modules/faulthandler.c, faulthandler_enable: sa_handler
 *    with SA_NODEFER and SA_ONSTACK only, 3.6-3.15);
 *  - a fault's (a code > 0 other than SI_KERNEL) when the saved machine
 *    state, which the kernel always writes, names a fault of that signal
 *    at the same address (x86-64's trapno and cr2, arm64's ESR and
 *    fault_address: independent of the siginfo);
 *  - a signal from software (kill, tkill, sigqueue, a timer) when it is
 *    the signal the handler re-raised (the core's, which the handler sent
 *    itself), or the handler's frames call a function that sends one
 *    (SENDS: it caught SIGALRM and raised SIGABRT), and its sender, where
 *    it names one, is a process id Linux can give. */
static bool siginfo_proven(const struct py_ctx *c, const struct platform_signal_frame *f,
			   const struct dump_signal *sig, bool no_siginfo, bool sends)
{
	if (no_siginfo || !f->siginfo_written)
		return false;
	if (sig->code > 0 && sig->code != 0x80)
		return f->trap_fault && (f->trap_signals[0] == sig->number || f->trap_signals[1] == sig->number) &&
		       (!f->has_fault_address || !sig->has_address || sig->address == f->fault_address);
	return (sig->number == c->d->signal.number || sends) &&
	       (!sig->has_sender || (sig->sender_pid > 0 && sig->sender_pid <= PID_LIMIT));
}

/* The signal of the frame at SP: its siginfo when the kernel provably
 * wrote it (siginfo_proven; NO_SIGINFO: the handler took none), else what
 * the saved state says of a hardware fault: one of the signals the kernel
 * sends for it (the core's when it is one of them: the handlers re-raise
 * what they caught), its address, no code; else nothing records it: the
 * core's number, no code.  false when the frame cannot be read. */
static bool read_frame_as(struct py_ctx *c, uint64_t sp, struct candidate *k, bool no_siginfo)
{
	const struct platform *p = c->d->platform;
	size_t n = platform_sigframe_size(p);
	uint8_t *buf = malloc(n ? n : 1);
	struct platform_signal_frame f;
	bool ok = buf && dump_read(c->d, sp, buf, n) == PC_OK && platform_parse_sigframe(p, buf, n, &f);
	uint8_t code[16];
	/* a divide error: the saved trap and the instruction at the pc (the
	 * core's signal SIGFPE, which the handler re-raised) */
	bool divide = ok && c->d->signal.number == 8 && p->sigframe.divide_error &&
		      dump_read(c->d, f.regs.pc, code, sizeof(code)) == PC_OK &&
		      p->sigframe.divide_error(buf + p->sigframe.mcontext, code, sizeof(code));
	free(buf);
	if (!ok)
		return false;
	if (divide) {
		f.trap_fault = true;
		f.trap_signals[0] = 8;
		f.trap_signals[1] = 0;
	}
	k->regs = f.regs;
	k->sig = (struct dump_signal){ .number = f.signo, .code = f.code, .has_code = true };
	dump_signal_decode(&k->sig, f.word);
	k->siginfo = siginfo_proven(c, &f, &k->sig, no_siginfo, k->look.sends);
	k->trap = false;
	if (k->siginfo)
		return true;
	int want = c->d->signal.number;
	k->trap = f.trap_fault && (f.trap_signals[1] == want ? want : f.trap_signals[0]) > 0;
	k->sig = (struct dump_signal){ .number = want };
	if (k->trap)
		k->sig = (struct dump_signal){
			.number = f.trap_signals[1] == want ? want : f.trap_signals[0],
			.has_address = f.has_fault_address, .address = f.fault_address,
		};
	/* an illegal instruction's or an arithmetic fault's address is the
	 * instruction's own, the pc the frame saved (the kernel's si_addr for
	 * them: x86-64's do_trap and do_error_trap, arm64's do_undefinstr and
	 * the FP exception handler, give the faulting pc) */
	if (k->trap && !k->sig.has_address && (k->sig.number == 4 || k->sig.number == 8)) {
		k->sig.has_address = true;
		k->sig.address = f.regs.pc;
	}
	/* FPE_INTDIV: what the kernel's #DE handler sends (x86-64 traps.c,
	 * exc_divide_error) */
	if (k->trap && divide && k->sig.number == 8) {
		k->sig.has_code = true;
		k->sig.code = 1;
	}
	return true;
}

/* The frame at SP, for the handler K's frames prove (faulthandler's
 * takes no siginfo). */
static bool read_frame(struct py_ctx *c, uint64_t sp, struct candidate *k)
{
	return read_frame_as(c, sp, k, k->look.proven_by_name && strcmp(k->look.proven, "faulthandler") == 0);
}

/* Lower is likelier the signal the handler re-raised; 9: not one. */
static int rank(const struct py_ctx *c, const struct candidate *k)
{
	const struct dump *d = c->d;
	bool same = k->sig.number == d->signal.number, receiver = k->tid == d->crashed_tid;
	bool fault = kernel_fault(k);
	/* a handler that returned (its re-raise waited, blocked, until then):
	 * the frame a fault's, or one siginfo or the receiving thread says is
	 * of the core's signal */
	if (k->returned)
		return !same ? 9 : fault ? 1 : k->siginfo ? 3 : receiver ? 7 : 9;
	if (same && fault)
		return receiver ? 0 : 1;
	if (same && k->siginfo)
		return receiver ? 2 : 3;
	if (fault)
		return 4;
	/* another signal, or one nothing records: only where this thread's
	 * handler sent the core's signal (raise() sends to its own thread) */
	if (receiver || k->look.sends)
		return k->siginfo ? 5 : 6;
	return 9;
}

/* Where the signal of K came from, as model_fault's origin says. */
static const char *origin_of(const struct candidate *k)
{
	if (kernel_fault(k))
		return "fault";
	if (!k->siginfo)
		return "unrecorded";
	return dump_signal_origin(k->sig.code);
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
		/* a quick test first: the saved pc and sp, which a frame of
		 * the thread's exact registers must hold (a test of one
		 * register that zeroed stack words pass, as r8 0 did, parsed
		 * thousands of frames a thread) */
		if (platform_le64(m + p->sigframe.mcontext_pc) != t->regs.pc ||
		    platform_le64(m + p->sigframe.mcontext_sp) != t->regs.sp)
			continue;
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

/* F's signal, and the registers at it, as candidate K's frame says. */
static void set_signal(struct model_fault *f, const struct candidate *k)
{
	f->signal = (struct model_signal){
		.number = k->sig.number, .has_code = k->sig.has_code, .code = k->sig.code,
		.has_address = k->sig.has_address, .address = k->sig.address,
		.has_sender = k->sig.has_sender, .sender_pid = k->sig.sender_pid,
		.sender_uid = k->sig.sender_uid,
	};
	f->origin = origin_of(k);
	f->siginfo = k->siginfo;
	f->number_assumed = !k->siginfo && !k->trap;
	f->pc = k->regs.pc;
	f->sp = k->regs.sp;
}

/* The fault candidate K's frame says, with its handler as K's look
 * proves or names it; NULL when out of memory. */
static struct model_fault *new_fault(struct py_ctx *c, const struct candidate *k)
{
	struct model_fault *f = arena_alloc(c->a, sizeof(*f));
	if (!f)
		return NULL;
	set_signal(f, k);
	f->tid = k->tid;
	f->sp_frame = k->look.tramp_sp;
	f->handler = k->look.proven;
	f->handler_proof = !f->handler ? NULL : k->look.proven_by_name ? "frame" : "module";
	f->handler_function = k->look.proven ? k->look.proven_function : k->look.adjacent;
	f->handler_module = k->look.adjacent_module;
	return f;
}

/* A running process (--pid) with native stacks asked for: a thread
 * inside the handler of a fault now (a crash reporter that reads its own
 * process before it dies: pycore's pytest plugin's handler, a
 * faulthandler-like one, installed without SA_NODEFER: the kernel blocks
 * the signal while it runs).  Nothing has been re-raised and no core says
 * which signal: only a fault the saved machine state proves is named
 * (read_frame_as with no core's signal: the trap's), never a frame's
 * siginfo alone. */
struct live_look {
	struct look look;            /* of the innermost handler: the one running */
	uint64_t outer_sp;           /* the outermost trampoline frame's sp */
	int n, nested;
};

/* Every handler on a live thread's stack runs still: the outermost
 * trampoline's frame is the first signal's (a handler that re-raised,
 * faulthandler's, caught by the next: its frame's saved trap state is the
 * thread's last fault's, whatever the signal). */
static int live_frame(const struct native_frame *nf, void *arg)
{
	struct live_look *l = arg;
	if (++l->n > MAX_HANDLER_FRAMES)
		return 1;
	if (py_sigreturn_at(l->look.c, nf->function, nf->pc, nf->sigreturn)) {
		l->outer_sp = nf->sp;
		if (!l->look.tramp_sp)
			l->look.tramp_sp = nf->sp;
		return ++l->nested >= MAX_NESTED;
	}
	if (!l->look.tramp_sp) {
		l->look.adjacent = arena_strdup(l->look.c->a, nf->function);
		l->look.adjacent_module = arena_strdup(
			l->look.c->a, nf->module_path ? nf->module_path : nf->module ? nf->module->path : NULL);
	}
	return 0;
}

static void find_live_fault(struct py_ctx *c, struct symbols *s)
{
	struct dump *d = c->d;
	for (size_t i = 0; i < d->nthreads && !py_out_of_time(c); i++) {
		struct live_look l = { .look = { .c = c } };
		struct candidate k = { .tid = d->threads[i].tid, .look = { .c = c } };
		/* only a thread that blocks a fault's signal, as the kernel makes
		 * it while its handler runs, is unwound (every thread's unwinding
		 * made a 100-thread read eight times as slow) */
		if (!dump_thread_blocks_fault(d, k.tid) || symbols_native_names(s, k.tid, live_frame, &l) <= 0 ||
		    !l.outer_sp)
			continue;
		k.look = l.look;
		if (!read_frame_as(c, l.outer_sp, &k, false) || (!k.trap && !(k.siginfo && kernel_fault(&k))))
			continue;
		k.look.tramp_sp = l.outer_sp;
		struct model_fault *f = new_fault(c, &k);
		if (!f)
			return;
		f->received_tid = -1;
		f->handling = true;
		c->r->fault = f;
		return;
	}
}

void py_find_fault(struct py_ctx *c, struct symbols *s)
{
	struct dump *d = c->d;
	if (!d->has_signal && c->opt->native && d->format && strcmp(d->format, "process") == 0 && d->platform &&
	    d->platform->sigframe.parse_mcontext) {
		find_live_fault(c, s);
		return;
	}
	/* a signal the process sent itself, whichever (SIGABRT too: abort()
	 * sends it so, and so do handlers of a SIGABRT sent from outside) */
	if (!d->has_signal || !d->signal.has_sender || d->pid < 0 || d->signal.sender_pid != d->pid ||
	    !d->platform || !d->platform->sigframe.parse_mcontext)
		return;
	struct candidate best = { 0 }, k;
	int best_rank = 9;
	for (size_t i = 0; i < d->nthreads && !py_out_of_time(c); i++) {
		/* tkill (raise(), abort(), pthread_kill()) sends to the thread
		 * its sender names: raise()'s own, whose handler re-raised; only
		 * kill() and sigqueue() let the kernel pick any thread.  Every
		 * other thread's unwinding would cost each abort's analysis for
		 * nothing (measured: 41 threads, 0.03 s become 1.2 s). */
		if (d->signal.has_code && d->signal.code == -6 && d->threads[i].tid != d->crashed_tid &&
		    d->crashed_tid >= 0)
			continue;
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
	struct model_fault *f = new_fault(c, &best);
	if (!f)
		return;
	f->handler_returned = best.returned;
	/* no frame left of the handler (it returned, or it tail-called kill()):
	 * the program whose handler re-raises so, when the process is one */
	if (!f->handler && (f->handler = program_of(d->executable)) != NULL)
		f->handler_proof = "program";
	f->received_tid = d->crashed_tid;
	c->r->fault = f;
}

/* Linux's numbers of faulthandler's signals in its table's order, and
 * their names as the table's entries point at them */
static const int32_t fh_order[] = { 7, 4, 8, 6, 11 };
static const char *const fh_names[] = { "Bus error", "Illegal instruction", "Floating point exception",
					"Aborted", "Segmentation fault" };
/* (3.13 on: "Floating-point exception") */
static bool fh_name_is(size_t i, const char *text)
{
	return strcmp(text, fh_names[i]) == 0 || (i == 2 && strcmp(text, "Floating-point exception") == 0);
}
#define FH_N (sizeof(fh_order) / sizeof(fh_order[0]))

/* Whether the table at ADDR, ELEM bytes an entry, is faulthandler's, and
 * its entry for SIGNO disabled while another is enabled (see above). */
static bool fh_table(struct py_ctx *c, uint64_t addr, uint64_t elem, int signo, bool *ran)
{
	bool disabled = false, enabled = false;
	for (size_t i = 0; i < FH_N; i++) {
		int32_t sig, on;
		uint64_t name;
		char text[26] = { 0 };
		if (py_rd_i32(c, addr + i * elem, &sig) != PC_OK || sig != fh_order[i] ||
		    py_rd_i32(c, addr + i * elem + 4, &on) != PC_OK || (on != 0 && on != 1) ||
		    py_rd_ptr(c, addr + i * elem + 8, &name) != PC_OK ||
		    dump_read(c->d, name, text, sizeof(text) - 1) != PC_OK || !fh_name_is(i, text))
			return false;
		if (sig == signo)
			disabled = on == 0;
		else
			enabled |= on == 1;
	}
	*ran = disabled && enabled;
	return true;
}

/* The most of a module's .data searched for the table when no symbol
 * names it: CPython's own is about 300 KiB (Debian's 3.11: 0x48c30) */
#define FH_SCAN_MAX (8u << 20)

/* The table in module M's .data, found by its contents alone (a stripped
 * interpreter without its debug file: faulthandler_handlers is a static
 * array, in no dynamic symbol table): the first word of an entry is 7
 * (SIGBUS), an entry ELEM bytes long (8-byte aligned, 16 to 1024: the
 * struct sigaction inside is the C library's), each entry's signal as
 * fh_order says and its name pointing at that signal's name.  0: none. */
static uint64_t fh_scan(struct py_ctx *c, struct symbols *s, struct dump_module *m, uint64_t *elem_out)
{
	const void *file;
	uint64_t addr = 0;
	long size = symbols_section_at(s, m, ".data", &file, &addr);
	if (size <= 0 || !addr || (unsigned long)size > FH_SCAN_MAX)
		return 0;
	uint8_t *buf = malloc((size_t)size);
	if (!buf || dump_read(c->d, addr, buf, (size_t)size) != PC_OK) {
		free(buf);
		return 0;
	}
	uint64_t found = 0;
	for (size_t off = 0; !found && off + 16 <= (size_t)size; off += 8) {
		if (platform_le32(buf + off) != 7 || platform_le32(buf + off + 4) > 1)
			continue;
		for (uint64_t elem = 16; !found && elem <= 1024 && off + 4 * elem + 16 <= (size_t)size; elem += 8) {
			bool ok = true;
			for (size_t i = 1; ok && i < FH_N; i++)
				ok = (int32_t)platform_le32(buf + off + i * elem) == fh_order[i] &&
				     platform_le32(buf + off + i * elem + 4) <= 1;
			bool ran;
			if (ok && fh_table(c, addr + off, elem, 0, &ran)) {
				found = addr + off;
				*elem_out = elem;
			}
		}
	}
	free(buf);
	return found;
}

/* faulthandler_handlers of module M: whether its entry for SIGNO was
 * disabled by the fatal handler (see above); *HOW says how the table was
 * found (by its symbol, or by a scan of .data). */
static bool faulthandler_ran(struct py_ctx *c, struct symbols *s, struct dump_module *m, int signo,
			     const char **how)
{
	struct symbol_want want[] = { { "faulthandler_handlers", 0, 0 },
				      { "faulthandler_handlers.lto_priv.0", 0, 0 } };
	if (!m)
		return false;
	uint64_t addr = 0, elem = 0;
	bool ran = false;
	if (symbols_lookup(s, m, want, 2) > 0) {
		struct symbol_want *w = want[0].addr ? &want[0] : &want[1];
		if (w->size == 0 || w->size % FH_N != 0 || w->size / FH_N < 16 || w->size / FH_N > 1024)
			return false;
		addr = w->addr;
		elem = w->size / FH_N;
		*how = "faulthandler-table-symbol";
	} else if ((addr = fh_scan(c, s, m, &elem)) != 0) {
		*how = "faulthandler-table-scan";
	}
	return addr && fh_table(c, addr, elem, signo, &ran) && ran;
}

void py_fault_handler(struct py_ctx *c, struct symbols *s, struct dump_module *interp_module)
{
	struct model_fault *f = c->r->fault;
	if (!f || f->handler)
		return;
	const char *how = NULL;
	/* the signal it caught is the one it re-raised, the core's (and the
	 * frame's, unless the frame's siginfo is stack garbage: then only the
	 * core's says which entry it disabled) */
	if (faulthandler_ran(c, s, interp_module, f->signal.number, &how) ||
	    (f->siginfo && c->d->signal.number != f->signal.number &&
	     faulthandler_ran(c, s, interp_module, c->d->signal.number, &how))) {
		f->handler = "faulthandler";
		f->handler_proof = how;
		/* its handler took no siginfo (read_frame_as): what the frame's
		 * slot holds is not the signal's */
		struct candidate k = { .look = { .c = c } };
		if (f->siginfo && !f->handler_returned && read_frame_as(c, f->sp_frame, &k, true))
			set_signal(f, &k);
	}
}

int64_t py_crash_tid(const struct py_ctx *c)
{
	return c->r->fault ? c->r->fault->tid : c->d->crashed_tid;
}
