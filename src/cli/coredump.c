/* pycore coredump: the systemd-coredump hook (coredump.h).
 *
 * Order of work, cheapest first, privileges dropped before any byte of
 * the core is parsed in earnest:
 *   1. the crash: the newest journal entry of systemd-coredump
 *      (MESSAGE_ID SD_MESSAGE_COREDUMP) whose unit is
 *      systemd-coredump@INSTANCE.service; outside systemd (no unit in the
 *      entries) the newest entry; else the newest core file in
 *      /var/lib/systemd/coredump;
 *   2. skip pycore's own crashes, executables not in Executables=, and
 *      what is not Python: by its names (comm, exe), else by the files
 *      the core maps (its NT_FILE note, in the first MiBs of the stream);
 *   3. MaxCoreSize, the per-executable rate limit;
 *   4. as root: open the core (or copy it out of the journal), create the
 *      report's file, open the concurrency slots; then drop to User=;
 *   5. wait for a slot, analyze, write the journal entry and the file. */
#include "cli/coredump.h"

#include <stdio.h>

#ifndef HAVE_LIBSYSTEMD

int coredump_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "pycore: coredump: this pycore was built without libsystemd "
		"(configure --without-libsystemd): the systemd-coredump hook is not available\n");
	return 2;
}

#else

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>
#include <systemd/sd-messages.h>
#include <zstd.h>

#include "analysis/analysis.h"
#include "cli/coredump_config.h"
#include "dump/dump.h"
#include "report/report.h"
#include "util/hash.h"

#define COREDUMP_DIR "/var/lib/systemd/coredump"
#define DEFAULT_CONFIG SYSCONFDIR "/pycore/coredump.conf"
/* how much of the core the Python check reads: the notes come first */
#define PREFIX_MAX ((size_t)8 << 20)
/* the text report in the journal entry is cut here (the file has it all) */
#define JOURNAL_TEXT_MAX ((size_t)256 << 10)
#define SLOT_WAIT_SECONDS 60

/* The crash the instance stored.  Strings are the crashed process's
 * (untrusted) or systemd's, bounded when read. */
struct crash {
	char *path;                  /* the core file; NULL when in the journal */
	char *cursor;                /* its journal entry; NULL when found as a file */
	bool in_journal;             /* the core is the entry's COREDUMP field */
	bool maps_known;             /* the entry has COREDUMP_PROC_MAPS ... */
	bool maps_python;            /* ... naming a python or libpython file */
	int64_t pid;
	char *exe, *comm, *uid, *boot_id, *timestamp;
	/* process.coredump: the file's attributes, or the entry's fields for
	 * a core in the journal; read as root */
	struct dump_coredump *facts;
};

static void crash_free(struct crash *c)
{
	free(c->path);
	free(c->cursor);
	free(c->exe);
	free(c->comm);
	free(c->uid);
	free(c->boot_id);
	free(c->timestamp);
	dump_coredump_free(c->facts);
}

static const char *basename_of(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

/* ------------------------------------------------------------------------
 * Finding the crash
 * ------------------------------------------------------------------------ */

/* The value of the current entry's field NAME, at most 4096 bytes, cut
 * at a NUL; NULL when absent. */
static char *field(sd_journal *j, const char *name)
{
	const void *d;
	size_t n, k = strlen(name) + 1;
	if (sd_journal_get_data(j, name, &d, &n) < 0 || n < k)
		return NULL;
	return strndup((const char *)d + k, n - k > 4096 ? 4096 : n - k);
}

static bool name_is_python(const char *s);

/* The field as a whole decimal number, else -1. */
static int64_t number_field(sd_journal *j, const char *name)
{
	char *v = field(j, name), *end = NULL;
	errno = 0;
	long long n = v && *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : -1;
	if (!end || *end || errno)
		n = -1;
	free(v);
	return n;
}

/* The field when at most DUMP_XATTR_MAX bytes (the attributes' bound), else NULL. */
static char *bounded_field(sd_journal *j, const char *name)
{
	char *v = field(j, name);
	if (v && strlen(v) > DUMP_XATTR_MAX) {
		free(v);
		v = NULL;
	}
	return v;
}

/* process.coredump from the entry, for a core stored in the journal
 * (the same facts systemd-coredump puts in a file's attributes). */
static struct dump_coredump *entry_facts(sd_journal *j)
{
	struct dump_coredump *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->comm = bounded_field(j, "COREDUMP_COMM");
	f->exe = bounded_field(j, "COREDUMP_EXE");
	f->hostname = bounded_field(j, "COREDUMP_HOSTNAME");
	f->pid = number_field(j, "COREDUMP_PID");
	f->uid = number_field(j, "COREDUMP_UID");
	f->gid = number_field(j, "COREDUMP_GID");
	f->signal = number_field(j, "COREDUMP_SIGNAL");
	f->timestamp = number_field(j, "COREDUMP_TIMESTAMP");
	f->rlimit = UINT64_MAX;
	return f;
}

static void fill_from_entry(sd_journal *j, struct crash *c)
{
	const void *d;
	size_t n;
	c->pid = number_field(j, "COREDUMP_PID");
	c->path = field(j, "COREDUMP_FILENAME");
	c->exe = field(j, "COREDUMP_EXE");
	c->comm = field(j, "COREDUMP_COMM");
	c->uid = field(j, "COREDUMP_UID");
	c->boot_id = field(j, "_BOOT_ID");
	c->timestamp = field(j, "COREDUMP_TIMESTAMP");
	c->in_journal = !c->path && sd_journal_get_data(j, "COREDUMP", &d, &n) >= 0;
	if (c->in_journal)
		c->facts = entry_facts(j);
	if (sd_journal_get_cursor(j, &c->cursor) < 0)
		c->cursor = NULL;
	/* /proc/PID/maps as systemd read it: the path is the last column */
	if (sd_journal_get_data(j, "COREDUMP_PROC_MAPS", &d, &n) >= 0 && n > 19) {
		c->maps_known = true;
		const char *p = (const char *)d + 19, *end = (const char *)d + n;
		while (p < end && !c->maps_python) {
			const char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
			const char *slash = memrchr(p, '/', (size_t)(stop - p));
			if (slash) {
				char name[16] = "";
				size_t len = (size_t)(stop - slash - 1);
				memcpy(name, slash + 1, len < sizeof(name) - 1 ? len : sizeof(name) - 1);
				c->maps_python = name_is_python(name);
			}
			p = stop + 1;
		}
	}
}

/* The journal's entry for INSTANCE (see the top of the file); 0 found,
 * -1 not.  *J stays open on it. */
static int find_in_journal(const char *instance, sd_journal **jp, struct crash *c)
{
	sd_journal *j;
	if (sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY) < 0)
		return -1;
	*jp = j;
	if (sd_journal_add_match(j, "MESSAGE_ID=" SD_MESSAGE_COREDUMP_STR, 0) < 0)
		return -1;
	char *unit = NULL;
	if (asprintf(&unit, "systemd-coredump@%s.service", instance) < 0)
		return -1;
	/* under systemd the entry may reach the journal a moment after
	 * the coredump service ended: wait for it up to 2 s */
	int tries = getenv("INVOCATION_ID") ? 20 : 1, rc = -1;
	for (int t = 0; t < tries && rc < 0; t++) {
		if (t > 0) {
			usleep(100000);
			sd_journal_process(j);
		}
		char *newest = NULL;
		bool newest_unitless = false;
		sd_journal_seek_tail(j);
		for (int i = 0; i < 200 && sd_journal_previous(j) > 0; i++) {
			char *u = field(j, "_SYSTEMD_UNIT");
			bool match = u && strcmp(u, unit) == 0;
			if (i == 0) {
				newest_unitless = !u;
				if (sd_journal_get_cursor(j, &newest) < 0)
					newest = NULL;
			}
			free(u);
			if (match) {
				fill_from_entry(j, c);
				rc = 0;
				break;
			}
		}
		/* not under systemd: no entry names a unit */
		if (rc < 0 && t == tries - 1 && newest && newest_unitless && sd_journal_seek_cursor(j, newest) >= 0 &&
		    sd_journal_next(j) > 0) {
			fill_from_entry(j, c);
			rc = 0;
		}
		free(newest);
	}
	free(unit);
	return rc;
}

/* The newest core file in COREDUMP_DIR, its facts from its extended
 * attributes; 0 found, -1 not. */
static int find_file(struct crash *c)
{
	DIR *dir = opendir(COREDUMP_DIR);
	if (!dir)
		return -1;
	struct dirent *e;
	struct timespec best = { 0, 0 };
	char *best_name = NULL;
	while ((e = readdir(dir))) {
		struct stat st;
		if (strncmp(e->d_name, "core.", 5) != 0 ||
		    fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!best_name || st.st_mtim.tv_sec > best.tv_sec ||
		    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
			best = st.st_mtim;
			free(best_name);
			best_name = strdup(e->d_name);
		}
	}
	closedir(dir);
	if (!best_name || asprintf(&c->path, "%s/%s", COREDUMP_DIR, best_name) < 0) {
		free(best_name);
		c->path = NULL;
		return -1;
	}
	free(best_name);
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct dump_coredump *x = fd >= 0 ? dump_coredump_read(fd) : NULL;
	if (fd >= 0)
		close(fd);
	c->pid = x ? x->pid : -1;
	if (x) {
		c->exe = x->exe ? strdup(x->exe) : NULL;
		c->comm = x->comm ? strdup(x->comm) : NULL;
		if (x->uid >= 0 && asprintf(&c->uid, "%lld", (long long)x->uid) < 0)
			c->uid = NULL;
	}
	dump_coredump_free(x);
	return 0;
}

/* ------------------------------------------------------------------------
 * Is it Python?  Cheap checks only: names, then the core's file list.
 * ------------------------------------------------------------------------ */

static bool name_is_python(const char *s)
{
	const char *b = basename_of(s);
	return strncmp(b, "python", 6) == 0 || strncmp(b, "libpython", 9) == 0;
}

/* Whether the ELF core's first N bytes at P hold an NT_FILE note naming a
 * python or libpython file.  Layouts from <elf.h> and the kernel's
 * fs/binfmt_elf.c (fill_files_note): count, page size, count triples
 * (start, end, file offset), then count NUL-terminated names. */
static bool prefix_maps_python(const uint8_t *p, size_t n)
{
	Elf64_Ehdr eh;
	if (n < sizeof(eh))
		return false;
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_CORE || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n)
		return false;
	for (size_t i = 0; i < eh.e_phnum && (n - eh.e_phoff) / sizeof(Elf64_Phdr) > i; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset >= n)
			continue;
		size_t off = ph.p_offset, end = ph.p_filesz < n - off ? off + ph.p_filesz : n;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p + off, sizeof(nh));
			size_t name_len = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
			size_t desc_len = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
			off += sizeof(nh);
			if (name_len > end - off || desc_len > end - off - name_len)
				break;
			const uint8_t *desc = p + off + name_len;
			off += name_len + desc_len;
			if (nh.n_type != NT_FILE || nh.n_descsz < 16)
				continue;
			uint64_t count;
			memcpy(&count, desc, 8);
			if (count > (nh.n_descsz - 16) / 24)
				continue;
			const char *s = (const char *)desc + 16 + count * 24, *stop = (const char *)desc + nh.n_descsz;
			while (s < stop) {
				const char *z = memchr(s, '\0', (size_t)(stop - s));
				size_t len = z ? (size_t)(z - s) : (size_t)(stop - s);
				char name[256];
				const char *slash = memrchr(s, '/', len);
				const char *b = slash ? slash + 1 : s;
				size_t blen = (size_t)(s + len - b) < sizeof(name) - 1 ? (size_t)(s + len - b) : sizeof(name) - 1;
				memcpy(name, b, blen);
				name[blen] = '\0';
				if (name_is_python(name))
					return true;
				s += len + 1;
			}
		}
	}
	return false;
}

/* The first PREFIX_MAX bytes of the core file at PATH, decompressed if
 * it is zstd, into *OUT (malloc'd); their number, or 0. */
static size_t read_prefix(const char *path, uint8_t **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	uint8_t *raw = malloc(PREFIX_MAX), *dec = NULL;
	ssize_t got = raw ? pread(fd, raw, PREFIX_MAX, 0) : -1;
	close(fd);
	if (got <= 0) {
		free(raw);
		return 0;
	}
	static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	if (got < 4 || memcmp(raw, zmagic, 4) != 0) {
		*out = raw;
		return (size_t)got;
	}
	ZSTD_DCtx *z = ZSTD_createDCtx();
	dec = z ? malloc(PREFIX_MAX) : NULL;
	size_t have = 0;
	if (dec) {
		ZSTD_inBuffer in = { raw, (size_t)got, 0 };
		ZSTD_outBuffer o = { dec, PREFIX_MAX, 0 };
		while (o.pos < o.size && in.pos < in.size) {
			size_t r = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(r) || r == 0)
				break;
		}
		have = o.pos;
	}
	ZSTD_freeDCtx(z);
	free(raw);
	*out = dec;
	return have;
}

/* The prefix of the journal entry's COREDUMP field; its length, or 0. */
static size_t journal_prefix(sd_journal *j, uint8_t **out)
{
	const void *d;
	size_t n;
	*out = NULL;
	sd_journal_set_data_threshold(j, PREFIX_MAX + 9);
	if (sd_journal_get_data(j, "COREDUMP", &d, &n) < 0 || n <= 9)
		return 0;
	n -= 9;
	if (!(*out = malloc(n)))
		return 0;
	memcpy(*out, (const uint8_t *)d + 9, n);
	return n;
}

/* ------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------ */

/* A directory the unit gave ($NAME, its first entry), else FALLBACK,
 * made if missing.  malloc'd, or NULL. */
static char *state_dir(const char *name, const char *fallback)
{
	const char *env = getenv(name);
	char *dir = strndup(env && *env == '/' ? env : fallback,
			    env && *env == '/' ? strcspn(env, ":") : strlen(fallback));
	if (dir && mkdir(dir, 0755) != 0 && errno != EEXIST) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Whether EXE had RateLimitBurst analyses in the current interval; counts
 * this one when not.  State: one small file per executable (named by the
 * FNV-1a 64 of its path), "START COUNT", under a lock. */
static bool rate_limited(const struct coredump_config *cfg, const char *exe)
{
	if (cfg->ratelimit_interval == 0 || cfg->ratelimit_burst == 0)
		return false;
	char *dir = state_dir("STATE_DIRECTORY", "/var/lib/pycore"), *path = NULL;
	uint64_t h = pc_fnv1a64(PC_FNV1A64_INIT, exe ? exe : "", exe ? strlen(exe) : 0);
	int fd = -1;
	if (dir && asprintf(&path, "%s/ratelimit.%016llx", dir, (unsigned long long)h) >= 0)
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(dir);
	free(path);
	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		if (fd >= 0)
			close(fd);
		return false;  /* no state: the limit cannot be kept, the analysis can */
	}
	char buf[64] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	unsigned long long start = 0, count = 0;
	uint64_t now = (uint64_t)time(NULL);
	if (sscanf(buf, "%llu %llu", &start, &count) != 2 || start > now || now - start >= cfg->ratelimit_interval) {
		start = now;
		count = 0;
	}
	bool limited = count >= cfg->ratelimit_burst;
	if (!limited) {
		int len = snprintf(buf, sizeof(buf), "%llu %llu\n", start, count + 1);
		if (pwrite(fd, buf, (size_t)len, 0) != len || ftruncate(fd, len) != 0)
			fprintf(stderr, "pycore: coredump: cannot keep the rate limit's state: %s\n", strerror(errno));
	}
	close(fd);
	return limited;
}

/* The core's size as far as cheaply known: a zstd frame's content size
 * when it records one (systemd's does not), else the file's. */
static uint64_t core_size(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return 0;
	uint8_t head[18];  /* ZSTD_FRAMEHEADERSIZE_MAX (zstd.h, static API only) */
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n > 0) {
		unsigned long long v = ZSTD_getFrameContentSize(head, (size_t)n);
		if (v != ZSTD_CONTENTSIZE_UNKNOWN && v != ZSTD_CONTENTSIZE_ERROR)
			return v;
	}
	return (uint64_t)st.st_size;
}

/* ------------------------------------------------------------------------
 * Privileges
 * ------------------------------------------------------------------------ */

/* Become USER (else nobody) for good: no groups, its gid, its uid, and
 * proof that root cannot be had back.  0, or -1 with the reason on
 * standard error. */
/* USER's entry, else nobody's (said on standard error); NULL if neither. */
static struct passwd *hook_user(const char *user, bool say)
{
	struct passwd *pw = getpwnam(user);
	if (!pw) {
		if (say)
			fprintf(stderr, "pycore: coredump: no user '%s': using nobody\n", user);
		pw = getpwnam("nobody");
	}
	if (!pw && say)
		fprintf(stderr, "pycore: coredump: neither the user '%s' nor nobody exists\n", user);
	return pw;
}

/* The debug cache (uncompressed copies of compressed debug files: the
 * same for every crash, so kept between them) when the unit gives a cache
 * directory (CacheDirectory=pycore sets $CACHE_DIRECTORY): its debug/,
 * made as root and handed to USER before the drop.  NULL: no cache, every
 * analysis inflates what it needs in memory. */
static char *hook_debug_cache(const char *user)
{
	const char *env = getenv("CACHE_DIRECTORY");
	struct passwd *pw = hook_user(user, false);
	char *dir = NULL;
	if (!env || *env != '/' || !pw ||
	    asprintf(&dir, "%.*s/debug", (int)strcspn(env, ":"), env) < 0)
		return NULL;
	int fd = -1;
	if ((mkdir(dir, 0755) != 0 && errno != EEXIST) ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fchown(fd, pw->pw_uid, pw->pw_gid) != 0) {
		if (fd >= 0)
			close(fd);
		free(dir);
		return NULL;
	}
	close(fd);
	return dir;
}

static int drop_privileges(const char *user)
{
	struct passwd *pw = hook_user(user, true);
	if (!pw)
		return -1;
	uid_t uid = pw->pw_uid;
	gid_t gid = pw->pw_gid;
	if (uid == 0) {
		fprintf(stderr, "pycore: coredump: User=%s is root: refusing to analyze as root\n", user);
		return -1;
	}
	if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) {
		fprintf(stderr, "pycore: coredump: cannot drop privileges to %s: %s\n", user, strerror(errno));
		return -1;
	}
	/* the proof: none of these may work now */
	gid_t g = 0;
	if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0 || setgroups(1, &g) == 0 || getuid() != uid ||
	    geteuid() != uid || getgid() != gid || getegid() != gid) {
		fprintf(stderr, "pycore: coredump: privileges could be regained after dropping them: stopping\n");
		return -1;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return 0;
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

/* S escaped for a terminal (report_put_escaped), malloc'd. */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	report_put_escaped(f, s ? s : "?");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A journal entry of pycore's about C that is no report: a skip (PRIORITY
 * 6) or a failure (3).  WHY is pycore's own text. */
static void journal_note(const struct crash *c, const char *core, int priority, const char *why)
{
	char *comm = escaped(c->comm), *name = escaped(core);
	sd_journal_send("MESSAGE_ID=" PYCORE_MESSAGE_ID, "PRIORITY=%d", priority,
			"MESSAGE=pycore: process %lld (%s): %s", (long long)c->pid, comm ? comm : "?", why,
			"COREDUMP_PID=%lld", (long long)c->pid, "COREDUMP_FILENAME=%s", name ? name : "",
			"COREDUMP_EXE=%s", c->exe ? c->exe : "", "PYCORE_RESULT=%s", priority <= 3 ? "error" : "skipped",
			NULL);
	fprintf(stderr, "pycore: coredump: process %lld (%s): %s\n", (long long)c->pid, comm ? comm : "?", why);
	free(comm);
	free(name);
}

/* The report's file name: pycore.<the core's name without "core." and
 * its compression suffix>.json (never core.*: systemd's vacuum parses
 * those), in DIR. */
static char *sidecar_path(const struct coredump_config *cfg, const struct crash *c)
{
	char *stem = NULL, *path = NULL;
	if (c->path) {
		const char *b = basename_of(c->path);
		if (strncmp(b, "core.", 5) == 0)
			b += 5;
		stem = strdup(b);
		static const char *const suffixes[] = { ".zst", ".xz", ".lz4" };
		for (size_t i = 0; stem && i < 3; i++) {
			size_t n = strlen(stem), k = strlen(suffixes[i]);
			if (n > k && strcmp(stem + n - k, suffixes[i]) == 0)
				stem[n - k] = '\0';
		}
	} else if (asprintf(&stem, "%s.%s.%s.%lld.%s", c->comm ? c->comm : "unknown", c->uid ? c->uid : "unknown",
			    c->boot_id ? c->boot_id : "unknown", (long long)c->pid,
			    c->timestamp ? c->timestamp : "0") < 0) {
		stem = NULL;
	}
	if (!stem)
		return NULL;
	for (char *s = stem; *s; s++)  /* untrusted: no /, nothing hidden */
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') &&
		    *s != '.' && *s != '-' && *s != '_' && *s != '\\')
			*s = '_';
	char *dir = cfg->report_dir ? strdup(cfg->report_dir) : c->path ? strdup(c->path) : strdup(COREDUMP_DIR);
	if (dir && !cfg->report_dir && c->path)
		*strrchr(dir, '/') = '\0';
	if (!dir || asprintf(&path, "%s/pycore.%s.json", *dir ? dir : "/", stem) < 0)
		path = NULL;
	free(dir);
	free(stem);
	return path;
}

/* Copy the entry's COREDUMP field (at most MAX bytes) into an unlinked
 * temporary file: its descriptor, or -1 (*TOO_BIG when over MAX). */
static int journal_core(sd_journal *j, uint64_t max, bool *too_big)
{
	const void *d;
	size_t n;
	*too_big = false;
	sd_journal_set_data_threshold(j, max > SIZE_MAX - 10 ? 0 : (size_t)max + 10);
	if (sd_journal_get_data(j, "COREDUMP", &d, &n) < 0 || n <= 9)
		return -1;
	if (n - 9 > max) {
		*too_big = true;
		return -1;
	}
	const char *tmp = getenv("TMPDIR");
	int fd = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	const uint8_t *p = (const uint8_t *)d + 9;
	for (size_t left = n - 9; fd >= 0 && left > 0;) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		left -= (size_t)w;
	}
	return fd;
}

/* Wait up to SLOT_WAIT_SECONDS for one of the N slots (files open at FDS)
 * to be free; true when this process holds one. */
static bool take_slot(const int *fds, unsigned n)
{
	for (int tick = 0; tick <= SLOT_WAIT_SECONDS * 10; tick++) {
		for (unsigned i = 0; i < n; i++)
			if (fds[i] >= 0 && flock(fds[i], LOCK_EX | LOCK_NB) == 0)
				return true;
		usleep(100000);
	}
	return false;
}

/* The analysis, written: the JSON to the report's file, a journal entry.
 * Returns the exit code. */
static int analyze_and_report(const struct coredump_config *cfg, const struct crash *c, int core_fd,
			      const char *core_name, FILE *sidecar, const char *sidecar_name, const char *cache)
{
	struct analysis_options opt = { .py = { .max_repr = 256, .max_items = 1000, .max_depth = 32,
						.timeout = 60, .locals = cfg->locals } };
	opt.files.debug_cache = cache;
	opt.redact = cfg->redact;
	opt.coredump = c->facts;
	struct analysis *a;
	struct pc_error *e = analysis_run_fd(core_fd, core_name, &opt, &a);
	if (e) {
		int bad = report_json_error_write(sidecar, core_name, pc_code_hook_name(e->code), e);
		char *why = NULL;
		if (asprintf(&why, "cannot analyze the core: %s", e->message) < 0)
			why = NULL;
		journal_note(c, core_name, 3, why ? why : "cannot analyze the core");
		free(why);
		pc_error_free(e);
		return bad || fclose(sidecar) != 0 ? 1 : 0;
	}
	const struct model_report *r = analysis_report(a);
	int rc = report_json_write(sidecar, r, false) != 0;
	if (fclose(sidecar) != 0)
		rc = 1;
	if (rc)
		fprintf(stderr, "pycore: coredump: cannot write %s\n", sidecar_name);
	char *text = NULL;
	size_t text_len = 0;
	FILE *t = open_memstream(&text, &text_len);
	if (t) {
		report_text_write(t, r);
		fclose(t);
	}
	if (text && text_len > JOURNAL_TEXT_MAX)
		strcpy(text + JOURNAL_TEXT_MAX - 64, "\n(cut here: the whole report is in PYCORE_REPORT's file)\n");
	struct report_summary s;
	report_summary(r, &s);
	char *summary = escaped(s.text ? s.text : "(no summary)"), *comm = escaped(c->comm);
	char *name = escaped(core_name);
	sd_journal_send("MESSAGE_ID=" PYCORE_MESSAGE_ID, "PRIORITY=%d", 4,
			"MESSAGE=Python process %lld (%s) crashed: %s", (long long)c->pid, comm ? comm : "?",
			summary ? summary : "?",
			"COREDUMP_PID=%lld", (long long)c->pid, "COREDUMP_FILENAME=%s", name ? name : "",
			"COREDUMP_EXE=%s", c->exe ? c->exe : "", "PYCORE_REPORT=%s", sidecar_name,
			"PYCORE_FINGERPRINT=%s", r->fingerprint ? r->fingerprint->hash : "",
			"PYCORE_RESULT=%s", model_report_incomplete(r) ? "incomplete" : "complete",
			"PYCORE_TEXT=%s", text ? text : "", NULL);
	report_summary_free(&s);
	free(summary);
	free(comm);
	free(name);
	free(text);
	analysis_free(a);
	return rc;
}

/* ------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------ */

static bool valid_instance(const char *s)
{
	/* systemd's per-connection instance: NUMBER-PID-UID */
	int parts = 1;
	if (!*s || strlen(s) > 64)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '-' && p != s && p[1] && p[-1] != '-')
			parts++;
		else if (*p < '0' || *p > '9')
			return false;
	}
	return parts == 3;
}

static bool wanted(const struct coredump_config *cfg, const struct crash *c)
{
	for (char **g = cfg->executables; g && *g; g++)
		if ((c->exe && fnmatch(*g, c->exe, 0) == 0) || (c->comm && fnmatch(*g, c->comm, 0) == 0))
			return true;
	return false;
}

/* Whether the crash is Python's: names first, then the mapped files
 * (systemd's COREDUMP_PROC_MAPS, else the core's NT_FILE note).  Never parses more than PREFIX_MAX bytes. */
static bool is_python(sd_journal *j, const struct crash *c)
{
	if (name_is_python(c->comm) || name_is_python(c->exe))
		return true;
	if (c->maps_known)
		return c->maps_python;
	uint8_t *p = NULL;
	size_t n = c->in_journal ? journal_prefix(j, &p) : c->path ? read_prefix(c->path, &p) : 0;
	bool yes = n && prefix_maps_python(p, n);
	free(p);
	return yes;
}

static const char usage[] = "usage: pycore coredump [--config FILE] INSTANCE";

int coredump_main(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *config = NULL;
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:c:h", opts, NULL)) != -1) {
		if (ch == 'c') {
			config = optarg;
		} else if (ch == 'h') {
			printf("%s\n(man pycore, \"COREDUMP HOOK\")\n", usage);
			return fflush(stdout) == 0 ? 0 : 1;
		} else {
			fprintf(stderr, "pycore: coredump: bad option '%s' (%s)\n", argv[optind - 1], usage);
			return 2;
		}
	}
	if (optind != argc - 1 || !valid_instance(argv[optind])) {
		fprintf(stderr, "pycore: coredump: %s (%s)\n",
			optind == argc - 1 ? "INSTANCE is systemd-coredump@.service's instance, NUMBER-PID-UID"
			: "one INSTANCE needed", usage);
		return 2;
	}
	const char *instance = argv[optind];
	struct coredump_config cfg;
	char *err;
	if (coredump_config_load(config ? config : DEFAULT_CONFIG, config != NULL, &cfg, &err) != 0) {
		fprintf(stderr, "pycore: coredump: %s\n", err ? err : "out of memory");
		free(err);
		coredump_config_free(&cfg);
		return 2;
	}
	if (!cfg.debuginfod)
		unsetenv("DEBUGINFOD_URLS");

	struct crash c = { .pid = -1 };
	sd_journal *j = NULL;
	int rc = 0, core_fd = -1, *slots = NULL;
	char *sidecar_name = NULL, *journal_name = NULL, *cache = NULL;
	FILE *sidecar = NULL;
	if (find_in_journal(instance, &j, &c) != 0) {
		crash_free(&c);
		c = (struct crash){ .pid = -1 };
		if (find_file(&c) != 0) {
			fprintf(stderr, "pycore: coredump: %s: no crash found, neither in the journal nor in %s\n",
				instance, COREDUMP_DIR);
			rc = 1;
			goto out;
		}
	}
	if (!c.path && asprintf(&journal_name, "journal:%s", c.cursor ? c.cursor : "?") < 0)
		journal_name = NULL;
	const char *core_name = c.path ? c.path : journal_name ? journal_name : "journal";
	/* systemd-coredump stores its files in one place, named core.*: an
	 * entry naming another file is not its (anyone may log an entry) */
	if (c.path && (strncmp(c.path, COREDUMP_DIR "/core.", sizeof(COREDUMP_DIR "/core.") - 1) != 0 ||
		       strstr(c.path, "/../") || strchr(c.path + sizeof(COREDUMP_DIR), '/'))) {
		char *name = escaped(c.path);
		fprintf(stderr, "pycore: coredump: %s is not a core file of systemd-coredump's: not opened\n",
			name ? name : "?");
		free(name);
		rc = 1;
		goto out;
	}
	if (!c.path && !c.in_journal) {
		journal_note(&c, "", 6, "systemd-coredump stored no core (Storage=none, or over its size limits)");
		goto out;
	}
	if (strcmp(basename_of(c.exe), "pycore") == 0 || (c.comm && strcmp(c.comm, "pycore") == 0)) {
		fprintf(stderr, "pycore: coredump: process %lld is pycore itself: not analyzed\n", (long long)c.pid);
		goto out;
	}
	if (cfg.executables ? !wanted(&cfg, &c) : !is_python(j, &c)) {
		char *comm = escaped(c.comm);
		fprintf(stderr, "pycore: coredump: process %lld (%s): %s: skipped\n", (long long)c.pid,
			comm ? comm : "?", cfg.executables ? "not in Executables=" : "not Python");
		free(comm);
		goto out;
	}
	/* the core, opened as root */
	if (c.in_journal) {
		bool too_big;
		core_fd = journal_core(j, cfg.max_core_size, &too_big);
		if (core_fd < 0) {
			journal_note(&c, core_name, too_big ? 6 : 3, too_big ? "the core is larger than MaxCoreSize: skipped"
				     : "cannot read the core from the journal");
			rc = too_big ? 0 : 1;
			goto out;
		}
	} else {
		core_fd = open(c.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (core_fd < 0) {
			char *why = NULL;
			if (asprintf(&why, "cannot open the core: %s", strerror(errno)) < 0)
				why = NULL;
			journal_note(&c, core_name, 3, why ? why : "cannot open the core");
			free(why);
			rc = 1;
			goto out;
		}
		/* user.* attributes need read permission: read them now */
		dump_coredump_free(c.facts);
		c.facts = dump_coredump_read(core_fd);
		if (core_size(core_fd) > cfg.max_core_size) {
			journal_note(&c, core_name, 6, "the core is larger than MaxCoreSize: skipped");
			goto out;
		}
	}
	/* the report's file, created as root: a second run finds it there */
	sidecar_name = sidecar_path(&cfg, &c);
	struct stat st;
	if (sidecar_name && lstat(sidecar_name, &st) == 0) {
		fprintf(stderr, "pycore: coredump: %s exists: this crash was analyzed already\n", sidecar_name);
		goto out;
	}
	if (rate_limited(&cfg, c.exe)) {
		journal_note(&c, core_name, 6, "over the rate limit for this executable (RateLimitBurst=): skipped");
		goto out;
	}
	int sfd = sidecar_name ? open(sidecar_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640) : -1;
	if (sfd < 0 && errno == EEXIST) {
		fprintf(stderr, "pycore: coredump: %s exists: this crash was analyzed already\n", sidecar_name);
		goto out;
	}
	if (sfd < 0 || !(sidecar = fdopen(sfd, "w"))) {
		fprintf(stderr, "pycore: coredump: cannot create %s: %s\n", sidecar_name ? sidecar_name : "the report",
			strerror(errno));
		if (sfd >= 0)
			close(sfd);
		rc = 1;
		goto out;
	}
	/* the slots, opened as root, taken as the user */
	char *rundir = state_dir("RUNTIME_DIRECTORY", "/run/pycore");
	slots = malloc(cfg.max_concurrent * sizeof(*slots));
	for (unsigned i = 0; slots && i < cfg.max_concurrent; i++) {
		char *p = NULL;
		slots[i] = rundir && asprintf(&p, "%s/slot.%u", rundir, i) >= 0
			   ? open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
		free(p);
	}
	free(rundir);
	sd_journal_close(j);
	j = NULL;
	cache = hook_debug_cache(cfg.user);
	if (drop_privileges(cfg.user) != 0) {
		struct pc_error e = { .code = PC_ENOTANALYZED, .message = (char *)"privileges could not be dropped" };
		report_json_error_write(sidecar, core_name, NULL, &e);
		rc = 1;
		goto out;
	}
	if (!slots || !take_slot(slots, cfg.max_concurrent)) {
		journal_note(&c, core_name, 6, "MaxConcurrent= analyses were running for 60 s: skipped");
		struct pc_error e = { .code = PC_EBUSY,
				      .message = (char *)"skipped: MaxConcurrent= analyses were running for 60 s" };
		report_json_error_write(sidecar, core_name, NULL, &e);
		goto out;
	}
	rc = analyze_and_report(&cfg, &c, core_fd, core_name, sidecar, sidecar_name, cache);
	sidecar = NULL;
out:
	if (sidecar)
		fclose(sidecar);
	if (slots)
		for (unsigned i = 0; i < cfg.max_concurrent; i++)
			if (slots[i] >= 0)
				close(slots[i]);
	free(slots);
	if (core_fd >= 0)
		close(core_fd);
	free(sidecar_name);
	free(journal_name);
	free(cache);
	if (j)
		sd_journal_close(j);
	crash_free(&c);
	coredump_config_free(&cfg);
	return rc;
}

#endif
