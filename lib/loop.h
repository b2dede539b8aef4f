/*
 * loop.h: the event loop: epoll over file descriptors, plus timers, on
 * one thread.  Both the node thread and the daemon's HTTP thread run one.
 * Idle means asleep: with no ready descriptor and no due timer, loop_run
 * sleeps in epoll_wait.  A loop and its timers belong to the thread that
 * runs it.
 */
#ifndef PAPO_LOOP_H
#define PAPO_LOOP_H

#include <stdint.h>

#include "lib/units.h"

struct loop;
struct loop_timer;
typedef void loop_fd_cb(void *arg, uint32_t events);
typedef void loop_timer_cb(void *arg);

struct loop *loop_new(void);
/* Frees the loop and any timer still attached; NULL is a no-op. */
void loop_free(struct loop *l);
/* Watches fd for events (EPOLLIN, EPOLLOUT...); one callback per fd. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb,
    void *arg);
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
void loop_del_fd(struct loop *l, int fd);
struct loop_timer *loop_timer_new(struct loop *l, loop_timer_cb *cb,
    void *arg);
/* Arms t to fire once at the monotonic time at_ns (loop_now_ns()), or
 * disarms it when at_ns is 0. */
void loop_timer_set(struct loop_timer *t, uint64_t at_ns);
void loop_timer_free(struct loop_timer *t);
uint64_t loop_now_ns(void);
/* The wall clock in milliseconds since 1970 (message times). */
uint64_t loop_wall_ms(void);
/* Runs until loop_stop is called from one of its callbacks; -1 on an
 * epoll error. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
