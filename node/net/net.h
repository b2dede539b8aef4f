/*
 * net.h: what the rooms of one daemon share (net.c): the one QUIC socket,
 * reach, the port mapping and the TURN relay.  The net sits below the
 * rooms: it knows addresses and connections, never members or messages,
 * and reaches a room only through struct net_ops.  Everything here
 * belongs to the node thread.
 */
#ifndef PAPO_NET_H
#define PAPO_NET_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"
#include "node/net/portmap.h"
#include "node/net/quic.h"
#include "node/net/reach.h"
#include "node/net/turn.h"
#include "node/papo.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

#define TURN_PERMITS_MAX (TURN_PEERS_MAX / 2)  /* IPs let in to our relay */
#define NET_ROUND_NS (3ull * NS_PER_S)      /* net_round's work at most */

struct room;
struct member;

/* One QUIC connection: the net's, and its room's once known. */
struct link {
	struct quic_conn *qc;
	struct room *room;             /* its room; NULL until a hello opens */
	struct member *target;      /* whom we dialled; NULL when accepted */
	struct member *m;           /* who it is, once its hello arrived */
	int bad;                    /* frames that did not open */
	uint32_t told;              /* 1 + the epoch whose frame we sent it
	                             * when one of its frames under that
	                             * epoch did not open; 0 none */
	unsigned version;           /* the protocol version agreed */
};

/*
 * What the net asks of a room.  The net sits below the rooms (it knows
 * addresses and connections, never members or messages) and reaches
 * them only through these, room.c's room_net_ops.
 */
struct room;
struct link;
struct net_ops {
	/* What an invite holds (our addresses) changed. */
	void (*invite_changed)(struct room *room);
	/* What we advertise changed: as invite_changed, and the members
	 * hear it now. */
	void (*addrs_changed)(struct room *room);
	/* Our TURN relay has an address: dial what it lets us reach. */
	void (*relay_ready)(struct room *room);
	/* Our TURN relay failed: what went through it ends now. */
	void (*relay_lost)(struct room *room);
	/* Calls fn with every address of the room's members (our relay lets
	 * their IPs in). */
	void (*peer_addrs)(struct room *room,
	    void (*fn)(void *arg, const struct addr *a), void *arg);
	/* A datagram that is not QUIC's nor the relay's: 1 when it is
	 * room's (a punch). */
	int (*datagram)(struct room *room, const struct addr *from,
	    const uint8_t *p, size_t n);
	/* A connection of the room's is up: greet. */
	void (*hello)(struct room *room, struct link *l);
	/* A frame on one of the room's connections. */
	void (*frame)(struct room *room, struct link *l, const uint8_t *p,
	    size_t n);
	/* An accepted connection's first frame: 1 when room's key opens it
	 * (the connection is room's from now), else 0. */
	int (*adopt)(struct room *room, struct link *l, const uint8_t *p,
	    size_t n);
	void (*moved)(struct room *room, struct link *l);
	/* Version 4: a whole frame on the peer's bulk stream of one of
	 * room's connections (node/wire/xfer.h's frames); frames that come
	 * before the connection is room's are dropped.  May be NULL. */
	void (*bulk)(struct room *room, struct link *l, const uint8_t *p,
	    size_t n);
	/* Version 4: l's bulk queue went below half of QUIC_BULKQ_MAX
	 * after it was full or more than half full: more may be queued.
	 * May be NULL. */
	void (*bulk_room)(struct room *room, struct link *l);
	void (*closed)(struct room *room, struct link *l);
};

/* What the rooms of a daemon share: its socket and its reachability. */
struct net_env {
	const struct net_ops *ops;
	struct loop *loop;
	const struct identity *me;
	struct addr listen;
	unsigned version;            /* the newest protocol version spoken */
	const struct addr *advertise; /* given by the person, first */
	size_t nadvertise;
	int portmap;                 /* ask the router for our port (portmap.h) */
	int portmap_private;         /* a private external address counts */
	/* A TURN server to relay through (turn.h), or NULL; read during
	 * net_new only. */
	const struct turn_conf *turn;
	const char *turn_from;       /* "settings" or "invite" (status) */
};

/* Binds the QUIC socket, starts the port mapping and the relay. */
struct net *net_new(char err[PAPO_ERR_LEN], const struct net_env *env);
/* Closes what is left (its rooms are freed first); NULL is a no-op. */
void net_free(struct net *t);
/* The QUIC address bound. */
void net_local(const struct net *t, struct addr *bound);
/* The addresses others reach it at, in the order it advertises them
 * (reach.h); their count. */
size_t net_addrs(const struct net *t, struct addr *out, size_t max);

/* The node's network (net.c): the QUIC endpoint, how others reach us,
 * port mapping, the relay, the rooms it carries.  Opaque; the room
 * reaches what it needs of it by these. */
struct net;
struct reach *net_reach(struct net *t);
struct frame_peer *net_sealing(struct net *t);
const struct addr *net_bound(const struct net *t);
struct turn *net_turn(const struct net *t);
struct quic *net_quic(const struct net *t);
/* The rooms the net carries (at most PAPO_ROOMS_MAX), in the order
 * added: whether one more fits, a room added (it fits), one removed. */
int net_rooms_full(const struct net *t);
void net_room_add(struct net *t, struct room *room);
void net_room_remove(struct net *t, struct room *room);

/* What we advertise changed: logged; every room's program gets its new
 * invite, and its members our next announcement at once. */
void net_addrs_changed(struct net *t);
/* A room's announcement round: once a round whichever room's comes
 * first (at most every ANNOUNCE_FAST_NS), the local addresses are read
 * again (a laptop changes networks) and the relay's permissions
 * renewed. */
void net_round(struct net *t);

/* Port mapping and the TURN relay. */

/* Starts asking the router for our port (not on loopback) and, with
 * env->turn, the TURN client.  -1 with err. */
int relay_start(char err[PAPO_ERR_LEN], struct net *t,
    const struct net_env *env);
/* me.portmap and me.turn of status. */
void relay_json(const struct net *t, cJSON *me);
/* The relay's state as status names it: "off" with none. */
const char *relay_turn_name(const struct net *t);
/* A packet of a relayed connection (quic.h), to peer through our relay. */
int relay_quic_send(void *arg, const struct addr *peer, const uint8_t *p,
    size_t n);
/* A relayed connection ended or a dial through the relay failed: maybe
 * the server lost our allocation; refreshing it finds out. */
void relay_check(struct net *t);
/* Lets the relay's own IP and members' public IPs reach our relayed
 * address (when we have one). */
void relay_permits(struct net *t);
/* Whether a is on our TURN relay's IP: another member's relayed address,
 * as members of a room use one TURN server.  0 without a relay. */
int relay_on_server(const struct net *t, const struct addr *a);
/* Whether c goes through the relay at both ends: ours, to another
 * member's relayed address, so that both ends know.  Only those are
 * replaced by a path of our own whoever opened them; one relayed at one
 * end only (a member without a relay dialled our relayed address: to it,
 * it is direct) is judged as a direct one at both. */
int relay_both_ends(const struct net *t, const struct quic_conn *c);

#endif
