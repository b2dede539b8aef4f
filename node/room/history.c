/*
 * history.c: history and sync, on the node thread (history.h;
 * docs/PROTOCOL.md, "Gossip"; docs/RELIABILITY.md).  It writes a message
 * as the API and events show it, answers history requests (pages in
 * time order with a cursor, and what an agent was not given), asks
 * members for a sync when a hello shows histories that differ or a read
 * found a damaged line, and answers their sync requests with what they
 * lack.  It never blocks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/files.h"
#include "node/room/history.h"
#include "node/room/receipt.h"
#include "node/wire/private.h"

#define SYNC_SEND_MAX 20000       /* messages one sync answer may carry */
#define HISTORY_MAX 500
#define HISTORY_BYTES (1024 * 1024) /* log bytes one history page reads at most */

/* Its own: what it counts. */
struct syncs {
	uint64_t asked;             /* sync requests sent */
};

/*
 * Whether name is also the name of a member other than the one of id
 * (this member included): names are not unique (a member may take the
 * owner's), so what shows a message's author tells them apart.
 */
static int
deliver_name_shared(const struct room *room, const uint8_t id[PAPO_KEY_LEN],
    const char *name)
{
	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) != 0 &&
	    strcmp(room->env.room->me, name) == 0)
		return 1;
	for (size_t i = 0; i < members_n(room); i++)
		if (memcmp(member_at(room, i)->id, id, PAPO_KEY_LEN) != 0 &&
		    strcmp(member_at(room, i)->name, name) == 0)
			return 1;
	return 0;
}

enum deliver_seen
deliver_view(const struct room *room, const struct frame_msg *m,
    struct frame_msg *view, struct buf *inner)
{
	switch (priv_view(room->env.me, room->env.keys->id, m, view, inner)) {
	case PRIV_NOT_PRIVATE:
		*view = *m;
		return SEEN_PLAIN;
	case PRIV_OK:
		return SEEN_PRIVATE;
	default:
		return SEEN_NOT;
	}
}

/* The message JSON of what we see of m; "private": true when only its
 * author and its addressee read it.  from_label is what shows its
 * author: the name, or "name (id 1a2b3c4d…)" while another member has
 * that name too; from_role the author's role now. */
static cJSON *
history_msg_json(const struct room *room, const struct frame_msg *m,
    int private)
{
	cJSON *o = cJSON_CreateObject();
	char id[PAPO_ID_LEN + 1], nb[16], label[PAPO_NAME_MAX + 32];

	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "from", m->name);
	sec_id_format(m->from, id);
	cJSON_AddStringToObject(o, "from_id", id);
	cJSON_AddStringToObject(o, "from_role", role_of(room, m->from));
	if (deliver_name_shared(room, m->from, m->name))
		snprintf(label, sizeof(label), "%s (id %.8s…)", m->name, id);
	else
		snprintf(label, sizeof(label), "%s", m->name);
	cJSON_AddStringToObject(o, "from_label", label);
	if (m->has_to) {
		const struct member *t = member_find(room, m->to);

		sec_id_format(m->to, id);
		cJSON_AddStringToObject(o, "to", memcmp(m->to, room->env.me->pk,
		    PAPO_KEY_LEN) == 0 ? room->env.room->me : t != NULL ?
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
	cJSON_AddBoolToObject(o, "private", private);
	/* "text", and "files" when it names some. */
	files_msg_json((struct room *)room, m, o);
	return o;
}

cJSON *
deliver_msg_json(const struct room *room, const struct frame_msg *m)
{
	struct frame_msg view;
	struct buf inner;
	enum deliver_seen seen = deliver_view(room, m, &view, &inner);
	cJSON *o = NULL;

	if (seen != SEEN_NOT)
		o = history_msg_json(room, &view, seen == SEEN_PRIVATE);
	buf_free(&inner);
	return o;
}

#define RECEIPTS_MAX 256         /* receipts one message shows at most */

/*
 * An own message's receipts as the log keeps them (store_acks), so that
 * they outlive a restart: "receipts": [{by, by_id, state, ts}], one per
 * member and state, oldest first.  Others' messages have none here.
 */
static void
history_receipts(struct room *room, const struct frame_msg *m, cJSON *o)
{
	struct frame_ack *v;
	cJSON *arr;
	long n;

	if (memcmp(m->from, room->env.me->pk, PAPO_KEY_LEN) != 0 ||
	    (v = calloc(RECEIPTS_MAX, sizeof(*v))) == NULL)
		return;
	n = store_acks(room->env.store, m->id, v, RECEIPTS_MAX);
	arr = cJSON_AddArrayToObject(o, "receipts");
	for (long i = 0; i < n; i++) {
		struct member *by = member_find(room, v[i].by);
		char nb[16], id[PAPO_ID_LEN + 1];
		int again = 0;
		cJSON *r;

		for (long k = 0; k < i && !again; k++)
			again = v[k].state == v[i].state &&
			    memcmp(v[k].by, v[i].by, PAPO_KEY_LEN) == 0;
		if (again)
			continue;
		sec_id_format(v[i].by, id);
		r = cJSON_CreateObject();
		/* A member removed since: its id says who it was. */
		cJSON_AddStringToObject(r, "by", by != NULL ?
		    member_name(by, nb) : id);
		cJSON_AddStringToObject(r, "by_id", id);
		cJSON_AddStringToObject(r, "state",
		    v[i].state == ACK_READ ? "read" : "delivered");
		cJSON_AddNumberToObject(r, "ts", (double)v[i].ts);
		cJSON_AddItemToArray(arr, r);
	}
	free(v);
}

/*
 * Damaged lines a read came upon (store_damaged) are messages this
 * member no longer holds: every member connected is asked for a sync at
 * once, which brings them back (docs/RELIABILITY.md, "A damaged line").
 */
static void
deliver_heal(struct room *room)
{
	if (store_damaged(room->env.store) == 0)
		return;
	for (size_t i = 0; i < members_n(room); i++)
		if (member_at(room, i)->conn != NULL)
			deliver_sync_request(room, member_at(room, i));
}

/* The log could not be read for req: v (the messages read) is freed. */
static void
history_failed(struct room *room, struct node_msg *req, struct frame_msg *v)
{
	int saved = errno;

	free(v);
	room_fail(room, req, 500, "cannot read the history: %s",
	    strerror(saved));
}

/*
 * History after a message (after_set), and the messages ids
 * names: what an agent was not given before its daemon stopped, to give
 * it now (server/mcp/mcp_deliver.c).
 * Own messages are left out; "last" is the log's newest message of any
 * author, "more" how many older ones than those returned came after.
 */
static void
deliver_after(struct room *room, struct node_msg *req)
{
	struct node_history_args *args = node_args_history(req);
	size_t limit = args->limit == 0 || args->limit > HISTORY_MAX ?
	    HISTORY_MAX : args->limit, more;
	struct frame_msg *v = calloc(limit, sizeof(*v));
	char last[PAPO_MSGID_LEN + 1];
	cJSON *o, *arr;
	long n;

	if (v == NULL) {
		room_fail(room, req, 500, "out of memory");
		return;
	}
	n = store_after(room->env.store, args->after[0] != '\0' ? args->after :
	    NULL, limit, v, &more, last);
	if (n < 0) {
		history_failed(room, req, v);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	/* First the ids asked for by name (args->ids: "ID ID ..."), older
	 * than after: what an agent had not been given. */
	for (char *save = NULL, *id = args->ids != NULL ?
	    strtok_r(args->ids, " ", &save) : NULL; id != NULL;
	    id = strtok_r(NULL, " ", &save)) {
		struct frame_msg one;

		if (store_get(room->env.store, id, &one) == 0) {
			/* NULL (not ours to see) adds nothing. */
			cJSON_AddItemToArray(arr, deliver_msg_json(room, &one));
			frame_msg_clear(&one);
		}
	}
	for (long i = 0; i < n; i++) {
		if (memcmp(v[i].from, room->env.me->pk, PAPO_KEY_LEN) != 0)
			cJSON_AddItemToArray(arr, deliver_msg_json(room, &v[i]));
		frame_msg_clear(&v[i]);
	}
	free(v);
	cJSON_AddStringToObject(o, "last", last);
	cJSON_AddNumberToObject(o, "more", (double)more);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	room->env.emit(room->env.arg, req);
	deliver_heal(room);
}

void
deliver_history(struct room *room, struct node_msg *req)
{
	struct node_history_args *args = node_args_history(req);
	size_t limit = args->limit == 0 ? 20 : args->limit;
	struct store_query q;
	struct store_cursor next;
	struct frame_msg *v = NULL;
	struct member *from = NULL;
	int amb;
	cJSON *o, *arr, *ret;
	long n;

	if (args->after_set) {
		deliver_after(room, req);
		return;
	}
	if (limit > HISTORY_MAX)
		limit = HISTORY_MAX;
	memset(&q, 0, sizeof(q));
	if (args->from != NULL && args->from[0] != '\0') {
		if (strcmp(args->from, room->env.room->me) == 0)
			q.from = room->env.me->pk;
		else if ((from = member_lookup(room, args->from, &amb)) ==
		    NULL) {
			room_fail(room, req, 404, "no member is named '%s'",
			    args->from);
			return;
		} else
			q.from = from->id;
	}
	if ((v = calloc(limit, sizeof(*v))) == NULL) {
		room_fail(room, req, 500, "out of memory");
		return;
	}
	q.n = limit;
	q.bytes = HISTORY_BYTES;
	q.before = args->before;
	q.before_id = args->before_id;
	q.since = args->since;
	n = store_history(room->env.store, &q, v, &next);
	if (n < 0 && errno == EINVAL) {
		free(v);
		room_fail(room, req, 400, "before_id '%s' is not a message id",
		    args->before_id);
		return;
	}
	if (n < 0) {
		history_failed(room, req, v);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	if ((ret = deliver_retention_json(room)) != NULL)
		cJSON_AddItemToObject(o, "retention", ret);
	epoch_history_json(room, o);
	for (long i = 0; i < n; i++) {
		cJSON *mj = deliver_msg_json(room, &v[i]);

		if (mj != NULL) {
			history_receipts(room, &v[i], mj);
			cJSON_AddItemToArray(arr, mj);
		}
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
	room->env.emit(room->env.arg, req);
	deliver_heal(room);
}

void
deliver_sync_request(struct room *room, struct member *to)
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
	n = store_ids(room->env.store, FRAME_SYNC_MAX, 0, f.u.sync.have, ts);
	{
		struct store_stats st;

		store_stats(room->env.store, &st);
		/* With all of our history in the list, ask from the start;
		 * else from the oldest message listed. */
		f.u.sync.since = n > 0 && st.msgs > FRAME_SYNC_MAX ? ts[0] : 0;
		/* Nothing retention dropped is asked for again. */
		if (f.u.sync.since < st.floor)
			f.u.sync.since = st.floor;
		room->syncs->asked++;
		f.u.sync.n = (size_t)n;
		member_send(room, to, &f);
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
deliver_on_sync(struct room *room, struct link *l, struct frame *in)
{
	struct frame_sync *s = &in->u.sync;
	char (*ids)[PAPO_MSGID_LEN + 1];
	struct frame f;
	long n;
	size_t sent = 0;

	/* Only durable lines are given: what this round wrote is synced
	 * first (and released). */
	if (commit_now(room) == -1 ||
	    (ids = calloc(SYNC_SEND_MAX, sizeof(*ids))) == NULL)
		return;
	if (s->n > 0)
		qsort(s->have, s->n, sizeof(*s->have), id_cmp);
	/* The ids come from the index; only the messages the other lacks
	 * are read. */
	n = store_ids(room->env.store, SYNC_SEND_MAX, s->since, ids, NULL);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	for (long i = 0; i < n; i++) {
		if (s->n > 0 && bsearch(ids[i], s->have, s->n,
		    sizeof(*s->have), id_cmp) != NULL)
			continue;
		if (store_get(room->env.store, ids[i], &f.u.msg) == -1)
			continue;
		if (member_send(room, l->m, &f) == 0)
			sent++;
		frame_msg_clear(&f.u.msg);
	}
	free(ids);
	if (sent > 0)
		log_msg(LOG_INFO, "sent %zu messages to %s, who missed them",
		    sent, l->m->name);
	deliver_heal(room);
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
deliver_sync_hello(struct room *room, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;
	struct store_stats st;
	uint8_t digest[PAPO_KEY_LEN];

	store_stats(room->env.store, &st);
	store_digest(room->env.store, digest);
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
			deliver_sync_request(room, m);
		}
	}
}

uint64_t
deliver_syncs_asked(const struct room *room)
{
	return room->syncs->asked;
}

int
syncs_new(struct room *room)
{
	if ((room->syncs = calloc(1, sizeof(*room->syncs))) == NULL)
		return -1;
	return 0;
}

void
syncs_free(struct room *room)
{
	free(room->syncs);
	room->syncs = NULL;
}
