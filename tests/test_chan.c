/*
 * test_chan.c: lib/chan.c.  Many pushes from several threads while the
 * receiver sleeps in poll on its wakeup descriptor (lib/os.h: an
 * eventfd, or a pipe in the portable build): every item taken exactly once,
 * each producer's in the order it pushed them, and the receiver never
 * left asleep with an item in the channel (a lost wakeup shows as a poll
 * that times out).  Wakeups are coalesced: any number of pushes before
 * the receiver looks make one wakeup write (checked on one thread, where
 * it does not depend on the scheduler), and an emptied channel's fd is
 * not readable.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/chan.h"
#include "lib/os.h"

#define PRODUCERS 4
#define PER_PRODUCER 50000
#define POLL_MS 10000            /* far above any honest wait */

struct item {
	unsigned producer;
	unsigned seq;
	struct chan_link link;   /* not first: chan_item must find it */
};

struct producer {
	struct chan *c;
	unsigned id;
	struct item *items;
};

static void *
produce(void *arg)
{
	struct producer *p = arg;

	for (unsigned i = 0; i < PER_PRODUCER; i++) {
		p->items[i].producer = p->id;
		p->items[i].seq = i;
		chan_push(p->c, &p->items[i].link);
		/* Now and then let the receiver drain to empty, so that
		 * pushes meet a receiver that just cleared its wakeup. */
		if (i % 997 == 0)
			usleep(100);
	}
	return NULL;
}

static void
test_threads(void)
{
	struct chan *c = chan_new();
	struct producer p[PRODUCERS];
	pthread_t t[PRODUCERS];
	unsigned next[PRODUCERS] = {0};
	unsigned long got = 0, misordered = 0, lost = 0;
	struct chan_link *l;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	for (unsigned i = 0; i < PRODUCERS; i++) {
		p[i].c = c;
		p[i].id = i;
		p[i].items = calloc(PER_PRODUCER, sizeof(struct item));
		CHECK(p[i].items != NULL);
		if (p[i].items == NULL)
			return;
		CHECK(pthread_create(&t[i], NULL, produce, &p[i]) == 0);
	}
	while (got < (unsigned long)PRODUCERS * PER_PRODUCER) {
		struct pollfd pfd = { .fd = chan_fd(c), .events = POLLIN };

		if (poll(&pfd, 1, POLL_MS) != 1) {
			lost++;      /* asleep with items still to come */
			break;
		}
		while ((l = chan_pop(c)) != NULL) {
			struct item *it = chan_item(l, struct item, link);

			if (it->producer >= PRODUCERS ||
			    it->seq != next[it->producer])
				misordered++;
			else
				next[it->producer]++;
			got++;
		}
	}
	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_INT(lost, 0);
	CHECK_EQ_INT(misordered, 0);
	CHECK_EQ_INT(got, (unsigned long)PRODUCERS * PER_PRODUCER);
	for (unsigned i = 0; i < PRODUCERS; i++)
		CHECK_EQ_INT(next[i], PER_PRODUCER);
	/* Nothing left: a wakeup still in flight is cleared by one pop. */
	CHECK(chan_pop(c) == NULL);
	{
		struct pollfd pfd = { .fd = chan_fd(c), .events = POLLIN };

		CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	}
	chan_free(c, NULL);
	for (unsigned i = 0; i < PRODUCERS; i++)
		free(p[i].items);
}

static int dropped;

static void
drop(struct chan_link *l)
{
	struct item *it = chan_item(l, struct item, link);

	dropped += (int)it->seq;
}

static void
test_one_thread(void)
{
	struct chan *c = chan_new();
	struct item it[3] = { { .seq = 1 }, { .seq = 2 }, { .seq = 4 } };
	struct pollfd pfd;
	unsigned char buf[64];
	uint64_t n = 0;
	ssize_t k;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	pfd = (struct pollfd){ .fd = chan_fd(c), .events = POLLIN };
	CHECK(chan_pop(c) == NULL);
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	/* Three pushes, one write: an eventfd's counter reads 1, a pipe
	 * holds one byte. */
	for (int i = 0; i < 3; i++)
		chan_push(c, &it[i].link);
	CHECK_EQ_INT(poll(&pfd, 1, 0), 1);
	k = read(chan_fd(c), buf, sizeof(buf));
	if (strcmp(os_backend, "epoll") == 0) {
		CHECK(k == (ssize_t)sizeof(n));
		memcpy(&n, buf, sizeof(n));
		CHECK_EQ_INT(n, 1);
	} else
		CHECK_EQ_INT(k, 1);
	/* The wakeup read away by hand (not by chan_pop): pending still
	 * holds, so no new write; the items are all there. */
	CHECK(chan_pop(c) == &it[0].link);
	CHECK(chan_item(chan_pop(c), struct item, link) == &it[1]);
	/* Pushed back after being taken: an item may travel again. */
	chan_push(c, &it[0].link);
	/* Freed with two in it: each handed to drop once. */
	chan_free(c, drop);
	CHECK_EQ_INT(dropped, 4 + 1);
	chan_free(NULL, drop);
}

int
main(void)
{
	test_one_thread();
	test_threads();
	return check_exit();
}
