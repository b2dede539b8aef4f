/*
 * roomset.h: the rooms a node holds (roomset.c): loaded from the home at
 * start and started once the net is up, the default one, the one a
 * request names, and the requests about the set itself.
 */
#ifndef PAPO_ROOMSET_H
#define PAPO_ROOMSET_H

#include <stddef.h>

#include "lib/chan.h"
#include "node/msg.h"
#include "node/room/room.h"
#include "node/store/home.h"
#include "node/wire/crypto.h"
#include "node/wire/invite.h"

struct roomset;
struct blobwork;

/* One room the node holds: its folder and files, its keys, and the room
 * itself (node/room/room.h) once started. */
struct node_room {
	struct roomset *set;
	char *dir;               /* home, or home/rooms/ID (room.h) */
	char id[PAPO_ROOMID_LEN + 1];
	struct room_file file;
	struct room_keys keys;
	struct store *store;
	struct room *room;
};

/* The rooms, and what they share of the node's: set by node_start
 * before the first roomset_load. */
struct roomset {
	struct node_room *rooms[PAPO_ROOMS_MAX];
	size_t nrooms;
	char dflt[PAPO_ROOMID_LEN + 1];   /* the default set, or "" */
	const char *home;
	struct chan *out;                 /* answers and events */
	struct room_env *env;             /* what each room's env copies:
	                                   * the loop, the net, me */
	struct room_settings *settings;
	const char *quic;                 /* where the node listens */
	/* The relay and its credentials (wiped at stop), and whether it
	 * was set for this daemon ("settings") or came with the invite of
	 * its first room that had one ("invite"); NULL: none. */
	struct invite_relay relay;
	const char *relay_from;
	int relay_share;                  /* invites carry the relay */
	struct blobwork *work;            /* adds shared files (blobs.h) */
};

/* Loads the rooms of home not held yet (all of them at start; later the
 * one just joined or made), not started: the last one in *added. */
int roomset_load(char err[PAPO_ERR_LEN], struct roomset *rs,
    struct node_room **added);
/* Reads home/rooms.json: which room is the default. */
void roomset_default_load(struct roomset *rs);
/* Starts r's room on the net. */
int roomset_start(char err[PAPO_ERR_LEN], struct roomset *rs, struct node_room *r);
/* Every room's bye, and the rooms freed. */
void roomset_close(struct roomset *rs);
/* The default room: the only one, else the one set; NULL when none. */
struct node_room *roomset_default(const struct roomset *rs);
/* The room m names (m->room: an id, a name, the start of an id; NULL or
 * "": the default); NULL with m answered otherwise. */
struct node_room *roomset_find(struct roomset *rs, struct node_msg *m);
/* Takes any request, by its kind (roomset.c's table of requests): the
 * set's own (list, join, make, leave, default, invite, rename, search,
 * add a file) or one room's, handed to its part; m is answered on out,
 * now or later. */
void roomset_request(struct roomset *rs, struct node_msg *m);
/* Tells the program the rooms changed (NODE_EV_ROOMS). */
void roomset_changed(struct roomset *rs);
/* The room's events, on their way out (room_env's emit). */
void roomset_emit(void *arg, struct node_msg *m);
/* The invite others can join r with, made now (malloc'd), or NULL. */
char *roomset_invite(struct node_room *r);

#endif
