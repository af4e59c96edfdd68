/* The fault named, with its evidence.
 *
 * The signal a report is about is the core's, or, where a handler caught
 * a signal and re-raised it, the one it caught (model_fault); its number,
 * code, address and origin are what the model holds at the end of the
 * walk.  Each kind is named only when the dump proves it:
 *
 *   null-dereference   SIGSEGV, address not mapped (SEGV_MAPERR, or a
 *                      page fault the saved state records), below 64 KiB
 *                      (vm.mmap_min_addr is 4096 by default, mm/Kconfig's
 *                      DEFAULT_MMAP_MIN_ADDR; 65536 on some distributions:
 *                      nothing can be mapped there) and in no mapping;
 *                      below 4096 when the dump records no mappings
 *   stack-overflow     SIGSEGV just under a thread's stack: in a PROT_NONE
 *                      anonymous mapping right under the writable
 *                      anonymous mapping the thread's stack pointer is in
 *                      (glibc's guard for its threads, nptl/allocatestack.c),
 *                      or unmapped, less than the kernel's stack_guard_gap
 *                      (mm/mmap.c: 256 pages, 1 MiB of 4 KiB pages) under
 *                      such a mapping (the main thread's stack, which grows
 *                      until RLIMIT_STACK or that gap stops it); the
 *                      recursion is the frames that repeat most on that
 *                      thread's walked stack
 *   unmapped-near      SIGSEGV at an unmapped address within 1 MiB of a
 *                      mapping
 *   write-to-readonly  SIGSEGV (SEGV_ACCERR, or a page fault the saved
 *                      state records) in a readable, not writable mapping,
 *                      where the access was not an instruction fetch (the
 *                      mapping is executable, or the pc is elsewhere): a
 *                      read there cannot fault, so it was a write
 *   sigbus-past-eof    SIGBUS (BUS_ADRERR) in a file's mapping; past its
 *                      end when the file, measured on this machine, ends
 *                      before the offset
 *   divide-by-zero     SIGFPE, FPE_INTDIV
 *   illegal-instruction-anonymous  SIGILL at a pc in an executable
 *                      mapping of no file (a JIT's page, a corrupted
 *                      function pointer)
 *   abort              SIGABRT the process sent itself, or one whose
 *                      origin nothing records with abort() on the stack
 *   signal-sent        sent by another process (siginfo's sender)
 *   unrecorded         a handler's signal whose origin nothing records
 *
 * The mappings are the dump's (dump_vmas: an ELF core's program headers
 * with NT_FILE's names); their permissions are the kernel's VM_READ,
 * VM_WRITE, VM_EXEC at the time of the dump. */
#include "analysis/fault_kind.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NULL_BOUND          0x10000u     /* the highest vm.mmap_min_addr distributions set */
#define NULL_BOUND_UNMAPPED 0x1000u      /* the kernel's default, when no mappings are known */
#define STACK_GUARD_GAP     (1u << 20)   /* mm/mmap.c: stack_guard_gap, 256 pages */
#define STACK_REACH         (1u << 20)   /* how far under its stack pointer a thread's fault may be */
#define NEAR_MAX            (1u << 20)   /* "next to" a mapping */
#define MAX_ABORT_FRAMES    512
#define MAX_KEYS            256          /* distinct frames counted for the recursion */

#define SIGILL_  4
#define SIGABRT_ 6
#define SIGBUS_  7
#define SIGFPE_  8
#define SIGSEGV_ 11
#define SEGV_MAPERR_ 1
#define SEGV_ACCERR_ 2
#define BUS_ADRERR_  2
#define FPE_INTDIV_  1

/* The signal as the model holds it at the end of the walk. */
struct sig {
	int number;
	bool has_code;
	int code;
	bool has_address;
	uint64_t address;
	bool has_sender;
	int64_t sender_pid, sender_uid;
	const char *origin;          /* model_fault's origins */
	bool siginfo;                /* the kernel wrote it */
	int64_t tid;
	bool has_regs;
	uint64_t pc, sp;
};

struct ctx {
	struct dump *d;
	struct symbols *s;
	const char *sysroot;
	struct model_report *r;
	struct sig g;
	struct model_fault_kind *k;
	bool vmas_known;
};

static const char *origin_of_code(bool has_code, int code)
{
	if (!has_code)
		return "unrecorded";
	return dump_signal_origin(code);
}

static bool effective(struct ctx *c)
{
	const struct model_report *r = c->r;
	struct sig *g = &c->g;
	/* (a running process's handler that runs now: its fault, without a
	 * core's signal) */
	if (!r->has_signal && !(r->fault && r->fault->handling))
		return false;
	if (r->fault) {
		const struct model_fault *f = r->fault;
		*g = (struct sig){
			.number = f->signal.number, .has_code = f->signal.has_code, .code = f->signal.code,
			.has_address = f->signal.has_address, .address = f->signal.address,
			.has_sender = f->signal.has_sender, .sender_pid = f->signal.sender_pid,
			.sender_uid = f->signal.sender_uid, .origin = f->origin, .siginfo = f->siginfo,
			.tid = f->tid, .has_regs = f->sp != 0, .pc = f->pc, .sp = f->sp,
		};
		return g->origin != NULL;
	}
	/* no handler: the kernel's own siginfo (NT_SIGINFO), always written */
	*g = (struct sig){
		.number = r->signal_number, .has_code = r->signal_has_code, .code = r->signal_code,
		.has_address = r->signal_has_address, .address = r->signal_address,
		.has_sender = r->signal_has_sender, .sender_pid = r->sender_pid, .sender_uid = r->sender_uid,
		.origin = origin_of_code(r->signal_has_code, r->signal_code), .siginfo = r->signal_has_code,
		.tid = r->crashed_tid,
	};
	for (size_t i = 0; i < c->d->nthreads; i++) {
		if (c->d->threads[i].tid == g->tid && g->tid >= 0) {
			g->has_regs = true;
			g->pc = c->d->threads[i].regs.pc;
			g->sp = c->d->threads[i].regs.sp;
		}
	}
	return true;
}

static const char *perms(struct arena *a, const struct dump_vma *v)
{
	return arena_printf(a, "%c%c%c", v->readable ? 'r' : '-', v->writable ? 'w' : '-', v->executable ? 'x' : '-');
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path;
}

static struct model_fault_kind *named(struct ctx *c, const char *kind)
{
	struct model_fault_kind *k = arena_alloc(c->r->arena, sizeof(*k));
	if (!k)
		return NULL;
	k->kind = kind;
	k->evidence = c->g.siginfo ? "siginfo" : "saved-state";
	k->thread = c->g.tid;
	k->recursion_count = -1;
	k->sender_pid = -1;
	k->file_size = -1;
	if (c->g.has_address) {
		k->has_address = true;
		k->address = c->g.address;
	}
	c->k = k;
	return k;
}

static void set_mapping(struct ctx *c, const struct dump_vma *v, const char *where)
{
	c->k->has_mapping = true;
	c->k->mapping_start = v->start;
	c->k->mapping_end = v->end;
	c->k->mapping_permissions = perms(c->r->arena, v);
	c->k->mapping_file = arena_strdup(c->r->arena, v->file);
	c->k->where = where;
}

/* "(SEGV_MAPERR)", or what stands for the code the saved state has none of */
static const char *code_text(struct ctx *c)
{
	const char *n = c->g.has_code ? report_signal_code_name(c->g.number, c->g.code) : NULL;
	if (n)
		return arena_printf(c->r->arena, "(%s)", n);
	if (c->g.has_code)
		return arena_printf(c->r->arena, "(si_code %d)", c->g.code);
	return c->g.number == SIGSEGV_ || c->g.number == SIGBUS_ ? "(no siginfo: the saved state's page fault)"
								 : "(no siginfo: the saved state's trap)";
}

static const char *mapping_text(struct ctx *c, const struct dump_vma *v)
{
	return arena_printf(c->r->arena, "%s %s mapping 0x%llx-0x%llx%s%s", v->file ? "the" : "an anonymous",
			    perms(c->r->arena, v), (unsigned long long)v->start, (unsigned long long)v->end,
			    v->file ? " of " : "", v->file ? v->file : "");
}

/* ------------------------------------------------------------------------
 * The recursion that filled a stack: the frames that repeat most
 * ------------------------------------------------------------------------ */

static struct model_thread *thread_of(const struct model_report *r, int64_t tid)
{
	for (size_t i = 0; tid >= 0 && i < r->interps.n; i++) {
		const struct model_interp *mi = r->interps.items[i];
		for (size_t k = 0; k < mi->threads.n; k++)
			if (((struct model_thread *)mi->threads.items[k])->tid == tid)
				return mi->threads.items[k];
	}
	for (size_t i = 0; tid >= 0 && i < r->native_threads.n; i++)
		if (((struct model_thread *)r->native_threads.items[i])->tid == tid)
			return r->native_threads.items[i];
	return NULL;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The (file, function) of KIND that T's frames from its fault on hold
 * most often, when one is there twice or more. */
static bool most_repeated(const struct model_thread *t, enum frame_kind kind, const struct model_frame **key,
			  int64_t *count)
{
	const struct model_frame *keys[MAX_KEYS];
	int64_t counts[MAX_KEYS];
	size_t n = 0, last = 0;
	*key = NULL;
	*count = 0;
	for (size_t i = t->fault_frame ? t->fault_frame - 1 : 0; i < t->frames.n; i++) {
		const struct model_frame *f = t->frames.items[i];
		if (f->kind != kind || !f->function)
			continue;
		/* a recursion's frames come in runs: the last key first */
		size_t j = n;
		if (n && same(keys[last]->function, f->function) && same(keys[last]->file, f->file))
			j = last;
		for (size_t q = 0; j == n && q < n; q++)
			if (same(keys[q]->function, f->function) && same(keys[q]->file, f->file))
				j = q;
		if (j == n) {
			if (n == MAX_KEYS)
				continue;
			keys[n] = f;
			counts[n++] = 0;
		}
		counts[j]++;
		last = j;
	}
	for (size_t q = 0; q < n; q++) {
		if (counts[q] > *count) {
			*count = counts[q];
			*key = keys[q];
		}
	}
	return *count >= 2;
}

static void recursion(struct ctx *c, int64_t tid)
{
	const struct model_thread *t = thread_of(c->r, tid);
	const struct model_frame *key;
	int64_t count;
	if (!t)
		return;
	if (most_repeated(t, FRAME_PYTHON, &key, &count))
		c->k->recursion_kind = "python";
	else if (most_repeated(t, FRAME_NATIVE, &key, &count))
		c->k->recursion_kind = "native";
	else
		return;
	c->k->recursion_function = key->function;
	c->k->recursion_file = key->file;
	c->k->recursion_count = count;
	/* a stack cut short (a failed read; the unwinder's cap, which leaves
	 * the stack ending inside the recursion, not in its callers) holds
	 * only some of them */
	const struct model_frame *outer = NULL;
	for (size_t i = t->frames.n; i > 0 && !outer; i--)
		if (((const struct model_frame *)t->frames.items[i - 1])->kind == key->kind)
			outer = t->frames.items[i - 1];
	c->k->recursion_at_least = t->error != NULL ||
				   (outer && same(outer->function, key->function) && same(outer->file, key->file));
}

/* "; 1245 calls of so.py:f" (at least, of a stack read in part), or "" */
static const char *recursion_text(struct ctx *c)
{
	const struct model_fault_kind *k = c->k;
	if (!k->recursion_kind)
		return "";
	return arena_printf(c->r->arena, "; %s%lld calls of %s%s%s", k->recursion_at_least ? "at least " : "",
			    (long long)k->recursion_count, k->recursion_file ? base_name(k->recursion_file) : "",
			    k->recursion_file ? ":" : "", k->recursion_function);
}

/* ------------------------------------------------------------------------
 * SIGSEGV
 * ------------------------------------------------------------------------ */

/* The faulting thread, when the mapping STACK is its stack: its stack
 * pointer between LO and the mapping's end; -1 when it is not (a wild
 * access under another thread's stack is no overflow of this one's). */
static int64_t stack_owner(struct ctx *c, const struct dump_vma *stack, uint64_t lo)
{
	if (c->g.has_regs && c->g.sp >= lo && c->g.sp < stack->end)
		return c->g.tid;
	return -1;
}

static bool stack_overflow(struct ctx *c)
{
	uint64_t a = c->g.address;
	const struct dump_vma *above, *at = dump_vma_near(c->d, a, NULL, &above);
	const char *where;
	if (!above || !above->writable || above->file)
		return false;
	if (at) {
		/* glibc's guard: PROT_NONE, anonymous, right under the stack */
		if (at->readable || at->writable || at->executable || at->file || at->end != above->start)
			return false;
		where = "guard-page";
	} else {
		if (above->start - a > STACK_GUARD_GAP)
			return false;
		where = "guard-gap";
	}
	uint64_t lo = a > STACK_REACH ? a - STACK_REACH : 0;
	int64_t owner = stack_owner(c, above, lo);
	if (owner < 0 || (c->g.sp > a && c->g.sp - a > STACK_REACH))
		return false;
	if (!named(c, "stack-overflow"))
		return true;
	set_mapping(c, above, where);
	c->k->thread = owner;
	c->k->has_offset = true;
	c->k->offset = above->start - a;
	recursion(c, owner);
	const char *rec = recursion_text(c);
	c->k->text = arena_printf(c->r->arena, "stack overflow: thread %lld's stack guard %s at 0x%llx, 0x%llx bytes "
				  "under its stack 0x%llx-0x%llx %s%s", (long long)owner,
				  at ? "page" : "gap", (unsigned long long)a, (unsigned long long)c->k->offset,
				  (unsigned long long)above->start, (unsigned long long)above->end, code_text(c), rec);
	return true;
}

/* How far above its stack's bottom a thread's stack pointer may be when
 * the kernel could not write a signal frame there: the frame, its
 * saved FPU state (an AVX-512 XSAVE area is under 3 KiB, AMX's 11 KiB)
 * and the red zone */
#define SIGFRAME_REACH (16u << 10)

/* SIGSEGV with SI_KERNEL: what the kernel sends when it cannot write a
 * signal's frame on the thread's stack (arch/x86/kernel/signal.c and
 * arm64's: force_sigsegv), a handled fault's on an exhausted stack that
 * has no alternate one; proven a stack overflow when the thread's stack
 * pointer is that close to the bottom of its stack (a writable anonymous
 * mapping), above it or already in the guard page or gap under it. */
static bool undeliverable(struct ctx *c)
{
	if (!c->g.has_regs || !c->vmas_known)
		return false;
	uint64_t sp = c->g.sp;
	const struct dump_vma *below, *above, *at = dump_vma_near(c->d, sp, &below, &above);
	const struct dump_vma *stack = NULL;
	const char *where = NULL;
	if (at && at->writable && !at->file) {
		stack = at;
		bool guard = below && below->end == at->start && !below->readable && !below->writable &&
			     !below->executable && !below->file;
		if (!guard && below && at->start - below->end < STACK_GUARD_GAP / 4)
			return false;
		where = guard ? "guard-page" : "guard-gap";
	} else if (at && !at->readable && !at->writable && !at->executable && !at->file && above &&
		   above->start == at->end && above->writable && !above->file) {
		stack = above;
		where = "guard-page";
	} else if (!at && above && above->writable && !above->file) {
		stack = above;
		where = "guard-gap";
	}
	if (!stack || (sp >= stack->start ? sp - stack->start : stack->start - sp) > SIGFRAME_REACH)
		return false;
	if (!named(c, "stack-overflow"))
		return true;
	set_mapping(c, stack, where);
	c->k->has_offset = true;
	c->k->offset = sp >= stack->start ? sp - stack->start : stack->start - sp;
	recursion(c, c->g.tid);
	c->k->text = arena_printf(c->r->arena, "stack overflow: thread %lld's stack pointer 0x%llx is 0x%llx bytes %s "
				  "the bottom of its stack 0x%llx-0x%llx, too close for the kernel to deliver the signal "
				  "(SI_KERNEL)%s", (long long)c->g.tid, (unsigned long long)sp,
				  (unsigned long long)c->k->offset, sp >= stack->start ? "above" : "below",
				  (unsigned long long)stack->start, (unsigned long long)stack->end, recursion_text(c));
	return true;
}

static bool segv(struct ctx *c)
{
	const struct sig *g = &c->g;
	if (!g->has_address)
		return false;
	uint64_t a = g->address;
	bool maperr = !g->has_code || g->code == SEGV_MAPERR_;
	bool accerr = !g->has_code || g->code == SEGV_ACCERR_;
	const struct dump_vma *below = NULL, *above = NULL, *at = NULL;
	if (c->vmas_known)
		at = dump_vma_near(c->d, a, &below, &above);
	if ((maperr || accerr) && c->vmas_known && stack_overflow(c))
		return true;
	if (maperr && !at && a < (c->vmas_known ? NULL_BOUND : NULL_BOUND_UNMAPPED)) {
		if (!named(c, "null-dereference"))
			return true;
		c->k->has_offset = true;
		c->k->offset = a;
		c->k->text = a ? arena_printf(c->r->arena, "NULL pointer + 0x%llx %s", (unsigned long long)a, code_text(c))
			       : arena_printf(c->r->arena, "NULL pointer %s", code_text(c));
		return true;
	}
	if (accerr && at && at->readable && !at->writable && (at->executable || (g->has_regs && g->pc != a))) {
		if (!named(c, "write-to-readonly"))
			return true;
		set_mapping(c, at, "in");
		c->k->text = arena_printf(c->r->arena, "write to read-only memory at 0x%llx, in %s %s",
					  (unsigned long long)a, mapping_text(c, at), code_text(c));
		return true;
	}
	if (maperr && c->vmas_known && !at) {
		uint64_t dn = below ? a - below->end + 1 : UINT64_MAX, up = above ? above->start - a : UINT64_MAX;
		const struct dump_vma *near = dn <= up ? below : above;
		uint64_t dist = dn <= up ? dn - 1 : up;
		if (!near || dist >= NEAR_MAX)
			return false;
		if (!named(c, "unmapped-near"))
			return true;
		set_mapping(c, near, near == below ? "above" : "below");
		c->k->has_offset = true;
		c->k->offset = dist;
		c->k->text = arena_printf(c->r->arena, "unmapped address 0x%llx, 0x%llx bytes %s %s %s",
					  (unsigned long long)a, (unsigned long long)dist,
					  near == below ? "past the end of" : "below", mapping_text(c, near), code_text(c));
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * The other signals
 * ------------------------------------------------------------------------ */

static bool sigbus(struct ctx *c)
{
	const struct sig *g = &c->g;
	const struct dump_vma *at = c->vmas_known && g->has_address ? dump_vma_near(c->d, g->address, NULL, NULL) : NULL;
	if (!at || !at->file || at->file[0] != '/' || (g->has_code && g->code != BUS_ADRERR_))
		return false;
	uint64_t off = at->file_offset + (g->address - at->start);
	int64_t size = -1;
	struct stat st;
	char *path = NULL;
	/* a dump names any path: a size is said only of a file its process's
	 * user could read (its owner, or anyone), never one only pycore's
	 * user can see */
	if (asprintf(&path, "%s%s", c->sysroot ? c->sysroot : "", at->file) > 0 && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode) &&
	    ((st.st_mode & S_IROTH) || (c->r->uid >= 0 && st.st_uid == (uid_t)c->r->uid && (st.st_mode & S_IRUSR))))
		size = st.st_size;
	free(path);
	bool past = size >= 0 && off >= (uint64_t)size;
	/* without a code, only the file's end proves it was no other SIGBUS */
	if (!g->has_code && !past)
		return false;
	if (!named(c, "sigbus-past-eof"))
		return true;
	set_mapping(c, at, "in");
	c->k->has_offset = true;
	c->k->offset = off;
	c->k->file_size = past ? size : -1;
	c->k->text = past ? arena_printf(c->r->arena, "SIGBUS past the end of %s: offset 0x%llx, the file is %lld bytes "
					 "on this machine %s", at->file, (unsigned long long)off, (long long)size,
					 code_text(c))
			  : arena_printf(c->r->arena, "SIGBUS in a mapping of %s at offset 0x%llx %s", at->file,
					 (unsigned long long)off, code_text(c));
	return true;
}

/* Memory of no file on a disk: anonymous, shared anonymous (the kernel
 * names it "/dev/zero (deleted)": mm/shmem.c, shmem_zero_setup) or a
 * memfd's ("/memfd:NAME (deleted)", as JITs map code twice). */
static bool of_no_file(const struct dump_vma *v)
{
	return !v->file || strcmp(v->file, "/dev/zero (deleted)") == 0 || strncmp(v->file, "/memfd:", 7) == 0;
}

static bool sigill(struct ctx *c)
{
	const struct sig *g = &c->g;
	if (!g->has_address && !g->has_regs)
		return false;
	uint64_t a = g->has_address ? g->address : g->pc;
	const struct dump_vma *at = c->vmas_known ? dump_vma_near(c->d, a, NULL, NULL) : NULL;
	if (!at || !at->executable || !of_no_file(at))
		return false;
	if (!named(c, "illegal-instruction-anonymous"))
		return true;
	c->k->has_address = true;
	c->k->address = a;
	set_mapping(c, at, "in");
	c->k->text = arena_printf(c->r->arena, "illegal instruction at 0x%llx in %s, of no file (JIT code or a corrupted "
				  "pointer) %s", (unsigned long long)a, mapping_text(c, at), code_text(c));
	return true;
}

static int abort_frame(const struct native_frame *nf, void *arg)
{
	int *n = arg;
	const char *fn = nf->function;
	if (fn && (strcmp(fn, "abort") == 0 || strcmp(fn, "__GI_abort") == 0 || strcmp(fn, "__libc_abort") == 0)) {
		*n = -1;
		return 1;
	}
	return ++*n >= MAX_ABORT_FRAMES;
}

/* A signal the process sent itself, HOW proving it: SIGABRT is its
 * abort; another is no kind named here. */
static void self_sent(struct ctx *c, const char *how)
{
	if (c->g.number != SIGABRT_ || !named(c, "abort"))
		return;
	const char *code = c->g.has_code ? report_signal_code_name(c->g.number, c->g.code) : NULL;
	const struct model_abort *ab = c->r->abort;
	c->k->evidence = how;
	c->k->has_address = false;
	/* its words, where the C library, the C++ runtime or CPython kept them
	 * (python/walk/abort.c) */
	c->k->message = ab ? (ab->message ? ab->message : ab->exception_type) : NULL;
	c->k->text = strcmp(how, "stack") == 0 ? "abort: SIGABRT raised by the process itself (abort() on its stack)"
		     : arena_printf(c->r->arena, "abort: SIGABRT raised by the process itself (%s)", code ? code : "sent");
	if (c->k->message) {
		/* at most 160 bytes of them, cut before a UTF-8 continuation */
		size_t n = strlen(c->k->message), max = 160;
		while (n > max && max > 0 && ((unsigned char)c->k->message[max] & 0xc0) == 0x80)
			max--;
		c->k->text = arena_printf(c->r->arena, "%s: \"%.*s%s\"", c->k->text, (int)(n > max ? max : n),
					  c->k->message, n > max ? "..." : "");
	}
}

static void classify(struct ctx *c)
{
	const struct sig *g = &c->g;
	struct model_report *r = c->r;
	const char *name = report_signal_name(g->number);
	if (g->has_sender) {
		if (g->sender_pid == r->pid && r->pid >= 0) {
			self_sent(c, "siginfo");
			return;
		}
		if (!named(c, "signal-sent"))
			return;
		c->k->has_address = false;
		c->k->sender_pid = g->sender_pid;
		c->k->text = arena_printf(r->arena, "%s sent by another process: pid %lld (uid %lld) with %s",
					  name ? name : "a signal", (long long)g->sender_pid, (long long)g->sender_uid,
					  g->origin);
		return;
	}
	if (strcmp(g->origin, "unrecorded") == 0) {
		int n = 0;
		if (g->number == SIGABRT_ && c->s && g->tid >= 0 &&
		    symbols_native_names(c->s, g->tid, abort_frame, &n) > 0 && n < 0) {
			self_sent(c, "stack");
			return;
		}
		if (!named(c, "unrecorded"))
			return;
		c->k->evidence = "none";
		c->k->has_address = false;
		c->k->text = r->fault ? arena_printf(r->arena, "%s of unrecorded origin: its handler took no siginfo and "
						     "the saved state names no fault", name ? name : "a signal")
				      : arena_printf(r->arena, "%s of unrecorded origin: the dump holds no siginfo",
						     name ? name : "a signal");
		return;
	}
	if (strcmp(g->origin, "kernel") == 0 && g->number == SIGSEGV_) {
		undeliverable(c);
		return;
	}
	if (strcmp(g->origin, "fault") != 0)
		return;
	switch (g->number) {
	case SIGSEGV_:
		segv(c);
		break;
	case SIGBUS_:
		sigbus(c);
		break;
	case SIGFPE_:
		if (!g->has_code || g->code != FPE_INTDIV_ || !named(c, "divide-by-zero"))
			break;
		c->k->text = g->has_address ? arena_printf(r->arena, "integer divide by zero at 0x%llx (FPE_INTDIV)",
							   (unsigned long long)g->address)
					    : "integer divide by zero (FPE_INTDIV)";
		break;
	case SIGILL_:
		sigill(c);
		break;
	default:
		break;
	}
}

void fault_kind_classify(struct dump *d, struct symbols *s, const char *sysroot, struct model_report *r)
{
	struct ctx c = { .d = d, .s = s, .sysroot = sysroot, .r = r };
	size_t nvmas;
	if (!effective(&c))
		return;
	dump_vmas(d, &nvmas);
	c.vmas_known = nvmas > 0;
	classify(&c);
	if (c.k && c.k->text)
		r->fault_kind = c.k;
}
