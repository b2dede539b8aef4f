/*
 * http_int.h: the HTTP module's internal header, included only by its
 * files (http.c, http_route.c, http_auth.c, http_grant.c, http_stream.c,
 * http_reply.c, http_conn.c, http_req.c, http_guard.c,
 * which call one way, in that order): its limits, the request, stream,
 * connection and daemon structs, and the functions that cross between
 * the files.
 */
#ifndef PAPO_HTTP_INT_H
#define PAPO_HTTP_INT_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/throttle.h"

/* Body bytes read and dropped so that an error can be answered without
 * resetting a client that is still sending; past this the connection is
 * closed instead. */
#define HTTP_DISCARD_MAX (1024 * 1024)

/* Connections of one client address (an IPv6 /64) whose last request
 * showed no credentials (or that have sent none yet): those being
 * opened, sending their request, being answered or kept alive.  A flood
 * from one address cannot take the connections the others need; a
 * client with credentials (any loopback one when no token is set) is
 * never refused for its own streams, waits and kept-alive pool. */
#define HTTP_ADDR_MAX 64

#define HTTP_PEER_BUCKETS 256

#define HTTP_HOST_LEN 64           /* "[" IPv6 "]" NUL, rounded up */

#define HTTP_NAME_MAX 256          /* a DNS name, and its NUL */

#define HTTP_HEADERS_MAX 4

enum http_state {
	HTTP_READING,       /* headers passed the checks; the body arrives */
	HTTP_RUNNING,       /* inside its handler */
	HTTP_WAITING,       /* deferred; its connection is suspended */
	HTTP_ANSWERED,      /* the answer is ready to queue */
	HTTP_DONE,          /* the answer is queued with MHD */
};

/* What the request asked and who asked it: set by http_begin and
 * http_screen (http_route.c), its credentials by http_auth.c; what a
 * handler reads through http_req.c. */
struct http_ask {
	const struct http_route *route;
	void *arg;
	int form;                       /* its mount takes forms */
	char method[8];
	char path[128];         /* for the debug log only; may be cut */
	char seg[HTTP_SEGMENT_MAX];     /* what the route's "*" matched */
	char *room;                     /* the room it names, or NULL
	                                 * (http_req_room) */
	char cors[HTTP_URL_MAX + 16];   /* a listed Origin, answered with
	                                 * CORS headers; or "" */
	int preflight;                  /* an OPTIONS preflight of cors */
	int authed;                     /* passed the credentials check of
	                                 * a route that needs them */
	struct http_grant grant;        /* the grant its token is of; id ""
	                                 * for PAPO_TOKEN or none */
	uint64_t grant_end;             /* loop_now_ns() when that token
	                                 * expires (grant.id set) */
};

/* Its body as it comes in (http.c): kept whole in buf up to
 * http_body_max, or handed to an upload's sink piece by piece. */
struct http_incoming {
	char *buf;
	size_t len, cap;
	size_t dropped;                 /* read and dropped after an error */
	http_sink_data *sink;           /* an upload's body goes here */
	http_sink_end *sink_end;
	void *sink_arg;
};

/* The answer being built (http_reply.c), which http_queue
 * (http_stream.c) hands to MHD. */
struct http_answer {
	int status;
	char *json;
	char *page_csp;                 /* json holds an HTML page */
	const void *file;               /* a static answer (http_reply_file) */
	size_t file_len;
	const char *file_type;
	struct {
		const char *name;   /* Allow, WWW-Authenticate, MCP-Session-Id,
		                     * Location */
		char *value;        /* malloc'd: a redirect can be long */
	} hdr[HTTP_HEADERS_MAX];  /* extra answer headers */
	size_t nhdr;
	http_body_read *reader;         /* the answer's body, read as it
	                                 * goes (http_reply_reader) */
	http_body_release *release;     /* ... and its owner's end */
	void *reader_arg;
	uint64_t reader_size;
	char reader_type[128];
	struct http_stream *stream;     /* the answer is a stream */
	http_req_done *done;            /* the answer was sent, or not */
	void *done_arg;
};

/* A request answered later (http_stream.c): what it waits for, and the
 * watch on its connection for a client that leaves meanwhile
 * (http_conn.c). */
struct http_wait {
	http_node_cb *node_cb;
	void *node_arg;
	http_req_gone *gone;            /* the client left while WAITING */
	void *gone_arg;
	int watch_fd;                   /* in the loop for hang-ups, or -1 */
	LIST_ENTRY(http_req) entry;     /* in h->waiting while WAITING */
};

/* One request, from its headers to MHD's completion call: a part per
 * stage, each filled by the file named above it. */
struct http_req {
	struct http *h;
	struct MHD_Connection *conn;
	struct http_conn *c;            /* its connection's */
	enum http_state state;
	int suspended;
	int drop;                       /* close without an answer */
	struct http_stream *live;       /* the stream it answers with */
	struct http_ask ask;
	struct http_incoming body;
	struct http_answer answer;
	struct http_wait wait;
};

/* An answer that stays open (server-sent events): bytes written to it
 * wait in buf until MHD asks for them; with nothing to send, its
 * connection is suspended, and a write resumes it. */
struct http_stream {
	struct http *h;
	struct MHD_Connection *conn;
	char *buf;
	size_t len, off, cap;
	int suspended;
	int closing;
	http_stream_gone *gone;
	http_stream_more *more;
	void *arg;
	char what[48];                    /* "METHOD PATH", for the log */
	struct http_req *req;             /* its request, until either ends */
	char grant[HTTP_GRANT_ID_MAX];    /* its request's, or "" */
	uint64_t grant_end;
	LIST_ENTRY(http_stream) entry;    /* in h->streams */
};

/* A client address (its IPv6 /64), and how many of its connections
 * count against HTTP_ADDR_MAX. */
struct http_peer {
	unsigned char key[9];           /* family, then 4 or 8 bytes */
	unsigned n;                     /* counted connections */
	unsigned refs;                  /* connections of it */
	LIST_ENTRY(http_peer) entry;
};

/* What the daemon keeps of one TCP connection, from MHD's start to its
 * close notification. */
struct http_conn {
	struct http_peer *peer;
	int fd;
	int counted;                    /* in peer->n */
	uint64_t deadline;              /* its request's headers are due by;
	                                 * 0 once they came */
	TAILQ_ENTRY(http_conn) due;     /* in h->due while deadline != 0 */
};

/* A parsed origin, "SCHEME://NAME[:PORT]" (the port defaults to the
 * scheme's). */
struct http_origin {
	int https;
	char name[HTTP_NAME_MAX];
	unsigned port;
};

struct http {
	struct loop *loop;
	struct MHD_Daemon *mhd;
	struct loop_timer *timer;
	struct http_poll *poll;     /* MHD's descriptors in the loop */
	int kicked;
	unsigned spins;             /* MHD_run calls in a row that MHD asked
	                             * to repeat at once */
	int stopping;               /* http_free runs: no handler may start */
	struct http_mount *mounts;
	size_t nmounts;
	char token[HTTP_TOKEN_MAX + 1];
	size_t token_len;
	unsigned port;
	char host[HTTP_HOST_LEN];   /* the bound address as a Host names it */
	int wildcard;
	char url[HTTP_HOST_LEN + 16];
	struct tls *tls;            /* NULL: plain HTTP */
	char pub_url[HTTP_URL_MAX]; /* PAPO_PUBLIC_URL, or "" */
	struct http_origin pub;     /* ... parsed */
	struct http_origin cors[HTTP_CORS_MAX];
	size_t ncors;
	LIST_HEAD(, http_req) waiting;
	LIST_HEAD(, http_stream) streams;
	struct http_auth_hook auth;  /* OAuth's, when it is on */
	struct throttle *fails;      /* wrong credentials per client */
	struct loop_timer *grant_timer; /* the first expiry of a token that
	                                 * a stream or wait was opened with */
	uint64_t grant_next;        /* when grant_timer fires, or 0 */
	LIST_HEAD(, http_peer) peers[HTTP_PEER_BUCKETS];
	TAILQ_HEAD(, http_conn) due; /* by deadline: all have the same delay */
	struct loop_timer *due_timer;
	size_t queued;              /* bytes waiting in every stream */
	uint64_t refused_logged;    /* when a refusal was last logged */
	unsigned long refused;      /* refusals since */
};

enum http_origin_kind {
	HTTP_ORIGIN_BAD,        /* refused: 403 */
	HTTP_ORIGIN_NONE,       /* no Origin: not a browser's request */
	HTTP_ORIGIN_SELF,       /* the daemon's own pages */
	HTTP_ORIGIN_CORS,       /* a page of PAPO_CORS_ORIGINS */
};

/* http_guard.c */
int http_parse_origin(const char *s, struct http_origin *o);
int http_parse_cors(char err[PAPO_ERR_LEN], const char *list,
    struct http_origin *out, size_t *n);
int http_split_host(const char *s, char name[HTTP_NAME_MAX], unsigned *port);
/* Sets what http_origin_check reads of h (TLS or not, the public URL,
 * the CORS origins, the bound host, wildcard or not) from c, which
 * http_check passed, and b, c's address; h->port is the caller's. */
void http_guard_set(struct http *h, const struct http_config *c,
    const struct addr_bind *b);
enum http_origin_kind http_origin_check(const struct http *h,
    const char *host, const char *origin);
int http_token_equal(const char *given, const char *token, size_t n);
int http_peer_key(const struct sockaddr *sa, unsigned char key[9]);

/* http_req.c */
const char *http_header(struct http_req *r, const char *name);
const char *http_room_path(struct http_req *r, const char *url, char *out,
    size_t len);
/* The most bytes r's body may have: HTTP_BODY_MAX, or HTTP_LARGE_MAX for
 * a route marked HTTP_LARGE. */
size_t http_body_max(const struct http_req *r);

/* http_conn.c */
int http_conn_fd(struct MHD_Connection *conn);
int http_conn_hungup(struct MHD_Connection *conn);
void http_unwatch(struct http_req *r);
void http_unwait(struct http_req *r);
enum MHD_Result http_accept_policy(void *cls, const struct sockaddr *sa,
    socklen_t len);
void http_conn_count(struct http_conn *c, int on);
void http_due_add(struct http *h, struct http_conn *c);
void http_due_del(struct http *h, struct http_conn *c);
void http_on_due(void *arg);
void http_notify_conn(void *cls, struct MHD_Connection *conn, void **ctx,
    enum MHD_ConnectionNotificationCode code);
struct http_conn *http_conn_of(struct MHD_Connection *conn);
void http_kick(struct http *h);

/* http_reply.c */
void http_add_headers(struct http_req *r, struct MHD_Response *resp);

/* http_stream.c */
void http_watch_upload(struct http_req *r);
void http_stream_wake(struct http_stream *st);
enum MHD_Result http_queue(struct http_req *r);
void http_grant_arm(struct http *h, uint64_t end);

/* http_grant.c */
void http_on_grant_timer(void *arg);

/* http_auth.c */
int http_screen_auth(struct http_req *r);

/* http_route.c */
int http_path_match(const char *pattern, const char *path,
    char seg[HTTP_SEGMENT_MAX]);
void http_screen(struct http_req *r, const char *url, const char *method);
int http_answer_early(struct http_req *r);

#endif
