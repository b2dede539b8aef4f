/*
 * files.h: a room's shared files (docs/FILES.md): its blob
 * store (node/store/blob.h) in the room's folder, the files its messages
 * name (node/wire/attach.h), the requests about them (NODE_BLOB,
 * NODE_FETCH), their state as JSON, the files fetched at once, and
 * retention.  files.c is its face; files_bulk.c and its siblings
 * (files_fetch.c, files_sched.c, files_serve.c) move the chunks between
 * members (node/wire/xfer.h) on the connections' bulk streams.  Node
 * thread.  In the room's order, below history and above receipt.
 */
#ifndef PAPO_FILES_H
#define PAPO_FILES_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "node/room/core.h"
#include "node/store/blob.h"
#include "node/wire/attach.h"

#define FILES_AUTO_DEFAULT (256 * 1024)          /* PAPO_FILES_AUTO */
#define FILES_AUTO_NONE (UINT64_MAX - 1)         /* "0": none at once */
#define FILES_QUOTA_DEFAULT (4ULL << 30)         /* PAPO_FILES_QUOTA */
#define FILES_DIR BLOB_DIR                       /* in the room's folder */

/* Made and freed with the room; -1 when the store cannot be opened. */
int files_new(struct room *room);
void files_free(struct room *room);

/*
 * The body of a message naming the files req->files lists (msg.h), with
 * req->text before them, into *body (malloc'd) and its length; 0, or -1
 * with req answered (400 a malformed list, 404 a file this room neither
 * holds nor has seen named, 413 too many or the body too long).
 */
int files_body(struct room *room, struct node_msg *req, char **body,
    size_t *len);

/* A send without files (req->files NULL) whose text ends with lines
 * that name files (a forged trailer: every receiver would take them for
 * files): -1 with req answered 400; else 0. */
int files_text_check(struct room *room, struct node_msg *req);

/* A message stored (ours or another's): the files it names are known
 * from now on, and those small enough are fetched at once. */
void files_on_msg(struct room *room, const struct frame_msg *m);

/* The message JSON's "text" and "files" (history.c's deliver_msg_json). */
void files_msg_json(struct room *room, const struct frame_msg *m, cJSON *o);

/* NODE_BLOB and NODE_FETCH. */
void files_request(struct room *room, struct node_msg *req);

/* Retention dropped messages: the files no message names any more go. */
void files_retain(struct room *room);

/* Status: "files", what is being fetched. */
void files_status(const struct room *room, cJSON *o);

/* Connections (room.c): a member greeted (hello hook), a bulk frame,
 * room on a bulk queue, a connection gone. */
void files_on_hello(struct room *room, const struct hello_in *in);
void files_bulk(struct room *room, struct link *l, const uint8_t *p, size_t n);
void files_bulk_room(struct room *room, struct link *l);
void files_link_closed(struct room *room, struct link *l);

#endif
