/* Why the kernel refuses pycore a live process, in one line naming what
 * is missing (live.h's live_refused), and the task states that say a
 * thread is exiting.
 *
 * Facts used: ptrace access is denied to another user without
 * CAP_SYS_PTRACE (bit 19 of /proc/self/status's CapEff), to a process
 * that is not dumpable (its /proc/PID entries then belong to root), to a
 * process already traced ("TracerPid:" in its status) and by Yama's
 * /proc/sys/kernel/yama/ptrace_scope: 1 only descendants, 2 only
 * CAP_SYS_PTRACE, 3 none (Documentation/admin-guide/LSM/Yama.rst); the
 * state letter after the ")" of /proc/PID/stat (proc(5)).
 */
#include "live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19

/* ------------------------------------------------------------------------
 * Refusals: what is missing, in one line
 * ------------------------------------------------------------------------ */

bool live_has_cap_ptrace(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long caps = 0;
	bool found = false;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			found = true;
	if (f)
		fclose(f);
	return found && (caps >> CAP_SYS_PTRACE_BIT & 1);
}

/* A number field of /proc/PID/status ("Uid:", "TracerPid:"), -1 if none. */
static long long status_field(const struct dump_live *l, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "%s/status", l->proc);
	FILE *f = fopen(path, "re");
	long long v = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && sscanf(line + n, " %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;
	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* The state letter of /proc/PID/task/TID/stat (TID 0: /proc/PID/stat);
 * 0 when it cannot be read (the thread is gone). */
char live_task_state(const struct dump_live *l, int64_t tid)
{
	char path[96], buf[512];
	if (tid)
		snprintf(path, sizeof(path), "%s/task/%lld/stat", l->proc, (long long)tid);
	else
		snprintf(path, sizeof(path), "%s/stat", l->proc);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* An exiting task: the kernel refuses to trace it (EPERM), as it would
 * one that is gone. */
bool live_exiting(char state)
{
	return state == 0 || state == 'Z' || state == 'X';
}

enum pc_code live_refused(struct dump *d, const char *what, int err)
{
	const struct dump_live *l = d->p->live;
	struct stat st;
	if (err == ESRCH || err == ENOENT || stat(l->proc, &st) != 0 || live_exiting(live_task_state(l, 0))) {
		dump_set_error(d, "%s: the process exited", what);
		return PC_EGONE;
	}
	if (err != EPERM && err != EACCES) {
		dump_set_error(d, "%s: %s", what, strerror(err));
		return PC_EIO;
	}
	bool cap = live_has_cap_ptrace();
	long long uid = status_field(l, "Uid:"), me = (long long)getuid(), tracer = status_field(l, "TracerPid:");
	int scope = yama_scope();
	if (!cap && uid >= 0 && uid != me)
		dump_set_error(d, "%s: it belongs to another user (uid %lld; pycore runs as uid %lld without "
			       "CAP_SYS_PTRACE): run pycore as that user, or as root", what, uid, me);
	else if (tracer > 0)
		dump_set_error(d, "%s: it is already traced by process %lld (a debugger or tracer: only one "
			       "may attach)", what, tracer);
	else if (scope == 3)
		dump_set_error(d, "%s: Yama's ptrace_scope is 3 (/proc/sys/kernel/yama/ptrace_scope): no "
			       "process may be traced until reboot", what);
	else if (scope == 2 && !cap)
		dump_set_error(d, "%s: Yama's ptrace_scope is 2 (/proc/sys/kernel/yama/ptrace_scope): only "
			       "a process with CAP_SYS_PTRACE may trace, and pycore lacks it (run it as root)", what);
	else if (scope == 1 && !cap)
		dump_set_error(d, "%s: Yama's ptrace_scope is 1 (/proc/sys/kernel/yama/ptrace_scope): only "
			       "its parent may trace it; run pycore as root (CAP_SYS_PTRACE), or set it to 0", what);
	else if (!cap && st.st_uid != (uid_t)me && uid == me)
		dump_set_error(d, "%s: it is not dumpable (set-user-ID, or prctl(PR_SET_DUMPABLE, 0)): only "
			       "CAP_SYS_PTRACE may read it, which pycore lacks", what);
	else if (!cap)
		dump_set_error(d, "%s: %s (pycore lacks CAP_SYS_PTRACE; a security module may forbid "
			       "ptrace)", what, strerror(err));
	else
		dump_set_error(d, "%s: %s (a security module, or a container's seccomp filter, forbids "
			       "ptrace)", what, strerror(err));
	return PC_EDENIED;
}
