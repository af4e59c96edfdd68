/* pycore coredump, step 1: the crash the instance stored, found in the
 * journal (systemd-coredump's newest entry for the instance's unit; outside
 * systemd the newest entry), else as the newest core file in
 * /var/lib/systemd/coredump; and the core copied out of its journal entry
 * when it is stored there. */
#include "cli/coredump/coredump_int.h"

#ifdef HAVE_LIBSYSTEMD

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-messages.h>

void crash_free(struct crash *c)
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
				c->maps_python = hook_name_is_python(name);
			}
			p = stop + 1;
		}
	}
}

/* The journal's entry for INSTANCE (see the top of the file); 0 found,
 * -1 not.  *J stays open on it. */
int crash_find_in_journal(const char *instance, sd_journal **jp, struct crash *c)
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
int crash_find_file(struct crash *c)
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

/* Copy the entry's COREDUMP field (at most MAX bytes) into an unlinked
 * temporary file: its descriptor, or -1 (*TOO_BIG when over MAX). */
int crash_journal_core(sd_journal *j, uint64_t max, bool *too_big)
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

#endif
