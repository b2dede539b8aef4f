/*
 * client_int.h: what client.c (serve.json, plain HTTP by lib/httpc) and
 * client_tls.c (HTTPS by libcurl, papo-full only) share.  Included only
 * by them and by the front's stand-in for client_tls.c (front.c).
 */
#ifndef PAPO_CLIENT_INT_H
#define PAPO_CLIENT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "server/cli/client.h"

#define CLIENT_TIMEOUT_S 30          /* a send waits up to 8 s for acks */
#define CLIENT_CONNECT_S 5           /* to connect to the daemon */
#define CLIENT_IDLE_S 60             /* a file's transfer with no byte */
#define CLIENT_STREAM_ERR_MAX 4096   /* bytes of a stream's error kept */

/* An answer's body as it comes, at most CLIENT_ANSWER_MAX bytes (over
 * set past it), NUL-terminated. */
struct client_buf {
	char *p;
	size_t len;
	int over;
};
int client_buf_add(struct client_buf *b, const char *data, size_t n);

/*
 * The daemon's error answer (*out, its JSON) said in the CLI's terms
 * (client.c); *out is replaced then.
 */
void client_explain(const struct client *c, long status, char **out);

/* A call's answer once it came (status, body b): 0 with its body
 * (never NULL, "" for none) in *out, which the caller frees, explained
 * when an error; b is left empty.  -1 with err when out of memory. */
int client_answer(char err[PAPO_ERR_LEN], const struct client *c,
    struct client_buf *b, long status, char **out);
/* A stream answered with status, not 200, and body b: its error, or
 * the status, in err. */
void client_stream_error(char err[PAPO_ERR_LEN], const struct client *c,
    long status, struct client_buf *b);
/* A download answered with status: unless 200 or 206, its body b,
 * explained, into *out (b left empty). */
void client_dl_error(const struct client *c, long status,
    struct client_buf *b, char **out);

/* client.h's calls for a daemon at an https:// URL. */
int client_tls_call(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *body, long *status, char **out);
int client_tls_upload(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, FILE *f, long long size, long *status, char **out);
int client_tls_download(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, unsigned long long off, FILE *f,
    client_progress_cb *progress, void *arg, long *status, char **out);
int client_tls_stream(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *last, client_chunk_cb *cb, void *arg);

#endif
