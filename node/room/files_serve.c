/*
 * files_serve.c: serving (files_int.h; docs/FILES.md, "Fetching"):
 * chunks asked of us are queued (SERVE_QUEUE_MAX a member) and sent as
 * each connection's bulk queue has room, from the blobs this room's
 * store holds, complete or being fetched; in papo-testing,
 * PAPO_TEST_BAD_CHUNKS spoils each one.  Node thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/keyring.h"
#include "node/room/member.h"

int
fetch_serve_has(struct room *room, const char *ref, uint32_t i)
{
	struct fetch *f = fetch_find(room, ref);

	if (blob_has(room->files->bs, ref))
		return 1;
	return f != NULL && f->leaves && i < f->n && fetch_bit(f->got, i);
}

void
fetch_serve_queue(struct room *room, const uint8_t to[PAPO_KEY_LEN],
    const uint8_t root[PAPO_KEY_LEN], uint32_t i)
{
	struct files *fs = room->files;
	struct serve *s;
	size_t mine = 0;

	for (s = fs->serve_head; s != NULL; s = s->next)
		mine += memcmp(s->to, to, PAPO_KEY_LEN) == 0;
	if (mine >= SERVE_QUEUE_MAX || (s = calloc(1, sizeof(*s))) == NULL)
		return;    /* it asks again when its request times out */
	memcpy(s->to, to, PAPO_KEY_LEN);
	memcpy(s->root, root, PAPO_KEY_LEN);
	s->i = i;
	if (fs->serve_tail != NULL)
		fs->serve_tail->next = s;
	else
		fs->serve_head = s;
	fs->serve_tail = s;
	fs->nserve++;
}

/* Drops what is queued for to (of root, or of every file: root NULL). */
void
fetch_serve_drop(struct room *room, const uint8_t to[PAPO_KEY_LEN],
    const uint8_t *root)
{
	struct files *fs = room->files;
	struct serve **pp = &fs->serve_head, *s;

	fs->serve_tail = NULL;
	while ((s = *pp) != NULL) {
		if (memcmp(s->to, to, PAPO_KEY_LEN) == 0 && (root == NULL ||
		    memcmp(s->root, root, PAPO_KEY_LEN) == 0)) {
			*pp = s->next;
			free(s);
			fs->nserve--;
			continue;
		}
		fs->serve_tail = s;
		pp = &s->next;
	}
}

/* Stored chunk i of ref: of a file here, or written by a fetch under
 * way (committed or not). */
static int
chunk_of(struct room *room, const char *ref, uint32_t i, uint8_t *out,
    size_t *len)
{
	struct fetch *f = fetch_find(room, ref);
	char err[PAPO_ERR_LEN];

	if (f != NULL && f->leaves && i < f->n && fetch_bit(f->got, i))
		return blob_part_chunk(err, room->files->bs, ref, f->a.size, i,
		    out, len);
	return blob_chunk(err, room->files->bs, ref, i, out, len);
}

/* Sends the chunks queued whose connection's bulk queue has room. */
void
fetch_pump_serve(struct room *room)
{
	struct files *fs = room->files;
	struct serve **pp = &fs->serve_head, *s;
	char ref[BLOB_REF_LEN + 1];

	fs->serve_tail = NULL;
	while ((s = *pp) != NULL) {
		struct quic_conn *qc =
		    fetch_bulk_conn(member_find(room, s->to));
		struct xfer x = { .type = XFER_CHUNK };
		size_t len;
		int sent = 0;

		if (qc != NULL && quic_bulk_queued(qc) + XFER_CHUNK_MAX + 64 >
		    QUIC_BULKQ_MAX) {
			fs->serve_tail = s;
			pp = &s->next;
			continue;          /* later: bulk_room */
		}
		fetch_root_ref(s->root, ref);
		if (qc != NULL && chunk_of(room, ref, s->i, fs->chunk, &len) ==
		    0) {
			memcpy(x.root, s->root, PAPO_KEY_LEN);
			x.first = s->i;
			if (room->env.set->bad_chunks)
				fs->chunk[len / 2] ^= 0x5a;     /* tests */
			x.data = fs->chunk;
			x.len = len;
			sent = fetch_send(room, s->to, &x) == 0;
			fs->served += sent ? len : 0;
		}
		if (qc != NULL && !sent) {
			struct xfer none = { .type = XFER_NONE, .first = s->i,
			    .count = 1 };

			memcpy(none.root, s->root, PAPO_KEY_LEN);
			fetch_send(room, s->to, &none);
		}
		*pp = s->next;
		free(s);
		fs->nserve--;
	}
}
