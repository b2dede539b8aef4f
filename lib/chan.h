/*
 * chan.h: the one way objects cross between threads.  A channel is a
 * FIFO of items and one wakeup descriptor (lib/os.h) that wakes the
 * receiving thread's loop.
 *
 * Items are intrusive: the object sent embeds a struct chan_link, so a
 * push allocates nothing and cannot fail.  The receiver gets the object
 * back with chan_item(link, type, member).
 *
 * Contract:
 *  - Any thread may push; one thread, the receiver, pops.
 *  - What is pushed is no longer the sender's: it must not be touched
 *    by the sender after chan_push, and is the receiver's once popped.
 *    An item is in at most one channel at a time.
 *  - Wakeups are coalesced (as libuv's uv_async_send): a wakeup is
 *    posted once for any number of pushes until the receiver finds the
 *    channel empty.  The receiver, woken by the fd being readable, pops
 *    until chan_pop returns NULL; nothing pushed is ever left without a
 *    wakeup.  The fd may be readable with nothing in the channel (a
 *    push's wakeup landing after its item was popped): chan_pop then
 *    returns NULL and clears it.
 *  - Items are taken in the order each producer pushed them.
 */
#ifndef PAPO_LIB_CHAN_H
#define PAPO_LIB_CHAN_H

#include <stddef.h>

struct chan_link {
	struct chan_link *next;
};

/* The object that embeds link as its member. */
#define chan_item(link, type, member)                                       \
	((type *)(void *)((char *)(link) - offsetof(type, member)))

struct chan;

/* NULL when out of memory or out of file descriptors. */
struct chan *chan_new(void);
/* Frees the channel; each item still in it is handed to drop, or, with
 * drop NULL, forgotten without being read (the caller freed them some
 * other way).  NULL is a no-op.  No thread may push to it any more. */
void chan_free(struct chan *c, void (*drop)(struct chan_link *));
/* The descriptor the receiver's loop watches for LOOP_IN. */
int chan_fd(const struct chan *c);
/* Appends l; never fails, never blocks but on the channel's mutex. */
void chan_push(struct chan *c, struct chan_link *l);
/* The oldest item, or NULL when empty (the wakeup is then cleared). */
struct chan_link *chan_pop(struct chan *c);

#endif
