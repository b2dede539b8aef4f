/*
 * client.h: how the CLI commands reach the running daemon: serve.json in
 * $PAPO_HOME gives its URL and pid, and one request at a time goes to it
 * (lib/httpc over http://; libcurl over https://, in papo-full only).
 * For the main thread of a short-lived command.
 */
#ifndef PAPO_CLIENT_H
#define PAPO_CLIENT_H

#include <stdio.h>

#include "node/node.h"

#define CLIENT_ANSWER_MAX (64 * 1024 * 1024)  /* bytes of an answer */

struct client {
	long pid;
	char *url;             /* "http://HOST:PORT" */
	char *pin;             /* over HTTPS, "sha256//BASE64": its public
	                        * key, pinned; else NULL */
	const char *token;     /* PAPO_TOKEN, or NULL */
};

/*
 * Reads home's serve.json into c.  -1 with err when no daemon runs there
 * (no file, or its pid is gone) or the file is damaged.
 */
int client_open(char err[PAPO_ERR_LEN], const char *home, struct client *c);
void client_close(struct client *c);

/*
 * Sets on curl what every request to the daemon needs: no proxy, and
 * over HTTPS trust in exactly the key serve.json pins (the certificate
 * may be self-signed, or name a public host rather than the local
 * address the URL has, so it is the key that is checked, not a chain
 * or a name).  curl is a CURL *.
 */
void client_setup(const struct client *c, void *curl);

/*
 * Sends GET path (body NULL) or POST path with body as JSON.  When the
 * daemon answered: 0, its status in *status and its body in *out
 * (malloc'd, NUL-terminated).  -1 with err when it could not be reached.
 */
int client_call(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *body, long *status, char **out);

/*
 * Uploads: POST path with the bytes of f as the body (application/
 * octet-stream), read by libcurl as it sends, never whole in memory;
 * size is f's length, or -1 when unknown (a pipe: sent chunked).  As
 * client_call otherwise.
 */
int client_upload(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, FILE *f, long long size, long *status, char **out);

/*
 * Downloads: GET path with "Range: bytes=off-" when off is not 0, the
 * body of a 200 or 206 answer written to f as it comes (at its current
 * place), progress(arg, bytes) called as it goes.  0 when the daemon
 * answered: its status in *status, and for any other status its body
 * in *out (an error's JSON; else *out is NULL).  -1 with err when it
 * could not be reached, f could not be written, or the answer was cut.
 */
typedef void client_progress_cb(void *arg, unsigned long long bytes);
int client_download(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, unsigned long long off, FILE *f,
    client_progress_cb *progress, void *arg, long *status, char **out);

/*
 * Follows the server-sent events at path: GET with Last-Event-ID when
 * last is not NULL, no time limit, each chunk of the body handed to
 * cb(data, n, arg) as it comes (cb returns -1 to stop).  Returns 0 when
 * the daemon ended the stream, -1 with err when it could not be reached
 * or answered with an error.
 */
typedef int client_chunk_cb(const char *data, size_t n, void *arg);
int client_stream(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *last, client_chunk_cb *cb, void *arg);

#endif
