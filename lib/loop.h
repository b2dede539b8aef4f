/*
 * loop.h: the event loop: the platform's poller over file descriptors
 * (lib/os.h: epoll, or poll in the portable build), plus timers, on one
 * thread.  Both the node thread and the daemon's HTTP thread run one.
 * Idle means asleep: with no ready descriptor and no due timer, loop_run
 * sleeps in the poller.  A loop and its timers belong to the thread that
 * runs it.
 */
#ifndef PAPO_LOOP_H
#define PAPO_LOOP_H

#include <stdint.h>

#include "lib/os.h"
#include "lib/units.h"

/* What a descriptor is watched for; a callback is told what came, with
 * LOOP_ERR for an error or a full hang-up, which are always reported. */
#define LOOP_IN  OS_IN            /* readable */
#define LOOP_OUT OS_OUT           /* writable */
#define LOOP_HUP OS_HUP           /* a socket's peer closed its side */
#define LOOP_ERR OS_ERR

struct loop;
struct loop_timer;
typedef void loop_fd_cb(void *arg, uint32_t events);
typedef void loop_timer_cb(void *arg);
typedef void loop_fill_cb(void *arg, struct loop *l);

struct loop *loop_new(void);
/* Frees the loop and any timer still attached; NULL is a no-op. */
void loop_free(struct loop *l);
/* Watches fd for events (LOOP_IN, LOOP_OUT, LOOP_HUP); one callback per
 * fd: -1 when fd is watched already. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb,
    void *arg);
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
void loop_del_fd(struct loop *l, int fd);
/*
 * A source of descriptors that change at every round (libmicrohttpd's in
 * select mode): fill is called before each wait and names them with
 * loop_source_add; ready is called once a wait in which any of them was
 * ready.  fill NULL removes it.  -1 where the build's poller has no such
 * wait (epoll's: a descriptor of its own is watched instead).
 */
int loop_set_source(struct loop *l, loop_fill_cb *fill, loop_fd_cb *ready,
    void *arg);
int loop_source_add(struct loop *l, int fd, uint32_t events);
struct loop_timer *loop_timer_new(struct loop *l, loop_timer_cb *cb,
    void *arg);
/* Arms t to fire once at the monotonic time at_ns (loop_now_ns()), or
 * disarms it when at_ns is 0. */
void loop_timer_set(struct loop_timer *t, uint64_t at_ns);
void loop_timer_free(struct loop_timer *t);
uint64_t loop_now_ns(void);
/* The wall clock in milliseconds since 1970 (message times). */
uint64_t loop_wall_ms(void);

/*
 * The clocks loop_now_ns and loop_wall_ms read, for the whole process:
 * the system's unless a simulator (sim/) sets its own, once, before any
 * other thread starts.  They are the only clocks node/room, node/wire
 * and node/store read, so one hook moves all their time.  NULL: the
 * system's again.
 */
struct loop_clock {
	uint64_t (*now_ns)(void *arg);
	uint64_t (*wall_ms)(void *arg);
	void *arg;
};
void loop_clock_set(const struct loop_clock *c);

/*
 * A loop without a poller, stepped by its owner instead of loop_run: a
 * simulator runs thousands in one thread, where thousands of epoll
 * descriptors would not fit.  It takes timers only (loop_add_fd and
 * loop_set_source fail on it).  loop_next_at is the earliest deadline
 * armed (0: none); loop_fire_due runs one round of the timers due at now,
 * as loop_run does after a wait, and returns how many fired.  A timer
 * armed during the round for now or earlier waits for the next round.
 */
struct loop *loop_new_virtual(void);
uint64_t loop_next_at(const struct loop *l);
int loop_fire_due(struct loop *l, uint64_t now);
/* Runs until loop_stop is called from one of its callbacks; -1 on an
 * error of the poller. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
