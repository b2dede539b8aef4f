/*
 * chan.c: the channel between threads (chan.h).  A singly linked FIFO
 * under a mutex, a wakeup descriptor (lib/os.h: an eventfd, or a pipe in
 * the portable build), and a pending flag that says a wakeup was
 * written and the receiver has not yet found the channel empty since:
 * a push posts a wakeup only when it sets the flag, and the receiver
 * clears the flag and drains the wakeups, under the same lock, only when
 * it finds nothing to pop.  So every item is pushed either before the
 * receiver's next "empty" (and is popped in the same run) or after it
 * (and its push writes a new wakeup).  Runs on any thread; allocates
 * only in chan_new.
 */
#include <pthread.h>
#include <stdlib.h>

#include "lib/chan.h"
#include "lib/os.h"

struct chan {
	pthread_mutex_t mu;
	struct chan_link *head, *tail;
	int pending;                 /* a wakeup is written or on its way */
	int fd[2];                   /* os_wake_new's */
};

struct chan *
chan_new(void)
{
	struct chan *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if (os_wake_new(c->fd) == -1) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void
chan_free(struct chan *c, void (*drop)(struct chan_link *))
{
	struct chan_link *l, *next;

	if (c == NULL)
		return;
	/* Without drop the items are not even read: they may be gone. */
	for (l = drop != NULL ? c->head : NULL; l != NULL; l = next) {
		next = l->next;
		drop(l);
	}
	pthread_mutex_destroy(&c->mu);
	os_wake_free(c->fd);
	free(c);
}

int
chan_fd(const struct chan *c)
{
	return c->fd[0];
}

void
chan_push(struct chan *c, struct chan_link *l)
{
	int wake;

	l->next = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->tail != NULL)
		c->tail->next = l;
	else
		c->head = l;
	c->tail = l;
	wake = !c->pending;
	c->pending = 1;
	pthread_mutex_unlock(&c->mu);
	/* Outside the lock: the receiver may run meanwhile, pop l and find
	 * the channel empty; this write then only makes one spurious
	 * wakeup. */
	if (wake)
		os_wake_post(c->fd);
}

struct chan_link *
chan_pop(struct chan *c)
{
	struct chan_link *l;

	pthread_mutex_lock(&c->mu);
	if ((l = c->head) != NULL) {
		if ((c->head = l->next) == NULL)
			c->tail = NULL;
		l->next = NULL;
	} else {
		/* Empty: the next push must write a wakeup again. */
		c->pending = 0;
		os_wake_drain(c->fd);
	}
	pthread_mutex_unlock(&c->mu);
	return l;
}
