/*
 * quic.c: the QUIC endpoint of quic.h on ngtcp2 0.12 and GnuTLS, its top
 * file: the endpoint made and freed, its sockets read (the endpoint's
 * own, a punch's, and packets a relay handed over), each packet handed
 * to its connection or to quic_accept.c, and the zero-delay flush timer
 * that writes what the owner queued from outside a socket or timer event.
 * It runs on the node thread: the sockets and one timer per connection
 * are in the node's loop.
 *
 * The endpoint's files call one way: quic.c > quic_accept.c >
 * quic_conn.c > quic_stream.c > quic_tls.c > quic_cid.c > quic_sock.c;
 * what they share is in quic_int.h.  Only they include ngtcp2 or GnuTLS
 * headers.
 *
 * A connection is torn down only from the top of an event (never inside
 * an ngtcp2 callback): callbacks mark it, and quic_process finishes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/os.h"
#include "node/net/quic_int.h"

/* One datagram from `from` (through the relay when relayed): to the
 * connection its destination id names, or to a new one it opens. */
static void
quic_packet(struct quic *q, struct quic_sock *sock,
    const struct sockaddr_storage *from, socklen_t fromlen, const uint8_t *pkt,
    size_t n, int relayed)
{
	ngtcp2_version_cid vc;
	struct quic_conn *c;

	if (ngtcp2_pkt_decode_version_cid(&vc, pkt, n, QUIC_CIDLEN) != 0)
		return;
	c = quic_find(q, vc.dcid, vc.dcidlen);
	if (c == NULL) {
		if (vc.version == 0) {
			/* A short header of a connection gone, ours or the
			 * peer's: a stateless reset for one of ours, or a
			 * packet for one we no longer have. */
			if (!relayed && !quic_stateless_reset_in(q, from, fromlen,
			    pkt, n))
				quic_stateless_reset_out(q, sock != NULL ?
				    sock->fd : q->fd, from, fromlen, &vc, n);
			return;
		}
		if ((c = quic_accept(q, sock, pkt, n, from, fromlen,
		    relayed)) == NULL)
			return;
	}
	if (c->dead || c->closing)
		return;
	quic_conn_read(c, from, fromlen, pkt, n);
}

/* Every datagram waiting on fd (the endpoint's socket, or sock's). */
static void
quic_read_fd(struct quic *q, struct quic_sock *sock, int fd)
{
	uint8_t pkt[65536];

	quic_awake(q);
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(fd, pkt, sizeof(pkt), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fromlen);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* papo's own datagrams (punches) and the TURN server's look
		 * like a short header (bit 0x80 clear); the owner knows them
		 * (punches by their length, first byte and MAC, the server's
		 * by its address): bit 0x40 does not tell, since ngtcp2
		 * greases it (RFC 9287). */
		if (n > 0 && (pkt[0] & 0x80) == 0 && q->cbs.datagram != NULL) {
			struct addr a;

			quic_from_sockaddr(&from, &a);
			if (q->cbs.datagram(q->arg, &a, pkt, (size_t)n))
				continue;
		}
		quic_packet(q, sock, &from, fromlen, pkt, (size_t)n, 0);
	}
	quic_process(q);
}

static void
quic_read(void *arg, uint32_t events)
{
	struct quic *q = arg;

	(void)events;
	quic_read_fd(q, NULL, q->fd);
}

static void
quic_sock_read(void *arg, uint32_t events)
{
	struct quic_sock *s = arg;

	(void)events;
	s->refs++;     /* a connection closed in there may drop the last */
	quic_read_fd(s->q, s, s->fd);
	quic_sock_unref(s);
}

void
quic_input(struct quic *q, const struct addr *from, const uint8_t *p,
    size_t n, int relayed)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (q->family == AF_INET && from->family != 4)
		return;
	len = quic_to_sockaddr(q, from, &ss);
	quic_packet(q, NULL, &ss, len, p, n, relayed);
	/* Called from inside quic_read (the TURN client's datagrams) or
	 * from anywhere else: the connections are written either way. */
	quic_kick(q);
}

static void
quic_flush(void *arg)
{
	quic_process(arg);
}

struct quic *
quic_new(char err[PAPO_ERR_LEN], struct loop *l, const struct addr *listen,
    const struct identity *id, unsigned version, const struct quic_cbs *cbs,
    void *arg)
{
	struct quic *q = calloc(1, sizeof(*q));

	if (q == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	q->loop = l;
	q->version = version;
	q->fd = -1;
	q->cbs = *cbs;
	q->arg = arg;
	randombytes_buf(q->retry_secret, sizeof(q->retry_secret));
	if (quic_cidmap_init(&q->cids) == -1) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if (gnutls_certificate_allocate_credentials(&q->cred) < 0) {
		q->cred = NULL;
		snprintf(err, PAPO_ERR_LEN, "cannot set up TLS");
		goto fail;
	}
	gnutls_certificate_set_verify_function(q->cred, quic_verify);
	/* The reset secret: the member key's seed, hashed under a label of
	 * its own (never the key itself on the wire). */
	sec_reset_secret(id, q->reset_secret);
	if (quic_cert(err, q->cred, id) == -1 || quic_bind(err, q, listen) == -1)
		goto fail;
	if ((q->flush = loop_timer_new(l, quic_flush, q)) == NULL ||
	    (q->flood_timer = loop_timer_new(l, quic_flood_timer, q)) == NULL ||
	    loop_add_fd(l, q->fd, LOOP_IN, quic_read, q) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot watch the UDP socket");
		goto fail;
	}
	return q;
fail:
	quic_free(q);
	return NULL;
}

void
quic_close_all(struct quic *q)
{
	quic_close_some(q, NULL, NULL);
}

void
quic_close_some(struct quic *q, int (*pick)(void *arg, struct quic_conn *c),
    void *arg)
{
	struct quic_conn *c = q->conns;

	while (c != NULL) {
		if (pick != NULL && !pick(arg, c)) {
			c = c->next;
			continue;
		}
		/* What is queued (a bye) goes out before the close. */
		if (c->opened && !c->dead && !c->closing)
			quic_conn_write(c);
		if (!c->dead)
			quic_write_close(c);
		q->cbs.closed(q->arg, c);
		quic_conn_free(c);
		/* The callback may have closed others: from the start. */
		c = q->conns;
	}
}

void
quic_free(struct quic *q)
{
	if (q == NULL)
		return;
	quic_close_all(q);
	if (q->fd != -1) {
		loop_del_fd(q->loop, q->fd);
		close(q->fd);
	}
	loop_timer_free(q->flush);
	loop_timer_free(q->flood_timer);
	if (q->cred != NULL)
		gnutls_certificate_free_credentials(q->cred);
	quic_cidmap_free(&q->cids);
	sodium_memzero(q->retry_secret, sizeof(q->retry_secret));
	free(q);
}

struct quic_sock *
quic_sock_new(struct quic *q)
{
	struct quic_sock *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	socklen_t len;
	int off = 0;

	if (s == NULL)
		return NULL;
	s->q = q;
	s->loop = q->loop;
	s->refs = 1;
	s->fd = os_socket(q->family, SOCK_DGRAM, 0, OS_NONBLOCK);
	if (s->fd == -1) {
		free(s);
		return NULL;
	}
	if (q->family == AF_INET6)
		setsockopt(s->fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	/* The endpoint's own address with port 0: the same interfaces. */
	memcpy(&ss, &q->local, q->locallen);
	len = q->locallen;
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
	s->locallen = sizeof(s->local);
	if (bind(s->fd, (struct sockaddr *)&ss, len) == -1 ||
	    getsockname(s->fd, (struct sockaddr *)&s->local, &s->locallen) == -1 ||
	    loop_add_fd(s->loop, s->fd, LOOP_IN, quic_sock_read, s) == -1) {
		close(s->fd);
		free(s);
		return NULL;
	}
	quic_df_init(q, s->fd, &s->df);
	quic_rcvbuf(s->fd);
	return s;
}
