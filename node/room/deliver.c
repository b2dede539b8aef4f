/*
 * deliver.c: messages, on the node thread (deliver.h; docs/PROTOCOL.md,
 * "Gossip").  It sends messages (the limits applied first) and takes
 * those it receives: stored, flooded with dedup by id, acked; and it
 * makes, starts and stops delivery's parts: the outbox (outbox.c), acks
 * and read receipts (receipt.c), history and sync (history.c), retention
 * (retain.c).  It never blocks: the only waits are loop timers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "lib/utf8.h"
#include "node/room/deliver.h"
#include "node/room/files.h"
#include "node/room/presence.h"
#include "node/room/search.h"
#include "node/wire/private.h"

#define ACK_TIMEOUT_NS (8ull * NS_PER_S)

/* deliver.c's state: what it counts. */
struct delivery {
	uint64_t below_floor;       /* messages refused under the floor */
};

/* Limits (limit.h). */

/* Answers req with 429: which limit, the seconds to wait, and why. */
static void
deliver_limited(struct room *room, struct node_msg *req, const char *which,
    unsigned retry_s, const char *why)
{
	req->code = 429;
	req->limited = which;
	req->retry_after_s = retry_s;
	snprintf(req->err, sizeof(req->err), "%s", why);
	room->env.emit(room->env.arg, req);
}

/* Whether our agent may answer the author of reply_to: not when the two
 * have answered each other too often lately (damping). */
static int
deliver_damped(struct room *room, struct node_msg *req, const uint8_t *other)
{
	struct papo_damp d;
	struct member *m;
	char why[PAPO_ERR_LEN], conf[32], nb[16];
	unsigned retry;

	if (node_args_send(req)->person || other == NULL ||
	    memcmp(other, room->env.me->pk, PAPO_KEY_LEN) == 0 ||
	    (retry = limit_damp_check(room->limit, room->env.me->pk, other,
	    loop_wall_ms())) == 0)
		return 0;
	limit_damp_conf(room->limit, &d);
	limit_damp_format(&d, conf, sizeof(conf));
	m = member_find(room, other);
	snprintf(why, sizeof(why), "reply loop: you and %s have answered each "
	    "other %u times within %s; stop and wait for a person or a third "
	    "member to speak (replying is possible again in %u s)", m != NULL ?
	    member_name(m, nb) : "that member", d.n, strchr(conf, '/') + 1,
	    retry);
	deliver_limited(room, req, "damping", retry, why);
	return 1;
}

/* Takes a token for our own message, or answers req with 429. */
static int
deliver_rate(struct room *room, struct node_msg *req)
{
	struct papo_rate r;
	char why[PAPO_ERR_LEN], conf[48];
	unsigned retry;

	if ((retry = limit_send(room->limit, loop_now_ns())) == 0)
		return 0;
	limit_rate_conf(room->limit, &r);
	limit_rate_format(&r, conf, sizeof(conf));
	snprintf(why, sizeof(why), "sending too fast: this member may send %u "
	    "messages per %s, in bursts of %u (PAPO_RATE=%s); retry in %u s",
	    r.n, r.per_s == 1 ? "second" : r.per_s == 60 ? "minute" : "hour",
	    r.burst, conf, retry);
	deliver_limited(room, req, "rate", retry, why);
	return 1;
}

static void
deliver_limits_json(const struct room *room, cJSON *o)
{
	struct limit_exchange ex[16];
	struct papo_rate r;
	struct papo_damp d;
	cJSON *lj = cJSON_AddObjectToObject(o, "limits"), *dj, *arr;
	char conf[48], id[PAPO_ID_LEN + 1], nb[16];
	size_t n;
	int on = 0;

	limit_rate_conf(room->limit, &r);
	limit_rate_format(&r, conf, sizeof(conf));
	cJSON_AddStringToObject(lj, "rate", conf);
	cJSON_AddNumberToObject(lj, "tokens",
	    (double)limit_tokens(room->limit, loop_now_ns()));
	cJSON_AddNumberToObject(lj, "receive_per_minute",
	    (double)limit_recv_cap(room->limit));
	dj = cJSON_AddObjectToObject(o, "damping");
	limit_damp_conf(room->limit, &d);
	limit_damp_format(&d, conf, sizeof(conf));
	cJSON_AddStringToObject(dj, "limit", conf);
	arr = cJSON_CreateArray();
	n = limit_damp_list(room->limit, room->env.me->pk, loop_wall_ms(), ex,
	    sizeof(ex) / sizeof(ex[0]));
	for (size_t i = 0; i < n; i++) {
		struct member *m = member_find(room, ex[i].with);
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
deliver_fits(struct room *room, struct node_msg *req, const struct frame *f,
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
		ctl += (unsigned char)node_args_send(req)->text[i] < 0x20;
	req->code = 413;
	snprintf(req->err, sizeof(req->err), "text is %zu bytes, but written "
	    "out (%zu control characters as 6-byte \\u escapes, quotes and "
	    "backslashes as 2) it is over the %d bytes a message may take: "
	    "send it with fewer control characters", len, ctl,
	    FRAME_JSON_MAX - 4);
	room->env.emit(room->env.arg, req);
	return 0;
}

/* Requests. */

/* A send that could not be stored: nothing was, and it may be sent
 * again. */
static void
deliver_store_failed(struct room *room, struct node_msg *req, int err)
{
	room_log(room, LOG_ERROR, "cannot store a message sent here: %s",
	    strerror(err));
	room_fail(room, req, 500, "cannot store the message (%s): nothing was "
	    "stored or sent; send it again once the disk under PAPO_HOME "
	    "is writable", strerror(err));
}

/* A message was stored: retention (files no message names any more go
 * with what it drops, and a search index that could not follow it is
 * rebuilt), and the files it names. */
static void
deliver_stored(struct room *room, const struct frame_msg *m)
{
	struct frame_msg view;
	struct buf inner;

	if (deliver_retain(room) > 0) {
		files_retain(room);
		search_watch(room);
	}
	/* The files of a private message are known to its two ends only. */
	if (deliver_view(room, m, &view, &inner) != SEEN_NOT)
		files_on_msg(room, &view);
	buf_free(&inner);
}

/*
 * A private message's body (node/wire/private.h): the inner body (the
 * text and its files' lines, in the send's text) sealed to to, which
 * takes the text's place.  0, or -1 with req answered.
 */
static int
deliver_seal(struct room *room, struct node_msg *req, struct frame_msg *m,
    const struct member *to, size_t *len)
{
	struct node_send_args *args = node_args_send(req);
	struct buf b;
	enum priv_err e;

	if (keyring_removed(room->keyring, to->id) != NULL) {
		room_fail(room, req, 403, "%s was removed from the room: a "
		    "private message to it is refused", to->name);
		return -1;
	}
	/* Connected to us, an addressee of protocol 4 or older shows
	 * us it cannot open one (one away is sent it: when it runs a papo
	 * that can, it reads it). */
	if (member_version(to) != 0 && member_version(to) < PRIV_VERSION) {
		room_fail(room, req, 409, "%s runs a papo too old to read "
		    "private messages (protocol %u): it must upgrade papo, or "
		    "send it to the room with public", to->name,
		    member_version(to));
		return -1;
	}
	if (*len > PRIV_TEXT_MAX) {
		room_fail(room, req, 413, "a private message holds at most %d "
		    "bytes (%d KiB) of text and file lines; this one has %zu",
		    PRIV_TEXT_MAX, PRIV_TEXT_MAX / 1024, *len);
		return -1;
	}
	buf_init(&b, PAPO_BODY_MAX + 1);
	if ((e = priv_seal(&b, room->env.me, to->id, room->env.keys->id, m->id,
	    args->text, *len)) != PRIV_OK || buf_add(&b, "", 1) == -1) {
		buf_free(&b);
		room_fail(room, req, 500, "cannot seal the message: %s",
		    priv_strerror(e));
		return -1;
	}
	sodium_memzero(args->text, *len);
	free(args->text);
	args->text = (char *)b.p;
	*len = b.len - 1;
	return 0;
}

/*
 * A send whose message and outbox entry are written, held until the
 * round's commit (commit_hold) has made them durable: then it is
 * flooded, shown as sent and waits for its acks; when the commit failed,
 * nothing was stored (the log cut back), the outbox entry is taken back
 * out and the send answered 500, as a failed write is.
 */
struct held_send {
	struct node_msg *req;
	struct frame f;              /* its body is req's text */
	uint8_t to[PAPO_KEY_LEN];
	int has_to;
	uint8_t answered[PAPO_KEY_LEN];
	int has_answered;
};

static void
held_send_failed(struct room *room, struct held_send *h)
{
	const char *id = h->f.u.msg.id;

	if (store_outbox_del(room->env.store, id) == -1)
		room_log(room, LOG_WARN, "cannot take message %s back out of "
		    "the outbox: %s; it is dropped at the next start", id,
		    strerror(errno));
	deliver_store_failed(room, h->req, EIO);
}

static void
held_send_run(struct room *room, struct held_send *h, int durable)
{
	struct node_msg *req = h->req;
	struct node_send_args *args = node_args_send(req);
	struct frame_msg *m = &h->f.u.msg;
	struct member *to = h->has_to ? member_find(room, h->to) : NULL;
	struct outmsg *o;

	if (!durable) {
		held_send_failed(room, h);
		return;
	}
	deliver_stored(room, m);
	/* Its acks end here: the ring says so without reading the log. */
	upstream_put(room, m->id, NULL, m->from);
	if ((o = outmsg_new(room, m->id)) == NULL) {
		room_fail(room, req, 500, "out of memory");
		return;
	}
	if (args->files != NULL) {
		/* The answer names the files as the message does. */
		cJSON *tmp = cJSON_CreateObject();
		struct frame_msg view;
		struct buf inner;

		if (tmp != NULL &&
		    deliver_view(room, m, &view, &inner) != SEEN_NOT) {
			files_msg_json(room, &view, tmp);
			o->files = cJSON_DetachItemFromObject(tmp, "files");
		}
		buf_free(&inner);
		cJSON_Delete(tmp);
	}
	if (to != NULL)
		o->wait[o->nwait++] = to;
	else if (!h->has_to)
		for (size_t i = 0; i < members_n(room); i++)
			if (member_online(room, member_at(room, i)))
				o->wait[o->nwait++] = member_at(room, i);
	o->any = o->nwait == 0;
	o->req = req;
	/* A person's message (the dashboard, the API) ends our exchanges; an
	 * agent's answer counts toward one. */
	if (args->person)
		limit_damp_person(room->limit, room->env.me->pk, UINT64_MAX);
	limit_damp_note(room->limit, room->env.me->pk,
	    h->has_answered && !args->person ? h->answered : NULL, m->ts);
	members_flood(room, &h->f, NULL);
	room_emit_json(room, NODE_EV_SENT, deliver_msg_json(room, m));
	/* Nobody to hear it now: say queued at once rather than in 8 s. */
	if (o->any || (to != NULL && !member_online(room, to)))
		outmsg_answer(room, o);
	else
		loop_timer_set(o->timer, loop_now_ns() + ACK_TIMEOUT_NS);
}

static void
held_send_durable(struct room *room, void *arg, int durable)
{
	held_send_run(room, arg, durable);
	free(arg);      /* the body is args->text, freed with req */
}

/* Holds the send of f (stored, its outbox entry written) for the commit;
 * out of memory, the round is made durable now. */
static void
deliver_hold_send(struct room *room, struct node_msg *req,
    const struct frame *f, const struct member *to, const uint8_t *answered)
{
	struct held_send *h = calloc(1, sizeof(*h)), now;

	if (h == NULL) {
		memset(&now, 0, sizeof(now));
		h = &now;
	}
	h->req = req;
	h->f = *f;
	if (to != NULL) {
		memcpy(h->to, to->id, PAPO_KEY_LEN);
		h->has_to = 1;
	}
	if (answered != NULL) {
		memcpy(h->answered, answered, PAPO_KEY_LEN);
		h->has_answered = 1;
	}
	if (h == &now)
		held_send_run(room, &now, commit_now(room) == 0);
	else
		commit_hold(room, held_send_durable, h);
}

void
deliver_send(struct room *room, struct node_msg *req)
{
	struct node_send_args *args = node_args_send(req);
	struct frame f;
	struct frame_msg *m = &f.u.msg;
	struct member *to = NULL;
	size_t len = args->text != NULL ? strlen(args->text) : 0;
	char list[PAPO_ERR_LEN / 2], nb[16];
	uint8_t answered[PAPO_KEY_LEN];
	int amb, has_answered = 0;

	if (keyring_gone(room->keyring)) {
		room_fail(room, req, 403, "this member was removed from "
		    "the room: nothing it writes reaches anyone");
		return;
	}
	if ((args->text == NULL || len == 0) && args->files == NULL) {
		room_fail(room, req, 400, "text is empty");
		return;
	}
	if (len > PAPO_BODY_MAX) {
		room_fail(room, req, 413, "text is %zu bytes; at most %d (%d KiB) "
		    "are allowed", len, PAPO_BODY_MAX, PAPO_BODY_MAX / 1024);
		return;
	}
	if (len > 0 && !utf8_valid(args->text, len)) {
		room_fail(room, req, 400, "text is not valid UTF-8");
		return;
	}
	if (files_text_check(room, req) == -1)
		return;     /* text forging a file's line */
	/* Files: the body is the text and the lines naming them
	 * (attach.h), which takes the text's place. */
	if (args->files != NULL) {
		char *body;

		if (files_body(room, req, &body, &len) == -1)
			return;
		free(args->text);
		args->text = body;
	}
	if (args->to != NULL && args->to[0] != '\0' &&
	    (to = member_lookup(room, args->to, &amb)) == NULL) {
		size_t off = 0;

		list[0] = '\0';
		for (size_t i = 0; i < members_n(room) && off < sizeof(list) - 70; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off,
			    "%s%s", i ? ", " : "", member_name(member_at(room, i), nb));
		req->code = 404;
		snprintf(req->err, sizeof(req->err), "%s '%s'; the members are: "
		    "%s", amb ? "more than one member is named" :
		    "no member is named", args->to, off ? list : "(none yet)");
		room->env.emit(room->env.arg, req);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	sec_msgid_new(m->id);
	strcpy(m->name, room->env.room->me);
	m->ts = loop_wall_ms();
	m->body = args->text;
	m->body_len = len;
	m->person = args->person;
	if (to == NULL && args->private) {
		room_fail(room, req, 400, "a private message needs an addressee "
		    "(to)");
		return;
	}
	if (to != NULL) {
		m->has_to = 1;
		memcpy(m->to, to->id, PAPO_KEY_LEN);
		if (args->private && deliver_seal(room, req, m, to, &len) == -1)
			return;
		m->body = args->text;
		m->body_len = len;
	}
	if (args->reply_to[0] != '\0') {
		if (!sec_msgid_valid(args->reply_to, NULL)) {
			room_fail(room, req, 400, "reply_to '%s' is not a message id",
			    args->reply_to);
			return;
		}
		m->has_reply_to = 1;
		strcpy(m->reply_to, args->reply_to);
		has_answered = deliver_author(room, m->reply_to, answered) == 0;
	}
	if (frame_msg_sign(m, room->env.keys, room->env.me) == -1) {
		room_fail(room, req, 500, "cannot sign the message");
		return;
	}
	/* A message too long to write out, then damping: a refused answer
	 * spends no token. */
	if (!deliver_fits(room, req, &f, len) ||
	    deliver_damped(room, req, has_answered ? answered : NULL) ||
	    deliver_rate(room, req))
		return;
	/*
	 * A send answered 500 stored nothing (docs/RELIABILITY.md, "What a
	 * send's answer means"): the outbox entry is written first, and
	 * taken back when the log's write, or the commit that makes both
	 * durable (the outbox's first), fails; the log's append undoes
	 * itself, and a failed commit cuts the round off.  A stray entry (one the take-back could not remove) names
	 * no message in the log and is dropped at the next start.
	 */
	if (store_outbox_add(room->env.store, m->id) == -1) {
		deliver_store_failed(room, req, errno);
		return;
	}
	if (store_add_msg(room->env.store, m) != 1) {
		int saved = errno;

		if (store_outbox_del(room->env.store, m->id) == -1)
			room_log(room, LOG_WARN, "cannot take message %s back out of "
			    "the outbox: %s; it is dropped at the next start",
			    m->id, strerror(errno));
		deliver_store_failed(room, req, saved);
		return;
	}
	deliver_hold_send(room, req, &f, to, has_answered ? answered : NULL);
}

/* Frames received. */

/* What a message received leads to once its line is durable (held
 * until then: commit_hold). */
enum held_kind {
	HELD_NEW,        /* passed on, acked, shown */
	HELD_OWN,        /* our own, come back: shown as sent */
	HELD_REACK,      /* its author sent it again: acked again */
};

struct held_msg {
	enum held_kind kind;
	struct frame_msg m;          /* its own copy of the body */
	uint8_t via[PAPO_KEY_LEN];   /* the member it came from */
	int has_via;
};

static void deliver_ack_stored(struct room *room, const struct frame_msg *m);

static void
held_msg_run(struct room *room, const struct held_msg *h, int durable)
{
	struct frame f;

	if (!durable)
		return;
	/* Retention and the files it names, for a durable message only
	 * (a compaction copies durable lines). */
	if (h->kind != HELD_REACK)
		deliver_stored(room, &h->m);
	if (h->kind == HELD_NEW) {
		memset(&f, 0, sizeof(f));
		f.type = FRAME_MSG;
		f.u.msg = h->m;
		members_flood(room, &f, h->has_via ? member_find(room, h->via) :
		    NULL);
		deliver_ack_stored(room, &h->m);
		room_emit_json(room, NODE_EV_MESSAGE, deliver_msg_json(room,
		    &h->m));
	} else if (h->kind == HELD_OWN)
		room_emit_json(room, NODE_EV_SENT, deliver_msg_json(room, &h->m));
	else
		deliver_ack_stored(room, &h->m);
}

static void
held_msg_durable(struct room *room, void *arg, int durable)
{
	struct held_msg *h = arg;

	held_msg_run(room, h, durable);
	frame_msg_clear(&h->m);
	free(h);
}

/* Holds what m leads to until its line (or the round's lines before a
 * retry) is durable; out of memory, the round is made durable now and m
 * taken on as it is. */
static void
deliver_hold(struct room *room, enum held_kind kind,
    const struct frame_msg *m, const struct member *via)
{
	struct held_msg *h = calloc(1, sizeof(*h));

	if (h != NULL) {
		h->kind = kind;
		h->m = *m;
		h->m.body = NULL;
		if (via != NULL) {
			memcpy(h->via, via->id, PAPO_KEY_LEN);
			h->has_via = 1;
		}
		if (m->body == NULL ||
		    (h->m.body = malloc(m->body_len + 1)) != NULL) {
			if (m->body != NULL)
				memcpy(h->m.body, m->body, m->body_len + 1);
			commit_hold(room, held_msg_durable, h);
			return;
		}
		/* The body borrowed from m: nothing of it freed here. */
		h->m.body = m->body;
		held_msg_run(room, h, commit_now(room) == 0);
		free(h);
		return;
	}
	if (commit_now(room) == 0) {
		struct held_msg now = { .kind = kind, .m = *m };

		held_msg_run(room, &now, 1);
	}
}

/* A message come from another member written to the log (taken in
 * by deliver_stored once durable): 1, or 0 when it was there already or
 * the disk refused it (said in the log). */
static int
deliver_store(struct room *room, const struct frame_msg *m)
{
	int r;

	if ((r = store_add_msg(room->env.store, m)) != 1) {
		if (r == -1)
			room_log(room, LOG_ERROR, "cannot store a message: %s",
			    strerror(errno));
		return 0;
	}
	return 1;
}

/*
 * A message of our own, come from another member: most often it came
 * back round, and we hold it.  When we do not (this member left the room
 * and joined it again, or lost its log), it is ours all the same, signed
 * by us: stored, and shown to watchers as sent, but neither acked (we
 * are its author) nor passed on (the member it came from has it).
 */
static void
deliver_own_back(struct room *room, const struct frame_msg *m)
{
	if (store_has(room->env.store, m->id) ||
	    store_below_floor(room->env.store, m->ts) || !deliver_store(room, m))
		return;
	deliver_hold(room, HELD_OWN, m, NULL);
}

/*
 * Acks m as stored here: not a private message between two others,
 * which its author waits for its addressee's ack of alone, and whose
 * author would otherwise read "delivered to carol" of what carol
 * cannot open.
 */
static void
deliver_ack_stored(struct room *room, const struct frame_msg *m)
{
	if (m->has_to && memcmp(m->to, room->env.me->pk, PAPO_KEY_LEN) != 0 &&
	    m->body != NULL && priv_is(m->body, m->body_len))
		return;
	deliver_ack(room, m, ACK_DELIVERED);
}

void
deliver_on_msg(struct room *room, struct link *l, struct frame *in)
{
	struct frame_msg *m = &in->u.msg;
	const struct removal *gone;
	struct member *author;
	uint8_t answered[PAPO_KEY_LEN];
	uint64_t nlog = 0;
	char id[PAPO_ID_LEN + 1];

	if (memcmp(m->from, room->env.me->pk, PAPO_KEY_LEN) == 0) {
		deliver_own_back(room, m);
		return;
	}
	if ((gone = keyring_removed(room->keyring, m->from)) != NULL &&
	    m->ts > gone->ts) {
		/* Written after its author was removed, whoever passes it
		 * on: not stored, acked nor passed on. */
		room_log(room, LOG_INFO, "message %s refused: its author was removed "
		    "from the room before it was written", m->id);
		return;
	}
	if (store_has(room->env.store, m->id)) {
		/* The author sending again means our ack was lost. */
		if (memcmp(l->m->id, m->from, PAPO_KEY_LEN) == 0)
			deliver_hold(room, HELD_REACK, m, NULL);
		return;
	}
	if (store_below_floor(room->env.store, m->ts)) {
		/* Retention dropped it, or would at once: it reached us, so
		 * its author hears so and stops sending it, but it is not
		 * stored again nor passed on. */
		room->delivery->below_floor++;
		room_log(room, LOG_DEBUG, "message %s is older than what this member "
		    "keeps: not stored", m->id);
		deliver_ack_stored(room, m);
		return;
	}
	/* Over the cap of its author's minute: neither stored nor acked nor
	 * passed on (docs/SECURITY.md, "Rate limits and reply loops"). */
	switch (limit_recv(room->limit, m->from, m->ts, loop_wall_ms(), &nlog)) {
	case LIMIT_KEEP:
		break;
	case LIMIT_DROP_LOG:
		sec_id_format(m->from, id);
		room_log(room, LOG_WARN, "dropped %llu message%s from %s (%s): over "
		    "%u a minute of its clock; said once a minute",
		    (unsigned long long)nlog, nlog == 1 ? "" : "s", m->name, id,
		    limit_recv_cap(room->limit));
		return;
	case LIMIT_DROP:
		return;
	}
	if (!deliver_store(room, m))
		return;
	upstream_put(room, m->id, l->m, m->from);
	/* A person's message, written at its author's daemon, ends that
	 * member's exchanges here too; an agent's answer counts. */
	if (m->person)
		limit_damp_person(room->limit, m->from, m->ts);
	limit_damp_note(room->limit, m->from, m->has_reply_to && !m->person &&
	    deliver_author(room, m->reply_to, answered) == 0 ? answered : NULL,
	    m->ts);
	/* A message just written is a sign of its author's life, and of a
	 * path to it through the member it came from. */
	if ((author = member_find(room, m->from)) != NULL && author->conn == NULL &&
	    m->ts + ALIVE_NS / NS_PER_MS >= loop_wall_ms()) {
		member_alive(author);
		if (l->m != NULL && l->m != author)
			author->via = l->m;
		member_presence_touch(room, author);
	}
	deliver_hold(room, HELD_NEW, m, l->m);
}

/* Start and stop. */

int
deliver_new(struct room *room)
{
	if ((room->delivery = calloc(1, sizeof(*room->delivery))) == NULL ||
	    outbox_new(room) == -1 || syncs_new(room) == -1 || retain_new(room) == -1)
		return -1;
	return 0;
}

void
deliver_start(struct room *room)
{
	outbox_start(room);
}

void
deliver_stop(struct room *room)
{
	/* What the last round wrote is made durable and said, before the
	 * connections close. */
	(void)commit_now(room);
	outbox_stop(room);
}

void
deliver_free(struct room *room)
{
	outbox_free(room);
	receipts_free(room);
	syncs_free(room);
	retain_free(room);
	free(room->delivery);
	room->delivery = NULL;
}

void
deliver_on_hello(struct room *room, const struct hello_in *in)
{
	deliver_sync_hello(room, in);
	outbox_through(room, in->m);
}

void
deliver_member_json(const struct room *room, const struct member *m, cJSON *e)
{
	cJSON_AddNumberToObject(e, "dropped",
	    (double)limit_dropped(room->limit, m->id));
}

void
deliver_summary_json(const struct room *room, cJSON *o)
{
	struct store_stats st;

	store_stats(room->env.store, &st);
	cJSON_AddNumberToObject(o, "messages", (double)st.msgs);
}

void
deliver_status_json(const struct room *room, cJSON *o)
{
	struct store_stats st;
	size_t nout;
	cJSON *rj;

	deliver_limits_json(room, o);
	store_stats(room->env.store, &st);
	nout = outbox_n(room);
	cJSON_AddNumberToObject(o, "outbox", (double)nout);
	cJSON_AddNumberToObject(o, "messages", (double)st.msgs);
	if ((rj = deliver_retention_json(room)) == NULL)
		cJSON_AddNullToObject(o, "retention");
	else {
		cJSON_AddNumberToObject(rj, "refused",
		    (double)room->delivery->below_floor);
		cJSON_AddItemToObject(o, "retention", rj);
	}
	cJSON_AddNumberToObject(o, "syncs_asked",
	    (double)deliver_syncs_asked(room));
}
