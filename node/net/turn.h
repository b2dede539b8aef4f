/*
 * turn.h: a TURN client (RFC 8656 over UDP, STUN messages of RFC 8489):
 * one allocation on one TURN server, relaying datagrams to and from
 * peers, for members no direct path reaches.
 *
 * It owns no socket: everything it sends goes through env.send (the
 * daemon's one UDP socket), and the owner hands every datagram from the
 * server's address to turn_input.  It keeps its own timers in env.loop
 * (retransmissions, refreshes).  Node thread only, like the loop.
 *
 * Lifecycle: turn_new sends the first Allocate at once; env.state is
 * called each time the state or its reason changes: ALLOCATED (the
 * relayed address is known), FAILED (with turn_reason).  After a failure
 * or the loss of the allocation it allocates again by itself, backing
 * off from 5 s to 5 min; it stays FAILED until that works.  The callbacks
 * may call turn_send, turn_permit and the getters, never turn_free.  It
 * logs states at debug level only: the owner, told by env.state, says
 * what a person needs to know.
 */
#ifndef PAPO_TURN_H
#define PAPO_TURN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"

#define TURN_PEERS_MAX 64        /* peers with a permission or channel */
#define TURN_DATA_MAX 4096       /* bytes of one relayed datagram sent */
#define TURN_CRED_MAX 128        /* user, pass, secret, with the NUL */
#define TURN_NAME_MAX 160        /* a REST user name: expiry, ':', user */
#define TURN_DEFAULT_PORT 3478

struct turn;

struct turn_conf {
	struct addr server;             /* the TURN server, resolved */
	/* Long-term credentials, or (secret set) coturn's "REST API"
	 * shared secret: the user name becomes "<expiry>:<user or papo>"
	 * and the password base64(HMAC-SHA1(secret, that name)). */
	char user[TURN_CRED_MAX], pass[TURN_CRED_MAX];
	char secret[TURN_CRED_MAX];
	/* Timers; 0 for the defaults, tests shorten them. */
	unsigned rto_ms;                /* first retransmission: 500 */
	unsigned tries;                 /* sends of a request: 7 */
	unsigned perm_s;                /* a permission's lifetime on the
	                                 * server: 300 (RFC 8656); channels
	                                 * last twice that */
	unsigned lifetime_s;            /* allocation lifetime asked for
	                                 * (LIFETIME); 0: the server's */
};

struct turn_env {
	struct loop *loop;
	void *arg;
	/* Sends one datagram to `to` on the daemon's socket; 0 or -1. */
	int (*send)(void *arg, const struct addr *to, const uint8_t *p,
	    size_t n);
	/* A datagram peer sent to our relayed address (ChannelData or a
	 * Data indication); p is valid during the call only. */
	void (*data)(void *arg, const struct addr *peer, const uint8_t *p,
	    size_t n);
	/* The state or its reason changed. */
	void (*state)(void *arg, const struct turn *t);
};

enum turn_state { TURN_ALLOCATING, TURN_ALLOCATED, TURN_FAILED };

/* Copies c and env, and sends the first Allocate.  NULL with err when c
 * has no credentials or memory runs out. */
struct turn *turn_new(char err[PAPO_ERR_LEN], const struct turn_conf *c,
    const struct turn_env *env);
/* Releases the allocation (one Refresh with LIFETIME 0, not waited for)
 * and frees t; NULL is a no-op. */
void turn_free(struct turn *t);

/* "turn:HOST[:PORT]" (HOST a name, an IPv4 address or [IPv6]; port 3478
 * by default), resolved by getaddrinfo, IPv4 preferred.  0, or -1 with
 * err saying what is wrong.  Blocks while resolving a name. */
int turn_parse_url(const char *url, struct addr *out,
    char err[PAPO_ERR_LEN]);

/* A datagram from `from`: 1 when it came from the TURN server (taken,
 * whatever it held), 0 when it is not ours.  Only the source address
 * decides: ChannelData's first byte (0x40-0x4f) is also a QUIC short
 * header's. */
int turn_input(struct turn *t, const struct addr *from, const uint8_t *p,
    size_t n);
/* Relays p (at most TURN_DATA_MAX bytes) to peer.  The first datagram to
 * a peer installs its permission and binds a channel (ChannelBind);
 * until the server answers, datagrams go in Send indications, then as
 * ChannelData.  Both are renewed at 4/5 of the permission lifetime when
 * the peer was used (sent to, or heard from) since the last renewal, and
 * otherwise lapse.  -1 when there is no allocation, p is too long, the
 * peer table is full or the send failed. */
int turn_send(struct turn *t, const struct addr *peer, const uint8_t *p,
    size_t n);
/* Lets peer's IP address reach the relayed address before we sent it
 * anything (CreatePermission); refreshed the same way.  0 or -1. */
int turn_permit(struct turn *t, const struct addr *peer);

/* Refreshes the allocation now (unless a request for it is under way),
 * so that its loss is found out soon rather than at the next refresh:
 * a server that restarted answers 437 (the allocation is lost: FAILED,
 * then allocated again), one that is gone does not answer (FAILED after
 * the retransmissions).  For an owner whose relayed traffic stopped. */
void turn_refresh(struct turn *t);

enum turn_state turn_state(const struct turn *t);
/* The relayed address (XOR-RELAYED-ADDRESS), and our address as the
 * server sees it (XOR-MAPPED-ADDRESS); -1 when not ALLOCATED. */
int turn_relayed(const struct turn *t, struct addr *out);
int turn_mapped(const struct turn *t, struct addr *out);
/* Why the state is FAILED, one line; NULL otherwise. */
const char *turn_reason(const struct turn *t);
/* Whether the server now lets peer's IP address through (a permission
 * installed and not expired). */
int turn_is_relayed(const struct turn *t, const struct addr *peer);

/* The REST API credentials for secret and user (NULL or "": "papo")
 * valid until expiry (Unix seconds), for tests.  0 or -1. */
int turn_rest_cred(const char *secret, const char *user, uint64_t expiry,
    char name[TURN_NAME_MAX], char pass[TURN_CRED_MAX]);

#endif
