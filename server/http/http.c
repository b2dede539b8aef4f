/*
 * http.c: libmicrohttpd in an external mode, on the main thread.  MHD's
 * descriptors reach the daemon's loop through http_poll.h (its epoll
 * descriptor, or its fd_sets in the portable build), and MHD_run is
 * called when one is ready or when MHD's own timeout (one loop timer)
 * expires, so there is no HTTP thread and an idle daemon sleeps.  This
 * file owns the daemon and its listening socket, MHD's callbacks (a
 * request begun, its body, its end, its completion) and the requests'
 * lives; every request passes http_route.c's screen before a handler
 * sees it.  Over HTTPS, MHD's GnuTLS does the TLS and tls.c hands it the
 * certificate at each handshake.  A request that waits (for the node, or
 * anything else) is a suspended connection, resumed when its answer is
 * ready (http_stream.c).  Nothing here may block: a callback that waited
 * would stop every other client and the node's answers with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "lib/os.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"
#include "server/http/http_poll.h"
#include "server/http/throttle.h"
#include "server/http/tls.h"

#define HTTP_SPIN_MAX_MS 50
#define HTTP_LAST_RUNS 4           /* MHD runs at the stop, before waiting */

#define HTTP_IDLE_S 60             /* an idle connection is closed after */

/* Memory per connection: MHD's pool (request line and headers, the read
 * and write buffers) and the block a stream's answer is read in.  Event
 * streams are what piles up (a thousand idle ones are the design load);
 * MHD's defaults (32 KiB and the 16 KiB block we asked for) made them
 * 41 KB each, these 25 KB (docs/PERFORMANCE.md).  Headers up to 16 KiB
 * still fit; a larger event goes out in several blocks. */
#define HTTP_CONN_MEMORY (16 * 1024)

/* After this many runs in a row with a timeout of 0 from MHD, the next
 * ones back off, doubling from 1 ms up to HTTP_SPIN_MAX_MS (see
 * http_run). */
#define HTTP_SPINS_FREE 2

static void
http_req_free(struct http_req *r)
{
	if (r == NULL)
		return;
	if (r->state == HTTP_WAITING)
		http_unwait(r);
	http_unwatch(r);
	if (r->live != NULL)
		r->live->req = NULL;
	/* An answer read as it goes that never went out. */
	if (r->answer.release != NULL)
		r->answer.release(r->answer.reader_arg);
	for (size_t i = 0; i < r->answer.nhdr; i++)
		free(r->answer.hdr[i].value);
	free(r->answer.page_csp);
	free(r->body.buf);
	free(r->ask.room);
	free(r->answer.json);
	free(r);
}

/*
 * An upload's handler runs before its body: it answers at once (a bad
 * name, too large) or takes the body with http_req_sink.
 */
static void
http_upload_begin(struct http_req *r)
{
	r->state = HTTP_RUNNING;
	if (r->h->stopping)
		http_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "papo serve is stopping");
	else
		r->ask.route->handler(r, r->ask.arg);
	if (r->state == HTTP_RUNNING && r->body.sink != NULL) {
		r->state = HTTP_READING;
		http_watch_upload(r);
	} else if (r->state == HTTP_RUNNING || r->state == HTTP_WAITING) {
		/* Only end may wait: the body is still to come. */
		if (r->state == HTTP_WAITING)
			http_unwait(r);
		r->state = HTTP_RUNNING;
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "the handler of %s took no body", r->ask.path);
	}
}

void
http_req_sink(struct http_req *r, http_sink_data *data, http_sink_end *end,
    void *arg)
{
	r->body.sink = data;
	r->body.sink_end = end;
	r->body.sink_arg = arg;
}

static enum MHD_Result
http_begin(struct http *h, struct MHD_Connection *conn, const char *url,
    const char *method, void **con_cls)
{
	struct http_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return MHD_NO;
	r->h = h;
	r->conn = conn;
	r->wait.watch_fd = -1;
	r->state = HTTP_READING;
	if ((r->c = http_conn_of(conn)) != NULL)
		http_due_del(h, r->c);
	snprintf(r->ask.method, sizeof(r->ask.method), "%s", method);
	snprintf(r->ask.path, sizeof(r->ask.path), "%s", url);
	*con_cls = r;
	http_screen(r, url, method);
	if (r->state == HTTP_READING && (r->ask.route->open & HTTP_UPLOAD))
		http_upload_begin(r);
	if (r->state == HTTP_ANSWERED && http_answer_early(r))
		return http_queue(r);
	return MHD_YES;
}

static enum MHD_Result
http_body(struct http_req *r, const char *data, size_t n)
{
	if (r->state != HTTP_READING) {
		r->body.dropped += n;
		return r->body.dropped > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (r->body.sink != NULL) {
		r->state = HTTP_RUNNING;
		if (r->body.sink(r, data, n, r->body.sink_arg) == -1) {
			if (r->state == HTTP_RUNNING)
				http_reply_error(r,
				    MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "the upload of %s stopped", r->ask.path);
			http_unwatch(r);
			r->body.sink = NULL;
			r->body.dropped = n;
			return MHD_YES;
		}
		r->state = HTTP_READING;
		/* MHD has more of the body waiting, most likely: it runs
		 * again at once rather than after the back-off that keeps a
		 * stalled TLS handshake from spinning (http_run), which would
		 * cap an upload at a pool's worth of bytes per 50 ms. */
		http_kick(r->h);
		return MHD_YES;
	}
	if (n > http_body_max(r) - r->body.len) {
		http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "the body has "
		    "more than %zu bytes (a message's text, at most %d)",
		    http_body_max(r), PAPO_BODY_MAX);
		r->body.dropped = r->body.len + n;
		return MHD_YES;
	}
	if (r->body.len + n + 1 > r->body.cap) {
		size_t cap = r->body.cap != 0 ? r->body.cap : 1024;
		char *p;

		while (cap < r->body.len + n + 1)
			cap *= 2;
		if ((p = realloc(r->body.buf, cap)) == NULL)
			return MHD_NO;
		r->body.buf = p;
		r->body.cap = cap;
	}
	memcpy(r->body.buf + r->body.len, data, n);
	r->body.len += n;
	r->body.buf[r->body.len] = '\0';
	return MHD_YES;
}

/* The final call: the whole request is in. */
static enum MHD_Result
http_end(struct http_req *r)
{
	switch (r->state) {
	case HTTP_READING:
		r->state = HTTP_RUNNING;
		/* While stopping, the handlers' modules are gone or going (the
		 * node stopped first): a request that came in the last runs
		 * is answered here, never left waiting. */
		if (r->h->stopping)
			http_reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "papo serve is stopping");
		else if (r->body.sink != NULL) {
			/* Whole: a hang-up from here is a waiting
			 * request's, which the node's answer finds. */
			http_unwatch(r);
			r->body.sink_end(r, r->body.sink_arg);
		}
		else
			r->ask.route->handler(r, r->ask.arg);
		if (r->state == HTTP_RUNNING)
			http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "the handler of %s gave no answer", r->ask.path);
		if (r->state == HTTP_WAITING) {
			MHD_suspend_connection(r->conn);
			r->suspended = 1;
			return MHD_YES;
		}
		return http_queue(r);
	case HTTP_ANSWERED:
		if (r->drop)
			return MHD_NO;    /* its client left: close */
		return http_queue(r);
	case HTTP_RUNNING:
	case HTTP_WAITING:
	case HTTP_DONE:
		break;
	}
	return MHD_YES;
}

static enum MHD_Result
http_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct http_req *r = *con_cls;
	size_t n;

	(void)version;
	if (r == NULL)
		return http_begin(cls, conn, url, method, con_cls);
	if (*upload_size != 0) {
		/* A body flowing in: MHD runs again at once rather than
		 * backing off (http_run), as its socket may hold more than
		 * its buffer took and no new event would say so. */
		((struct http *)cls)->kicked = 1;
		n = *upload_size;
		*upload_size = 0;
		return http_body(r, upload, n);
	}
	return http_end(r);
}

static void
http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct http_req *r = *con_cls;

	(void)cls;
	(void)conn;
	if (r == NULL)
		return;
	if (why != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_msg(LOG_DEBUG, "http: %s %s ended early (%d)",
		    r->ask.method, r->ask.path, (int)why);
	*con_cls = NULL;
	/* A connection kept alive waits for its next request as a new one
	 * does, and counts again unless this request showed credentials. */
	if (r->c != NULL) {
		http_conn_count(r->c, !r->ask.authed);
		http_due_add(r->h, r->c);
	}
	if (r->answer.done != NULL)
		r->answer.done(r->answer.done_arg,
		    why == MHD_REQUEST_TERMINATED_COMPLETED_OK &&
		    r->state == HTTP_DONE && !r->drop);
	http_req_free(r);
}

static void
http_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	log_msg(LOG_DEBUG, "http: %s", line);
}

/* Lets MHD do what it can, then sleeps until its next timeout. */
static void
http_run(struct http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned long long wait;

	h->kicked = 0;
	MHD_run(h->mhd);
	http_poll_ran(h->poll);
	if (h->kicked) {
		h->spins = 0;
		loop_timer_set(h->timer, loop_now_ns());
		return;
	}
	if (MHD_get_timeout(h->mhd, &ms) != MHD_YES) {
		h->spins = 0;
		loop_timer_set(h->timer, 0);
		return;
	}
	if (ms > 0) {
		h->spins = 0;
		if (ms > 3600 * 1000)
			ms = 3600 * 1000;
		loop_timer_set(h->timer, loop_now_ns() + ms * NS_PER_MS);
		return;
	}
	/*
	 * MHD wants to run again at once.  That is right when it has work no
	 * event will announce (TLS records already read), but during a TLS
	 * handshake that waits for the client, this MHD (0.9.75, external
	 * epoll) says so after every run until the client answers: a busy
	 * loop for a round trip, or for as long as a client stalls.  The
	 * client's bytes wake the loop through MHD's descriptors
	 * anyway, so after a few runs at once the next ones back off.
	 */
	wait = 0;
	if (h->spins >= HTTP_SPINS_FREE) {
		wait = 1ull << (h->spins - HTTP_SPINS_FREE);
		if (wait > HTTP_SPIN_MAX_MS)
			wait = HTTP_SPIN_MAX_MS;
	}
	if (h->spins < HTTP_SPINS_FREE + 8)
		h->spins++;
	loop_timer_set(h->timer, loop_now_ns() + wait * NS_PER_MS);
}

static void
http_on_ready(void *arg, uint32_t events)
{
	(void)events;
	http_run(arg);
}

static void
http_on_timer(void *arg)
{
	http_run(arg);
}

static int
http_listen(char err[PAPO_ERR_LEN], const struct addr_bind *b,
    const char *text)
{
	int fd, one = 1;

	fd = os_socket(b->ss.ss_family, SOCK_STREAM, 0, OS_NONBLOCK);
	if (fd == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot open the HTTP socket: %s",
		    strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&b->ss, b->sslen) == -1 ||
	    listen(fd, 64) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot serve HTTP on %s: %s", text,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static unsigned
http_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

struct http *
http_new(char err[PAPO_ERR_LEN], struct loop *l, const struct http_config *c)
{
	struct http *h = NULL;
	struct addr_bind b;
	int fd = -1;

	if (http_check(err, c) == -1)
		return NULL;
	if (c->tls != NULL && MHD_is_feature_supported(MHD_FEATURE_TLS) !=
	    MHD_YES) {
		snprintf(err, PAPO_ERR_LEN, "this libmicrohttpd has no TLS: "
		    "install Debian's libmicrohttpd12 (built with GnuTLS)");
		return NULL;
	}
	addr_bind(c->bind, HTTP_BIND_FLAGS, &b);
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->mounts = calloc(c->nmounts + 1, sizeof(*h->mounts))) == NULL ||
	    (h->fails = throttle_new()) == NULL)
		goto nomem;
	h->loop = l;
	TAILQ_INIT(&h->due);
	memcpy(h->mounts, c->mounts, c->nmounts * sizeof(*h->mounts));
	h->nmounts = c->nmounts;
	http_guard_set(h, c, &b);
	if (c->token != NULL) {
		snprintf(h->token, sizeof(h->token), "%s", c->token);
		h->token_len = strlen(h->token);
	}
	if ((fd = http_listen(err, &b, c->bind)) == -1)
		goto fail;
	h->port = http_bound_port(fd);
	snprintf(h->url, sizeof(h->url), "%s://%s:%u", h->tls != NULL ?
	    "https" : "http", !b.wildcard ? b.host :
	    b.ss.ss_family == AF_INET6 ? "[::1]" : "127.0.0.1", h->port);
	if ((h->timer = loop_timer_new(l, http_on_timer, h)) == NULL ||
	    (h->grant_timer = loop_timer_new(l, http_on_grant_timer, h)) ==
	    NULL || (h->due_timer = loop_timer_new(l, http_on_due, h)) == NULL)
		goto nomem;
	/* From here MHD owns fd: it closes it when it stops, and on some of
	 * its failure paths too, so it is never closed here again (a
	 * second close could hit a descriptor the node thread has opened
	 * since). */
	if (h->tls != NULL)
		tls_use(h->tls);
	h->mhd = MHD_start_daemon(http_poll_mhd_flags |
	    MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
	    (h->tls != NULL ? MHD_USE_TLS : 0), 0,
	    http_accept_policy, h, http_access, h,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, http_notify_conn, h,
	    MHD_OPTION_CONNECTION_LIMIT, http_poll_conn_max,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S,
	    MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, h,
	    /* Last, so that without TLS the list simply ends here: the
	     * certificate is asked for at each handshake, which lets
	     * tls_reload swap it under open connections. */
	    h->tls != NULL ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END,
	    tls_retrieve,
	    MHD_OPTION_END);
	fd = -1;
	if (h->mhd == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start the HTTP server on %s",
		    c->bind);
		goto fail;
	}
	if ((h->poll = http_poll_new(l, h->mhd, http_on_ready, h)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot watch the HTTP server's "
		    "events");
		goto fail;
	}
	/* MHD takes the listening socket into its sets on its first run. */
	http_run(h);
	log_msg(LOG_INFO, "http: serving on %s (%s)%s%s", h->url,
	    h->token_len != 0 ? "token required" : "no token",
	    h->pub_url[0] != '\0' ? ", public URL " : "", h->pub_url);
	return h;
nomem:
	snprintf(err, PAPO_ERR_LEN, "out of memory");
fail:
	if (fd != -1)
		close(fd);
	http_free(h);
	return NULL;
}

void
http_free(struct http *h)
{
	struct http_stream *st;

	if (h == NULL)
		return;
	/* MHD refuses to stop with a suspended connection. */
	h->stopping = 1;
	while (!LIST_EMPTY(&h->waiting))
		http_reply_error(LIST_FIRST(&h->waiting),
		    MHD_HTTP_SERVICE_UNAVAILABLE, "papo serve is stopping");
	LIST_FOREACH(st, &h->streams, entry)
		http_stream_close(st);
	http_poll_free(h->poll);
	if (h->mhd != NULL) {
		/* A few last runs send what is queued and end each stream
		 * with its last chunk, so that clients see an end rather than
		 * a cut; one that does not read is cut after 250 ms.  The
		 * first runs do not wait: in select mode a connection resumed
		 * with its answer takes one to be resumed and asked for the
		 * answer, the next to write it (epoll's does both at once). */
		for (int i = 0; i < HTTP_LAST_RUNS; i++)
			MHD_run(h->mhd);
		for (int i = 0; i < 25 && !LIST_EMPTY(&h->streams); i++)
			MHD_run_wait(h->mhd, 10);
		MHD_stop_daemon(h->mhd);
	}
	if (h->tls != NULL)
		tls_use(NULL);
	loop_timer_free(h->timer);
	loop_timer_free(h->grant_timer);
	loop_timer_free(h->due_timer);
	explicit_bzero(h->token, sizeof(h->token));
	throttle_free(h->fails);
	free(h->mounts);
	free(h);
}

const char *
http_url(const struct http *h)
{
	return h->url;
}

void
http_set_auth_hook(struct http *h, const struct http_auth_hook *hook)
{
	h->auth = *hook;
}

const char *
http_public_url(const struct http *h)
{
	return h->pub_url[0] != '\0' ? h->pub_url : h->url;
}
