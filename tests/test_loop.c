/*
 * test_loop.c: lib/loop.c.  Timers fire in time order and never early;
 * a timer armed "at once" from a descriptor's callback fires in the same
 * round; and a timer that keeps arming itself in the past (as a presence
 * timer did, at a member's long-gone alive_until) cannot starve the
 * descriptors: the poller is asked between rounds.  And the platform
 * layer's backend (lib/os.h), whichever the build took: a wakeup posted
 * from another thread, a peer's half-close told apart from its data, the
 * source of one wait's descriptors (the portable poller's alone).  And
 * the simulator's seams: a clock set for the process moves loop_now_ns
 * and loop_wall_ms, and a virtual loop's timers fire in rounds stepped
 * from outside, in time order, one re-armed for now waiting a round.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "lib/loop.h"
#include "lib/os.h"

struct spin {
	struct loop *l;
	struct loop_timer *t;
	int fired;               /* times the spinning timer fired */
	int fd[2];               /* a wakeup (os_wake_new) */
	int fd_seen;             /* the descriptor's callback ran */
	int fired_at_fd;         /* fired when the descriptor ran */
};

static void
spin_timer(void *arg)
{
	struct spin *s = arg;

	s->fired++;
	if (s->fired == 10) {    /* the descriptor becomes ready now */
		os_wake_post(s->fd);
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

	(void)events;
	os_wake_drain(s->fd);
	s->fd_seen = 1;
	s->fired_at_fd = s->fired;
	loop_stop(s->l);
}

static void
test_no_starvation(void)
{
	struct spin s = { 0 };

	s.l = loop_new();
	CHECK(s.l != NULL && os_wake_new(s.fd) == 0);
	s.t = loop_timer_new(s.l, spin_timer, &s);
	CHECK(loop_add_fd(s.l, s.fd[0], LOOP_IN, spin_fd, &s) == 0);
	loop_timer_set(s.t, 1);
	loop_run(s.l);
	CHECK(s.fd_seen);
	/* One firing a round: the descriptor, ready at the tenth, was read
	 * at the next round. */
	CHECK(s.fired_at_fd >= 10 && s.fired_at_fd <= 11);
	loop_timer_free(s.t);
	loop_del_fd(s.l, s.fd[0]);
	os_wake_free(s.fd);
	loop_free(s.l);
}

struct order {
	struct loop *l;
	struct loop_timer *a, *b, *now;
	int seq[3], n;
	uint64_t b_at, b_ran;
	int fd[2];
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

	(void)events;
	os_wake_drain(o->fd);
	loop_timer_set(o->now, 1);
}

static void
test_order(void)
{
	struct order o = { 0 };

	o.l = loop_new();
	CHECK(os_wake_new(o.fd) == 0);
	o.a = loop_timer_new(o.l, order_a, &o);
	o.b = loop_timer_new(o.l, order_b, &o);
	o.now = loop_timer_new(o.l, order_now, &o);
	CHECK(loop_add_fd(o.l, o.fd[0], LOOP_IN, order_fd, &o) == 0);
	os_wake_post(o.fd);
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
	loop_del_fd(o.l, o.fd[0]);
	os_wake_free(o.fd);
	loop_free(o.l);
}

/* The backend's own: what a caller of the loop sees the same on both. */

struct hup {
	struct loop *l;
	int fd[2];               /* a socket pair: [0] watched, [1] the peer */
	int seen;                /* LOOP_HUP callbacks */
	uint32_t events;
};

static void
hup_fd(void *arg, uint32_t events)
{
	struct hup *h = arg;

	h->seen++;
	h->events |= events;
	loop_del_fd(h->l, h->fd[0]);
	loop_stop(h->l);
}

static void
hup_timeout(void *arg)
{
	loop_stop(arg);
}

/* Watches a socket pair's end for LOOP_HUP while its peer does what
 * peer says (0: write a byte, 1: shut down its side) and runs the loop
 * for at most ms: the callbacks seen. */
static int
hup_run(int peer, unsigned ms, uint32_t *events)
{
	struct hup h = { 0 };
	struct loop_timer *t;

	h.l = loop_new();
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, h.fd) == 0);
	CHECK(loop_add_fd(h.l, h.fd[0], LOOP_HUP, hup_fd, &h) == 0);
	/* One callback per descriptor. */
	CHECK(loop_add_fd(h.l, h.fd[0], LOOP_IN, hup_fd, &h) == -1);
	t = loop_timer_new(h.l, hup_timeout, h.l);
	if (peer == 0)
		CHECK(write(h.fd[1], "x", 1) == 1);
	else
		shutdown(h.fd[1], SHUT_WR);
	loop_timer_set(t, loop_now_ns() + (uint64_t)ms * 1000000u);
	loop_run(h.l);
	if (h.seen == 0)
		loop_del_fd(h.l, h.fd[0]);
	loop_timer_free(t);
	close(h.fd[0]);
	close(h.fd[1]);
	loop_free(h.l);
	*events = h.events;
	return h.seen;
}

/* Data from the peer is no hang-up; its shutdown is, at once. */
static void
test_hup(void)
{
	uint32_t ev;

	CHECK_EQ_INT(hup_run(0, 100, &ev), 0);
	CHECK_EQ_INT(hup_run(1, 5000, &ev), 1);
	CHECK(ev & LOOP_HUP);
}

/* A wakeup posted from another thread wakes a loop asleep with no timer. */
static void *
wake_thread(void *arg)
{
	usleep(20000);
	os_wake_post(arg);
	return NULL;
}

static void
wake_fd(void *arg, uint32_t events)
{
	(void)events;
	loop_stop(arg);
}

static void
test_wake(void)
{
	struct loop *l = loop_new();
	int w[2];
	pthread_t th;

	CHECK(os_wake_new(w) == 0);
	CHECK(loop_add_fd(l, w[0], LOOP_IN, wake_fd, l) == 0);
	/* Many posts before a drain: still one descriptor to read empty. */
	for (int i = 0; i < 100000; i++)
		os_wake_post(w);
	os_wake_drain(w);
	CHECK(pthread_create(&th, NULL, wake_thread, w) == 0);
	CHECK_EQ_INT(loop_run(l), 0);
	pthread_join(th, NULL);
	loop_del_fd(l, w[0]);
	os_wake_free(w);
	loop_free(l);
}

struct src {
	struct loop *l;
	int fd[2];
	int filled, ready;
};

static void
src_fill(void *arg, struct loop *l)
{
	struct src *s = arg;

	s->filled++;
	loop_source_add(l, s->fd[0], LOOP_IN);
}

static void
src_ready(void *arg, uint32_t events)
{
	struct src *s = arg;

	s->ready++;
	CHECK(events & LOOP_IN);
	loop_stop(s->l);
}

static void
never_fd(void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	CHECK(0);
}

/* The source: asked before each wait, its descriptor's readiness told;
 * the same descriptor may be watched as well (MHD's and a hang-up's). */
static void
test_source(void)
{
	struct src s = { 0 };

	s.l = loop_new();
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s.fd) == 0);
	if (loop_set_source(s.l, src_fill, src_ready, &s) == -1) {
		CHECK(strcmp(os_backend, "epoll") == 0);
		goto out;
	}
	CHECK(strcmp(os_backend, "poll") == 0);
	CHECK(loop_add_fd(s.l, s.fd[0], LOOP_HUP, never_fd, NULL) == 0);
	CHECK(write(s.fd[1], "x", 1) == 1);
	loop_run(s.l);
	CHECK_EQ_INT(s.ready, 1);
	CHECK(s.filled >= 1);
	loop_del_fd(s.l, s.fd[0]);
	loop_set_source(s.l, NULL, NULL, NULL);
out:
	close(s.fd[0]);
	close(s.fd[1]);
	loop_free(s.l);
}

static uint64_t virt_ns = 5000;

static uint64_t
virt_now(void *arg)
{
	(void)arg;
	return virt_ns;
}

static uint64_t
virt_wall(void *arg)
{
	(void)arg;
	return 1700000000000ull + virt_ns / NS_PER_MS;
}

struct virt {
	struct loop_timer *a, *b;
	int a_fired, b_fired;
	uint64_t b_seen;         /* loop_now_ns when b fired */
};

static void
virt_a(void *arg)
{
	struct virt *v = arg;

	v->a_fired++;
	/* Due at once: the next round's, not this one's. */
	if (v->a_fired == 1)
		loop_timer_set(v->a, virt_ns);
}

static void
virt_b(void *arg)
{
	struct virt *v = arg;

	v->b_fired++;
	v->b_seen = loop_now_ns();
}

static void
test_virtual(void)
{
	static const struct loop_clock clk = { virt_now, virt_wall, NULL };
	struct loop *l = loop_new_virtual();
	struct virt v = { 0 };
	int fd[2];

	CHECK(l != NULL);
	loop_clock_set(&clk);
	CHECK_EQ_INT(loop_now_ns(), 5000);
	CHECK_EQ_INT(loop_wall_ms(), 1700000000000ull);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
	CHECK(loop_add_fd(l, fd[0], LOOP_IN, hup_fd, NULL) == -1);
	CHECK(loop_run(l) == -1);
	v.a = loop_timer_new(l, virt_a, &v);
	v.b = loop_timer_new(l, virt_b, &v);
	CHECK_EQ_INT(loop_next_at(l), 0);
	loop_timer_set(v.b, 3 * NS_PER_S);
	loop_timer_set(v.a, 2 * NS_PER_S);
	CHECK_EQ_INT(loop_next_at(l), 2 * NS_PER_S);
	CHECK_EQ_INT(loop_fire_due(l, NS_PER_S), 0);     /* none due yet */
	virt_ns = 2 * NS_PER_S;
	CHECK_EQ_INT(loop_fire_due(l, virt_ns), 1);      /* a, not again */
	CHECK_EQ_INT(v.a_fired, 1);
	CHECK_EQ_INT(loop_next_at(l), 2 * NS_PER_S);     /* a re-armed */
	CHECK_EQ_INT(loop_fire_due(l, virt_ns), 1);
	CHECK_EQ_INT(v.a_fired, 2);
	CHECK_EQ_INT(loop_next_at(l), 3 * NS_PER_S);
	virt_ns = 4 * NS_PER_S;
	CHECK_EQ_INT(loop_fire_due(l, virt_ns), 1);
	CHECK_EQ_INT(v.b_fired, 1);
	CHECK_EQ_INT(v.b_seen, 4 * NS_PER_S);
	CHECK_EQ_INT(loop_next_at(l), 0);
	loop_clock_set(NULL);
	CHECK(loop_now_ns() != 4 * NS_PER_S && loop_wall_ms() > 1700000000000ull);
	close(fd[0]);
	close(fd[1]);
	loop_free(l);
}

int
main(void)
{
	alarm(60);               /* a starved loop hangs: fail instead */
	test_no_starvation();
	test_order();
	test_hup();
	test_wake();
	test_source();
	test_virtual();
	return check_exit();
}
