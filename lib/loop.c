/*
 * loop.c: an event loop with one-shot timers, run by one thread (the node
 * thread, and the daemon's HTTP thread).  It holds no business logic:
 * callbacks do the work.  Timers are few (one per connection and a handful
 * more), so they live in a list scanned for the earliest deadline; the
 * loop sleeps in the platform's poller (lib/os.h: epoll, or poll in the
 * portable build) until that deadline or a ready descriptor, so an idle
 * loop wakes for nothing.  A virtual loop (no poller) is the same timers
 * stepped from outside (loop_fire_due), and the clocks can be a
 * simulator's (loop_clock_set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/loop.h"
#include "lib/os.h"

struct loop_fd {
	int fd;
	loop_fd_cb *cb;
	void *arg;
	struct loop_fd *next;
};

struct loop_timer {
	struct loop *loop;
	uint64_t at;              /* 0: disarmed */
	uint64_t round;           /* the firing round that armed it, or 0 */
	loop_timer_cb *cb;
	void *arg;
	struct loop_timer *next;
};

struct loop {
	struct os_poller *poller;
	loop_fill_cb *fill;       /* the source of one wait's descriptors */
	loop_fd_cb *ready;
	void *source_arg;
	int stop;
	int dispatching;          /* inside a round of ready descriptors */
	int firing;               /* inside a round of timers */
	uint64_t round;           /* rounds of timers so far */
	struct loop_fd *fds;
	struct loop_fd *dead;     /* removed during the round: freed after */
	struct loop_timer *timers;
};

/* NULL: the system's.  Set before threads start, read by all: no lock. */
static const struct loop_clock *loop_clock;

void
loop_clock_set(const struct loop_clock *c)
{
	loop_clock = c;
}

uint64_t
loop_now_ns(void)
{
	struct timespec ts;

	if (loop_clock != NULL)
		return loop_clock->now_ns(loop_clock->arg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t
loop_wall_ms(void)
{
	struct timespec ts;

	if (loop_clock != NULL)
		return loop_clock->wall_ms(loop_clock->arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / NS_PER_MS;
}

struct loop *
loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	if ((l->poller = os_poller_new()) == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

struct loop *
loop_new_virtual(void)
{
	return calloc(1, sizeof(struct loop));
}

void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	while (l->fds != NULL) {
		struct loop_fd *f = l->fds;

		l->fds = f->next;
		free(f);
	}
	while (l->timers != NULL) {
		struct loop_timer *t = l->timers;

		l->timers = t->next;
		free(t);
	}
	os_poller_free(l->poller);
	free(l);
}

int
loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb, void *arg)
{
	struct loop_fd *f;

	if (l->poller == NULL || (f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	f->fd = fd;
	f->cb = cb;
	f->arg = arg;
	if (os_poller_add(l->poller, fd, events, f) == -1) {
		free(f);
		return -1;
	}
	f->next = l->fds;
	l->fds = f;
	return 0;
}

static struct loop_fd *
loop_find(struct loop *l, int fd, struct loop_fd ***prev)
{
	struct loop_fd **p;

	for (p = &l->fds; *p != NULL; p = &(*p)->next)
		if ((*p)->fd == fd) {
			if (prev != NULL)
				*prev = p;
			return *p;
		}
	return NULL;
}

int
loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
	struct loop_fd *f = loop_find(l, fd, NULL);

	if (f == NULL)
		return -1;
	return os_poller_mod(l->poller, fd, events, f);
}

void
loop_del_fd(struct loop *l, int fd)
{
	struct loop_fd **prev, *f = loop_find(l, fd, &prev);

	if (f == NULL)
		return;
	os_poller_del(l->poller, fd);
	*prev = f->next;
	/* An event of this round may still be pending for f: keep it, dead,
	 * until the round is over, so that its pointer in the event neither
	 * dangles nor names a newer descriptor's entry. */
	f->cb = NULL;
	if (l->dispatching) {
		f->next = l->dead;
		l->dead = f;
	} else
		free(f);
}

int
loop_set_source(struct loop *l, loop_fill_cb *fill, loop_fd_cb *ready,
    void *arg)
{
	/* Asked once, so that a build whose poller has none says so at
	 * start rather than at the first wait. */
	if (l->poller == NULL)
		return -1;
	if (fill != NULL && os_poller_once(l->poller, -1, 0) == -1)
		return -1;
	l->fill = fill;
	l->ready = ready;
	l->source_arg = arg;
	return 0;
}

int
loop_source_add(struct loop *l, int fd, uint32_t events)
{
	return l->poller != NULL ? os_poller_once(l->poller, fd, events) : -1;
}

struct loop_timer *
loop_timer_new(struct loop *l, loop_timer_cb *cb, void *arg)
{
	struct loop_timer *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->loop = l;
	t->cb = cb;
	t->arg = arg;
	t->next = l->timers;
	l->timers = t;
	return t;
}

void
loop_timer_set(struct loop_timer *t, uint64_t at_ns)
{
	t->at = at_ns;
	t->round = t->loop->firing ? t->loop->round : 0;
}

void
loop_timer_free(struct loop_timer *t)
{
	struct loop_timer **p;

	if (t == NULL)
		return;
	for (p = &t->loop->timers; *p != NULL; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	free(t);
}

void
loop_stop(struct loop *l)
{
	l->stop = 1;
}

/* Runs the first due timer; 1 when one ran, so the caller rescans (a
 * callback may free or re-arm any timer). */
/*
 * Fires one timer due at now, unless a callback of this round armed it:
 * such a one waits for the next round, after the poller has been asked what
 * is ready, so that a timer armed again and again in the past slows the
 * loop but never starves its descriptors.
 */
static int
loop_fire(struct loop *l, uint64_t now)
{
	for (struct loop_timer *t = l->timers; t != NULL; t = t->next)
		if (t->at != 0 && t->at <= now && t->round != l->round) {
			t->at = 0;
			t->cb(t->arg);
			return 1;
		}
	return 0;
}

uint64_t
loop_next_at(const struct loop *l)
{
	uint64_t next = 0;

	for (const struct loop_timer *t = l->timers; t != NULL; t = t->next)
		if (t->at != 0 && (next == 0 || t->at < next))
			next = t->at;
	return next;
}

/* One round of the timers due at now: loop_run's after each wait. */
static int
loop_round(struct loop *l, uint64_t now)
{
	int n = 0;

	l->round++;
	l->firing = 1;
	while (!l->stop && loop_fire(l, now != 0 ? now : loop_now_ns()))
		n++;
	l->firing = 0;
	return n;
}

int
loop_fire_due(struct loop *l, uint64_t now)
{
	l->stop = 0;
	return loop_round(l, now);
}

static int
loop_timeout_ms(struct loop *l, uint64_t now)
{
	uint64_t next = loop_next_at(l);

	if (next == 0)
		return -1;
	if (next <= now)
		return 0;
	/* Round up, so a timer never fires early and spins. */
	if ((next - now) / NS_PER_MS > 24u * 3600 * 1000)
		return 24 * 3600 * 1000;
	return (int)((next - now + 999999u) / NS_PER_MS);
}

int
loop_run(struct loop *l)
{
	struct os_event evs[64];

	if (l->poller == NULL)
		return -1;
	l->stop = 0;
	while (!l->stop) {
		int n, i;

		/* What is ready is read before the timers due fire: after a
		 * stall (a loaded machine, a laptop waking) the packets that
		 * came meanwhile are taken before a connection's idle timer
		 * judges it silent. */
		if (l->fill != NULL)
			l->fill(l->source_arg, l);
		n = os_poller_wait(l->poller, evs, 64,
		    loop_timeout_ms(l, loop_now_ns()));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		l->dispatching = 1;
		for (i = 0; i < n && !l->stop; i++) {
			struct loop_fd *f = evs[i].ptr;

			/* The source's: one event for all its descriptors. */
			if (f == NULL) {
				if (l->ready != NULL)
					l->ready(l->source_arg, evs[i].events);
				continue;
			}
			/* cb NULL: removed by an earlier callback. */
			if (f->cb != NULL)
				f->cb(f->arg, evs[i].events);
		}
		l->dispatching = 0;
		while (l->dead != NULL) {
			struct loop_fd *f = l->dead;

			l->dead = f->next;
			free(f);
		}
		loop_round(l, 0);
	}
	return 0;
}
