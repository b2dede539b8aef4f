/*
 * blobs.h: shared files through the JSON API (docs/FILES.md): POST
 * /api/blobs (an upload of any size, spooled to disk as it arrives),
 * GET /api/blobs/REF (the bytes, with Range), GET /api/blobs/REF/state
 * and POST /api/blobs/REF/fetch.  Its handlers run on the main thread
 * and take the node (struct node *) as their argument; api.c puts them
 * in its table.
 */
#ifndef PAPO_BLOBS_H
#define PAPO_BLOBS_H

#include <stdint.h>

#include "node/node.h"
#include "server/http/http.h"

/* The largest file (BLOB_SIZE_MAX of node/store/blob.h, which server/
 * does not include): an upload stops there. */
#define BLOBS_SIZE_MAX (4ULL << 30)
#define BLOBS_REF_LEN 52          /* a reference: base32 of 32 bytes */

/*
 * Reads a Range header (RFC 9110, 14.2) against a body of size bytes:
 * 0 with the one range it asks in *off and *len; 1 when it cannot be
 * satisfied (416); -1 when it is to be ignored (malformed, another unit,
 * several ranges), which serves the whole body.  Pure.
 */
int blobs_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len);

/* Whether s is a reference's spelling: 52 characters of a-z and 2-7. */
int blobs_ref_ok(const char *s);

void blobs_upload(struct http_req *r, void *node);
void blobs_get(struct http_req *r, void *node);
void blobs_state(struct http_req *r, void *node);
void blobs_fetch(struct http_req *r, void *node);

#endif
