/*
 * api.h: the JSON API for curl and scripts: GET /healthz, GET
 * /api/status, GET /api/history, POST /api/send (with the files it
 * names), and shared files' routes (blobs.h).  Its handlers run on
 * the main thread and take the node (struct node *) as their argument.
 */
#ifndef PAPO_API_H
#define PAPO_API_H

#include <stddef.h>

#include "node/node.h"
#include "server/http/http.h"

#define API_HISTORY_DEFAULT 20
#define API_HISTORY_MAX 500
#define API_FILES_MAX 16          /* files a message names (ATTACH_MAX) */

/*
 * Parses the body of POST /api/send (len bytes, NUL-terminated) into a
 * NODE_SEND request in *out ({"text", "to", "reply_to", "files"}; text
 * may be empty or absent when files names some).  0 on success; otherwise the HTTP status
 * (400, 413, 500) with err saying what is wrong.  Pure: the fuzz target
 * calls it on its own.
 */
int api_send_parse(const char *body, size_t len, struct node_msg **out,
    char err[PAPO_ERR_LEN]);

/* The routes, for an http_mount whose arg is the node. */
const struct http_route *api_routes(size_t *n);

#endif
