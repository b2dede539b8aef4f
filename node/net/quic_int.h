/*
 * quic_int.h: what the endpoint's files share (quic.c, quic_accept.c,
 * quic_conn.c, quic_stream.c, quic_tls.c, quic_cid.c, quic_sock.c, each
 * calling only those after it): the limits, the structs of the endpoint,
 * its sockets and connections, and the functions that cross between the
 * files.  Included by those files only; node thread.
 */
#ifndef PAPO_QUIC_INT_H
#define PAPO_QUIC_INT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sodium.h>

#include <gnutls/crypto.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "lib/buf.h"
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
#define QUIC_ALPN4 "papo/4"
#define QUIC_ALPN5 "papo/5"
#define QUIC_CIDLEN 16
#define QUIC_MAXCID 8
#define QUIC_PKT_MAX 1452
/* QUIC's smallest datagram (RFC 9000, 14): every packet before a path
 * MTU probe succeeded (an Initial is padded to it) is at most this.  Of
 * IPv4 datagrams, those of at most QUIC_FRAG_MAX may be fragmented on
 * their way (quic_sock.c, "Path MTU"): QUIC's minimum and, for papo's
 * own datagrams, room for a TURN header around it (QUIC_RELAY_PKT_MAX). */
#define QUIC_PKT_MIN 1200
#define QUIC_RAW_FRAG_MAX (QUIC_PKT_MIN + 60)
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
#define QUIC_RCVBUF (4 * 1024 * 1024)   /* the socket's receive buffer */
/* A bulk frame being received grows its buffer to its own size; one
 * larger than this is let go once delivered, so that a connection done
 * with a transfer holds no megabyte. */
#define QUIC_BULK_KEEP (64u * 1024)

/* A send queue (quic.h): chunks that are never moved, each freed once
 * the peer acknowledged every byte of it, because ngtcp2 retransmits from
 * them.  The control stream has one, version 4's bulk stream another. */
struct sendq {
	struct chunk *head, *tail;
	uint64_t end;          /* offset after the last queued byte */
	uint64_t sent;         /* offset up to which ngtcp2 has the data */
	uint64_t acked;
};

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
	int df;                /* quic_df's state of fd */
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
	uint8_t expect[PAPO_KEY_LEN];
	uint8_t peer[PAPO_KEY_LEN];
	int verified;          /* the peer's key passed the check */
	int handshake_done;
	int opened;            /* open() delivered */
	int closing;           /* the owner asked to close */
	int flush;             /* and what was queued goes out first */
	int dead;              /* over: finish without a close packet */
	int dirty;             /* something to write */
	uint64_t last_rx;      /* when a packet of it was last read */
	unsigned version;      /* the protocol version, once opened */
	int64_t tx_sid, rx_sid;
	struct sendq sq;
	struct buf rx;         /* a frame being received */
	/* Version 4's bulk stream each way: ours opened at its first data,
	 * the peer's the second it opens. */
	int64_t btx_sid, brx_sid;
	struct sendq bq;
	struct buf brx;
	int bq_high;           /* bq was over half full since bulk_room */
	int bq_room;           /* bulk_room is due */
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
	int df;                /* quic_df's state of fd */
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
	uint8_t reset_secret[PAPO_KEY_LEN];
	uint64_t reset_window;  /* the second resets are counted in */
	unsigned nreset;
	uint64_t awake;         /* when the endpoint last ran (quic_awake) */
	struct cidmap cids;
	/* Handshakes in progress, oldest first (QUIC_HS_MAX). */
	struct quic_conn *hs_head, *hs_tail;
	unsigned nhs;
	/* Retry tokens are sealed under this, a random secret of this run. */
	uint8_t retry_secret[PAPO_KEY_LEN];
	/* The handshake flood (QUIC_HS_RETRY_AT): since when, the last Retry
	 * sent, and what was done about it, for the one line logged when it
	 * ends. */
	int flood;
	struct loop_timer *flood_timer;   /* when it may be over */
	uint64_t flood_since, flood_last;
	uint64_t nretry, nevicted, nbadtoken;
};

/* node/net/quic_accept.c */
void quic_flood_timer(void *arg);
struct quic_conn *quic_accept(struct quic *q, struct quic_sock *sock, const uint8_t *pkt,
    size_t n, const struct sockaddr_storage *from, socklen_t fromlen,
    int relayed);
int quic_stateless_reset_in(struct quic *q, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n);
void quic_stateless_reset_out(struct quic *q, int fd,
    const struct sockaddr_storage *to, socklen_t tolen,
    const ngtcp2_version_cid *vc, size_t n);

/* node/net/quic_conn.c */
void quic_hs_add(struct quic_conn *c);
void quic_callbacks(ngtcp2_callbacks *cb, int client);
void quic_settings(ngtcp2_settings *s, ngtcp2_transport_params *p,
    unsigned version, int relayed);
void quic_awake(struct quic *q);
struct quic_conn *quic_conn_new(struct quic *q, const struct sockaddr_storage *remote,
    socklen_t remotelen, int client);
void quic_conn_free(struct quic_conn *c);
void quic_write_close(struct quic_conn *c);
int quic_conn_write(struct quic_conn *c);
void quic_process(struct quic *q);
void quic_conn_read(struct quic_conn *c, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n);

/* node/net/quic_stream.c */
int quic_cb_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid,
    uint64_t offset, const uint8_t *data, size_t len, void *user, void *sdata);
int quic_cb_acked(ngtcp2_conn *conn, int64_t sid, uint64_t offset, uint64_t len,
    void *user, void *sdata);
int quic_cb_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t code,
    void *user, void *sdata);
void quic_conn_open(struct quic_conn *c);
void quic_sendq_free(struct sendq *sq);

/* node/net/quic_tls.c */
int quic_cert(char err[PAPO_ERR_LEN], gnutls_certificate_credentials_t cred,
    const struct identity *id);
int quic_verify(gnutls_session_t s);
int quic_tls_init(struct quic_conn *c);
unsigned quic_alpn_version(const struct quic_conn *c);

/* node/net/quic_cid.c */
int quic_reset_token(const struct quic *q, const ngtcp2_cid *cid, uint8_t *token);
int quic_cidmap_init(struct cidmap *m);
void quic_cidmap_free(struct cidmap *m);
void quic_cidmap_del(struct cidmap *m, const ngtcp2_cid *cid, const struct quic_conn *c);
int quic_cid_add(struct quic_conn *c, const ngtcp2_cid *cid);
int quic_cb_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
    void *user);
int quic_cb_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user);
struct quic_conn *quic_find(struct quic *q, const uint8_t *dcid, size_t dcidlen);

/* node/net/quic_sock.c */
uint64_t quic_now(void);
void quic_path_local(const struct quic *q, const struct quic_sock *s,
    ngtcp2_path *path);
socklen_t quic_to_sockaddr(const struct quic *q, const struct addr *a,
    struct sockaddr_storage *ss);
void quic_from_sockaddr(const struct sockaddr_storage *ss, struct addr *a);
int quic_random(uint8_t *p, size_t n);
void quic_sendto(struct quic_conn *c, const ngtcp2_path *path, const uint8_t *p,
    size_t n);
void quic_kick(struct quic *q);
void quic_df_init(const struct quic *q, int fd, int *df);
void quic_rcvbuf(int fd);
int quic_bind(char err[PAPO_ERR_LEN], struct quic *q, const struct addr *listen);

#endif
