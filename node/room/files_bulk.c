/*
 * files_bulk.c: files' chunks between members (files.h; docs/FILES.md,
 * "Fetching"), on the bulk streams of version 4 connections
 * (node/wire/xfer.h): what comes on them, and what drives the fetches.
 * Node thread.
 *
 * The members online are asked about the file (WANT, with the leaf
 * list from the author first); each answers what it holds (HAVE, NONE).
 * Once the leaves are here (checked against the reference by the
 * store), chunks are asked of the holders (files_sched.c).  Each chunk
 * is checked against its leaf before it is written (blob_fetch_chunk);
 * one that does not verify marks its sender bad for this file.  Written
 * chunks are served on at once and committed in batches (files_fetch.c).
 * A chunk asked and not come within FETCH_TIMEOUT_NS is asked again
 * elsewhere (the tick).  A fetch that waits for a holder goes on when a
 * member that holds it greets.  What members ask of us is served by
 * files_serve.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/keyring.h"
#include "node/room/member.h"

/* A failed fetch tried anew: everyone online asked again. */
static void
fetch_retry(struct room *room, struct fetch *f)
{
	f->state = FETCH_FETCHING;
	f->err[0] = '\0';
	f->retry = 0;
	f->started = loop_now_ns();
	fetch_reload(room, f);
	fetch_ask_all(room, f, f->has_author ? f->author : NULL);
	fetch_schedule(room, f);
	if (f->state == FETCH_FETCHING)
		fetch_event(room, f);
}

int
fetch_start(struct room *room, const struct attach *a, const uint8_t *author,
    int by_msg, char err[PAPO_ERR_LEN])
{
	struct fetch *f = fetch_find(room, a->ref);
	uint8_t *leaves = NULL;
	uint32_t nl;

	if (blob_has(room->files->bs, a->ref))
		return 0;
	if (f != NULL) {
		/* Asked again: a failed fetch is tried anew, a waiting one
		 * asks everyone online once more.  Someone asked for it: it
		 * is no longer a message's to drop. */
		if (!by_msg)
			f->by_msg = 0;
		if (f->state == FETCH_FAILED) {
			fetch_retry(room, f);
			return 0;
		}
		fetch_ask_all(room, f, f->has_author ? f->author : NULL);
		fetch_schedule(room, f);
		return 0;
	}
	if (a->size > BLOB_SIZE_MAX) {
		err_set(err, "file %s is %llu bytes, over the largest a room "
		    "takes (%llu)", a->ref, (unsigned long long)a->size,
		    (unsigned long long)BLOB_SIZE_MAX);
		return -1;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		err_set(err, "out of memory");
		return -1;
	}
	f->a = *a;
	f->n = blob_chunks(a->size);
	f->state = FETCH_FETCHING;
	f->started = f->born = loop_now_ns();
	f->by_msg = by_msg;
	if (author != NULL) {
		memcpy(f->author, author, PAPO_KEY_LEN);
		f->has_author = 1;
	}
	f->scan = f->n ? randombytes_uniform(f->n) : 0;
	if (fetch_ref_root(a->ref, f->root) == -1 ||
	    (f->got = calloc(1, fetch_bits_len(f->n))) == NULL ||
	    (f->out = calloc(1, fetch_bits_len(f->n))) == NULL) {
		free(f->got);
		free(f);
		err_set(err, "out of memory");
		return -1;
	}
	f->next = room->files->fetches;
	room->files->fetches = f;
	/* A fetch that stopped (the daemon ended, the member left) goes on
	 * from what its files hold. */
	if (blob_leaves(err, room->files->bs, a->ref, &leaves, &nl) == 0) {
		free(leaves);
		if (fetch_resume(room, f) == -1)
			blob_remove(err, room->files->bs, a->ref);
	}
	if (f->n == 0) {
		/* An empty file needs no holder: its leaves are none. */
		int r = blob_fetch_start(err, room->files->bs, a->ref, 0, NULL, 0);

		if (r == 1) {
			fetch_done(room, f);
			return 0;
		}
		fetch_fail(room, f, err, errno);
		return 0;
	}
	loop_timer_set(room->files->tick, loop_now_ns() + FETCH_TICK_NS);
	fetch_ask_all(room, f, author);
	fetch_schedule(room, f);
	fetch_event(room, f);
	return 0;
}

static void
watch_add(struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	void *v;

	for (size_t k = 0; k < f->nwatch; k++)
		if (memcmp(f->watch[k], id, PAPO_KEY_LEN) == 0)
			return;
	if ((v = realloc(f->watch, (f->nwatch + 1) * sizeof(*f->watch))) ==
	    NULL)
		return;
	f->watch = v;
	memcpy(f->watch[f->nwatch++], id, PAPO_KEY_LEN);
}

/* A member's WANT: about the file (count 0 or the leaves asked), and
 * chunks of it. */
static void
on_want(struct room *room, struct member *from, const struct xfer *x)
{
	char ref[BLOB_REF_LEN + 1], err[PAPO_ERR_LEN];
	struct fetch *f = fetch_by_root(room, x->root);
	int whole;

	fetch_root_ref(x->root, ref);
	whole = blob_has(room->files->bs, ref);
	/* A member asking about a file we fetch too fetches it: asked
	 * back when we know nothing of what it holds, so that each hears
	 * of the other's chunks (our question may have come before its
	 * fetch began, and been told nothing); at most once a second. */
	if (f != NULL) {
		struct holder *h = fetch_holder_find(f, from->id);

		if (h == NULL || !h->asked || (h->have == NULL &&
		    loop_now_ns() - h->asked_at > FETCH_REASK_NS))
			fetch_ask(room, f, from->id);
	}
	if (!whole && (f == NULL || !f->leaves)) {
		struct xfer none = { .type = XFER_NONE };

		memcpy(none.root, x->root, PAPO_KEY_LEN);
		if (f != NULL)
			watch_add(f, from->id);
		fetch_send(room, from->id, &none);
		return;
	}
	if ((x->flags & XFER_F_LEAVES) || x->count == 0) {
		uint8_t *leaves = NULL, *all = NULL;
		uint32_t n;

		if (blob_leaves(err, room->files->bs, ref, &leaves, &n) == -1) {
			/* What we thought we held cannot be read (its files
			 * gone from the disk): said, so the asker looks
			 * elsewhere rather than wait on us. */
			struct xfer none = { .type = XFER_NONE };

			memcpy(none.root, x->root, PAPO_KEY_LEN);
			fetch_send(room, from->id, &none);
			return;
		}
		if (x->flags & XFER_F_LEAVES) {
			struct xfer lv = { .type = XFER_LEAVES, .count = n,
			    .data = leaves, .len = (size_t)n * PAPO_KEY_LEN };
			uint64_t size = 0;

			memcpy(lv.root, x->root, PAPO_KEY_LEN);
			if (whole)
				blob_size(err, room->files->bs, ref, &size);
			lv.size = whole ? size : f->a.size;
			fetch_send(room, from->id, &lv);
		}
		free(leaves);
		if (whole) {
			struct xfer hv = { .type = XFER_HAVE, .count = n };
			size_t len = (n + 7) / 8;

			if ((all = malloc(len ? len : 1)) == NULL)
				return;
			memset(all, 0xff, len);
			if (n % 8)
				all[len - 1] = (uint8_t)((1u << (n % 8)) - 1);
			memcpy(hv.root, x->root, PAPO_KEY_LEN);
			hv.data = all;
			hv.len = len;
			fetch_send(room, from->id, &hv);
			free(all);
		} else {
			watch_add(f, from->id);
			fetch_have_send(room, f, from->id, UINT32_MAX);
		}
	}
	for (uint32_t k = 0; k < x->count; k++) {
		uint32_t i = x->first + k;

		if (fetch_serve_has(room, ref, i))
			fetch_serve_queue(room, from->id, x->root, i);
		else {
			struct xfer none = { .type = XFER_NONE, .first = i,
			    .count = 1 };

			memcpy(none.root, x->root, PAPO_KEY_LEN);
			fetch_send(room, from->id, &none);
		}
	}
	fetch_pump_serve(room);
}

static void
on_leaves(struct room *room, struct fetch *f, struct holder *h,
    const struct xfer *x)
{
	char err[PAPO_ERR_LEN];
	int r;

	if (f->leaves || f->state == FETCH_FAILED)
		return;
	if (x->size != f->a.size) {
		log_msg(LOG_WARN, "file %s: a member sent leaves of another "
		    "size: not asked again for it", f->a.ref);
		h->bad = 1;
		return;
	}
	errno = 0;
	r = blob_fetch_start(err, room->files->bs, f->a.ref, f->a.size, x->data,
	    x->count);
	if (r == BLOB_REFUSED) {
		log_msg(LOG_WARN, "file %s: %s; not asking that member again",
		    f->a.ref, err);
		h->bad = 1;
		return;
	}
	if (r == -1) {
		fetch_fail(room, f, err, errno);   /* ours: the quota, the disk */
		return;
	}
	f->leaves = 1;
	f->offered = 1;
	if (r == 1)
		fetch_done(room, f);
}

static void
on_have(struct fetch *f, struct holder *h, const struct xfer *x)
{
	if (h->have == NULL &&
	    (h->have = calloc(1, fetch_bits_len(f->n))) == NULL)
		return;
	for (uint32_t k = 0; k < x->count && x->first + k < f->n; k++)
		if ((x->data[k / 8] >> (k % 8) & 1) &&
		    !fetch_bit(h->have, x->first + k)) {
			fetch_bit_set(h->have, x->first + k, 1);
			h->nhave++;
		}
	f->offered |= h->nhave > 0;
}

static void
on_none(struct fetch *f, struct holder *h, const struct xfer *x)
{
	if (x->count == 0) {
		f->denied = 1;
		free(h->have);
		h->have = NULL;
		h->nhave = 0;
		fetch_asked_release_holder(f, h, 1, 0);
		return;
	}
	for (uint32_t k = 0; k < x->count && x->first + k < f->n; k++) {
		if (h->have != NULL && fetch_bit(h->have, x->first + k)) {
			fetch_bit_set(h->have, x->first + k, 0);
			h->nhave--;
		}
		fetch_asked_release_holder(f, h, 0, x->first + k);
	}
}

/* Returns 1 when f is gone (done). */
static int
on_chunk(struct room *room, struct fetch *f, struct holder *h,
    const struct xfer *x)
{
	char err[PAPO_ERR_LEN];
	uint32_t i = x->first;
	int r;

	if (!f->leaves || i >= f->n || f->state == FETCH_FAILED)
		return 0;
	fetch_asked_release_holder(f, h, 0, i);
	if (fetch_bit(f->got, i))
		return 0;
	errno = 0;
	r = blob_fetch_chunk(err, room->files->bs, f->a.ref, i, x->data, x->len);
	if (r == BLOB_REFUSED) {
		char nb[16];

		log_msg(LOG_WARN, "file %s: %s sent chunk %u, which does not "
		    "match the file: not asked again for it", f->a.ref,
		    member_name(member_find(room, h->id), nb), i);
		h->bad = 1;
		fetch_asked_release_holder(f, h, 1, 0);
		return 0;
	}
	if (r == -1) {
		fetch_fail(room, f, err, errno);
		return 0;
	}
	fetch_bit_set(f->got, i, 1);
	f->ngot++;
	f->pend[f->npend++] = i;
	room->files->fetched += x->len;
	/* Served on from what is written, committed or not. */
	for (size_t k = 0; k < f->nwatch; k++)
		fetch_have_send(room, f, f->watch[k], i);
	if (f->npend == FETCH_COMMIT_CHUNKS || f->ngot == f->n) {
		r = fetch_commit(room, f);
		if (r == 1) {
			fetch_done(room, f);
			return 1;
		}
		if (r == -1)
			return 0;
	}
	if (loop_now_ns() - f->evented >= FETCH_EVENT_NS)
		fetch_event(room, f);
	return 0;
}

void
fetch_bulk(struct room *room, struct link *l, const uint8_t *p, size_t n)
{
	char err[PAPO_ERR_LEN];
	struct fetch *f;
	struct holder *h;
	struct xfer x;

	if (l->m == NULL || keyring_removed(room->keyring, l->m->id) != NULL)
		return;
	if (xfer_decode(err, p, n, &x) == -1) {
		log_msg(LOG_WARN, "%s sent a malformed file frame: %s",
		    l->m->name, err);
		return;
	}
	switch (x.type) {
	case XFER_WANT:
		on_want(room, l->m, &x);
		return;
	case XFER_CANCEL:
		fetch_serve_drop(room, l->m->id, x.root);
		return;
	default:
		break;
	}
	if ((f = fetch_by_root(room, x.root)) == NULL ||
	    (h = fetch_holder_get(f, l->m->id)) == NULL || h->bad)
		return;
	if (x.type != XFER_CHUNK)
		h->answered = 1;
	switch (x.type) {
	case XFER_LEAVES:
		on_leaves(room, f, h, &x);
		break;
	case XFER_HAVE:
		on_have(f, h, &x);
		break;
	case XFER_NONE:
		on_none(f, h, &x);
		break;
	case XFER_CHUNK:
		if (on_chunk(room, f, h, &x))
			return;
		break;
	default:
		return;
	}
	/* Still here (leaves may have completed an empty file). */
	if ((f = fetch_by_root(room, x.root)) != NULL)
		fetch_schedule(room, f);
}

static void
resume_one(void *arg, const char *ref)
{
	struct room *room = arg;
	char err[PAPO_ERR_LEN];
	struct attach a;

	if (blob_meta_load(err, room->files->bs, ref, &a) == 0 &&
	    fetch_start(room, &a, NULL, 0, err) == 0)
		log_msg(LOG_INFO, "file %s (%s): fetching goes on where it "
		    "stopped", a.name, ref);
	sodium_memzero(&a, sizeof(a));
}

void
fetch_tick(void *arg)
{
	struct room *room = arg;
	uint64_t now = loop_now_ns();
	struct fetch *f, *next;

	if (room->files->resume) {
		room->files->resume = 0;
		blob_fetching(room->files->bs, resume_one, room);
	}

	for (f = room->files->fetches; f != NULL; f = next) {
		next = f->next;
		if (f->by_msg && !f->offered && f->denied &&
		    now - f->born > fetch_unoffered_ns()) {
			fetch_drop(room, f);
			continue;
		}
		if (f->state == FETCH_FAILED && f->retry &&
		    now - f->failed_at >= FETCH_RETRY_NS)
			fetch_retry(room, f);
		if (f->state == FETCH_FETCHING && (f->npend > 0 ||
		    f->ngot == f->n) && fetch_commit(room, f) == 1) {
			fetch_done(room, f);
			continue;
		}
		for (size_t k = f->nasked; k-- > 0;)
			if (now - f->asked[k].at > FETCH_TIMEOUT_NS)
				fetch_asked_release(f, k);
		/* No leaves yet: whoever was asked may have answered
		 * nothing (a lost frame, a member busy); ask again. */
		if (!f->leaves && f->state != FETCH_FAILED &&
		    now - f->started > FETCH_TIMEOUT_NS / 2) {
			f->started = now;
			fetch_ask_all(room, f, f->has_author ? f->author : NULL);
		}
		fetch_schedule(room, f);
		if (f->state == FETCH_FETCHING && now - f->evented >=
		    NS_PER_S)
			fetch_event(room, f);
	}
	if (room->files->fetches != NULL)
		loop_timer_set(room->files->tick, now + FETCH_TICK_NS);
}

void
fetch_hello(struct room *room, struct member *m)
{
	if (fetch_bulk_conn(m) == NULL)
		return;
	for (struct fetch *f = room->files->fetches; f != NULL; f = f->next)
		if (f->state != FETCH_FAILED)
			fetch_ask(room, f, m->id);
		else if (f->retry)
			fetch_retry(room, f);
}

void
fetch_link_closed(struct room *room, struct link *l)
{
	struct fetch *f, *next;

	if (l->m == NULL || l->m->conn != NULL)
		return;      /* not greeted, or another connection goes on */
	fetch_serve_drop(room, l->m->id, NULL);
	for (f = room->files->fetches; f != NULL; f = next) {
		struct holder *h = fetch_holder_find(f, l->m->id);

		next = f->next;
		if (h == NULL)
			continue;
		fetch_asked_release_holder(f, h, 1, 0);
		free(h->have);
		h->have = NULL;
		h->nhave = 0;
		h->asked = 0;
		h->answered = 0;
		fetch_schedule(room, f);
	}
}

void
fetch_free_all(struct room *room)
{
	struct serve *s;

	while (room->files->fetches != NULL) {
		struct fetch *f = room->files->fetches;

		if (f->state != FETCH_FAILED && f->npend > 0)
			fetch_commit(room, f);    /* a stop keeps what came */
		fetch_unlink(room, f);
	}
	while ((s = room->files->serve_head) != NULL) {
		room->files->serve_head = s->next;
		free(s);
	}
	room->files->serve_tail = NULL;
	room->files->nserve = 0;
}
