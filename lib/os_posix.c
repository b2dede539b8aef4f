/*
 * os_posix.c: the platform layer's portable fallbacks (os.h), built with
 * PAPO_PORTABLE: poll(2) for the loop, a pipe for wakeups, a self-pipe
 * for signals, fcntl after socket(2), and no DF option nor early
 * write-back (POSIX has neither).  The suite runs on them under Linux
 * too, so they are kept honest where a port would start from them.  Any
 * thread; a poller is its loop's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/os.h"

const char os_backend[] = "poll";
const int os_has_df = 0;

/* The poller: one pollfd per watched descriptor, those of a single wait
 * (os_poller_once) after them. */

struct os_poller {
	struct pollfd *pfd;
	void **ptr;
	uint32_t *want;             /* OS_* asked, per watched descriptor */
	int n;                      /* watched */
	int once;                   /* after them, for the next wait only */
	int cap;
	int next;                   /* where the next wait's report starts */
};

struct os_poller *
os_poller_new(void)
{
	return calloc(1, sizeof(struct os_poller));
}

void
os_poller_free(struct os_poller *p)
{
	if (p == NULL)
		return;
	free(p->pfd);
	free(p->ptr);
	free(p->want);
	free(p);
}

static int
os_poller_grow(struct os_poller *p)
{
	int cap = p->cap == 0 ? 16 : p->cap * 2;
	struct pollfd *pfd;
	void **ptr;
	uint32_t *want;

	if (p->n + p->once < p->cap)
		return 0;
	if ((pfd = realloc(p->pfd, (size_t)cap * sizeof(*pfd))) == NULL)
		return -1;
	p->pfd = pfd;
	if ((ptr = realloc(p->ptr, (size_t)cap * sizeof(*ptr))) == NULL)
		return -1;
	p->ptr = ptr;
	if ((want = realloc(p->want, (size_t)cap * sizeof(*want))) == NULL)
		return -1;
	p->want = want;
	p->cap = cap;
	return 0;
}

/*
 * poll has no event for a peer's half-close (POLLRDHUP is Linux's): a
 * descriptor watched for OS_HUP alone is polled for POLLIN, and a byte
 * peeked tells an end (0) from data.  Once data came, POLLIN is no
 * longer asked (it would be ready at every wait until someone reads):
 * only a full hang-up or an error is reported after.
 */
static short
os_to_poll(uint32_t want)
{
	return (short)(((want & (OS_IN | OS_HUP)) ? POLLIN : 0) |
	    ((want & OS_OUT) ? POLLOUT : 0));
}

static int
os_poller_find(const struct os_poller *p, int fd)
{
	for (int i = 0; i < p->n; i++)
		if (p->pfd[i].fd == fd)
			return i;
	return -1;
}

int
os_poller_add(struct os_poller *p, int fd, uint32_t events, void *ptr)
{
	int i;

	if (os_poller_find(p, fd) != -1) {
		errno = EEXIST;
		return -1;
	}
	if (os_poller_grow(p) == -1) {
		errno = ENOMEM;
		return -1;
	}
	i = p->n++;
	/* A pending single wait's first entry moves behind the others. */
	if (p->once > 0)
		p->pfd[i + p->once] = p->pfd[i];
	p->pfd[i].fd = fd;
	p->pfd[i].events = os_to_poll(events);
	p->pfd[i].revents = 0;
	p->ptr[i] = ptr;
	p->want[i] = events;
	return 0;
}

int
os_poller_mod(struct os_poller *p, int fd, uint32_t events, void *ptr)
{
	int i = os_poller_find(p, fd);

	if (i == -1) {
		errno = ENOENT;
		return -1;
	}
	p->pfd[i].events = os_to_poll(events);
	p->ptr[i] = ptr;
	p->want[i] = events;
	return 0;
}

void
os_poller_del(struct os_poller *p, int fd)
{
	int i = os_poller_find(p, fd), last;

	if (i == -1)
		return;
	last = --p->n;
	p->pfd[i] = p->pfd[last];
	p->ptr[i] = p->ptr[last];
	p->want[i] = p->want[last];
	if (p->once > 0)
		p->pfd[last] = p->pfd[last + p->once];
}

int
os_poller_once(struct os_poller *p, int fd, uint32_t events)
{
	if (os_poller_grow(p) == -1) {
		errno = ENOMEM;
		return -1;
	}
	p->pfd[p->n + p->once].fd = fd;
	p->pfd[p->n + p->once].events = os_to_poll(events);
	p->pfd[p->n + p->once].revents = 0;
	p->once++;
	return 0;
}

/* What came on watched entry i, OS_HUP told from data by a peek. */
static uint32_t
os_poller_got(struct os_poller *p, int i)
{
	short r = p->pfd[i].revents;
	uint32_t ev = 0;
	char c;

	if (r & (POLLERR | POLLHUP | POLLNVAL))
		ev |= OS_ERR;
	if (r & POLLOUT)
		ev |= OS_OUT;
	if ((r & POLLIN) && (p->want[i] & OS_IN))
		ev |= OS_IN;
	else if (r & POLLIN) {
		ssize_t k = recv(p->pfd[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

		if (k == 0)
			ev |= OS_HUP;
		else if (k > 0)
			p->pfd[i].events &= (short)~POLLIN;
		else if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			ev |= OS_ERR;
	}
	return ev & (p->want[i] | OS_ERR);
}

int
os_poller_wait(struct os_poller *p, struct os_event *evs, int max,
    int timeout_ms)
{
	int n, k = 0, total = p->n + p->once, start;
	uint32_t once = 0;

	n = poll(p->pfd, (nfds_t)total, timeout_ms);
	for (int i = p->n; n > 0 && i < total; i++)
		if (p->pfd[i].revents != 0)
			once |= OS_IN;
	p->once = 0;
	if (n == -1)
		return -1;
	if (once != 0)
		evs[k++] = (struct os_event){ NULL, once };
	/* Level-triggered: what does not fit in evs is reported at the next
	 * wait, which starts where this one stopped, so that no descriptor
	 * waits behind the same first ones for ever. */
	start = p->next < p->n ? p->next : 0;
	for (int j = 0; n > 0 && j < p->n && k < max; j++) {
		int i = (start + j) % p->n;
		uint32_t ev;

		if (p->pfd[i].revents == 0 || (ev = os_poller_got(p, i)) == 0)
			continue;
		evs[k++] = (struct os_event){ p->ptr[i], ev };
		p->next = i + 1;
	}
	return k;
}

/* Wakeups: a pipe; a full one already says "wake up". */

int
os_wake_new(int fd[2])
{
	if (pipe(fd) == -1)
		return -1;
	for (int i = 0; i < 2; i++)
		if (fcntl(fd[i], F_SETFD, FD_CLOEXEC) == -1 ||
		    fcntl(fd[i], F_SETFL, O_NONBLOCK) == -1) {
			close(fd[0]);
			close(fd[1]);
			fd[0] = fd[1] = -1;
			return -1;
		}
	return 0;
}

void
os_wake_free(int fd[2])
{
	if (fd[0] != -1)
		close(fd[0]);
	if (fd[1] != -1 && fd[1] != fd[0])
		close(fd[1]);
	fd[0] = fd[1] = -1;
}

void
os_wake_post(const int fd[2])
{
	char c = 1;

	/* EAGAIN: the pipe is full of wakeups not yet read, as good. */
	while (write(fd[1], &c, 1) == -1 && errno == EINTR)
		;
}

void
os_wake_drain(const int fd[2])
{
	char buf[256];
	ssize_t n;

	while ((n = read(fd[0], buf, sizeof(buf))) > 0 ||
	    (n == -1 && errno == EINTR))
		;
}

/*
 * Signals: a self-pipe.  The handler must find the pipe without an
 * argument, hence the one static variable of papo's own, set once
 * before the first handler is installed.  The signals are left unblocked:
 * whichever thread the handler interrupts writes the same byte, and
 * SA_RESTART resumes what it interrupted.
 */

static int os_sig_pipe = -1;

struct os_signals {
	int fd[2];
};

static void
os_sig_handler(int sig)
{
	int e = errno;
	unsigned char c = (unsigned char)sig;

	(void)!write(os_sig_pipe, &c, 1);
	errno = e;
}

struct os_signals *
os_signals_new(const int *sigs, int n)
{
	struct os_signals *s = calloc(1, sizeof(*s));
	struct sigaction sa;

	if (s == NULL)
		return NULL;
	if (os_wake_new(s->fd) == -1) {
		free(s);
		return NULL;
	}
	os_sig_pipe = s->fd[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = os_sig_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < n; i++)
		if (sigaction(sigs[i], &sa, NULL) == -1) {
			os_signals_free(s);
			return NULL;
		}
	return s;
}

/* The handlers stay (a signal during the stop must not kill the process
 * halfway); their writes go nowhere once the pipe is closed. */
void
os_signals_free(struct os_signals *s)
{
	if (s == NULL)
		return;
	os_sig_pipe = -1;
	os_wake_free(s->fd);
	free(s);
}

int
os_signals_fd(const struct os_signals *s)
{
	return s->fd[0];
}

int
os_signals_next(struct os_signals *s)
{
	unsigned char c;

	if (read(s->fd[0], &c, 1) != 1)
		return 0;
	return c;
}

/* Sockets. */

int
os_socket(int domain, int type, int protocol, int flags)
{
	int fd = socket(domain, type, protocol);

	if (fd == -1)
		return -1;
	if (os_cloexec(fd) == -1 || ((flags & OS_NONBLOCK) &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
os_cloexec(int fd)
{
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* POSIX names no DF option: datagrams leave as the system sends them
 * (a port adds IP_DONTFRAG here). */
int
os_udp_df(int fd, int family, int df)
{
	(void)fd;
	(void)family;
	(void)df;
	errno = ENOPROTOOPT;
	return -1;
}

void
os_rcvbuf(int fd, int bytes)
{
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

/* Files: the commit's fdatasync does it all. */

void
os_write_start(int fd, off_t off, off_t len)
{
	(void)fd;
	(void)off;
	(void)len;
}

/* Every number up to the limit, capped: without a list of the open
 * ones, closing a million numbers would take a noticeable while. */
void
os_close_from(int lowfd)
{
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lowfd; fd < max; fd++)
		close(fd);
}
