/*
 * client_notls.c: the front program's stand-in for client_tls.c.  The
 * front speaks no TLS: a daemon at an https:// URL has its commands
 * handed to papo-full before they start (cli.c, full.c), so these run
 * only when serve.json changed to https:// in between, and say so.
 */
#include <stdio.h>

#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/client_int.h"

static int
client_notls(char err[PAPO_ERR_LEN], const struct client *c)
{
	snprintf(err, PAPO_ERR_LEN, "papo serve at %s serves HTTPS, which "
	    "this papo reaches only when started again", c->url);
	return -1;
}

int
client_tls_call(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *body, long *status, char **out)
{
	(void)path, (void)body, (void)status, (void)out;
	return client_notls(err, c);
}

int
client_tls_upload(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, FILE *f, long long size, long *status, char **out)
{
	(void)path, (void)f, (void)size, (void)status, (void)out;
	return client_notls(err, c);
}

int
client_tls_download(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, unsigned long long off, FILE *f,
    client_progress_cb *progress, void *arg, long *status, char **out)
{
	(void)path, (void)off, (void)f, (void)progress, (void)arg;
	(void)status, (void)out;
	return client_notls(err, c);
}

int
client_tls_stream(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *last, client_chunk_cb *cb, void *arg)
{
	(void)path, (void)last, (void)cb, (void)arg;
	return client_notls(err, c);
}
