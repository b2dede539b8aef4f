/*
 * files_fetch.c: a file being fetched (struct fetch, files_int.h;
 * docs/FILES.md, "Fetching"): found by its reference, its holders, its
 * state as JSON and the events that say it, the members asked about it
 * (WANT, the author first) and told what we hold (HAVE), the chunks
 * written committed (made durable and recorded) every
 * FETCH_COMMIT_CHUNKS, at each tick and at a stop, not one by one: two
 * fdatasyncs per chunk held the node thread and cut the throughput.  A
 * fetch resumes from the disk (REF.part, REF.have) where it stopped.
 * Its ends: done, failed (a full disk is tried again every
 * FETCH_RETRY_NS and when a member greets), forgotten, dropped.
 *
 * Bounds: a message may name files nobody holds.  The fetches
 * messages begin that no member has offered are capped per author and
 * per room (fetch_may_start), and one is dropped FETCH_UNOFFERED_NS
 * after it began once a member has said it holds nothing of it: the
 * file is only named again, fetched when someone asks.  Node thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/keyring.h"
#include "node/room/member.h"

/* m's connection when it speaks version 4 (has a bulk stream), else
 * NULL. */
struct quic_conn *
fetch_bulk_conn(const struct member *m)
{
	if (m == NULL || m->conn == NULL || quic_version(m->conn) < 4)
		return NULL;
	return m->conn;
}

int
fetch_send(struct room *room, const uint8_t id[PAPO_KEY_LEN],
    const struct xfer *x)
{
	struct quic_conn *qc = fetch_bulk_conn(member_find(room, id));
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

struct fetch *
fetch_by_root(const struct room *room, const uint8_t root[PAPO_KEY_LEN])
{
	for (struct fetch *f = room->files->fetches; f != NULL; f = f->next)
		if (memcmp(f->root, root, PAPO_KEY_LEN) == 0)
			return f;
	return NULL;
}

struct holder *
fetch_holder_find(struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t k = 0; k < f->nholders; k++)
		if (memcmp(f->holders[k].id, id, PAPO_KEY_LEN) == 0)
			return &f->holders[k];
	return NULL;
}

/* The holder id, added if new: NULL when out of memory.  Adding moves
 * the array: struct asked points by index instead (see below). */
struct holder *
fetch_holder_get(struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	struct holder *h = fetch_holder_find(f, id), *v;

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

/* Bytes of the file in the chunks written. */
static uint64_t
fetch_bytes(const struct fetch *f)
{
	uint64_t b;

	if (f->ngot == 0)
		return 0;
	b = (uint64_t)f->ngot * BLOB_CHUNK;
	if (fetch_bit(f->got, f->n - 1))
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
		    fetch_bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		for (i = 0; i < f->n && !fetch_bit(h->have, i); i++)
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

void
fetch_event(struct room *room, struct fetch *f)
{
	f->evented = loop_now_ns();
	room_emit_json(room, NODE_EV_BLOB, fetch_state_json(room, &f->a));
}

/* Gives back the chunk asked at slot k. */
void
fetch_asked_release(struct fetch *f, size_t k)
{
	struct asked *s = &f->asked[k];

	if (s->h == NULL)
		return;
	s->h->inflight--;
	fetch_bit_set(f->out, s->i, 0);
	*s = f->asked[--f->nasked];
}

/* Gives back every chunk asked of h, or only chunk i of it (all 0). */
void
fetch_asked_release_holder(struct fetch *f, struct holder *h, int all,
    uint32_t i)
{
	for (size_t k = f->nasked; k-- > 0;)
		if (f->asked[k].h == h && (all || f->asked[k].i == i))
			fetch_asked_release(f, k);
}

void
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
			fetch_send(room, f->holders[k].id, &x);
}

/* f failed for why; e the errno of our disk's refusal (0: another
 * cause).  A full disk is tried again (FETCH_RETRY_NS, a greeting). */
void
fetch_fail(struct room *room, struct fetch *f, const char *why, int e)
{
	log_msg(LOG_WARN, "file %s (%s): %s", f->a.name, f->a.ref, why);
	fetch_cancel(room, f);
	while (f->nasked > 0)
		fetch_asked_release(f, f->nasked - 1);
	f->state = FETCH_FAILED;
	f->retry = e == ENOSPC || e == EDQUOT;
	f->failed_at = loop_now_ns();
	snprintf(f->err, sizeof(f->err), "%.180s%s", why, f->retry ?
	    "; tried again every 30 s and when a member comes online" : "");
	fetch_event(room, f);
}

/* Sends HAVE of chunk i (or of everything we hold, i = UINT32_MAX) to
 * id. */
void
fetch_have_send(struct room *room, struct fetch *f,
    const uint8_t id[PAPO_KEY_LEN], uint32_t i)
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
	fetch_send(room, id, &x);
}

/*
 * Makes the chunks written since the last commit durable and recorded:
 * 1 when that completed the file (fetch_done is the caller's), 0, or -1
 * when the disk refused (the fetch has failed).
 */
int
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
		fetch_asked_release(f, f->nasked - 1);
	fetch_unlink(room, f);
}

/* How long a fetch nobody offers waits: FETCH_UNOFFERED_NS; test builds
 * may shorten it (PAPO_TEST_UNOFFERED_MS), so that tests of the drop do
 * not wait a minute. */
uint64_t
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
void
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

void
fetch_done(struct room *room, struct fetch *f)
{
	log_msg(LOG_INFO, "file %s (%s, %llu bytes) is here", f->a.name,
	    f->a.ref, (unsigned long long)f->a.size);
	fetch_cancel(room, f);
	while (f->nasked > 0)
		fetch_asked_release(f, f->nasked - 1);
	room_emit_json(room, NODE_EV_BLOB, fetch_state_json(room, &f->a));
	fetch_unlink(room, f);
}

/* Asks id about the file: the leaves too while we lack them. */
void
fetch_ask(struct room *room, struct fetch *f, const uint8_t id[PAPO_KEY_LEN])
{
	struct xfer x = { .type = XFER_WANT };
	struct holder *h;

	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) == 0 ||
	    (h = fetch_holder_get(f, id)) == NULL || h->bad)
		return;
	memcpy(x.root, f->root, PAPO_KEY_LEN);
	x.flags = f->leaves ? 0 : XFER_F_LEAVES;
	if (fetch_send(room, id, &x) == 0) {
		h->asked = 1;
		h->asked_at = loop_now_ns();
	}
}

/* Asks every member online, the author first. */
void
fetch_ask_all(struct room *room, struct fetch *f, const uint8_t *author)
{
	if (author != NULL &&
	    fetch_bulk_conn(member_find(room, author)) != NULL)
		fetch_ask(room, f, author);
	for (size_t k = 0; k < members_n(room); k++) {
		struct member *m = member_at(room, k);

		if (fetch_bulk_conn(m) != NULL && (author == NULL ||
		    memcmp(m->id, author, PAPO_KEY_LEN) != 0))
			fetch_ask(room, f, m->id);
	}
}

/* What is already on the disk of a fetch that stopped. */
int
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
			fetch_bit_set(f->got, from, 1);
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
void
fetch_reload(struct room *room, struct fetch *f)
{
	char err[PAPO_ERR_LEN];
	uint8_t *leaves = NULL;
	uint32_t nl;

	memset(f->got, 0, fetch_bits_len(f->n));
	f->ngot = 0;
	f->npend = 0;
	f->leaves = 0;
	if (blob_leaves(err, room->files->bs, f->a.ref, &leaves, &nl) == 0) {
		free(leaves);
		if (fetch_resume(room, f) == -1) {
			blob_remove(err, room->files->bs, f->a.ref);
			memset(f->got, 0, fetch_bits_len(f->n));
			f->ngot = 0;
			f->leaves = 0;
		}
	}
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
