/*
 * os_linux.c: the platform layer on Linux (os.h): epoll for the loop,
 * an eventfd for wakeups, a signalfd for signals, SOCK_CLOEXEC and
 * SOCK_NONBLOCK at socket(2), IP_MTU_DISCOVER for DF, sync_file_range,
 * /proc/self/fd to close what a child inherits.  The portable build
 * takes os_posix.c instead; both give the same answers.  Any thread; a
 * poller is its loop's.
 */
#define _GNU_SOURCE             /* sync_file_range */
#include <errno.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include "lib/os.h"

const char os_backend[] = "epoll";
const int os_has_df = 1;

/* The poller. */

struct os_poller {
	int ep;
};

struct os_poller *
os_poller_new(void)
{
	struct os_poller *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	if ((p->ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		free(p);
		return NULL;
	}
	return p;
}

void
os_poller_free(struct os_poller *p)
{
	if (p == NULL)
		return;
	close(p->ep);
	free(p);
}

static uint32_t
os_to_epoll(uint32_t events)
{
	return ((events & OS_IN) ? EPOLLIN : 0u) |
	    ((events & OS_OUT) ? EPOLLOUT : 0u) |
	    ((events & OS_HUP) ? EPOLLRDHUP : 0u);
}

static uint32_t
os_from_epoll(uint32_t events)
{
	return ((events & EPOLLIN) ? OS_IN : 0u) |
	    ((events & EPOLLOUT) ? OS_OUT : 0u) |
	    ((events & EPOLLRDHUP) ? OS_HUP : 0u) |
	    ((events & (EPOLLERR | EPOLLHUP)) ? OS_ERR : 0u);
}

static int
os_poller_ctl(struct os_poller *p, int op, int fd, uint32_t events,
    void *ptr)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = os_to_epoll(events);
	ev.data.ptr = ptr;
	return epoll_ctl(p->ep, op, fd, &ev);
}

int
os_poller_add(struct os_poller *p, int fd, uint32_t events, void *ptr)
{
	return os_poller_ctl(p, EPOLL_CTL_ADD, fd, events, ptr);
}

int
os_poller_mod(struct os_poller *p, int fd, uint32_t events, void *ptr)
{
	return os_poller_ctl(p, EPOLL_CTL_MOD, fd, events, ptr);
}

void
os_poller_del(struct os_poller *p, int fd)
{
	epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
}

int
os_poller_once(struct os_poller *p, int fd, uint32_t events)
{
	(void)p;
	(void)fd;
	(void)events;
	errno = ENOSYS;
	return -1;
}

int
os_poller_wait(struct os_poller *p, struct os_event *evs, int max,
    int timeout_ms)
{
	struct epoll_event e[64];
	int n;

	if (max > 64)
		max = 64;
	if ((n = epoll_wait(p->ep, e, max, timeout_ms)) == -1)
		return -1;
	for (int i = 0; i < n; i++) {
		evs[i].ptr = e[i].data.ptr;
		evs[i].events = os_from_epoll(e[i].events);
	}
	return n;
}

/* Wakeups: one eventfd, read and written; its counter coalesces them. */

int
os_wake_new(int fd[2])
{
	if ((fd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		return -1;
	fd[1] = fd[0];
	return 0;
}

void
os_wake_free(int fd[2])
{
	if (fd[0] != -1)
		close(fd[0]);
	fd[0] = fd[1] = -1;
}

void
os_wake_post(const int fd[2])
{
	uint64_t one = 1;

	/* The counter cannot overflow from wakeups: the write fails only on
	 * a bad fd. */
	while (write(fd[1], &one, sizeof(one)) == -1 && errno == EINTR)
		;
}

void
os_wake_drain(const int fd[2])
{
	uint64_t n;

	while (read(fd[0], &n, sizeof(n)) == -1 && errno == EINTR)
		;
}

/* Signals: blocked in every thread, read from a signalfd. */

struct os_signals {
	int fd;
};

struct os_signals *
os_signals_new(const int *sigs, int n)
{
	struct os_signals *s = calloc(1, sizeof(*s));
	sigset_t set;

	if (s == NULL)
		return NULL;
	sigemptyset(&set);
	for (int i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	if ((errno = pthread_sigmask(SIG_BLOCK, &set, NULL)) != 0 ||
	    (s->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		free(s);
		return NULL;
	}
	return s;
}

void
os_signals_free(struct os_signals *s)
{
	if (s == NULL)
		return;
	close(s->fd);
	free(s);
}

int
os_signals_fd(const struct os_signals *s)
{
	return s->fd;
}

int
os_signals_next(struct os_signals *s)
{
	struct signalfd_siginfo si;

	if (read(s->fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

/* Sockets. */

int
os_socket(int domain, int type, int protocol, int flags)
{
	return socket(domain, type | SOCK_CLOEXEC |
	    ((flags & OS_NONBLOCK) ? SOCK_NONBLOCK : 0), protocol);
}

int
os_cloexec(int fd)
{
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/*
 * PROBE: DF on every datagram, and the kernel's path MTU estimate
 * neither cuts a larger datagram nor refuses it; OMIT: no DF, for
 * datagrams larger than a path must carry whole.  The option is the
 * socket's: Linux has no per-datagram DF for IPv4.
 */
int
os_udp_df(int fd, int family, int df)
{
	int v;

	if (family == AF_INET6) {
		v = df ? IPV6_PMTUDISC_PROBE : IPV6_PMTUDISC_OMIT;
		return setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v,
		    sizeof(v));
	}
	v = df ? IP_PMTUDISC_PROBE : IP_PMTUDISC_OMIT;
	return setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
}

void
os_rcvbuf(int fd, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes,
	    sizeof(bytes)) == -1)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

/* Files. */

void
os_write_start(int fd, off_t off, off_t len)
{
	sync_file_range(fd, off, len, SYNC_FILE_RANGE_WRITE);
}

/* The process. */

/* Only the descriptors open, not every number up to the limit (which
 * serve raises to the hard one, a million on some systems). */
void
os_close_from(int lowfd)
{
	struct dirent *d;
	DIR *dir;
	int fd, self;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return;
	self = dirfd(dir);
	while ((d = readdir(dir)) != NULL) {
		fd = atoi(d->d_name);
		if (fd >= lowfd && fd != self)
			close(fd);
	}
	closedir(dir);
}
