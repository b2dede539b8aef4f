/*
 * fetch.c: files' chunks between members (files.h; docs/FILES.md,
 * "Fetching"), on the bulk streams of version 4 connections
 * (node/wire/xfer.h).  Node thread.
 *
 * Fetching: the members online are asked about the file (WANT, with the
 * leaf list from the author first); each answers what it holds (HAVE,
 * NONE).  Once the leaves are here (checked against the reference by
 * the store), chunks are asked at most FETCH_WINDOW at a time of each
 * holder, looked for from a random place in the file onwards, each from
 * a holder other than the author when one has it, so that members who
 * fetch the same file at once serve each other.  Each chunk is checked
 * against its leaf before it is written (blob_fetch_chunk); one that
 * does not verify marks its sender bad for this file.  Written chunks
 * are served on at once and committed (made durable and recorded) every
 * FETCH_COMMIT_CHUNKS, at each tick and at a stop, not one by one: two
 * fdatasyncs per chunk held the node thread and cut the throughput.  A chunk asked
 * and not come within FETCH_TIMEOUT_NS is asked again elsewhere.  With
 * nobody online holding what is missing, the fetch waits, and goes on
 * when a member that holds it greets.  A fetch is resumed from the disk
 * (REF.part, REF.have) where it stopped.  A fetch that failed on a full
 * disk is tried again every FETCH_RETRY_NS and when a member greets.
 *
 * Bounds: a message may name files nobody holds.  The fetches
 * messages begin that no member has offered are capped per author and
 * per room (fetch_may_start), and one is dropped FETCH_UNOFFERED_NS
 * after it began once a member has said it holds nothing of it: the
 * file is only named again, fetched when someone asks.
 *
 * Serving: chunks asked of us are queued (SERVE_QUEUE_MAX a member) and
 * sent as each connection's bulk queue has room, from the blobs this
 * room's store holds, complete or being fetched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/b32.h"
#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/keyring.h"
#include "node/room/member.h"

static void schedule(struct room *room, struct fetch *f);

static int
bit(const uint8_t *b, uint32_t i)
{
	return b[i / 8] >> (i % 8) & 1;
}

static void
bit_set(uint8_t *b, uint32_t i, int v)
{
	if (v)
		b[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		b[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static void
root_ref(const uint8_t root[PAPO_KEY_LEN], char ref[BLOB_REF_LEN + 1])
{
	b32_encode(root, PAPO_KEY_LEN, ref);
}

static int
ref_root(const char *ref, uint8_t root[PAPO_KEY_LEN])
{
	size_t bad;

	return strlen(ref) == BLOB_REF_LEN && b32_decode(ref, BLOB_REF_LEN,
	    root, PAPO_KEY_LEN, &bad) == (long)PAPO_KEY_LEN ? 0 : -1;
}

/* m's connection when it speaks version 4 (has a bulk stream), else
 * NULL. */
static struct quic_conn *
bulk_conn(const struct member *m)
{
	if (m == NULL || m->conn == NULL || quic_version(m->conn) < 4)
		return NULL;
	return m->conn;
}

static int
send_x(struct room *room, const uint8_t id[PAPO_KEY_LEN], const struct xfer *x)
{
	struct quic_conn *qc = bulk_conn(member_find(room, id));
	struct buf b;
	int rc = -1;

	if (qc == NULL)
		return -1;
	buf_init(&b, XFER_FRAME_MAX);
	if (xfer_encode(&b, x) == 0)
		rc = quic_send_bulk(qc, b.p, b.len);
	buf_free(&b);
	return rc;
}

struct fetch *
fetch_find(const struct room *room, const char *ref)
{
	for (struct fetch *f = room->files->fetches; f != NULL; f = f->next)
		if (strcmp(f->a.ref, ref) == 0)
			return f;
	return NULL;
}

static struct fetch *
fetch_by_root(const struct room *room, const uint8_t root[PAPO_KEY_LEN])
{
	for (struct fetch *f = room->files->fetches; f != NULL; f = f->next)
		if (memcmp(f->root, root, PAPO_KEY_LEN) == 0)
			return f;
	return NULL;
}

static struct holder *
holder_find(struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t k = 0; k < f->nholders; k++)
		if (memcmp(f->holders[k].id, id, PAPO_KEY_LEN) == 0)
			return &f->holders[k];
	return NULL;
}

/* The holder id, added if new: NULL when out of memory.  Adding moves
 * the array: struct asked points by index instead (see below). */
static struct holder *
holder_get(struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	struct holder *h = holder_find(f, id), *v;

	if (h != NULL)
		return h;
	if ((v = realloc(f->holders, (f->nholders + 1) * sizeof(*v))) == NULL)
		return NULL;
	/* The chunks asked name their holder by pointer: move them. */
	for (size_t k = 0; k < f->nasked; k++)
		if (f->asked[k].h != NULL)
			f->asked[k].h = v + (f->asked[k].h - f->holders);
	f->holders = v;
	h = &v[f->nholders++];
	memset(h, 0, sizeof(*h));
	memcpy(h->id, id, PAPO_KEY_LEN);
	return h;
}

static size_t
bits_len(uint32_t n)
{
	return n / 8 + 1;
}

/* Bytes of the file in the chunks written. */
static uint64_t
fetch_bytes(const struct fetch *f)
{
	uint64_t b;

	if (f->ngot == 0)
		return 0;
	b = (uint64_t)f->ngot * BLOB_CHUNK;
	if (bit(f->got, f->n - 1))
		b -= (uint64_t)f->n * BLOB_CHUNK - f->a.size;
	return b;
}

static size_t
holders_online(struct room *room, const struct fetch *f)
{
	size_t n = 0;

	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *h = &f->holders[k];
		uint32_t i;

		if (h->bad || h->have == NULL ||
		    bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		for (i = 0; i < f->n && !bit(h->have, i); i++)
			;
		n += i < f->n;
	}
	return n;
}

cJSON *
fetch_state_json(struct room *room, const struct attach *a)
{
	cJSON *o = cJSON_CreateObject();
	struct fetch *f = fetch_find(room, a->ref);
	uint32_t n = blob_chunks(a->size);
	const char *state = "named";

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "ref", a->ref);
	cJSON_AddStringToObject(o, "name", a->name);
	cJSON_AddStringToObject(o, "type", a->type);
	cJSON_AddNumberToObject(o, "size", (double)a->size);
	cJSON_AddNumberToObject(o, "chunks", n);
	if (blob_has(room->files->bs, a->ref)) {
		state = "here";
		cJSON_AddNumberToObject(o, "chunks_have", n);
		cJSON_AddNumberToObject(o, "have", (double)a->size);
		cJSON_AddNumberToObject(o, "holders", 0);
	} else {
		char err[PAPO_ERR_LEN];
		uint32_t first, ondisk = 0;

		if (f != NULL)
			state = f->state == FETCH_FETCHING ? "fetching" :
			    f->state == FETCH_WAITING ? "waiting" : "failed";
		else if (blob_missing(err, room->files->bs, a->ref, 0, &first,
		    &ondisk, NULL) >= 0)
			state = "fetching";  /* cut by a stop, resumed at the
			                      * room's first tick */
		cJSON_AddNumberToObject(o, "chunks_have", f ? f->ngot : ondisk);
		cJSON_AddNumberToObject(o, "have", f ? (double)fetch_bytes(f) :
		    (double)((uint64_t)ondisk * BLOB_CHUNK < a->size ?
		    (uint64_t)ondisk * BLOB_CHUNK : a->size));
		cJSON_AddNumberToObject(o, "holders", f ? (double)
		    holders_online(room, f) : 0);
		if (f != NULL && f->state != FETCH_FETCHING)
			cJSON_AddStringToObject(o, "error", f->err);
	}
	cJSON_AddStringToObject(o, "state", state);
	return o;
}

static void
fetch_event(struct room *room, struct fetch *f)
{
	f->evented = loop_now_ns();
	room_emit_json(room, NODE_EV_BLOB, fetch_state_json(room, &f->a));
}

/* Gives back the chunk asked at slot k. */
static void
asked_release(struct fetch *f, size_t k)
{
	struct asked *s = &f->asked[k];

	if (s->h == NULL)
		return;
	s->h->inflight--;
	bit_set(f->out, s->i, 0);
	*s = f->asked[--f->nasked];
}

/* Gives back every chunk asked of h, or only chunk i of it (all 0). */
static void
asked_release_holder(struct fetch *f, struct holder *h, int all, uint32_t i)
{
	for (size_t k = f->nasked; k-- > 0;)
		if (f->asked[k].h == h && (all || f->asked[k].i == i))
			asked_release(f, k);
}

static void
fetch_unlink(struct room *room, struct fetch *f)
{
	struct fetch **pp = &room->files->fetches;

	while (*pp != f)
		pp = &(*pp)->next;
	*pp = f->next;
	for (size_t k = 0; k < f->nholders; k++)
		free(f->holders[k].have);
	free(f->holders);
	free(f->asked);
	free(f->got);
	free(f->out);
	free(f->watch);
	sodium_memzero(&f->a, sizeof(f->a));
	free(f);
}

/* Tells the holders we asked to forget what is queued for us. */
static void
fetch_cancel(struct room *room, struct fetch *f)
{
	struct xfer x = { .type = XFER_CANCEL };

	memcpy(x.root, f->root, PAPO_KEY_LEN);
	for (size_t k = 0; k < f->nholders; k++)
		if (f->holders[k].inflight > 0)
			send_x(room, f->holders[k].id, &x);
}

/* f failed for why; e the errno of our disk's refusal (0: another
 * cause).  A full disk is tried again (FETCH_RETRY_NS, a greeting). */
static void
fetch_fail(struct room *room, struct fetch *f, const char *why, int e)
{
	log_msg(LOG_WARN, "file %s (%s): %s", f->a.name, f->a.ref, why);
	fetch_cancel(room, f);
	while (f->nasked > 0)
		asked_release(f, f->nasked - 1);
	f->state = FETCH_FAILED;
	f->retry = e == ENOSPC || e == EDQUOT;
	f->failed_at = loop_now_ns();
	snprintf(f->err, sizeof(f->err), "%.180s%s", why, f->retry ?
	    "; tried again every 30 s and when a member comes online" : "");
	fetch_event(room, f);
}

/* Sends HAVE of chunk i (or of everything we hold, i = UINT32_MAX) to
 * id. */
static void
have_send(struct room *room, struct fetch *f, const uint8_t id[PAPO_KEY_LEN],
    uint32_t i)
{
	struct xfer x = { .type = XFER_HAVE };
	uint8_t one = 1;

	memcpy(x.root, f->root, PAPO_KEY_LEN);
	if (i == UINT32_MAX) {
		x.first = 0;
		x.count = f->n;
		x.data = f->got;
		x.len = (f->n + 7) / 8;
	} else {
		x.first = i;
		x.count = 1;
		x.data = &one;
		x.len = 1;
	}
	send_x(room, id, &x);
}

/*
 * Makes the chunks written since the last commit durable and recorded:
 * 1 when that completed the file (fetch_done is the caller's), 0, or -1
 * when the disk refused (the fetch has failed).
 */
static int
fetch_commit(struct room *room, struct fetch *f)
{
	char err[PAPO_ERR_LEN];
	int r;

	if (f->npend == 0 && f->ngot < f->n)
		return 0;
	errno = 0;
	r = blob_fetch_commit(err, room->files->bs, f->a.ref, f->pend, f->npend);
	f->npend = 0;
	if (r == -1)
		fetch_fail(room, f, err, errno);
	return r;
}

void
fetch_forget(struct room *room, struct fetch *f)
{
	fetch_cancel(room, f);
	while (f->nasked > 0)
		asked_release(f, f->nasked - 1);
	fetch_unlink(room, f);
}

/* How long a fetch nobody offers waits: FETCH_UNOFFERED_NS; test builds
 * may shorten it (PAPO_TEST_UNOFFERED_MS), so that tests of the drop do
 * not wait a minute. */
static uint64_t
fetch_unoffered_ns(void)
{
#ifdef PAPO_TESTING
	const char *v = getenv("PAPO_TEST_UNOFFERED_MS");

	if (v != NULL && v[0] >= '1' && v[0] <= '9')
		return strtoull(v, NULL, 10) * NS_PER_MS;
#endif
	return FETCH_UNOFFERED_NS;
}

/* A fetch a message began that no member offered: the file is only
 * named again, fetched when someone asks. */
static void
fetch_drop(struct room *room, struct fetch *f)
{
	struct attach a = f->a;

	log_msg(LOG_INFO, "file %s (%s): no member has offered it in %llu s; "
	    "not fetched unless asked", f->a.name, f->a.ref,
	    (unsigned long long)(fetch_unoffered_ns() / NS_PER_S));
	room->files->dropped++;
	fetch_forget(room, f);
	room_emit_json(room, NODE_EV_BLOB, fetch_state_json(room, &a));
	sodium_memzero(&a, sizeof(a));
}

static void
fetch_done(struct room *room, struct fetch *f)
{
	log_msg(LOG_INFO, "file %s (%s, %llu bytes) is here", f->a.name,
	    f->a.ref, (unsigned long long)f->a.size);
	fetch_cancel(room, f);
	while (f->nasked > 0)
		asked_release(f, f->nasked - 1);
	room_emit_json(room, NODE_EV_BLOB, fetch_state_json(room, &f->a));
	fetch_unlink(room, f);
}

/* Asks id about the file: the leaves too while we lack them. */
static void
fetch_ask(struct room *room, struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	struct xfer x = { .type = XFER_WANT };
	struct holder *h;

	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) == 0 ||
	    (h = holder_get(f, id)) == NULL || h->bad)
		return;
	memcpy(x.root, f->root, PAPO_KEY_LEN);
	x.flags = f->leaves ? 0 : XFER_F_LEAVES;
	if (send_x(room, id, &x) == 0) {
		h->asked = 1;
		h->asked_at = loop_now_ns();
	}
}

/* Asks every member online, the author first. */
static void
fetch_ask_all(struct room *room, struct fetch *f, const uint8_t *author)
{
	if (author != NULL && bulk_conn(member_find(room, author)) != NULL)
		fetch_ask(room, f, author);
	for (size_t k = 0; k < members_n(room); k++) {
		struct member *m = member_at(room, k);

		if (bulk_conn(m) != NULL && (author == NULL ||
		    memcmp(m->id, author, PAPO_KEY_LEN) != 0))
			fetch_ask(room, f, m->id);
	}
}

/* What is already on the disk of a fetch that stopped. */
static int
fetch_resume(struct room *room, struct fetch *f)
{
	char err[PAPO_ERR_LEN];
	uint32_t from = 0, i;
	int r;

	while (from < f->n) {
		if ((r = blob_missing(err, room->files->bs, f->a.ref, from, &i,
		    NULL, NULL)) == -1)
			return -1;
		if (r == 1)
			i = f->n;
		for (; from < i; from++) {
			bit_set(f->got, from, 1);
			f->ngot++;
		}
		from = i + 1;
	}
	f->leaves = 1;
	f->offered = 1;     /* its leaves came from a member */
	return 0;
}

/* Takes what the disk holds of f (its leaves, the chunks recorded), as
 * at its start: after a failure, chunks written and not recorded are
 * not the file's. */
static void
fetch_reload(struct room *room, struct fetch *f)
{
	char err[PAPO_ERR_LEN];
	uint8_t *leaves = NULL;
	uint32_t nl;

	memset(f->got, 0, bits_len(f->n));
	f->ngot = 0;
	f->npend = 0;
	f->leaves = 0;
	if (blob_leaves(err, room->files->bs, f->a.ref, &leaves, &nl) == 0) {
		free(leaves);
		if (fetch_resume(room, f) == -1) {
			blob_remove(err, room->files->bs, f->a.ref);
			memset(f->got, 0, bits_len(f->n));
			f->ngot = 0;
			f->leaves = 0;
		}
	}
}

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
	schedule(room, f);
	if (f->state == FETCH_FETCHING)
		fetch_event(room, f);
}

int
fetch_may_start(const struct room *room, const uint8_t *author)
{
	size_t mine = 0, all = 0;

	for (const struct fetch *f = room->files->fetches; f != NULL;
	    f = f->next) {
		if (!f->by_msg || f->offered)
			continue;
		all++;
		mine += author != NULL && f->has_author &&
		    memcmp(f->author, author, PAPO_KEY_LEN) == 0;
	}
	return mine < FETCH_UNOFFERED_MEMBER && all < FETCH_UNOFFERED_ROOM;
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
		schedule(room, f);
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
	if (ref_root(a->ref, f->root) == -1 ||
	    (f->got = calloc(1, bits_len(f->n))) == NULL ||
	    (f->out = calloc(1, bits_len(f->n))) == NULL) {
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
	schedule(room, f);
	fetch_event(room, f);
	return 0;
}

/* The holder to ask chunk i of: one online with room in its window that
 * holds it, another than the author when there is one, the least busy. */
/* A holder of the whole file (the author, or a member that has it all):
 * asked last and little while members that fetch it too can give. */
static int
is_author(const struct fetch *f, const struct holder *h)
{
	return h->nhave == f->n;
}

/* How many chunks h may be asked at once: a holder of the whole file
 * fewer while other members that fetch it too are online, so that they
 * take from each other what it sent one of them, and it sends each
 * chunk about once (docs/FILES.md, "Fetching"). */
static uint32_t
window_of(struct room *room, const struct fetch *f, const struct holder *h)
{
	if (!is_author(f, h))
		return FETCH_WINDOW;
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *o = &f->holders[k];

		if (o != h && !o->bad && o->have != NULL &&
		    bulk_conn(member_find(room, o->id)) != NULL)
			return FETCH_AUTHOR_WINDOW;
	}
	return FETCH_WINDOW;
}

static struct holder *
pick(struct room *room, struct fetch *f, uint32_t i)
{
	struct holder *best = NULL;
	int best_author = 1;

	for (size_t k = 0; k < f->nholders; k++) {
		struct holder *h = &f->holders[k];
		int author;

		if (h->bad || h->have == NULL || !bit(h->have, i) ||
		    h->inflight >= window_of(room, f, h) ||
		    bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		author = is_author(f, h);
		if (best == NULL || (best_author && !author) ||
		    (best_author == author && h->inflight < best->inflight)) {
			best = h;
			best_author = author;
		}
	}
	return best;
}

/* Whether some holder online that may still be asked has room in its
 * window. */
static int
window_free(struct room *room, struct fetch *f)
{
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *h = &f->holders[k];

		if (!h->bad && h->have != NULL &&
		    h->inflight < window_of(room, f, h) &&
		    bulk_conn(member_find(room, h->id)) != NULL)
			return 1;
	}
	return 0;
}

/* Whether any holder online could still give chunk i. */
static int
anyone_has(struct room *room, struct fetch *f, uint32_t i)
{
	for (size_t k = 0; k < f->nholders; k++) {
		struct holder *h = &f->holders[k];

		if (!h->bad && h->have != NULL && bit(h->have, i) &&
		    bulk_conn(member_find(room, h->id)) != NULL)
			return 1;
	}
	return 0;
}

static int
asked_add(struct fetch *f, struct holder *h, uint32_t i)
{
	if (f->nasked == f->capasked) {
		size_t cap = f->capasked ? f->capasked * 2 : 32;
		struct asked *v = realloc(f->asked, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		f->asked = v;
		f->capasked = cap;
	}
	f->asked[f->nasked++] = (struct asked){ .i = i, .h = h,
	    .at = loop_now_ns() };
	h->inflight++;
	bit_set(f->out, i, 1);
	return 0;
}

/*
 * The members fetching f with us, online (holders that said what they
 * hold, not all of it): *nf of them with us, *mine our place among them
 * in the order of their ids.  Each asks a whole file's holder for the
 * chunks of its own slice (i % *nf == *mine) and takes the rest from the
 * others as they get them, so that the author sends each chunk about
 * once, not once to each member that lacks it when it asks.
 */
static void
slice_of(struct room *room, const struct fetch *f, uint32_t *mine, uint32_t *nf)
{
	*mine = 0;
	*nf = 1;
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *h = &f->holders[k];

		if (h->bad || h->have == NULL || h->nhave == f->n ||
		    bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		(*nf)++;
		*mine += memcmp(h->id, room->env.me->pk, PAPO_KEY_LEN) < 0;
	}
}

/*
 * Asks chunks of the holders with room in their windows, from f->scan
 * on, and says when nobody online holds what is missing.  A whole
 * file's holder is asked for a chunk outside our slice (slice_of) only
 * when nothing else is coming, so that a member fetching slowly or gone
 * quiet holds nobody up.
 */
static void
schedule(struct room *room, struct fetch *f)
{
	struct xfer x = { .type = XFER_WANT, .count = 1 };
	uint32_t looked = 0, i = f->scan, needed = 0, mine, nf;
	int room_left = 0;

	if (f->state == FETCH_FAILED || !f->leaves)
		goto waiting;
	memcpy(x.root, f->root, PAPO_KEY_LEN);
	room_left = window_free(room, f);
	slice_of(room, f, &mine, &nf);
	for (; looked < f->n; looked++, i = i + 1 == f->n ? 0 : i + 1) {
		struct holder *h;

		if (bit(f->got, i) || bit(f->out, i))
			continue;
		needed++;
		if (!room_left)
			break;
		if ((h = pick(room, f, i)) == NULL) {
			if (!anyone_has(room, f, i))
				continue;
			/* Held, but every holder of it is busy: is any
			 * holder free at all? */
			room_left = window_free(room, f);
			continue;
		}
		if (is_author(f, h) && i % nf != mine && f->nasked > 0)
			continue;     /* another's slice: it will have it */
		x.first = i;
		if (send_x(room, h->id, &x) == -1 || asked_add(f, h, i) == -1)
			break;
		f->scan = i + 1 == f->n ? 0 : i + 1;
	}
waiting:
	if (f->state == FETCH_FAILED)
		return;
	/* Nothing asked nor coming: nobody online holds the rest, or
	 * nobody answered about the leaves yet. */
	if (f->nasked == 0 && (needed > 0 || !f->leaves)) {
		int any = 0;

		/* A holder that may give chunks, or has yet to say. */
		for (size_t k = 0; k < f->nholders; k++) {
			const struct holder *h = &f->holders[k];

			any |= !h->bad && (h->have != NULL || (h->asked &&
			    !h->answered)) && bulk_conn(member_find(room, h->id))
			    != NULL;
		}
		if (!any && f->state != FETCH_WAITING) {
			f->state = FETCH_WAITING;
			snprintf(f->err, sizeof(f->err), "no member online holds "
			    "it%s; it is fetched when one comes back",
			    f->ngot ? " (or the rest of it)" : "");
			fetch_event(room, f);
		}
	} else if (f->state == FETCH_WAITING) {
		f->state = FETCH_FETCHING;
		f->err[0] = '\0';
		fetch_event(room, f);
	}
}

/* Serving: what a member asked of a file this store holds. */

static int
serve_has(struct room *room, const char *ref, uint32_t i)
{
	struct fetch *f = fetch_find(room, ref);

	if (blob_has(room->files->bs, ref))
		return 1;
	return f != NULL && f->leaves && i < f->n && bit(f->got, i);
}

static void
serve_queue(struct room *room, const uint8_t to[PAPO_KEY_LEN],
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
static void
serve_drop(struct room *room, const uint8_t to[PAPO_KEY_LEN],
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

	if (f != NULL && f->leaves && i < f->n && bit(f->got, i))
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
		struct quic_conn *qc = bulk_conn(member_find(room, s->to));
		struct xfer x = { .type = XFER_CHUNK };
		size_t len;
		int sent = 0;

		if (qc != NULL && quic_bulk_queued(qc) + XFER_CHUNK_MAX + 64 >
		    QUIC_BULKQ_MAX) {
			fs->serve_tail = s;
			pp = &s->next;
			continue;          /* later: bulk_room */
		}
		root_ref(s->root, ref);
		if (qc != NULL && chunk_of(room, ref, s->i, fs->chunk, &len) ==
		    0) {
			memcpy(x.root, s->root, PAPO_KEY_LEN);
			x.first = s->i;
			if (room->env.set->bad_chunks)
				fs->chunk[len / 2] ^= 0x5a;     /* tests */
			x.data = fs->chunk;
			x.len = len;
			sent = send_x(room, s->to, &x) == 0;
			fs->served += sent ? len : 0;
		}
		if (qc != NULL && !sent) {
			struct xfer none = { .type = XFER_NONE, .first = s->i,
			    .count = 1 };

			memcpy(none.root, s->root, PAPO_KEY_LEN);
			send_x(room, s->to, &none);
		}
		*pp = s->next;
		free(s);
		fs->nserve--;
	}
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

	root_ref(x->root, ref);
	whole = blob_has(room->files->bs, ref);
	/* A member asking about a file we fetch too fetches it: asked
	 * back when we know nothing of what it holds, so that each hears
	 * of the other's chunks (our question may have come before its
	 * fetch began, and been told nothing); at most once a second. */
	if (f != NULL) {
		struct holder *h = holder_find(f, from->id);

		if (h == NULL || !h->asked || (h->have == NULL &&
		    loop_now_ns() - h->asked_at > FETCH_REASK_NS))
			fetch_ask(room, f, from->id);
	}
	if (!whole && (f == NULL || !f->leaves)) {
		struct xfer none = { .type = XFER_NONE };

		memcpy(none.root, x->root, PAPO_KEY_LEN);
		if (f != NULL)
			watch_add(f, from->id);
		send_x(room, from->id, &none);
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
			send_x(room, from->id, &none);
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
			send_x(room, from->id, &lv);
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
			send_x(room, from->id, &hv);
			free(all);
		} else {
			watch_add(f, from->id);
			have_send(room, f, from->id, UINT32_MAX);
		}
	}
	for (uint32_t k = 0; k < x->count; k++) {
		uint32_t i = x->first + k;

		if (serve_has(room, ref, i))
			serve_queue(room, from->id, x->root, i);
		else {
			struct xfer none = { .type = XFER_NONE, .first = i,
			    .count = 1 };

			memcpy(none.root, x->root, PAPO_KEY_LEN);
			send_x(room, from->id, &none);
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
	if (h->have == NULL && (h->have = calloc(1, bits_len(f->n))) == NULL)
		return;
	for (uint32_t k = 0; k < x->count && x->first + k < f->n; k++)
		if ((x->data[k / 8] >> (k % 8) & 1) &&
		    !bit(h->have, x->first + k)) {
			bit_set(h->have, x->first + k, 1);
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
		asked_release_holder(f, h, 1, 0);
		return;
	}
	for (uint32_t k = 0; k < x->count && x->first + k < f->n; k++) {
		if (h->have != NULL && bit(h->have, x->first + k)) {
			bit_set(h->have, x->first + k, 0);
			h->nhave--;
		}
		asked_release_holder(f, h, 0, x->first + k);
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
	asked_release_holder(f, h, 0, i);
	if (bit(f->got, i))
		return 0;
	errno = 0;
	r = blob_fetch_chunk(err, room->files->bs, f->a.ref, i, x->data, x->len);
	if (r == BLOB_REFUSED) {
		char nb[16];

		log_msg(LOG_WARN, "file %s: %s sent chunk %u, which does not "
		    "match the file: not asked again for it", f->a.ref,
		    member_name(member_find(room, h->id), nb), i);
		h->bad = 1;
		asked_release_holder(f, h, 1, 0);
		return 0;
	}
	if (r == -1) {
		fetch_fail(room, f, err, errno);
		return 0;
	}
	bit_set(f->got, i, 1);
	f->ngot++;
	f->pend[f->npend++] = i;
	room->files->fetched += x->len;
	/* Served on from what is written, committed or not. */
	for (size_t k = 0; k < f->nwatch; k++)
		have_send(room, f, f->watch[k], i);
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
		serve_drop(room, l->m->id, x.root);
		return;
	default:
		break;
	}
	if ((f = fetch_by_root(room, x.root)) == NULL ||
	    (h = holder_get(f, l->m->id)) == NULL || h->bad)
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
		schedule(room, f);
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
				asked_release(f, k);
		/* No leaves yet: whoever was asked may have answered
		 * nothing (a lost frame, a member busy); ask again. */
		if (!f->leaves && f->state != FETCH_FAILED &&
		    now - f->started > FETCH_TIMEOUT_NS / 2) {
			f->started = now;
			fetch_ask_all(room, f, f->has_author ? f->author : NULL);
		}
		schedule(room, f);
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
	if (bulk_conn(m) == NULL)
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
	serve_drop(room, l->m->id, NULL);
	for (f = room->files->fetches; f != NULL; f = next) {
		struct holder *h = holder_find(f, l->m->id);

		next = f->next;
		if (h == NULL)
			continue;
		asked_release_holder(f, h, 1, 0);
		free(h->have);
		h->have = NULL;
		h->nhave = 0;
		h->asked = 0;
		h->answered = 0;
		schedule(room, f);
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
