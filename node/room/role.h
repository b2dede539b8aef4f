/*
 * role.h: who governs the room (role.c): the owner and the admins it
 * named.  role.c's state is its own; the other parts ask through these.
 * Above member.h; on the node thread.
 */
#ifndef PAPO_ROLE_H
#define PAPO_ROLE_H

#include "node/room/member.h"

/* role.c's state, empty: 0, or -1 out of memory. */
int role_new(struct room *room);
void role_free(struct room *room);
/* At start: the owner from room.json, the grants from admins.json. */
void role_load(struct room *room);
/* The owner's id, NULL while not known. */
const uint8_t *role_owner(const struct room *room);
int role_is_admin(const struct room *room, const uint8_t id[PAPO_KEY_LEN]);
/* "owner", "admin" or "member". */
const char *role_of(const struct room *room, const uint8_t id[PAPO_KEY_LEN]);
/* Fills a version 3 hello's owner and events. */
void role_hello(const struct room *room, struct frame_hello *h);
/* A hello taken (a hook, core.h): the owner from our inviter, our
 * grants to a member holding fewer. */
void role_on_hello(struct room *room, const struct hello_in *in);
/* An admin grant received on l (a handler, core.h). */
void role_on_admin(struct room *room, struct link *l, struct frame *f);
/* Takes req (NODE_ADMIN, to: the member) and answers it. */
void role_request_admin(struct room *room, struct node_msg *req);
/* Status: a member's "role". */
void role_member_json(const struct room *room, const struct member *m,
    cJSON *e);
/* Status: "owner" and "admins". */
void role_json(const struct room *room, cJSON *o);

#endif
