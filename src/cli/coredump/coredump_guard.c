/* pycore coredump, steps 3 to 5: the limits (MaxCoreSize, the
 * per-executable rate limit, MaxConcurrent's slots) and the drop from root
 * to User= for good. */
#include "cli/coredump/coredump_int.h"

#ifdef HAVE_LIBSYSTEMD

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "util/hash.h"

/* A directory the unit gave ($NAME, its first entry), else FALLBACK,
 * made if missing.  malloc'd, or NULL. */
char *hook_state_dir(const char *name, const char *fallback)
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
bool hook_rate_limited(const struct coredump_config *cfg, const char *exe)
{
	if (cfg->ratelimit_interval == 0 || cfg->ratelimit_burst == 0)
		return false;
	char *dir = hook_state_dir("STATE_DIRECTORY", "/var/lib/pycore"), *path = NULL;
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
uint64_t hook_core_size(int fd)
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
char *hook_debug_cache(const char *user)
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

/* Become USER (else nobody) for good: no groups, its gid, its uid, and
 * proof that root cannot be had back.  0, or -1 with the reason on
 * standard error. */
int hook_drop_privileges(const char *user)
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

/* Wait up to SLOT_WAIT_SECONDS for one of the N slots (files open at FDS)
 * to be free; true when this process holds one. */
bool hook_take_slot(const int *fds, unsigned n)
{
	for (int tick = 0; tick <= SLOT_WAIT_SECONDS * 10; tick++) {
		for (unsigned i = 0; i < n; i++)
			if (fds[i] >= 0 && flock(fds[i], LOCK_EX | LOCK_NB) == 0)
				return true;
		usleep(100000);
	}
	return false;
}

#endif
