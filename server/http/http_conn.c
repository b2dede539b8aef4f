/*
 * http_conn.c: connections: their sockets (watched for a hang-up while a
 * request holds one), how many each client address holds (MHD's accept
 * policy), the deadline of a request's headers, and the kick that has
 * MHD run from the loop.  Main thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

/* A connection must have sent a request's headers this long after it
 * was opened, or after its previous request ended; else it is closed
 * (one byte a minute keeps no connection). */
#define HTTP_REQUEST_NS (10ull * NS_PER_S)
#define HTTP_REFUSED_LOG_NS (60ull * NS_PER_S)

/* The descriptor of r's connection. */
int
http_conn_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci != NULL ? ci->connect_fd : -1;
}

/* Whether the client of conn has closed its side (or the connection is
 * broken): what a suspended connection cannot tell MHD. */
int
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

void
http_unwatch(struct http_req *r)
{
	if (r->wait.watch_fd != -1) {
		loop_del_fd(r->h->loop, r->wait.watch_fd);
		r->wait.watch_fd = -1;
	}
}

void
http_unwait(struct http_req *r)
{
	LIST_REMOVE(r, wait.entry);
	if (r->live == NULL)
		http_unwatch(r);
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
enum MHD_Result
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

void
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
void
http_due_add(struct http *h, struct http_conn *c)
{
	if (c->deadline != 0)
		return;
	c->deadline = loop_now_ns() + HTTP_REQUEST_NS;
	TAILQ_INSERT_TAIL(&h->due, c, due);
	if (TAILQ_FIRST(&h->due) == c)
		http_due_arm(h);
}

void
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
void
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

void
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
struct http_conn *
http_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/*
 * Has MHD run from the loop soon, rather than from here: an answer may
 * be given from inside an MHD callback, and MHD_run must not be entered
 * twice.
 */
void
http_kick(struct http *h)
{
	h->kicked = 1;
	loop_timer_set(h->timer, loop_now_ns());
}
