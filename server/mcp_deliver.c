/*
 * mcp_deliver.c: the room's messages given to agents (mcp_int.h;
 * docs/MCP.md, "Delivery").  Every message from another member goes to
 * every session: pushed on its streams when they are open, returned by
 * its pending wait, kept in its queue for its next wait otherwise.  A
 * message counts as given only once an answer carrying it was sent
 * whole (a flight): then its author gets a read receipt, and an answer
 * not taken gives a wait's messages back to the queue.  A request of
 * 2026-07-28 has no queue: its wait gets the next message.
 *
 * Main thread only; nothing here blocks: a wait is a suspended request
 * and a timer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "server/mcp_int.h"

/*
 * A room message from another member, parsed once and shared by every
 * queue and answer that holds it.
 */
struct mcp_msg {
	unsigned refs;
	uint64_t order;              /* arrival on this daemon: room order */
	cJSON *json;
	const char *id;              /* in json */
};

/* A wait tool call in progress. */
struct mcp_wait {
	struct mcp_session *s;
	struct http_req *r;
	struct http_stream *st;      /* answering as SSE (progress), or NULL */
	cJSON *id;                   /* the request's id */
	cJSON *token;                /* progress token, or NULL */
	char *from;                  /* only messages of this member */
	struct loop_timer *timer;    /* the deadline */
	struct loop_timer *tick;     /* progress every 10 s */
	uint64_t start, deadline;
	double timeout_s;
};

/* Shared messages. */

static struct mcp_msg *
mcp_msg_ref(struct mcp_msg *g)
{
	g->refs++;
	return g;
}

void
mcp_msg_unref(struct mcp_msg *g)
{
	if (g != NULL && --g->refs == 0) {
		cJSON_Delete(g->json);
		free(g);
	}
}

/* Read receipts for messages given to an agent ("ID ID ..."). */
static void
mcp_mark_read(struct mcp *m, const char *ids)
{
	struct node_msg *req;

	if (ids == NULL || ids[0] == '\0' ||
	    (req = node_msg_new(NODE_READ)) == NULL)
		return;
	if ((req->text = strdup(ids)) == NULL) {
		node_msg_free(req);
		return;
	}
	node_submit(m->node, req);
}

/* The ids of messages ("ID ID ..."), for read receipts; NULL on none. */
char *
mcp_ids(const cJSON *messages, struct mcp_msg *const *msgs, size_t n)
{
	const cJSON *msg;
	size_t len = 0, count = messages != NULL ?
	    (size_t)cJSON_GetArraySize(messages) : n;
	char *ids;

	if (count == 0 || (ids = malloc(count * (PAPO_MSGID_LEN + 1) + 1)) ==
	    NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(ids + len, msgs[i]->id, PAPO_MSGID_LEN);
		len += PAPO_MSGID_LEN;
		ids[len++] = ' ';
	}
	cJSON_ArrayForEach(msg, messages) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");

		if (cJSON_IsString(id) && strlen(id->valuestring) ==
		    PAPO_MSGID_LEN) {
			memcpy(ids + len, id->valuestring, PAPO_MSGID_LEN);
			len += PAPO_MSGID_LEN;
			ids[len++] = ' ';
		}
	}
	ids[len] = '\0';
	return ids;
}

/* A session's queue: what no wait, history or push gave its agent yet. */

static int
mcp_from_matches(const char *from, const cJSON *msg)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(msg, "from");
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(msg, "from_id");

	return from == NULL || (cJSON_IsString(n) &&
	    strcmp(n->valuestring, from) == 0) || (cJSON_IsString(i) &&
	    strcmp(i->valuestring, from) == 0);
}

/*
 * Puts g in s's queue in room order (after everything that arrived
 * before it: a message given back goes before what came since).  A full
 * queue lets its oldest go, counted in dropped.
 */
static void
mcp_queue_put(struct mcp_session *s, struct mcp_msg *g)
{
	size_t i;

	if (s->nqueue == MCP_UNSEEN_MAX) {
		if (g->order < s->queue[0]->order) {
			s->dropped++;
			return;
		}
		mcp_msg_unref(s->queue[0]);
		memmove(s->queue, s->queue + 1, --s->nqueue * sizeof(*s->queue));
		s->dropped++;
	}
	if (s->nqueue == s->capqueue) {
		size_t cap = s->capqueue != 0 ? s->capqueue * 2 : 8;
		struct mcp_msg **q;

		if (cap > MCP_UNSEEN_MAX)
			cap = MCP_UNSEEN_MAX;
		if ((q = realloc(s->queue, cap * sizeof(*q))) == NULL) {
			s->dropped++;
			return;
		}
		s->queue = q;
		s->capqueue = cap;
	}
	for (i = s->nqueue; i > 0 && s->queue[i - 1]->order > g->order; i--)
		;
	memmove(s->queue + i + 1, s->queue + i, (s->nqueue - i) *
	    sizeof(*s->queue));
	s->queue[i] = mcp_msg_ref(g);
	s->nqueue++;
}

/* Takes from s's queue the messages of from (NULL: all), oldest first:
 * their number, in a new array in *out. */
static size_t
mcp_queue_take(struct mcp_session *s, const char *from,
    struct mcp_msg ***out)
{
	size_t n = 0, keep = 0;

	*out = NULL;
	if (s->nqueue == 0 || (*out = malloc(s->nqueue * sizeof(**out))) ==
	    NULL)
		return 0;
	for (size_t i = 0; i < s->nqueue; i++) {
		if (mcp_from_matches(from, s->queue[i]->json))
			(*out)[n++] = s->queue[i];
		else
			s->queue[keep++] = s->queue[i];
	}
	s->nqueue = keep;
	if (n == 0) {
		free(*out);
		*out = NULL;
	}
	return n;
}

/* Drops from s's queue the messages whose ids are in ids (given to the
 * agent some other way: a history answer). */
static void
mcp_queue_forget(struct mcp_session *s, const char *ids)
{
	size_t keep = 0;

	for (size_t i = 0; i < s->nqueue; i++) {
		const char *p = strstr(ids, s->queue[i]->id);

		if (p != NULL && (p - ids) % (PAPO_MSGID_LEN + 1) == 0)
			mcp_msg_unref(s->queue[i]);
		else
			s->queue[keep++] = s->queue[i];
	}
	s->nqueue = keep;
}

/* Answers on their way. */

struct mcp_flight *
mcp_flight_new(struct mcp *m, struct mcp_session *s)
{
	struct mcp_flight *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->m = m;
	f->s = s;
	LIST_INSERT_HEAD(&m->flights, f, entry);
	return f;
}

void
mcp_flight_free(struct mcp_flight *f)
{
	if (f->m != NULL)
		LIST_REMOVE(f, entry);
	for (size_t i = 0; i < f->n; i++)
		mcp_msg_unref(f->msgs[i]);
	free(f->msgs);
	free(f->ids);
	free(f);
}

static void mcp_offer(struct mcp_session *s);

/*
 * The answer f rode on is over: sent whole, its messages were given
 * (read receipts; a history's leave the queue); not sent, a wait's go
 * back to the head of the queue, for the next wait.
 */
void
mcp_flight_done(void *arg, int sent)
{
	struct mcp_flight *f = arg;
	struct mcp_session *s = f->s;

	if (f->m != NULL && sent) {
		mcp_mark_read(f->m, f->ids);
		if (s != NULL && f->ids != NULL)
			mcp_queue_forget(s, f->ids);
	} else if (s != NULL && f->n > 0) {
		log_msg(LOG_DEBUG, "mcp: an answer of %zu messages was not "
		    "taken: they wait for the next wait", f->n);
		for (size_t i = 0; i < f->n; i++)
			mcp_queue_put(s, f->msgs[i]);
		mcp_offer(s);
	}
	mcp_flight_free(f);
}

/* The wait tool. */

/* Forgets a wait that has been answered, or whose client left. */
static void
mcp_wait_free(struct mcp_wait *w)
{
	struct mcp_session *s = w->s;

	s->wait = NULL;
	if (w->st == NULL)           /* a stream's request may be gone */
		http_req_watch(w->r, NULL, NULL);
	loop_timer_free(w->timer);
	loop_timer_free(w->tick);
	cJSON_Delete(w->id);
	cJSON_Delete(w->token);
	free(w->from);
	free(w);
	if (!s->closing)
		mcp_touch(s);
	mcp_session_release(s);
}

/*
 * The answer of a wait (or of a wait that had something at once): the
 * n messages of msgs (taken: this owns them), written to r, or to st
 * (SSE) and st closed.  Read receipts follow when the connection took
 * it; when it cannot (the client left), they go back to s's queue.
 */
static void
mcp_wait_answer(struct mcp_session *s, struct http_req *r,
    struct http_stream *st, const cJSON *id, struct mcp_msg **msgs, size_t n)
{
	struct mcp_flight *f = NULL;
	cJSON *res, *arr;
	char *text;

	if (n > 0 && (http_req_hungup(r) ||
	    (f = mcp_flight_new(s->m, s)) == NULL)) {
		for (size_t i = 0; i < n; i++) {
			if (!s->modern)
				mcp_queue_put(s, msgs[i]);
			mcp_msg_unref(msgs[i]);
		}
		free(msgs);
		msgs = NULL;
		n = 0;
	} else if (n > 0) {
		f->msgs = msgs;
		f->n = n;
		f->ids = mcp_ids(NULL, msgs, n);
		http_req_on_done(r, mcp_flight_done, f);
	}
	res = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(res, "messages");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemReferenceToArray(arr, msgs[i]->json);
	cJSON_AddBoolToObject(res, "timed_out", n == 0);
	if (s->dropped > 0) {
		cJSON_AddNumberToObject(res, "dropped", (double)s->dropped);
		s->dropped = 0;
	}
	text = mcp_result(id, mcp_tool_result(res, NULL), s->modern);
	if (st != NULL) {
		mcp_send(st, text);
		http_stream_close(st);
		cJSON_free(text);
	} else
		mcp_reply_text(r, 200, text);
}

/* Answers w with the n messages of msgs (owned; 0: the call timed out)
 * and frees it. */
void
mcp_wait_end(struct mcp_wait *w, struct mcp_msg **msgs, size_t n)
{
	mcp_wait_answer(w->s, w->r, w->st, w->id, msgs, n);
	mcp_wait_free(w);
}

/* Gives s's pending wait what its queue holds for it. */
static void
mcp_offer(struct mcp_session *s)
{
	struct mcp_msg **msgs;
	size_t n;

	if (s->wait != NULL && (n = mcp_queue_take(s, s->wait->from,
	    &msgs)) > 0)
		mcp_wait_end(s->wait, msgs, n);
}

static void
mcp_wait_timeout(void *arg)
{
	mcp_wait_end(arg, NULL, 0);
}

static void
mcp_wait_tick(void *arg)
{
	struct mcp_wait *w = arg;
	cJSON *o = cJSON_CreateObject(), *p;
	double elapsed = (double)(loop_now_ns() - w->start) / 1e9;
	char *text;

	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", "notifications/progress");
	p = cJSON_AddObjectToObject(o, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(w->token, 1));
	cJSON_AddNumberToObject(p, "progress", (int)elapsed);
	cJSON_AddNumberToObject(p, "total", w->timeout_s);
	cJSON_AddStringToObject(p, "message", "waiting for a message");
	text = mcp_print(o);
	mcp_send(w->st, text);
	cJSON_free(text);
	loop_timer_set(w->tick, loop_now_ns() + MCP_PROGRESS_NS);
}

/* The client of a pending wait left: of its SSE answer, or of a plain
 * one (the connection was cut).  It had taken nothing yet. */
static void
mcp_wait_gone(struct http_stream *st, void *arg)
{
	(void)st;
	mcp_wait_free(arg);
}

static void
mcp_wait_left(struct http_req *r, void *arg)
{
	(void)r;
	mcp_wait_free(arg);
}

/*
 * notifications/cancelled for a pending wait: it ends at once with no
 * answer (for the plain one, 202 and no body, as a notification gets;
 * an SSE one's stream just ends).  It had taken nothing yet.
 */
int
mcp_wait_cancel(struct mcp_session *s, const cJSON *rid)
{
	struct mcp_wait *w = s->wait;

	if (w == NULL || !cJSON_Compare(w->id, rid, 1))
		return 0;
	if (w->st != NULL)
		http_stream_close(w->st);
	else
		http_reply(w->r, 202, "");
	mcp_wait_free(w);
	return 1;
}

void
tool_wait(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *args, const cJSON *meta)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "timeout_s");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(args, "from");
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	struct mcp_msg **ready;
	struct mcp_wait *w;
	double timeout = MCP_WAIT_DEFAULT_S;
	size_t n;

	if (t != NULL && (!cJSON_IsNumber(t) || !(t->valuedouble >= 0 &&
	    t->valuedouble <= MCP_WAIT_MAX_S))) {
		mcp_reply_error(r, 200, id, -32602, "timeout_s must be a number "
		    "of seconds from 0 to 55");
		return;
	}
	if (t != NULL)
		timeout = t->valuedouble;
	if (f != NULL && !cJSON_IsString(f)) {
		mcp_reply_error(r, 200, id, -32602, "from must be a member name");
		return;
	}
	if (s->wait != NULL) {
		mcp_reply_text(r, 200, mcp_result(id, mcp_tool_result(NULL,
		    "another wait of this session is in progress: wait for its "
		    "answer, or cancel it"), s->modern));
		return;
	}
	/* Messages that came while nobody looked go out at once. */
	n = mcp_queue_take(s, f != NULL ? f->valuestring : NULL, &ready);
	if (n > 0 || timeout == 0) {
		mcp_wait_answer(s, r, NULL, id, ready, n);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		mcp_reply_error(r, 200, id, -32603, "out of memory");
		return;
	}
	w->s = s;
	w->r = r;
	w->id = cJSON_Duplicate(id, 1);
	w->from = f != NULL ? strdup(f->valuestring) : NULL;
	w->timeout_s = timeout;
	w->start = loop_now_ns();
	w->deadline = w->start + (uint64_t)(timeout * 1e9);
	w->timer = loop_timer_new(s->m->loop, mcp_wait_timeout, w);
	loop_timer_set(w->timer, w->deadline);
	s->wait = w;
	/* With a progress token, answer as a stream: progress notifications
	 * every 10 s, then the result. */
	if (tok != NULL && (cJSON_IsString(tok) || cJSON_IsNumber(tok)) &&
	    mcp_accepts(r, "text/event-stream")) {
		http_reply_header(r, "X-Accel-Buffering", "no");
		w->st = http_stream_open(r, mcp_wait_gone, w);
	}
	if (w->st != NULL) {
		char head[48];
		int k;

		/* Priming event, as on GET streams (2026-07-28 streams are
		 * not resumed, and have no event ids). */
		if (!s->modern) {
			s->seq++;
			k = snprintf(head, sizeof(head), "id: %" PRIu64
			    "\ndata: \n\n", s->seq);
			http_stream_write(w->st, head, (size_t)k);
		}
		w->token = cJSON_Duplicate(tok, 1);
		w->tick = loop_timer_new(s->m->loop, mcp_wait_tick, w);
		loop_timer_set(w->tick, w->start + MCP_PROGRESS_NS);
		return;
	}
	http_req_watch(r, mcp_wait_left, w);
	http_defer(r);
}

/* Pushing a message to every session. */

/* The notifications a message makes: params built once for every
 * session, and their text for the GET streams' events. */
struct mcp_note {
	cJSON *channel;              /* notifications/claude/channel */
	cJSON *updated;              /* notifications/resources/updated */
	cJSON *log;                  /* notifications/message */
	struct mcp_text *tchannel, *tupdated, *tlog;
};

static void
mcp_note_new(struct mcp_note *nt, const cJSON *msg)
{
	const char *keys[] = { "from", "id", "reply_to", "to" };
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(msg, "text");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(msg, "ts");
	cJSON *meta;
	char num[32];

	nt->channel = cJSON_CreateObject();
	cJSON_AddStringToObject(nt->channel, "content", cJSON_IsString(text) ?
	    text->valuestring : "");
	meta = cJSON_AddObjectToObject(nt->channel, "meta");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, keys[i]);

		if (cJSON_IsString(v))
			cJSON_AddStringToObject(meta, keys[i], v->valuestring);
	}
	snprintf(num, sizeof(num), "%.0f", cJSON_IsNumber(ts) ?
	    ts->valuedouble : 0);
	cJSON_AddStringToObject(meta, "ts", num);
	nt->updated = cJSON_CreateObject();
	cJSON_AddStringToObject(nt->updated, "uri", MCP_HISTORY_URI);
	nt->log = cJSON_CreateObject();
	cJSON_AddStringToObject(nt->log, "level", "info");
	cJSON_AddStringToObject(nt->log, "logger", "papo");
	cJSON_AddItemToObject(nt->log, "data", cJSON_Duplicate(msg, 1));
	nt->tchannel = mcp_text_new(mcp_notification(
	    "notifications/claude/channel", cJSON_Duplicate(nt->channel, 1)));
	nt->tupdated = mcp_text_new(mcp_notification(
	    "notifications/resources/updated", cJSON_Duplicate(nt->updated, 1)));
	nt->tlog = mcp_text_new(mcp_notification("notifications/message",
	    cJSON_Duplicate(nt->log, 1)));
}

static void
mcp_note_clear(struct mcp_note *nt)
{
	cJSON_Delete(nt->channel);
	cJSON_Delete(nt->updated);
	cJSON_Delete(nt->log);
	mcp_text_unref(nt->tchannel);
	mcp_text_unref(nt->tupdated);
	mcp_text_unref(nt->tlog);
}

/*
 * Pushes a message to a session's streams: its newest GET stream gets
 * what the session asked for (with event ids, kept for replay), each
 * listen stream what it subscribed to, tagged.  1 when the message was
 * given to the agent: written as notifications/claude/channel to a live
 * stream of a session (or listen stream) that opted in.  To the others
 * the push is a courtesy, and the message stays queued for their wait.
 */
static int
mcp_push(struct mcp_session *s, const struct mcp_note *nt)
{
	struct mcp_stream *ms, *get = mcp_get_stream(s);
	int given = 0;

	if (get != NULL && nt->tchannel != NULL) {
		/* Asked before writing, and only where a push can count: a
		 * courtesy push costs no look at the socket. */
		given = s->channels && http_stream_live(get->st);
		mcp_event(s, get, nt->tchannel);
		if (s->subscribed && nt->tupdated != NULL)
			mcp_event(s, get, nt->tupdated);
		if (s->level >= 0 && s->level <= 1 && nt->tlog != NULL)
			mcp_event(s, get, nt->tlog);   /* debug or info */
	}
	LIST_FOREACH(ms, &s->streams, entry) {
		if (ms->sub == NULL)
			continue;
		if ((ms->want & MCP_WANT_CHANNEL) && http_stream_live(ms->st)) {
			mcp_send_tagged(ms, "notifications/claude/channel",
			    nt->channel);
			given = 1;
		}
		if (ms->want & MCP_WANT_HISTORY)
			mcp_send_tagged(ms, "notifications/resources/updated",
			    nt->updated);
	}
	return given;
}

/*
 * A stream that delivers (a GET stream of a session that opted in, a
 * listen stream with "claude/channel") opened: what the session's
 * queue held goes out on it, given.
 */
void
mcp_flush(struct mcp_session *s, struct mcp_stream *ms)
{
	struct mcp_msg **msgs;
	size_t n = mcp_queue_take(s, NULL, &msgs);
	char *ids;

	for (size_t i = 0; i < n; i++) {
		struct mcp_note nt;

		mcp_note_new(&nt, msgs[i]->json);
		if (ms->sub == NULL && nt.tchannel != NULL)
			mcp_event(s, ms, nt.tchannel);
		else
			mcp_send_tagged(ms, "notifications/claude/channel",
			    nt.channel);
		mcp_note_clear(&nt);
	}
	if ((ids = mcp_ids(NULL, msgs, n)) != NULL)
		mcp_mark_read(s->m, ids);
	free(ids);
	for (size_t i = 0; i < n; i++)
		mcp_msg_unref(msgs[i]);
	free(msgs);
}

void
mcp_message(struct mcp *m, const char *json)
{
	struct mcp_session *s, *next;
	struct mcp_note nt;
	struct mcp_msg *g;
	const cJSON *id;
	int given = 0;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return;
	g->refs = 1;
	g->order = ++m->order;
	id = cJSON_GetObjectItemCaseSensitive(g->json = cJSON_Parse(json),
	    "id");
	if (!cJSON_IsString(id) || strlen(id->valuestring) != PAPO_MSGID_LEN) {
		mcp_msg_unref(g);
		return;
	}
	g->id = id->valuestring;
	mcp_note_new(&nt, g->json);
	for (s = TAILQ_FIRST(&m->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (mcp_push(s, &nt)) {
			given = 1;
		} else if (!s->modern) {
			mcp_queue_put(s, g);
			mcp_offer(s);
		} else if (s->wait != NULL && mcp_from_matches(s->wait->from,
		    g->json)) {
			struct mcp_msg **one = malloc(sizeof(*one));

			/* A 2026-07-28 wait gets the next message; this may
			 * end its request's session. */
			if (one != NULL) {
				one[0] = mcp_msg_ref(g);
				mcp_wait_end(s->wait, one, 1);
			}
		}
	}
	if (given)
		mcp_mark_read(m, g->id);
	mcp_note_clear(&nt);
	mcp_msg_unref(g);
}

