/*
 * outbox.h: the outbox (outbox.c): own messages kept until acked, their
 * send requests answered, resent until then.  The list and the retry
 * timer are its own (struct outbox, opaque); an entry, struct outmsg,
 * stays visible: deliver.c fills whom a new one waits for and the
 * request it answers.  Above hello.h and member.h; on the node thread.
 */
#ifndef PAPO_OUTBOX_H
#define PAPO_OUTBOX_H

#include <stddef.h>

#include "node/room/hello.h"
#include "node/room/member.h"

/* An own message not yet acknowledged by everyone it waits for, and the
 * send request still waiting for its answer, if any. */
struct outmsg {
	char id[PAPO_MSGID_LEN + 1];
	struct member **wait, **done;
	size_t nwait, ndone;
	size_t done_cap;            /* done's room; wait's is the members
	                             * there were at outmsg_new, plus 1 */
	int any;                    /* nobody to wait for: any ack will do */
	struct node_msg *req;
	struct loop_timer *timer;
	struct room *room;
	cJSON *files;               /* the message's files, for the answer
	                             * (deliver_send's), or NULL */
	struct outmsg *next;
};

/* Its list and retry timer: 0, or -1 out of memory. */
int outbox_new(struct room *room);
/* Arms the retry (the outbox loaded). */
void outbox_start(struct room *room);
/* Every send waiting is answered (queued, stopping) and the outbox
 * emptied in memory (outbox.jsonl keeps it). */
void outbox_stop(struct room *room);
/* Frees it; none made: a no-op. */
void outbox_free(struct room *room);
/* A new entry for the own message id, first in the list; NULL out of
 * memory. */
struct outmsg *outmsg_new(struct room *room, const char *id);
/* The entry of message id; NULL when none. */
struct outmsg *outmsg_find(struct room *room, const char *id);
/* Answers the send request of o, if it still waits. */
void outmsg_answer(struct room *room, struct outmsg *o);
/* by acknowledged o's message as delivered: o goes once none is
 * waited for. */
void outmsg_acked(struct room *room, struct outmsg *o, struct member *by);
/* What waits goes to m, and through it to those it reaches. */
void outbox_through(struct room *room, struct member *m);
/* How many own messages wait. */
size_t outbox_n(const struct room *room);
/* m is online again, through others: what waits for it goes out through
 * every neighbour. */
void deliver_member_back(struct room *room, const struct member *m);
/* At start: the messages outbox.jsonl kept wait for acks again. */
void deliver_load_outbox(struct room *room);

#endif
