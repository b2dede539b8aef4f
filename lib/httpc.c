/*
 * httpc.c: a small HTTP/1.1 client (httpc.h) over one non-blocking TCP
 * socket per request.  A request is a state machine that moves as far as
 * it can without waiting each time httpc_step is called: connecting,
 * sending, then reading one answer as it comes (its status line and
 * headers, at most HTTPC_HEAD_MAX bytes, 1xx answers skipped; its body
 * by Content-Length, chunked, or up to the close).  httpc_do drives one
 * with poll(2); papo mcp's bridge drives several in its own loop.  It
 * sends "Connection: close".  Each request is its caller's thread's; it
 * must never write to a socket without MSG_NOSIGNAL (a daemon that
 * closed early must not kill the process).
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

#define HTTPC_IO 16384             /* bytes read from a body's reader */
#define HTTPC_LINE_MAX 4096        /* bytes of a chunk's size line */
#define HTTPC_FRAME 16             /* a chunk's size line, before it */

enum httpc_state {
	HTTPC_S_CONNECT,        /* connecting to one of the URL's addresses */
	HTTPC_S_SEND,           /* the request going out */
	HTTPC_S_HEAD,           /* an answer's status line and headers */
	HTTPC_S_BODY,           /* body bytes: left of them, or to the close */
	HTTPC_S_CHUNK,          /* a chunk's size line */
	HTTPC_S_CHUNK_END,      /* the CRLF after a chunk's bytes */
	HTTPC_S_TRAILER,        /* trailers, up to the empty line */
};

struct httpc {
	struct httpc_req r;        /* its callbacks and limits; no strings */
	enum httpc_state st;
	enum httpc_end end;        /* HTTPC_RUNNING until it ends */
	enum httpc_end send_end;   /* how sending ended */
	int fd;
	struct addrinfo *ai, *next; /* the URL's addresses, the next to try */
	long long deadline;        /* ms on the monotonic clock; 0: none */
	long long connect_by;      /* this address's connect_ms; 0: none */
	long long idle_by;         /* idle_ms after a byte moved; 0: none */
	char *out;                 /* to send: out[out_off..out_len) */
	size_t out_off, out_len, out_cap;
	int reading;               /* the body's reader has more */
	long long sent;            /* bytes the reader gave */
	char *buf;                 /* what came and is not used yet: */
	size_t off, len, cap;      /* buf[off..len) */
	long status;
	size_t headn;              /* bytes of this answer's head; 0 before
	                            * its status line */
	long long left;            /* of the body or chunk; -1: to the close */
	int chunked;
};

static long long
httpc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What fd is ready for now, of ev (0: nothing yet). */
static short
httpc_ready(int fd, short ev)
{
	struct pollfd p = { fd, ev, 0 };

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

/* A byte moved: the idle limit starts again. */
static void
httpc_moved(struct httpc *h)
{
	h->idle_by = h->r.idle_ms > 0 ? httpc_now() + h->r.idle_ms : 0;
}

/* Starts connecting to the next address: HTTPC_RUNNING, or
 * HTTPC_CONNECT when none is left. */
static enum httpc_end
httpc_connect_next(struct httpc *h)
{
	for (struct addrinfo *a = h->next; a != NULL; a = a->ai_next) {
		h->next = a->ai_next;
		h->fd = os_socket(a->ai_family, a->ai_socktype, a->ai_protocol,
		    OS_NONBLOCK);
		if (h->fd == -1)
			continue;
		if (connect(h->fd, a->ai_addr, a->ai_addrlen) == 0 ||
		    errno == EINPROGRESS) {
			h->connect_by = h->r.connect_ms > 0 ?
			    httpc_now() + h->r.connect_ms : 0;
			return HTTPC_RUNNING;
		}
		close(h->fd);
		h->fd = -1;
	}
	return HTTPC_CONNECT;
}

/* Connected yet?  HTTPC_OK once it is, else HTTPC_RUNNING (or the end,
 * when no address is left). */
static enum httpc_end
httpc_connect_step(struct httpc *h)
{
	socklen_t len = sizeof(int);
	int e = 0;

	if (httpc_ready(h->fd, POLLOUT) == 0)
		return HTTPC_RUNNING;
	if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0) {
		h->st = HTTPC_S_SEND;
		h->connect_by = 0;
		httpc_moved(h);
		return HTTPC_OK;
	}
	close(h->fd);
	h->fd = -1;
	return httpc_connect_next(h);
}

/* Resolves the URL's host and port into h->ai: -1 when it cannot. */
static int
httpc_resolve(struct httpc *h, const char *authority, size_t n)
{
	struct addrinfo hints;
	struct addr_hostport hp;
	char port[8];
	int e;

	if (addr_hostport(authority, n, &hp) != ADDR_OK ||
	    hp.port == ADDR_NO_PORT)
		return -1;
	snprintf(port, sizeof(port), "%ld", hp.port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	/* An address needs no resolver (which loads NSS's libraries): the
	 * daemon's serve.json names one.  A name is looked up. */
	if ((e = getaddrinfo(hp.host, port, &hints, &h->ai)) == EAI_NONAME) {
		hints.ai_flags = AI_NUMERICSERV;
		e = getaddrinfo(hp.host, port, &hints, &h->ai);
	}
	if (e != 0) {
		h->ai = NULL;
		return -1;
	}
	h->next = h->ai;
	return 0;
}

/* Appends to h->out; -1 when out of memory. */
static int
httpc_out(struct httpc *h, const char *p, size_t n)
{
	size_t cap = h->out_cap;
	char *o;

	if (h->out_len + n > cap) {
		while (cap < h->out_len + n)
			cap = cap < 1024 ? 1024 : cap * 2;
		if ((o = malloc(cap)) == NULL)
			return -1;
		/* What went before may hold a token. */
		if (h->out != NULL) {
			memcpy(o, h->out, h->out_len);
			explicit_bzero(h->out, h->out_cap);
			free(h->out);
		}
		h->out = o;
		h->out_cap = cap;
	}
	if (n > 0)
		memcpy(h->out + h->out_len, p, n);
	h->out_len += n;
	return 0;
}

/* The request line, the headers, and a body in memory, into h->out:
 * 0, or -1 when out of memory; h->end is HTTPC_SEND when the head is
 * over its limit. */
static int
httpc_head(struct httpc *h, const struct httpc_req *r,
    const char *authority, size_t alen)
{
	char head[HTTPC_IO];
	int accept = 0, rc;
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
	if (at >= sizeof(head)) {
		h->end = HTTPC_SEND;
		rc = 0;
	} else
		rc = httpc_out(h, head, at);
	explicit_bzero(head, sizeof(head));   /* it may hold a token */
	if (rc == 0 && r->body != NULL)
		rc = httpc_out(h, r->body, r->body_len);
	h->reading = r->body == NULL && r->read != NULL;
	return rc;
}

/* The reader's next bytes into h->out, framed as a chunk when the
 * body's length is unknown: HTTPC_OK, or HTTPC_READ. */
static enum httpc_end
httpc_refill(struct httpc *h)
{
	char data[HTTPC_FRAME + HTTPC_IO + 2];
	long k = h->r.read(h->r.read_arg, data + HTTPC_FRAME, HTTPC_IO);
	int used;

	h->out_off = h->out_len = 0;
	if (k < 0)
		return HTTPC_READ;
	if (h->r.read_len >= 0) {
		if (k == 0) {
			h->reading = 0;
			return h->sent == h->r.read_len ? HTTPC_OK : HTTPC_READ;
		}
		if ((h->sent += k) > h->r.read_len)
			return HTTPC_READ;
		return httpc_out(h, data + HTTPC_FRAME, (size_t)k) == 0 ?
		    HTTPC_OK : HTTPC_READ;
	}
	/* A chunk's size line before it, its CRLF after; 0 ends them. */
	used = snprintf(data, HTTPC_FRAME, "%lx\r\n", k);
	memmove(data + HTTPC_FRAME - used, data, (size_t)used);
	memcpy(data + HTTPC_FRAME + k, "\r\n", 2);
	h->reading = k != 0;
	return httpc_out(h, data + HTTPC_FRAME - used, (size_t)(used + k + 2))
	    == 0 ? HTTPC_OK : HTTPC_READ;
}

/* Sends what it can.  HTTPC_OK once the request is out (or cannot go
 * out, h->send_end then says why, or the server answered before it
 * read it all: the answer is read all the same); else HTTPC_RUNNING,
 * or HTTPC_READ. */
static enum httpc_end
httpc_send_step(struct httpc *h)
{
	enum httpc_end e;
	ssize_t k;
	short ev;

	for (;;) {
		if (h->out_off == h->out_len) {
			/* The answer may come first: a daemon that refuses
			 * a body (too large, no credentials) answers before
			 * reading it all. */
			if (!h->reading || (httpc_ready(h->fd, POLLIN) & POLLIN))
				break;
			if ((e = httpc_refill(h)) != HTTPC_OK)
				return e;
			continue;
		}
		k = send(h->fd, h->out + h->out_off, h->out_len - h->out_off,
		    MSG_NOSIGNAL);
		if (k > 0) {
			h->out_off += (size_t)k;
			httpc_moved(h);
		} else if (k == -1 && errno == EINTR) {
			continue;
		} else if (k == -1 && (errno == EAGAIN ||
		    errno == EWOULDBLOCK)) {
			ev = httpc_ready(h->fd, POLLIN | POLLOUT);
			if ((ev & POLLIN) == 0 || (ev & POLLOUT) != 0)
				return HTTPC_RUNNING;
			break;
		} else {
			h->send_end = HTTPC_SEND;
			break;
		}
	}
	h->st = HTTPC_S_HEAD;
	return HTTPC_OK;
}

/* A line ending in LF (its CR taken too) from buf, at most max bytes:
 * HTTPC_OK with *l (NUL-terminated), HTTPC_RUNNING when it has not all
 * come, HTTPC_BAD when it is too long. */
static enum httpc_end
httpc_line(struct httpc *h, size_t max, char **l)
{
	char *s = h->buf + h->off;
	char *nl = memchr(s, '\n', h->len - h->off);

	if (nl == NULL)
		return h->len - h->off > max ? HTTPC_BAD : HTTPC_RUNNING;
	if (nl > s && nl[-1] == '\r')
		nl[-1] = '\0';
	*nl = '\0';
	h->off = (size_t)(nl + 1 - h->buf);
	*l = s;
	return HTTPC_OK;
}

/* A header of the final answer, for the caller. */
static void
httpc_header(struct httpc *h, char *l)
{
	char *v = strchr(l, ':'), *end;

	if (h->r.on_head == NULL || v == NULL)
		return;
	*v++ = '\0';
	v += strspn(v, " \t");
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	h->r.on_head(h->r.body_arg, h->status, l, v);
}

/* One line of an answer's head. */
static enum httpc_end
httpc_head_line(struct httpc *h, char *l)
{
	int minor;

	if (h->headn == 0) {
		h->headn = strlen(l) + 2;
		if (sscanf(l, "HTTP/1.%d %3ld", &minor, &h->status) != 2 ||
		    h->status < 100 || h->status > 999) {
			h->status = 0;
			return HTTPC_BAD;
		}
		h->left = -1;
		h->chunked = 0;
		return HTTPC_OK;
	}
	if (l[0] == '\0') {
		/* A 1xx answer comes before the answer. */
		h->headn = 0;
		if (h->status >= 200)
			h->st = h->chunked ? HTTPC_S_CHUNK : HTTPC_S_BODY;
		return HTTPC_OK;
	}
	if ((h->headn += strlen(l) + 2) > HTTPC_HEAD_MAX)
		return HTTPC_BAD;
	if (strncasecmp(l, "Content-Length:", 15) == 0) {
		char *e;

		errno = 0;
		h->left = strtoll(l + 15, &e, 10);
		if (errno != 0 || h->left < 0)
			return HTTPC_BAD;
	} else if (strncasecmp(l, "Transfer-Encoding:", 18) == 0 &&
	    strstr(l + 18, "chunked") != NULL) {
		h->chunked = 1;
	}
	if (h->status >= 200)
		httpc_header(h, l);
	return HTTPC_OK;
}

/* Body bytes that have come (some), handed to the caller. */
static enum httpc_end
httpc_give(struct httpc *h)
{
	size_t have = h->len - h->off, n;
	const char *p = h->buf + h->off;

	n = h->left < 0 || (long long)have < h->left ? have : (size_t)h->left;
	h->off += n;
	if (h->left > 0)
		h->left -= (long long)n;
	if (h->r.on_body != NULL &&
	    h->r.on_body(h->r.body_arg, h->status, p, n) == -1)
		return HTTPC_STOPPED;
	return HTTPC_OK;
}

/* A chunk's size line: the chunk's bytes next, or the trailers. */
static enum httpc_end
httpc_chunk(struct httpc *h, const char *l)
{
	unsigned long long n;
	char *e;

	errno = 0;
	n = strtoull(l, &e, 16);
	if (e == l || errno != 0 || n > (unsigned long long)1 << 62)
		return HTTPC_BAD;
	h->left = (long long)n;
	h->st = n == 0 ? HTTPC_S_TRAILER : HTTPC_S_BODY;
	return HTTPC_OK;
}

/* Reads what has come of the answer: HTTPC_OK once it is whole,
 * HTTPC_RUNNING while more is to come, or the end. */
static enum httpc_end
httpc_parse(struct httpc *h)
{
	enum httpc_end e = HTTPC_OK;
	char *l;

	while (e == HTTPC_OK) {
		switch (h->st) {
		case HTTPC_S_HEAD:
			if ((e = httpc_line(h, HTTPC_HEAD_MAX, &l)) == HTTPC_OK)
				e = httpc_head_line(h, l);
			break;
		case HTTPC_S_BODY:
			if (h->left == 0 && !h->chunked)
				return HTTPC_OK;
			if (h->left == 0)
				h->st = HTTPC_S_CHUNK_END;
			else if (h->len == h->off)
				return HTTPC_RUNNING;
			else
				e = httpc_give(h);
			break;
		case HTTPC_S_CHUNK:
			if ((e = httpc_line(h, HTTPC_LINE_MAX, &l)) == HTTPC_OK)
				e = httpc_chunk(h, l);
			break;
		case HTTPC_S_CHUNK_END:
			if ((e = httpc_line(h, HTTPC_LINE_MAX, &l)) == HTTPC_OK) {
				if (l[0] != '\0')
					return HTTPC_BAD;
				h->st = HTTPC_S_CHUNK;
			}
			break;
		case HTTPC_S_TRAILER:
			if ((e = httpc_line(h, HTTPC_HEAD_MAX, &l)) == HTTPC_OK &&
			    l[0] == '\0')
				return HTTPC_OK;
			break;
		default:
			return HTTPC_BAD;
		}
	}
	return e;
}

/* Reads and parses what the socket has. */
static enum httpc_end
httpc_read_step(struct httpc *h)
{
	enum httpc_end e;
	ssize_t k;

	for (;;) {
		if ((e = httpc_parse(h)) != HTTPC_RUNNING)
			return e;
		if (h->off == h->len) {
			h->off = h->len = 0;
		} else if (h->len == h->cap) {
			if (h->off == 0)
				return HTTPC_BAD;
			memmove(h->buf, h->buf + h->off, h->len - h->off);
			h->len -= h->off;
			h->off = 0;
		}
		k = recv(h->fd, h->buf + h->len, h->cap - h->len, 0);
		if (k > 0) {
			h->len += (size_t)k;
			httpc_moved(h);
		} else if (k == 0) {
			/* The close ends a body that had no length. */
			return h->st == HTTPC_S_BODY && h->left < 0 ? HTTPC_OK :
			    HTTPC_CUT;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			return HTTPC_RUNNING;
		} else if (errno != EINTR) {
			return HTTPC_CUT;
		}
	}
}

/* Has a limit passed, for a request that would wait? */
static int
httpc_late(const struct httpc *h)
{
	long long now = httpc_now();

	return (h->deadline != 0 && now >= h->deadline) ||
	    (h->connect_by != 0 && now >= h->connect_by) ||
	    (h->idle_by != 0 && now >= h->idle_by);
}

static enum httpc_end
httpc_advance(struct httpc *h)
{
	enum httpc_end e = HTTPC_OK;

	if (h->st == HTTPC_S_CONNECT)
		e = httpc_connect_step(h);
	if (e == HTTPC_OK && h->st == HTTPC_S_SEND)
		e = httpc_send_step(h);
	if (e == HTTPC_OK) {
		e = httpc_read_step(h);
		if (e != HTTPC_OK && e != HTTPC_RUNNING && h->status == 0 &&
		    h->send_end != HTTPC_OK)
			e = h->send_end;
	}
	if (e == HTTPC_RUNNING && httpc_late(h))
		e = HTTPC_TIMEOUT;
	return e;
}

struct httpc *
httpc_start(const struct httpc_req *r)
{
	struct httpc *h = calloc(1, sizeof(*h));
	const char *authority;
	size_t alen;

	if (h == NULL)
		return NULL;
	h->r = *r;
	h->fd = -1;
	h->st = HTTPC_S_CONNECT;
	h->end = HTTPC_RUNNING;
	h->send_end = HTTPC_OK;
	h->left = -1;
	h->cap = HTTPC_HEAD_MAX;
	if ((h->buf = malloc(h->cap)) == NULL)
		goto fail;
	if (r->total_ms > 0)
		h->deadline = httpc_now() + r->total_ms;
	if (strncmp(r->url, "http://", 7) != 0) {
		h->end = HTTPC_CONNECT;
		goto out;
	}
	authority = r->url + 7;
	alen = strcspn(authority, "/");
	if (httpc_head(h, r, authority, alen) == -1)
		goto fail;
	if (h->end == HTTPC_RUNNING && httpc_resolve(h, authority, alen) == -1)
		h->end = HTTPC_CONNECT;
	if (h->end == HTTPC_RUNNING)
		h->end = httpc_connect_next(h);
out:
	/* Only what httpc_start copied is used from here. */
	h->r.url = h->r.method = h->r.path = NULL;
	h->r.body = NULL;
	memset(h->r.headers, 0, sizeof(h->r.headers));
	return h;
fail:
	httpc_free(h);
	return NULL;
}

int
httpc_fd(const struct httpc *h)
{
	return h->fd;
}

short
httpc_events(const struct httpc *h)
{
	if (h->st == HTTPC_S_CONNECT)
		return POLLOUT;
	return h->st == HTTPC_S_SEND ? POLLIN | POLLOUT : POLLIN;
}

int
httpc_timeout(const struct httpc *h)
{
	long long at = 0, now;

	if (h->deadline != 0)
		at = h->deadline;
	if (h->connect_by != 0 && (at == 0 || h->connect_by < at))
		at = h->connect_by;
	if (h->idle_by != 0 && (at == 0 || h->idle_by < at))
		at = h->idle_by;
	if (at == 0)
		return -1;
	now = httpc_now();
	return at <= now ? 0 : at - now > 3600000 ? 3600000 : (int)(at - now);
}

enum httpc_end
httpc_step(struct httpc *h, long *status)
{
	if (h->end == HTTPC_RUNNING && (h->end = httpc_advance(h)) !=
	    HTTPC_RUNNING && h->fd != -1) {
		close(h->fd);
		h->fd = -1;
	}
	*status = h->status;
	return h->end;
}

void
httpc_free(struct httpc *h)
{
	if (h == NULL)
		return;
	if (h->fd != -1)
		close(h->fd);
	if (h->ai != NULL)
		freeaddrinfo(h->ai);
	if (h->out != NULL)
		explicit_bzero(h->out, h->out_cap);   /* it may hold a token */
	free(h->out);
	free(h->buf);
	free(h);
}

enum httpc_end
httpc_do(const struct httpc_req *r, long *status)
{
	struct httpc *h = httpc_start(r);
	enum httpc_end e;

	*status = 0;
	if (h == NULL)
		return HTTPC_CONNECT;
	while ((e = httpc_step(h, status)) == HTTPC_RUNNING) {
		struct pollfd p = { httpc_fd(h), httpc_events(h), 0 };

		poll(&p, 1, httpc_timeout(h));
	}
	httpc_free(h);
	return e;
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
	case HTTPC_RUNNING: return "Not over yet";
	}
	return "?";
}
