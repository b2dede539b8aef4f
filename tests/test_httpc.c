/*
 * test_httpc.c: lib/httpc.c against a server of the test's own on
 * 127.0.0.1 (a child process per request, answering bytes the test
 * wrote): bodies sized, chunked and up to the close, 1xx answers
 * skipped, error statuses, the request as sent (headers, a sized and a
 * chunked upload), and every way a request ends (refused, a deadline,
 * cut, not HTTP, stopped by the caller, a body that cannot be read);
 * and requests made step by step, side by side in one poll loop, each
 * ending when its answer is whole rather than at the close, with its
 * headers handed over.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lib/httpc.h"

struct srv {
	int fd;
	pid_t pid;
	char url[64];
};

/*
 * Listens, and in a child answers one connection: reads the request
 * until until is in it (or the client is done), then writes answer (its
 * whole request as a 200's body when answer is NULL; nothing for 2 s
 * when answer is ""), waits linger seconds (reading nothing more), and
 * closes.
 */
static void
srv_start(struct srv *s, const char *until, const char *answer, int linger)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	char req[65536];
	size_t n = 0;
	int c;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd == -1 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(s->fd, 4) == -1 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &len) == -1) {
		perror("listen");
		exit(1);
	}
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u",
	    ntohs(a.sin_port));
	if ((s->pid = fork()) != 0)
		return;
	if ((c = accept(s->fd, NULL, NULL)) == -1)
		_exit(1);
	while (n < sizeof(req) - 1) {
		ssize_t k = read(c, req + n, sizeof(req) - 1 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
		req[n] = '\0';
		if (strstr(req, until) != NULL)
			break;
	}
	if (answer == NULL) {
		char head[128];
		int h = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
		    "Content-Length: %zu\r\n\r\n", n);

		if (write(c, head, (size_t)h) != h || write(c, req, n) != (ssize_t)n)
			_exit(1);
	} else if (answer[0] == '\0') {
		sleep(2);
	} else if (write(c, answer, strlen(answer)) !=
	    (ssize_t)strlen(answer)) {
		_exit(1);
	}
	sleep((unsigned)linger);
	close(c);
	_exit(0);
}

static void
srv_stop(struct srv *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	close(s->fd);
}

struct got {
	char p[65536];
	size_t n;
	long status;
	int stop_after;          /* -1 after this many calls, if not 0 */
	int calls;
};

static int
take(void *arg, long status, const char *p, size_t n)
{
	struct got *g = arg;

	g->status = status;
	if (g->n + n < sizeof(g->p)) {
		memcpy(g->p + g->n, p, n);
		g->n += n;
		g->p[g->n] = '\0';
	}
	return ++g->calls == g->stop_after ? -1 : 0;
}

/* GET / from a server answering answer; the end, with status and body. */
static enum httpc_end
get(const char *answer, int total_ms, struct got *g, long *status)
{
	struct httpc_req r;
	struct srv s;
	enum httpc_end e;

	srv_start(&s, "\r\n\r\n", answer, 0);
	memset(&r, 0, sizeof(r));
	r.url = s.url;
	r.method = "GET";
	r.path = "/x";
	r.on_body = take;
	r.body_arg = g;
	r.connect_ms = 1000;
	r.total_ms = total_ms;
	e = httpc_do(&r, status);
	srv_stop(&s);
	return e;
}

static void
test_bodies(void)
{
	struct got g;
	long st;

	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	    0, &g, &st), HTTPC_OK);
	CHECK_EQ_INT(st, 200);
	CHECK_EQ_STR(g.p, "hello");

	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
	    "5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n", 0,
	    &g, &st), HTTPC_OK);
	CHECK_EQ_STR(g.p, "hello world");

	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.0 200 OK\r\n\r\nup to the close", 0, &g,
	    &st), HTTPC_OK);
	CHECK_EQ_STR(g.p, "up to the close");

	/* 1xx answers come before the answer. */
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found"
	    "\r\nContent-Length: 13\r\n\r\n{\"error\":\"x\"}", 0, &g, &st),
	    HTTPC_OK);
	CHECK_EQ_INT(st, 404);
	CHECK_EQ_INT(g.status, 404);
	CHECK_EQ_STR(g.p, "{\"error\":\"x\"}");

	/* No body at all. */
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
	    0, &g, &st), HTTPC_OK);
	CHECK_EQ_INT(st, 204);
	CHECK_EQ_INT(g.n, 0);
}

static void
test_ends(void)
{
	struct httpc_req r;
	struct srv s;
	struct got g;
	long st;

	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0,
	    &g, &st), HTTPC_CUT);
	CHECK_EQ_INT(st, 200);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhel", 0, &g, &st), HTTPC_CUT);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "zz\r\n", 0, &g, &st), HTTPC_BAD);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("SMTP ready\r\n\r\n", 0, &g, &st), HTTPC_BAD);
	CHECK_EQ_INT(st, 0);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(get("", 300, &g, &st), HTTPC_TIMEOUT);
	CHECK_EQ_INT(st, 0);
	memset(&g, 0, sizeof(g));
	g.stop_after = 1;
	CHECK_EQ_INT(get("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	    0, &g, &st), HTTPC_STOPPED);

	/* Refused: a port nothing listens on any more. */
	srv_start(&s, "\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n", 0);
	srv_stop(&s);
	memset(&r, 0, sizeof(r));
	r.url = s.url;
	r.method = "GET";
	r.path = "/";
	r.connect_ms = 1000;
	CHECK_EQ_INT(httpc_do(&r, &st), HTTPC_CONNECT);
	r.url = "https://127.0.0.1:1";
	CHECK_EQ_INT(httpc_do(&r, &st), HTTPC_CONNECT);
	r.url = "http://127.0.0.1";
	CHECK_EQ_INT(httpc_do(&r, &st), HTTPC_CONNECT);
	CHECK(strcmp(httpc_why(HTTPC_TIMEOUT), "Timeout was reached") == 0);
}

struct src {
	const char *parts[4];
	int at;
};

static long
src_read(void *arg, char *p, size_t n)
{
	struct src *s = arg;
	const char *part = s->parts[s->at];
	size_t k;

	if (part == NULL)
		return 0;
	if (strcmp(part, "!") == 0) {
		errno = EIO;
		return -1;
	}
	k = strlen(part) < n ? strlen(part) : n;
	memcpy(p, part, k);
	s->at++;
	return (long)k;
}

/* POST /up as the server saw it (the echo's body). */
static enum httpc_end
post(struct httpc_req *r, const char *until, struct got *g)
{
	struct srv s;
	enum httpc_end e;
	long st;

	srv_start(&s, until, NULL, 0);
	r->url = s.url;
	r->method = "POST";
	r->path = "/up?a=1";
	r->on_body = take;
	r->body_arg = g;
	r->connect_ms = 1000;
	r->total_ms = 5000;
	e = httpc_do(r, &st);
	srv_stop(&s);
	return e;
}

static void
test_requests(void)
{
	struct httpc_req r;
	struct src src = { { "hello", " world", NULL, NULL }, 0 };
	struct got g;

	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	r.headers[0] = "Authorization: Bearer t0k";
	r.headers[1] = "Content-Type: application/json";
	r.body = "{\"a\":1}";
	r.body_len = 7;
	CHECK_EQ_INT(post(&r, "{\"a\":1}", &g), HTTPC_OK);
	CHECK(strncmp(g.p, "POST /up?a=1 HTTP/1.1\r\n", 23) == 0);
	CHECK(strstr(g.p, "\r\nHost: 127.0.0.1:") != NULL);
	CHECK(strstr(g.p, "\r\nAuthorization: Bearer t0k\r\n") != NULL);
	CHECK(strstr(g.p, "\r\nAccept: */*\r\n") != NULL);
	CHECK(strstr(g.p, "\r\nContent-Length: 7\r\n\r\n{\"a\":1}") != NULL);

	/* A body of unknown length goes chunked. */
	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	r.headers[0] = "Accept: text/event-stream";
	r.read = src_read;
	r.read_arg = &src;
	r.read_len = -1;
	CHECK_EQ_INT(post(&r, "0\r\n\r\n", &g), HTTPC_OK);
	CHECK(strstr(g.p, "\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n") != NULL);
	CHECK(strstr(g.p, "Accept: */*") == NULL);

	/* A sized one as it is, and one shorter than said fails. */
	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	src.at = 0;
	r.read = src_read;
	r.read_arg = &src;
	r.read_len = 11;
	CHECK_EQ_INT(post(&r, "hello world", &g), HTTPC_OK);
	CHECK(strstr(g.p, "\r\nContent-Length: 11\r\n\r\nhello world") != NULL);
	src.at = 0;
	r.read_len = 12;
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(post(&r, "hello world", &g), HTTPC_READ);
	src.parts[1] = "!";
	src.at = 0;
	r.read_len = -1;
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(post(&r, "hello", &g), HTTPC_READ);
}

/* A body far larger than the socket's buffers, refused after its
 * head: the answer is read, the rest of the body not sent. */
static long
zeros(void *arg, char *p, size_t n)
{
	long long *left = arg;

	if (*left <= 0)
		return 0;
	if ((long long)n > *left)
		n = (size_t)*left;
	memset(p, 0, n);
	*left -= (long long)n;
	return (long)n;
}

static void
test_early(void)
{
	long long left = 256LL * 1024 * 1024;
	struct httpc_req r;
	struct srv s;
	struct got g;
	long st;

	srv_start(&s, "\r\n\r\n", "HTTP/1.1 413 Too Large\r\n"
	    "Content-Length: 8\r\n\r\ntoo big!", 2);
	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	r.url = s.url;
	r.method = "POST";
	r.path = "/up";
	r.read = zeros;
	r.read_arg = &left;
	r.read_len = left;
	r.on_body = take;
	r.body_arg = &g;
	r.total_ms = 5000;
	CHECK_EQ_INT(httpc_do(&r, &st), HTTPC_OK);
	CHECK_EQ_INT(st, 413);
	CHECK_EQ_STR(g.p, "too big!");
	CHECK(left > 0);
	srv_stop(&s);
}

struct heads {
	char type[64];
	int n;
};

static void
head(void *arg, long status, const char *name, const char *value)
{
	struct got *g = arg;
	struct heads *hd = (struct heads *)(g + 1);

	(void)status;
	hd->n++;
	if (strcasecmp(name, "Content-Type") == 0)
		snprintf(hd->type, sizeof(hd->type), "%s", value);
}

/* A slow stream and a quick answer at once: the quick one is not held
 * up, and neither waits for its server's close (both linger 2 s). */
static void
test_steps(void)
{
	struct {
		struct got g;
		struct heads hd;
	} got[2];
	struct srv s[2];
	struct httpc_req r;
	struct httpc *h[2];
	enum httpc_end e[2] = { HTTPC_RUNNING, HTTPC_RUNNING };
	struct timespec t0, t1;
	long st[2];

	srv_start(&s[0], "\r\n\r\n", "HTTP/1.1 200 OK\r\n"
	    "Content-Type:  text/event-stream \r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "7\r\ndata: 1\r\n3\r\n\n\n\n\r\n0\r\n\r\n", 2);
	srv_start(&s[1], "\r\n\r\n", "HTTP/1.1 202 Accepted\r\n"
	    "Content-Length: 2\r\n\r\nok", 2);
	memset(got, 0, sizeof(got));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		r.url = s[i].url;
		r.method = i == 0 ? "GET" : "POST";
		r.path = "/mcp";
		r.body = i == 0 ? NULL : "{}";
		r.body_len = 2;
		r.on_head = head;
		r.on_body = take;
		r.body_arg = &got[i].g;
		r.total_ms = 5000;
		CHECK((h[i] = httpc_start(&r)) != NULL);
	}
	while (e[0] == HTTPC_RUNNING || e[1] == HTTPC_RUNNING) {
		struct pollfd p[2];
		int n = 0, ms = -1;

		for (int i = 0; i < 2; i++)
			if (e[i] == HTTPC_RUNNING) {
				p[n].fd = httpc_fd(h[i]);
				p[n].events = httpc_events(h[i]);
				if (ms == -1 || httpc_timeout(h[i]) < ms)
					ms = httpc_timeout(h[i]);
				n++;
			}
		poll(p, (nfds_t)n, ms);
		for (int i = 0; i < 2; i++)
			e[i] = httpc_step(h[i], &st[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_EQ_INT(e[0], HTTPC_OK);
	CHECK_EQ_INT(st[0], 200);
	CHECK_EQ_STR(got[0].g.p, "data: 1\n\n\n");
	CHECK_EQ_STR(got[0].hd.type, "text/event-stream");
	CHECK_EQ_INT(got[0].hd.n, 2);
	CHECK_EQ_INT(e[1], HTTPC_OK);
	CHECK_EQ_INT(st[1], 202);
	CHECK_EQ_STR(got[1].g.p, "ok");
	CHECK_EQ_INT(got[1].hd.n, 1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	/* An end stays the end. */
	CHECK_EQ_INT(httpc_step(h[1], &st[1]), HTTPC_OK);
	for (int i = 0; i < 2; i++) {
		httpc_free(h[i]);
		srv_stop(&s[i]);
	}
	httpc_free(NULL);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_bodies();
	test_ends();
	test_requests();
	test_early();
	test_steps();
	return check_exit();
}
