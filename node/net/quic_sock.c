/*
 * quic_sock.c: the endpoint's UDP sockets and datagrams (quic.h): the one
 * socket bound (dual-stack when it can be), DF on every datagram larger
 * than QUIC's minimum, with ngtcp2's path MTU discovery, packets sent on
 * a connection's socket or through the owner's relay, papo's own
 * datagrams sent raw, a punch's socket let go; socket addresses both
 * ways, the clock, randomness and the flush asked for.  Node thread; at
 * the bottom of the endpoint's files, calling none of them.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/os.h"
#include "node/net/quic_int.h"

uint64_t
quic_now(void)
{
	return loop_now_ns();
}

/* The socket c's packets go on, and its local address for ngtcp2. */
static int
quic_conn_fd(const struct quic_conn *c)
{
	return c->sock != NULL ? c->sock->fd : c->q->fd;
}

void
quic_path_local(const struct quic *q, const struct quic_sock *s,
    ngtcp2_path *path)
{
	path->local.addr = (struct sockaddr *)(s != NULL ? &s->local : &q->local);
	path->local.addrlen = s != NULL ? s->locallen : q->locallen;
}

/* Addresses: the socket is AF_INET6 (dual-stack) or AF_INET; IPv4 peers
 * on a dual-stack socket are v4-mapped (lib/addr.c). */
socklen_t
quic_to_sockaddr(const struct quic *q, const struct addr *a,
    struct sockaddr_storage *ss)
{
	return (socklen_t)addr_to_sockaddr(a, q->family, ss);
}

void
quic_from_sockaddr(const struct sockaddr_storage *ss, struct addr *a)
{
	addr_from_sockaddr((const struct sockaddr *)ss, a);
}

int
quic_random(uint8_t *p, size_t n)
{
	return gnutls_rnd(GNUTLS_RND_RANDOM, p, n) == 0 ? 0 : -1;
}

/*
 * Path MTU.  QUIC's own packets start at its 1200-byte minimum and
 * ngtcp2 probes larger sizes (DPLPMTUD, RFC 8899) up to QUIC_PKT_MAX,
 * keeping the largest a probe came back from: so on every path, direct,
 * punched or through the relay, the size is what the path carries, not
 * what a router may fragment or a firewall drop.  A datagram larger than
 * QUIC_PKT_MIN (a probe, or one of the size a probe found) goes with DF
 * set (RFC 9000, 14), and PROBE rather than DO: the kernel's own path
 * MTU cache (ICMP "too big", which can be forged) is not consulted; one
 * over the interface's MTU fails with EMSGSIZE, a lost packet for QUIC
 * (and a failed probe).
 *
 * An IPv4 datagram of at most QUIC's minimum goes without DF (OMIT: the
 * kernel's cache is still not consulted, and it is fragmented here only
 * beyond the interface's MTU).  Every path must carry it, and one whose
 * MTU is below 1228 (a tunnel, a mobile link) only does if a router
 * fragments it: with DF, such a path never saw a handshake complete,
 * while the releases before DF worked through it.  Where the
 * path is wide enough, nothing changes: the datagram is not fragmented.
 * Where it is not and a firewall drops fragments, nothing is lost
 * either: DF would have had the datagram dropped whole.  PMTUD is not
 * fooled: its probes are larger than the minimum, so they go with DF.
 * IPv6 has no such path (its minimum MTU is 1280, and routers never
 * fragment), so its option stays PROBE.
 *
 * The option is the socket's, not the datagram's (Linux has no per
 * datagram DF for IPv4): *df remembers the socket's, and it is changed
 * only when a datagram needs the other one.
 */
static void
quic_df(int fd, int *df, const struct sockaddr *to, size_t n, size_t frag_max)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)to;
	int want = n > frag_max;

	if (*df == want || (to->sa_family == AF_INET6 &&
	    !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)))
		return;
	if (os_udp_df(fd, AF_INET, want) == 0)
		*df = want;
}

/* A build with no DF option at all (the portable one: ENOPROTOOPT) is
 * no news at each start; a refused option is. */
static enum log_level
quic_df_level(void)
{
	return errno == ENOPROTOOPT ? LOG_DEBUG : LOG_WARN;
}

void
quic_df_init(const struct quic *q, int fd, int *df)
{
	*df = 1;
	/* A dual-stack socket's IPv4 peers follow the IPv4 option. */
	if (os_udp_df(fd, AF_INET, 1) == -1 && q->family == AF_INET)
		log_msg(quic_df_level(), "cannot set DF on the UDP socket: %s",
		    strerror(errno));
	if (q->family == AF_INET6 && os_udp_df(fd, AF_INET6, 1) == -1)
		log_msg(quic_df_level(), "cannot keep IPv6 datagrams whole: %s",
		    strerror(errno));
}

/* Sends one packet of c: on the socket, or, for a relayed connection,
 * through the owner's relay. */
void
quic_sendto(struct quic_conn *c, const ngtcp2_path *path, const uint8_t *p,
    size_t n)
{
	struct quic *q = c->q;
	ssize_t r;

	if (c->relayed) {
		struct sockaddr_storage ss;
		struct addr to;

		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, path->remote.addr, path->remote.addrlen <= sizeof(ss) ?
		    path->remote.addrlen : sizeof(ss));
		quic_from_sockaddr(&ss, &to);
		if (q->cbs.relay_send != NULL)
			q->cbs.relay_send(q->arg, &to, p, n);
		return;
	}
	quic_df(quic_conn_fd(c), c->sock != NULL ? &c->sock->df : &q->df,
	    path->remote.addr, n, QUIC_PKT_MIN);
	do {
		r = sendto(quic_conn_fd(c), p, n, 0, path->remote.addr,
		    path->remote.addrlen);
	} while (r == -1 && errno == EINTR);
	/* A lost datagram is QUIC's to recover; nothing to do here. */
}

void
quic_kick(struct quic *q)
{
	loop_timer_set(q->flush, 1);   /* as soon as the loop comes round */
}

/*
 * Room for what arrives while the node thread is busy (a chunk of a
 * shared file written and synced, a few milliseconds): with the
 * kernel's default of 208 KiB, a file coming at full speed overflowed
 * it about once in a thousand datagrams, and each loss cut the sender's
 * congestion window (docs/PERFORMANCE.md, "Files").  Past the
 * system's cap where the daemon may (root, on Linux), else as much as
 * the system allows (net.core.rmem_max).
 */
void
quic_rcvbuf(int fd)
{
	os_rcvbuf(fd, QUIC_RCVBUF);
}

/* The socket: one for both families where the system has IPv6. */
int
quic_bind(char err[PAPO_ERR_LEN], struct quic *q, const struct addr *listen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int off = 0, on = 1;
	char text[ADDR_STRLEN];

	addr_format(listen, text);
	q->family = AF_INET6;
	if (listen->family == 4 && !addr_is_unspecified(listen))
		q->family = AF_INET;
	q->fd = os_socket(q->family, SOCK_DGRAM, 0, OS_NONBLOCK);
	if (q->fd == -1 && q->family == AF_INET6 && listen->family == 4) {
		q->family = AF_INET;
		q->fd = os_socket(AF_INET, SOCK_DGRAM, 0, OS_NONBLOCK);
	}
	if (q->fd == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot open a UDP socket: %s",
		    strerror(errno));
		return -1;
	}
	if (q->family == AF_INET6)
		setsockopt(q->fd, IPPROTO_IPV6, IPV6_V6ONLY,
		    listen->family == 6 && !addr_is_unspecified(listen) ?
		    &on : &off, sizeof(int));
	if (q->family == AF_INET6 && listen->family == 4) {
		/* The wildcard of either family means every address. */
		struct addr any = *listen;

		memset(any.ip, 0, sizeof(any.ip));
		any.family = 6;
		len = quic_to_sockaddr(q, &any, &ss);
	} else
		len = quic_to_sockaddr(q, listen, &ss);
	if (bind(q->fd, (struct sockaddr *)&ss, len) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot listen for QUIC on %s: %s",
		    text, strerror(errno));
		return -1;
	}
	q->locallen = sizeof(q->local);
	getsockname(q->fd, (struct sockaddr *)&q->local, &q->locallen);
	quic_df_init(q, q->fd, &q->df);
	quic_rcvbuf(q->fd);
	return 0;
}

void
quic_local(const struct quic *q, struct addr *out)
{
	quic_from_sockaddr(&q->local, out);
}

int
quic_send_raw(struct quic *q, const struct addr *to, const uint8_t *p,
    size_t n, int ttl)
{
	return quic_send_raw_on(q, NULL, to, p, n, ttl);
}

int
quic_send_raw_on(struct quic *q, struct quic_sock *sock, const struct addr *to,
    const uint8_t *p, size_t n, int ttl)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int def = 64, rc, fd = sock != NULL ? sock->fd : q->fd;

	if (n == 0 || (p[0] & 0x80) != 0 ||
	    (q->family == AF_INET && to->family != 4))
		return -1;
	len = quic_to_sockaddr(q, to, &ss);
	/* A low TTL opens our own NAT's mapping without the packet reaching
	 * the far NAT; both options, for a dual-stack socket's IPv4 peers. */
	if (ttl > 0) {
		setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
		if (q->family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl,
			    sizeof(ttl));
	}
	quic_df(fd, sock != NULL ? &sock->df : &q->df, (struct sockaddr *)&ss,
	    n, QUIC_RAW_FRAG_MAX);
	rc = sendto(fd, p, n, MSG_DONTWAIT, (struct sockaddr *)&ss, len) ==
	    (ssize_t)n ? 0 : -1;
	if (ttl > 0) {
		setsockopt(fd, IPPROTO_IP, IP_TTL, &def, sizeof(def));
		if (q->family == AF_INET6) {
			def = -1;    /* the route's default */
			setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &def,
			    sizeof(def));
		}
	}
	return rc;
}

void
quic_sock_unref(struct quic_sock *s)
{
	if (s == NULL || --s->refs > 0)
		return;
	loop_del_fd(s->loop, s->fd);
	close(s->fd);
	free(s);
}

uint16_t
quic_sock_port(const struct quic_sock *s)
{
	struct addr a;

	quic_from_sockaddr(&s->local, &a);
	return a.port;
}
