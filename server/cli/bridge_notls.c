/*
 * bridge_notls.c: the front program's stand-in for bridge_tls.c.  The
 * front speaks no TLS: papo mcp for a daemon at an https:// URL is
 * handed to papo-full, before it starts (cli.c) or once the daemon it
 * started is found (bridge_tls_open: 1); a daemon that moved to HTTPS
 * while the bridge runs is reached only when papo mcp starts again.
 * Its wait is poll(2) alone.
 */
#include <errno.h>
#include <string.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/cli/bridge_int.h"

int
bridge_tls_open(char err[PAPO_ERR_LEN], struct bridge *b)
{
	(void)err;
	return strncmp(b->cl.url, "https://", 8) == 0;
}

void
bridge_tls_close(struct bridge *b)
{
	(void)b;
}

int
bridge_tls_start(struct xfer *x, const char *url,
    const char *const *headers, httpc_head_cb *head, httpc_body_cb *body)
{
	(void)url, (void)headers, (void)head, (void)body;
	log_msg(LOG_WARN, "mcp: papo serve at %s serves HTTPS, which this "
	    "papo mcp reaches only when started again", x->b->cl.url);
	return -1;
}

void
bridge_tls_stop(struct xfer *x)
{
	x->tls = NULL;
}

int
bridge_tls_poll(struct bridge *b, struct pollfd *fds, nfds_t n, int timeout)
{
	(void)b;
	return poll(fds, n, timeout) == -1 && errno != EINTR ? -1 : 0;
}

int
bridge_tls_done(struct bridge *b, struct xfer **x, enum xfer_end *end,
    const char **why, long *status)
{
	(void)b, (void)x, (void)end, (void)why, (void)status;
	return 0;
}

void
bridge_tls_delete(struct bridge *b, const char *url,
    const char *const *headers, int ms)
{
	(void)b, (void)url, (void)headers, (void)ms;
}
