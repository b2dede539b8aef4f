/*
 * deliver.c: messages, on the node thread (deliver.h; docs/PROTOCOL.md,
 * "Gossip").  It sends messages and floods those it receives with dedup by
 * id, routes acks back toward their authors, keeps the outbox of own
 * messages until they are acked and resends it, sends read receipts,
 * answers history requests, and syncs histories that differ.  It never
 * blocks: the only waits are loop timers.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "lib/utf8.h"
#include "node/room/deliver.h"
#include "node/room/presence.h"

#define ACK_TIMEOUT_NS (8ull * NS_PER_S)
#define SYNC_SEND_MAX 20000       /* messages one sync answer may carry */
#define HISTORY_MAX 500
#define HISTORY_BYTES (1024 * 1024) /* log bytes one history page reads at most */
#define OUTBOX_RETRY_NS (30ull * NS_PER_S)
#define UPSTREAM_SLOTS 4096       /* remembered msg id -> who sent it */
#define ACK_SEEN_SLOTS 4096       /* acks forwarded lately */
#define READ_SLOTS 4096           /* read receipts remembered as sent */

/* An own message not yet acknowledged by everyone it waits for, and the
 * send request still waiting for its answer, if any. */
struct outmsg {
	char id[PAPO_MSGID_LEN + 1];
	struct member **wait, **done;
	size_t nwait, ndone;
	int any;                    /* nobody to wait for: any ack will do */
	struct node_msg *req;
	struct loop_timer *timer;
	struct room *g;
	struct outmsg *next;
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
	} upstream[UPSTREAM_SLOTS];
	uint64_t ack_seen[ACK_SEEN_SLOTS];
	size_t ack_seen_next;
	uint64_t read_sent[READ_SLOTS];   /* ids whose read receipt went out */
	size_t read_next;
};

/* deliver.c's state: the outbox, what it remembers, what it counts. */
struct delivery {
	struct outmsg *outbox;
	struct recent *recent;      /* from the first message */
	struct loop_timer *retry_timer;
	uint64_t retain_checked;    /* ns of the last days-retention check */
	size_t retain_at;           /* count retention: messages held when
	                             * the next check is worth making */
	uint64_t syncs_asked;       /* sync requests sent */
	uint64_t below_floor;       /* messages refused under the floor */
};

static void deliver_retain(struct room *g);
static cJSON *deliver_retention_json(const struct room *g);

/*
 * Whether name is also the name of a member other than the one of id
 * (this member included): names are not unique (a member may take the
 * owner's), so what shows a message's author tells them apart.
 */
static int
deliver_name_shared(const struct room *g, const uint8_t id[PAPO_KEY_LEN],
    const char *name)
{
	if (memcmp(id, g->env.me->pk, PAPO_KEY_LEN) != 0 &&
	    strcmp(g->env.room->me, name) == 0)
		return 1;
	for (size_t i = 0; i < members_n(g); i++)
		if (memcmp(member_at(g, i)->id, id, PAPO_KEY_LEN) != 0 &&
		    strcmp(member_at(g, i)->name, name) == 0)
			return 1;
	return 0;
}

/* The message JSON the API and events share.  from_label is what shows
 * its author: the name, or "name (id 1a2b3c4d…)" while another member
 * has that name too; from_role the author's role now. */
static cJSON *
deliver_msg_json(const struct room *g, const struct frame_msg *m)
{
	cJSON *o = cJSON_CreateObject();
	char id[PAPO_ID_LEN + 1], nb[16], label[PAPO_NAME_MAX + 32];

	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "from", m->name);
	sec_id_format(m->from, id);
	cJSON_AddStringToObject(o, "from_id", id);
	cJSON_AddStringToObject(o, "from_role", role_of(g, m->from));
	if (deliver_name_shared(g, m->from, m->name))
		snprintf(label, sizeof(label), "%s (id %.8s…)", m->name, id);
	else
		snprintf(label, sizeof(label), "%s", m->name);
	cJSON_AddStringToObject(o, "from_label", label);
	if (m->has_to) {
		const struct member *t = member_find(g, m->to);

		sec_id_format(m->to, id);
		cJSON_AddStringToObject(o, "to", memcmp(m->to, g->env.me->pk,
		    PAPO_KEY_LEN) == 0 ? g->env.room->me : t != NULL ?
		    member_name(t, nb) : id);
		cJSON_AddStringToObject(o, "to_id", id);
	} else {
		cJSON_AddNullToObject(o, "to");
		cJSON_AddNullToObject(o, "to_id");
	}
	if (m->has_reply_to)
		cJSON_AddStringToObject(o, "reply_to", m->reply_to);
	else
		cJSON_AddNullToObject(o, "reply_to");
	cJSON_AddNumberToObject(o, "ts", (double)m->ts);
	cJSON_AddStringToObject(o, "text", m->body);
	return o;
}

/* Acks: sent straight to the author when connected, else back the way
 * the message came, else to everyone. */

/* g's memory of recent traffic, made at its first use; NULL out of
 * memory (then nothing is remembered: an ack is flooded, a receipt may
 * go twice). */
static struct recent *
recent(struct room *g)
{
	if (g->delivery->recent == NULL)
		g->delivery->recent = calloc(1, sizeof(*g->delivery->recent));
	return g->delivery->recent;
}

static void
upstream_put(struct room *g, const char *id, struct member *m)
{
	struct recent *r = recent(g);
	uint64_t v;

	if (r == NULL || !sec_msgid_valid(id, &v))
		return;
	r->upstream[v % UPSTREAM_SLOTS].id = v;
	r->upstream[v % UPSTREAM_SLOTS].m = m;
}

static struct member *
upstream_get(struct room *g, const char *id)
{
	struct recent *r = g->delivery->recent;
	uint64_t v;

	if (r == NULL || !sec_msgid_valid(id, &v) ||
	    r->upstream[v % UPSTREAM_SLOTS].id != v)
		return NULL;
	return r->upstream[v % UPSTREAM_SLOTS].m;
}

static void
deliver_route_ack(struct room *g, const struct frame *f,
    const uint8_t author[PAPO_KEY_LEN],
    struct member *came_from)
{
	struct member *a = member_find(g, author), *up;

	if (a != NULL && a->conn != NULL) {
		member_send(g, a, f);
		return;
	}
	up = upstream_get(g, f->u.ack.id);
	if (up != NULL && up->conn != NULL && up != came_from) {
		member_send(g, up, f);
		return;
	}
	members_flood(g, f, came_from);
}

static void
deliver_ack(struct room *g, const struct frame_msg *m, enum ack_state state)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_ACK;
	strcpy(f.u.ack.id, m->id);
	f.u.ack.state = state;
	f.u.ack.ts = loop_wall_ms();
	if (frame_ack_sign(&f.u.ack, g->env.keys, g->env.me) == 0)
		deliver_route_ack(g, &f, m->from, NULL);
}

/* The outbox. */

static int
outmsg_has(struct member **v, size_t n, const struct member *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == m)
			return 1;
	return 0;
}

static cJSON *
names_json(struct member **v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	char nb[16];

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(member_name(v[i], nb)));
	return arr;
}

/* Answers the send request of o, if it still waits. */
static void
outmsg_answer(struct room *g, struct outmsg *o)
{
	struct node_msg *req = o->req;
	cJSON *r;
	int delivered = o->nwait == 0 && (o->ndone > 0 || !o->any);

	if (req == NULL)
		return;
	o->req = NULL;
	loop_timer_set(o->timer, 0);
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "id", o->id);
	cJSON_AddStringToObject(r, "state", delivered ? "delivered" : "queued");
	cJSON_AddItemToObject(r, "delivered_to", names_json(o->done, o->ndone));
	cJSON_AddItemToObject(r, "waiting_for", names_json(o->wait, o->nwait));
	/* Answered as the daemon stops (room_free): kept in the outbox. */
	if (g->stopping)
		cJSON_AddBoolToObject(r, "stopping", 1);
	req->json = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	if (req->json == NULL) {
		req->code = 500;
		snprintf(req->err, sizeof(req->err), "out of memory");
	}
	g->env.emit(g->env.arg, req);
}

static void
outmsg_free(struct room *g, struct outmsg *o)
{
	struct outmsg **p;

	for (p = &g->delivery->outbox; *p != NULL; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	outmsg_answer(g, o);
	loop_timer_free(o->timer);
	free(o->wait);
	free(o->done);
	free(o);
}

static void
outmsg_timeout(void *arg)
{
	struct outmsg *o = arg;

	outmsg_answer(o->g, o);
}

static struct outmsg *
outmsg_new(struct room *g, const char *id)
{
	struct outmsg *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	strcpy(o->id, id);
	o->g = g;
	if ((o->timer = loop_timer_new(g->env.loop, outmsg_timeout, o)) == NULL ||
	    (o->wait = calloc(ROOM_MEMBERS_MAX, sizeof(*o->wait))) == NULL ||
	    (o->done = calloc(ROOM_MEMBERS_MAX, sizeof(*o->done))) == NULL) {
		loop_timer_free(o->timer);
		free(o->wait);
		free(o);
		return NULL;
	}
	o->next = g->delivery->outbox;
	g->delivery->outbox = o;
	return o;
}

static struct outmsg *
outmsg_find(struct room *g, const char *id)
{
	for (struct outmsg *o = g->delivery->outbox; o != NULL; o = o->next)
		if (strcmp(o->id, id) == 0)
			return o;
	return NULL;
}

/* Whether o's message is to go to m (connected) now: when o waits for
 * it, or, through it, to anyone, unless m has it already. */
static int
outmsg_for(const struct outmsg *o, const struct member *m, int through)
{
	if (through)
		return !outmsg_has(o->done, o->ndone, m);
	return o->any || outmsg_has(o->wait, o->nwait, m);
}

static void
outmsg_send(struct room *g, struct outmsg *o, struct member *only,
    int through)
{
	struct frame f;
	size_t i;

	/* Read the message back only when someone is there to take it. */
	for (i = 0; i < members_n(g); i++) {
		struct member *m = member_at(g, i);

		if (m->conn != NULL && (only == NULL || m == only) &&
		    outmsg_for(o, m, through))
			break;
	}
	if (i == members_n(g))
		return;
	memset(&f, 0, sizeof(f));
	if (store_get(g->env.store, o->id, &f.u.msg) == -1)
		return;
	f.type = FRAME_MSG;
	for (i = 0; i < members_n(g); i++) {
		struct member *m = member_at(g, i);

		if (m->conn == NULL || (only != NULL && m != only))
			continue;
		if (outmsg_for(o, m, through))
			member_send(g, m, &f);
	}
	frame_clear(&f);
}

static void
outmsg_resend(struct room *g, struct outmsg *o, struct member *only)
{
	outmsg_send(g, o, only, 0);
}

static void
outmsg_through(struct room *g, struct outmsg *o, struct member *only)
{
	outmsg_send(g, o, only, 1);
}

void
deliver_member_back(struct room *g, const struct member *m)
{
	for (struct outmsg *o = g->delivery->outbox; o != NULL; o = o->next)
		if (o->any || outmsg_has(o->wait, o->nwait, m))
			outmsg_through(g, o, NULL);
}

static void
deliver_retry(void *arg)
{
	struct room *g = arg;

	for (struct outmsg *o = g->delivery->outbox; o != NULL; o = o->next)
		outmsg_resend(g, o, NULL);
	/* Anti-entropy: greeting every neighbour again compares histories
	 * and syncs what a lost frame or a closed connection left out. */
	for (size_t i = 0; i < members_n(g); i++)
		if (member_at(g, i)->conn != NULL)
			hello_send(g, quic_data(member_at(g, i)->conn));
	loop_timer_set(g->delivery->retry_timer, loop_now_ns() + OUTBOX_RETRY_NS);
}

/* A delivered ack for an own message. */
static void
outmsg_acked(struct room *g, struct outmsg *o, struct member *by)
{
	size_t i;

	for (i = 0; i < o->nwait; i++)
		if (o->wait[i] == by) {
			o->wait[i] = o->wait[--o->nwait];
			break;
		}
	if (!outmsg_has(o->done, o->ndone, by))
		o->done[o->ndone++] = by;
	if (o->nwait > 0)
		return;
	if (store_outbox_del(g->env.store, o->id) == -1)
		log_msg(LOG_WARN, "cannot update the outbox: %s", strerror(errno));
	outmsg_free(g, o);
}

/* At start: the messages outbox.jsonl kept wait for acks again. */
void
deliver_load_outbox(struct room *g)
{
	const char *id;

	for (size_t i = 0; (id = store_outbox_at(g->env.store, i)) != NULL; i++) {
		struct frame_msg m;
		struct outmsg *o;
		struct member *to;
		char gone[PAPO_MSGID_LEN + 1];

		memset(&m, 0, sizeof(m));
		if (store_get(g->env.store, id, &m) == -1) {
			/* A send that failed (its entry written, its message
			 * not) or a message retention or damage took: nothing
			 * to deliver. */
			memcpy(gone, id, sizeof(gone));
			log_msg(LOG_WARN, "outbox message %s is not in the log; "
			    "dropped from the outbox", gone);
			if (store_outbox_del(g->env.store, gone) == 0)
				i--;
			continue;
		}
		/* Whom it waited for died with the process: an addressee
		 * still waits for its addressee; otherwise the first member
		 * to store it is enough, and sync takes it further. */
		if ((o = outmsg_new(g, id)) != NULL) {
			if (m.has_to && (to = member_add(g, m.to)) != NULL)
				o->wait[o->nwait++] = to;
			o->any = o->nwait == 0;
		}
		frame_msg_clear(&m);
	}
}

/* Limits (limit.h). */

/* Answers req with 429: which limit, the seconds to wait, and why. */
static void
deliver_limited(struct room *g, struct node_msg *req, const char *which,
    unsigned retry_s, const char *why)
{
	req->code = 429;
	req->limited = which;
	req->retry_after_s = retry_s;
	snprintf(req->err, sizeof(req->err), "%s", why);
	g->env.emit(g->env.arg, req);
}

/* The author of the message id answers, when we have it. */
static int
deliver_author_of(struct room *g, const char *id, uint8_t out[PAPO_KEY_LEN])
{
	struct frame_msg m;

	memset(&m, 0, sizeof(m));
	if (store_get(g->env.store, id, &m) == -1)
		return -1;
	memcpy(out, m.from, PAPO_KEY_LEN);
	frame_msg_clear(&m);
	return 0;
}

/* Whether our agent may answer the author of reply_to: not when the two
 * have answered each other too often lately (damping). */
static int
deliver_damped(struct room *g, struct node_msg *req, const uint8_t *other)
{
	struct papo_damp d;
	struct member *m;
	char why[PAPO_ERR_LEN], conf[32], nb[16];
	unsigned retry;

	if (req->person || other == NULL || memcmp(other, g->env.me->pk,
	    PAPO_KEY_LEN) == 0 || (retry = limit_damp_check(g->limit,
	    g->env.me->pk, other,
	    loop_wall_ms())) == 0)
		return 0;
	limit_damp_conf(g->limit, &d);
	limit_damp_format(&d, conf, sizeof(conf));
	m = member_find(g, other);
	snprintf(why, sizeof(why), "reply loop: you and %s have answered each "
	    "other %u times within %s; stop and wait for a person or a third "
	    "member to speak (replying is possible again in %u s)", m != NULL ?
	    member_name(m, nb) : "that member", d.n, strchr(conf, '/') + 1,
	    retry);
	deliver_limited(g, req, "damping", retry, why);
	return 1;
}

/* Takes a token for our own message, or answers req with 429. */
static int
deliver_rate(struct room *g, struct node_msg *req)
{
	struct papo_rate r;
	char why[PAPO_ERR_LEN], conf[48];
	unsigned retry;

	if ((retry = limit_send(g->limit, loop_now_ns())) == 0)
		return 0;
	limit_rate_conf(g->limit, &r);
	limit_rate_format(&r, conf, sizeof(conf));
	snprintf(why, sizeof(why), "sending too fast: this member may send %u "
	    "messages per %s, in bursts of %u (PAPO_RATE=%s); retry in %u s",
	    r.n, r.per_s == 1 ? "second" : r.per_s == 60 ? "minute" : "hour",
	    r.burst, conf, retry);
	deliver_limited(g, req, "rate", retry, why);
	return 1;
}

static void
deliver_limits_json(const struct room *g, cJSON *o)
{
	struct limit_exchange ex[16];
	struct papo_rate r;
	struct papo_damp d;
	cJSON *lj = cJSON_AddObjectToObject(o, "limits"), *dj, *arr;
	char conf[48], id[PAPO_ID_LEN + 1], nb[16];
	size_t n;
	int on = 0;

	limit_rate_conf(g->limit, &r);
	limit_rate_format(&r, conf, sizeof(conf));
	cJSON_AddStringToObject(lj, "rate", conf);
	cJSON_AddNumberToObject(lj, "tokens",
	    (double)limit_tokens(g->limit, loop_now_ns()));
	cJSON_AddNumberToObject(lj, "receive_per_minute",
	    (double)limit_recv_cap(g->limit));
	dj = cJSON_AddObjectToObject(o, "damping");
	limit_damp_conf(g->limit, &d);
	limit_damp_format(&d, conf, sizeof(conf));
	cJSON_AddStringToObject(dj, "limit", conf);
	arr = cJSON_CreateArray();
	n = limit_damp_list(g->limit, g->env.me->pk, loop_wall_ms(), ex,
	    sizeof(ex) / sizeof(ex[0]));
	for (size_t i = 0; i < n; i++) {
		struct member *m = member_find(g, ex[i].with);
		cJSON *e = cJSON_CreateObject();

		sec_id_format(ex[i].with, id);
		cJSON_AddStringToObject(e, "with", m != NULL ?
		    member_name(m, nb) : id);
		cJSON_AddStringToObject(e, "with_id", id);
		cJSON_AddNumberToObject(e, "answers", ex[i].answers);
		cJSON_AddBoolToObject(e, "damped", ex[i].retry_after_s > 0);
		cJSON_AddNumberToObject(e, "retry_after_s", ex[i].retry_after_s);
		on |= ex[i].retry_after_s > 0;
		cJSON_AddItemToArray(arr, e);
	}
	cJSON_AddBoolToObject(dj, "on", on);
	cJSON_AddItemToObject(dj, "exchanges", arr);
}

/*
 * Whether the signed message f fits in a frame: a text within
 * PAPO_BODY_MAX can still be written too long, as JSON writes each
 * control character as a 6-byte \u escape (a newline, tab, quote or
 * backslash as 2).  Else req is answered 413 with what to do.
 */
static int
deliver_fits(struct room *g, struct node_msg *req, const struct frame *f,
    size_t len)
{
	struct buf b;
	size_t ctl = 0;
	int ok;

	/* Version 3's header takes 4 bytes of what the JSON may use. */
	buf_init(&b, FRAME_JSON_MAX - 4);
	ok = frame_encode(f, &b) == 0;
	buf_free(&b);
	if (ok)
		return 1;
	for (size_t i = 0; i < len; i++)
		ctl += (unsigned char)req->text[i] < 0x20;
	req->code = 413;
	snprintf(req->err, sizeof(req->err), "text is %zu bytes, but written "
	    "out (%zu control characters as 6-byte \\u escapes, quotes and "
	    "backslashes as 2) it is over the %d bytes a message may take: "
	    "send it with fewer control characters", len, ctl,
	    FRAME_JSON_MAX - 4);
	g->env.emit(g->env.arg, req);
	return 0;
}

/* Requests. */

/* A send that could not be stored: nothing was, and it may be sent
 * again. */
static void
deliver_store_failed(struct room *g, struct node_msg *req, int err)
{
	log_msg(LOG_ERROR, "cannot store a message sent here: %s",
	    strerror(err));
	room_fail(g, req, 500, "cannot store the message (%s): nothing was "
	    "stored or sent; send it again once the disk under PAPO_HOME "
	    "is writable", strerror(err));
}

void
deliver_send(struct room *g, struct node_msg *req)
{
	struct frame f;
	struct frame_msg *m = &f.u.msg;
	struct member *to = NULL;
	struct outmsg *o;
	size_t len = req->text != NULL ? strlen(req->text) : 0;
	char list[PAPO_ERR_LEN / 2], nb[16];
	uint8_t answered[PAPO_KEY_LEN];
	int amb, has_answered = 0;

	if (keyring_gone(g->keyring)) {
		room_fail(g, req, 403, "%s", "this member was removed from "
		    "the room: nothing it writes reaches anyone");
		return;
	}
	if (req->text == NULL || len == 0) {
		room_fail(g, req, 400, "%s", "text is empty");
		return;
	}
	if (len > PAPO_BODY_MAX) {
		char n[32];

		snprintf(n, sizeof(n), "%zu", len);
		room_fail(g, req, 413, "text is %s bytes; at most 49152 "
		    "(48 KiB) are allowed", n);
		return;
	}
	if (!utf8_valid(req->text, len)) {
		room_fail(g, req, 400, "%s", "text is not valid UTF-8");
		return;
	}
	if (req->to != NULL && req->to[0] != '\0' &&
	    (to = member_lookup(g, req->to, &amb)) == NULL) {
		size_t off = 0;

		list[0] = '\0';
		for (size_t i = 0; i < members_n(g) && off < sizeof(list) - 70; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off,
			    "%s%s", i ? ", " : "", member_name(member_at(g, i), nb));
		req->code = 404;
		snprintf(req->err, sizeof(req->err), "%s '%s'; the members are: "
		    "%s", amb ? "more than one member is named" :
		    "no member is named", req->to, off ? list : "(none yet)");
		g->env.emit(g->env.arg, req);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	sec_msgid_new(m->id);
	strcpy(m->name, g->env.room->me);
	m->ts = loop_wall_ms();
	m->body = req->text;
	m->body_len = len;
	m->person = req->person;
	if (to != NULL) {
		m->has_to = 1;
		memcpy(m->to, to->id, PAPO_KEY_LEN);
	}
	if (req->reply_to[0] != '\0') {
		if (!sec_msgid_valid(req->reply_to, NULL)) {
			room_fail(g, req, 400, "reply_to '%s' is not a message id",
			    req->reply_to);
			return;
		}
		m->has_reply_to = 1;
		strcpy(m->reply_to, req->reply_to);
		has_answered = deliver_author_of(g, m->reply_to, answered) == 0;
	}
	if (frame_msg_sign(m, g->env.keys, g->env.me) == -1) {
		room_fail(g, req, 500, "%s", "cannot sign the message");
		return;
	}
	/* A message too long to write out, then damping: a refused answer
	 * spends no token. */
	if (!deliver_fits(g, req, &f, len) ||
	    deliver_damped(g, req, has_answered ? answered : NULL) ||
	    deliver_rate(g, req))
		return;
	/*
	 * A send answered 500 stored nothing (docs/RELIABILITY.md, "What a
	 * send's answer means"): the outbox entry is written first, and
	 * taken back when the log's write fails; the log's append undoes
	 * itself.  A stray entry (one the take-back could not remove) names
	 * no message in the log and is dropped at the next start.
	 */
	if (store_outbox_add(g->env.store, m->id) == -1) {
		deliver_store_failed(g, req, errno);
		return;
	}
	if (store_add_msg(g->env.store, m) != 1) {
		int saved = errno;

		if (store_outbox_del(g->env.store, m->id) == -1)
			log_msg(LOG_WARN, "cannot take message %s back out of "
			    "the outbox: %s; it is dropped at the next start",
			    m->id, strerror(errno));
		deliver_store_failed(g, req, saved);
		return;
	}
	deliver_retain(g);
	if ((o = outmsg_new(g, m->id)) == NULL) {
		room_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	if (to != NULL)
		o->wait[o->nwait++] = to;
	else
		for (size_t i = 0; i < members_n(g); i++)
			if (member_online(g, member_at(g, i)))
				o->wait[o->nwait++] = member_at(g, i);
	o->any = o->nwait == 0;
	o->req = req;
	/* A person's message (the dashboard, the API) ends our exchanges; an
	 * agent's answer counts toward one. */
	if (req->person)
		limit_damp_person(g->limit, g->env.me->pk, UINT64_MAX);
	limit_damp_note(g->limit, g->env.me->pk, has_answered && !req->person ?
	    answered : NULL, m->ts);
	members_flood(g, &f, NULL);
	room_emit_json(g, NODE_EV_SENT, deliver_msg_json(g, m));
	/* Nobody to hear it now: say queued at once rather than in 8 s. */
	if (o->any || (to != NULL && !member_online(g, to)))
		outmsg_answer(g, o);
	else
		loop_timer_set(o->timer, loop_now_ns() + ACK_TIMEOUT_NS);
	m->body = NULL;   /* req->text, freed with req */
}

/*
 * Damaged lines a read came upon (store_damaged) are messages this
 * member no longer holds: every member connected is asked for a sync at
 * once, which brings them back (docs/RELIABILITY.md, "A damaged line").
 */
static void
deliver_heal(struct room *g)
{
	if (store_damaged(g->env.store) == 0)
		return;
	for (size_t i = 0; i < members_n(g); i++)
		if (member_at(g, i)->conn != NULL)
			deliver_sync_request(g, member_at(g, i));
}

/* The log could not be read for req: v (the messages read) is freed. */
static void
history_failed(struct room *g, struct node_msg *req, struct frame_msg *v)
{
	int saved = errno;

	free(v);
	room_fail(g, req, 500, "cannot read the history: %s",
	    strerror(saved));
}

/*
 * History after a message (req->after_set), and the messages req->text
 * names: what an agent was not given before its daemon stopped, to give
 * it now (server/mcp/mcp_deliver.c).
 * Own messages are left out; "last" is the log's newest message of any
 * author, "more" how many older ones than those returned came after.
 */
static void
deliver_after(struct room *g, struct node_msg *req)
{
	size_t limit = req->limit == 0 || req->limit > HISTORY_MAX ?
	    HISTORY_MAX : req->limit, more;
	struct frame_msg *v = calloc(limit, sizeof(*v));
	char last[PAPO_MSGID_LEN + 1];
	cJSON *o, *arr;
	long n;

	if (v == NULL) {
		room_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	n = store_after(g->env.store, req->after[0] != '\0' ? req->after :
	    NULL, limit, v, &more, last);
	if (n < 0) {
		history_failed(g, req, v);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	/* First the ids asked for by name (req->text: "ID ID ..."), older
	 * than after: what an agent had not been given. */
	for (char *save = NULL, *id = req->text != NULL ?
	    strtok_r(req->text, " ", &save) : NULL; id != NULL;
	    id = strtok_r(NULL, " ", &save)) {
		struct frame_msg one;

		if (store_get(g->env.store, id, &one) == 0) {
			cJSON_AddItemToArray(arr, deliver_msg_json(g, &one));
			frame_msg_clear(&one);
		}
	}
	for (long i = 0; i < n; i++) {
		if (memcmp(v[i].from, g->env.me->pk, PAPO_KEY_LEN) != 0)
			cJSON_AddItemToArray(arr, deliver_msg_json(g, &v[i]));
		frame_msg_clear(&v[i]);
	}
	free(v);
	cJSON_AddStringToObject(o, "last", last);
	cJSON_AddNumberToObject(o, "more", (double)more);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
	deliver_heal(g);
}

void
deliver_history(struct room *g, struct node_msg *req)
{
	size_t limit = req->limit == 0 ? 20 : req->limit;
	struct store_query q;
	struct store_cursor next;
	struct frame_msg *v = NULL;
	struct member *from = NULL;
	int amb;
	cJSON *o, *arr, *ret;
	long n;

	if (req->after_set) {
		deliver_after(g, req);
		return;
	}
	if (limit > HISTORY_MAX)
		limit = HISTORY_MAX;
	memset(&q, 0, sizeof(q));
	if (req->from != NULL && req->from[0] != '\0') {
		if (strcmp(req->from, g->env.room->me) == 0)
			q.from = g->env.me->pk;
		else if ((from = member_lookup(g, req->from, &amb)) == NULL) {
			room_fail(g, req, 404, "no member is named '%s'", req->from);
			return;
		} else
			q.from = from->id;
	}
	if ((v = calloc(limit, sizeof(*v))) == NULL) {
		room_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	q.n = limit;
	q.bytes = HISTORY_BYTES;
	q.before = req->before;
	q.before_id = req->before_id;
	q.since = req->since;
	n = store_history(g->env.store, &q, v, &next);
	if (n < 0 && errno == EINVAL) {
		free(v);
		room_fail(g, req, 400, "before_id '%s' is not a message id",
		    req->before_id);
		return;
	}
	if (n < 0) {
		history_failed(g, req, v);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	if ((ret = deliver_retention_json(g)) != NULL)
		cJSON_AddItemToObject(o, "retention", ret);
	epoch_history_json(g, o);
	for (long i = 0; i < n; i++) {
		cJSON_AddItemToArray(arr, deliver_msg_json(g, &v[i]));
		frame_msg_clear(&v[i]);
	}
	free(v);
	/* The cursor for the page before this one, while there is one. */
	if (next.more) {
		cJSON *e = cJSON_AddObjectToObject(o, "earlier");

		cJSON_AddNumberToObject(e, "before", (double)next.ts);
		cJSON_AddStringToObject(e, "before_id", next.id);
	}
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
	deliver_heal(g);
}

/* Messages shown to an agent: each author hears it once (a read
 * receipt); own messages and unknown ids are passed over. */
void
deliver_read(struct room *g, struct node_msg *req)
{
	struct recent *r = recent(g);
	char *save = NULL, *id;

	for (id = req->text != NULL ? strtok_r(req->text, " ", &save) : NULL;
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
		if (store_get(g->env.store, id, &m) == -1)
			continue;
		if (memcmp(m.from, g->env.me->pk, PAPO_KEY_LEN) != 0) {
			deliver_ack(g, &m, ACK_READ);
			if (r != NULL)
				r->read_sent[r->read_next++ % READ_SLOTS] =
				    v + 1;
		}
		frame_msg_clear(&m);
	}
	g->env.emit(g->env.arg, req);
}

/* Frames received. */

void
deliver_on_msg(struct room *g, struct link *l, struct frame *in)
{
	struct frame_msg *m = &in->u.msg;
	const struct removal *gone;
	struct member *author;
	struct frame f;
	uint8_t answered[PAPO_KEY_LEN];
	uint64_t nlog = 0;
	char id[PAPO_ID_LEN + 1];
	int r;

	if (memcmp(m->from, g->env.me->pk, PAPO_KEY_LEN) == 0)
		return;       /* our own, come back round */
	if ((gone = keyring_removed(g->keyring, m->from)) != NULL &&
	    m->ts > gone->ts) {
		/* Written after its author was removed, whoever passes it
		 * on: not stored, acked nor passed on. */
		log_msg(LOG_INFO, "message %s refused: its author was removed "
		    "from the room before it was written", m->id);
		return;
	}
	if (store_has(g->env.store, m->id)) {
		/* The author sending again means our ack was lost. */
		if (memcmp(l->m->id, m->from, PAPO_KEY_LEN) == 0)
			deliver_ack(g, m, ACK_DELIVERED);
		return;
	}
	if (store_below_floor(g->env.store, m->ts)) {
		/* Retention dropped it, or would at once: it reached us, so
		 * its author hears so and stops sending it, but it is not
		 * stored again nor passed on. */
		g->delivery->below_floor++;
		log_msg(LOG_DEBUG, "message %s is older than what this member "
		    "keeps: not stored", m->id);
		deliver_ack(g, m, ACK_DELIVERED);
		return;
	}
	/* Over the cap of its author's minute: neither stored nor acked nor
	 * passed on (docs/SECURITY.md, "Rate limits and reply loops"). */
	switch (limit_recv(g->limit, m->from, m->ts, loop_wall_ms(), &nlog)) {
	case LIMIT_KEEP:
		break;
	case LIMIT_DROP_LOG:
		sec_id_format(m->from, id);
		log_msg(LOG_WARN, "dropped %llu message%s from %s (%s): over "
		    "%u a minute of its clock; said once a minute",
		    (unsigned long long)nlog, nlog == 1 ? "" : "s", m->name, id,
		    limit_recv_cap(g->limit));
		return;
	case LIMIT_DROP:
		return;
	}
	if ((r = store_add_msg(g->env.store, m)) != 1) {
		if (r == -1)
			log_msg(LOG_ERROR, "cannot store a message: %s",
			    strerror(errno));
		return;
	}
	deliver_retain(g);
	upstream_put(g, m->id, l->m);
	/* A person's message, written at its author's daemon, ends that
	 * member's exchanges here too; an agent's answer counts. */
	if (m->person)
		limit_damp_person(g->limit, m->from, m->ts);
	limit_damp_note(g->limit, m->from, m->has_reply_to && !m->person &&
	    deliver_author_of(g, m->reply_to, answered) == 0 ? answered : NULL,
	    m->ts);
	/* A message just written is a sign of its author's life, and of a
	 * path to it through the member it came from. */
	if ((author = member_find(g, m->from)) != NULL && author->conn == NULL &&
	    m->ts + ALIVE_NS / NS_PER_MS >= loop_wall_ms()) {
		member_alive(author);
		if (l->m != NULL && l->m != author)
			author->via = l->m;
		members_presence_check(g);
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	f.u.msg = *m;
	members_flood(g, &f, l->m);
	deliver_ack(g, m, ACK_DELIVERED);
	room_emit_json(g, NODE_EV_MESSAGE, deliver_msg_json(g, m));
}

static int
ack_seen(struct room *g, const struct frame_ack *a)
{
	struct recent *r = recent(g);
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

void
deliver_on_ack(struct room *g, struct link *l, struct frame *f)
{
	struct frame_ack *a = &f->u.ack;
	struct frame_msg m;
	struct outmsg *o;
	struct member *by;
	cJSON *j;
	char nb[16], id[PAPO_ID_LEN + 1];

	if (ack_seen(g, a))
		return;
	memset(&m, 0, sizeof(m));
	if (store_get(g->env.store, a->id, &m) == -1)
		return;       /* a message we never saw: nowhere to route it */
	if (memcmp(m.from, g->env.me->pk, PAPO_KEY_LEN) != 0) {
		deliver_route_ack(g, f, m.from, l->m);
		frame_msg_clear(&m);
		return;
	}
	frame_msg_clear(&m);
	if ((by = member_find(g, a->by)) == NULL)
		return;
	if (store_add_ack(g->env.store, a) == -1)
		log_msg(LOG_WARN, "cannot store a receipt: %s", strerror(errno));
	if (a->state == ACK_DELIVERED && (o = outmsg_find(g, a->id)) != NULL)
		outmsg_acked(g, o, by);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "id", a->id);
	cJSON_AddStringToObject(j, "by", member_name(by, nb));
	sec_id_format(a->by, id);
	cJSON_AddStringToObject(j, "by_id", id);
	cJSON_AddStringToObject(j, "state",
	    a->state == ACK_READ ? "read" : "delivered");
	cJSON_AddNumberToObject(j, "ts", (double)a->ts);
	room_emit_json(g, NODE_EV_RECEIPT, j);
}

void
deliver_sync_request(struct room *g, struct member *to)
{
	struct frame f;
	uint64_t *ts;
	long n;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_SYNC;
	if ((ts = calloc(FRAME_SYNC_MAX, sizeof(*ts))) == NULL ||
	    (f.u.sync.have = calloc(FRAME_SYNC_MAX + 1,
	    sizeof(*f.u.sync.have))) == NULL) {
		free(ts);
		return;
	}
	/* The newest messages in history's order: everything from the
	 * oldest listed on is in the list. */
	n = store_ids(g->env.store, FRAME_SYNC_MAX, 0, f.u.sync.have, ts);
	{
		struct store_stats st;

		store_stats(g->env.store, &st);
		/* With all of our history in the list, ask from the start;
		 * else from the oldest message listed. */
		f.u.sync.since = n > 0 && st.msgs > FRAME_SYNC_MAX ? ts[0] : 0;
		/* Nothing retention dropped is asked for again. */
		if (f.u.sync.since < st.floor)
			f.u.sync.since = st.floor;
		g->delivery->syncs_asked++;
		f.u.sync.n = (size_t)n;
		member_send(g, to, &f);
	}
	free(ts);
	frame_clear(&f);
}

static int
id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, PAPO_MSGID_LEN);
}

void
deliver_on_sync(struct room *g, struct link *l, struct frame *in)
{
	struct frame_sync *s = &in->u.sync;
	char (*ids)[PAPO_MSGID_LEN + 1];
	struct frame f;
	long n;
	size_t sent = 0;

	if ((ids = calloc(SYNC_SEND_MAX, sizeof(*ids))) == NULL)
		return;
	if (s->n > 0)
		qsort(s->have, s->n, sizeof(*s->have), id_cmp);
	/* The ids come from the index; only the messages the other lacks
	 * are read. */
	n = store_ids(g->env.store, SYNC_SEND_MAX, s->since, ids, NULL);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	for (long i = 0; i < n; i++) {
		if (s->n > 0 && bsearch(ids[i], s->have, s->n,
		    sizeof(*s->have), id_cmp) != NULL)
			continue;
		if (store_get(g->env.store, ids[i], &f.u.msg) == -1)
			continue;
		if (member_send(g, l->m, &f) == 0)
			sent++;
		frame_msg_clear(&f.u.msg);
	}
	free(ids);
	if (sent > 0)
		log_msg(LOG_INFO, "sent %zu messages to %s, who missed them",
		    sent, l->m->name);
	deliver_heal(g);
}

/* Retention (docs/RELIABILITY.md, "Retention"). */

#define RETAIN_CHECK_NS (60ull * NS_PER_S)   /* days: checked this often */

static void
deliver_retain(struct room *g)
{
	const struct store_keep *k = &g->env.set->keep;
	char err[PAPO_ERR_LEN];
	uint64_t now = loop_now_ns();
	long n;

	if (k->count == 0 && k->ms == 0)
		return;
	/* A count costs nothing to check; days look at every message. */
	if (k->ms != 0) {
		if (g->delivery->retain_checked != 0 &&
		    now - g->delivery->retain_checked < RETAIN_CHECK_NS)
			return;
		g->delivery->retain_checked = now;
	}
	if (k->count != 0) {
		struct store_stats st;

		store_stats(g->env.store, &st);
		if (st.msgs < g->delivery->retain_at)
			return;
	}
	if (!store_compact_due(g->env.store, k, loop_wall_ms(), 1))
		return;
	if ((n = store_compact(err, g->env.store, k, loop_wall_ms())) == -1)
		log_msg(LOG_ERROR, "retention: %s", err);
	else if (n > 0)
		log_msg(LOG_INFO, "retention (PAPO_KEEP=%s): %ld messages "
		    "dropped from the log", g->env.set->keep_text, n);
	/* Own messages not yet acknowledged can keep the log over the
	 * count; the next try waits for as many new ones as a compaction
	 * is due after, rather than sorting the log at every message. */
	if (k->count != 0) {
		struct store_stats st;

		store_stats(g->env.store, &st);
		g->delivery->retain_at = st.msgs + (k->count / 4 > 0 ? k->count / 4 : 1);
	}
}

static cJSON *
deliver_retention_json(const struct room *g)
{
	struct store_stats st;
	cJSON *o;

	store_stats(g->env.store, &st);
	if (st.floor == 0 && g->env.set->keep_text == NULL)
		return NULL;
	o = cJSON_CreateObject();
	if (g->env.set->keep_text != NULL)
		cJSON_AddStringToObject(o, "keep", g->env.set->keep_text);
	else
		cJSON_AddNullToObject(o, "keep");
	if (st.floor != 0)
		cJSON_AddNumberToObject(o, "starts", (double)st.floor);
	else
		cJSON_AddNullToObject(o, "starts");
	cJSON_AddNumberToObject(o, "dropped", (double)st.gone);
	return o;
}

/* Start and stop. */

int
deliver_new(struct room *g)
{
	if ((g->delivery = calloc(1, sizeof(*g->delivery))) == NULL ||
	    (g->delivery->retry_timer = loop_timer_new(g->env.loop,
	    deliver_retry, g)) == NULL)
		return -1;
	return 0;
}

void
deliver_start(struct room *g)
{
	loop_timer_set(g->delivery->retry_timer, loop_now_ns() +
	    OUTBOX_RETRY_NS);
}

void
deliver_stop(struct room *g)
{
	if (g->delivery == NULL)
		return;
	while (g->delivery->outbox != NULL)
		outmsg_free(g, g->delivery->outbox);
}

void
deliver_free(struct room *g)
{
	if (g->delivery == NULL)
		return;
	loop_timer_free(g->delivery->retry_timer);
	free(g->delivery->recent);
	free(g->delivery);
	g->delivery = NULL;
}

/* Both histories as a hello finds them, in 64 bits (never 0). */
static uint64_t
sync_key(const struct frame_hello *h, uint64_t msgs,
    const uint8_t digest[PAPO_KEY_LEN])
{
	crypto_generichash_state st;
	uint8_t out[8];
	uint64_t v, hm = h->msgs;

	crypto_generichash_init(&st, NULL, 0, sizeof(out));
	crypto_generichash_update(&st, (const uint8_t *)&hm, sizeof(hm));
	crypto_generichash_update(&st, h->digest, PAPO_KEY_LEN);
	crypto_generichash_update(&st, (const uint8_t *)&msgs, sizeof(msgs));
	crypto_generichash_update(&st, digest, PAPO_KEY_LEN);
	crypto_generichash_final(&st, out, sizeof(out));
	memcpy(&v, out, sizeof(v));
	return v != 0 ? v : 1;
}

void
deliver_on_hello(struct room *g, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;
	struct store_stats st;
	uint8_t digest[PAPO_KEY_LEN];

	store_stats(g->env.store, &st);
	store_digest(g->env.store, digest);
	if (in->is_new)
		m->sync_key = 0;
	if (h->msgs != st.msgs || memcmp(h->digest, digest, PAPO_KEY_LEN) != 0) {
		uint64_t key = sync_key(h, st.msgs, digest);

		/* Histories that differ are synced, but not again while
		 * neither side has changed since: a sync that left them
		 * different (retention dropped some on one side, refused
		 * below its floor) would leave them so every time. */
		if (key != m->sync_key) {
			m->sync_key = key;
			deliver_sync_request(g, m);
		}
	}
	/* What waits in the outbox goes to it, and through it to those it
	 * reaches: a member back, or a new path, takes it now. */
	for (struct outmsg *o = g->delivery->outbox; o != NULL; o = o->next)
		outmsg_through(g, o, m);
}

void
deliver_member_json(const struct room *g, const struct member *m, cJSON *e)
{
	cJSON_AddNumberToObject(e, "dropped",
	    (double)limit_dropped(g->limit, m->id));
}

void
deliver_summary_json(const struct room *g, cJSON *o)
{
	struct store_stats st;

	store_stats(g->env.store, &st);
	cJSON_AddNumberToObject(o, "messages", (double)st.msgs);
}

void
deliver_status_json(const struct room *g, cJSON *o)
{
	struct store_stats st;
	size_t nout = 0;
	cJSON *rj;

	deliver_limits_json(g, o);
	store_stats(g->env.store, &st);
	for (struct outmsg *om = g->delivery->outbox; om != NULL; om = om->next)
		nout++;
	cJSON_AddNumberToObject(o, "outbox", (double)nout);
	cJSON_AddNumberToObject(o, "messages", (double)st.msgs);
	if ((rj = deliver_retention_json(g)) == NULL)
		cJSON_AddNullToObject(o, "retention");
	else {
		cJSON_AddNumberToObject(rj, "refused",
		    (double)g->delivery->below_floor);
		cJSON_AddItemToObject(o, "retention", rj);
	}
	cJSON_AddNumberToObject(o, "syncs_asked",
	    (double)g->delivery->syncs_asked);
}
