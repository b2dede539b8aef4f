/*
 * http_poll_select.c: libmicrohttpd in external select mode
 * (http_poll.h), the portable build's.  After each MHD_run its fd_sets
 * are copied here; before each wait the loop is handed the descriptors
 * in them (a loop source), and when any is ready MHD runs again, which
 * looks at them all itself.  So the sets cost a scan of FD_SETSIZE bits
 * per wait, and MHD can hold only descriptors below FD_SETSIZE: the
 * connection limit below keeps a margin for the daemon's others.  Main
 * thread.
 */
#include <stdlib.h>
#include <sys/select.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "server/http/http_poll.h"

const unsigned http_poll_mhd_flags = 0;
const unsigned http_poll_conn_max = FD_SETSIZE * 3 / 4;
const char http_poll_mode[] = "select";

struct http_poll {
	struct loop *loop;
	struct MHD_Daemon *mhd;
	loop_fd_cb *run;
	void *arg;
	fd_set rs, ws, es;          /* as MHD_get_fdset2 left them */
	MHD_socket max;             /* their highest descriptor, or -1 */
	int told;                   /* a failure to get them was logged */
};

static void
http_poll_fill(void *arg, struct loop *l)
{
	struct http_poll *p = arg;

	for (MHD_socket fd = 0; fd <= p->max; fd++) {
		uint32_t ev = (FD_ISSET(fd, &p->rs) ? LOOP_IN : 0u) |
		    (FD_ISSET(fd, &p->ws) ? LOOP_OUT : 0u);

		if (ev != 0)
			loop_source_add(l, fd, ev);
	}
}

static void
http_poll_ready(void *arg, uint32_t events)
{
	struct http_poll *p = arg;

	p->run(p->arg, events);
}

struct http_poll *
http_poll_new(struct loop *l, struct MHD_Daemon *d, loop_fd_cb *run,
    void *arg)
{
	struct http_poll *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->loop = l;
	p->mhd = d;
	p->run = run;
	p->arg = arg;
	p->max = -1;
	if (loop_set_source(l, http_poll_fill, http_poll_ready, p) == -1) {
		free(p);
		return NULL;
	}
	return p;
}

void
http_poll_free(struct http_poll *p)
{
	if (p == NULL)
		return;
	loop_set_source(p->loop, NULL, NULL, NULL);
	free(p);
}

void
http_poll_ran(struct http_poll *p)
{
	FD_ZERO(&p->rs);
	FD_ZERO(&p->ws);
	FD_ZERO(&p->es);
	p->max = -1;
	if (MHD_get_fdset2(p->mhd, &p->rs, &p->ws, &p->es, &p->max,
	    FD_SETSIZE) == MHD_YES) {
		p->told = 0;
		return;
	}
	/* A descriptor past FD_SETSIZE: MHD refuses such connections, so
	 * this is the listening socket's or its own; said once. */
	if (!p->told)
		log_msg(LOG_WARN, "http: libmicrohttpd's descriptors do not "
		    "fit an fd_set (FD_SETSIZE %d)", FD_SETSIZE);
	p->told = 1;
}
