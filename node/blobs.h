/*
 * blobs.h: the node's shared files outside its loop (node/blobs.c): the
 * worker thread that adds files (NODE_BLOB_ADD), and the readers behind
 * node_blob_open (node.h).
 */
#ifndef PAPO_BLOBS_H
#define PAPO_BLOBS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/chan.h"
#include "lib/err.h"
#include "node/msg.h"

struct blobwork;

/* A worker whose answers go to out (the node's channel of answers); its
 * thread starts with the first file.  NULL when out of memory. */
struct blobwork *blobwork_new(struct chan *out);
/* Stops the thread after the file it is adding; what is queued is
 * dropped unanswered (the program is stopping). */
void blobwork_free(struct blobwork *w);
/* Queues m (NODE_BLOB_ADD) for the room whose folder is room_dir, with
 * its quota (0: the default); m is the worker's, answered on out.  -1
 * (m still the caller's) when out of memory or no thread. */
int blobwork_add(struct blobwork *w, struct node_msg *m, const char *room_dir,
    uint64_t quota);

/* node_blob_open and the rest (node.h) for the rooms of home. */
struct node_blob;
struct node_blob *blobs_open(char err[PAPO_ERR_LEN], int *code,
    const char *home, const char *room, const char *ref);
uint64_t blobs_size(const struct node_blob *b);
const char *blobs_name(const struct node_blob *b);
const char *blobs_type(const struct node_blob *b);
int blobs_read(char err[PAPO_ERR_LEN], struct node_blob *b, uint64_t off,
    void *out, size_t len);
void blobs_close(struct node_blob *b);

#endif
