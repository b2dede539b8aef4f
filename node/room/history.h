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
/* The message JSON the API and events share (the author's id, role and
 * a label that tells apart members of one name). */
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
