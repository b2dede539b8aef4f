/*
 * http_poll_epoll.c: libmicrohttpd in external-epoll mode (http_poll.h):
 * MHD keeps its own epoll descriptor, which sits in the daemon's loop
 * and is readable when any of MHD's sockets is ready.  The default build;
 * main thread.
 */
#include <stdlib.h>

#include <microhttpd.h>

#include "lib/loop.h"
#include "server/http/http_poll.h"

const unsigned http_poll_mhd_flags = MHD_USE_EPOLL;
const unsigned http_poll_conn_max = 4096;
const char http_poll_mode[] = "epoll";

struct http_poll {
	struct loop *loop;
	int fd;                     /* MHD's epoll descriptor */
};

struct http_poll *
http_poll_new(struct loop *l, struct MHD_Daemon *d, loop_fd_cb *run,
    void *arg)
{
	const union MHD_DaemonInfo *info;
	struct http_poll *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->loop = l;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || loop_add_fd(l, info->epoll_fd, LOOP_IN, run,
	    arg) == -1) {
		free(p);
		return NULL;
	}
	p->fd = info->epoll_fd;
	return p;
}

void
http_poll_free(struct http_poll *p)
{
	if (p == NULL)
		return;
	loop_del_fd(p->loop, p->fd);
	free(p);
}

/* MHD's epoll set follows its sockets by itself. */
void
http_poll_ran(struct http_poll *p)
{
	(void)p;
}
