/*
 * httpc.c: a small HTTP/1.1 client (httpc.h) over one non-blocking TCP
 * socket and poll(2), each wait bounded by the request's deadlines.  It
 * sends "Connection: close" and reads one answer: its status line and
 * headers (at most HTTPC_HEAD_MAX bytes; 1xx answers skipped), then its
 * body by Content-Length, chunked, or up to the close.  Blocking, on the
 * caller's thread; it must never write to a socket without MSG_NOSIGNAL
 * (a daemon that closed early must not kill the process).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/addr.h"
#include "lib/httpc.h"
#include "lib/os.h"

#define HTTPC_IO 16384             /* bytes read or sent at once */
#define HTTPC_LINE_MAX 4096        /* bytes of a chunk's size line */

struct httpc {
	const struct httpc_req *r;
	int fd;
	long long deadline;        /* ms on the monotonic clock; 0: none */
	char *buf;                 /* what came and is not used yet: */
	size_t off, len, cap;      /* buf[off..len) */
	long status;
	int early;                 /* an answer came before the body went */
};

static long long
httpc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for one of ev: what it is ready for, or -1
 * with the end (a deadline passed). */
static int
httpc_wait(struct httpc *h, short ev, int limit_ms, enum httpc_end *end)
{
	struct pollfd p = { h->fd, ev, 0 };
	int ms = limit_ms > 0 ? limit_ms : -1, n;

	if (h->deadline != 0) {
		long long left = h->deadline - httpc_now();

		if (left <= 0) {
			*end = HTTPC_TIMEOUT;
			return -1;
		}
		if (ms == -1 || left < ms)
			ms = (int)left;
	}
	while ((n = poll(&p, 1, ms)) == -1 && errno == EINTR)
		;
	if (n == 0) {
		*end = HTTPC_TIMEOUT;
		return -1;
	}
	return n < 0 ? POLLERR : p.revents;
}

/* Connects to the URL's host and port, each of its addresses in turn. */
static enum httpc_end
httpc_connect(struct httpc *h, const char *authority, size_t n)
{
	struct addrinfo hints, *ai = NULL, *a;
	struct addr_hostport hp;
	enum httpc_end end = HTTPC_CONNECT;
	char port[8];
	int e;

	if (addr_hostport(authority, n, &hp) != ADDR_OK ||
	    hp.port == ADDR_NO_PORT)
		return HTTPC_CONNECT;
	snprintf(port, sizeof(port), "%ld", hp.port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	/* An address needs no resolver (which loads NSS's libraries): the
	 * daemon's serve.json names one.  A name is looked up. */
	if ((e = getaddrinfo(hp.host, port, &hints, &ai)) == EAI_NONAME) {
		hints.ai_flags = AI_NUMERICSERV;
		e = getaddrinfo(hp.host, port, &hints, &ai);
	}
	if (e != 0)
		return HTTPC_CONNECT;
	for (a = ai; a != NULL; a = a->ai_next) {
		socklen_t len = sizeof(e);

		h->fd = os_socket(a->ai_family, a->ai_socktype, a->ai_protocol,
		    OS_NONBLOCK);
		if (h->fd == -1)
			continue;
		if (connect(h->fd, a->ai_addr, a->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS &&
		    httpc_wait(h, POLLOUT, h->r->connect_ms, &end) != -1 &&
		    getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 &&
		    e == 0)) {
			end = HTTPC_OK;
			break;
		}
		close(h->fd);
		h->fd = -1;
		if (end == HTTPC_TIMEOUT)
			break;
	}
	freeaddrinfo(ai);
	return end;
}

/* Sends n bytes, unless the server answers first (h->early then). */
static enum httpc_end
httpc_send(struct httpc *h, const char *p, size_t n)
{
	enum httpc_end end = HTTPC_SEND;
	int ev;

	while (n > 0 && !h->early) {
		ssize_t k = send(h->fd, p, n, MSG_NOSIGNAL);

		if (k > 0) {
			p += k;
			n -= (size_t)k;
		} else if (k == -1 && errno == EINTR) {
			continue;
		} else if (k == -1 && (errno == EAGAIN ||
		    errno == EWOULDBLOCK)) {
			if ((ev = httpc_wait(h, POLLOUT | POLLIN, h->r->idle_ms,
			    &end)) == -1)
				return end;
			/* A daemon that refuses a body (too large, no
			 * credentials) answers before reading it all. */
			h->early = (ev & POLLIN) != 0 && (ev & POLLOUT) == 0;
		} else {
			return HTTPC_SEND;
		}
	}
	return HTTPC_OK;
}

/* The request line, the headers and the body. */
static enum httpc_end
httpc_request(struct httpc *h, const char *authority, size_t alen)
{
	const struct httpc_req *r = h->r;
	char head[HTTPC_IO], data[HTTPC_IO + 32];
	enum httpc_end end;
	int accept = 0, used;
	size_t at;

	at = (size_t)snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\n"
	    "Host: %.*s\r\nConnection: close\r\n", r->method, r->path,
	    (int)alen, authority);
	for (int i = 0; i < HTTPC_HEADERS_MAX && r->headers[i] != NULL; i++) {
		accept |= strncasecmp(r->headers[i], "Accept:", 7) == 0;
		if (at < sizeof(head))
			at += (size_t)snprintf(head + at, sizeof(head) - at,
			    "%s\r\n", r->headers[i]);
	}
	if (at < sizeof(head) && !accept)
		at += (size_t)snprintf(head + at, sizeof(head) - at,
		    "Accept: */*\r\n");
	if (at < sizeof(head) && r->body != NULL)
		at += (size_t)snprintf(head + at, sizeof(head) - at,
		    "Content-Length: %zu\r\n", r->body_len);
	else if (at < sizeof(head) && r->read != NULL && r->read_len >= 0)
		at += (size_t)snprintf(head + at, sizeof(head) - at,
		    "Content-Length: %lld\r\n", r->read_len);
	else if (at < sizeof(head) && r->read != NULL)
		at += (size_t)snprintf(head + at, sizeof(head) - at,
		    "Transfer-Encoding: chunked\r\n");
	if (at < sizeof(head))
		at += (size_t)snprintf(head + at, sizeof(head) - at, "\r\n");
	if (at >= sizeof(head))
		return HTTPC_SEND;
	end = httpc_send(h, head, at);
	explicit_bzero(head, sizeof(head));   /* it may hold a token */
	if (end != HTTPC_OK)
		return end;
	if (r->body != NULL)
		return httpc_send(h, r->body, r->body_len);
	if (r->read == NULL)
		return HTTPC_OK;
	for (long long sent = 0;;) {
		struct pollfd p = { h->fd, POLLIN, 0 };
		long k;

		if (h->early || (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)))
			return HTTPC_OK;    /* the answer came first */
		/* A chunk's size line before it, its CRLF after. */
		k = r->read(r->read_arg, data + 16, HTTPC_IO);

		if (k < 0)
			return HTTPC_READ;
		if (r->read_len >= 0) {
			if (k == 0)
				return sent == r->read_len ? HTTPC_OK : HTTPC_READ;
			if ((sent += k) > r->read_len)
				return HTTPC_READ;
			if ((end = httpc_send(h, data + 16, (size_t)k)) !=
			    HTTPC_OK)
				return end;
			continue;
		}
		used = snprintf(data, 16, "%lx\r\n", k);
		memmove(data + 16 - used, data, (size_t)used);
		memcpy(data + 16 + k, "\r\n", 2);
		if ((end = httpc_send(h, data + 16 - used, (size_t)(used + k +
		    2))) != HTTPC_OK || k == 0)
			return end;
	}
}

/* Reads more into buf: >0 bytes, 0 at the close, -1 with *end. */
static long
httpc_fill(struct httpc *h, enum httpc_end *end)
{
	if (h->off > 0 && h->off == h->len)
		h->off = h->len = 0;
	if (h->len == h->cap) {
		if (h->off == 0) {
			*end = HTTPC_BAD;
			return -1;
		}
		memmove(h->buf, h->buf + h->off, h->len - h->off);
		h->len -= h->off;
		h->off = 0;
	}
	for (;;) {
		ssize_t k = recv(h->fd, h->buf + h->len, h->cap - h->len, 0);

		if (k >= 0) {
			h->len += (size_t)k;
			return (long)k;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*end = HTTPC_CUT;
			return -1;
		}
		if (httpc_wait(h, POLLIN, h->r->idle_ms, end) == -1)
			return -1;
	}
}

/* A line ending in CRLF from buf, at most max bytes: where it starts
 * (NUL-terminated, the CRLF taken), or NULL with *end. */
static char *
httpc_line(struct httpc *h, size_t max, enum httpc_end *end)
{
	for (;;) {
		char *s = h->buf + h->off;
		char *nl = memchr(s, '\n', h->len - h->off);
		long k;

		if (nl != NULL) {
			if (nl > s && nl[-1] == '\r')
				nl[-1] = '\0';
			*nl = '\0';
			h->off = (size_t)(nl + 1 - h->buf);
			return s;
		}
		if (h->len - h->off > max) {
			*end = HTTPC_BAD;
			return NULL;
		}
		if ((k = httpc_fill(h, end)) <= 0) {
			if (k == 0)
				*end = HTTPC_CUT;
			return NULL;
		}
	}
}

/* Hands n bytes of buf to the caller, and takes them. */
static enum httpc_end
httpc_give(struct httpc *h, size_t n)
{
	const char *p = h->buf + h->off;

	h->off += n;
	if (h->r->on_body != NULL && n > 0 &&
	    h->r->on_body(h->r->body_arg, h->status, p, n) == -1)
		return HTTPC_STOPPED;
	return HTTPC_OK;
}

/* n bytes of body (or up to the close when n is -1). */
static enum httpc_end
httpc_body(struct httpc *h, long long n)
{
	enum httpc_end end = HTTPC_OK;

	while (n != 0) {
		size_t have = h->len - h->off;
		long k;

		if (have > 0) {
			size_t take = n < 0 || (long long)have < n ? have :
			    (size_t)n;

			if ((end = httpc_give(h, take)) != HTTPC_OK)
				return end;
			if (n > 0)
				n -= (long long)take;
			continue;
		}
		h->off = h->len = 0;
		if ((k = httpc_fill(h, &end)) == -1)
			return end;
		if (k == 0)
			return n < 0 ? HTTPC_OK : HTTPC_CUT;
	}
	return HTTPC_OK;
}

/* The answer: its head (1xx skipped), then its body as it says. */
static enum httpc_end
httpc_answer(struct httpc *h)
{
	enum httpc_end end = HTTPC_OK;
	long long length = -1;
	int chunked = 0;
	char *l;

	do {
		size_t headn;
		int minor;

		if ((l = httpc_line(h, HTTPC_HEAD_MAX, &end)) == NULL)
			return end;
		headn = strlen(l) + 2;
		if (sscanf(l, "HTTP/1.%d %3ld", &minor, &h->status) != 2 ||
		    h->status < 100 || h->status > 999)
			return HTTPC_BAD;
		length = -1;
		chunked = 0;
		while ((l = httpc_line(h, HTTPC_HEAD_MAX, &end)) != NULL &&
		    l[0] != '\0') {
			if ((headn += strlen(l) + 2) > HTTPC_HEAD_MAX)
				return HTTPC_BAD;
			if (strncasecmp(l, "Content-Length:", 15) == 0) {
				char *e;

				errno = 0;
				length = strtoll(l + 15, &e, 10);
				if (errno != 0 || length < 0)
					return HTTPC_BAD;
			} else if (strncasecmp(l, "Transfer-Encoding:", 18) == 0 &&
			    strstr(l + 18, "chunked") != NULL) {
				chunked = 1;
			}
		}
		if (l == NULL)
			return end;
	} while (h->status < 200);
	if (!chunked)
		return httpc_body(h, length);
	for (;;) {
		unsigned long long n;
		char *e;

		if ((l = httpc_line(h, HTTPC_LINE_MAX, &end)) == NULL)
			return end;
		errno = 0;
		n = strtoull(l, &e, 16);
		if (e == l || errno != 0 || n > (unsigned long long)1 << 62)
			return HTTPC_BAD;
		if (n == 0)
			break;
		if ((end = httpc_body(h, (long long)n)) != HTTPC_OK)
			return end;
		if ((l = httpc_line(h, HTTPC_LINE_MAX, &end)) == NULL)
			return end;
		if (l[0] != '\0')
			return HTTPC_BAD;
	}
	/* Trailers, up to the empty line. */
	while ((l = httpc_line(h, HTTPC_HEAD_MAX, &end)) != NULL && l[0] != '\0')
		;
	return l == NULL ? end : HTTPC_OK;
}

enum httpc_end
httpc_do(const struct httpc_req *r, long *status)
{
	struct httpc h = { r, -1, 0, NULL, 0, 0, HTTPC_HEAD_MAX, 0, 0 };
	const char *authority;
	enum httpc_end end, sent;
	size_t alen;

	*status = 0;
	if (strncmp(r->url, "http://", 7) != 0)
		return HTTPC_CONNECT;
	authority = r->url + 7;
	alen = strcspn(authority, "/");
	if (r->total_ms > 0)
		h.deadline = httpc_now() + r->total_ms;
	if ((h.buf = malloc(h.cap)) == NULL)
		return HTTPC_CONNECT;
	if ((end = httpc_connect(&h, authority, alen)) != HTTPC_OK)
		goto out;
	/* A daemon may answer (an error) before it read the whole body and
	 * close: its answer is still read. */
	sent = httpc_request(&h, authority, alen);
	if (sent == HTTPC_READ || sent == HTTPC_TIMEOUT) {
		end = sent;
		goto out;
	}
	end = httpc_answer(&h);
	if (end != HTTPC_OK && h.status == 0 && sent != HTTPC_OK)
		end = sent;
out:
	*status = h.status;
	if (h.fd != -1)
		close(h.fd);
	free(h.buf);
	return end;
}

/* In the words libcurl has for the same ends, which papo's messages
 * said before it had a client of its own. */
const char *
httpc_why(enum httpc_end e)
{
	switch (e) {
	case HTTPC_OK: return "No error";
	case HTTPC_CONNECT: return "Couldn't connect to server";
	case HTTPC_TIMEOUT: return "Timeout was reached";
	case HTTPC_SEND: return "Failed sending data to the peer";
	case HTTPC_CUT: return "Transferred a partial file";
	case HTTPC_BAD: return "Weird server reply";
	case HTTPC_STOPPED:
		return "Failed writing received data to disk/application";
	case HTTPC_READ: return "Failed to open/read local data from "
	    "file/application";
	}
	return "?";
}
