/*
 * deliver.h: messages (deliver.c): sending, flooding with dedup, acks
 * routed back, the outbox until acked, read receipts, history, sync and
 * retention.  Its state (the outbox, recent traffic, the retry timer,
 * retention's and sync's counters) is its own.  Above epoch.h, hello.h
 * and member.h; on the node thread.
 */
#ifndef PAPO_DELIVER_H
#define PAPO_DELIVER_H

#include "node/room/epoch.h"
#include "node/room/hello.h"

/* deliver.c's state and its retry timer: 0, or -1 out of memory. */
int deliver_new(struct room *g);
/* Arms the retry (the outbox loaded). */
void deliver_start(struct room *g);
/* The room stops: every send waiting is answered (queued, stopping)
 * and the outbox emptied in memory (outbox.jsonl keeps it). */
void deliver_stop(struct room *g);
/* Frees deliver.c's state; none made: a no-op. */
void deliver_free(struct room *g);
/* A hello taken (a hook, core.h): histories that differ are synced, and
 * what waits in the outbox goes to its member, and through it to those
 * it reaches. */
void deliver_on_hello(struct room *g, const struct hello_in *in);
/* Status: "limits", "damping", "outbox", "messages", "retention",
 * "syncs_asked". */
void deliver_status_json(const struct room *g, cJSON *o);
/* Status: a member's "dropped" (its messages over the receiving cap);
 * the list of rooms' "messages". */
void deliver_member_json(const struct room *g, const struct member *m,
    cJSON *e);
void deliver_summary_json(const struct room *g, cJSON *o);
/* Takes req (a send) and answers it: delivered, queued, or an error. */
void deliver_send(struct room *g, struct node_msg *req);
/* Takes req (a history request) and answers it. */
void deliver_history(struct room *g, struct node_msg *req);
/* Takes req (message ids shown to an agent), sends their read receipts
 * and answers it. */
void deliver_read(struct room *g, struct node_msg *req);
/* Frames received on l (handlers, core.h): a message, an ack, a sync
 * request. */
void deliver_on_msg(struct room *g, struct link *l, struct frame *f);
void deliver_on_ack(struct room *g, struct link *l, struct frame *f);
void deliver_on_sync(struct room *g, struct link *l, struct frame *f);
/* Sends to a sync request: the ids of our latest messages. */
void deliver_sync_request(struct room *g, struct member *to);
/* m is online again, through others: what waits for it goes out through
 * every neighbour. */
void deliver_member_back(struct room *g, const struct member *m);
/* At start: the messages outbox.jsonl kept wait for acks again. */
void deliver_load_outbox(struct room *g);

#endif
