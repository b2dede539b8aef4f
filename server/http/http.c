/*
 * http.c: libmicrohttpd in external-epoll mode, on the main thread.  MHD's
 * epoll descriptor sits in the daemon's loop, and MHD_run is called when
 * it is readable or when MHD's own timeout (one loop timer) expires, so
 * there is no HTTP thread and an idle daemon sleeps.  This file owns the
 * listening socket, the connections and their requests, the route
 * lookup, and the checks every request passes before a handler sees it
 * (in this order): Host and Origin (DNS rebinding and CORS in one check,
 * 403), a listed origin's CORS preflight (204), credentials (401, or 403
 * for a tunnel's request when there are none to check), the path and
 * method (404, 405), the Content-Type of a POST (415) and the body size
 * (413).  Over HTTPS, MHD's GnuTLS does the TLS and tls.c hands it the
 * certificate at each handshake.  A request that waits (for the node, or
 * anything else) is a suspended connection, resumed when its answer is
 * ready.  Nothing here may block: a callback that waited would stop every
 * other client and the node's answers with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "lib/addr.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/throttle.h"
#include "server/http/tls.h"

/* Body bytes read and dropped so that an error can be answered without
 * resetting a client that is still sending; past this the connection is
 * closed instead. */
#define HTTP_DISCARD_MAX (1024 * 1024)
#define HTTP_CONN_MAX 4096         /* connections at once (streams too) */
#define HTTP_IDLE_S 60             /* an idle connection is closed after */
/* Connections of one client address (an IPv6 /64) that hold no stream
 * or wait of a request that showed credentials: those being opened,
 * sending their request, being answered or kept alive.  A flood from
 * one address cannot take the connections the others need. */
#define HTTP_ADDR_MAX 64
/* A connection must have sent a request's headers this long after it
 * was opened, or after its previous request ended; else it is closed
 * (one byte a minute keeps no connection). */
#define HTTP_REQUEST_NS (10ull * NS_PER_S)
#define HTTP_PEER_BUCKETS 256
#define HTTP_REFUSED_LOG_NS (60ull * NS_PER_S)
/* Memory per connection: MHD's pool (request line and headers, the read
 * and write buffers) and the block a stream's answer is read in.  Event
 * streams are what piles up (a thousand idle ones are the design load);
 * MHD's defaults (32 KiB and the 16 KiB block we asked for) made them
 * 41 KB each, these 25 KB (docs/PERFORMANCE.md).  Headers up to 16 KiB
 * still fit; a larger event goes out in several blocks. */
#define HTTP_CONN_MEMORY (16 * 1024)
#define HTTP_STREAM_BLOCK 1024
/* The kernel's send buffer of a stream's socket (which it doubles): set,
 * it no longer grows to megabytes for a client that does not read, so
 * that such a client is seen to fall behind, and costs little. */
#define HTTP_STREAM_SNDBUF (64 * 1024)
#define HTTP_HOST_LEN 64           /* "[" IPv6 "]" NUL, rounded up */
#define HTTP_NAME_MAX 256          /* a DNS name, and its NUL */
#define HTTP_CORS_AGE "600"        /* seconds a preflight's answer holds */
/* After this many runs in a row with a timeout of 0 from MHD, the next
 * ones back off, doubling from 1 ms up to HTTP_SPIN_MAX_MS (see
 * http_run). */
#define HTTP_SPINS_FREE 2
#define HTTP_SPIN_MAX_MS 50
#define HTTP_ALLOW_LEN 32
#define HTTP_HEADERS_MAX 4

enum http_state {
	HTTP_READING,       /* headers passed the checks; the body arrives */
	HTTP_RUNNING,       /* inside its handler */
	HTTP_WAITING,       /* deferred; its connection is suspended */
	HTTP_ANSWERED,      /* the answer is ready to queue */
	HTTP_DONE,          /* the answer is queued with MHD */
};

struct http_req {
	struct http *h;
	struct MHD_Connection *conn;
	const struct http_route *route;
	void *arg;
	int form;                       /* its mount takes forms */
	enum http_state state;
	int suspended;
	char method[8];
	char path[128];         /* for the debug log only; may be cut */
	char *body;
	size_t len, cap;
	size_t dropped;
	int status;
	char *json;
	const void *file;               /* a static answer (http_reply_file) */
	size_t file_len;
	const char *file_type;
	struct {
		const char *name;   /* Allow, WWW-Authenticate, MCP-Session-Id,
		                     * Location */
		char *value;        /* malloc'd: a redirect can be long */
	} hdr[HTTP_HEADERS_MAX];  /* extra answer headers */
	char *page_csp;                 /* json holds an HTML page */
	size_t nhdr;
	http_node_cb *node_cb;
	void *node_arg;
	struct http_stream *stream;     /* the answer is a stream */
	LIST_ENTRY(http_req) wait;      /* in h->waiting while WAITING */
	int watch_fd;                   /* in the loop for hang-ups, or -1 */
	int drop;                       /* close without an answer */
	struct http_stream *live;       /* the stream it answers with */
	http_req_gone *gone;            /* the client left while WAITING */
	void *gone_arg;
	http_req_done *done;            /* the answer was sent, or not */
	void *done_arg;
	char cors[HTTP_URL_MAX + 16];   /* a listed Origin, answered with
	                                 * CORS headers; or "" */
	int preflight;                  /* an OPTIONS preflight of cors */
	int authed;                     /* passed the credentials check of
	                                 * a route that needs them */
	char *room;                     /* the room it names, or NULL
	                                 * (http_req_room) */
	struct http_conn *c;            /* its connection's */
	struct http_grant grant;        /* the grant its token is of; id ""
	                                 * for PAPO_TOKEN or none */
	uint64_t grant_end;             /* loop_now_ns() when that token
	                                 * expires (grant.id set) */
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
	int epfd;
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

/* A parsed bind address. */
struct http_bind {
	struct sockaddr_storage ss;
	socklen_t sslen;
	char host[HTTP_HOST_LEN];   /* "127.0.0.1", "[::1]" */
	unsigned port;
	int loopback, wildcard;
};

static void http_kick(struct http *);
static void http_grant_arm(struct http *, uint64_t);
static void http_on_grant_timer(void *);
static void http_conn_held(struct http_req *);

/* Parses "ADDR:PORT" (IPv6 in brackets, "localhost" for 127.0.0.1). */
static int
http_parse_bind(const char *s, struct http_bind *b)
{
	struct addr_hostport hp;
	char ip[HTTP_HOST_LEN];
	unsigned long port;
	int v6;

	memset(b, 0, sizeof(*b));
	if (addr_hostport(s, strlen(s), &hp) != ADDR_OK ||
	    hp.port == ADDR_NO_PORT || strlen(hp.host) >= sizeof(ip))
		return -1;
	v6 = hp.v6;
	port = (unsigned long)hp.port;
	snprintf(ip, sizeof(ip), "%s", !v6 && strcmp(hp.host, "localhost") ==
	    0 ? "127.0.0.1" : hp.host);
	b->port = (unsigned)port;
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&b->ss;

		if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1)
			return -1;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		b->sslen = sizeof(*a);
		b->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
		b->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr);
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		snprintf(b->host, sizeof(b->host), "[%s]", ip);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&b->ss;

		if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
			return -1;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		b->sslen = sizeof(*a);
		b->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
		b->wildcard = a->sin_addr.s_addr == htonl(INADDR_ANY);
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		snprintf(b->host, sizeof(b->host), "%s", ip);
	}
	return 0;
}

static int
http_token_valid(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > HTTP_TOKEN_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i] < 0x21 || t[i] > 0x7e)
			return 0;
	return 1;
}

/*
 * Parses an origin "SCHEME://NAME[:PORT]" (http or https, NAME a DNS
 * name, an IPv4 address or a bracketed IPv6 one), with at most a
 * trailing "/" after it: no path, user or query.
 */
static int
http_parse_origin(const char *s, struct http_origin *o)
{
	struct addr_hostport hp;
	const char *rest;
	size_t n;

	memset(o, 0, sizeof(*o));
	if (strncasecmp(s, "https://", 8) == 0) {
		o->https = 1;
		rest = s + 8;
	} else if (strncasecmp(s, "http://", 7) == 0) {
		rest = s + 7;
	} else {
		return -1;
	}
	n = strlen(rest);
	if (n > 0 && rest[n - 1] == '/')
		n--;
	if (addr_hostport(rest, n, &hp) != ADDR_OK || hp.port == 0 ||
	    strlen(hp.host) + 2 >= sizeof(o->name))
		return -1;
	for (const char *c = hp.host; *c != '\0'; c++)
		if (strchr("/?#@ \t[]", *c) != NULL || (unsigned char)*c < 0x21)
			return -1;
	/* The name as the Origin header spells it: IPv6 in brackets. */
	snprintf(o->name, sizeof(o->name), hp.v6 ? "[%s]" : "%s", hp.host);
	o->port = hp.port != ADDR_NO_PORT ? (unsigned)hp.port :
	    o->https ? 443 : 80;
	return 0;
}

static int
http_origin_equal(const struct http_origin *a, const struct http_origin *b)
{
	return a->https == b->https && a->port == b->port &&
	    strcasecmp(a->name, b->name) == 0;
}

/* Splits PAPO_CORS_ORIGINS (origins separated by commas or white space)
 * into out.  -1 with err naming the first bad one. */
static int
http_parse_cors(char err[PAPO_ERR_LEN], const char *list,
    struct http_origin *out, size_t *n)
{
	char one[HTTP_URL_MAX];
	size_t len;

	*n = 0;
	while (list != NULL && *list != '\0') {
		list += strspn(list, ", \t\n");
		if ((len = strcspn(list, ", \t\n")) == 0)
			break;
		if (len >= sizeof(one)) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: an origin "
			    "is longer than %d bytes", HTTP_URL_MAX - 1);
			return -1;
		}
		memcpy(one, list, len);
		one[len] = '\0';
		list += len;
		if (*n == HTTP_CORS_MAX) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: more than "
			    "%d origins", HTTP_CORS_MAX);
			return -1;
		}
		if (strcmp(one, "*") == 0 || http_parse_origin(one,
		    &out[*n]) == -1) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: '%s' is "
			    "not an origin such as https://app.example.net or "
			    "http://127.0.0.1:5173 (no path, no wildcard)", one);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

int
http_check(char err[PAPO_ERR_LEN], const struct http_config *c)
{
	struct http_origin o[HTTP_CORS_MAX];
	struct http_bind b;
	const char *token = c->token;
	size_t n;

	if (http_parse_bind(c->bind, &b) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the HTTP address '%s' is not "
		    "ADDR:PORT (for example 127.0.0.1:7777)", c->bind);
		return -1;
	}
	if (token != NULL && token[0] != '\0' && !http_token_valid(token)) {
		snprintf(err, PAPO_ERR_LEN, "the token (PAPO_TOKEN or --token) "
		    "must be %d to %d visible ASCII characters, without spaces",
		    HTTP_TOKEN_MIN, HTTP_TOKEN_MAX);
		return -1;
	}
	if (token != NULL && token[0] != '\0' &&
	    strlen(token) < HTTP_TOKEN_MIN) {
		snprintf(err, PAPO_ERR_LEN, "the token (PAPO_TOKEN or --token) "
		    "is %zu characters; it must be at least %d random ones "
		    "(128 bits even as hex), or it can be guessed: make one "
		    "with 'openssl rand -hex 32' or 'head -c 24 /dev/urandom | "
		    "base64'", strlen(token), HTTP_TOKEN_MIN);
		return -1;
	}
	if (!b.loopback && (token == NULL || token[0] == '\0')) {
		snprintf(err, PAPO_ERR_LEN, "refusing to serve HTTP on %s "
		    "without a token, since anyone who reaches it could speak "
		    "in the room: set --token or PAPO_TOKEN, or bind 127.0.0.1",
		    c->bind);
		return -1;
	}
	if (c->public_url != NULL && (strlen(c->public_url) >= HTTP_URL_MAX ||
	    http_parse_origin(c->public_url, &o[0]) == -1)) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_PUBLIC_URL '%.200s' is not a "
		    "URL such as https://papo.example.net (a scheme and a host, "
		    "an optional port, no path)", c->public_url);
		return -1;
	}
	return http_parse_cors(err, c->cors, o, &n);
}

/*
 * Splits a Host value "NAME[:PORT]" (NAME may be a bracketed IPv6
 * address).  The port is 0 when absent.
 */
static int
http_split_host(const char *s, char name[HTTP_NAME_MAX], unsigned *port)
{
	const char *colon;
	unsigned long p;
	size_t n;
	char *stop;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (end == NULL)
			return -1;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != ':' && end[1] != '\0')
			return -1;
		n = (size_t)(end - s + 1);
	} else {
		colon = strchr(s, ':');
		n = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (n == 0 || n >= HTTP_NAME_MAX)
		return -1;
	memcpy(name, s, n);
	name[n] = '\0';
	*port = 0;
	if (colon == NULL)
		return 0;
	if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5)
		return -1;
	p = strtoul(colon + 1, &stop, 10);
	if (*stop != '\0' || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

/* Is name a loopback name: 127.0.0.1, localhost or [::1]? */
static int
http_name_loopback(const char *name)
{
	static const char *const local[] = { "127.0.0.1", "localhost",
	    "[::1]" };

	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (strcasecmp(name, local[i]) == 0)
			return 1;
	return 0;
}

/* Is host one of the names this daemon answers to, with its port: its
 * loopback names and bound address, or PAPO_PUBLIC_URL's host? */
static int
http_host_ours(const struct http *h, const char *host)
{
	char name[HTTP_NAME_MAX];
	unsigned port;

	if (http_split_host(host, name, &port) == -1)
		return 0;
	if (h->pub_url[0] != '\0' && strcasecmp(name, h->pub.name) == 0 &&
	    (port == 0 ? (h->pub.https ? 443u : 80u) : port) == h->pub.port)
		return 1;
	if (port != h->port)
		return 0;
	return http_name_loopback(name) || strcasecmp(name, h->host) == 0;
}

enum http_origin_kind {
	HTTP_ORIGIN_BAD,        /* refused: 403 */
	HTTP_ORIGIN_NONE,       /* no Origin: not a browser's request */
	HTTP_ORIGIN_SELF,       /* the daemon's own pages */
	HTTP_ORIGIN_CORS,       /* a page of PAPO_CORS_ORIGINS */
};

/*
 * The DNS rebinding check, and CORS's: one decision on Host and Origin.
 * On a loopback or named address only this daemon's own names pass (and
 * PAPO_PUBLIC_URL's host).  On a wildcard address (which needs a token)
 * the names it is reached by cannot be known (container names, mapped
 * ports), so any Host passes and the token is the guard; a browser's
 * Origin must then still be the page's own host.  A client without Host
 * (HTTP/1.0) is not a browser, so it passes.  An Origin that is listed
 * in PAPO_CORS_ORIGINS passes, whatever the Host.
 */
static enum http_origin_kind
http_origin_check(const struct http *h, const char *host, const char *origin)
{
	struct http_origin o;
	const char *rest;

	if (host != NULL && !h->wildcard && !http_host_ours(h, host))
		return HTTP_ORIGIN_BAD;
	if (origin == NULL)
		return HTTP_ORIGIN_NONE;
	if (http_parse_origin(origin, &o) == -1)
		return HTTP_ORIGIN_BAD;
	for (size_t i = 0; i < h->ncors; i++)
		if (http_origin_equal(&o, &h->cors[i]))
			return HTTP_ORIGIN_CORS;
	if (h->pub_url[0] != '\0' && http_origin_equal(&o, &h->pub))
		return HTTP_ORIGIN_SELF;
	if (o.https != (h->tls != NULL))
		return HTTP_ORIGIN_BAD;
	rest = origin + (o.https ? 8 : 7);
	if (h->wildcard)
		return host != NULL && strcasecmp(rest, host) == 0 ?
		    HTTP_ORIGIN_SELF : HTTP_ORIGIN_BAD;
	return http_host_ours(h, rest) ? HTTP_ORIGIN_SELF : HTTP_ORIGIN_BAD;
}

/*
 * Compares the given token with ours in a time that depends only on
 * their lengths, never on where they differ, so that timing answers
 * does not reveal the token a byte at a time.
 */
static int
http_token_equal(const char *given, const char *token, size_t n)
{
	size_t glen = strlen(given);
	volatile unsigned char d = glen != n;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)token[i] ^
		    (unsigned char)(i < glen ? given[i] : 0);
	return d == 0;
}

static const char *http_header(struct http_req *, const char *);

/* The headers that proxies and tunnels add (cloudflared, tailscale
 * serve, nginx, Caddy, CDNs): any one of them marks a request as come
 * from elsewhere. */
static const char *const http_forwarding[] = {
	"Forwarded", "X-Forwarded-For", "X-Forwarded-Host",
	"X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Server",
	"X-Real-IP", "X-Client-IP", "X-Cluster-Client-IP", "True-Client-IP",
	"CF-Connecting-IP", "Fastly-Client-IP", "Via", "Tailscale-User-Login",
};

int
http_req_remote(struct http_req *r)
{
	const char *host = http_header(r, MHD_HTTP_HEADER_HOST);
	char name[HTTP_NAME_MAX];
	unsigned port;

	for (size_t i = 0; i < sizeof(http_forwarding) /
	    sizeof(http_forwarding[0]); i++)
		if (http_header(r, http_forwarding[i]) != NULL)
			return 1;
	return host != NULL && (http_split_host(host, name, &port) == -1 ||
	    !http_name_loopback(name));
}

int
http_authorized(struct http_req *r)
{
	const struct http *h = r->h;
	const char *value = http_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
	int64_t now;

	if (h->token_len == 0)
		return 0;
	if (value == NULL || strncasecmp(value, "Bearer ", 7) != 0)
		return 0;
	value += 7;
	while (*value == ' ')
		value++;
	if (http_token_equal(value, h->token, h->token_len))
		return 1;
	if (h->auth.accept == NULL || !h->auth.accept(h->auth.arg, value,
	    &r->grant)) {
		r->grant.id[0] = '\0';
		return 0;
	}
	/* The expiry on the loop's clock, which the timer that ends streams
	 * keeps; a token a moment from its end ends at once. */
	r->grant.id[sizeof(r->grant.id) - 1] = '\0';
	now = (int64_t)loop_wall_ms();
	r->grant_end = loop_now_ns() + (r->grant.expires_ms > now ?
	    (uint64_t)(r->grant.expires_ms - now) * NS_PER_MS : 0);
	return 1;
}

static int http_peer_key(const struct sockaddr *sa, unsigned char key[9]);

/*
 * The client r counts against for wrong credentials: its address, keyed
 * as connections count it (http_peer_key: an IPv6 one by its /64, what
 * one host is given), and whether it came through a tunnel or proxy, so
 * that failures through a tunnel, which connects from loopback too, never
 * slow this machine's own clients.
 */

static void
http_client_key(struct http_req *r, unsigned char key[THROTTLE_KEY_LEN])
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	memset(key, 0, THROTTLE_KEY_LEN);
	if (ci != NULL && ci->client_addr != NULL)
		(void)http_peer_key(ci->client_addr, key);
	key[THROTTLE_KEY_LEN - 1] = (unsigned char)http_req_remote(r);
}

unsigned
http_auth_wait(struct http_req *r)
{
	unsigned char key[THROTTLE_KEY_LEN];
	uint64_t ms;

	http_client_key(r, key);
	ms = throttle_wait(r->h->fails, key, loop_now_ns() / NS_PER_MS);
	return ms == 0 ? 0 : (unsigned)((ms + 999) / 1000);
}

int
http_auth_failed(struct http_req *r)
{
	unsigned char key[THROTTLE_KEY_LEN];
	int slow;

	http_client_key(r, key);
	slow = throttle_failed(r->h->fails, key, loop_now_ns() / NS_PER_MS);
	if (slow)
		log_msg(LOG_DEBUG, "http: too many wrong credentials from one "
		    "client (the last for %s): slowed", r->path);
	return slow;
}

void
http_reply_slow(struct http_req *r, unsigned wait_s)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", wait_s > 0 ? wait_s : 1);
	http_reply_header(r, "Retry-After", v);
	http_reply_error(r, 429, "too many wrong credentials from this client: "
	    "it may try one every %u s until a minute passes without a "
	    "wrong one; check its token (PAPO_TOKEN)", THROTTLE_GAP_MS / 1000);
}

/*
 * The credentials check of a route that needs them: 0 when r may go on.
 * With no token set, a request from this machine's own clients passes,
 * as before; one that came through a tunnel or proxy (http_req_remote)
 * is refused with 403, since nothing it could send would be accepted.
 * With a token, every request must carry it (401).  A client that sent
 * too many wrong ones is slowed (throttle.h): its credential is checked
 * once a second, the others are refused with 429 unchecked, since a
 * check would tell a guesser when it hit.
 */
static int
http_screen_auth(struct http_req *r)
{
	struct http *h = r->h;
	int given = http_header(r, MHD_HTTP_HEADER_AUTHORIZATION) != NULL;
	unsigned wait;

	if (h->token_len == 0) {
		if (!http_req_remote(r))
			return 0;
		http_reply_error(r, MHD_HTTP_FORBIDDEN, "this request came "
		    "through a proxy or tunnel (its Host is not this machine's "
		    "loopback, or it has forwarding headers), and this daemon "
		    "has no credentials to check: set PAPO_TOKEN (or "
		    "PAPO_OAUTH=on) to serve it");
		return -1;
	}
	if (given && (wait = http_auth_wait(r)) > 0) {
		http_reply_slow(r, wait);
		return -1;
	}
	if (http_authorized(r))
		return 0;
	if (given && http_auth_failed(r)) {
		http_reply_slow(r, THROTTLE_GAP_MS / 1000);
		return -1;
	}
	/* With OAuth on, its challenge says where its metadata is. */
	http_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
	    h->auth.challenge != NULL ? h->auth.challenge(h->auth.arg) :
	    "Bearer realm=\"papo\"");
	http_reply_error(r, MHD_HTTP_UNAUTHORIZED, "this daemon needs "
	    "'Authorization: Bearer TOKEN' (its PAPO_TOKEN)");
	return -1;
}

static int
http_method_is(const char *route, const char *method)
{
	return strcmp(route, method) == 0 ||
	    (strcmp(route, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

/*
 * Finds the route of method and path, with its mount's argument.  When
 * there is none, *known says whether the path exists under other
 * methods, which allow then lists.  *open says whether the path is
 * served without the token.
 */
static const struct http_route *
http_route_find(const struct http *h, const char *method, const char *path,
    void **arg, int *form, int *known, int *open, char allow[HTTP_ALLOW_LEN])
{
	const struct http_route *found = NULL;

	*known = *open = 0;
	allow[0] = '\0';
	for (size_t m = 0; m < h->nmounts; m++)
		for (size_t i = 0; i < h->mounts[m].nroutes; i++) {
			const struct http_route *rt = &h->mounts[m].routes[i];

			if (strcmp(rt->path, path) != 0)
				continue;
			*known = 1;
			*open |= rt->open;
			if (found == NULL && http_method_is(rt->method, method)) {
				found = rt;
				*arg = h->mounts[m].arg;
				*form = h->mounts[m].form;
			}
			if (strlen(allow) + strlen(rt->method) + 3 <
			    HTTP_ALLOW_LEN)
				snprintf(allow + strlen(allow), HTTP_ALLOW_LEN -
				    strlen(allow), "%s%s", allow[0] != '\0' ?
				    ", " : "", rt->method);
		}
	return found;
}

/* Is the media type of a Content-Type type (any case, parameters such
 * as charset allowed)? */
static int
http_is_type(const char *ctype, const char *type)
{
	size_t n = strlen(type);

	if (ctype == NULL)
		return 0;
	while (*ctype == ' ')
		ctype++;
	if (strncasecmp(ctype, type, n) != 0)
		return 0;
	ctype += n;
	while (*ctype == ' ')
		ctype++;
	return *ctype == '\0' || *ctype == ';';
}

static int
http_is_json(const char *ctype)
{
	return http_is_type(ctype, "application/json");
}

static const char *
http_header(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *
http_req_header(struct http_req *r, const char *name)
{
	return http_header(r, name);
}

/*
 * One room's routes: /api/rooms/ROOM/REST is /api/REST for that room
 * (its id, its name or the start of its id, percent-encoded), and
 * /api/rooms/ROOM itself is /api/room; any route takes ?room=ROOM too.
 * The room named is the request's (http_req_room), given to the node
 * with what the route submits (http_submit).  Returns the path to route
 * by, in out when it was rewritten.
 */
static const char *
http_room_path(struct http_req *r, const char *url, char *out, size_t len)
{
	static const char prefix[] = "/api/rooms/";
	const char *sel, *rest, *q;
	char room[HTTP_ROOM_PATH_MAX];
	size_t n;

	if ((q = http_req_query(r, "room")) != NULL && q[0] != '\0')
		r->room = strdup(q);
	if (strncmp(url, prefix, sizeof(prefix) - 1) != 0)
		return url;
	sel = url + sizeof(prefix) - 1;
	rest = strchr(sel, '/');
	n = rest != NULL ? (size_t)(rest - sel) : strlen(sel);
	if (n == 0 || n >= sizeof(room))
		return url;
	memcpy(room, sel, n);
	room[n] = '\0';
	MHD_http_unescape(room);
	free(r->room);
	r->room = strdup(room);
	if (rest == NULL || rest[1] == '\0')
		snprintf(out, len, "/api/room");
	else if ((size_t)snprintf(out, len, "/api/%s", rest + 1) >= len)
		return url;
	return out;
}

const char *
http_req_room(const struct http_req *r)
{
	return r->room;
}

/*
 * Runs the checks that need only the headers, in the order the file's
 * opening paragraph gives; a failure answers r at once (state ANSWERED).
 */
static void
http_screen(struct http_req *r, const char *url, const char *method)
{
	struct http *h = r->h;
	const char *cl;
	char allow[HTTP_ALLOW_LEN], route_path[HTTP_ROOM_PATH_MAX];
	int known, open;

	const char *origin = http_header(r, MHD_HTTP_HEADER_ORIGIN);
	enum http_origin_kind kind;

	url = http_room_path(r, url, route_path, sizeof(route_path));
	r->route = http_route_find(h, method, url, &r->arg, &r->form, &known,
	    &open, allow);
	kind = http_origin_check(h, http_header(r, MHD_HTTP_HEADER_HOST),
	    origin);
	if (kind == HTTP_ORIGIN_BAD) {
		http_reply_error(r, MHD_HTTP_FORBIDDEN, "this daemon answers "
		    "only requests addressed to it (Host) from its own pages "
		    "or the origins of PAPO_CORS_ORIGINS (Origin)");
		return;
	}
	if (kind == HTTP_ORIGIN_CORS)
		snprintf(r->cors, sizeof(r->cors), "%s", origin);
	/* A preflight carries no credentials: it is answered for a listed
	 * origin on any path that exists, and the request it announces
	 * passes every check after. */
	if (kind == HTTP_ORIGIN_CORS && strcmp(method, "OPTIONS") == 0 &&
	    known && http_header(r, "Access-Control-Request-Method") != NULL) {
		r->preflight = 1;
		http_reply(r, MHD_HTTP_NO_CONTENT, "");
		return;
	}
	if (!open) {
		if (http_screen_auth(r) == -1)
			return;
		r->authed = 1;
	}
	if (r->route == NULL && !known) {
		http_reply_error(r, MHD_HTTP_NOT_FOUND, "no such path: %s", url);
		return;
	}
	if (r->route == NULL) {
		http_reply_header(r, MHD_HTTP_HEADER_ALLOW, allow);
		http_reply_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, "%s takes %s, "
		    "not %s", url, allow, method);
		return;
	}
	if (strcmp(method, "POST") == 0 && r->form) {
		if (!http_is_type(http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE),
		    "application/x-www-form-urlencoded")) {
			http_reply_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			    "the body must be a form, sent as 'Content-Type: "
			    "application/x-www-form-urlencoded'");
			return;
		}
	} else if (strcmp(method, "POST") == 0 &&
	    !http_is_json(http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE))) {
		http_reply_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "the body "
		    "must be JSON, sent as 'Content-Type: application/json'");
		return;
	}
	cl = http_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > HTTP_BODY_MAX)
		http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "the body has "
		    "%s bytes; at most %d are allowed (a message's text, at "
		    "most %d)", cl, HTTP_BODY_MAX, PAPO_BODY_MAX);
}

/*
 * Whether an early answer goes out before the body: yes when the client
 * waits for "100 Continue" (it has sent nothing yet) or announced more
 * than is worth reading; else the body is read and dropped first, since
 * closing on unread bytes would reset the connection under the answer.
 */
static int
http_answer_early(struct http_req *r)
{
	const char *expect = http_header(r, MHD_HTTP_HEADER_EXPECT);
	const char *cl = http_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
		return 1;
	return cl != NULL && strtoull(cl, NULL, 10) > HTTP_DISCARD_MAX;
}

/* The descriptor of r's connection. */
static int
http_conn_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci != NULL ? ci->connect_fd : -1;
}

/* Whether the client of conn has closed its side (or the connection is
 * broken): what a suspended connection cannot tell MHD. */
static int
http_conn_hungup(struct MHD_Connection *conn)
{
	int fd = http_conn_fd(conn);
	char c;
	ssize_t n;

	if (fd == -1)
		return 1;
	/* 0: the end of the client's side; bytes (a pipelined request):
	 * still there; no bytes yet: still there. */
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR);
}

static void
http_unwatch(struct http_req *r)
{
	if (r->watch_fd != -1) {
		loop_del_fd(r->h->loop, r->watch_fd);
		r->watch_fd = -1;
	}
}

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

	if (r->watch_fd != -1 || (fd = http_conn_fd(r->conn)) == -1)
		return;
	if (loop_add_fd(r->h->loop, fd, EPOLLRDHUP, http_on_hangup, r) == 0)
		r->watch_fd = fd;
}

static void
http_unwait(struct http_req *r)
{
	LIST_REMOVE(r, wait);
	if (r->live == NULL)
		http_unwatch(r);
}

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
	for (size_t i = 0; i < r->nhdr; i++)
		free(r->hdr[i].value);
	free(r->page_csp);
	free(r->body);
	free(r->room);
	free(r->json);
	free(r);
}

void
http_reply_header(struct http_req *r, const char *name, const char *value)
{
	if (r->nhdr == HTTP_HEADERS_MAX ||
	    strnlen(value, HTTP_HEADER_VALUE_MAX + 1) > HTTP_HEADER_VALUE_MAX ||
	    (r->hdr[r->nhdr].value = strdup(value)) == NULL)
		return;
	r->hdr[r->nhdr].name = name;
	r->nhdr++;
}

static void
http_add_headers(struct http_req *r, struct MHD_Response *resp)
{
	for (size_t i = 0; i < r->nhdr; i++)
		MHD_add_response_header(resp, r->hdr[i].name, r->hdr[i].value);
	if (r->cors[0] == '\0')
		return;
	/* A page of a listed origin may read the answer, and the headers
	 * an MCP client needs (the session, the version, and where to
	 * authenticate). */
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->cors);
	MHD_add_response_header(resp, "Vary", "Origin");
	if (r->preflight) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods",
		    "GET, POST, DELETE, OPTIONS");
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
		    "Authorization, Content-Type, Accept, Mcp-Session-Id, "
		    "MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name");
		MHD_add_response_header(resp, "Access-Control-Max-Age",
		    HTTP_CORS_AGE);
	} else {
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
		    "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate");
	}
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

static void
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
	struct http_stream *st = r->stream;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	r->stream = NULL;
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
	log_msg(LOG_DEBUG, "http: %s %s: stream", r->method, r->path);
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
	snprintf(st->what, sizeof(st->what), "%s %s", r->method, r->path);
	memcpy(st->grant, r->grant.id, sizeof(st->grant));
	st->grant_end = r->grant_end;
	if (st->grant[0] != '\0')
		http_grant_arm(r->h, st->grant_end);
	LIST_INSERT_HEAD(&r->h->streams, st, entry);
	r->stream = st;
	r->live = st;
	http_conn_held(r);
	if ((fd = http_conn_fd(r->conn)) != -1)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	http_watch(r);
	r->status = MHD_HTTP_OK;
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

static enum MHD_Result
http_queue(struct http_req *r)
{
	static const char nomem[] = "{\"error\":\"out of memory\"}\n";
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int status = r->status;

	if (r->stream != NULL)
		return http_queue_stream(r);
	if (r->file != NULL) {
		resp = MHD_create_response_from_buffer(r->file_len,
		    (void *)r->file, MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    r->file_type);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-cache");
		MHD_add_response_header(resp, "Content-Security-Policy",
		    HTTP_CSP_PAGE);
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	} else if (r->json != NULL) {
		resp = MHD_create_response_from_buffer(strlen(r->json),
		    r->json, MHD_RESPMEM_MUST_FREE);
		if (resp != NULL)
			r->json = NULL;
	} else {
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		resp = MHD_create_response_from_buffer(strlen(nomem),
		    (void *)nomem, MHD_RESPMEM_PERSISTENT);
	}
	if (resp == NULL)
		return MHD_NO;
	if (r->page_csp != NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    "text/html; charset=utf-8");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-store");
		MHD_add_response_header(resp, "Content-Security-Policy",
		    r->page_csp);
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	} else if (r->file == NULL) {
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
	log_msg(LOG_DEBUG, "http: %s %s: %d", r->method, r->path, status);
	return ret;
}

/* Connections: how many each client address holds, and the deadline of
 * a request's headers. */

/* The key of a client address: IPv4 whole, IPv6 by its /64 (one host
 * holds a /64), an IPv4-mapped IPv6 address as the IPv4 one.  -1 for
 * another family. */
static int
http_peer_key(const struct sockaddr *sa, unsigned char key[9])
{
	memset(key, 0, 9);
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			key[0] = 4;
			memcpy(key + 1, a->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a->s6_addr, 8);
		}
		return 0;
	}
	return -1;
}

static unsigned
http_peer_bucket(const unsigned char key[9])
{
	unsigned v = 2166136261u;

	for (size_t i = 0; i < 9; i++)
		v = (v ^ key[i]) * 16777619u;
	return v % HTTP_PEER_BUCKETS;
}

static struct http_peer *
http_peer_find(struct http *h, const unsigned char key[9])
{
	struct http_peer *p;

	LIST_FOREACH(p, &h->peers[http_peer_bucket(key)], entry)
		if (memcmp(p->key, key, sizeof(p->key)) == 0)
			return p;
	return NULL;
}

/*
 * MHD's accept policy: a connection from an address that holds
 * HTTP_ADDR_MAX counted connections already is closed at once, before
 * it costs anything but the accept.
 */
static enum MHD_Result
http_accept_policy(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct http *h = cls;
	struct http_peer *p;
	unsigned char key[9];
	char text[INET6_ADDRSTRLEN];
	uint64_t now;

	(void)len;
	if (http_peer_key(sa, key) == -1 || (p = http_peer_find(h, key)) ==
	    NULL || p->n < HTTP_ADDR_MAX)
		return MHD_YES;
	h->refused++;
	now = loop_now_ns();
	if (h->refused_logged == 0 || now - h->refused_logged >=
	    HTTP_REFUSED_LOG_NS) {
		inet_ntop(sa->sa_family, sa->sa_family == AF_INET ?
		    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
		    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr,
		    text, sizeof(text));
		log_msg(LOG_WARN, "http: %lu connections refused: %s holds %d "
		    "that have no stream of a request with credentials (at "
		    "most %d per address)", h->refused, text, HTTP_ADDR_MAX,
		    HTTP_ADDR_MAX);
		h->refused_logged = now;
		h->refused = 0;
	}
	return MHD_NO;
}

static void
http_conn_count(struct http_conn *c, int on)
{
	if (c == NULL || c->counted == on || c->peer == NULL)
		return;
	c->counted = on;
	if (on)
		c->peer->n++;
	else
		c->peer->n--;
}

static void
http_due_arm(struct http *h)
{
	struct http_conn *c = TAILQ_FIRST(&h->due);

	loop_timer_set(h->due_timer, c != NULL ? c->deadline : 0);
}

/* Gives c until HTTP_REQUEST_NS from now to send a request's headers. */
static void
http_due_add(struct http *h, struct http_conn *c)
{
	if (c->deadline != 0)
		return;
	c->deadline = loop_now_ns() + HTTP_REQUEST_NS;
	TAILQ_INSERT_TAIL(&h->due, c, due);
	if (TAILQ_FIRST(&h->due) == c)
		http_due_arm(h);
}

static void
http_due_del(struct http *h, struct http_conn *c)
{
	if (c->deadline == 0)
		return;
	TAILQ_REMOVE(&h->due, c, due);
	c->deadline = 0;
}

/*
 * The connections whose request did not come in time are shut down:
 * MHD, which cannot be told to close a connection, reads their end
 * and closes them itself.
 */
static void
http_on_due(void *arg)
{
	struct http *h = arg;
	struct http_conn *c;
	uint64_t now = loop_now_ns();
	size_t n = 0;

	while ((c = TAILQ_FIRST(&h->due)) != NULL && c->deadline <= now) {
		http_due_del(h, c);
		shutdown(c->fd, SHUT_RDWR);
		n++;
	}
	if (n > 0) {
		log_msg(LOG_DEBUG, "http: %zu connections closed: no request "
		    "within %llu s", n, HTTP_REQUEST_NS / NS_PER_S);
		http_kick(h);
	}
	http_due_arm(h);
}

static void
http_notify_conn(void *cls, struct MHD_Connection *conn, void **ctx,
    enum MHD_ConnectionNotificationCode code)
{
	struct http *h = cls;
	struct http_conn *c = *ctx;
	const union MHD_ConnectionInfo *ci;
	unsigned char key[9];

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c == NULL)
			return;
		http_conn_count(c, 0);
		http_due_del(h, c);
		if (c->peer != NULL && --c->peer->refs == 0) {
			LIST_REMOVE(c->peer, entry);
			free(c->peer);
		}
		free(c);
		*ctx = NULL;
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return;
	*ctx = c;
	c->fd = http_conn_fd(conn);
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL &&
	    http_peer_key(ci->client_addr, key) == 0) {
		if ((c->peer = http_peer_find(h, key)) == NULL &&
		    (c->peer = calloc(1, sizeof(*c->peer))) != NULL) {
			memcpy(c->peer->key, key, sizeof(key));
			LIST_INSERT_HEAD(&h->peers[http_peer_bucket(key)],
			    c->peer, entry);
		}
		if (c->peer != NULL) {
			c->peer->refs++;
			http_conn_count(c, 1);
		}
	}
	if (c->fd != -1)
		http_due_add(h, c);
}

/* The connection of conn, as http_notify_conn keeps it (or NULL). */
static struct http_conn *
http_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/*
 * r holds its connection for long (a stream, or a wait): when r showed
 * credentials, its connection no longer counts against its address,
 * so that agents and dashboards on one machine (loopback is one
 * address) may keep as many streams as they like.
 */
static void
http_conn_held(struct http_req *r)
{
	if (r->authed)
		http_conn_count(r->c, 0);
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
	r->watch_fd = -1;
	r->state = HTTP_READING;
	if ((r->c = http_conn_of(conn)) != NULL)
		http_due_del(h, r->c);
	snprintf(r->method, sizeof(r->method), "%s", method);
	snprintf(r->path, sizeof(r->path), "%s", url);
	*con_cls = r;
	http_screen(r, url, method);
	if (r->state == HTTP_ANSWERED && http_answer_early(r))
		return http_queue(r);
	return MHD_YES;
}

static enum MHD_Result
http_body(struct http_req *r, const char *data, size_t n)
{
	if (r->state != HTTP_READING) {
		r->dropped += n;
		return r->dropped > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (n > HTTP_BODY_MAX - r->len) {
		http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "the body has "
		    "more than %d bytes (a message's text, at most %d)",
		    HTTP_BODY_MAX, PAPO_BODY_MAX);
		r->dropped = r->len + n;
		return MHD_YES;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap != 0 ? r->cap : 1024;
		char *p;

		while (cap < r->len + n + 1)
			cap *= 2;
		if ((p = realloc(r->body, cap)) == NULL)
			return MHD_NO;
		r->body = p;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
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
		else
			r->route->handler(r, r->arg);
		if (r->state == HTTP_RUNNING)
			http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "the handler of %s gave no answer", r->path);
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
		log_msg(LOG_DEBUG, "http: %s %s ended early (%d)", r->method,
		    r->path, (int)why);
	*con_cls = NULL;
	/* A connection kept alive counts again, and waits for its next
	 * request as a new one does. */
	if (r->c != NULL) {
		http_conn_count(r->c, 1);
		http_due_add(r->h, r->c);
	}
	if (r->done != NULL)
		r->done(r->done_arg, why == MHD_REQUEST_TERMINATED_COMPLETED_OK &&
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
	 * client's bytes wake the loop through MHD's epoll descriptor
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

/*
 * Has MHD run from the loop soon, rather than from here: an answer may
 * be given from inside an MHD callback, and MHD_run must not be entered
 * twice.
 */
static void
http_kick(struct http *h)
{
	h->kicked = 1;
	loop_timer_set(h->timer, loop_now_ns());
}

static void
http_on_epoll(void *arg, uint32_t events)
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
http_listen(char err[PAPO_ERR_LEN], const struct http_bind *b,
    const char *text)
{
	int fd, one = 1;

	fd = socket(b->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
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
	struct http_bind b;
	const union MHD_DaemonInfo *info;
	int fd = -1;

	if (http_check(err, c) == -1)
		return NULL;
	if (c->tls != NULL && MHD_is_feature_supported(MHD_FEATURE_TLS) !=
	    MHD_YES) {
		snprintf(err, PAPO_ERR_LEN, "this libmicrohttpd has no TLS: "
		    "install Debian's libmicrohttpd12 (built with GnuTLS)");
		return NULL;
	}
	http_parse_bind(c->bind, &b);
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->mounts = calloc(c->nmounts + 1, sizeof(*h->mounts))) == NULL ||
	    (h->fails = throttle_new()) == NULL)
		goto nomem;
	h->loop = l;
	h->epfd = -1;
	TAILQ_INIT(&h->due);
	memcpy(h->mounts, c->mounts, c->nmounts * sizeof(*h->mounts));
	h->nmounts = c->nmounts;
	h->tls = c->tls;
	if (c->public_url != NULL) {
		http_parse_origin(c->public_url, &h->pub);
		snprintf(h->pub_url, sizeof(h->pub_url), "%s", c->public_url);
		if (h->pub_url[0] != '\0' &&
		    h->pub_url[strlen(h->pub_url) - 1] == '/')
			h->pub_url[strlen(h->pub_url) - 1] = '\0';
	}
	http_parse_cors(err, c->cors, h->cors, &h->ncors);
	if (c->token != NULL) {
		snprintf(h->token, sizeof(h->token), "%s", c->token);
		h->token_len = strlen(h->token);
	}
	snprintf(h->host, sizeof(h->host), "%s", b.host);
	h->wildcard = b.wildcard;
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
	h->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
	    MHD_USE_ERROR_LOG | (h->tls != NULL ? MHD_USE_TLS : 0), 0,
	    http_accept_policy, h, http_access, h,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, http_notify_conn, h,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONN_MAX,
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
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || loop_add_fd(l, info->epoll_fd, EPOLLIN,
	    http_on_epoll, h) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot watch the HTTP server's "
		    "events");
		goto fail;
	}
	h->epfd = info->epoll_fd;
	/* MHD puts the listening socket in its epoll set on its first run. */
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
	if (h->epfd != -1)
		loop_del_fd(h->loop, h->epfd);
	if (h->mhd != NULL) {
		/* A few last runs send what is queued and end each stream
		 * with its last chunk, so that clients see an end rather than
		 * a cut; one that does not read is cut after 250 ms. */
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

const char *
http_req_query(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

struct http_scan {
	const char *const *known;
	const char *unknown;
};

static enum MHD_Result
http_scan_arg(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct http_scan *s = cls;

	(void)kind;
	(void)value;
	/* Every route takes the room it is for (http_room_path). */
	if (strcmp(key, "room") == 0)
		return MHD_YES;
	for (size_t i = 0; s->known[i] != NULL; i++)
		if (strcmp(key, s->known[i]) == 0)
			return MHD_YES;
	s->unknown = key;
	return MHD_NO;
}

const char *
http_req_query_unknown(struct http_req *r, const char *const *known)
{
	struct http_scan s = { known, NULL };

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND,
	    http_scan_arg, &s);
	return s.unknown;
}

const char *
http_req_body(const struct http_req *r, size_t *len)
{
	*len = r->len;
	return r->body != NULL ? r->body : "";
}

void
http_reply(struct http_req *r, int status, const char *json)
{
	size_t n = strlen(json);
	enum http_state was = r->state;

	if (was == HTTP_ANSWERED || was == HTTP_DONE) {
		log_msg(LOG_WARN, "http: %s %s answered twice", r->method,
		    r->path);
		return;
	}
	/* A newline ends the body, as curl users expect of a terminal; an
	 * empty answer (202) stays empty. */
	if ((r->json = malloc(n + 2)) != NULL) {
		memcpy(r->json, json, n);
		if (n > 0)
			r->json[n++] = '\n';
		r->json[n] = '\0';
	}
	r->status = status;
	r->state = HTTP_ANSWERED;
	if (was == HTTP_WAITING) {
		http_unwait(r);
		if (r->suspended) {
			r->suspended = 0;
			MHD_resume_connection(r->conn);
			http_kick(r->h);
		}
	}
}

/* Has a valid JSON text a string with the escape \u0000 in it? */
static int
http_json_nul(const char *s, size_t len)
{
	int in = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			in = !in;
		else if (in && s[i] == '\\') {
			if (i + 5 < len && s[i + 1] == 'u' &&
			    memcmp(s + i + 2, "0000", 4) == 0)
				return 1;
			i++;
		}
	}
	return 0;
}

static int
http_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether an object in v, at any depth, has a key twice: cJSON keeps
 * both and its lookups find the first, where other readers take the
 * last, so the two could act on different values.  -1 with err naming
 * the key (sorted, each object costs n log n).
 */
static int
http_json_dups(const cJSON *v, char err[PAPO_ERR_LEN])
{
	const char **names = NULL;
	const cJSON *c;
	size_t n = 0;
	int ret = 0;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return 0;
	for (c = v->child; c != NULL; c = c->next, n++)
		if (http_json_dups(c, err) == -1)
			return -1;
	if (!cJSON_IsObject(v) || n < 2)
		return 0;
	if ((names = malloc(n * sizeof(*names))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	n = 0;
	for (c = v->child; c != NULL; c = c->next)
		names[n++] = c->string;
	qsort(names, n, sizeof(*names), http_name_cmp);
	for (size_t i = 1; i < n && ret == 0; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			snprintf(err, PAPO_ERR_LEN, "the body has the key \"%.64s\" "
			    "twice in one object: give each key once", names[i]);
			ret = -1;
		}
	free(names);
	return ret;
}

cJSON *
http_json_parse(const char *body, size_t len, char err[PAPO_ERR_LEN])
{
	cJSON *o;

	/* The terminator is parsed too, so that cJSON refuses anything but
	 * white space after the value. */
	if (memchr(body, '\0', len) != NULL ||
	    (o = cJSON_ParseWithLengthOpts(body, len + 1, NULL, 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the body is not valid JSON");
		return NULL;
	}
	if (http_json_nul(body, len)) {
		cJSON_Delete(o);
		snprintf(err, PAPO_ERR_LEN, "the body has a string with a NUL "
		    "character (\\u0000), which papo does not carry");
		return NULL;
	}
	if (http_json_dups(o, err) == -1) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

void
http_reply_file(struct http_req *r, const char *type, const void *data,
    size_t len)
{
	if (r->state == HTTP_ANSWERED || r->state == HTTP_DONE)
		return;
	r->file = data;
	r->file_len = len;
	r->file_type = type;
	r->status = MHD_HTTP_OK;
	r->state = HTTP_ANSWERED;
}

void
http_reply_page(struct http_req *r, int status, const char *html,
    const char *csp)
{
	if (r->state == HTTP_ANSWERED || r->state == HTTP_DONE)
		return;
	if ((r->page_csp = strdup(csp)) == NULL) {
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "out of memory");
		return;
	}
	http_reply(r, status, html);
}

const char *
http_req_path(const struct http_req *r)
{
	return r->route->path;
}

void
http_reply_error(struct http_req *r, int status, const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN];
	cJSON *o;
	char *json = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((o = cJSON_CreateObject()) != NULL &&
	    cJSON_AddStringToObject(o, "error", msg) != NULL)
		json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	http_reply(r, status, json != NULL ? json :
	    "{\"error\":\"out of memory\"}");
	cJSON_free(json);
}

void
http_defer(struct http_req *r)
{
	struct http *h = r->h;

	if (r->state != HTTP_RUNNING)
		return;
	r->state = HTTP_WAITING;
	LIST_INSERT_HEAD(&h->waiting, r, wait);
	http_conn_held(r);
	if (r->grant.id[0] != '\0')
		http_grant_arm(h, r->grant_end);
}

void
http_req_watch(struct http_req *r, http_req_gone *gone, void *arg)
{
	r->gone = gone;
	r->gone_arg = arg;
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
	r->done = done;
	r->done_arg = arg;
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
	http_req_gone *gone = r->gone;

	(void)events;
	http_unwatch(r);
	if (r->live != NULL) {
		r->live->closing = 1;
		http_stream_wake(r->live);
		return;
	}
	if (r->state != HTTP_WAITING)
		return;
	log_msg(LOG_DEBUG, "http: %s %s: the client left", r->method, r->path);
	r->gone = NULL;
	if (gone != NULL)
		gone(r, r->gone_arg);
	if (r->state == HTTP_WAITING) {
		r->drop = 1;
		http_reply(r, MHD_HTTP_BAD_REQUEST, "");
	}
}

/* Grants: what a stream or wait opened with an OAuth token may do ends
 * with the grant, or with the token's life. */

/* Has the timer fire at end, unless it fires before. */
static void
http_grant_arm(struct http *h, uint64_t end)
{
	if (h->grant_next == 0 || end < h->grant_next) {
		h->grant_next = end;
		loop_timer_set(h->grant_timer, end);
	}
}

/* Is grant (of a token expiring at end) ended: the grant id, when id is
 * given, else expired by now? */
static int
http_grant_over(const char *grant, uint64_t end, const char *id,
    uint64_t now)
{
	if (grant[0] == '\0')
		return 0;
	return id != NULL ? strcmp(grant, id) == 0 : end <= now;
}

/*
 * Ends every stream and wait of grant id (or, id NULL, of every token
 * expired by now).  A stream gets a comment saying why and then its
 * end, and its owner's gone(); a wait that its owner watches (the only
 * kind that may be answered from here: a node request's answer would
 * find it gone) is forgotten by its owner and answered 401.
 */
static size_t
http_grant_sweep(struct http *h, const char *id, uint64_t now)
{
	const char *why = id != NULL ? "the grant of this token was revoked" :
	    "this token expired";
	struct http_stream *st;
	struct http_req *r;
	size_t n = 0;
	char line[96];
	int len;

again:
	LIST_FOREACH(r, &h->waiting, wait) {
		http_req_gone *gone = r->gone;

		if (gone == NULL || !http_grant_over(r->grant.id, r->grant_end,
		    id, now))
			continue;
		http_req_watch(r, NULL, NULL);
		gone(r, r->gone_arg);
		if (r->state == HTTP_WAITING) {
			http_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			    h->auth.challenge != NULL ?
			    h->auth.challenge(h->auth.arg) :
			    "Bearer realm=\"papo\"");
			http_reply_error(r, MHD_HTTP_UNAUTHORIZED, "%s: get a new "
			    "one, and ask again", why);
		}
		n++;
		goto again;            /* the list changed under us */
	}
	len = snprintf(line, sizeof(line), ": %s; the stream ends\n\n", why);
	LIST_FOREACH(st, &h->streams, entry) {
		if (st->closing || !http_grant_over(st->grant, st->grant_end,
		    id, now))
			continue;
		http_stream_write(st, line, (size_t)len);
		st->closing = 1;       /* gone() still follows */
		http_stream_wake(st);
		n++;
	}
	return n;
}

static void
http_on_grant_timer(void *arg)
{
	struct http *h = arg;
	struct http_stream *st;
	struct http_req *r;
	size_t n;

	h->grant_next = 0;
	if ((n = http_grant_sweep(h, NULL, loop_now_ns())) > 0)
		log_msg(LOG_INFO, "http: %zu streams and waits ended with their "
		    "token's life", n);
	LIST_FOREACH(r, &h->waiting, wait)
		if (r->gone != NULL && r->grant.id[0] != '\0')
			http_grant_arm(h, r->grant_end);
	LIST_FOREACH(st, &h->streams, entry)
		if (!st->closing && st->grant[0] != '\0')
			http_grant_arm(h, st->grant_end);
}

void
http_grant_ended(struct http *h, const char *id)
{
	size_t n;

	if (h == NULL || id == NULL || id[0] == '\0')
		return;
	if ((n = http_grant_sweep(h, id, 0)) > 0)
		log_msg(LOG_INFO, "http: grant %s ended: %zu of its streams and "
		    "waits closed", id, n);
}

void
http_submit(struct http_req *r, struct node *n, struct node_msg *m,
    http_node_cb *cb, void *arg)
{
	m->ctx = r;
	if (m->room == NULL && r->room != NULL)
		m->room = strdup(r->room);
	r->node_cb = cb;
	r->node_arg = arg;
	http_defer(r);
	node_submit(n, m);
}

void
http_node_done(struct node_msg *m)
{
	struct http_req *r = m->ctx;
	http_node_cb *cb;

	if (r == NULL || r->node_cb == NULL) {
		node_msg_free(m);
		return;
	}
	cb = r->node_cb;
	r->node_cb = NULL;
	cb(r, m, r->node_arg);
	if (r->state == HTTP_WAITING)
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "the node's answer was not used");
}
