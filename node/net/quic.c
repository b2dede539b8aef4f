/*
 * quic.c: the QUIC endpoint of quic.h on ngtcp2 0.12 and GnuTLS.  This is
 * the only file that includes ngtcp2 or GnuTLS headers.  It runs on the
 * node thread: the UDP socket and one timer per connection are in the
 * node's loop, and a zero-delay flush timer writes what the owner queued
 * from outside a socket or timer event.
 *
 * Stream data stays in our send queue until the peer acknowledges it,
 * because ngtcp2 retransmits from the application's buffers: the queue is
 * a list of chunks that are never moved, and a chunk is freed once every
 * byte of it is acknowledged.
 *
 * A connection is torn down only from the top of an event (never inside
 * an ngtcp2 callback): callbacks mark it, and quic_process finishes it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <gnutls/crypto.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/quic.h"

/* ALPN names the protocol version: a daemon offers (and, as the server,
 * picks) the newest it speaks first; one of version 1 knows only
 * papo/1, so a connection with it is of version 1.  Every name is
 * "papo/" and one digit. */
#define QUIC_ALPN_PREFIX "papo/"
#define QUIC_ALPN1 "papo/1"
#define QUIC_ALPN2 "papo/2"
#define QUIC_ALPN3 "papo/3"
#define QUIC_CIDLEN 16
#define QUIC_MAXCID 8
#define QUIC_PKT_MAX 1452
/* A relayed packet gains a TURN header on its way (ChannelData 4 bytes, a
 * Send or Data indication up to 59 with an IPv6 peer): 1380 keeps it
 * within an Ethernet MTU over IPv6 too, both ways (our packets, and the
 * peer's by the max_udp_payload_size we announce). */
#define QUIC_RELAY_PKT_MAX 1380
/* A path that carries nothing for QUIC_IDLE_TIMEOUT is dead (the peer
 * asleep, gone, or behind a NAT that moved): the connection ends then,
 * so that presence and paths are told truly within seconds and a new
 * one is dialled or punched.  Both ends ping every QUIC_KEEPALIVE, and
 * each ping is answered, so a live path carries a packet each way at
 * least that often; under heavy loss (30 %) the pings' PTO probes make
 * up for the lost ones.  The effective timeout is the smaller of the two
 * ends' (RFC 9000, 10.1): a daemon of an older release (30 s, pinging
 * every 10 s) is held to ours, and our pings keep it alive. */
#define QUIC_IDLE_TIMEOUT (7 * NGTCP2_SECONDS)
#define QUIC_KEEPALIVE (1500 * NGTCP2_MILLISECONDS)
/* Unknown short-header packets answered with a stateless reset: at most
 * this many a second, and only those long enough that the reset is
 * shorter (RFC 9000, 10.3.3: no two endpoints loop). */
#define QUIC_RESETS_PER_S 20
#define QUIC_RESET_MIN_IN 43
#define QUIC_HANDSHAKE_TIMEOUT (5 * NGTCP2_SECONDS)
/*
 * Handshakes in progress (connections a peer opened to us whose peer
 * has not yet greeted as a member: quic_greeted) cost a TLS session, its
 * key exchange and a signature each, before anyone has shown who they
 * are.  From QUIC_HS_RETRY_AT of them on, the endpoint is under a
 * handshake flood: an Initial without a Retry token is answered with a
 * Retry (RFC 9000, 8.1.2), which keeps no state, so only a peer that
 * receives at its address gets a connection; a spoofed source never
 * does, and a member pays one round trip.  The flood is over after
 * QUIC_FLOOD_QUIET with no Retry sent.  Handshakes of validated
 * addresses are still bounded: beyond QUIC_HS_MAX the oldest in
 * progress ends; members' connections (greeted) and our own dials are
 * never touched.  A Retry token is good for QUIC_RETRY_TTL, from the
 * address it was sent to.
 */
#define QUIC_HS_RETRY_AT 16
#define QUIC_HS_MAX 128
#define QUIC_FLOOD_QUIET (10 * NGTCP2_SECONDS)
#define QUIC_RETRY_TTL (10 * NGTCP2_SECONDS)
/* The connection id table starts with this many buckets and doubles when
 * it holds more ids than buckets. */
#define QUIC_CIDMAP_MIN 64
#define QUIC_LEN_PREFIX 4

/* TLS 1.3 only, with the ciphers and groups ngtcp2's GnuTLS glue supports;
 * Ed25519 signatures are in NORMAL. */
static const char quic_priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
    "+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
    "%DISABLE_TLS13_COMPAT_MODE";

struct chunk {
	struct chunk *next;
	uint64_t off;          /* stream offset of data[0] */
	size_t len;
	uint8_t data[];
};

/* A socket of its own, on a port of the kernel's choosing, for the
 * connections a punch makes on it (quic.h, quic_sock_new). */
struct quic_sock {
	struct quic *q;
	struct loop *loop;
	int fd;
	struct sockaddr_storage local;
	socklen_t locallen;
	unsigned refs;
};

struct quic_conn {
	struct quic *q;
	struct quic_sock *sock;   /* NULL: the endpoint's own socket */
	ngtcp2_conn *conn;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	struct sockaddr_storage remote;
	socklen_t remotelen;
	struct addr raddr;
	int client;
	int relayed;           /* every packet goes through cbs.relay_send */
	int has_expect;
	uint8_t expect[32];
	uint8_t peer[32];
	int verified;          /* the peer's key passed the check */
	int handshake_done;
	int opened;            /* open() delivered */
	int closing;           /* the owner asked to close */
	int flush;             /* and what was queued goes out first */
	int dead;              /* over: finish without a close packet */
	int dirty;             /* something to write */
	uint64_t last_rx;      /* when a packet of it was last read */
	int64_t tx_sid, rx_sid;
	struct chunk *sq_head, *sq_tail;
	uint64_t sq_end;       /* offset after the last queued byte */
	uint64_t sq_sent;      /* offset up to which ngtcp2 has the data */
	uint64_t sq_acked;
	struct buf rx;         /* a frame being received */
	ngtcp2_cid cids[QUIC_MAXCID];
	size_t ncid;
	struct loop_timer *timer;
	void *data;
	struct quic_conn *next;
	/* In the endpoint's list of handshakes in progress (a connection a
	 * peer opened, until its owner says the peer greeted: quic_greeted),
	 * oldest first. */
	int in_hs;
	struct quic_conn *hs_prev, *hs_next;
};

/* One of a connection's ids in the endpoint's table of them. */
struct cid_entry {
	struct cid_entry *next;
	struct quic_conn *c;
	ngtcp2_cid cid;
};

/* Connection ids to connections in constant time: a chained hash table
 * keyed by SipHash under a random key (the first id of a connection is
 * the peer's choice, so the hash must not be predictable). */
struct cidmap {
	struct cid_entry **b;
	size_t nb;             /* buckets, a power of two */
	size_t n;              /* ids held */
	uint8_t key[crypto_shorthash_KEYBYTES];
};

struct quic {
	struct loop *loop;
	int fd;
	int family;            /* AF_INET or AF_INET6 */
	struct sockaddr_storage local;
	socklen_t locallen;
	gnutls_certificate_credentials_t cred;
	struct quic_cbs cbs;
	void *arg;
	struct quic_conn *conns;
	struct loop_timer *flush;
	unsigned version;      /* the newest protocol version offered */
	/* Stateless reset tokens are derived from this (and the connection
	 * id they go with), a secret of the member key: a restarted daemon
	 * can still reset the connections of the one before it, so that
	 * their peers dial again at once rather than at the idle timeout. */
	uint8_t reset_secret[32];
	uint64_t reset_window;  /* the second resets are counted in */
	unsigned nreset;
	uint64_t awake;         /* when the endpoint last ran (quic_awake) */
	struct cidmap cids;
	/* Handshakes in progress, oldest first (QUIC_HS_MAX). */
	struct quic_conn *hs_head, *hs_tail;
	unsigned nhs;
	/* Retry tokens are sealed under this, a random secret of this run. */
	uint8_t retry_secret[32];
	/* The handshake flood (QUIC_HS_RETRY_AT): since when, the last Retry
	 * sent, and what was done about it, for the one line logged when it
	 * ends. */
	int flood;
	struct loop_timer *flood_timer;   /* when it may be over */
	uint64_t flood_since, flood_last;
	uint64_t nretry, nevicted, nbadtoken;
};

static void quic_process(struct quic *q);
static void quic_no_fragments(const struct quic *q, int fd);
static void quic_sock_read(void *arg, uint32_t events);
static int quic_stateless_reset_in(struct quic *q,
    const struct sockaddr_storage *from, socklen_t fromlen,
    const uint8_t *pkt, size_t n);
static void quic_conn_open(struct quic_conn *c);
static void quic_kick(struct quic *q);

static uint64_t
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

static void
quic_path_local(const struct quic *q, const struct quic_sock *s,
    ngtcp2_path *path)
{
	path->local.addr = (struct sockaddr *)(s != NULL ? &s->local : &q->local);
	path->local.addrlen = s != NULL ? s->locallen : q->locallen;
}

/* Addresses: the socket is AF_INET6 (dual-stack) or AF_INET; IPv4 peers
 * on a dual-stack socket are v4-mapped (lib/addr.c). */
static socklen_t
quic_to_sockaddr(const struct quic *q, const struct addr *a,
    struct sockaddr_storage *ss)
{
	return (socklen_t)addr_to_sockaddr(a, q->family, ss);
}

static void
quic_from_sockaddr(const struct sockaddr_storage *ss, struct addr *a)
{
	addr_from_sockaddr((const struct sockaddr *)ss, a);
}

static int
quic_random(uint8_t *p, size_t n)
{
	return gnutls_rnd(GNUTLS_RND_RANDOM, p, n) == 0 ? 0 : -1;
}

/* TLS: a self-signed certificate of the member key, and the check of the
 * peer's certificate against the key we expect. */

static int
quic_cert(char err[PAPO_ERR_LEN], gnutls_certificate_credentials_t cred,
    const struct identity *id)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t x = { (unsigned char *)id->pk, 32 };
	gnutls_datum_t k = { (unsigned char *)id->sk, 32 };   /* the seed */
	static const char dn[] = "CN=papo member";
	time_t now = time(NULL);
	uint8_t serial[16];
	int rv, rc = -1;

	quic_random(serial, sizeof(serial));
	serial[0] &= 0x7f;
	if ((rv = gnutls_x509_privkey_init(&key)) < 0 ||
	    (rv = gnutls_x509_privkey_import_ecc_raw(key,
	    GNUTLS_ECC_CURVE_ED25519, &x, NULL, &k)) < 0 ||
	    (rv = gnutls_x509_crt_init(&crt)) < 0 ||
	    (rv = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (rv = gnutls_x509_crt_set_serial(crt, serial, sizeof(serial))) < 0 ||
	    (rv = gnutls_x509_crt_set_activation_time(crt, now - 86400)) < 0 ||
	    (rv = gnutls_x509_crt_set_expiration_time(crt,
	    now + 20 * 365 * 86400L)) < 0 ||
	    (rv = gnutls_x509_crt_set_dn(crt, dn, NULL)) < 0 ||
	    (rv = gnutls_x509_crt_set_issuer_dn(crt, dn, NULL)) < 0 ||
	    (rv = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (rv = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA512, 0)) < 0 ||
	    (rv = gnutls_certificate_set_x509_key(cred, &crt, 1, key)) < 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot make the TLS certificate: %s",
		    gnutls_strerror(rv));
		goto out;
	}
	rc = 0;
out:
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	return rc;
}

/* Called by GnuTLS with the peer's certificate; GnuTLS itself checks that
 * the peer holds the key (CertificateVerify).  We take the Ed25519 key out
 * and compare it with the one we dialled for. */
static int
quic_verify(gnutls_session_t s)
{
	ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(s);
	struct quic_conn *c = ref->user_data;
	const gnutls_datum_t *certs;
	gnutls_x509_crt_t crt = NULL;
	gnutls_pubkey_t pk = NULL;
	gnutls_datum_t x = { NULL, 0 }, y = { NULL, 0 };
	gnutls_ecc_curve_t curve;
	unsigned int n = 0;
	int rc = GNUTLS_E_CERTIFICATE_ERROR;

	certs = gnutls_certificate_get_peers(s, &n);
	if (certs == NULL || n < 1)
		return rc;
	if (gnutls_x509_crt_init(&crt) < 0 ||
	    gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0 ||
	    gnutls_pubkey_init(&pk) < 0 ||
	    gnutls_pubkey_import_x509(pk, crt, 0) < 0 ||
	    gnutls_pubkey_export_ecc_raw2(pk, &curve, &x, &y, 0) < 0)
		goto out;
	if (curve != GNUTLS_ECC_CURVE_ED25519 || x.size != 32)
		goto out;
	if (c->has_expect && memcmp(x.data, c->expect, 32) != 0) {
		char want[PAPO_ID_LEN + 1], got[PAPO_ID_LEN + 1];

		sec_id_format(c->expect, want);
		sec_id_format(x.data, got);
		log_msg(LOG_WARN, "refused a peer presenting key %.12s… where "
		    "%.12s… was expected", got, want);
		goto out;
	}
	memcpy(c->peer, x.data, 32);
	c->verified = 1;
	rc = 0;
out:
	gnutls_free(x.data);
	gnutls_free(y.data);
	if (pk != NULL)
		gnutls_pubkey_deinit(pk);
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	return rc;
}

static ngtcp2_conn *
quic_get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct quic_conn *)ref->user_data)->conn;
}

static int
quic_tls_init(struct quic_conn *c)
{
	static const gnutls_datum_t alpn[] = {
		{ (unsigned char *)QUIC_ALPN3, sizeof(QUIC_ALPN3) - 1 },
		{ (unsigned char *)QUIC_ALPN2, sizeof(QUIC_ALPN2) - 1 },
		{ (unsigned char *)QUIC_ALPN1, sizeof(QUIC_ALPN1) - 1 },
	};
	/* The newest we speak and every one before it: a daemon made to
	 * speak as an older one offers what that one offered. */
	unsigned noffer = c->q->version >= 3 ? 3 : c->q->version == 2 ? 2 : 1;
	const gnutls_datum_t *offer = alpn + (3 - noffer);
	int rv;

	if (gnutls_init(&c->tls, c->client ? GNUTLS_CLIENT : GNUTLS_SERVER) < 0) {
		c->tls = NULL;
		return -1;
	}
	rv = c->client ? ngtcp2_crypto_gnutls_configure_client_session(c->tls) :
	    ngtcp2_crypto_gnutls_configure_server_session(c->tls);
	if (rv != 0 ||
	    gnutls_priority_set_direct(c->tls, quic_priority, NULL) < 0 ||
	    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE,
	    c->q->cred) < 0 ||
	    gnutls_alpn_set_protocols(c->tls, offer, noffer,
	    GNUTLS_ALPN_MANDATORY | GNUTLS_ALPN_SERVER_PRECEDENCE) < 0)
		return -1;
	if (!c->client)
		gnutls_certificate_server_set_request(c->tls, GNUTLS_CERT_REQUIRE);
	c->ref.get_conn = quic_get_conn;
	c->ref.user_data = c;
	gnutls_session_set_ptr(c->tls, &c->ref);
	return 0;
}

/* ngtcp2 callbacks. */

static void
cb_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	quic_random(dest, len);
}

/* The stateless reset token of one of our connection ids. */
static int
quic_reset_token(const struct quic *q, const ngtcp2_cid *cid, uint8_t *token)
{
	return ngtcp2_crypto_generate_stateless_reset_token(token,
	    q->reset_secret, sizeof(q->reset_secret), cid) == 0 ? 0 : -1;
}

/* The connection id table (struct cidmap). */

static size_t
cidmap_slot(const struct cidmap *m, const uint8_t *id, size_t len)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v = 0;

	crypto_shorthash(h, id, len, m->key);
	for (size_t i = 0; i < sizeof(v); i++)
		v = v << 8 | h[i];
	return (size_t)(v & (m->nb - 1));
}

static int
cidmap_init(struct cidmap *m)
{
	m->nb = QUIC_CIDMAP_MIN;
	m->n = 0;
	randombytes_buf(m->key, sizeof(m->key));
	m->b = calloc(m->nb, sizeof(*m->b));
	return m->b != NULL ? 0 : -1;
}

static void
cidmap_free(struct cidmap *m)
{
	for (size_t i = 0; m->b != NULL && i < m->nb; i++)
		while (m->b[i] != NULL) {
			struct cid_entry *e = m->b[i];

			m->b[i] = e->next;
			free(e);
		}
	free(m->b);
	m->b = NULL;
}

/* Doubles the buckets; on failure the table stays as it was (longer
 * chains, still right). */
static void
cidmap_grow(struct cidmap *m)
{
	struct cid_entry **old = m->b;
	size_t oldnb = m->nb;

	if ((m->b = calloc(oldnb * 2, sizeof(*m->b))) == NULL) {
		m->b = old;
		return;
	}
	m->nb = oldnb * 2;
	for (size_t i = 0; i < oldnb; i++)
		while (old[i] != NULL) {
			struct cid_entry *e = old[i];
			size_t s = cidmap_slot(m, e->cid.data, e->cid.datalen);

			old[i] = e->next;
			e->next = m->b[s];
			m->b[s] = e;
		}
	free(old);
}

static struct quic_conn *
cidmap_get(const struct cidmap *m, const uint8_t *id, size_t len)
{
	for (struct cid_entry *e = m->b[cidmap_slot(m, id, len)]; e != NULL;
	    e = e->next)
		if (e->cid.datalen == len && memcmp(e->cid.data, id, len) == 0)
			return e->c;
	return NULL;
}

static int
cidmap_put(struct cidmap *m, const ngtcp2_cid *cid, struct quic_conn *c)
{
	struct cid_entry *e = malloc(sizeof(*e));
	size_t s;

	if (e == NULL)
		return -1;
	if (m->n >= m->nb)
		cidmap_grow(m);
	s = cidmap_slot(m, cid->data, cid->datalen);
	e->cid = *cid;
	e->c = c;
	e->next = m->b[s];
	m->b[s] = e;
	m->n++;
	return 0;
}

static void
cidmap_del(struct cidmap *m, const ngtcp2_cid *cid, const struct quic_conn *c)
{
	struct cid_entry **p = &m->b[cidmap_slot(m, cid->data, cid->datalen)];

	for (; *p != NULL; p = &(*p)->next)
		if ((*p)->c == c && ngtcp2_cid_eq(&(*p)->cid, cid)) {
			struct cid_entry *e = *p;

			*p = e->next;
			free(e);
			m->n--;
			return;
		}
}

/* One more id of c's: packets to it find c (quic_find). */
static int
quic_cid_add(struct quic_conn *c, const ngtcp2_cid *cid)
{
	if (c->ncid == QUIC_MAXCID || cidmap_put(&c->q->cids, cid, c) == -1)
		return -1;
	c->cids[c->ncid++] = *cid;
	return 0;
}

static int
cb_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
    void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	if (quic_random(cid->data, cidlen) == -1)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = cidlen;
	if (quic_reset_token(c->q, cid, token) == -1)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return quic_cid_add(c, cid) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int
cb_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	for (size_t i = 0; i < c->ncid; i++)
		if (ngtcp2_cid_eq(&c->cids[i], cid)) {
			cidmap_del(&c->q->cids, cid, c);
			c->cids[i] = c->cids[--c->ncid];
			break;
		}
	return 0;
}

/* The list of handshakes in progress (QUIC_HS_MAX). */

static void
quic_hs_add(struct quic_conn *c)
{
	struct quic *q = c->q;

	c->in_hs = 1;
	c->hs_next = NULL;
	c->hs_prev = q->hs_tail;
	if (q->hs_tail != NULL)
		q->hs_tail->hs_next = c;
	else
		q->hs_head = c;
	q->hs_tail = c;
	q->nhs++;
}

static void
quic_hs_del(struct quic_conn *c)
{
	struct quic *q = c->q;

	if (!c->in_hs)
		return;
	if (c->hs_prev != NULL)
		c->hs_prev->hs_next = c->hs_next;
	else
		q->hs_head = c->hs_next;
	if (c->hs_next != NULL)
		c->hs_next->hs_prev = c->hs_prev;
	else
		q->hs_tail = c->hs_prev;
	c->in_hs = 0;
	c->hs_prev = c->hs_next = NULL;
	q->nhs--;
}

static int
cb_handshake_completed(ngtcp2_conn *conn, void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	c->handshake_done = 1;
	c->dirty = 1;
	return 0;
}

/* The length of the frame being received (rx holds at least 4 bytes). */
static uint32_t
quic_rx_len(const struct buf *rx)
{
	struct rd r;
	uint32_t v = 0;

	rd_init(&r, rx->p, rx->len);
	rd_u32(&r, &v);
	return v;
}

/* Stream data arrives in order; it is cut into frames here. */
static int
cb_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid,
    uint64_t offset, const uint8_t *data, size_t len, void *user, void *sdata)
{
	struct quic_conn *c = user;
	struct quic *q = c->q;

	(void)flags;
	(void)offset;
	(void)sdata;
	if (c->rx_sid == -1)
		c->rx_sid = sid;
	/* The peer's first data can come in the datagram that completes the
	 * handshake: the connection opens here then. */
	if (!c->opened && c->handshake_done && c->verified && !c->closing)
		quic_conn_open(c);
	if (sid != c->rx_sid || !c->opened || c->closing) {
		/* One stream each way, and nothing before the peer's key
		 * was checked. */
		c->closing = 1;
		return 0;
	}
	ngtcp2_conn_extend_max_stream_offset(conn, sid, len);
	ngtcp2_conn_extend_max_offset(conn, len);
	while (len > 0 && !c->closing) {
		uint32_t flen;
		size_t need, take;

		if (c->rx.len < QUIC_LEN_PREFIX) {
			take = QUIC_LEN_PREFIX - c->rx.len;
		} else {
			flen = quic_rx_len(&c->rx);
			if (flen > PAPO_FRAME_MAX) {
				log_msg(LOG_WARN, "a peer sent a frame of %u bytes, "
				    "over the limit: closing", flen);
				c->closing = 1;
				break;
			}
			need = QUIC_LEN_PREFIX + flen;
			take = need - c->rx.len;
		}
		if (take > len)
			take = len;
		if (buf_add(&c->rx, data, take) == -1) {
			c->closing = 1;
			break;
		}
		data += take;
		len -= take;
		if (c->rx.len >= QUIC_LEN_PREFIX) {
			flen = quic_rx_len(&c->rx);
			if (c->rx.len == QUIC_LEN_PREFIX + (size_t)flen &&
			    flen <= PAPO_FRAME_MAX) {
				q->cbs.frame(q->arg, c, c->rx.p + QUIC_LEN_PREFIX, flen);
				buf_reset(&c->rx);
			}
		}
	}
	return 0;
}

static int
cb_acked(ngtcp2_conn *conn, int64_t sid, uint64_t offset, uint64_t len,
    void *user, void *sdata)
{
	struct quic_conn *c = user;

	(void)conn;
	(void)sid;
	(void)sdata;
	if (offset + len > c->sq_acked)
		c->sq_acked = offset + len;
	while (c->sq_head != NULL &&
	    c->sq_head->off + c->sq_head->len <= c->sq_acked) {
		struct chunk *ch = c->sq_head;

		c->sq_head = ch->next;
		if (c->sq_head == NULL)
			c->sq_tail = NULL;
		free(ch);
	}
	return 0;
}

static int
cb_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t code,
    void *user, void *sdata)
{
	struct quic_conn *c = user;

	(void)conn;
	(void)flags;
	(void)code;
	(void)sdata;
	/* Either stream ending means the peer is done with us. */
	if (sid == c->tx_sid || sid == c->rx_sid)
		c->closing = 1;
	return 0;
}

static void
quic_callbacks(ngtcp2_callbacks *cb, int client)
{
	memset(cb, 0, sizeof(*cb));
	if (client) {
		cb->client_initial = ngtcp2_crypto_client_initial_cb;
		cb->recv_retry = ngtcp2_crypto_recv_retry_cb;
	} else
		cb->recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
	cb->recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
	cb->encrypt = ngtcp2_crypto_encrypt_cb;
	cb->decrypt = ngtcp2_crypto_decrypt_cb;
	cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
	cb->update_key = ngtcp2_crypto_update_key_cb;
	cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
	cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
	cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
	cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
	cb->rand = cb_rand;
	cb->get_new_connection_id = cb_new_cid;
	cb->remove_connection_id = cb_remove_cid;
	cb->handshake_completed = cb_handshake_completed;
	cb->recv_stream_data = cb_recv_stream_data;
	cb->acked_stream_data_offset = cb_acked;
	cb->stream_close = cb_stream_close;
}

static void
quic_settings(ngtcp2_settings *s, ngtcp2_transport_params *p, int relayed)
{
	ngtcp2_settings_default(s);
	s->initial_ts = quic_now();
	s->handshake_timeout = QUIC_HANDSHAKE_TIMEOUT;
	ngtcp2_transport_params_default(p);
	p->initial_max_streams_uni = 1;
	p->initial_max_streams_bidi = 0;
	p->initial_max_stream_data_uni = 1024 * 1024;
	p->initial_max_data = 4 * 1024 * 1024;
	p->max_idle_timeout = QUIC_IDLE_TIMEOUT;
	/* Peers must keep bit 0x40 of every packet set (RFC 9287 lets them
	 * clear it when we allow it): papo's own datagrams are the ones
	 * without it. */
	p->grease_quic_bit = 0;
	if (relayed) {
		s->max_tx_udp_payload_size = QUIC_RELAY_PKT_MAX;
		p->max_udp_payload_size = QUIC_RELAY_PKT_MAX;
	}
}

/* Connections. */

/*
 * Called as the endpoint runs (every socket read and connection timer,
 * so at least every keep-alive while there are connections): a gap of
 * more than the idle timeout means this process did not run (SIGSTOP, a
 * laptop asleep): every peer has heard nothing from us for that long and
 * has ended our connections, whatever packets of theirs wait in the
 * socket from before; ours end too, at once, so that they are dialled
 * again rather than kept up by those stale packets until our own idle
 * timer (a connection whose peer's id has no reset token would wait it
 * out).
 */
static void
quic_awake(struct quic *q)
{
	uint64_t now = quic_now();

	if (q->awake != 0 && now > q->awake + QUIC_IDLE_TIMEOUT) {
		unsigned n = 0;

		for (struct quic_conn *c = q->conns; c != NULL; c = c->next)
			if (c->handshake_done && !c->dead) {
				c->dead = 1;
				n++;
			}
		if (n > 0)
			log_msg(LOG_INFO, "this daemon did not run for %llu s: "
			    "its %u connections are gone, and are dialled again",
			    (unsigned long long)((now - q->awake) / NGTCP2_SECONDS), n);
	}
	q->awake = now;
}

static void
quic_conn_timer(void *arg)
{
	struct quic_conn *c = arg;

	quic_awake(c->q);
	if (ngtcp2_conn_handle_expiry(c->conn, quic_now()) != 0)
		c->dead = 1;      /* idle or handshake timeout: just go */
	c->dirty = 1;
	quic_process(c->q);
}

static struct quic_conn *
quic_conn_new(struct quic *q, const struct sockaddr_storage *remote,
    socklen_t remotelen, int client)
{
	struct quic_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->q = q;
	c->client = client;
	c->tx_sid = c->rx_sid = -1;
	memcpy(&c->remote, remote, remotelen);
	c->remotelen = remotelen;
	quic_from_sockaddr(remote, &c->raddr);
	buf_init(&c->rx, QUIC_LEN_PREFIX + PAPO_FRAME_MAX);
	if ((c->timer = loop_timer_new(q->loop, quic_conn_timer, c)) == NULL) {
		free(c);
		return NULL;
	}
	c->next = q->conns;
	q->conns = c;
	return c;
}

static void
quic_conn_free(struct quic_conn *c)
{
	struct quic_conn **p;

	for (p = &c->q->conns; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	quic_hs_del(c);
	for (size_t i = 0; i < c->ncid; i++)
		cidmap_del(&c->q->cids, &c->cids[i], c);
	while (c->sq_head != NULL) {
		struct chunk *ch = c->sq_head;

		c->sq_head = ch->next;
		free(ch);
	}
	if (c->conn != NULL)
		ngtcp2_conn_del(c->conn);
	if (c->tls != NULL)
		gnutls_deinit(c->tls);
	buf_free(&c->rx);
	loop_timer_free(c->timer);
	quic_sock_unref(c->sock);
	free(c);
}

/* Sends one packet of c: on the socket, or, for a relayed connection,
 * through the owner's relay. */
static void
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
	do {
		r = sendto(quic_conn_fd(c), p, n, 0, path->remote.addr,
		    path->remote.addrlen);
	} while (r == -1 && errno == EINTR);
	/* A lost datagram is QUIC's to recover; nothing to do here. */
}

/* Writes the close packet (when the connection is not already over). */
static void
quic_write_close(struct quic_conn *c)
{
	ngtcp2_connection_close_error ccerr;
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	uint8_t pkt[QUIC_PKT_MAX];
	ngtcp2_ssize n;

	if (c->conn == NULL || ngtcp2_conn_is_in_closing_period(c->conn) ||
	    ngtcp2_conn_is_in_draining_period(c->conn))
		return;
	ngtcp2_connection_close_error_default(&ccerr);
	if (!c->handshake_done && c->verified == 0 && c->tls != NULL &&
	    ngtcp2_conn_get_tls_alert(c->conn) != 0)
		ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr,
		    ngtcp2_conn_get_tls_alert(c->conn), NULL, 0);
	ngtcp2_path_storage_zero(&ps);
	n = ngtcp2_conn_write_connection_close(c->conn, &ps.path, &pi, pkt,
	    sizeof(pkt), &ccerr, quic_now());
	if (n > 0)
		quic_sendto(c, &ps.path, pkt, (size_t)n);
}

/* Writes every packet ngtcp2 has for c, feeding it queued stream data.
 * Returns -1 when the connection failed. */
static int
quic_conn_write(struct quic_conn *c)
{
	uint8_t pkt[QUIC_PKT_MAX];
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	ngtcp2_conn_stat st;
	uint64_t now = quic_now();
	int blocked = 0;

	ngtcp2_path_storage_zero(&ps);
	for (;;) {
		ngtcp2_vec vec[8];
		size_t nvec = 0;
		int64_t sid = -1;
		ngtcp2_ssize wlen = -1, n;

		if (c->tx_sid != -1 && !blocked && c->sq_sent < c->sq_end) {
			for (struct chunk *ch = c->sq_head; ch != NULL && nvec < 8;
			    ch = ch->next) {
				if (ch->off + ch->len <= c->sq_sent)
					continue;
				size_t skip = c->sq_sent > ch->off ?
				    (size_t)(c->sq_sent - ch->off) : 0;
				vec[nvec].base = ch->data + skip;
				vec[nvec].len = ch->len - skip;
				nvec++;
			}
			sid = c->tx_sid;
		}
		n = ngtcp2_conn_writev_stream(c->conn, &ps.path, &pi, pkt,
		    sizeof(pkt), &wlen, NGTCP2_WRITE_STREAM_FLAG_MORE, sid,
		    nvec ? vec : NULL, nvec, now);
		if (n < 0) {
			if (n == NGTCP2_ERR_WRITE_MORE) {
				c->sq_sent += (uint64_t)wlen;
				continue;
			}
			if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED ||
			    n == NGTCP2_ERR_STREAM_SHUT_WR) {
				blocked = 1;
				continue;
			}
			log_msg(LOG_DEBUG, "quic write: %s", ngtcp2_strerror((int)n));
			return -1;
		}
		if (wlen > 0)
			c->sq_sent += (uint64_t)wlen;
		if (n == 0)
			break;
		quic_sendto(c, &ps.path, pkt, (size_t)n);
	}
	/* ngtcp2 0.12 paces at cwnd / smoothed RTT, and until the first RTT
	 * sample that RTT is the initial 333 ms: the client's padded Initial
	 * alone then bars all but ACKs for ~27 ms, so its Handshake flight,
	 * ready as soon as the server's is read, waited for the PTO, and the
	 * server's HANDSHAKE_DONE and hello for the pacing timer.  Pacing
	 * starts with the first sample instead, as ngtcp2 itself does from
	 * 0.14 (it takes the RTT as 1 ms until then); what was sent before is
	 * charged at the measured rate.  In 0.12 this call does nothing but
	 * pace. */
	ngtcp2_conn_get_conn_stat(c->conn, &st);
	if (st.first_rtt_sample_ts != UINT64_MAX)
		ngtcp2_conn_update_pkt_tx_time(c->conn, now);
	return 0;
}

static void
quic_conn_arm(struct quic_conn *c)
{
	ngtcp2_tstamp at = ngtcp2_conn_get_expiry(c->conn);

	loop_timer_set(c->timer, at == UINT64_MAX ? 0 : (at == 0 ? 1 : at));
}

/* Opens our stream to the peer and tells the owner. */
static void
quic_conn_open(struct quic_conn *c)
{
	if (ngtcp2_conn_open_uni_stream(c->conn, &c->tx_sid, NULL) != 0) {
		c->closing = 1;
		return;
	}
	c->opened = 1;
	c->dirty = 1;
	c->q->cbs.open(c->q->arg, c);
}

/* Finishes what events left to do: opens, writes, closes. */
static void
quic_process(struct quic *q)
{
	struct quic_conn *c, *next;

	for (c = q->conns; c != NULL; c = next) {
		next = c->next;
		if (!c->dead && !c->closing && c->handshake_done && c->verified &&
		    !c->opened)
			quic_conn_open(c);
		if (!c->dead && (!c->closing || c->flush) && c->dirty) {
			c->dirty = 0;
			if (quic_conn_write(c) == -1)
				c->closing = 1;
		}
		if (c->dead || c->closing) {
			if (!c->dead)
				quic_write_close(c);
			q->cbs.closed(q->arg, c);
			/* closed() may have closed others: restart the walk,
			 * which skips finished connections because c is gone. */
			quic_conn_free(c);
			next = q->conns;
			continue;
		}
		quic_conn_arm(c);
	}
}

static struct quic_conn *
quic_find(struct quic *q, const uint8_t *dcid, size_t dcidlen)
{
	return cidmap_get(&q->cids, dcid, dcidlen);
}

/* The handshake flood (QUIC_HS_RETRY_AT): said once when it starts. */
static void
quic_flood_on(struct quic *q)
{
	uint64_t now = quic_now();

	if (!q->flood) {
		q->flood = 1;
		q->flood_since = now;
		q->nretry = q->nevicted = q->nbadtoken = 0;
		log_msg(LOG_WARN, "under a QUIC handshake flood: %u handshakes "
		    "in progress; new peers must prove their address first "
		    "(a Retry), and at most %d handshakes are kept (members "
		    "already connected are not affected)", q->nhs, QUIC_HS_MAX);
		loop_timer_set(q->flood_timer, now + QUIC_FLOOD_QUIET);
	}
	q->flood_last = now;
}

/* And once when it is over: QUIC_FLOOD_QUIET without a Retry and fewer
 * handshakes in progress than start one. */
static void
quic_flood_timer(void *arg)
{
	struct quic *q = arg;
	uint64_t now = quic_now();

	if (!q->flood)
		return;
	if (now < q->flood_last + QUIC_FLOOD_QUIET || q->nhs >= QUIC_HS_RETRY_AT) {
		loop_timer_set(q->flood_timer, (now < q->flood_last +
		    QUIC_FLOOD_QUIET ? q->flood_last : now) + QUIC_FLOOD_QUIET);
		return;
	}
	q->flood = 0;
	log_msg(LOG_INFO, "the QUIC handshake flood is over after %llu s: %llu "
	    "Initials answered with a Retry, %llu with a bad token dropped, "
	    "%llu handshakes ended unfinished",
	    (unsigned long long)((q->flood_last - q->flood_since) / NGTCP2_SECONDS),
	    (unsigned long long)q->nretry, (unsigned long long)q->nbadtoken,
	    (unsigned long long)q->nevicted);
}

/* Answers an Initial without a token with a Retry, keeping nothing: the
 * token (sealed under retry_secret) carries the id the client chose and
 * the address it was sent to, which the client's next Initial proves. */
static void
quic_retry(struct quic *q, struct quic_sock *sock, const ngtcp2_pkt_hd *hd,
    const struct sockaddr_storage *to, socklen_t tolen)
{
	uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN], pkt[QUIC_PKT_MAX];
	ngtcp2_ssize tlen, n;
	ngtcp2_cid scid;

	scid.datalen = QUIC_CIDLEN;
	if (quic_random(scid.data, scid.datalen) == -1)
		return;
	tlen = ngtcp2_crypto_generate_retry_token(token, q->retry_secret,
	    sizeof(q->retry_secret), hd->version, (const ngtcp2_sockaddr *)to,
	    tolen, &scid, &hd->dcid, quic_now());
	if (tlen < 0)
		return;
	n = ngtcp2_crypto_write_retry(pkt, sizeof(pkt), hd->version, &hd->scid,
	    &scid, &hd->dcid, token, (size_t)tlen);
	if (n < 0)
		return;
	q->nretry++;
	(void)sendto(sock != NULL ? sock->fd : q->fd, pkt, (size_t)n,
	    MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

/*
 * A new connection a peer opens, or NULL.  Under a handshake flood an
 * Initial without a token gets a Retry instead (not one that came
 * through our relay: only members' addresses reach us there); one with
 * a Retry token that does not verify is dropped.  Beyond QUIC_HS_MAX
 * handshakes in progress, the oldest ends.
 */
static struct quic_conn *
quic_accept(struct quic *q, struct quic_sock *sock, const uint8_t *pkt,
    size_t n, const struct sockaddr_storage *from, socklen_t fromlen,
    int relayed)
{
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	ngtcp2_callbacks cb;
	ngtcp2_pkt_hd hd;
	ngtcp2_cid scid, odcid;
	ngtcp2_path path;
	struct quic_conn *c;
	int validated = 0;

	if (ngtcp2_accept(&hd, pkt, n) != 0)
		return NULL;
	if (q->nhs >= QUIC_HS_RETRY_AT)
		quic_flood_on(q);
	if (hd.token.len > 0 && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
		if (ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base,
		    hd.token.len, q->retry_secret, sizeof(q->retry_secret),
		    hd.version, (const ngtcp2_sockaddr *)from, fromlen, &hd.dcid,
		    QUIC_RETRY_TTL, quic_now()) != 0) {
			q->nbadtoken++;
			return NULL;
		}
		validated = 1;
	} else if (q->flood && !relayed) {
		quic_flood_on(q);
		quic_retry(q, sock, &hd, from, fromlen);
		return NULL;
	}
	if (q->nhs >= QUIC_HS_MAX) {
		/* Ended at once, with no close, so that the memory of one
		 * goes to the next (this is the top of a socket event, as
		 * quic_process's own). */
		struct quic_conn *old = q->hs_head;

		quic_flood_on(q);
		q->cbs.closed(q->arg, old);
		quic_conn_free(old);
		q->nevicted++;
	}
	if ((c = quic_conn_new(q, from, fromlen, 0)) == NULL)
		return NULL;
	c->relayed = relayed;
	if ((c->sock = sock) != NULL)
		sock->refs++;
	scid.datalen = QUIC_CIDLEN;
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, relayed);
	params.original_dcid = hd.dcid;
	if (validated) {
		/* The client's first id is in the token; the one it uses now
		 * is the Retry's, which the client checks we name. */
		params.original_dcid = odcid;
		params.retry_scid = hd.dcid;
		params.retry_scid_present = 1;
		settings.token = hd.token;
	}
	if (quic_reset_token(q, &scid, params.stateless_reset_token) == 0)
		params.stateless_reset_token_present = 1;
	quic_callbacks(&cb, 0);
	quic_path_local(q, sock, &path);
	path.remote.addr = (struct sockaddr *)&c->remote;
	path.remote.addrlen = c->remotelen;
	path.user_data = NULL;
	if (quic_tls_init(c) == -1 ||
	    ngtcp2_conn_server_new(&c->conn, &hd.scid, &scid, &path, hd.version,
	    &cb, &settings, &params, NULL, c) != 0) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	ngtcp2_conn_set_keep_alive_timeout(c->conn, QUIC_KEEPALIVE);
	if (quic_cid_add(c, &scid) == -1 ||
	    quic_cid_add(c, &hd.dcid) == -1) { /* the client's until it hears ours */
		quic_conn_free(c);
		return NULL;
	}
	quic_hs_add(c);
	return c;
}

/* Reads one datagram of c's: a path that changed under it (a NAT that
 * moved the peer's mapping, the peer on another network) is QUIC's to
 * validate and migrate to; the owner is told, since where it sees the
 * peer has changed. */
static void
quic_conn_read(struct quic_conn *c, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n)
{
	struct quic *q = c->q;
	const ngtcp2_path *now;
	ngtcp2_pkt_info pi;
	ngtcp2_path path;
	int rv;

	memset(&pi, 0, sizeof(pi));
	quic_path_local(q, c->sock, &path);
	path.remote.addr = (struct sockaddr *)from;
	path.remote.addrlen = fromlen;
	path.user_data = NULL;
	rv = ngtcp2_conn_read_pkt(c->conn, &path, &pi, pkt, n, quic_now());
	if (rv != 0) {
		log_msg(LOG_DEBUG, "quic read: %s", ngtcp2_strerror(rv));
		if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING ||
		    rv == NGTCP2_ERR_DROP_CONN)
			c->dead = 1;
		else
			c->closing = 1;
	} else
		c->last_rx = quic_now();
	c->dirty = 1;
	now = ngtcp2_conn_get_path(c->conn);
	if (rv == 0 && !c->relayed && now->remote.addrlen <= sizeof(c->remote) &&
	    (now->remote.addrlen != c->remotelen ||
	    memcmp(now->remote.addr, &c->remote, c->remotelen) != 0)) {
		char was[ADDR_STRLEN], is[ADDR_STRLEN];

		addr_format(&c->raddr, was);
		memset(&c->remote, 0, sizeof(c->remote));
		memcpy(&c->remote, now->remote.addr, now->remote.addrlen);
		c->remotelen = (socklen_t)now->remote.addrlen;
		quic_from_sockaddr(&c->remote, &c->raddr);
		addr_format(&c->raddr, is);
		log_msg(LOG_INFO, "a peer's path moved from %s to %s", was, is);
		if (q->cbs.moved != NULL && c->opened)
			q->cbs.moved(q->arg, c);
	}
}

/* A datagram of no connection of ours, from `from`: a stateless reset
 * is recognised by the connection to that address it ends (ngtcp2 checks
 * the token); 1 when it ended one. */
static int
quic_stateless_reset_in(struct quic *q, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n)
{
	ngtcp2_pkt_info pi;
	ngtcp2_path path;

	if (n < NGTCP2_STATELESS_RESET_TOKENLEN + 5)
		return 0;
	memset(&pi, 0, sizeof(pi));
	path.remote.addr = (struct sockaddr *)from;
	path.remote.addrlen = fromlen;
	path.user_data = NULL;
	for (struct quic_conn *c = q->conns; c != NULL; c = c->next) {
		if (c->dead || c->closing || c->relayed || !c->handshake_done ||
		    c->remotelen != fromlen || memcmp(&c->remote, from, fromlen) != 0)
			continue;
		quic_path_local(q, c->sock, &path);
		if (ngtcp2_conn_read_pkt(c->conn, &path, &pi, pkt, n,
		    quic_now()) == NGTCP2_ERR_DRAINING) {
			char a[ADDR_STRLEN];

			addr_format(&c->raddr, a);
			log_msg(LOG_INFO, "the peer at %s reset our connection "
			    "(it restarted)", a);
			c->dead = 1;
			return 1;
		}
	}
	return 0;
}

/* Answers a packet of a connection we do not have with a stateless
 * reset, shorter than the packet, from the socket it came to (the peer
 * takes a reset only from the path it knows), so that the peer (our
 * previous run's, most likely) ends it at once. */
static void
quic_stateless_reset_out(struct quic *q, int fd,
    const struct sockaddr_storage *to, socklen_t tolen,
    const ngtcp2_version_cid *vc, size_t n)
{
	uint8_t out[QUIC_RESET_MIN_IN], token[NGTCP2_STATELESS_RESET_TOKENLEN];
	uint8_t rnd[QUIC_RESET_MIN_IN];
	uint64_t sec = quic_now() / NGTCP2_SECONDS;
	ngtcp2_cid cid;
	ngtcp2_ssize len;
	size_t size;

	if (n <= QUIC_RESET_MIN_IN || vc->dcidlen != QUIC_CIDLEN)
		return;
	if (sec != q->reset_window) {
		q->reset_window = sec;
		q->nreset = 0;
	}
	if (q->nreset >= QUIC_RESETS_PER_S)
		return;
	q->nreset++;
	ngtcp2_cid_init(&cid, vc->dcid, vc->dcidlen);
	/* One byte shorter than what came, and never under 41 (RFC 9000,
	 * 10.3: it must look like a short header with some payload). */
	size = n - 1 < sizeof(out) ? n - 1 : sizeof(out);
	if (quic_reset_token(q, &cid, token) == -1 ||
	    quic_random(rnd, sizeof(rnd)) == -1)
		return;
	len = ngtcp2_pkt_write_stateless_reset(out, size, token, rnd,
	    size - NGTCP2_STATELESS_RESET_TOKENLEN - 1);
	if (len > 0)
		(void)sendto(fd, out, (size_t)len, MSG_DONTWAIT,
		    (const struct sockaddr *)to, tolen);
}

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

static void
quic_kick(struct quic *q)
{
	loop_timer_set(q->flush, 1);   /* as soon as the loop comes round */
}

/*
 * Path MTU: no datagram of ours is fragmented (RFC 9000, 14: DF set in
 * IPv4; IPv6 routers never fragment).  QUIC's own packets start at its
 * 1200-byte minimum and ngtcp2 probes larger sizes (DPLPMTUD, RFC 8899)
 * up to QUIC_PKT_MAX, keeping the largest a probe came back from: so on
 * every path, direct, punched or through the relay, the size is what
 * the path carries, not what a router may fragment or a firewall drop.
 * PROBE rather than DO: the kernel's own path MTU cache (ICMP "too big",
 * which can be forged) is not consulted; a datagram over the interface's
 * MTU fails with EMSGSIZE, a lost packet for QUIC (and a failed probe).
 */
static void
quic_no_fragments(const struct quic *q, int fd)
{
	int v4 = IP_PMTUDISC_PROBE, v6 = IPV6_PMTUDISC_PROBE;

	/* A dual-stack socket's IPv4 peers follow the IPv4 option. */
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v4, sizeof(v4)) == -1 &&
	    q->family == AF_INET)
		log_msg(LOG_WARN, "cannot set DF on the UDP socket: %s",
		    strerror(errno));
	if (q->family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v6,
	    sizeof(v6)) == -1)
		log_msg(LOG_WARN, "cannot keep IPv6 datagrams whole: %s",
		    strerror(errno));
}

/* The socket: one for both families where the system has IPv6. */
static int
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
	q->fd = socket(q->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->fd == -1 && q->family == AF_INET6 && listen->family == 4) {
		q->family = AF_INET;
		q->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
	quic_no_fragments(q, q->fd);
	return 0;
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
	if (cidmap_init(&q->cids) == -1) {
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
	    loop_add_fd(l, q->fd, EPOLLIN, quic_read, q) == -1) {
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
	cidmap_free(&q->cids);
	sodium_memzero(q->retry_secret, sizeof(q->retry_secret));
	free(q);
}

void
quic_local(const struct quic *q, struct addr *out)
{
	quic_from_sockaddr(&q->local, out);
}

struct quic_conn *
quic_dial(struct quic *q, const struct addr *to, const uint8_t expect[32],
    int relayed)
{
	return quic_dial_on(q, NULL, to, expect, relayed);
}

struct quic_conn *
quic_dial_on(struct quic *q, struct quic_sock *sock, const struct addr *to,
    const uint8_t expect[32], int relayed)
{
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	ngtcp2_callbacks cb;
	ngtcp2_cid dcid, scid;
	struct sockaddr_storage ss;
	socklen_t len;
	ngtcp2_path path;
	struct quic_conn *c;

	if ((q->family == AF_INET && to->family == 6) ||
	    (relayed && q->cbs.relay_send == NULL))
		return NULL;
	len = quic_to_sockaddr(q, to, &ss);
	if ((c = quic_conn_new(q, &ss, len, 1)) == NULL)
		return NULL;
	c->relayed = relayed;
	if (!relayed && (c->sock = sock) != NULL)
		sock->refs++;
	c->has_expect = 1;
	memcpy(c->expect, expect, 32);
	dcid.datalen = QUIC_CIDLEN;
	scid.datalen = QUIC_CIDLEN;
	quic_random(dcid.data, dcid.datalen);
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, relayed);
	quic_callbacks(&cb, 1);
	quic_path_local(q, c->sock, &path);
	path.remote.addr = (struct sockaddr *)&c->remote;
	path.remote.addrlen = c->remotelen;
	path.user_data = NULL;
	if (quic_tls_init(c) == -1 ||
	    ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &path,
	    NGTCP2_PROTO_VER_V1, &cb, &settings, &params, NULL, c) != 0) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	ngtcp2_conn_set_keep_alive_timeout(c->conn, QUIC_KEEPALIVE);
	quic_cid_add(c, &scid);
	c->dirty = 1;
	quic_kick(q);
	return c;
}

int
quic_send(struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct chunk *ch;

	if (c->closing || c->dead || n > PAPO_FRAME_MAX ||
	    c->sq_end - c->sq_acked + n > QUIC_SENDQ_MAX)
		return -1;
	if ((ch = malloc(sizeof(*ch) + QUIC_LEN_PREFIX + n)) == NULL)
		return -1;
	ch->next = NULL;
	ch->off = c->sq_end;
	ch->len = QUIC_LEN_PREFIX + n;
	ch->data[0] = (uint8_t)(n >> 24);
	ch->data[1] = (uint8_t)(n >> 16);
	ch->data[2] = (uint8_t)(n >> 8);
	ch->data[3] = (uint8_t)n;
	memcpy(ch->data + QUIC_LEN_PREFIX, p, n);
	if (c->sq_tail != NULL)
		c->sq_tail->next = ch;
	else
		c->sq_head = ch;
	c->sq_tail = ch;
	c->sq_end += ch->len;
	c->dirty = 1;
	quic_kick(c->q);
	return 0;
}

void
quic_close(struct quic_conn *c)
{
	c->closing = 1;
	quic_kick(c->q);
}

void
quic_close_flush(struct quic_conn *c)
{
	c->flush = 1;
	quic_close(c);
}

const uint8_t *
quic_peer(const struct quic_conn *c)
{
	return c->peer;
}

const struct addr *
quic_remote(const struct quic_conn *c)
{
	return &c->raddr;
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
	s->fd = socket(q->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
	    loop_add_fd(s->loop, s->fd, EPOLLIN, quic_sock_read, s) == -1) {
		close(s->fd);
		free(s);
		return NULL;
	}
	quic_no_fragments(q, s->fd);
	return s;
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

unsigned
quic_version(const struct quic_conn *c)
{
	gnutls_datum_t p;

	if (c->tls == NULL || gnutls_alpn_get_selected_protocol(c->tls, &p) < 0)
		return 1;
	if (p.size != sizeof(QUIC_ALPN1) - 1 ||
	    memcmp(p.data, QUIC_ALPN_PREFIX, sizeof(QUIC_ALPN_PREFIX) - 1) != 0)
		return 1;
	switch (p.data[p.size - 1]) {
	case '3':
		return 3;
	case '2':
		return 2;
	default:
		return 1;
	}
}

uint64_t
quic_rtt_us(const struct quic_conn *c)
{
	ngtcp2_conn_stat st;

	if (c->conn == NULL)
		return 0;
	ngtcp2_conn_get_conn_stat(c->conn, &st);
	return st.smoothed_rtt / 1000;
}

uint64_t
quic_silent_ms(const struct quic_conn *c)
{
	uint64_t now = quic_now();

	return c->last_rx == 0 || c->last_rx > now ? 0 :
	    (now - c->last_rx) / NGTCP2_MILLISECONDS;
}

size_t
quic_mtu(const struct quic_conn *c)
{
	return c->conn != NULL && c->handshake_done ?
	    ngtcp2_conn_get_path_max_tx_udp_payload_size(c->conn) : 0;
}

int
quic_is_client(const struct quic_conn *c)
{
	return c->client;
}

int
quic_is_relayed(const struct quic_conn *c)
{
	return c->relayed;
}

void
quic_greeted(struct quic_conn *c)
{
	quic_hs_del(c);
}

void
quic_set_data(struct quic_conn *c, void *data)
{
	c->data = data;
}

void *
quic_data(const struct quic_conn *c)
{
	return c->data;
}
