/*
 * punch.h: hole punching arranged through a mutual member
 * (docs/REACHABILITY.md).  When this member and another are both
 * connected to some member M but not to each other, they agree a
 * simultaneous open through M with signed punch frames: the responder
 * first sends a few punch datagrams with a low TTL towards the other's
 * addresses (its own NAT opens a mapping; the far NAT sees nothing that
 * could clash), then says it is ready; both then send punches and the
 * initiator dials.  Up to 3 attempts, the roles swapped each time; the
 * first connection to greet wins, as for any dial.
 *
 * The first attempt punches from the QUIC socket, the others from a
 * socket of their own on a new port (quic_sock_new), both sides: after a
 * rebinding or a move, a NAT that saw packets of the old path keeps an
 * entry that a new path on the old ports would clash with, until it
 * times out.
 *
 * Punch datagrams go on the attempt's socket: 57 bytes, a first byte (0x21)
 * without the long-header bit, the sender's id, a time, and a MAC under
 * the room key.  A datagram is a punch only when all of that holds, so
 * neither is taken for the other (bit 0x40 cannot tell: ngtcp2 greases
 * it, RFC 9287); one from a stranger costs one keyed hash, then goes to
 * QUIC, which drops it.  Node thread only.
 */
#ifndef PAPO_PUNCH_H
#define PAPO_PUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/loop.h"
#include "node/net/quic.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

/* kind (1), id, ms (8), MAC (16) */
#define PUNCH_DATAGRAM_LEN (1 + PAPO_KEY_LEN + 8 + 16)
#define PUNCH_TTL_LOW 2           /* passes our NAT, dies before theirs */
#define PUNCH_TRIES 3
#define PUNCH_TRY_NS (5ull * NS_PER_S)      /* an attempt's time */
#define PUNCH_AFTER_NS (500000000ull)          /* dials unanswered: punch */
#define PUNCH_REST_NS (60ull * NS_PER_S)    /* after 3 failed */
#define PUNCH_REST_MAX_NS (960ull * NS_PER_S) /* doubling from the
                                                  * third rest on */

struct punch_env {
	struct loop *loop;
	struct quic *quic;
	const struct room_keys *keys;
	const struct identity *me;
	void *arg;
	/* Carries a punch frame towards the member it names, through one
	 * connected to it; -1 when there is none. */
	int (*relay)(void *arg, const struct frame *f);
	/* Dials member id at these addresses, on sock (NULL: the QUIC
	 * socket). */
	void (*dial)(void *arg, const uint8_t id[PAPO_KEY_LEN], const struct addr *a,
	    size_t n, struct quic_sock *sock);
	/* The addresses this member offers (reach.h's order); with a port,
	 * those to offer for a socket of that port. */
	size_t (*addrs)(void *arg, struct addr *out, size_t max, uint16_t port);
};

struct punch_stats {
	uint64_t asked, answered;      /* attempts begun, asks answered */
	uint64_t datagrams_sent, datagrams_ok, datagrams_bad;
	uint64_t punched;              /* connections that came of one */
};

struct punch;

struct punch *punch_new(const struct punch_env *env);
void punch_free(struct punch *p);
/* peer is reachable through others only: start trying, unless already
 * trying or resting after 3 failed attempts. */
void punch_want(struct punch *p, const uint8_t peer[PAPO_KEY_LEN]);
/* A punch frame addressed to this member (signature checked). */
void punch_frame(struct punch *p, const struct frame_punch *f);
/* A connection with peer greeted: 1 when a punch was under way for it
 * (the path is "punched"), and trying stops. */
int punch_done(struct punch *p, const uint8_t peer[PAPO_KEY_LEN]);
/* A datagram without a QUIC long header arrived from: 1 when it was a
 * punch of this room (taken), 0 when it may be QUIC. */
int punch_datagram(struct punch *p, const struct addr *from,
    const uint8_t *d, size_t n);
void punch_stats(const struct punch *p, struct punch_stats *out);

/* The datagram, for tests: made for id at ms; checked (0) against keys
 * and the time now_ms, within a minute. */
void punch_datagram_make(const struct room_keys *k, const uint8_t id[PAPO_KEY_LEN],
    uint64_t ms, uint8_t out[PUNCH_DATAGRAM_LEN]);
int punch_datagram_check(const struct room_keys *k, const uint8_t *d,
    size_t n, uint64_t now_ms, uint8_t id[PAPO_KEY_LEN]);

#endif
