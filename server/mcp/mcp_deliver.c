/*
 * mcp_deliver.c: the room's messages given to agents (mcp_int.h;
 * docs/MCP.md, "Delivery").  Every message from another member goes to
 * every agent (the daemon's own, and any named by ?agent=): returned by
 * a pending wait of one of its sessions, else pushed where a push
 * counts, else kept in its queue for its next wait.  A message counts as
 * given only once an answer carrying it was sent whole (a flight): then
 * its author gets a read receipt, and an answer not taken gives a wait's
 * messages back to the queue.  What an agent was not given is kept in
 * agents.json and read back from the log at start, so neither a session
 * ending nor the daemon restarting loses it.  Waking an agent left idle
 * with something queued is mcp_wake.c's, above this file: it is told of
 * each change through m->wake_check.
 *
 * Main thread only; nothing here blocks: a wait is a suspended request
 * and a timer; agents.json is written by a timer, at most 5 times a
 * second.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_int.h"

#define MCP_SAVE_NS (200ull * NS_PER_MS)      /* agents.json at most so often */
#define MCP_AGENTS_FILE_MAX (1024 * 1024)

/* A wait tool call in progress. */
struct mcp_wait {
	struct mcp_session *s;
	struct http_req *r;
	struct http_stream *st;      /* answering as SSE (progress), or NULL */
	cJSON *id;                   /* the request's id */
	cJSON *token;                /* progress token, or NULL */
	char *from;                  /* only messages of this member */
	char room[PAPO_ROOMID_LEN + 1];  /* only of this room; "": any */
	char room_name[PAPO_NAME_MAX + 1];  /* its name, for when it is left */
	struct loop_timer *timer;    /* the deadline */
	struct loop_timer *tick;     /* progress every 10 s */
	uint64_t start, deadline;
	double timeout_s;
};

static void mcp_agents_dirty(struct mcp *m);

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

/* An agent's queue: what no wait, history or push gave it yet. */

/* Whether g is of room (NULL or "": any) and of member from (NULL:
 * any). */
static int
mcp_matches(const char *from, const char *room, const struct mcp_msg *g)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(g->json, "from");
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(g->json, "from_id");

	if (room != NULL && room[0] != '\0' && strcmp(room, g->room) != 0)
		return 0;
	return from == NULL || (cJSON_IsString(n) &&
	    strcmp(n->valuestring, from) == 0) || (cJSON_IsString(i) &&
	    strcmp(i->valuestring, from) == 0);
}

size_t
mcp_unread(const struct mcp_agent *a, const char *room)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nqueue; i++)
		n += mcp_matches(NULL, room, a->queue[i]);
	return n;
}

/* a's position in room; NULL when it has none there. */
static struct mcp_pos *
mcp_pos(struct mcp_agent *a, const char *room)
{
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) == 0)
			return &a->pos[i];
	return NULL;
}

/* a's position in room, made (nothing seen yet) when new; NULL when the
 * agent has one in every room a daemon holds already. */
static struct mcp_pos *
mcp_pos_add(struct mcp_agent *a, const char *room)
{
	struct mcp_pos *p = mcp_pos(a, room);

	if (p != NULL || a->npos == PAPO_ROOMS_MAX)
		return p;
	p = &a->pos[a->npos++];
	memset(p, 0, sizeof(*p));
	snprintf(p->room, sizeof(p->room), "%s", room);
	return p;
}

int
mcp_restoring(const struct mcp_agent *a)
{
	for (size_t i = 0; i < a->npos; i++)
		if (a->pos[i].restoring)
			return 1;
	return 0;
}

static int
mcp_queue_has(const struct mcp_agent *a, const char *id)
{
	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->id, id) == 0)
			return 1;
	return 0;
}

/*
 * Puts g in a's queue in room order (after everything that arrived
 * before it: a message given back goes before what came since), once.
 * A full queue lets its oldest go, counted in dropped.  A message that
 * finds the queue empty starts a burst, which may wake the agent.
 */
static void
mcp_queue_put(struct mcp_agent *a, struct mcp_msg *g)
{
	size_t i;

	if (mcp_queue_has(a, g->id))
		return;
	/* The cap is per room: a busy room does not push out another's. */
	if (mcp_unread(a, g->room) == MCP_UNSEEN_MAX) {
		for (i = 0; strcmp(a->queue[i]->room, g->room) != 0; i++)
			;
		if (g->order < a->queue[i]->order) {
			a->dropped++;
			return;
		}
		mcp_msg_unref(a->queue[i]);
		memmove(a->queue + i, a->queue + i + 1, (--a->nqueue - i) *
		    sizeof(*a->queue));
		a->dropped++;
	}
	if (a->nqueue == a->capqueue) {
		size_t cap = a->capqueue != 0 ? a->capqueue * 2 : 8;
		struct mcp_msg **q;

		if (cap > MCP_UNSEEN_MAX * PAPO_ROOMS_MAX)
			cap = MCP_UNSEEN_MAX * PAPO_ROOMS_MAX;
		if ((q = realloc(a->queue, cap * sizeof(*q))) == NULL) {
			a->dropped++;
			return;
		}
		a->queue = q;
		a->capqueue = cap;
	}
	if (a->nqueue == 0)
		a->burst++;
	for (i = a->nqueue; i > 0 && a->queue[i - 1]->order > g->order; i--)
		;
	memmove(a->queue + i + 1, a->queue + i, (a->nqueue - i) *
	    sizeof(*a->queue));
	a->queue[i] = mcp_msg_ref(g);
	a->nqueue++;
	mcp_agents_dirty(a->m);
}

/* Takes from a's queue the messages of from (NULL: all) in room (NULL
 * or "": every room), oldest first: their number, in a new array in
 * *out. */
static size_t
mcp_queue_take(struct mcp_agent *a, const char *from, const char *room,
    struct mcp_msg ***out)
{
	size_t n = 0, keep = 0;

	*out = NULL;
	if (a->nqueue == 0 || (*out = malloc(a->nqueue * sizeof(**out))) ==
	    NULL)
		return 0;
	for (size_t i = 0; i < a->nqueue; i++) {
		if (mcp_matches(from, room, a->queue[i]))
			(*out)[n++] = a->queue[i];
		else
			a->queue[keep++] = a->queue[i];
	}
	a->nqueue = keep;
	if (n == 0) {
		free(*out);
		*out = NULL;
	} else
		mcp_agents_dirty(a->m);
	return n;
}

/* Drops from a's queue the messages whose ids are in ids (given to the
 * agent some other way: a history answer). */
static void
mcp_queue_forget(struct mcp_agent *a, const char *ids)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->nqueue; i++) {
		const char *p = strstr(ids, a->queue[i]->id);

		if (p != NULL && (p - ids) % (PAPO_MSGID_LEN + 1) == 0)
			mcp_msg_unref(a->queue[i]);
		else
			a->queue[keep++] = a->queue[i];
	}
	if (keep != a->nqueue)
		mcp_agents_dirty(a->m);
	a->nqueue = keep;
}

/* Answers on their way. */

struct mcp_flight *
mcp_flight_new(struct mcp *m, struct mcp_session *s)
{
	struct mcp_flight *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->m = m;
	f->a = s->a;
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

static void mcp_offer(struct mcp_agent *a);

/*
 * The answer f rode on is over: sent whole, its messages were given
 * (read receipts; a history's leave the queue); not sent, a wait's go
 * back to the head of the queue, for the next wait.
 */
void
mcp_flight_done(void *arg, int sent)
{
	struct mcp_flight *f = arg;
	struct mcp_agent *a = f->a;

	if (f->m != NULL && sent) {
		mcp_mark_read(f->m, f->ids);
		if (a != NULL && f->ids != NULL) {
			mcp_queue_forget(a, f->ids);
			mcp_agent_active(a);
		}
		if (a != NULL)
			mcp_agents_dirty(a->m);   /* in flight no more */
	} else if (a != NULL && f->n > 0) {
		log_msg(LOG_DEBUG, "mcp: an answer of %zu messages was not "
		    "taken: they wait for the next wait", f->n);
		for (size_t i = 0; i < f->n; i++)
			mcp_queue_put(a, f->msgs[i]);
		mcp_offer(a);
		a->m->wake_check(a);
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
	mcp_agent_active(s->a);
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
	/* The wait that kept its agent busy is over: if something is left
	 * for it (another wait's, given back), it may be idle soon. */
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
			mcp_queue_put(s->a, msgs[i]);
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
	if (s->a->dropped > 0) {
		cJSON_AddNumberToObject(res, "dropped", (double)s->a->dropped);
		s->a->dropped = 0;
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

/* Gives the pending waits of a's sessions what its queue holds for
 * them, the session used longest ago first. */
static void
mcp_offer(struct mcp_agent *a)
{
	struct mcp_session *s, *next, *last;
	struct mcp_msg **msgs;
	size_t n;

	/* A wait that ends moves its session to the end of the line (or
	 * ends it): the walk stops at the session that was last when it
	 * began, so that none is met twice. */
	last = TAILQ_LAST(&a->m->sessions, mcp_sessions);
	for (s = TAILQ_FIRST(&a->m->sessions); s != NULL && a->nqueue > 0;
	    s = next) {
		next = s != last ? TAILQ_NEXT(s, entry) : NULL;
		if (s->a == a && s->wait != NULL && (n = mcp_queue_take(a,
		    s->wait->from, s->wait->room, &msgs)) > 0)
			mcp_wait_end(s->wait, msgs, n);
	}
}

/* Whether a session of a has a wait pending that msg would answer
 * (NULL: any). */
int
mcp_waiting(const struct mcp_agent *a, const struct mcp_msg *msg)
{
	const struct mcp_session *s;

	TAILQ_FOREACH(s, &a->m->sessions, entry)
		if (s->a == a && s->wait != NULL && (msg == NULL ||
		    mcp_matches(s->wait->from, s->wait->room, msg)))
			return 1;
	return 0;
}

/*
 * The room w waits on was left (papo leave, DELETE of the room): no
 * message can come from it, so w ends now, as a tool error that says so
 * and names the rooms left, rather than at its timeout.
 */
static void
mcp_wait_room_left(struct mcp_wait *w)
{
	struct mcp_session *s = w->s;
	char names[160], msg[PAPO_ERR_LEN + 320], *text;
	cJSON *res, *o;

	mcp_room_names(s->m, names, sizeof(names));
	snprintf(msg, sizeof(msg), "wait: room %s (%.8s) was left by this "
	    "daemon while this wait was pending: no message will come from it; "
	    "%s (the rooms now: %s)", w->room_name, w->room, s->room[0] !=
	    '\0' ? "this session is bound to it: start a new session" :
	    "call wait without room, or with another room", names[0] != '\0' ?
	    names : "none");
	res = mcp_tool_result(NULL, msg);
	o = cJSON_AddObjectToObject(res, "structuredContent");
	cJSON_AddStringToObject(o, "error", msg);
	cJSON_AddBoolToObject(o, "left", 1);
	cJSON_AddStringToObject(o, "room", w->room_name);
	cJSON_AddStringToObject(o, "room_id", w->room);
	cJSON_AddItemToObject(o, "messages", cJSON_CreateArray());
	cJSON_AddBoolToObject(o, "timed_out", 0);
	cJSON_AddItemToObject(o, "rooms", mcp_room_list(s->m));
	text = mcp_result(w->id, res, s->modern);
	if (w->st != NULL) {
		mcp_send(w->st, text);
		http_stream_close(w->st);
		cJSON_free(text);
	} else
		mcp_reply_text(w->r, 200, text);
	mcp_wait_free(w);
}

/* The rooms changed: every pending wait on a room this daemon is no
 * more in ends, each session once (as in mcp_offer); waits on every
 * room go on. */
static void
mcp_waits_left(struct mcp *m)
{
	struct mcp_session *s, *next, *last;

	last = TAILQ_LAST(&m->sessions, mcp_sessions);
	for (s = TAILQ_FIRST(&m->sessions); s != NULL; s = next) {
		next = s != last ? TAILQ_NEXT(s, entry) : NULL;
		if (s->wait != NULL && s->wait->room[0] != '\0' &&
		    mcp_room_get(m, s->wait->room) == NULL)
			mcp_wait_room_left(s->wait);
	}
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
	double elapsed = (double)(loop_now_ns() - w->start) / (double)NS_PER_S;
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
    const cJSON *args, const cJSON *meta, const char *room)
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
		mcp_tool_error(s, r, id, "wait: timeout_s must be a number of "
		    "seconds from 0 to 55 (call wait again to wait longer)");
		return;
	}
	if (t != NULL)
		timeout = t->valuedouble;
	if (f != NULL && !cJSON_IsString(f)) {
		mcp_tool_error(s, r, id, "wait: from must be a string: a "
		    "member's name or id");
		return;
	}
	if (s->wait != NULL) {
		mcp_reply_text(r, 200, mcp_result(id, mcp_tool_result(NULL,
		    "another wait of this session is in progress: wait for its "
		    "answer, or cancel it"), s->modern));
		return;
	}
	/* Messages that came while nobody looked go out at once. */
	mcp_agent_active(s->a);
	n = mcp_queue_take(s->a, f != NULL ? f->valuestring : NULL, room,
	    &ready);
	if (n > 0 || timeout == 0) {
		mcp_wait_answer(s, r, NULL, id, ready, n);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	w->s = s;
	w->r = r;
	w->id = cJSON_Duplicate(id, 1);
	w->from = f != NULL ? strdup(f->valuestring) : NULL;
	snprintf(w->room, sizeof(w->room), "%s", room);
	if (room[0] != '\0' && mcp_room_get(s->m, room) != NULL)
		snprintf(w->room_name, sizeof(w->room_name), "%s",
		    mcp_room_get(s->m, room)->name);
	w->timeout_s = timeout;
	w->start = loop_now_ns();
	w->deadline = w->start + (uint64_t)(timeout * (double)NS_PER_S);
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
	cJSON *uroom;                /* the same of papo://rooms/ID/history */
	struct mcp_text *troom;      /* and its text */
	const struct mcp_msg *g;
	cJSON *log;                  /* notifications/message */
	struct mcp_text *tchannel, *tupdated, *tlog;
	char id[PAPO_MSGID_LEN + 1];  /* the message's, or "" */
};

static void
mcp_note_new(struct mcp_note *nt, const struct mcp_msg *g)
{
	const cJSON *msg = g->json;
	char uri[sizeof(MCP_ROOMS_URI) + PAPO_ROOMID_LEN +
	    sizeof(MCP_ROOMS_URI_END)];
	cJSON *o;
	const char *keys[] = { "from", "from_id", "from_role", "from_label",
	    "id", "reply_to", "to", "room", "room_id" };
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(msg, "text");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(msg, "ts");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	cJSON *meta;
	char num[32];

	snprintf(nt->id, sizeof(nt->id), "%s", cJSON_IsString(id) ?
	    id->valuestring : "");

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
	nt->g = g;
	snprintf(uri, sizeof(uri), MCP_ROOMS_URI "%s" MCP_ROOMS_URI_END,
	    g->room);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "uri", uri);
	nt->uroom = o;
	nt->troom = mcp_text_new(mcp_notification(
	    "notifications/resources/updated", cJSON_Duplicate(o, 1)));
	nt->tlog = mcp_text_new(mcp_notification("notifications/message",
	    cJSON_Duplicate(nt->log, 1)));
}

static void
mcp_note_clear(struct mcp_note *nt)
{
	cJSON_Delete(nt->channel);
	cJSON_Delete(nt->updated);
	cJSON_Delete(nt->uroom);
	cJSON_Delete(nt->log);
	mcp_text_unref(nt->tchannel);
	mcp_text_unref(nt->tupdated);
	mcp_text_unref(nt->troom);
	mcp_text_unref(nt->tlog);
}

/* Whether g is of the room papo://room/history means for s: the one it
 * is bound to, else the default room. */
static int
mcp_own_room(const struct mcp_session *s, const struct mcp_msg *g)
{
	return strcmp(g->room, s->room[0] != '\0' ? s->room : s->m->dflt) == 0;
}

/* Whether s subscribed to papo://rooms/ROOM/history. */
static int
mcp_subscribed(const struct mcp_session *s, const char *room)
{
	for (size_t i = 0; i < s->nsubs; i++)
		if (strcmp(s->subs[i], room) == 0)
			return 1;
	return 0;
}

/* Whether the listen stream ms asked for papo://rooms/ROOM/history. */
static int
mcp_stream_subscribed(const struct mcp_stream *ms, const char *room)
{
	for (size_t i = 0; i < ms->nrooms; i++)
		if (strcmp(ms->rooms[i], room) == 0)
			return 1;
	return 0;
}

/*
 * Pushes a message to a session's streams: its newest GET stream gets
 * what the session asked for (with event ids, kept for replay), each
 * listen stream what it subscribed to, tagged; the channel note only
 * with channel set (no wait of its agent takes the message).  1 when the
 * message was given to
 * the agent: written as notifications/claude/channel to a live stream of
 * a session (or listen stream) whose client declared it takes them.
 * Elsewhere the push is a courtesy, and the message stays queued for
 * the agent's wait.
 */
static int
mcp_push(struct mcp_session *s, const struct mcp_note *nt, int channel)
{
	struct mcp_stream *ms, *get = mcp_get_stream(s);
	int given = 0;

	/* A session whose GET stream is gone keeps what it would have
	 * written for the replay when its client comes back with
	 * Last-Event-ID (s->ring: it had one). */
	if (get != NULL || s->ring != NULL) {
		/* Asked before writing, and only where a push can count: a
		 * courtesy push costs no look at the socket. */
		if (channel && nt->tchannel != NULL) {
			given = s->channels == MCP_PUSH_GIVES && get != NULL &&
			    http_stream_live(get->st);
			mcp_event(s, get, nt->tchannel, nt->id);
		}
		if (s->subscribed && nt->tupdated != NULL &&
		    mcp_own_room(s, nt->g))
			mcp_event(s, get, nt->tupdated, NULL);
		if (mcp_subscribed(s, nt->g->room) && nt->troom != NULL)
			mcp_event(s, get, nt->troom, NULL);
		if (s->level >= 0 && s->level <= 1 && nt->tlog != NULL)
			mcp_event(s, get, nt->tlog, NULL);   /* debug or info */
	}
	LIST_FOREACH(ms, &s->streams, entry) {
		if (ms->sub == NULL)
			continue;
		if ((ms->want & MCP_WANT_CHANNEL) && channel &&
		    http_stream_live(ms->st)) {
			mcp_send_tagged(ms, "notifications/claude/channel",
			    nt->channel);
			given = 1;
		}
		if ((ms->want & MCP_WANT_HISTORY) && mcp_own_room(s, nt->g))
			mcp_send_tagged(ms, "notifications/resources/updated",
			    nt->updated);
		if (mcp_stream_subscribed(ms, nt->g->room))
			mcp_send_tagged(ms, "notifications/resources/updated",
			    nt->uroom);
	}
	return given;
}

/*
 * A stream that delivers (a GET stream of a session whose client takes
 * pushes, a listen stream with "claude/channel") opened: what the
 * session's agent has queued goes out on it, given.
 */
void
mcp_flush(struct mcp_session *s, struct mcp_stream *ms)
{
	struct mcp_msg **msgs;
	size_t n = mcp_queue_take(s->a, NULL, s->room, &msgs);
	char *ids;

	for (size_t i = 0; i < n; i++) {
		struct mcp_note nt;

		mcp_note_new(&nt, msgs[i]);
		/* Pushed to this session's GET stream before: its client
		 * has it, or has it in the replay just sent. */
		if (ms->sub == NULL && mcp_ring_has(s, msgs[i]->id))
			;
		else if (ms->sub == NULL && nt.tchannel != NULL)
			mcp_event(s, ms, nt.tchannel, nt.id);
		else
			mcp_send_tagged(ms, "notifications/claude/channel",
			    nt.channel);
		mcp_note_clear(&nt);
	}
	if ((ids = mcp_ids(NULL, msgs, n)) != NULL) {
		mcp_mark_read(s->m, ids);
		mcp_agent_active(s->a);
	}
	free(ids);
	for (size_t i = 0; i < n; i++)
		mcp_msg_unref(msgs[i]);
	free(msgs);
}

/* A message of room (its id; NULL: the one json names) as the queues
 * keep it, tagged with its room; NULL when json is not one. */
static struct mcp_msg *
mcp_msg_new(struct mcp *m, cJSON *json, const char *room, uint64_t order)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(json, "id");
	const cJSON *rid = cJSON_GetObjectItemCaseSensitive(json, "room_id");
	struct mcp_msg *g;

	if (room == NULL)
		room = cJSON_IsString(rid) ? rid->valuestring : "";
	if (!cJSON_IsString(id) || strlen(id->valuestring) != PAPO_MSGID_LEN ||
	    strlen(room) != PAPO_ROOMID_LEN ||
	    (g = calloc(1, sizeof(*g))) == NULL) {
		cJSON_Delete(json);
		return NULL;
	}
	g->refs = 1;
	g->order = order;
	g->json = json;
	snprintf(g->room, sizeof(g->room), "%s", room);
	mcp_room_tag(m, json, g->room);
	g->id = id->valuestring;
	return g;
}

/*
 * Each agent gets the message once: a pending wait of one of its
 * sessions takes it (and nothing is pushed), else a push that counts
 * gives it, else it waits in the agent's queue, which may wake it.
 */
void
mcp_message(struct mcp *m, const char *json)
{
	struct mcp_agent *a;
	struct mcp_room *room;
	struct mcp_note nt;
	struct mcp_msg *g;
	int read = 0;

	if ((g = mcp_msg_new(m, cJSON_Parse(json), NULL, ++m->order)) == NULL)
		return;
	if ((room = mcp_room_get(m, g->room)) != NULL)
		snprintf(room->last, sizeof(room->last), "%s", g->id);
	mcp_note_new(&nt, g);
	LIST_FOREACH(a, &m->agents, entry) {
		struct mcp_session *s, *next, *last;
		struct mcp_pos *p = mcp_pos_add(a, g->room);
		int waiting = mcp_waiting(a, g), given = 0;

		if (p != NULL)
			snprintf(p->seen, sizeof(p->seen), "%s", g->id);
		/* Each session once, as in mcp_offer: the waits are answered
		 * after this walk, and were a session moved to the end of the
		 * line (or ended) meanwhile, the walk would not meet it again. */
		last = TAILQ_LAST(&m->sessions, mcp_sessions);
		for (s = TAILQ_FIRST(&m->sessions); s != NULL; s = next) {
			next = s != last ? TAILQ_NEXT(s, entry) : NULL;
			/* A session bound to another room hears nothing of
			 * this one. */
			if (s->a == a && (s->room[0] == '\0' ||
			    strcmp(s->room, g->room) == 0))
				given |= mcp_push(s, &nt, !waiting);
		}
		if (given) {
			read = 1;
			mcp_agent_active(a);
			mcp_agents_dirty(m);
			continue;
		}
		mcp_queue_put(a, g);
		if (waiting)
			mcp_offer(a);
		else
			m->wake_check(a);
	}
	if (read)
		mcp_mark_read(m, g->id);
	mcp_note_clear(&nt);
	mcp_msg_unref(g);
}

/* Agents, and what they were not given, kept in agents.json. */

int
mcp_agent_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= MCP_AGENT_MAX && strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	    == n;
}

struct mcp_agent *
mcp_agent(struct mcp *m, const char *name)
{
	struct mcp_agent *a;
	size_t n = 0;

	LIST_FOREACH(a, &m->agents, entry)
		if (strcmp(a->name, name) == 0)
			return a;
	LIST_FOREACH(a, &m->agents, entry)
		n++;
	if (n >= MCP_AGENTS_MAX) {
		log_msg(LOG_WARN, "mcp: %d agents already: '%s' refused",
		    MCP_AGENTS_MAX, name);
		return NULL;
	}
	if (strlen(name) > MCP_AGENT_MAX || (a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->m = m;
	snprintf(a->name, sizeof(a->name), "%s", name);
	/* A new agent starts from now in every room: what came before is
	 * history's.  Before the rooms are known (at start), its positions
	 * come with theirs (mcp_rooms). */
	for (size_t i = 0; i < m->nrooms; i++)
		snprintf(mcp_pos_add(a, m->rooms[i].id)->seen,
		    sizeof(a->pos[0].seen), "%s", m->rooms[i].last);
	LIST_INIT(&a->wakers);
	LIST_INSERT_HEAD(&m->agents, a, entry);
	mcp_agents_dirty(m);
	return a;
}

void
mcp_agent_active(struct mcp_agent *a)
{
	a->active = loop_now_ns();
	if (a->wake_ms != 0)
		a->wake_taken = 1;
}

/*
 * The room whose position an agents.json of before rooms (its "seen"
 * and "unread" of the agent itself) is: the default room, else the
 * first (the home's own).  Written there too, for an older papo.
 */
static const char *
mcp_home_room(const struct mcp *m)
{
	if (m->dflt[0] != '\0')
		return m->dflt;
	return m->nrooms > 0 ? m->rooms[0].id : "";
}

/* One room's position of a as agents.json has it: {"seen", "unread"}. */
static cJSON *
mcp_pos_json(struct mcp *m, const struct mcp_agent *a,
    const struct mcp_pos *p)
{
	const struct mcp_room *r = mcp_room_get(m, p->room);
	const struct mcp_flight *f;
	cJSON *o = cJSON_CreateObject(), *ids;

	cJSON_AddStringToObject(o, "seen", p->seen[0] != '\0' || r == NULL ?
	    p->seen : r->last);
	ids = cJSON_AddArrayToObject(o, "unread");
	LIST_FOREACH(f, &m->flights, entry)
		for (size_t i = 0; f->a == a && i < f->n; i++)
			if (strcmp(f->msgs[i]->room, p->room) == 0)
				cJSON_AddItemToArray(ids,
				    cJSON_CreateString(f->msgs[i]->id));
	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, p->room) == 0)
			cJSON_AddItemToArray(ids,
			    cJSON_CreateString(a->queue[i]->id));
	return o;
}

/*
 * agents.json: for each agent, per room (by id, in "rooms"), the newest
 * message it has seen and the ids it has not been given (queued, or in
 * an answer not yet sent); the home room's also as the agent's own
 * "seen" and "unread", as a papo of before rooms wrote and reads them.
 * A position not known yet (being learnt) is left out: the next start
 * learns it again.
 */
static char *
mcp_agents_text(struct mcp *m)
{
	const struct mcp_agent *a;
	cJSON *o = cJSON_CreateObject(), *arr, *e, *rooms;
	const char *home = mcp_home_room(m);
	char *text;

	cJSON_AddNumberToObject(o, "version", 2);
	arr = cJSON_AddArrayToObject(o, "agents");
	LIST_FOREACH(a, &m->agents, entry) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", a->name);
		rooms = cJSON_CreateObject();
		for (size_t i = 0; i < a->npos; i++) {
			cJSON *p;

			if (a->pos[i].restoring == 2)
				continue;
			p = mcp_pos_json(m, a, &a->pos[i]);
			if (strcmp(a->pos[i].room, home) == 0) {
				cJSON_AddItemReferenceToObject(e, "seen",
				    cJSON_GetObjectItemCaseSensitive(p, "seen"));
				cJSON_AddItemReferenceToObject(e, "unread",
				    cJSON_GetObjectItemCaseSensitive(p, "unread"));
			}
			cJSON_AddItemToObject(rooms, a->pos[i].room, p);
		}
		cJSON_AddItemToObject(e, "rooms", rooms);
		cJSON_AddItemToArray(arr, e);
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

static void
mcp_agents_save(void *arg)
{
	struct mcp *m = arg;
	char err[PAPO_ERR_LEN], *text;

	m->dirty = 0;
	/* Until the rooms are known, the file read at start is the truth:
	 * mcp_rooms marks it dirty once they are. */
	if (!m->loaded || (text = mcp_agents_text(m)) == NULL)
		return;
	if (fs_write(err, m->agents_path, text, strlen(text)) == -1)
		log_msg(LOG_WARN, "mcp: %s (what agents were not given yet "
		    "is kept in memory only)", err);
	cJSON_free(text);
}

static void
mcp_agents_dirty(struct mcp *m)
{
	if (m->dirty || m->save == NULL)
		return;
	m->dirty = 1;
	loop_timer_set(m->save, loop_now_ns() + MCP_SAVE_NS);
}

/* Asks the node for what a was not given in the room of p: the ids of
 * unread (a JSON array, or NULL) and everything of the others after
 * message seen; restoring 2: only where the log ends. */
static void
mcp_agent_restore(struct mcp *m, struct mcp_agent *a, struct mcp_pos *p,
    const char *seen, const cJSON *unread, int restoring)
{
	struct node_msg *req = node_msg_new(NODE_HISTORY);
	const cJSON *id;
	size_t len = 0;

	if (req == NULL || (req->to = strdup(a->name)) == NULL ||
	    (req->room = strdup(p->room)) == NULL ||
	    (req->text = malloc((size_t)cJSON_GetArraySize(unread) *
	    (PAPO_MSGID_LEN + 1) + 1)) == NULL) {
		node_msg_free(req);
		return;
	}
	cJSON_ArrayForEach(id, unread)
		if (cJSON_IsString(id) && strlen(id->valuestring) ==
		    PAPO_MSGID_LEN) {
			memcpy(req->text + len, id->valuestring, PAPO_MSGID_LEN);
			len += PAPO_MSGID_LEN;
			req->text[len++] = ' ';
		}
	req->text[len] = '\0';
	req->ctx = m;
	req->after_set = 1;
	snprintf(req->after, sizeof(req->after), "%s", seen);
	snprintf(p->seen, sizeof(p->seen), "%s", seen);
	req->limit = MCP_UNSEEN_MAX;
	p->restoring = restoring;
	node_submit(m->node, req);
}

int
mcp_agents_load(char err[PAPO_ERR_LEN], struct mcp *m)
{
	char buf[MCP_AGENTS_FILE_MAX + 1];
	const cJSON *e;
	cJSON *o;
	ssize_t n;
	int fd;

	if (m->save == NULL && (m->save = loop_timer_new(m->loop,
	    mcp_agents_save, m)) == NULL)
		return -1;
	if ((fd = open(m->agents_path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno != ENOENT) {
			snprintf(err, PAPO_ERR_LEN, "%s: %s", m->agents_path,
			    strerror(errno));
			return -1;
		}
		/* A home from before agents.json, or a new one: the daemon's
		 * agent starts at the log's end (nothing old given again),
		 * once the rooms are known. */
		return mcp_agent(m, "") != NULL ? 0 : -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1) {
		snprintf(err, PAPO_ERR_LEN, "%s: %s", m->agents_path, n < 0 ?
		    strerror(errno) : "too large");
		return -1;
	}
	buf[n] = '\0';
	if ((o = cJSON_Parse(buf)) == NULL ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "agents"))) {
		char aside[sizeof(m->agents_path) + 8];

		/* Kept aside, not lost; the agents start at the log's end,
		 * as on a first start. */
		cJSON_Delete(o);
		snprintf(aside, sizeof(aside), "%s.bad", m->agents_path);
		if (rename(m->agents_path, aside) == -1) {
			snprintf(err, PAPO_ERR_LEN, "%s is damaged, and cannot be "
			    "moved aside: %s", m->agents_path, strerror(errno));
			return -1;
		}
		log_msg(LOG_WARN, "%s is damaged: kept as %s; what agents were "
		    "given starts afresh", m->agents_path, aside);
		return mcp_agents_load(err, m);
	}
	/* The agents now; where each is in each room once the rooms are
	 * known (mcp_rooms: the node's first event). */
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "agents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");

		if (cJSON_IsString(name))
			mcp_agent(m, name->valuestring);
	}
	m->file = o;
	if (mcp_agent(m, "") == NULL)
		return -1;
	return 0;
}

/* a's entry in the agents.json read at start, or NULL. */
static const cJSON *
mcp_agent_entry(const struct mcp *m, const struct mcp_agent *a)
{
	const cJSON *e, *name;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(m->file,
	    "agents")) {
		name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (cJSON_IsString(name) && strcmp(name->valuestring,
		    a->name) == 0)
			return e;
	}
	return NULL;
}

/*
 * Where a is in room, read back: from agents.json at start (its "rooms"
 * entry of the room; a file of before rooms holds the home room's as the
 * agent's own "seen" and "unread"), else, for a room new to it (or a
 * first start), where the room's log ends.
 */
static void
mcp_agent_place(struct mcp *m, struct mcp_agent *a, const char *room,
    int start)
{
	const cJSON *e = start ? mcp_agent_entry(m, a) : NULL, *p, *seen;
	const cJSON *rooms = cJSON_GetObjectItemCaseSensitive(e, "rooms");
	struct mcp_pos *pos;

	if (mcp_pos(a, room) != NULL || (pos = mcp_pos_add(a, room)) == NULL)
		return;
	if (rooms != NULL)
		p = cJSON_GetObjectItemCaseSensitive(rooms, room);
	else
		p = strcmp(room, mcp_home_room(m)) == 0 ? e : NULL;
	seen = cJSON_GetObjectItemCaseSensitive(p, "seen");
	if (cJSON_IsString(seen) && strlen(seen->valuestring) <= PAPO_MSGID_LEN)
		mcp_agent_restore(m, a, pos, seen->valuestring,
		    cJSON_GetObjectItemCaseSensitive(p, "unread"), 1);
	else
		mcp_agent_restore(m, a, pos, "", NULL, 2);
}

/* a is out of room: its position there and what it had queued of it
 * go. */
static void
mcp_agent_leave(struct mcp_agent *a, const char *room)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, room) == 0)
			mcp_msg_unref(a->queue[i]);
		else
			a->queue[keep++] = a->queue[i];
	a->nqueue = keep;
	keep = 0;
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) != 0)
			a->pos[keep++] = a->pos[i];
	a->npos = keep;
}

/*
 * The node's list of rooms (NODE_EV_ROOMS: first at start, then when a
 * room is joined, made or left, or the default changes).  Agents leave
 * the rooms that are gone, and are placed in the new ones: at start as
 * agents.json says, later where the room's log ends; a pending wait on a
 * room that is gone ends at once, saying so.
 */
void
mcp_rooms(struct mcp *m, const char *json)
{
	cJSON *o = json != NULL ? cJSON_Parse(json) : NULL;
	struct mcp_agent *a;

	if (o == NULL)
		return;
	mcp_room_update(m, o);
	cJSON_Delete(o);
	LIST_FOREACH(a, &m->agents, entry) {
		for (size_t i = a->npos; i > 0; i--)
			if (mcp_room_get(m, a->pos[i - 1].room) == NULL) {
				log_msg(LOG_DEBUG, "mcp: agent '%s' leaves room "
				    "%.8s", a->name, a->pos[i - 1].room);
				mcp_agent_leave(a, a->pos[i - 1].room);
			}
		for (size_t i = 0; i < m->nrooms; i++)
			mcp_agent_place(m, a, m->rooms[i].id, !m->loaded);
	}
	mcp_waits_left(m);
	m->loaded = 1;
	cJSON_Delete(m->file);
	m->file = NULL;
	mcp_agents_dirty(m);
}

int
mcp_owns(const struct mcp *m, const struct node_msg *msg)
{
	return msg->ctx == m;
}

/*
 * What an agent was not given in a room, read back from the log: into
 * its queue, before anything that arrived since (a first start only
 * learns where the log ends).
 */
void
mcp_node_answer(struct mcp *m, struct node_msg *msg)
{
	struct mcp_agent *a = NULL, *it;
	struct mcp_pos *p = NULL;
	struct mcp_room *r;
	cJSON *o = msg->json != NULL ? cJSON_Parse(msg->json) : NULL;
	const cJSON *v, *last, *more;

	LIST_FOREACH(it, &m->agents, entry)
		if (msg->to != NULL && strcmp(it->name, msg->to) == 0)
			a = it;
	if (a != NULL && msg->room != NULL)
		p = mcp_pos(a, msg->room);
	if (p == NULL || o == NULL) {
		if (msg->code != 0)
			log_msg(LOG_WARN, "mcp: cannot read back what agents "
			    "were not given: %s", msg->err);
		if (p != NULL)
			p->restoring = 0;
		goto out;
	}
	last = cJSON_GetObjectItemCaseSensitive(o, "last");
	more = cJSON_GetObjectItemCaseSensitive(o, "more");
	if (cJSON_IsString(last) && (r = mcp_room_get(m, p->room)) != NULL &&
	    r->last[0] == '\0')
		snprintf(r->last, sizeof(r->last), "%s", last->valuestring);
	if (p->restoring == 1) {
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(o,
		    "messages")) {
			struct mcp_msg *g = mcp_msg_new(m, cJSON_Duplicate(v, 1),
			    p->room, ++m->restored);

			if (g != NULL) {
				mcp_queue_put(a, g);
				mcp_msg_unref(g);
			}
		}
		if (cJSON_IsNumber(more))
			a->dropped += (uint64_t)more->valuedouble;
		log_msg(LOG_DEBUG, "mcp: agent '%s', room %.8s: %zu messages "
		    "not given yet", a->name, p->room, mcp_unread(a, p->room));
	}
	/* Everything in the room's log up to its newest is now queued,
	 * given, or this member's own. */
	if (cJSON_IsString(last))
		snprintf(p->seen, sizeof(p->seen), "%s", last->valuestring);
	p->restoring = 0;
	mcp_agents_dirty(m);
	mcp_offer(a);
	m->wake_check(a);
out:
	cJSON_Delete(o);
	node_msg_free(msg);
}

void
mcp_agents_free(struct mcp *m)
{
	struct mcp_agent *a;

	if (m->save != NULL && m->loaded)
		mcp_agents_save(m);
	while ((a = LIST_FIRST(&m->agents)) != NULL) {
		LIST_REMOVE(a, entry);
		for (size_t i = 0; i < a->nqueue; i++)
			mcp_msg_unref(a->queue[i]);
		free(a->queue);
		free(a);
	}
	loop_timer_free(m->save);
	m->save = NULL;
	cJSON_Delete(m->file);
	m->file = NULL;
}
