/*
 * receipt.h: acks and read receipts (receipt.c): the room's memory of
 * recent traffic (its own, made at the first message), acks routed back
 * to their authors, read receipts sent once.  Above outbox.h; on the
 * node thread.
 */
#ifndef PAPO_RECEIPT_H
#define PAPO_RECEIPT_H

#include "node/room/outbox.h"

/*
 * Group commit (docs/RELIABILITY.md, "Stored before acknowledged"):
 * what tells of a line just written to the log (an ack, a message passed
 * on, an event, a send's answer) is held by commit_hold until one sync
 * has made the round's lines durable, then fn runs with durable 1; when
 * the sync failed, the lines are gone and fn runs with durable 0, to say
 * nothing and free arg.  With nothing waiting for a sync, fn runs at
 * once.  commit_now syncs and releases now: 0, or -1 (errno set).
 */
typedef void held_fn(struct room *room, void *arg, int durable);
void commit_hold(struct room *room, held_fn *fn, void *arg);
int commit_now(struct room *room);
/* Frees the memory of recent traffic, after a last commit; none made:
 * a no-op. */
void receipts_free(struct room *room);
/* Remembers that message id, by from, came from m (NULL: written
 * here): its acks go back that way. */
void upstream_put(struct room *room, const char *id, struct member *m,
    const uint8_t from[PAPO_KEY_LEN]);
/* The author of message id while the ring remembers it: 0, or -1. */
int upstream_author(struct room *room, const char *id,
    uint8_t from[PAPO_KEY_LEN]);
/* The author of message id: from the ring, else from the log (a pread
 * and a parse).  -1 for a message we do not hold. */
int deliver_author(struct room *room, const char *id,
    uint8_t from[PAPO_KEY_LEN]);
/* Sends our ack of m (delivered or read) toward its author. */
void deliver_ack(struct room *room, const struct frame_msg *m,
    enum ack_state state);
/* Takes req (message ids shown to an agent), sends their read receipts
 * and answers it. */
void deliver_read(struct room *room, struct node_msg *req);
/* Frame handler (core.h): an ack. */
void deliver_on_ack(struct room *room, struct link *l, struct frame *f);

#endif
