/*
 * retain.h: retention (retain.c): the log compacted to what PAPO_KEEP
 * keeps, and what is kept as JSON.  Its state (when to check again) is
 * its own.  Above core.h; on the node thread.
 */
#ifndef PAPO_RETAIN_H
#define PAPO_RETAIN_H

#include <cjson/cJSON.h>

#include "node/room/core.h"

/* Its state: 0, or -1 out of memory. */
int retain_new(struct room *room);
/* Frees it; none made: a no-op. */
void retain_free(struct room *room);
/* A message was stored: the log is compacted when retention is due.
 * Returns how many messages the compaction dropped (0 none or none
 * due). */
long deliver_retain(struct room *room);
/* History's and status's "retention": "keep", "starts", "dropped";
 * NULL when nothing is set and nothing was ever dropped. */
cJSON *deliver_retention_json(const struct room *room);

#endif
