/*
 * receipt.h: acks and read receipts (receipt.c): the room's memory of
 * recent traffic (its own, made at the first message), acks routed back
 * to their authors, read receipts sent once.  Above outbox.h; on the
 * node thread.
 */
#ifndef PAPO_RECEIPT_H
#define PAPO_RECEIPT_H

#include "node/room/outbox.h"

/* Frees the memory of recent traffic; none made: a no-op. */
void receipts_free(struct room *room);
/* Remembers that message id came from m: its acks go back that way. */
void upstream_put(struct room *room, const char *id, struct member *m);
/* Sends our ack of m (delivered or read) toward its author. */
void deliver_ack(struct room *room, const struct frame_msg *m,
    enum ack_state state);
/* Takes req (message ids shown to an agent), sends their read receipts
 * and answers it. */
void deliver_read(struct room *room, struct node_msg *req);
/* Frame handler (core.h): an ack. */
void deliver_on_ack(struct room *room, struct link *l, struct frame *f);

#endif
