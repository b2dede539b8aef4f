/*
 * quic.h: papo's QUIC endpoint: one UDP socket serving as client and
 * server at once, TLS 1.3 with ALPN papo/N (N the protocol version),
 * both sides authenticated by
 * their member Ed25519 key in a self-signed certificate, and pinned.  Each
 * connection carries one unidirectional stream each way, on which frames
 * travel as a u32 big-endian length and the sealed bytes (and from
 * version 4 a bulk stream each way, below).
 *
 * The whole ngtcp2 and GnuTLS API stays inside quic.c and the files it
 * is split into (quic_int.h), so that moving to ngtcp2 1.x touches
 * nothing else.  Everything here runs on the node thread, inside its
 * loop.
 */
#ifndef PAPO_QUIC_H
#define PAPO_QUIC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"
#include "node/wire/crypto.h"

#define QUIC_SENDQ_MAX (8u * 1024 * 1024)   /* unacknowledged bytes a conn */
/* Version 4: each connection also has a bulk stream each way, for
 * files' chunks (node/wire/xfer.h), opened by each side when it first
 * sends on it; frames on it are framed as on the first stream (a u32
 * length, then the bytes) but may be up to QUIC_BULK_FRAME_MAX, and
 * its queue is bounded by QUIC_BULKQ_MAX of its own.  What is queued on
 * the first stream is always written before the bulk stream's, so a
 * file being sent never holds up the room's frames. */
#define QUIC_BULK_FRAME_MAX (1024u * 1024)
#define QUIC_BULKQ_MAX (4u * 1024 * 1024)

struct quic;
struct quic_conn;
struct quic_sock;

/* What the endpoint tells its owner.  The callbacks may call quic_send
 * and quic_close on any connection; the work happens after they return. */
struct quic_cbs {
	/* Handshake done and the peer's key checked: c may send. */
	void (*open)(void *arg, struct quic_conn *c);
	/* One whole frame (the sealed bytes, without the length). */
	void (*frame)(void *arg, struct quic_conn *c, const uint8_t *p, size_t n);
	/* c is gone (closed by either side, timed out, refused, or a dial
	 * that never connected); called once, and c is invalid after. */
	void (*closed)(void *arg, struct quic_conn *c);
	/* A datagram without a long header: 1 when it was one of papo's
	 * own (a punch), taken; 0 to treat it as QUIC.  May be NULL. */
	int (*datagram)(void *arg, const struct addr *from, const uint8_t *p,
	    size_t n);
	/* Sends one packet of a relayed connection to `to` through the
	 * owner's relay (a TURN allocation) rather than on the socket; 0 or
	 * -1 (a lost packet, for QUIC to recover).  May be NULL: no
	 * connection is relayed then. */
	int (*relay_send)(void *arg, const struct addr *to, const uint8_t *p,
	    size_t n);
	/* c's peer is now reached at another address (quic_remote): its NAT
	 * moved the mapping, or it moved to another network, and QUIC
	 * migrated the connection.  May be NULL. */
	void (*moved)(void *arg, struct quic_conn *c);
	/* Version 4: one whole frame from the peer's bulk stream.  May be
	 * NULL: a peer's bulk stream then closes the connection. */
	void (*bulk)(void *arg, struct quic_conn *c, const uint8_t *p,
	    size_t n);
	/* Version 4: c's bulk queue, which was more than half full, went
	 * below half as the peer acknowledged it.  May be NULL. */
	void (*bulk_room)(void *arg, struct quic_conn *c);
};

/* Binds listen (port 0 picks one).  A wildcard IPv4 or IPv6 address gets
 * one dual-stack socket when the system has IPv6.  version: the newest
 * protocol version to offer (4; 3, 2 or 1 speaks as a daemon of that
 * version: offers no newer ALPN, and allows the peer one stream). */
struct quic *quic_new(char err[PAPO_ERR_LEN], struct loop *l,
    const struct addr *listen, const struct identity *id, unsigned version,
    const struct quic_cbs *cbs, void *arg);
/* Writes what is queued and closes every connection (telling peers, and
 * the owner through closed()); the socket stays open for quic_send_raw,
 * so that an owner can still say goodbye to others (a TURN server) before
 * quic_free. */
void quic_close_all(struct quic *q);
/* The same for the connections pick says 1 to (a room's, when it goes). */
void quic_close_some(struct quic *q, int (*pick)(void *arg, struct quic_conn *c),
    void *arg);
/* quic_close_all, then closes the socket and frees q; NULL is a no-op. */
void quic_free(struct quic *q);
/* The address actually bound. */
void quic_local(const struct quic *q, struct addr *out);

/* Dials to, accepting only a peer whose key is expect; relayed: through
 * cbs.relay_send (to is then a peer of the relay: another member's
 * relayed address).  NULL when the connection cannot even be set up. */
struct quic_conn *quic_dial(struct quic *q, const struct addr *to,
    const uint8_t expect[PAPO_KEY_LEN], int relayed);
/*
 * A UDP socket of its own on a port of the kernel's choosing, for a punch
 * after a path died: a NAT that saw packets of the old path from our new
 * mapping (a rebinding, a move) keeps an entry for them that the peer's
 * side of a new path on the same ports would clash with (Linux conntrack
 * then gives the peer's packets another port, and the punch fails until
 * that entry times out).  A new port is a new tuple.  What arrives on it
 * is handled as on the endpoint's socket.  Counted: the creator holds one
 * reference, each connection on it another; quic_sock_unref drops one
 * (NULL is a no-op), the last closes it.
 */
struct quic_sock *quic_sock_new(struct quic *q);
void quic_sock_unref(struct quic_sock *s);
uint16_t quic_sock_port(const struct quic_sock *s);
/* quic_dial and quic_send_raw on sock (NULL: the endpoint's socket). */
struct quic_conn *quic_dial_on(struct quic *q, struct quic_sock *sock,
    const struct addr *to, const uint8_t expect[PAPO_KEY_LEN], int relayed);
int quic_send_raw_on(struct quic *q, struct quic_sock *sock,
    const struct addr *to, const uint8_t *p, size_t n, int ttl);
/* A datagram that reached us other than on the socket: through our relay
 * from `from` (relayed set).  Goes to its connection as one read on the
 * socket would; a new connection it opens is relayed. */
void quic_input(struct quic *q, const struct addr *from, const uint8_t *p,
    size_t n, int relayed);
/* Sends one datagram of papo's own (not QUIC: the datagram callback
 * tells them apart) to to, with the given TTL (0: the default); -1 when
 * it could not. */
int quic_send_raw(struct quic *q, const struct addr *to, const uint8_t *p,
    size_t n, int ttl);
/* Queues one frame; -1 when c is closing or too much is unacknowledged. */
int quic_send(struct quic_conn *c, const uint8_t *p, size_t n);
/* Version 4: queues one frame (at most QUIC_BULK_FRAME_MAX) on c's bulk
 * stream, opening it first if need be; -1 when c is closing, of a
 * version before 4, or its bulk queue would pass QUIC_BULKQ_MAX. */
int quic_send_bulk(struct quic_conn *c, const uint8_t *p, size_t n);
/* Bytes queued on c's bulk stream and not yet acknowledged. */
size_t quic_bulk_queued(const struct quic_conn *c);
/* Closes c gracefully; closed() follows. */
/* As quic_close, but what was queued is written once first, in the
 * packets before the close (best effort: nothing is resent). */
void quic_close_flush(struct quic_conn *c);
void quic_close(struct quic_conn *c);

const uint8_t *quic_peer(const struct quic_conn *c);   /* after open() */
/* Where the peer is reached now: the connection's current path, which
 * QUIC moves when the peer's address changes. */
const struct addr *quic_remote(const struct quic_conn *c);
/* How long since a packet of c was last read, in milliseconds (0 before
 * the first).  Both ends ping every 1.5 s: more than a few seconds of
 * silence is a path in trouble, and 7 s of it ends the connection. */
uint64_t quic_silent_ms(const struct quic_conn *c);
/* The largest UDP payload c sends on its path now: 1200 until a larger
 * probe came back (path MTU discovery); 0 before the handshake. */
size_t quic_mtu(const struct quic_conn *c);
/* The protocol version the handshake agreed (ALPN papo/4, papo/3,
 * papo/2 or papo/1). */
unsigned quic_version(const struct quic_conn *c);
/* The connection's smoothed round-trip time, in microseconds. */
uint64_t quic_rtt_us(const struct quic_conn *c);
int quic_is_client(const struct quic_conn *c);
/* Whether c's packets go through the relay (quic_dial's relayed, or
 * accepted from a relayed datagram). */
int quic_is_relayed(const struct quic_conn *c);
/* c's peer proved to be one of the owner's (a member's hello): a
 * connection it opened no longer counts among the handshakes in
 * progress, which a handshake flood ends oldest first (QUIC_HS_MAX). */
void quic_greeted(struct quic_conn *c);
void quic_set_data(struct quic_conn *c, void *data);
void *quic_data(const struct quic_conn *c);

#endif
