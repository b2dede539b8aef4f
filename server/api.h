/*
 * api.h: the JSON API for curl and scripts: GET /healthz, GET
 * /api/status, GET /api/history, POST /api/send.  Its handlers run on
 * the main thread and take the node (struct node *) as their argument.
 */
#ifndef PAPO_API_H
#define PAPO_API_H

#include <stddef.h>

#include "server/http.h"

#define API_HISTORY_DEFAULT 20
#define API_HISTORY_MAX 500

/* The routes, for an http_mount whose arg is the node. */
const struct http_route *api_routes(size_t *n);

#endif
