/*
 * search.h: search through the JSON API (README, "/api/search"): GET
 * /api/search and GET /api/history?thread=ID, both NODE_SEARCH requests.
 * Handlers on the main thread taking the node (struct node *); api.c
 * puts them in its table.
 */
#ifndef PAPO_API_SEARCH_H
#define PAPO_API_SEARCH_H

#include "node/node.h"
#include "server/http/http.h"

#define SEARCH_LIMIT_MAX 200      /* IX_LIMIT_MAX: hits one page holds */
#define SEARCH_QUERY_MAX 1024     /* IX_QUERY_MAX: bytes of q */

/* GET /api/search?q=&from=&to=&thread=&before=&after=&files=1&limit=
 * &cursor= (and room=, as every route takes). */
void api_search(struct http_req *r, void *node);

/* GET /api/history?thread=ID[&limit=&cursor=]: that message and every
 * reply whose reply_to chain leads to it, oldest first.  api_history
 * hands a request with thread over to it. */
void api_thread(struct http_req *r, void *node);

#endif
