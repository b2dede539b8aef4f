/*
 * deliver.h: messages (deliver.c): sending, and flooding with dedup what
 * is received; delivery's parts made, started and stopped here: the
 * outbox (outbox.h), acks and read receipts (receipt.h), history and
 * sync (history.h), retention (retain.h).  Its counter is its own.
 * Above those; on the node thread.
 */
#ifndef PAPO_DELIVER_H
#define PAPO_DELIVER_H

#include "node/room/history.h"
#include "node/room/receipt.h"

/* deliver.c's state and its parts': 0, or -1 out of memory. */
int deliver_new(struct room *room);
/* Arms the retry (the outbox loaded). */
void deliver_start(struct room *room);
/* The room stops: every send waiting is answered (queued, stopping)
 * and the outbox emptied in memory (outbox.jsonl keeps it). */
void deliver_stop(struct room *room);
/* Frees deliver.c's state and its parts'; none made: a no-op. */
void deliver_free(struct room *room);
/* A hello taken (a hook, core.h): histories that differ are synced, and
 * what waits in the outbox goes to its member, and through it to those
 * it reaches. */
void deliver_on_hello(struct room *room, const struct hello_in *in);
/* Status: "limits", "damping", "outbox", "messages", "retention",
 * "syncs_asked". */
void deliver_status_json(const struct room *room, cJSON *o);
/* Status: a member's "dropped" (its messages over the receiving cap);
 * the list of rooms' "messages". */
void deliver_member_json(const struct room *room, const struct member *m,
    cJSON *e);
void deliver_summary_json(const struct room *room, cJSON *o);
/* Takes req (a send) and answers it: delivered, queued, or an error. */
void deliver_send(struct room *room, struct node_msg *req);
/* A frame received on l (a handler, core.h): a message. */
void deliver_on_msg(struct room *room, struct link *l, struct frame *f);

#endif
