/*
 * chan.h: a one-way channel between two threads: a mutex-protected FIFO
 * of node_msg pointers and an eventfd that wakes the receiver's loop.
 * What is pushed is no longer the sender's.
 */
#ifndef PAPO_CHAN_H
#define PAPO_CHAN_H

#include "node/msg.h"

struct chan;

struct chan *chan_new(void);
/* Frees the channel and every message still in it; NULL is a no-op. */
void chan_free(struct chan *c);
/* The eventfd: readable while the channel may hold messages. */
int chan_fd(const struct chan *c);
void chan_push(struct chan *c, struct node_msg *m);
/* The oldest message, or NULL when empty (the eventfd is then drained). */
struct node_msg *chan_pop(struct chan *c);

#endif
