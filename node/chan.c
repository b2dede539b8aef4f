/*
 * chan.c: the only way objects cross between threads (chan.h): a FIFO
 * under a mutex, and an eventfd counter that the receiving loop watches.
 * Any thread may push; one thread pops.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "node/chan.h"

struct chan_item {
	struct node_msg *m;
	struct chan_item *next;
};

struct chan {
	pthread_mutex_t mu;
	struct chan_item *head, *tail;
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
chan_free(struct chan *c)
{
	struct node_msg *m;

	if (c == NULL)
		return;
	while ((m = chan_pop(c)) != NULL)
		node_msg_free(m);
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
chan_push(struct chan *c, struct node_msg *m)
{
	struct chan_item *it = malloc(sizeof(*it));
	uint64_t one = 1;

	if (it == NULL) {
		/* Out of memory: the message is dropped, as a closed peer's
		 * would be; the requester's timeout answers for it. */
		node_msg_free(m);
		return;
	}
	it->m = m;
	it->next = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->tail != NULL)
		c->tail->next = it;
	else
		c->head = it;
	c->tail = it;
	pthread_mutex_unlock(&c->mu);
	while (write(c->fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
}

struct node_msg *
chan_pop(struct chan *c)
{
	struct chan_item *it;
	struct node_msg *m = NULL;
	uint64_t n;

	pthread_mutex_lock(&c->mu);
	if ((it = c->head) != NULL) {
		c->head = it->next;
		if (c->head == NULL)
			c->tail = NULL;
		m = it->m;
		free(it);
	} else {
		/* Drained: reset the counter under the lock, so a push that
		 * follows is sure to make the fd readable again. */
		while (read(c->fd, &n, sizeof(n)) == -1 && errno == EINTR)
			;
	}
	pthread_mutex_unlock(&c->mu);
	return m;
}
