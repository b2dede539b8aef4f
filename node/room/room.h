/*
 * room.h: a room as this member sees it: the other members, their
 * connections, and everything that travels between them: hello, peers,
 * messages and their acks, sync, bye (docs/PROTOCOL.md, "Gossip"); and
 * the net its rooms share (one QUIC socket, one reachability).  Both
 * belong to the node thread and run inside its loop.
 */
#ifndef PAPO_ROOM_ROOM_H
#define PAPO_ROOM_ROOM_H

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"
#include "node/msg.h"
#include "node/net/turn.h"
#include "node/room/env.h"

struct room;
struct net;
struct net_ops;

/* What the net asks of a room (net.h): room.c's. */
extern const struct net_ops room_net_ops;

/* Joins the room to env->net, loads peers.json, starts dialling. */
struct room *room_new(char err[PAPO_ERR_LEN], const struct room_env *env);
/* Says bye to every member, closes the room's connections and leaves
 * its net; NULL is a no-op. */
void room_free(struct room *room);
/* Answers NODE_STATUS: the room, its members, this member as the net
 * sees it.  The room's other requests go straight to their parts
 * (node/roomset.c's table). */
void room_status(struct room *room, struct node_msg *m);
/* A room's line in the list of rooms: "members" (others, not removed),
 * "online", "messages" added to o. */
struct cJSON;
void room_summary(const struct room *room, struct cJSON *o);
/* This member's name (env->room's me) changed, from was: its members
 * are greeted again, so that they learn it (their hello hooks take a
 * member's name from each hello), and it is said in the log. */
void room_renamed(struct room *room, const char *was);
/* The newest key epoch held and its secret, for invites (0: the room
 * secret's, secret left zero). */
uint32_t room_epoch(const struct room *room, uint8_t secret[PAPO_KEY_LEN]);

#endif
