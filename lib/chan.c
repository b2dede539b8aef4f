/*
 * chan.c: the channel between threads (chan.h).  A singly linked FIFO
 * under a mutex, an eventfd, and a pending flag that says a wakeup was
 * written and the receiver has not yet found the channel empty since:
 * a push writes the eventfd only when it sets the flag, and the receiver
 * clears the flag and drains the eventfd, under the same lock, only when
 * it finds nothing to pop.  So every item is pushed either before the
 * receiver's next "empty" (and is popped in the same run) or after it
 * (and its push writes a new wakeup).  Runs on any thread; allocates
 * only in chan_new.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/chan.h"

struct chan {
	pthread_mutex_t mu;
	struct chan_link *head, *tail;
	int pending;                 /* a wakeup is written or on its way */
	int fd;
};

struct chan *
chan_new(void)
{
	struct chan *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if ((c->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
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
	close(c->fd);
	free(c);
}

int
chan_fd(const struct chan *c)
{
	return c->fd;
}

void
chan_push(struct chan *c, struct chan_link *l)
{
	uint64_t one = 1;
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
	 * wakeup.  An eventfd's counter cannot overflow here (one write
	 * per wakeup), so the write fails only on a bad fd. */
	if (wake)
		while (write(c->fd, &one, sizeof(one)) == -1 && errno == EINTR)
			;
}

struct chan_link *
chan_pop(struct chan *c)
{
	struct chan_link *l;
	uint64_t n;

	pthread_mutex_lock(&c->mu);
	if ((l = c->head) != NULL) {
		if ((c->head = l->next) == NULL)
			c->tail = NULL;
		l->next = NULL;
	} else {
		/* Empty: the next push must write a wakeup again. */
		c->pending = 0;
		while (read(c->fd, &n, sizeof(n)) == -1 && errno == EINTR)
			;
	}
	pthread_mutex_unlock(&c->mu);
	return l;
}
