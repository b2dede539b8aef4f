/*
 * gossip.h: a room as this member sees it: the other members, their
 * connections, and everything that travels between them: hello, peers,
 * messages and their acks, sync, bye (docs/PROTOCOL.md, "Gossip"); and
 * the net its rooms share (one QUIC socket, one reachability).  Both
 * belong to the node thread and run inside its loop.
 */
#ifndef PAPO_GOSSIP_H
#define PAPO_GOSSIP_H

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"
#include "node/wire/crypto.h"
#include "node/room/limit.h"
#include "node/msg.h"
#include "node/store/room.h"
#include "node/store/store.h"
#include "node/net/turn.h"

struct gossip;
struct net;

/*
 * What the net asks of a room.  The net sits below the rooms (it knows
 * addresses and connections, never members or messages) and reaches
 * them only through these, gossip.c's gossip_net_ops.
 */
struct gossip;
struct link;
struct net_ops {
	/* What an invite holds (our addresses) changed. */
	void (*invite_changed)(struct gossip *g);
	/* Our TURN relay has an address: dial what it lets us reach. */
	void (*relay_ready)(struct gossip *g);
	/* A connection of g's is up: greet. */
	void (*hello)(struct gossip *g, struct link *l);
	/* A frame on one of g's connections. */
	void (*frame)(struct gossip *g, struct link *l, const uint8_t *p,
	    size_t n);
	/* An accepted connection's first frame: 1 when g's key opens it
	 * (the connection is g's from now), else 0. */
	int (*adopt)(struct gossip *g, struct link *l, const uint8_t *p,
	    size_t n);
	void (*moved)(struct gossip *g, struct link *l);
	void (*closed)(struct gossip *g, struct link *l);
};
extern const struct net_ops gossip_net_ops;

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

struct gossip_env {
	struct net *net;
	struct loop *loop;
	struct store *store;
	const struct identity *me;
	const struct room_keys *keys;
	const struct room *room;
	const char *home;            /* the room's folder (room.json...) */
	unsigned version;            /* the newest protocol version spoken */
	int lan;                     /* LAN discovery by beacons (beacon.h) */
	/* The limits on messages (limit.h): zeros are the defaults. */
	struct papo_rate rate;
	struct papo_damp damp;
	int rate_self_off;           /* tests: our sends are not limited */
	/* Retention (PAPO_KEEP, store.h); keep_text as given, or NULL. */
	struct store_keep keep;
	const char *keep_text;
	/* Hands a finished request or an event to the rest of the program. */
	void (*emit)(void *arg, struct node_msg *m);
	void *arg;
};

/* Joins the room to env->net, loads peers.json, starts dialling. */
struct gossip *gossip_new(char err[PAPO_ERR_LEN], const struct gossip_env *env);
/* Says bye to every member, closes the room's connections and leaves
 * its net; NULL is a no-op. */
void gossip_free(struct gossip *g);
/* Takes a request (send, status, history) and emits it back when done. */
void gossip_request(struct gossip *g, struct node_msg *m);
/* A room's line in the list of rooms: "members" (others, not removed),
 * "online", "messages" added to o. */
struct cJSON;
void gossip_summary(const struct gossip *g, struct cJSON *o);
/* The newest key epoch held and its secret, for invites (0: the room
 * secret's, secret left zero). */
uint32_t gossip_epoch(const struct gossip *g, uint8_t secret[32]);

#endif
