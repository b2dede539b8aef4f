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

#include <gnutls/crypto.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "node/buf.h"
#include "node/quic.h"

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
#define QUIC_IDLE_TIMEOUT (30 * NGTCP2_SECONDS)
#define QUIC_KEEPALIVE (10 * NGTCP2_SECONDS)
#define QUIC_HANDSHAKE_TIMEOUT (5 * NGTCP2_SECONDS)
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

struct quic_conn {
	struct quic *q;
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
};

static void quic_process(struct quic *q);
static void quic_conn_open(struct quic_conn *c);
static void quic_kick(struct quic *q);

static uint64_t
quic_now(void)
{
	return loop_now_ns();
}

/* Addresses: the socket is AF_INET6 (dual-stack) or AF_INET; IPv4 peers
 * on a dual-stack socket are v4-mapped. */
static socklen_t
quic_to_sockaddr(const struct quic *q, const struct addr *a,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (q->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->ip, 4);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(a->port);
	if (a->family == 4) {
		in6->sin6_addr.s6_addr[10] = 0xff;
		in6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&in6->sin6_addr.s6_addr[12], a->ip, 4);
	} else
		memcpy(&in6->sin6_addr, a->ip, 16);
	return sizeof(*in6);
}

static void
quic_from_sockaddr(const struct sockaddr_storage *ss, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		a->family = 4;
		memcpy(a->ip, &in->sin_addr, 4);
		a->port = ntohs(in->sin_port);
		return;
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	a->port = ntohs(in6->sin6_port);
	if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		a->family = 4;
		memcpy(a->ip, &in6->sin6_addr.s6_addr[12], 4);
	} else {
		a->family = 6;
		memcpy(a->ip, &in6->sin6_addr, 16);
	}
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

static int
quic_cid_add(struct quic_conn *c, const ngtcp2_cid *cid)
{
	if (c->ncid == QUIC_MAXCID)
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
	if (quic_random(cid->data, cidlen) == -1 ||
	    quic_random(token, NGTCP2_STATELESS_RESET_TOKENLEN) == -1)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = cidlen;
	return quic_cid_add(c, cid) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int
cb_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	for (size_t i = 0; i < c->ncid; i++)
		if (ngtcp2_cid_eq(&c->cids[i], cid)) {
			c->cids[i] = c->cids[--c->ncid];
			break;
		}
	return 0;
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

static void
quic_conn_timer(void *arg)
{
	struct quic_conn *c = arg;

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
		r = sendto(q->fd, p, n, 0, path->remote.addr, path->remote.addrlen);
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
	for (struct quic_conn *c = q->conns; c != NULL; c = c->next)
		for (size_t i = 0; i < c->ncid; i++)
			if (c->cids[i].datalen == dcidlen &&
			    memcmp(c->cids[i].data, dcid, dcidlen) == 0)
				return c;
	return NULL;
}

static struct quic_conn *
quic_accept(struct quic *q, const uint8_t *pkt, size_t n,
    const struct sockaddr_storage *from, socklen_t fromlen, int relayed)
{
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	ngtcp2_callbacks cb;
	ngtcp2_pkt_hd hd;
	ngtcp2_cid scid;
	ngtcp2_path path;
	struct quic_conn *c;

	if (ngtcp2_accept(&hd, pkt, n) != 0)
		return NULL;
	if ((c = quic_conn_new(q, from, fromlen, 0)) == NULL)
		return NULL;
	c->relayed = relayed;
	scid.datalen = QUIC_CIDLEN;
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, relayed);
	params.original_dcid = hd.dcid;
	quic_callbacks(&cb, 0);
	path.local.addr = (struct sockaddr *)&q->local;
	path.local.addrlen = q->locallen;
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
	quic_cid_add(c, &scid);
	quic_cid_add(c, &hd.dcid);   /* the client uses it until it hears ours */
	return c;
}

/* One datagram from `from` (through the relay when relayed): to the
 * connection its destination id names, or to a new one it opens. */
static void
quic_packet(struct quic *q, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n, int relayed)
{
	ngtcp2_version_cid vc;
	struct quic_conn *c;
	ngtcp2_pkt_info pi;
	ngtcp2_path path;
	int rv;

	if (ngtcp2_pkt_decode_version_cid(&vc, pkt, n, QUIC_CIDLEN) != 0)
		return;
	c = quic_find(q, vc.dcid, vc.dcidlen);
	if (c == NULL) {
		if (vc.version == 0)
			return;     /* short header of a connection gone */
		if ((c = quic_accept(q, pkt, n, from, fromlen, relayed)) == NULL)
			return;
	}
	if (c->dead || c->closing)
		return;
	memset(&pi, 0, sizeof(pi));
	path.local.addr = (struct sockaddr *)&q->local;
	path.local.addrlen = q->locallen;
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
	}
	c->dirty = 1;
}

static void
quic_read(void *arg, uint32_t events)
{
	struct quic *q = arg;
	uint8_t pkt[65536];

	(void)events;
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(q->fd, pkt, sizeof(pkt), MSG_DONTWAIT,
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
		quic_packet(q, &from, fromlen, pkt, (size_t)n, 0);
	}
	quic_process(q);
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
	quic_packet(q, &ss, len, p, n, relayed);
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
	if (gnutls_certificate_allocate_credentials(&q->cred) < 0) {
		q->cred = NULL;
		snprintf(err, PAPO_ERR_LEN, "cannot set up TLS");
		goto fail;
	}
	gnutls_certificate_set_verify_function(q->cred, quic_verify);
	if (quic_cert(err, q->cred, id) == -1 || quic_bind(err, q, listen) == -1)
		goto fail;
	if ((q->flush = loop_timer_new(l, quic_flush, q)) == NULL ||
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
	while (q->conns != NULL) {
		struct quic_conn *c = q->conns;

		/* What is queued (a bye) goes out before the close. */
		if (c->opened && !c->dead && !c->closing)
			quic_conn_write(c);
		if (!c->dead)
			quic_write_close(c);
		q->cbs.closed(q->arg, c);
		quic_conn_free(c);
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
	if (q->cred != NULL)
		gnutls_certificate_free_credentials(q->cred);
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
	c->has_expect = 1;
	memcpy(c->expect, expect, 32);
	dcid.datalen = QUIC_CIDLEN;
	scid.datalen = QUIC_CIDLEN;
	quic_random(dcid.data, dcid.datalen);
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, relayed);
	quic_callbacks(&cb, 1);
	path.local.addr = (struct sockaddr *)&q->local;
	path.local.addrlen = q->locallen;
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
	struct sockaddr_storage ss;
	socklen_t len;
	int def = 64, rc;

	if (n == 0 || (p[0] & 0x80) != 0 ||
	    (q->family == AF_INET && to->family != 4))
		return -1;
	len = quic_to_sockaddr(q, to, &ss);
	/* A low TTL opens our own NAT's mapping without the packet reaching
	 * the far NAT; both options, for a dual-stack socket's IPv4 peers. */
	if (ttl > 0) {
		setsockopt(q->fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
		if (q->family == AF_INET6)
			setsockopt(q->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl,
			    sizeof(ttl));
	}
	rc = sendto(q->fd, p, n, MSG_DONTWAIT, (struct sockaddr *)&ss, len) ==
	    (ssize_t)n ? 0 : -1;
	if (ttl > 0) {
		setsockopt(q->fd, IPPROTO_IP, IP_TTL, &def, sizeof(def));
		if (q->family == AF_INET6) {
			def = -1;    /* the route's default */
			setsockopt(q->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &def,
			    sizeof(def));
		}
	}
	return rc;
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
quic_set_data(struct quic_conn *c, void *data)
{
	c->data = data;
}

void *
quic_data(const struct quic_conn *c)
{
	return c->data;
}
