/* Names of Linux signals and of their si_code values, and the one line
 * that says what a signal was.  The numbering is the one every platform
 * pycore reads shares (x86's arch/x86/include/uapi/asm/signal.h and the
 * include/uapi/asm-generic/signal.h that arm64 uses agree on 1-31). */
#include "report/report.h"

#include <stdio.h>
#include <string.h>

const char *report_signal_name(int n)
{
	static const char *const names[] = {
		NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
		"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
		"SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN",
		"SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
		"SIGIO", "SIGPWR", "SIGSYS",
	};
	if (n > 0 && (size_t)n < sizeof(names) / sizeof(names[0]))
		return names[n];
	return NULL;
}

struct code_name {
	int code;
	const char *name, *meaning;
};

/* The values and their meanings as the Linux kernel's
 * include/uapi/asm-generic/siginfo.h defines and comments them. */
static const struct code_name any_signal[] = {
	{ 0, "SI_USER", "kill" },
	{ 0x80, "SI_KERNEL", "sent by the kernel" },
	{ -1, "SI_QUEUE", "sigqueue" },
	{ -2, "SI_TIMER", "timer expired" },
	{ -3, "SI_MESGQ", "message queue state changed" },
	{ -4, "SI_ASYNCIO", "AIO completed" },
	{ -5, "SI_SIGIO", "queued SIGIO" },
	{ -6, "SI_TKILL", "tkill" },
	{ -7, "SI_DETHREAD", "exec of another thread" },
	{ -60, "SI_ASYNCNL", "getaddrinfo_a completed" },
};
static const struct code_name sigill[] = {
	{ 1, "ILL_ILLOPC", "illegal opcode" }, { 2, "ILL_ILLOPN", "illegal operand" },
	{ 3, "ILL_ILLADR", "illegal addressing mode" }, { 4, "ILL_ILLTRP", "illegal trap" },
	{ 5, "ILL_PRVOPC", "privileged opcode" }, { 6, "ILL_PRVREG", "privileged register" },
	{ 7, "ILL_COPROC", "coprocessor error" }, { 8, "ILL_BADSTK", "internal stack error" },
	{ 9, "ILL_BADIADDR", "unimplemented instruction address" },
};
static const struct code_name sigfpe[] = {
	{ 1, "FPE_INTDIV", "integer divide by zero" }, { 2, "FPE_INTOVF", "integer overflow" },
	{ 3, "FPE_FLTDIV", "floating point divide by zero" }, { 4, "FPE_FLTOVF", "floating point overflow" },
	{ 5, "FPE_FLTUND", "floating point underflow" }, { 6, "FPE_FLTRES", "floating point inexact result" },
	{ 7, "FPE_FLTINV", "floating point invalid operation" }, { 8, "FPE_FLTSUB", "subscript out of range" },
	{ 14, "FPE_FLTUNK", "undiagnosed floating-point exception" }, { 15, "FPE_CONDTRAP", "trap on condition" },
};
static const struct code_name sigsegv[] = {
	{ 1, "SEGV_MAPERR", "address not mapped" }, { 2, "SEGV_ACCERR", "invalid permissions for mapped object" },
	{ 3, "SEGV_BNDERR", "failed address bound checks" }, { 4, "SEGV_PKUERR", "failed protection key checks" },
	{ 5, "SEGV_ACCADI", "ADI not enabled for mapped object" }, { 6, "SEGV_ADIDERR", "disrupting MCD error" },
	{ 7, "SEGV_ADIPERR", "precise MCD exception" }, { 8, "SEGV_MTEAERR", "asynchronous ARM MTE error" },
	{ 9, "SEGV_MTESERR", "synchronous ARM MTE exception" }, { 10, "SEGV_CPERR", "control protection fault" },
};
static const struct code_name sigbus[] = {
	{ 1, "BUS_ADRALN", "invalid address alignment" }, { 2, "BUS_ADRERR", "non-existent physical address" },
	{ 3, "BUS_OBJERR", "object specific hardware error" },
	{ 4, "BUS_MCEERR_AR", "hardware memory error, action required" },
	{ 5, "BUS_MCEERR_AO", "hardware memory error, action optional" },
};
static const struct code_name sigtrap[] = {
	{ 1, "TRAP_BRKPT", "process breakpoint" }, { 2, "TRAP_TRACE", "process trace trap" },
	{ 3, "TRAP_BRANCH", "process taken branch trap" }, { 4, "TRAP_HWBKPT", "hardware breakpoint/watchpoint" },
	{ 5, "TRAP_UNK", "undiagnosed trap" }, { 6, "TRAP_PERF", "perf event with sigtrap=1" },
};
static const struct code_name sigsys[] = {
	{ 1, "SYS_SECCOMP", "seccomp triggered" }, { 2, "SYS_USER_DISPATCH", "syscall user dispatch triggered" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct code_name *find(const struct code_name *t, size_t n, int code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return &t[i];
	return NULL;
}

/* Codes <= 0 and SI_KERNEL mean the same for every signal; the positive
 * ones are the signal's own. */
static const struct code_name *lookup(int signo, int code)
{
	if (code <= 0 || code == 0x80)
		return find(any_signal, N(any_signal), code);
	switch (signo) {
	case 4: return find(sigill, N(sigill), code);
	case 5: return find(sigtrap, N(sigtrap), code);
	case 7: return find(sigbus, N(sigbus), code);
	case 8: return find(sigfpe, N(sigfpe), code);
	case 11: return find(sigsegv, N(sigsegv), code);
	case 31: return find(sigsys, N(sigsys), code);
	default: return NULL;
	}
}

const char *report_signal_code_name(int signo, int code)
{
	const struct code_name *c = lookup(signo, code);
	return c ? c->name : NULL;
}

/* "address not mapped" for SIGSEGV's si_code 1, "kill" for 0; NULL for a
 * code the kernel does not define. */
static const char *code_meaning(int signo, int code)
{
	const struct code_name *c = lookup(signo, code);
	return c ? c->meaning : NULL;
}

void report_signal_text(const struct model_signal *sg, int64_t pid, char *buf, size_t size)
{
	char num[16];
	snprintf(num, sizeof(num), "signal %d", sg->number);
	const char *rname = report_signal_name(sg->number);
	const char *name = rname ? rname : num;
	const char *cname = report_signal_code_name(sg->number, sg->code);
	const char *meaning = code_meaning(sg->number, sg->code);
	if (!sg->has_code && sg->has_address) {
		snprintf(buf, size, "%s (%d), fault address 0x%llx", name, sg->number,
			 (unsigned long long)sg->address);
	} else if (!sg->has_code) {
		snprintf(buf, size, "%s (%d)", name, sg->number);
	} else if (sg->has_sender) {
		snprintf(buf, size, "%s (%d) sent by pid %lld (uid %lld) with %s%s", name, sg->number,
			 (long long)sg->sender_pid, (long long)sg->sender_uid, meaning ? meaning : "a signal",
			 sg->sender_pid == pid ? ", by the process itself" : "");
	} else {
		char code[96];
		if (cname)
			snprintf(code, sizeof(code), "%s (%s)", cname, meaning);
		else
			snprintf(code, sizeof(code), "code %d", sg->code);
		if (sg->has_address)
			snprintf(buf, size, "%s (%d), %s, fault address 0x%llx", name, sg->number, code,
				 (unsigned long long)sg->address);
		else
			snprintf(buf, size, "%s (%d), %s", name, sg->number, code);
	}
}

void report_signal_line(const struct model_report *r, char *buf, size_t size)
{
	struct model_signal sg = {
		.number = r->signal_number, .has_code = r->signal_has_code, .code = r->signal_code,
		.has_address = r->signal_has_address, .address = r->signal_address,
		.has_sender = r->signal_has_sender, .sender_pid = r->sender_pid, .sender_uid = r->sender_uid,
	};
	report_signal_text(&sg, r->pid, buf, size);
}

void report_caught_text(const struct model_report *r, char *buf, size_t size)
{
	const struct model_fault *f = r->fault;
	if (!f->number_assumed) {
		report_signal_text(&f->signal, r->pid, buf, size);
		return;
	}
	const char *name = report_signal_name(f->signal.number);
	snprintf(buf, size, "%s%s (%d) of unrecorded origin (its handler took no siginfo, and the saved state "
		 "names no fault)", name ? "" : "signal ", name ? name : "", f->signal.number);
}

void report_reraise_line(const struct model_report *r, char *buf, size_t size)
{
	const struct model_fault *f = r->fault;
	char fn[160] = "";
	const char *file = f->handler_module ? strrchr(f->handler_module, '/') : NULL;
	file = file ? file + 1 : f->handler_module;
	if (f->handler_function)
		snprintf(fn, sizeof(fn), " (%s)", f->handler_function);
	else if (file)
		snprintf(fn, sizeof(fn), " (in %s)", file);
	const char *rname = report_signal_name(r->signal_number);
	char num[16];
	snprintf(num, sizeof(num), "signal %d", r->signal_number);
	char recv[64] = "";
	if (f->received_tid >= 0 && f->received_tid != f->tid)
		snprintf(recv, sizeof(recv), ", received by thread %lld", (long long)f->received_tid);
	if (f->handling) {
		snprintf(buf, size, "its handler%s runs now in thread %lld (a running process: nothing re-raised yet)",
			 fn, (long long)f->tid);
		return;
	}
	snprintf(buf, size, "re-raised by %s%s%s in thread %lld as %s%s", f->handler ? f->handler : "a signal handler",
		 f->handler ? "" : fn,
		 !f->handler_returned ? "" : f->handler ? " (whose handler had returned)" : " (which had returned)",
		 (long long)f->tid, rname ? rname : num, recv);
}
