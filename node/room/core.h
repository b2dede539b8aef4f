/*
 * core.h: a room as its parts share it (core.c), and what every part
 * stands on: sealing and sending frames on a link, handing answers and
 * events to the program.  struct room holds what the room is given
 * (its env, its net), the objects of net/ it drives (punch, beacon), its
 * limits, and one pointer to each feature's state, which is opaque:
 * the parts reach one another's only through the functions of each
 * one's header (keyring.h, member.h, dial.h, presence.h, role.h,
 * epoch.h, hello.h, retain.h, outbox.h, receipt.h, history.h,
 * deliver.h).  server/ and the other node modules see only room.h.  All
 * of it belongs to the node thread, and none of it may block.
 */
#ifndef PAPO_CORE_H
#define PAPO_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/beacon.h"
#include "node/net/net.h"
#include "node/net/punch.h"
#include "node/net/quic.h"
#include "node/net/reach.h"
#include "node/room/env.h"
#include "node/room/keyring.h"
#include "node/room/limit.h"
#include "node/wire/frame.h"

#define ROOM_MEMBERS_MAX 16384  /* members in one table (member.c) */

struct member;
struct members;     /* member.c's: the table, peers.json */
struct dialling;    /* dial.c's: the dial and punch timers */
struct presence;    /* presence.c's: presence, our announcements */
struct roles;       /* role.c's: the owner and the admins */
struct epochs;      /* epoch.c's: frames kept, whether we were shut out */
struct delivery;    /* deliver.c's: its counter */
struct outbox;      /* outbox.c's: own messages until acked, retry */
struct recent;      /* receipt.c's: recent traffic, from the first */
struct syncs;       /* history.c's: syncs asked */
struct retention;   /* retain.c's: when to check again */
struct files;       /* files.c's: the store, fetches, serving */
struct searching;   /* search.c's: the index's rebuild watched */

struct room {
	struct room_env env;
	struct net *net;            /* what it shares with the other rooms */
	char rid[PAPO_ROOMID_LEN + 1];  /* its public id, on its events */
	struct punch *punch;        /* direct paths arranged through others */
	struct beacon *beacon;      /* LAN discovery, or NULL when off */
	struct limit *limit;        /* rate limits and damping (limit.h) */
	int stopping;               /* in room_free: nothing new starts */
	uint64_t bad_frames;        /* frames that did not open */
	/* presence.c's word to the parts above it (room_new sets it): m is
	 * online again through others, so what waits for it may go. */
	void (*member_back)(struct room *room, const struct member *m);
	/* Each feature's state, made by room_new and opaque to the
	 * others. */
	struct keyring *keyring;    /* epochs held, removals (keyring.h) */
	struct members *members;
	struct dialling *dialling;
	struct presence *presence;
	struct roles *roles;
	struct epochs *epochs;
	struct delivery *delivery;
	struct outbox *outbox;
	struct recent *recent;      /* NULL until the first message */
	struct syncs *syncs;
	struct retention *retention;
	struct files *files;
	struct searching *searching;
};

/*
 * How the parts take what comes in.  A frame that opened on a link of
 * the room goes to the one handler its type has (room.c's table, by
 * frame type); a hello, once room.c has kept its connection, goes to
 * each part's hook in a fixed order (room.c's table): the member's
 * record first, then roles and epochs (the frames that let a member
 * behind open what follows), then peers, then delivery.
 */
typedef void frame_handler(struct room *room, struct link *l, struct frame *f);

/* A hello taken: what each hook is told. */
struct hello_in {
	struct member *m;           /* who greets, m->conn the connection
	                             * it came on */
	const struct frame_hello *h;
	int fresh;                  /* m was not in the table before */
	int is_new;                 /* m->conn is a new connection */
	int both;                   /* it goes through our relay at both
	                             * ends (relay_both_ends) */
};
typedef void hello_hook(struct room *room, const struct hello_in *in);

/* Status and the list of rooms are built by asking each part for its
 * fields (room.c's tables): of the room, and of one member's entry. */
typedef void status_part(const struct room *room, cJSON *o);
typedef void member_status_part(const struct room *room,
    const struct member *m, cJSON *e);

/* A log line about the room: its name in it (log_room), as a daemon in
 * several rooms would otherwise say "ana is online" once for each. */
#define room_log(room, l, ...) log_room((l), (room)->env.room->name, __VA_ARGS__)

/* Hands o to the program as an event of kind, and frees o; o NULL (a
 * message this member may not see): nothing. */
void room_emit_json(struct room *room, enum node_kind kind, cJSON *o);
/* Answers req with an error: code, and err as printf formats fmt. */
void room_fail(struct room *room, struct node_msg *req, int code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Seals f as a connection of that version takes it (frame_for_version)
 * into b: -1 when nothing of it is for that version. */
int room_seal(struct room *room, const struct frame *f, unsigned version,
    struct buf *b);
/* Sends f on l, sealed as its version takes it. */
void room_send_link(struct room *room, struct link *l, const struct frame *f);
/* What invites hold changed (addresses or the newest key epoch): the
 * program gets the new invite. */
void room_invite_changed(struct room *room);

#endif
