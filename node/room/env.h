/*
 * env.h: what a room is given when it starts (room_new): the objects
 * of the node it works with, its files, and the settings every room of
 * the node reads from one place.  A header of its own, below every part
 * of a room, so that core.h holds it without including room.h, the
 * room's face to the node.
 */
#ifndef PAPO_ENV_H
#define PAPO_ENV_H

#include "lib/loop.h"
#include "node/msg.h"
#include "node/room/limit.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"

struct net;

/*
 * The settings of a node's rooms: one struct the node holds and fills
 * once from node_config (node_start), which every room reads through
 * env's const pointer.  A new setting is a field here and its line in
 * node_start, not a copy in each room's env.
 */
struct room_settings {
	unsigned version;            /* the newest protocol version spoken */
	int lan;                     /* LAN discovery by beacons (beacon.h) */
	/* The limits on messages (limit.h): zeros are the defaults. */
	struct papo_rate rate;
	struct papo_damp damp;
	int rate_self_off;           /* tests: our sends are not limited */
	/* Retention (PAPO_KEEP, store.h); keep_text as given, or NULL. */
	struct store_keep keep;
	const char *keep_text;
	/* Files (files.h): fetched at once up to files_auto bytes
	 * (FILES_AUTO_NONE: none), at most files_quota bytes a room; 0:
	 * the defaults. */
	uint64_t files_auto;
	uint64_t files_quota;
	int bad_chunks;              /* tests: chunks served are spoilt */
};

struct room_env {
	struct net *net;
	struct loop *loop;
	struct store *store;
	const struct identity *me;
	const struct room_keys *keys;
	const struct room_file *room;
	const char *home;            /* the room's folder (room.json...) */
	const struct room_settings *set;  /* the node's, for all its rooms */
	/* Hands a finished request or an event to the rest of the program. */
	void (*emit)(void *arg, struct node_msg *m);
	void *arg;
};

#endif
