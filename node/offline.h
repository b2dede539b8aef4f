/*
 * offline.h: a room's history read from the disk while no node runs
 * (offline.c): papo history, and its search, with the daemon stopped.
 * The caller holds serve.lock, so that no daemon starts meanwhile.
 * Each answer is the JSON text (malloc'd) /api/history or /api/search
 * would give, with the names the messages bear, and without the room's
 * key changes; NULL with err (no such room, several and none the
 * default, the log or the index unreadable).
 */
#ifndef PAPO_NODE_OFFLINE_H
#define PAPO_NODE_OFFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* The last n messages of the room home holds that room names (a name,
 * an id or its start; NULL: the default room, else the only one). */
char *node_history_offline(char err[PAPO_ERR_LEN], const char *home,
    const char *room, size_t n);

/* A search of one room, as /api/search?order=time answers it: the
 * newest n messages that match, oldest first, each with its excerpt and
 * marks; "earlier" when older ones match. */
struct node_offline_query {
	const char *room;        /* as node_history_offline's */
	size_t n;
	const char *text;        /* words, or NULL */
	const char *from;        /* the name the messages bear, or NULL */
	const char *thread;      /* a message and its replies, or NULL */
	uint64_t after, before;  /* ms since 1970, or 0 */
	const char *before_id;   /* the message to page back from, or NULL */
	int files;               /* only messages that name files */
};
char *node_search_offline(char err[PAPO_ERR_LEN], const char *home,
    const struct node_offline_query *q);

#endif
