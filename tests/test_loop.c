/*
 * test_loop.c: lib/loop.c.  Timers fire in time order and never early;
 * a timer armed "at once" from a descriptor's callback fires in the same
 * round; and a timer that keeps arming itself in the past (as a presence
 * timer did, at a member's long-gone alive_until) cannot starve the
 * descriptors: epoll is asked between rounds.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "check.h"
#include "lib/loop.h"

struct spin {
	struct loop *l;
	struct loop_timer *t;
	int fired;               /* times the spinning timer fired */
	int fd;                  /* the eventfd */
	int fd_seen;             /* the descriptor's callback ran */
	int fired_at_fd;         /* fired when the descriptor ran */
};

static void
spin_timer(void *arg)
{
	struct spin *s = arg;

	s->fired++;
	if (s->fired == 10) {    /* the descriptor becomes ready now */
		uint64_t one = 1;

		if (write(s->fd, &one, sizeof(one)) != sizeof(one))
			loop_stop(s->l);
	}
	/* Due long ago, as a stale deadline is: fire again at once. */
	loop_timer_set(s->t, 1);
	if (s->fired > 100000)   /* starved: give up rather than hang */
		loop_stop(s->l);
}

static void
spin_fd(void *arg, uint32_t events)
{
	struct spin *s = arg;
	uint64_t v;

	(void)events;
	if (read(s->fd, &v, sizeof(v)) != sizeof(v))
		return;
	s->fd_seen = 1;
	s->fired_at_fd = s->fired;
	loop_stop(s->l);
}

static void
test_no_starvation(void)
{
	struct spin s = { 0 };

	s.l = loop_new();
	s.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(s.l != NULL && s.fd >= 0);
	s.t = loop_timer_new(s.l, spin_timer, &s);
	CHECK(loop_add_fd(s.l, s.fd, LOOP_IN, spin_fd, &s) == 0);
	loop_timer_set(s.t, 1);
	loop_run(s.l);
	CHECK(s.fd_seen);
	/* One firing a round: the descriptor, ready at the tenth, was read
	 * at the next round. */
	CHECK(s.fired_at_fd >= 10 && s.fired_at_fd <= 11);
	loop_timer_free(s.t);
	loop_del_fd(s.l, s.fd);
	close(s.fd);
	loop_free(s.l);
}

struct order {
	struct loop *l;
	struct loop_timer *a, *b, *now;
	int seq[3], n;
	uint64_t b_at, b_ran;
	int fd;
};

static void
order_a(void *arg)
{
	struct order *o = arg;

	o->seq[o->n++] = 'a';
}

static void
order_b(void *arg)
{
	struct order *o = arg;

	o->b_ran = loop_now_ns();
	o->seq[o->n++] = 'b';
	loop_stop(o->l);
}

static void
order_now(void *arg)
{
	struct order *o = arg;

	o->seq[o->n++] = 'n';
}

/* A descriptor's callback arms a timer "at once": it fires in that
 * round, before the later timers. */
static void
order_fd(void *arg, uint32_t events)
{
	struct order *o = arg;
	uint64_t v;

	(void)events;
	if (read(o->fd, &v, sizeof(v)) == sizeof(v))
		loop_timer_set(o->now, 1);
}

static void
test_order(void)
{
	struct order o = { 0 };
	uint64_t one = 1;

	o.l = loop_new();
	o.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	o.a = loop_timer_new(o.l, order_a, &o);
	o.b = loop_timer_new(o.l, order_b, &o);
	o.now = loop_timer_new(o.l, order_now, &o);
	CHECK(loop_add_fd(o.l, o.fd, LOOP_IN, order_fd, &o) == 0);
	CHECK(write(o.fd, &one, sizeof(one)) == sizeof(one));
	o.b_at = loop_now_ns() + 40000000u;
	loop_timer_set(o.b, o.b_at);
	loop_timer_set(o.a, loop_now_ns() + 20000000u);
	loop_run(o.l);
	CHECK_EQ_INT(o.n, 3);
	CHECK_EQ_INT(o.seq[0], 'n');
	CHECK_EQ_INT(o.seq[1], 'a');
	CHECK_EQ_INT(o.seq[2], 'b');
	CHECK(o.b_ran >= o.b_at);        /* never early */
	loop_timer_free(o.a);
	loop_timer_free(o.b);
	loop_timer_free(o.now);
	loop_del_fd(o.l, o.fd);
	close(o.fd);
	loop_free(o.l);
}

int
main(void)
{
	alarm(60);               /* a starved loop hangs: fail instead */
	test_no_starvation();
	test_order();
	return check_exit();
}
