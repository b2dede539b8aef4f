/*
 * http_stream.c: requests that hold their connection: event streams
 * (what waits for a stream's client bounded per stream and for all
 * streams together, fed on demand), waits for the node (http_submit) or
 * anything else (http_defer), and the client's hang-up noticed at once
 * and handed to the request's owner.  Main thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

#define HTTP_STREAM_BLOCK 1024

/* The kernel's send buffer of a stream's socket (which it doubles): set,
 * it no longer grows to megabytes for a client that does not read, so
 * that such a client is seen to fall behind, and costs little. */
#define HTTP_STREAM_SNDBUF (64 * 1024)

static void http_on_hangup(void *arg, uint32_t events);

/*
 * Watches r's connection for the client hanging up, in the daemon's own
 * loop beside MHD's: while r waits (deferred) or streams, its connection
 * is suspended and MHD would only notice at the next write.
 */
static void
http_watch(struct http_req *r)
{
	int fd;

	if (r->wait.watch_fd != -1 || (fd = http_conn_fd(r->conn)) == -1)
		return;
	if (loop_add_fd(r->h->loop, fd, LOOP_HUP, http_on_hangup, r) == 0)
		r->wait.watch_fd = fd;
}

/*
 * An upload's client is watched while its body comes: a client killed
 * mid-body may leave its last bytes and its FIN queued together, and
 * MHD (edge-triggered epoll) can drain the bytes without seeing the
 * end, keeping the request, and the spool its handler fills, until its
 * idle timeout.  The hang-up has MHD look at the socket again.
 */
void
http_watch_upload(struct http_req *r)
{
	http_watch(r);
}

/* Streams. */

static ssize_t
http_stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct http_stream *st = cls;
	size_t n;

	(void)pos;
	/* Drained: its writer may have more for it now (a replay goes out
	 * as the client reads it, not all at once). */
	if (st->len == st->off && !st->closing && st->more != NULL)
		st->more(st, st->arg);
	if (st->len > st->off) {
		n = st->len - st->off;
		if (n > max)
			n = max;
		memcpy(out, st->buf + st->off, n);
		st->off += n;
		st->h->queued -= n;
		if (st->off == st->len)
			st->off = st->len = 0;
		return (ssize_t)n;
	}
	if (st->closing)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Nothing to send: sleep until http_stream_write wakes us. */
	MHD_suspend_connection(st->conn);
	st->suspended = 1;
	return 0;
}

/* MHD is done with the response: the client left, or the stream ended. */
static void
http_stream_free(void *cls)
{
	struct http_stream *st = cls;

	LIST_REMOVE(st, entry);
	st->h->queued -= st->len - st->off;
	if (st->req != NULL) {
		st->req->live = NULL;
		http_unwatch(st->req);
	}
	if (st->gone != NULL)
		st->gone(st, st->arg);
	free(st->buf);
	free(st);
}

void
http_stream_wake(struct http_stream *st)
{
	if (st->suspended) {
		st->suspended = 0;
		MHD_resume_connection(st->conn);
		http_kick(st->h);
	}
}

static enum MHD_Result
http_queue_stream(struct http_req *r)
{
	struct http_stream *st = r->answer.stream;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	r->answer.stream = NULL;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
	    HTTP_STREAM_BLOCK,
	    http_stream_read, st, http_stream_free);
	if (resp == NULL) {
		http_stream_free(st);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	http_add_headers(r, resp);
	ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	r->state = HTTP_DONE;
	log_msg(LOG_DEBUG, "http: %s %s: stream", r->ask.method, r->ask.path);
	return ret;
}

struct http_stream *
http_stream_open(struct http_req *r, http_stream_gone *gone, void *arg)
{
	struct http_stream *st;
	int fd, sndbuf = HTTP_STREAM_SNDBUF;

	if (r->state != HTTP_RUNNING || (st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->h = r->h;
	st->conn = r->conn;
	st->gone = gone;
	st->arg = arg;
	st->req = r;
	snprintf(st->what, sizeof(st->what), "%s %s", r->ask.method,
	    r->ask.path);
	memcpy(st->grant, r->ask.grant.id, sizeof(st->grant));
	st->grant_end = r->ask.grant_end;
	if (st->grant[0] != '\0')
		http_grant_arm(r->h, st->grant_end);
	LIST_INSERT_HEAD(&r->h->streams, st, entry);
	r->answer.stream = st;
	r->live = st;
	if ((fd = http_conn_fd(r->conn)) != -1)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	http_watch(r);
	r->answer.status = MHD_HTTP_OK;
	r->state = HTTP_ANSWERED;
	return st;
}

/* Appends iov's n parts to st's queue, whatever its size: all or none. */
static int
http_stream_put(struct http_stream *st, const struct iovec *iov, int n,
    size_t total)
{
	if (st->off > 0 && st->len + total > st->cap) {
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
	}
	if (st->len + total > st->cap) {
		size_t cap = st->cap != 0 ? st->cap : 4096;
		char *p;

		while (cap < st->len + total)
			cap *= 2;
		if ((p = realloc(st->buf, cap)) == NULL)
			return -1;
		st->buf = p;
		st->cap = cap;
	}
	for (int i = 0; i < n; i++) {
		memcpy(st->buf + st->len, iov[i].iov_base, iov[i].iov_len);
		st->len += iov[i].iov_len;
	}
	st->h->queued += total;
	return 0;
}

/*
 * st's client reads too slowly for what is sent to it: it is let go
 * after what is queued and a last comment saying why, which it reads
 * if it ever reads again, and comes back with Last-Event-ID.
 */
static void
http_stream_behind(struct http_stream *st, size_t queued, const char *why)
{
	char line[192];
	struct iovec iov;
	int n;

	log_msg(LOG_INFO, "http: %s: its client fell %zu bytes behind "
	    "(%s); closing its stream", st->what, queued, why);
	n = snprintf(line, sizeof(line), ": this client fell %zu bytes "
	    "behind (%s); the stream ends: reconnect, with Last-Event-ID, "
	    "and read as it comes\n\n", queued, why);
	iov.iov_base = line;
	iov.iov_len = (size_t)n;
	http_stream_put(st, &iov, 1, iov.iov_len);
	st->closing = 1;          /* gone() still follows */
	http_stream_wake(st);
}

int
http_stream_writev(struct http_stream *st, const struct iovec *iov, int n)
{
	size_t queued = st->len - st->off, total = 0;

	if (st->closing)
		return -1;
	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (queued + total > HTTP_STREAM_MAX) {
		http_stream_behind(st, queued, "at most " HTTP_STREAM_MAX_TEXT
		    " wait for one client");
		return -1;
	}
	/* Many slow clients together: while every stream's queues hold
	 * more than the budget, a client already behind is let go rather
	 * than given more. */
	if (st->h->queued + total > HTTP_STREAMS_BUDGET &&
	    queued >= HTTP_STREAM_BEHIND) {
		http_stream_behind(st, queued, "the daemon's streams hold "
		    HTTP_STREAMS_BUDGET_TEXT " waiting for slow clients");
		return -1;
	}
	if (http_stream_put(st, iov, n, total) == -1)
		return -1;
	http_stream_wake(st);
	return 0;
}

int
http_stream_write(struct http_stream *st, const char *data, size_t n)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = n };

	return http_stream_writev(st, &iov, 1);
}

int
http_stream_event(struct http_stream *st, const char *head, size_t hn,
    const char *data, size_t dn)
{
	struct iovec iov[3] = {
		{ .iov_base = (void *)head, .iov_len = hn },
		{ .iov_base = (void *)data, .iov_len = dn },
		{ .iov_base = (void *)"\n\n", .iov_len = 2 },
	};

	return http_stream_writev(st, iov, 3);
}

size_t
http_stream_queued(const struct http_stream *st)
{
	return st->len - st->off;
}

void
http_stream_on_drain(struct http_stream *st, http_stream_more *more)
{
	st->more = more;
}

int
http_stream_live(struct http_stream *st)
{
	return !st->closing && !http_conn_hungup(st->conn);
}

void
http_stream_close(struct http_stream *st)
{
	st->closing = 1;
	st->gone = NULL;
	http_stream_wake(st);
}

/* An answer read as it goes (http_reply_reader). */
static ssize_t
http_reader_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct http_req *r = cls;
	long long n;

	n = r->answer.reader(r->answer.reader_arg, pos, out, max);
	if (n <= 0 || (size_t)n > max)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	/* MHD is asked for more only once it sent the last block: it runs
	 * again at once, not after http_run's back-off (as for uploads). */
	http_kick(r->h);
	return (ssize_t)n;
}

static enum MHD_Result
http_queue_reader(struct http_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_callback(r->answer.reader_size,
	    HTTP_READ_BLOCK, http_reader_read, r, NULL);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    r->answer.reader_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
	    "no-store");
	MHD_add_response_header(resp, "Content-Security-Policy",
	    HTTP_CSP_DATA "; sandbox");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	http_add_headers(r, resp);
	ret = MHD_queue_response(r->conn, (unsigned)r->answer.status, resp);
	MHD_destroy_response(resp);
	r->state = HTTP_DONE;
	log_msg(LOG_DEBUG, "http: %s %s: %d, %llu bytes", r->ask.method,
	    r->ask.path, r->answer.status,
	    (unsigned long long)r->answer.reader_size);
	return ret;
}

enum MHD_Result
http_queue(struct http_req *r)
{
	static const char nomem[] = "{\"error\":\"out of memory\"}\n";
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int status = r->answer.status;

	if (r->answer.stream != NULL)
		return http_queue_stream(r);
	if (r->answer.reader != NULL)
		return http_queue_reader(r);
	if (r->answer.file != NULL) {
		resp = MHD_create_response_from_buffer(r->answer.file_len,
		    (void *)r->answer.file, MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    r->answer.file_type);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-cache");
		MHD_add_response_header(resp, "Content-Security-Policy",
		    HTTP_CSP_PAGE);
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	} else if (r->answer.json != NULL) {
		resp = MHD_create_response_from_buffer(strlen(r->answer.json),
		    r->answer.json, MHD_RESPMEM_MUST_FREE);
		if (resp != NULL)
			r->answer.json = NULL;
	} else {
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		resp = MHD_create_response_from_buffer(strlen(nomem),
		    (void *)nomem, MHD_RESPMEM_PERSISTENT);
	}
	if (resp == NULL)
		return MHD_NO;
	if (r->answer.page_csp != NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    "text/html; charset=utf-8");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-store");
		MHD_add_response_header(resp, "Content-Security-Policy",
		    r->answer.page_csp);
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	} else if (r->answer.file == NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    "application/json");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-store");
		MHD_add_response_header(resp, "Content-Security-Policy",
		    HTTP_CSP_DATA);
	}
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	http_add_headers(r, resp);
	ret = MHD_queue_response(r->conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	r->state = HTTP_DONE;
	log_msg(LOG_DEBUG, "http: %s %s: %d", r->ask.method, r->ask.path,
	    status);
	return ret;
}

void
http_defer(struct http_req *r)
{
	struct http *h = r->h;

	if (r->state != HTTP_RUNNING)
		return;
	r->state = HTTP_WAITING;
	LIST_INSERT_HEAD(&h->waiting, r, wait.entry);
	if (r->ask.grant.id[0] != '\0')
		http_grant_arm(h, r->ask.grant_end);
}

void
http_req_watch(struct http_req *r, http_req_gone *gone, void *arg)
{
	r->wait.gone = gone;
	r->wait.gone_arg = arg;
	if (gone != NULL)
		http_watch(r);
	else if (r->live == NULL)
		http_unwatch(r);
}

int
http_req_hungup(struct http_req *r)
{
	return http_conn_hungup(r->conn);
}

void
http_req_on_done(struct http_req *r, http_req_done *done, void *arg)
{
	r->answer.done = done;
	r->answer.done_arg = arg;
}

/*
 * The client of a waiting or streaming request hung up.  A waiting one
 * is closed without an answer once its owner has forgotten it (gone); a
 * stream ends, and its gone() follows from http_stream_free.
 */
static void
http_on_hangup(void *arg, uint32_t events)
{
	struct http_req *r = arg;
	http_req_gone *gone = r->wait.gone;

	(void)events;
	http_unwatch(r);
	/* A resumed connection is marked ready to read, so MHD reads what
	 * is left and then the end: the request ends, and with it the
	 * upload (its on_done). */
	if (r->state == HTTP_READING && r->body.sink != NULL) {
		log_msg(LOG_DEBUG, "http: %s %s: the client left mid-body",
		    r->ask.method, r->ask.path);
		MHD_suspend_connection(r->conn);
		MHD_resume_connection(r->conn);
		http_kick(r->h);
		return;
	}
	if (r->live != NULL) {
		r->live->closing = 1;
		http_stream_wake(r->live);
		return;
	}
	if (r->state != HTTP_WAITING)
		return;
	log_msg(LOG_DEBUG, "http: %s %s: the client left", r->ask.method,
	    r->ask.path);
	r->wait.gone = NULL;
	if (gone != NULL)
		gone(r, r->wait.gone_arg);
	if (r->state == HTTP_WAITING) {
		r->drop = 1;
		http_reply(r, MHD_HTTP_BAD_REQUEST, "");
	}
}

/* Grants: what a stream or wait opened with an OAuth token may do ends
 * with the grant, or with the token's life. */

/* Has the timer fire at end, unless it fires before. */
void
http_grant_arm(struct http *h, uint64_t end)
{
	if (h->grant_next == 0 || end < h->grant_next) {
		h->grant_next = end;
		loop_timer_set(h->grant_timer, end);
	}
}

void
http_submit(struct http_req *r, struct node *n, struct node_msg *m,
    http_node_cb *cb, void *arg)
{
	m->ctx = r;
	if (m->room == NULL && r->ask.room != NULL)
		m->room = strdup(r->ask.room);
	r->wait.node_cb = cb;
	r->wait.node_arg = arg;
	http_defer(r);
	node_submit(n, m);
}

void
http_node_done(struct node_msg *m)
{
	struct http_req *r = m->ctx;
	http_node_cb *cb;

	if (r == NULL || r->wait.node_cb == NULL) {
		node_msg_free(m);
		return;
	}
	cb = r->wait.node_cb;
	r->wait.node_cb = NULL;
	cb(r, m, r->wait.node_arg);
	/* A callback may ask the node again for the same request (MCP's
	 * send adds its files first), or keep it waiting, watching its
	 * client (http_req_watch), to answer it later. */
	if (r->state == HTTP_WAITING && r->wait.node_cb == NULL &&
	    r->wait.gone == NULL)
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "the node's answer was not used");
}
