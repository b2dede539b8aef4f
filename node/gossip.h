/*
 * gossip.h: the room as this member sees it: the other members, their
 * connections, and everything that travels between them: hello, peers,
 * messages and their acks, sync, bye (docs/PROTOCOL.md, "Gossip").  It
 * belongs to the node thread and runs inside its loop.
 */
#ifndef PAPO_GOSSIP_H
#define PAPO_GOSSIP_H

#include "node/addr.h"
#include "node/crypto.h"
#include "node/node.h"
#include "node/room.h"
#include "node/store.h"
#include "node/turn.h"

struct gossip;

struct gossip_env {
	struct loop *loop;
	struct store *store;
	const struct identity *me;
	const struct room_keys *keys;
	const struct room *room;
	const char *home;
	struct addr listen;
	unsigned version;            /* the newest protocol version spoken */
	const struct addr *advertise; /* given by the person, first */
	size_t nadvertise;
	int lan;                     /* LAN discovery by beacons (beacon.h) */
	int portmap;                 /* ask the router for our port (portmap.h) */
	int portmap_private;         /* a private external address counts */
	/* A TURN server to relay through (turn.h), or NULL; read during
	 * gossip_new only. */
	const struct turn_conf *turn;
	const char *turn_from;       /* "settings" or "invite" (status) */
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

/* Binds the QUIC socket, loads peers.json, starts dialling. */
struct gossip *gossip_new(char err[PAPO_ERR_LEN], const struct gossip_env *env);
/* Says bye to every member and closes everything; NULL is a no-op. */
void gossip_free(struct gossip *g);
/* Takes a request (send, status, history) and emits it back when done. */
void gossip_request(struct gossip *g, struct node_msg *m);
/* The QUIC address bound. */
void gossip_local(const struct gossip *g, struct addr *bound);
/* The addresses others reach it at, in the order it advertises them
 * (reach.h); their count. */
size_t gossip_addrs(const struct gossip *g, struct addr *out, size_t max);
/* The newest key epoch held and its secret, for invites (0: the room
 * secret's, secret left zero). */
uint32_t gossip_epoch(const struct gossip *g, uint8_t secret[32]);

#endif
