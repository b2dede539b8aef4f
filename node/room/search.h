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
void room_search(struct room *room, struct node_msg *req);
/* Takes req, a search of every room of rooms (nrooms >= 1, of one
 * node), and answers it with their hits merged. */
void room_search_all(struct room **rooms, size_t nrooms,
    struct node_msg *req);

/* The room's part: made with the room, and watching its index's
 * rebuild while one runs beside the room (search_watch: after the
 * store is opened or compacted). */
int search_new(struct room *room);
void search_watch(struct room *room);
void search_free(struct room *room);

#endif
