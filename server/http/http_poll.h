/*
 * http_poll.h: how libmicrohttpd's descriptors reach the daemon's loop,
 * one of two files chosen by CMake: http_poll_epoll.c (MHD's epoll
 * descriptor watched, the default build) or http_poll_select.c (MHD's
 * fd_sets handed to the loop before each wait, PAPO_PORTABLE: MHD 0.9
 * has no kqueue, and outside Linux its external modes are epoll's or
 * select's).  Main thread; knows nothing of requests.
 */
#ifndef PAPO_HTTP_POLL_H
#define PAPO_HTTP_POLL_H

#include <microhttpd.h>

#include "lib/loop.h"

struct http_poll;

/* The MHD_USE_ flag of the mode, for MHD_start_daemon. */
extern const unsigned http_poll_mhd_flags;
/*
 * Connections held at once, event streams too: 4,096 with epoll; with
 * select, 768, below FD_SETSIZE (1,024) with room for the daemon's other
 * descriptors, since MHD refuses a connection whose descriptor does not
 * fit an fd_set.
 */
extern const unsigned http_poll_conn_max;
/* What papo doctor says of it: "epoll", "select". */
extern const char http_poll_mode[];

/* Watches d's descriptors in l; run(arg, events) is called when any is
 * ready, and should call MHD_run, then http_poll_ran.  NULL on failure. */
struct http_poll *http_poll_new(struct loop *l, struct MHD_Daemon *d,
    loop_fd_cb *run, void *arg);
/* Stops watching; NULL is a no-op.  Before MHD_stop_daemon. */
void http_poll_free(struct http_poll *p);
/* After each MHD_run: what MHD waits for now. */
void http_poll_ran(struct http_poll *p);

#endif
