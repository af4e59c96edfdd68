/* The live reader: a running process under the same memory-reader
 * interface as cores and minidumps (dump.h, dump_open_process).
 *
 * Facts used, from the Linux kernel's proc(5) and its sources:
 * - /proc/PID/maps: "start-end perms offset dev inode path" a line, the
 *   path after the inode and padding, " (deleted)" appended for a file
 *   removed since; paths are d_path()s relative to the root of the
 *   process reading maps (for a chrooted process: the root's path as
 *   pycore sees it, then the path inside).  Reading maps, and the memory
 *   (process_vm_readv(2), /proc/PID/mem), needs ptrace access
 *   (PTRACE_MODE_READ and PTRACE_MODE_ATTACH, Documentation/admin-guide/
 *   LSM/Yama.rst); /proc/PID/stat, status and cmdline do not.
 * - /proc/PID/stat: "pid (comm) state ppid ...", comm may hold ')' (the
 *   last one ends it); /proc/PID/status: "Uid:\treal\teffective..." and
 *   "TracerPid:"; /proc/PID/auxv: the auxiliary vector as (type, value)
 *   64-bit pairs (AT_ENTRY, the program's entry point); /proc/PID/cmdline:
 *   argv, NUL-separated.
 * - /proc/PID/root: the process's root directory (a container's or a
 *   chroot's), through which its paths open as it sees them; /proc/PID/
 *   map_files/START-END (lowercase hex, no 0x): the very file a mapping
 *   maps, deleted or replaced since (opening it needs CAP_SYS_ADMIN).
 * - The kernel core's PRPSINFO keeps the first 80 bytes (ELF_PRARGSZ) of
 *   the command line, NULs as spaces: psargs is made the same way.
 */
#include "live.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define PRARGSZ 80

/* ------------------------------------------------------------------------
 * Memory: a page at a time, through a fixed cache
 * ------------------------------------------------------------------------ */

/* LEN bytes at ADDR of the process, straight from it: 0, or the errno. */
static int raw_read(struct dump_live *l, uint64_t addr, void *buf, size_t len)
{
	if (!l->use_mem) {
		struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
		ssize_t n = process_vm_readv((pid_t)l->pid, &local, 1, &remote, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return EFAULT;
		/* a seccomp filter or an old kernel may refuse the system
		 * call alone: /proc/PID/mem reads the same memory */
		if (errno != ENOSYS && errno != EPERM)
			return errno;
		l->use_mem = true;
	}
	if (l->mem_fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "%s/mem", l->proc);
		l->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (l->mem_fd < 0)
			return errno;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(l->mem_fd, (uint8_t *)buf + got, len - got, (off_t)(addr + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EFAULT;
		got += (size_t)n;
	}
	return 0;
}

static void note_range(struct dump_live *l, uint64_t start, uint64_t end)
{
	if (l->nranges && l->ranges[l->nranges - 1].end == start) {
		l->ranges[l->nranges - 1].end = end;
		return;
	}
	if (l->nranges == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct dump_range *r = cap <= (1u << 20) ? realloc(l->ranges, cap * sizeof(*r)) : NULL;
		if (!r)
			return;   /* the list stays short of this range: it is only a record */
		l->ranges = r;
		l->cap = cap;
	}
	l->ranges[l->nranges++] = (struct dump_range){ start, end };
	l->merged = false;
}

static enum pc_code failed(struct dump_live *l, int err)
{
	if (err == ESRCH)
		l->gone = true;
	return PC_ENOTCAPTURED;
}

static enum pc_code dump_live_read(struct dump *d, uint64_t addr, void *buf, size_t len)
{
	struct dump_live *l = d->p->live;
	uint8_t *out = buf;
	if (!l)
		return PC_ENOTCAPTURED;
	if (len > 2 * LIVE_PAGE) {
		/* a long read: straight into the caller's buffer */
		int err = raw_read(l, addr, buf, len);
		if (err)
			return failed(l, err);
		note_range(l, addr & ~(uint64_t)(LIVE_PAGE - 1), (addr + len + LIVE_PAGE - 1) & ~(uint64_t)(LIVE_PAGE - 1));
		return PC_OK;
	}
	while (len > 0) {
		uint64_t page = addr & ~(uint64_t)(LIVE_PAGE - 1);
		size_t off = (size_t)(addr - page), n = LIVE_PAGE - off < len ? LIVE_PAGE - off : len;
		size_t slot = (size_t)((page / LIVE_PAGE) % LIVE_CACHE);
		uint8_t *p = l->pages + slot * LIVE_PAGE;
		if (!l->valid[slot] || l->tag[slot] != page) {
			/* segments are whole pages of the process (maps' are
			 * page-aligned): the page is all in one */
			l->valid[slot] = false;
			int err = raw_read(l, page, p, LIVE_PAGE);
			if (err)
				return failed(l, err);
			l->valid[slot] = true;
			l->tag[slot] = page;
			note_range(l, page, page + LIVE_PAGE);
		}
		memcpy(out, p + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return PC_OK;
}

void dump_process_forget(struct dump *d)
{
	if (!d->p->live)
		return;
	memset(d->p->live->valid, 0, sizeof(d->p->live->valid));
	live_refresh_segments(d);
}

bool dump_process_gone(const struct dump *d)
{
	return d->p->live && d->p->live->gone;
}

static int range_cmp(const void *a, const void *b)
{
	const struct dump_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The CPU time thread TID of process PID has used, in nanoseconds: its
 * schedstat's first field (time on a CPU, ns), else its stat's utime and
 * stime (fields 14 and 15, clock ticks); -1 unknown. */
int64_t dump_thread_cpu_ns(int64_t pid, int64_t tid)
{
	char path[96], buf[1024];
	unsigned long long ns;
	snprintf(path, sizeof(path), "/proc/%lld/task/%lld/schedstat", (long long)pid, (long long)tid);
	FILE *f = fopen(path, "re");
	if (f) {
		int n = fscanf(f, "%llu", &ns);
		fclose(f);
		if (n == 1)
			return (int64_t)ns;
	}
	snprintf(path, sizeof(path), "/proc/%lld/task/%lld/stat", (long long)pid, (long long)tid);
	if (!(f = fopen(path, "re")))
		return -1;
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* after the command's closing parenthesis: state, then field 4 on */
	const char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	long tick = sysconf(_SC_CLK_TCK);
	if (!p || tick <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (int64_t)((ut + st) * (1000000000ull / (unsigned long long)tick));
}

bool dump_thread_blocks_fault(struct dump *d, int64_t tid)
{
	struct dump_live *l = d->p->live;
	char path[256], line[256];
	if (!l)
		return true;
	snprintf(path, sizeof(path), "%s/task/%lld/status", l->proc, (long long)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;
	unsigned long long blocked = 0;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "SigBlk: %llx", &blocked) == 1;
	fclose(f);
	/* SIGILL 4, SIGTRAP 5, SIGABRT 6, SIGBUS 7, SIGFPE 8, SIGSEGV 11: bit
	 * N-1 (fs/proc/array.c, render_sigset_t) */
	static const int fatal[] = { 4, 5, 6, 7, 8, 11 };
	for (size_t i = 0; found && i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (blocked & (1ULL << (fatal[i] - 1)))
			return true;
	return !found;
}

const struct dump_range *dump_ranges_read(struct dump *d, size_t *n)
{
	struct dump_live *l = d->p->live;
	*n = 0;
	if (!l || !l->nranges)
		return NULL;
	if (!l->merged) {
		qsort(l->ranges, l->nranges, sizeof(*l->ranges), range_cmp);
		size_t k = 0;
		for (size_t i = 1; i < l->nranges; i++) {
			if (l->ranges[i].start <= l->ranges[k].end) {
				if (l->ranges[i].end > l->ranges[k].end)
					l->ranges[k].end = l->ranges[i].end;
			} else {
				l->ranges[++k] = l->ranges[i];
			}
		}
		l->nranges = k + 1;
		l->merged = true;
	}
	*n = l->nranges;
	return l->ranges;
}

/* ------------------------------------------------------------------------
 * /proc files
 * ------------------------------------------------------------------------ */

/* The whole of /proc/PID/NAME (small files: at most CAP bytes), NUL-
 * terminated, its length in *LEN; NULL with errno set. */
static char *slurp(const struct dump_live *l, const char *name, size_t cap, size_t *len)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/%s", l->proc, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = malloc(cap + 1);
	size_t got = 0;
	while (buf && got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			free(buf);
			buf = NULL;
			errno = err;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	int err = errno;
	close(fd);
	errno = err;
	if (buf) {
		buf[got] = '\0';
		if (len)
			*len = got;
	}
	return buf;
}

/* pid, comm, state and ppid from stat; uid and gid (real) from status. */
static void read_facts(struct dump *d, struct dump_live *l)
{
	char *s = slurp(l, "stat", 4096, NULL);
	char *close_paren = s ? strrchr(s, ')') : NULL;
	char state;
	long long ppid;
	if (close_paren && sscanf(close_paren + 1, " %c %lld", &state, &ppid) == 2) {
		d->state = (state >= 'A' && state <= 'Z') || (state >= 'a' && state <= 'z') ? state : 0;
		d->ppid = ppid >= 0 ? ppid : -1;
	}
	/* field 28, startstack: where argc is, the initial stack's start */
	char *f = close_paren;
	for (int k = 2; f && k < 28; k++)
		f = strchr(f + 1, ' ');
	unsigned long long start;
	if (f && sscanf(f, " %llu", &start) == 1)
		d->p->argv_start = start;
	free(s);
	s = slurp(l, "status", 1 << 16, NULL);
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		long long v;
		if (sscanf(line, "Uid: %lld", &v) == 1)
			d->uid = v;
		else if (sscanf(line, "Gid: %lld", &v) == 1)
			d->gid = v;
		line = nl ? nl + 1 : NULL;
	}
	free(s);
	s = slurp(l, "comm", 64, NULL);
	if (s) {
		s[strcspn(s, "\n")] = '\0';
		d->fname = s;
	}
	size_t n = 0;
	s = slurp(l, "cmdline", 1 << 20, &n);
	if (s && n) {
		size_t argc = 0;
		for (size_t i = 0; i < n; i++)
			argc += s[i] == '\0';
		if (s[n - 1] != '\0')
			argc++;
		char **argv = calloc(argc + 1, sizeof(*argv));
		size_t k = 0;
		for (size_t i = 0; argv && i < n && k < argc; i += strlen(s + i) + 1)
			argv[k++] = strdup(s + i);
		d->argv = argv;
		char ps[PRARGSZ + 1];
		size_t m = n < PRARGSZ ? n : PRARGSZ;
		for (size_t i = 0; i < m; i++)
			ps[i] = s[i] ? s[i] : ' ';
		ps[m] = '\0';
		while (m > 0 && ps[m - 1] == ' ')
			ps[--m] = '\0';
		d->psargs = strdup(ps);
	}
	free(s);
}

/* ------------------------------------------------------------------------
 * Segments and modules, from /proc/PID/maps
 * ------------------------------------------------------------------------ */

struct root {
	bool same;                   /* the process's root is pycore's */
	char prefix[4096];           /* else: its root as pycore's paths name it ("" if not below pycore's) */
	size_t prefix_len;
};

static void find_root(const struct dump_live *l, struct root *r)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof(path), "%s/root", l->proc);
	r->same = stat(path, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	r->prefix_len = 0;
	r->prefix[0] = '\0';
	ssize_t n = r->same ? -1 : readlink(path, r->prefix, sizeof(r->prefix) - 1);
	if (n > 1 && r->prefix[0] == '/') {
		r->prefix[n] = '\0';
		r->prefix_len = (size_t)n;
	}
}

/* Where this machine opens the file of the mapping [START, END) at PATH
 * (as the process names it), whose inode the maps line gives: PATH when
 * the process shares pycore's root, else through /proc/PID/root; the
 * mapping's own file (map_files) when that path holds another file now.
 * NULL: PATH itself. */
static char *file_for(const struct dump_live *l, const struct root *r, const char *path, bool deleted,
		      uint64_t start, uint64_t end, unsigned dev_major, unsigned dev_minor, uint64_t ino)
{
	char *via = NULL;
	if (!r->same && asprintf(&via, "%s/root%s", l->proc, path) < 0)
		return NULL;
	struct stat st;
	if (!deleted && stat(via ? via : path, &st) == 0 && st.st_ino == ino &&
	    major(st.st_dev) == dev_major && minor(st.st_dev) == dev_minor)
		return via;
	char *mf = NULL;
	if (asprintf(&mf, "%s/map_files/%llx-%llx", l->proc, (unsigned long long)start,
		     (unsigned long long)end) >= 0 && access(mf, R_OK) == 0) {
		free(via);
		return mf;
	}
	free(mf);
	return via;
}

/* One line of maps: its segment, and with R its module's mapping.
 * Returns PC_OK (also for a line it leaves out). */
static enum pc_code take_mapping(struct dump *d, const struct dump_live *l, const struct root *r, char *line)
{
	unsigned long long start, end, off, ino;
	unsigned dmaj, dmin;
	char perms[8];
	int used = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &dmaj, &dmin, &ino,
		   &used) < 7 || end <= start)
		return PC_OK;
	char *path = line + used;
	/* the kernel's vvar pages and the legacy vsyscall page are not the
	 * process's memory, and reading them fails */
	if (strncmp(path, "[vvar", 5) == 0 || strcmp(path, "[vsyscall]") == 0)
		return PC_OK;
	if (dump_add_vma(d, start, end, perms[0] == 'r', perms[1] == 'w', perms[2] == 'x') == PC_ENOMEM ||
	    dump_add_vma_file(d, start, end, off, path) == PC_ENOMEM)
		return PC_ENOMEM;
	if (perms[0] == 'r') {
		/* its PF_* flags, for a compact dump's program headers (dump_save) */
		uint32_t flags = PF_R | (perms[1] == 'w' ? PF_W : 0) | (perms[2] == 'x' ? PF_X : 0);
		struct dump_segment s = { .start = start, .end = end, .flags = flags, .live = true,
					  .writable = perms[1] == 'w' };
		enum pc_code st = dump_add_segment(d, &s);
		if (st != PC_OK)
			return st;
	}
	if (!r || path[0] != '/')
		return PC_OK;
	size_t n = strlen(path);
	bool deleted = n > 10 && strcmp(path + n - 10, " (deleted)") == 0;
	if (deleted)
		path[n - 10] = '\0';
	/* the path as the process sees it, inside its root */
	if (!r->same && r->prefix_len && strncmp(path, r->prefix, r->prefix_len) == 0 && path[r->prefix_len] == '/')
		path += r->prefix_len;
	bool full;
	struct dump_module *m = dump_module_for_path(d, path, &full);
	if (!m && full) {
		dump_set_error(d, "the process maps more than %u files", DUMP_MAX_MODULES);
		return PC_ELIMIT;
	}
	if (!m)
		return PC_ENOMEM;
	struct dump_mapping *mp = realloc(m->maps, (m->nmaps + 1) * sizeof(*mp));
	if (!mp)
		return PC_ENOMEM;
	m->maps = mp;
	mp[m->nmaps++] = (struct dump_mapping){ start, end, off, perms[1] == 'w' };
	if (start < m->start)
		m->start = start;
	if (end > m->end)
		m->end = end;
	if (off == 0 && m->base == 0) {
		m->base = start;
		free(m->file);
		m->file = file_for(l, r, path, deleted, start, end, dmaj, dmin, ino);
	}
	return PC_OK;
}

/* The segments, and with R the modules, from maps. */
static enum pc_code parse_maps(struct dump *d, struct dump_live *l, const struct root *r)
{
	size_t n;
	char *maps = slurp(l, "maps", 64u << 20, &n);
	if (!maps)
		return live_refused(d, "cannot read its memory map (maps)", errno);
	enum pc_code st = PC_OK;
	for (char *line = maps; st == PC_OK && line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		st = take_mapping(d, l, r, line);
		line = nl ? nl + 1 : NULL;
	}
	free(maps);
	return st;
}

enum pc_code live_refresh_segments(struct dump *d)
{
	struct dump_live *l = d->p->live;
	struct dump_segment *old = d->p->segs;
	size_t nold = d->p->nsegs;
	d->p->segs = NULL;
	d->p->nsegs = 0;
	enum pc_code st = parse_maps(d, l, NULL);
	if (st == PC_OK)
		st = dump_segments_finish(d);
	if (st != PC_OK || d->p->nsegs == 0) {
		/* gone, or out of memory: keep the map read before */
		free(d->p->segs);
		d->p->segs = old;
		d->p->nsegs = nold;
		return st != PC_OK ? st : PC_EGONE;
	}
	free(old);
	memset(d->p->seg_hint, 0, sizeof(d->p->seg_hint));
	d->p->last_seg = 0;
	return PC_OK;
}

/* The flags of stat's field 9 (PF_*, include/linux/sched.h); 0 when
 * stat cannot be read. */
static unsigned long long task_flags(const struct dump_live *l)
{
	char *s = slurp(l, "stat", 4096, NULL);
	char *f = s ? strrchr(s, ')') : NULL;
	for (int k = 2; f && k < 9; k++)
		f = strchr(f + 1, ' ');
	unsigned long long flags = 0;
	if (!f || sscanf(f, " %llu", &flags) != 1)
		flags = 0;
	free(s);
	return flags;
}

/* Whether the process is a kernel thread: PF_KTHREAD.  A process that
 * maps nothing and is none is exiting (its memory released before it is
 * a zombie). */
static bool kernel_thread(const struct dump_live *l)
{
	return task_flags(l) & 0x00200000u;   /* PF_KTHREAD (linux/sched.h) */
}

/* The process is exiting or gone: its memory cannot be read for that
 * reason (PF_EXITING, linux/sched.h, while it is torn down; then a
 * zombie, or no /proc entry at all). */
static bool process_exiting(const struct dump_live *l)
{
	return l->gone || live_exiting(live_task_state(l, 0)) || (task_flags(l) & 0x00000004u);
}

static enum pc_code read_maps(struct dump *d, struct dump_live *l)
{
	struct root r;
	find_root(l, &r);
	if (!r.same && asprintf(&d->root, "%s/root", l->proc) < 0)
		d->root = NULL;
	enum pc_code st = parse_maps(d, l, &r);
	if (st == PC_OK)
		st = dump_segments_finish(d);
	if (st == PC_OK && d->p->nsegs == 0 && (d->state == 'Z' || d->state == 'X')) {
		dump_set_error(d, "the process exited (a zombie: its parent has not reaped it)");
		st = PC_EGONE;
	} else if (st == PC_OK && d->p->nsegs == 0 && kernel_thread(l)) {
		dump_set_error(d, "it maps no memory (a kernel thread)");
		st = PC_ENOTPYTHON;
	} else if (st == PC_OK && d->p->nsegs == 0) {
		/* its memory released after stat was read: exiting */
		dump_set_error(d, "the process exited while it was read");
		st = PC_EGONE;
	}
	return st;
}

/* ------------------------------------------------------------------------
 * The process
 * ------------------------------------------------------------------------ */

/* The platform: the main program's ELF header as mapped (the machine it
 * was built for, which the kernel runs it as). */
static enum pc_code find_platform(struct dump *d, const struct dump_module *exe)
{
	uint8_t h[20];
	if (!exe || dump_read(d, exe->base, h, sizeof(h)) != PC_OK || memcmp(h, ELFMAG, SELFMAG) != 0) {
		if (process_exiting(d->p->live)) {
			/* its memory went with it: the reason, not the read */
			dump_set_error(d, "the process exited while it was read");
			return PC_EGONE;
		}
		dump_set_error(d, "cannot read the ELF header of its program%s%s",
			       exe ? " " : "", exe ? exe->path : "");
		return PC_EUNSUPPORTED;
	}
	bool msb = h[EI_DATA] == ELFDATA2MSB;
	uint16_t machine = msb ? (uint16_t)(h[18] << 8 | h[19]) : (uint16_t)(h[19] << 8 | h[18]);
	d->platform = platform_by_elf(machine, h[EI_CLASS], h[EI_DATA]);
	if (!d->platform) {
		char buf[40];
		const char *name = platform_elf_name(machine, h[EI_CLASS], h[EI_DATA], buf, sizeof(buf));
		dump_set_error(d, "%s %s process: pycore cannot analyze it", platform_article(name), name);
		return PC_EUNSUPPORTED;
	}
	return PC_OK;
}

/* The initial stack, from argc (stat's startstack) to the end of its
 * mapping, when the word there is argc as cmdline counts it: what a
 * compact dump keeps of it (dump_record_extras), as of a core. */
static void find_initial_stack(struct dump *d)
{
	uint64_t argc = 0, end = 0, at = d->p->argv_start;
	size_t n = 0;
	while (d->argv && d->argv[n])
		n++;
	d->p->argv_start = 0;
	if (at && dump_next_held(d, at, &end) == at && dump_read(d, at, &argc, sizeof(argc)) == PC_OK &&
	    argc == n && n > 0) {
		d->p->argv_start = at;
		d->p->argv_end = end;
	}
}

/* AT_ENTRY (and the vDSO's AT_SYSINFO_EHDR) from auxv, and the module
 * that holds it: the main program. */
static struct dump_module *find_executable(struct dump *d, struct dump_live *l)
{
	size_t n = 0;
	char *auxv = slurp(l, "auxv", 1 << 16, &n);
	for (size_t off = 0; auxv && off + 16 <= n; off += 16) {
		uint64_t type = dump_le64((const uint8_t *)auxv + off), val = dump_le64((const uint8_t *)auxv + off + 8);
		if (type == AT_ENTRY)
			d->auxv_entry = val;
		else if (type == AT_SYSINFO_EHDR)
			d->auxv_vdso = val;
	}
	/* kept whole: a compact dump's NT_AUXV (dump_save), as a core's */
	if (auxv && n >= 16) {
		d->p->auxv = (uint8_t *)auxv;
		d->p->auxv_len = n / 16 * 16;
	} else {
		free(auxv);
	}
	find_initial_stack(d);
	struct dump_module *m = d->auxv_entry ? dump_module_at(d, d->auxv_entry) : NULL;
	if (m) {
		d->executable = strdup(m->path);
		return m;
	}
	char path[64], target[4096];
	snprintf(path, sizeof(path), "%s/exe", l->proc);
	ssize_t k = readlink(path, target, sizeof(target) - 1);
	if (k > 0) {
		target[k] = '\0';
		d->executable = strdup(target);
	}
	return NULL;
}

/* A first read of its memory, where ptrace access is checked. */
static enum pc_code probe(struct dump *d, struct dump_live *l)
{
	uint8_t byte;
	int err = raw_read(l, d->p->segs[0].start, &byte, 1);
	if (err == EPERM || err == EACCES || err == ESRCH)
		return live_refused(d, "cannot read its memory", err);
	return PC_OK;
}

static enum pc_code open_process(struct dump *d, int64_t pid)
{
	struct dump_live *l = d->p->live = calloc(1, sizeof(*l));
	if (!l)
		return PC_ENOMEM;
	d->p->live_read = dump_live_read;
	d->p->live_free = live_close;
	if (!(l->pages = malloc(LIVE_CACHE * LIVE_PAGE)))
		return PC_ENOMEM;
	l->pid = pid;
	l->mem_fd = -1;
	snprintf(l->proc, sizeof(l->proc), "/proc/%lld", (long long)pid);
	d->format = "process";
	d->pid = pid;
	struct stat st;
	if (pid <= 0 || pid > INT32_MAX || stat(l->proc, &st) != 0) {
		dump_set_error(d, "no such process");
		return PC_EGONE;
	}
	if (pid == (int64_t)getpid()) {
		dump_set_error(d, "that is pycore itself, which cannot stop itself to read itself");
		return PC_EDENIED;
	}
	read_facts(d, l);
	enum pc_code rc = read_maps(d, l);
	if (rc == PC_OK)
		rc = probe(d, l);
	if (rc != PC_OK)
		return rc;
	for (size_t i = 0; i < d->p->nsegs; i++)
		d->file_size += d->p->segs[i].end - d->p->segs[i].start;
	struct dump_module *exe = find_executable(d, l);
	dump_place_modules(d, d->p->auxv, d->p->auxv_len, NULL, 0);
	rc = find_platform(d, exe);
	if (rc != PC_OK)
		return rc;
	for (size_t i = 0; i < d->nmodules; i++) {
		struct dump_module *m = &d->modules[i];
		if (m->base)
			dump_read_build_id(d, m->base, m->build_id, &m->build_id_len);
	}
	if (l->gone) {
		dump_set_error(d, "the process exited while it was read");
		return PC_EGONE;
	}
	return PC_OK;
}

struct pc_error *dump_open_process(int64_t pid, struct dump **out)
{
	char name[40];
	snprintf(name, sizeof(name), "/proc/%lld", (long long)pid);
	struct dump *d = *out = dump_new();
	if (!d || !(d->path = strdup(name)))
		return pc_error_new(PC_ENOMEM, name, "out of memory");
	enum pc_code st = open_process(d, pid);
	if (st == PC_OK)
		return NULL;
	return pc_error_new(st, name, "%s", d->p->error ? d->p->error : pc_code_str(st));
}

void live_close(struct dump *d)
{
	struct dump_live *l = d->p->live;
	if (!l)
		return;
	if (l->mem_fd >= 0)
		close(l->mem_fd);
	free(l->pages);
	free(l->ranges);
	free(l->stopped);
	free(l);
	d->p->live = NULL;
}
