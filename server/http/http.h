/*
 * http.h: the daemon's HTTP side.  libmicrohttpd runs inside the main
 * thread's loop, over plain HTTP or HTTPS; requests are matched against
 * route tables, checked (Host and Origin with the public URL and the
 * CORS origins, credentials, method, Content-Type, body size) and only
 * then handed to a handler, which answers at once with http_reply or
 * later, from another event of the same loop, after http_defer or
 * http_submit.  Every error is JSON {"error":"..."} with its status
 * (but for OAuth's, which its handlers shape as RFC 6749 says, and its
 * approval page, HTML).  Everything declared here is for the main
 * thread only.
 */
#ifndef PAPO_HTTP_H
#define PAPO_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/addr.h"
#include "lib/loop.h"
#include "node/node.h"

#define HTTP_BODY_MAX (64 * 1024)     /* bytes of a request body */
#define HTTP_TOKEN_MAX 256            /* bytes of the bearer token */
/* PAPO_TOKEN's fewest characters: 128 bits even as hex digits. */
#define HTTP_TOKEN_MIN 32
#define HTTP_DEFAULT_BIND "127.0.0.1:7777"
/* How every part reads PAPO_HTTP (addr_bind): port 0 picks a free
 * port, and "localhost" is 127.0.0.1. */
#define HTTP_BIND_FLAGS (ADDR_BIND_ANY_PORT | ADDR_BIND_LOCALHOST)
#define HTTP_URL_MAX 256              /* bytes of PAPO_PUBLIC_URL, and of
                                       * one origin of PAPO_CORS_ORIGINS */
#define HTTP_CORS_MAX 16              /* origins in PAPO_CORS_ORIGINS */

/*
 * Content-Security-Policy of the dashboard's files: scripts, styles and
 * connections only from this daemon, nothing inline, no frames, no
 * forms posting elsewhere; images also from the blob: URLs the page
 * makes of shared files it fetched with the token (previews).  JSON
 * answers get one that allows nothing.
 */
#define HTTP_CSP_PAGE "default-src 'none'; script-src 'self'; " \
	"style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; " \
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define HTTP_CSP_DATA "default-src 'none'; frame-ancestors 'none'"

struct http;
struct http_req;
struct tls;

/*
 * A handler runs once per request, after the checks passed and the whole
 * body arrived.  It must not block: it answers with http_reply (or
 * http_reply_error), or hands the request on with http_defer or
 * http_submit and answers later.  arg is its mount's.
 */
typedef void http_handler(struct http_req *r, void *arg);

struct http_route {
	const char *method;       /* "GET" (which serves HEAD too) or "POST" */
	const char *path;         /* matched exactly, but that a segment
	                           * "*" matches any one segment of the
	                           * request's path (http_req_segment) */
	http_handler *handler;
	int open;                 /* bits: HTTP_OPEN, HTTP_UPLOAD,
	                           * HTTP_LARGE */
};

/* A route's bits.  HTTP_OPEN: served without the token (/healthz).
 * HTTP_UPLOAD: a POST whose body is a file of any size and type: no
 * Content-Type or size check here; its handler runs as soon as the
 * headers passed the other checks, before the body, and takes the body
 * as it comes with http_req_sink (or answers at once). */
#define HTTP_OPEN 1
#define HTTP_UPLOAD 2
/* HTTP_LARGE: a JSON body of up to HTTP_LARGE_MAX bytes instead of
 * HTTP_BODY_MAX (/mcp: send's inline attachments, 1 MiB each as base64),
 * still read whole into memory. */
#define HTTP_LARGE 4
#define HTTP_LARGE_MAX (2 * 1024 * 1024)

/* A module's routes, and the argument its handlers get. */
struct http_mount {
	const struct http_route *routes;
	size_t nroutes;
	void *arg;
	int form;                 /* 1: its POST bodies are forms
	                           * (application/x-www-form-urlencoded),
	                           * not JSON: OAuth's /token, /authorize */
};

struct http_config {
	const char *bind;         /* "ADDR:PORT"; port 0 picks a free one */
	const char *token;        /* NULL or "": no token */
	struct tls *tls;          /* NULL: plain HTTP; else HTTPS with it
	                           * (the caller keeps it, and frees it
	                           * after http_free) */
	const char *public_url;   /* PAPO_PUBLIC_URL, or NULL */
	const char *cors;         /* PAPO_CORS_ORIGINS, or NULL */
	const struct http_mount *mounts;
	size_t nmounts;
};

/*
 * Checks the settings of c (mounts aside) before anything else starts:
 * -1 with err when the address is not ADDR:PORT, when the token is
 * malformed, when the address is not loopback and there is no token,
 * when the public URL is not "https://HOST[:PORT]" (or http://), or
 * when an origin of the CORS list is not "SCHEME://HOST[:PORT]".
 */
int http_check(char err[PAPO_ERR_LEN], const struct http_config *c);

/* Binds the socket and starts serving from l.  NULL with err set. */
struct http *http_new(char err[PAPO_ERR_LEN], struct loop *l,
    const struct http_config *c);
/*
 * Answers every request still waiting with 503, closes every connection
 * and the socket.  Call it after node_stop, so that no node answer can
 * still arrive for a request it frees.  NULL is a no-op.
 */
void http_free(struct http *h);
/* Where a client on this machine reaches the daemon: "http://HOST:PORT",
 * or "https://HOST:PORT" over TLS. */
const char *http_url(const struct http *h);
/* How the daemon is reached from outside: PAPO_PUBLIC_URL without a
 * trailing slash, else http_url (what OAuth names as its issuer and the
 * protected resource). */
const char *http_public_url(const struct http *h);

/*
 * Whether r may have come from another machine, whatever its address
 * says: its Host is not a loopback name (localhost, 127.0.0.0/8, [::1]:
 * addr_host_is_loopback), or it carries a proxy's forwarding headers
 * (Forwarded, X-Forwarded-*, X-Real-IP, CF-Connecting-IP, ...).  Such
 * requests go through a tunnel or proxy on this machine, and always
 * need credentials.
 */
int http_req_remote(struct http_req *r);
/*
 * Whether r carries credentials this daemon accepts: today the static
 * token ('Authorization: Bearer PAPO_TOKEN'), compared in constant time.
 * The one place that decides; further kinds of credentials (OAuth
 * access tokens) are added here.
 */
int http_authorized(struct http_req *r);

/*
 * Wrong credentials, counted per client (its address, and whether it
 * came through a tunnel: throttle.h), by http_authorized's caller and
 * by the approval page.  http_auth_wait: before checking r's
 * credential, 0 when it may be checked, else the seconds its client
 * must wait (answer with http_reply_slow).  http_auth_failed: r's was
 * wrong; 1 when its client is slowed from now on (answer 429 too).
 * http_reply_slow: 429 with Retry-After.
 */
unsigned http_auth_wait(struct http_req *r);
int http_auth_failed(struct http_req *r);
void http_reply_slow(struct http_req *r, unsigned wait_s);

/*
 * What a credential other than PAPO_TOKEN belongs to: its grant (an id
 * of the hook's own, NUL-terminated) and when it stops being accepted
 * (milliseconds since the epoch).  Every stream and wait it opens ends
 * then, or when the grant ends earlier (http_grant_ended).
 */
#define HTTP_GRANT_ID_MAX 32
struct http_grant {
	char id[HTTP_GRANT_ID_MAX];
	int64_t expires_ms;
};

/*
 * OAuth's hook into the token check (oauth.c): a bearer token that is
 * not PAPO_TOKEN is accepted when accept(arg, token, grant) says 1,
 * having filled grant, and every 401 carries challenge(arg) as its
 * WWW-Authenticate.  Set once, after http_new; without it only
 * PAPO_TOKEN is accepted.
 */
struct http_auth_hook {
	int (*accept)(void *arg, const char *token, struct http_grant *grant);
	const char *(*challenge)(void *arg);
	void *arg;
};
void http_set_auth_hook(struct http *h, const struct http_auth_hook *hook);
/*
 * The grant id was revoked: every stream opened with one of its tokens
 * ends (after a comment saying why, so the client sees an end, not a
 * cut, and its next request gets 401), and every wait is answered 401.
 * Streams and waits also end by themselves when the token they were
 * opened with expires.  h NULL is a no-op.
 */
void http_grant_ended(struct http *h, const char *id);

/* The room r names (/api/rooms/ROOM/..., or ?room=ROOM), or NULL: the
 * default room.  http_submit gives it to the node. */
#define HTTP_ROOM_PATH_MAX 256
const char *http_req_room(const struct http_req *r);
/* The value of query parameter name, or NULL. */
const char *http_req_query(struct http_req *r, const char *name);
/* The first query parameter not in the NULL-terminated list known, or
 * NULL when there is none. */
const char *http_req_query_unknown(struct http_req *r,
    const char *const *known);
/* The body, NUL-terminated (len excludes the NUL). */
const char *http_req_body(const struct http_req *r, size_t *len);
/* The segment of r's path that its route's "*" matched, or NULL. */
#define HTTP_SEGMENT_MAX 128
const char *http_req_segment(const struct http_req *r);

/*
 * An HTTP_UPLOAD route's handler takes the body with http_req_sink:
 * data(r, bytes, n, arg) for each part as it arrives (never the whole
 * body in memory), then end(r, arg) once it is all in, which must
 * answer (or http_submit) as a handler does.  data returns 0 to go on,
 * or -1 after answering r (an error): the rest of the body is then
 * dropped, or the connection closed when much is left.  Whatever
 * happens (a client that hangs up mid-body too), the request's
 * http_req_on_done callback follows: the place to free what the sink
 * holds.
 */
typedef int http_sink_data(struct http_req *r, const char *data, size_t n,
    void *arg);
typedef void http_sink_end(struct http_req *r, void *arg);
void http_req_sink(struct http_req *r, http_sink_data *data,
    http_sink_end *end, void *arg);

/* The path of the route r matched. */
const char *http_req_path(const struct http_req *r);

/* A request header's value, or NULL. */
const char *http_req_header(struct http_req *r, const char *name);

/* Adds a header to r's answer (name must outlive r; at most 4, values
 * up to HTTP_HEADER_VALUE_MAX bytes).  Call it before the answer. */
#define HTTP_HEADER_VALUE_MAX 4096
void http_reply_header(struct http_req *r, const char *name,
    const char *value);

/* Answers r with status and JSON text (copied).  A second answer to the
 * same request is ignored. */
void http_reply(struct http_req *r, int status, const char *json);
/*
 * Answers r from its handler with 200 and data (len bytes of type, which
 * must outlive the daemon: a static file), under the page's
 * Content-Security-Policy.
 */
void http_reply_file(struct http_req *r, const char *type, const void *data,
    size_t len);
/*
 * Answers r with status and an HTML page (copied) under csp (copied), never
 * framed (X-Frame-Options DENY besides csp's frame-ancestors), never
 * stored (OAuth's approval page).
 */
void http_reply_page(struct http_req *r, int status, const char *html,
    const char *csp);
/*
 * Answers r from its handler (or a node callback) with status and a
 * body of size bytes of type (copied), read as the client takes it:
 * read(arg, pos, out, max) fills out with at most max bytes from pos (0
 * is the body's first byte) and returns how many (at least 1), or -1
 * when it cannot: the connection is then cut, so that a client never
 * takes a short body for a whole one.  Memory stays bounded by max
 * (HTTP_READ_BLOCK) per answer.  release(arg) is called once when the
 * answer is over (sent or not), also when r is never answered this way.
 * The answer carries no-store, nosniff and a CSP that allows nothing,
 * sandboxed: a file shared in a room must not run as the dashboard.
 */
#define HTTP_READ_BLOCK (256 * 1024)
typedef long long http_body_read(void *arg, uint64_t pos, char *out,
    size_t max);
typedef void http_body_release(void *arg);
void http_reply_reader(struct http_req *r, int status, const char *type,
    uint64_t size, http_body_read *read, http_body_release *release,
    void *arg);

/* Answers r with status and {"error": the formatted text}. */
void http_reply_error(struct http_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Keeps r waiting (its connection suspended) until http_reply. */
void http_defer(struct http_req *r);

/*
 * While r waits (deferred), calls gone(r, arg) once if its client hangs
 * up; r is then closed without an answer and must not be used after
 * gone returns.  For requests answered from the main thread only (not
 * http_submit's, whose node answer would find r gone).  gone NULL stops
 * watching.
 */
typedef void http_req_gone(struct http_req *r, void *arg);
void http_req_watch(struct http_req *r, http_req_gone *gone, void *arg);
/* Whether r's client has hung up already (checked now, not waited for). */
int http_req_hungup(struct http_req *r);
/*
 * Calls done(arg, sent) once when r's exchange is over: sent is 1 when
 * its whole answer (a stream's last chunk included) went to the client's
 * connection, 0 when the connection ended first or r was closed without
 * an answer.  What an answer gave a client is counted only then.
 */
typedef void http_req_done(void *arg, int sent);
void http_req_on_done(struct http_req *r, http_req_done *done, void *arg);

/*
 * Hands m to the node on behalf of r, which waits.  When the node gives
 * m back, http_node_done calls cb(r, m, arg) on the main thread; cb owns
 * m and must answer r, or hand r's next request to the node
 * (http_submit again), or keep r waiting with its client watched
 * (http_req_watch) to answer it later.
 */
typedef void http_node_cb(struct http_req *r, struct node_msg *m, void *arg);
void http_submit(struct http_req *r, struct node *n, struct node_msg *m,
    http_node_cb *cb, void *arg);
/* Takes a finished request that node_take returned with a ctx set by
 * http_submit. */
void http_node_done(struct node_msg *m);

/*
 * Streams: answers r (from its handler) with 200 and a text/event-stream
 * body that stays open.  http_stream_write queues bytes for it (-1 when
 * it is closing); a client that falls behind is let go after what is
 * queued and a comment saying why: more than HTTP_STREAM_MAX bytes
 * waiting for it, or HTTP_STREAM_BEHIND while every stream's queues
 * together hold more than HTTP_STREAMS_BUDGET.  gone(st, arg) is
 * called once when the client leaves or the daemon stops, and st is
 * invalid after it (a client that hangs up is noticed at once, not at
 * the next write); http_stream_close ends a stream after what is queued,
 * and then gone is not called.  NULL when r cannot stream.
 */
#define HTTP_STREAM_MAX (1024 * 1024)
#define HTTP_STREAM_MAX_TEXT "1 MiB"
#define HTTP_STREAM_BEHIND (16 * 1024)
#define HTTP_STREAMS_BUDGET (32 * 1024 * 1024)
#define HTTP_STREAMS_BUDGET_TEXT "32 MiB"
struct http_stream;
typedef void http_stream_gone(struct http_stream *st, void *arg);
struct http_stream *http_stream_open(struct http_req *r,
    http_stream_gone *gone, void *arg);
int http_stream_write(struct http_stream *st, const char *data, size_t n);
/* Queues iov's n parts together, or none of them: an event is never
 * cut by the comment of a client let go. */
int http_stream_writev(struct http_stream *st, const struct iovec *iov,
    int n);
/* Queues one SSE event: head (its "id:"/"event:" lines and "data: "),
 * data, and the blank line that ends it, as one write. */
int http_stream_event(struct http_stream *st, const char *head, size_t hn,
    const char *data, size_t dn);
/* Bytes queued for st's client, not yet taken by its connection. */
size_t http_stream_queued(const struct http_stream *st);
/*
 * Calls more(st, arg) (gone's arg) whenever st's queue has drained and
 * its connection could send more: a writer with much to send (a
 * replay) writes it a part at a time, as the client reads, instead of
 * queueing it all at once.
 */
typedef void http_stream_more(struct http_stream *st, void *arg);
void http_stream_on_drain(struct http_stream *st, http_stream_more *more);
/* Whether st still has a client: open on this side, not hung up. */
int http_stream_live(struct http_stream *st);
void http_stream_close(struct http_stream *st);

#endif
