/* pycore batch's warm processes (batch_warm.h): the warm process's loop,
 * and the messages both sides send. */
#include "cli/batch/batch_warm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PATH_MSG 8192

/* FLAGS: MSG_DONTWAIT for the batch, which never waits on a warm process
 * (one that is stopped, or slow, gets no more dumps: they go cold). */
static int send_msg(int ctl, const struct warm_msg *m, const char *path, int fd, int flags)
{
	char buf[sizeof(*m) + MAX_PATH_MSG];
	size_t len = sizeof(*m), plen = path ? strlen(path) : 0;
	if (plen > MAX_PATH_MSG) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, m, sizeof(*m));
	if (plen)
		memcpy(buf + len, path, plen);
	len += plen;
	struct iovec iov = { buf, len };
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } c;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		mh.msg_control = c.b;
		mh.msg_controllen = sizeof(c.b);
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof(int));
	}
	ssize_t r;
	while ((r = sendmsg(ctl, &mh, MSG_NOSIGNAL | flags)) < 0 && errno == EINTR)
		;
	return r == (ssize_t)len ? 0 : -1;
}

/* One message: 1 (*PATH malloc'd when one came, *FD when one came, else
 * -1), 0 at end, -1 an error or nothing yet. */
static int recv_msg(int ctl, struct warm_msg *m, char **path, int *fd)
{
	char buf[sizeof(*m) + MAX_PATH_MSG + 1];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } c;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b) };
	ssize_t r;
	while ((r = recvmsg(ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (fd)
		*fd = -1;
	if (path)
		*path = NULL;
	for (struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&mh) : NULL; h; h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len < CMSG_LEN(sizeof(int)))
			continue;
		int got;
		memcpy(&got, CMSG_DATA(h), sizeof(int));
		if (fd && *fd < 0)
			*fd = got;
		else
			close(got);
	}
	if (r == 0)
		return 0;
	if (r < (ssize_t)sizeof(*m)) {
		if (fd && *fd >= 0)
			close(*fd);
		return -1;
	}
	memcpy(m, buf, sizeof(*m));
	if (path && r > (ssize_t)sizeof(*m)) {
		buf[r] = '\0';
		*path = strdup(buf + sizeof(*m));
	}
	return 1;
}

int warm_send_start(int ctl, size_t item, const char *path, int fd)
{
	struct warm_msg m = { WARM_START, (uint32_t)item, 0 };
	return send_msg(ctl, &m, path, fd, MSG_DONTWAIT);
}

int warm_send_kill(int ctl, size_t item)
{
	struct warm_msg m = { WARM_KILL, (uint32_t)item, 0 };
	return send_msg(ctl, &m, NULL, -1, MSG_DONTWAIT);
}

int warm_recv(int ctl, struct warm_msg *m)
{
	return recv_msg(ctl, m, NULL, NULL);
}

size_t warm_resident(pid_t pid)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%ld/statm", (long)pid);
	FILE *f = fopen(name, "r");
	unsigned long size, resident;
	int n = f ? fscanf(f, "%lu %lu", &size, &resident) : 0;
	if (f)
		fclose(f);
	long page = sysconf(_SC_PAGESIZE);
	return n == 2 && page > 0 ? (size_t)resident * (size_t)page : 0;
}

/* ---- the warm process ---- */

struct child {
	pid_t pid;
	uint32_t item;
};

static int chld_pipe[2] = { -1, -1 };

static void on_chld(int sig)
{
	(void)sig;
	int e = errno;
	ssize_t r = write(chld_pipe[1], "x", 1);
	(void)r;
	errno = e;
}

static void start_worker(int ctl, const struct warm_msg *m, char *path, int fd, struct child **kids, size_t *n,
			 warm_analyze_fn fn, void *arg)
{
	struct child *k = realloc(*kids, (*n + 1) * sizeof(**kids));
	pid_t me = getpid(), pid = k && path && fd >= 0 ? fork() : -1;
	if (k)
		*kids = k;
	if (pid == 0) {
		signal(SIGCHLD, SIG_DFL);
		close(chld_pipe[0]);
		close(chld_pipe[1]);
		close(ctl);
		/* a worker outlives neither its warm process nor the batch */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(127);
		_exit(fn(path, fd, arg));
	}
	int err = errno;
	if (fd >= 0)
		close(fd);
	free(path);
	if (pid < 0) {
		struct warm_msg no = { WARM_NOFORK, m->item, k && path ? err : ENOMEM };
		send_msg(ctl, &no, NULL, -1, 0);
		return;
	}
	(*kids)[(*n)++] = (struct child){ pid, m->item };
}

void warm_serve(int ctl, int rc, warm_analyze_fn fn, void (*tidy)(void *arg), void *arg)
{
	struct warm_msg done = { WARM_DONE, 0, rc << 8 };
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0 || send_msg(ctl, &done, NULL, -1, 0) != 0)
		_exit(0);
	struct sigaction sa = { .sa_handler = on_chld, .sa_flags = SA_RESTART | SA_NOCLDSTOP };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	struct child *kids = NULL;
	size_t n = 0;
	bool open = true;
	while (open || n) {
		struct pollfd pfd[2] = { { chld_pipe[0], POLLIN, 0 }, { open ? ctl : -1, POLLIN, 0 } };
		if (poll(pfd, 2, 1000) < 0 && errno != EINTR)
			_exit(0);
		char drain[64];
		while (read(chld_pipe[0], drain, sizeof(drain)) > 0)
			;
		int status;
		pid_t pid;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (kids[i].pid != pid)
					continue;
				struct warm_msg ended = { WARM_ENDED, kids[i].item, status };
				send_msg(ctl, &ended, NULL, -1, 0);
				kids[i] = kids[--n];
				break;
			}
		}
		if (!open || !(pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct warm_msg m;
		char *path;
		int fd;
		int r = recv_msg(ctl, &m, &path, &fd);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			open = false;
		} else if (r > 0 && m.type == WARM_START) {
			if (tidy)
				tidy(arg);
			tidy = NULL;
			start_worker(ctl, &m, path, fd, &kids, &n, fn, arg);
		} else if (r > 0) {
			for (size_t i = 0; m.type == WARM_KILL && i < n; i++)
				if (kids[i].item == m.item)
					kill(kids[i].pid, SIGKILL); /* a child not yet waited for */
			free(path);
			if (fd >= 0)
				close(fd);
		}
	}
	_exit(0);
}
