/*
 * search.h: search requests (NODE_SEARCH) answered from the room's
 * search index (node/store/index.h): members named resolved to ids, each
 * hit given as history gives a message plus its excerpt, pages by a
 * cursor.  Above history.h; on the node thread.
 */
#ifndef PAPO_SEARCH_H
#define PAPO_SEARCH_H

#include "node/room/history.h"

/* Takes req (a search request) and answers it. */
void room_search(struct room *g, struct node_msg *req);

#endif
