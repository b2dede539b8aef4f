/*
 * cmd_disk.h: papo history and its search with the daemon stopped: the
 * room's log and index read from the disk (node/offline.c), serve.lock
 * held so that no daemon starts meanwhile.  papo-full's (cmd_disk.c,
 * SQLite's); the front hands papo history to papo-full before it
 * starts when no daemon runs (cli.c), and links cmd_nodisk.c instead.
 */
#ifndef PAPO_CMD_DISK_H
#define PAPO_CMD_DISK_H

#include <stddef.h>

#include "node/node.h"

struct cJSON;

/*
 * The last n messages of room (NULL: the default) in home, or those q
 * asks for, as /api/history or /api/search would answer: CLI_OK with
 * the JSON in *text and parsed in *ans (the caller frees both), or the
 * error said on stderr and its exit status.
 */
int cli_history_disk(const char *home, const char *room, size_t n,
    char **text, struct cJSON **ans);
int cli_search_disk(const char *home, const struct node_offline_query *q,
    char **text, struct cJSON **ans);

#endif
