/*
 * env.h: what a room is given when it starts (gossip_new): the objects
 * of the node it works with, its files, and its settings.  A header of
 * its own, below every part of a room, so that core.h holds it without
 * including gossip.h, the room's face to the node.
 */
#ifndef PAPO_ENV_H
#define PAPO_ENV_H

#include "lib/loop.h"
#include "node/msg.h"
#include "node/room/limit.h"
#include "node/store/room.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"

struct net;

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

#endif
