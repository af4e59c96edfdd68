/* systemd-coredump's extended attributes on the core file it stores.
 * Names from systemd's src/coredump/coredump.c (xattr_tab, version 252):
 * user.coredump.{pid,uid,gid,signal,timestamp,rlimit,hostname,comm,exe},
 * each value a string without its NUL; the timestamp in microseconds.
 * Read from the open file (fgetxattr), never by path: the file is the one
 * mapped.  The values are whatever the crashed process's name was: they
 * are bounded here and escaped by the renderers. */
#include "dump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

/* The attribute NAME of FD into BUF (DUMP_XATTR_MAX + 1 bytes), cut at
 * its first NUL: its length, or -1 when absent or too long. */
static ssize_t get(int fd, const char *name, char *buf)
{
	ssize_t n = fgetxattr(fd, name, buf, DUMP_XATTR_MAX);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (ssize_t)strlen(buf);
}

static char *get_str(int fd, const char *name, char *buf, bool *any)
{
	if (get(fd, name, buf) < 0)
		return NULL;
	*any = true;
	return strdup(buf);
}

/* A whole decimal number, else -1. */
static int64_t get_num(int fd, const char *name, char *buf, bool *any)
{
	ssize_t n = get(fd, name, buf);
	if (n <= 0 || n > 19)
		return -1;
	*any = true;
	int64_t v = 0;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		v = v * 10 + (buf[i] - '0');
	}
	return v;
}

struct dump_coredump *dump_coredump_read(int fd)
{
	char buf[DUMP_XATTR_MAX + 1];
	/* most files have none: one call says so */
	if (fgetxattr(fd, "user.coredump.pid", NULL, 0) < 0 && fgetxattr(fd, "user.coredump.exe", NULL, 0) < 0)
		return NULL;
	struct dump_coredump *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	bool any = false;
	c->pid = get_num(fd, "user.coredump.pid", buf, &any);
	c->uid = get_num(fd, "user.coredump.uid", buf, &any);
	c->gid = get_num(fd, "user.coredump.gid", buf, &any);
	c->signal = get_num(fd, "user.coredump.signal", buf, &any);
	c->timestamp = get_num(fd, "user.coredump.timestamp", buf, &any);
	/* systemd writes RLIM_INFINITY as 18446744073709551615 */
	c->rlimit = UINT64_MAX;
	if (get(fd, "user.coredump.rlimit", buf) > 0) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(buf, &end, 10);
		if (!*end && !errno && buf[0] >= '0' && buf[0] <= '9')
			c->rlimit = v;
		any = true;
	}
	c->hostname = get_str(fd, "user.coredump.hostname", buf, &any);
	c->comm = get_str(fd, "user.coredump.comm", buf, &any);
	c->exe = get_str(fd, "user.coredump.exe", buf, &any);
	if (!any) {
		dump_coredump_free(c);
		return NULL;
	}
	return c;
}

void dump_coredump_free(struct dump_coredump *c)
{
	if (!c)
		return;
	free(c->comm);
	free(c->exe);
	free(c->hostname);
	free(c);
}
