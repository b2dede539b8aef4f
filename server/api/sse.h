/*
 * sse.h: the daemon's event stream, GET /api/events: every message,
 * receipt and presence change the node reports, as server-sent events
 * with ids a client resumes from with Last-Event-ID; with ?html=1 (the
 * dashboard) messages carry their Markdown as HTML (markdown.h).  Main
 * thread only.
 */
#ifndef PAPO_SSE_H
#define PAPO_SSE_H

#include <stddef.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"

#define SSE_KEEP 4096               /* recent events kept for resuming */
#define SSE_KEEP_BYTES (4 * 1024 * 1024) /* ... and at most their bytes */
#define SSE_CHUNK (32 * 1024)       /* queued at once for one client */
#define SSE_HEARTBEAT_NS (25ull * NS_PER_S)
#define SSE_RETRY_MS 2000           /* the client's wait before reconnecting */

struct sse;

struct sse *sse_new(struct loop *l);
/* Tells every client to come back (retry:) and ends their streams; call
 * it before http_free.  NULL is a no-op. */
void sse_free(struct sse *s);
/* Streams one event of the node (NODE_EV_*) to every client. */
/* room: the id of the event's room, or NULL for an event of every room
 * (the list of rooms).  A stream follows the room it was opened for
 * (/api/rooms/ROOM/events, ?room=ROOM; "*" every room), else the
 * default room. */
void sse_publish(struct sse *s, enum node_kind kind, const char *room,
    const char *json);
/* The node's list of rooms (NODE_ROOMS's JSON, parsed): which room a
 * name names, and which is the default. */
struct cJSON;
void sse_rooms(struct sse *s, const struct cJSON *rooms);
/* The routes, for an http_mount whose arg is the struct sse. */
const struct http_route *sse_routes(size_t *n);

#endif
