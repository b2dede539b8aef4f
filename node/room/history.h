/*
 * history.h: history and sync (history.c): a message as the API shows
 * it, history requests, sync requests asked and answered.  Its counter
 * of syncs asked is its own.  Above epoch.h and retain.h; on the node
 * thread.
 */
#ifndef PAPO_HISTORY_H
#define PAPO_HISTORY_H

#include <stdint.h>

#include "node/room/epoch.h"
#include "node/room/retain.h"

/* Its counter: 0, or -1 out of memory. */
int syncs_new(struct room *room);
/* Frees it; none made: a no-op. */
void syncs_free(struct room *room);
/* What this member sees of a message (node/wire/private.h): *view is
 * m itself (SEEN_PLAIN), m with its private body opened, held by inner
 * (SEEN_PRIVATE), or nothing: a private message of two other members,
 * stored, passed on and counted, but shown to nobody here (SEEN_NOT).
 * buf_free(inner) in every case. */
enum deliver_seen { SEEN_NOT, SEEN_PLAIN, SEEN_PRIVATE };
enum deliver_seen deliver_view(const struct room *room,
    const struct frame_msg *m, struct frame_msg *view, struct buf *inner);
/* The message JSON the API and events share (the author's id, role and
 * a label that tells apart members of one name), of what this member
 * sees of it; NULL when it sees nothing (SEEN_NOT) or out of memory. */
cJSON *deliver_msg_json(const struct room *room, const struct frame_msg *m);
/* Takes req (a history request) and answers it. */
void deliver_history(struct room *room, struct node_msg *req);
/* Sends to a sync request: the ids of our latest messages. */
void deliver_sync_request(struct room *room, struct member *to);
/* Frame handler (core.h): a sync request. */
void deliver_on_sync(struct room *room, struct link *l, struct frame *f);
/* A hello taken: histories that differ are synced, not again while
 * neither side changed. */
void deliver_sync_hello(struct room *room, const struct hello_in *in);
/* Status's "syncs_asked". */
uint64_t deliver_syncs_asked(const struct room *room);

#endif
