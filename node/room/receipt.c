/*
 * receipt.c: acks and read receipts, on the node thread (receipt.h;
 * docs/PROTOCOL.md, "Gossip").  It remembers a room's recent traffic
 * (who passed each message on, the acks forwarded lately, the read
 * receipts sent), routes acks back toward their authors, sends our acks
 * and read receipts, and takes acks: an own message's to the outbox and
 * to the program, the others' on their way.  It never blocks.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/receipt.h"

#define UPSTREAM_SLOTS 4096       /* remembered msg id -> who sent it */
#define ACK_SEEN_SLOTS 4096       /* acks forwarded lately */
#define READ_SLOTS 4096           /* read receipts remembered as sent */
/* A batch is made durable at the latest at this many lines (or at the
 * end of the loop round that wrote them). */
#define COMMIT_LINES_MAX 256

/* What was held until the lines it tells of are durable (commit_hold). */
struct held {
	held_fn *fn;
	void *arg;
};

/* The room's held outputs, in the order they were held, and the timer
 * that commits them once the loop round's reads are done. */
struct commits {
	struct held *v;
	size_t n, cap;
	struct loop_timer *timer;
};
/*
 * What a room remembers of its recent traffic: who passed each message
 * on (its acks go back that way), the acks forwarded lately, the read
 * receipts sent.  Allocated at the room's first message, so that a room
 * that never had one costs nothing of it.
 */
struct recent {
	struct {
		uint64_t id;
		struct member *m;
		uint8_t from[PAPO_KEY_LEN];   /* its author: routing an ack
		                               * needs no read of the log */
	} upstream[UPSTREAM_SLOTS];
	uint64_t ack_seen[ACK_SEEN_SLOTS];
	size_t ack_seen_next;
	uint64_t read_sent[READ_SLOTS];   /* ids whose read receipt went out */
	size_t read_next;
	struct commits commits;           /* outputs held for a sync */
};


/* Group commit (docs/RELIABILITY.md, "Stored before acknowledged"). */

static struct recent *recent(struct room *room);

/* Runs the held outputs in order, durable or not; those a release holds
 * anew wait for the next commit. */
static void
commit_release(struct room *room, int durable)
{
	struct commits *c = &room->recent->commits;
	struct held *v = c->v;
	size_t n = c->n;

	c->v = NULL;
	c->n = c->cap = 0;
	for (size_t i = 0; i < n; i++)
		v[i].fn(room, v[i].arg, durable);
	free(v);
}

int
commit_now(struct room *room)
{
	int rc = store_commit(room->env.store), saved = errno;

	if (room->recent != NULL && room->recent->commits.timer != NULL) {
		loop_timer_set(room->recent->commits.timer, 0);
		commit_release(room, rc == 0);
	}
	errno = saved;
	return rc;
}

static void
commit_fire(void *arg)
{
	(void)commit_now(arg);
}

/* The room's held outputs, their timer made at the first; NULL out of
 * memory. */
static struct commits *
commits(struct room *room)
{
	struct recent *r = recent(room);

	if (r == NULL)
		return NULL;
	if (r->commits.timer == NULL &&
	    (r->commits.timer = loop_timer_new(room->env.loop, commit_fire,
	    room)) == NULL)
		return NULL;
	return &r->commits;
}

void
commit_hold(struct room *room, held_fn *fn, void *arg)
{
	struct commits *c;

	if (store_uncommitted(room->env.store) == 0) {
		fn(room, arg, 1);
		return;
	}
	/* Out of memory: made durable now, and said at once. */
	if ((c = commits(room)) == NULL) {
		fn(room, arg, store_commit(room->env.store) == 0);
		return;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct held *v = realloc(c->v, cap * sizeof(*v));

		if (v == NULL) {
			fn(room, arg, commit_now(room) == 0);
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct held){ fn, arg };
	/* At the end of this round: the loop fires timers after it has
	 * read what came, so one sync covers the round. */
	if (store_uncommitted(room->env.store) >= COMMIT_LINES_MAX)
		(void)commit_now(room);
	else if (c->n == 1)
		loop_timer_set(c->timer, loop_now_ns());
}

/* Acks: sent straight to the author when connected, else back the way
 * the message came, else to everyone. */

/* room's memory of recent traffic, made at its first use; NULL out of
 * memory (then nothing is remembered: an ack is flooded, a receipt may
 * go twice). */
static struct recent *
recent(struct room *room)
{
	if (room->recent == NULL)
		room->recent = calloc(1, sizeof(*room->recent));
	return room->recent;
}

void
upstream_put(struct room *room, const char *id, struct member *m,
    const uint8_t from[PAPO_KEY_LEN])
{
	struct recent *r = recent(room);
	uint64_t v;

	if (r == NULL || !sec_msgid_valid(id, &v))
		return;
	r->upstream[v % UPSTREAM_SLOTS].id = v;
	r->upstream[v % UPSTREAM_SLOTS].m = m;
	memcpy(r->upstream[v % UPSTREAM_SLOTS].from, from, PAPO_KEY_LEN);
}

static struct member *
upstream_get(struct room *room, const char *id)
{
	struct recent *r = room->recent;
	uint64_t v;

	if (r == NULL || !sec_msgid_valid(id, &v) ||
	    r->upstream[v % UPSTREAM_SLOTS].id != v)
		return NULL;
	return r->upstream[v % UPSTREAM_SLOTS].m;
}

int
upstream_author(struct room *room, const char *id, uint8_t from[PAPO_KEY_LEN])
{
	struct recent *r = room->recent;
	uint64_t v;

	if (r == NULL || !sec_msgid_valid(id, &v) ||
	    r->upstream[v % UPSTREAM_SLOTS].id != v)
		return -1;
	memcpy(from, r->upstream[v % UPSTREAM_SLOTS].from, PAPO_KEY_LEN);
	return 0;
}

int
deliver_author(struct room *room, const char *id, uint8_t from[PAPO_KEY_LEN])
{
	struct frame_msg m;

	if (upstream_author(room, id, from) == 0)
		return 0;
	memset(&m, 0, sizeof(m));
	if (store_get(room->env.store, id, &m) == -1)
		return -1;
	memcpy(from, m.from, PAPO_KEY_LEN);
	frame_msg_clear(&m);
	return 0;
}

static void
deliver_route_ack(struct room *room, const struct frame *f,
    const uint8_t author[PAPO_KEY_LEN],
    struct member *came_from)
{
	struct member *a = member_find(room, author), *up;

	if (a != NULL && a->conn != NULL) {
		member_send(room, a, f);
		return;
	}
	up = upstream_get(room, f->u.ack.id);
	if (up != NULL && up->conn != NULL && up != came_from) {
		member_send(room, up, f);
		return;
	}
	members_flood(room, f, came_from);
}

void
deliver_ack(struct room *room, const struct frame_msg *m, enum ack_state state)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_ACK;
	strcpy(f.u.ack.id, m->id);
	f.u.ack.state = state;
	f.u.ack.ts = loop_wall_ms();
	if (frame_ack_sign(&f.u.ack, room->env.keys, room->env.me) == 0)
		deliver_route_ack(room, &f, m->from, NULL);
}

/* Messages shown to an agent: each author hears it once (a read
 * receipt); own messages and unknown ids are passed over. */
void
deliver_read(struct room *room, struct node_msg *req)
{
	struct node_read_args *args = node_args_read(req);
	struct recent *r = recent(room);
	char *save = NULL, *id;

	for (id = args->ids != NULL ? strtok_r(args->ids, " ", &save) : NULL;
	    id != NULL; id = strtok_r(NULL, " ", &save)) {
		struct frame_msg m;
		uint64_t v;
		size_t i;

		if (!sec_msgid_valid(id, &v))
			continue;
		for (i = 0; r != NULL && i < READ_SLOTS; i++)
			if (r->read_sent[i] == v + 1)
				break;
		if (r != NULL && i < READ_SLOTS)
			continue;
		memset(&m, 0, sizeof(m));
		if (store_get(room->env.store, id, &m) == -1)
			continue;
		if (memcmp(m.from, room->env.me->pk, PAPO_KEY_LEN) != 0) {
			deliver_ack(room, &m, ACK_READ);
			if (r != NULL)
				r->read_sent[r->read_next++ % READ_SLOTS] =
				    v + 1;
		}
		frame_msg_clear(&m);
	}
	room->env.emit(room->env.arg, req);
}

static int
ack_seen(struct room *room, const struct frame_ack *a)
{
	struct recent *r = recent(room);
	uint8_t h[8];
	uint64_t v;

	if (r == NULL)
		return 0;
	crypto_generichash(h, sizeof(h), (const uint8_t *)a, offsetof(struct
	    frame_ack, ts), NULL, 0);
	memcpy(&v, h, sizeof(v));
	for (size_t i = 0; i < ACK_SEEN_SLOTS; i++)
		if (r->ack_seen[i] == v)
			return 1;
	r->ack_seen[r->ack_seen_next++ % ACK_SEEN_SLOTS] = v;
	return 0;
}

/* A receipt of our own message, its line durable: to the outbox and to
 * the program.  Its line lost, nothing: the member acks again when the
 * outbox sends the message again. */
static void
ack_durable(struct room *room, void *arg, int durable)
{
	struct frame_ack *a = arg;
	struct outmsg *o;
	struct member *by;
	cJSON *j;
	char nb[16], id[PAPO_ID_LEN + 1];

	if (!durable || (by = member_find(room, a->by)) == NULL) {
		free(a);
		return;
	}
	if (a->state == ACK_DELIVERED && (o = outmsg_find(room, a->id)) != NULL)
		outmsg_acked(room, o, by);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "id", a->id);
	cJSON_AddStringToObject(j, "by", member_name(by, nb));
	sec_id_format(a->by, id);
	cJSON_AddStringToObject(j, "by_id", id);
	cJSON_AddStringToObject(j, "state",
	    a->state == ACK_READ ? "read" : "delivered");
	cJSON_AddNumberToObject(j, "ts", (double)a->ts);
	room_emit_json(room, NODE_EV_RECEIPT, j);
	free(a);
}

void
deliver_on_ack(struct room *room, struct link *l, struct frame *f)
{
	struct frame_ack *a = &f->u.ack, *h;
	uint8_t from[PAPO_KEY_LEN];

	if (ack_seen(room, a))
		return;
	if (deliver_author(room, a->id, from) == -1)
		return;       /* a message we never saw: nowhere to route it */
	if (memcmp(from, room->env.me->pk, PAPO_KEY_LEN) != 0) {
		deliver_route_ack(room, f, from, l->m);
		return;
	}
	if (member_find(room, a->by) == NULL)
		return;
	if (store_add_ack(room->env.store, a) == -1) {
		room_log(room, LOG_WARN, "cannot store a receipt: %s", strerror(errno));
		return;
	}
	if ((h = malloc(sizeof(*h))) == NULL) {
		(void)commit_now(room);
		return;
	}
	*h = *a;
	commit_hold(room, ack_durable, h);
}

/* Frees what the room remembered; none made: a no-op. */
void
receipts_free(struct room *room)
{
	/* deliver_stop made the round durable and released it already;
	 * the members are still there for anything left. */
	if (room->recent != NULL && room->recent->commits.timer != NULL) {
		(void)commit_now(room);
		loop_timer_free(room->recent->commits.timer);
	}
	free(room->recent);
	room->recent = NULL;
}
