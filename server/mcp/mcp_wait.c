/*
 * mcp_wait.c: the wait tool and the answers that give an agent its
 * messages (mcp_int.h; docs/MCP.md, "Delivery"): a wait answered at once
 * from its agent's queue, else pending (a suspended request, or an SSE
 * answer with progress every 10 s, and a timer) until a message comes,
 * its timeout, a cancel, its client leaving or its room being left;
 * flights, which count messages as given once the connection took the
 * whole answer, and give a wait's back to the queue when it did not.
 *
 * Main thread only; nothing here blocks.  Waking an agent left idle is
 * mcp_wake.c's, above: it is told of each change through m->wake_check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp_int.h"

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
	text = mcp_result(id, mcp_tool_result(res, NULL), s->rev);
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
void
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

void
mcp_waits_mark(struct mcp *m, const struct mcp_msg *msg)
{
	const struct mcp_session *s;

	TAILQ_FOREACH(s, &m->sessions, entry)
		if (s->a != NULL && s->wait != NULL &&
		    mcp_matches(s->wait->from, s->wait->room, msg))
			s->a->waiting = 1;
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

	mcp_room_names(s->m, s->room, names, sizeof(names));
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
	cJSON_AddItemToObject(o, "rooms", mcp_room_list(s->m, s->room));
	text = mcp_result(w->id, res, s->rev);
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
void
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
    const void *in, const cJSON *meta, const char *room)
{
	const struct mcp_wait_in *a = in;
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	struct mcp_msg **ready;
	struct mcp_wait *w;
	double timeout = a->timeout_s;
	size_t n;

	if (s->wait != NULL) {
		mcp_reply_text(r, 200, mcp_result(id, mcp_tool_result(NULL,
		    "another wait of this session is in progress: wait for its "
		    "answer, or cancel it"), s->rev));
		return;
	}
	/* Messages that came while nobody looked go out at once. */
	mcp_agent_active(s->a);
	n = mcp_queue_take(s->a, a->from, room, &ready);
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
	w->from = a->from != NULL ? strdup(a->from) : NULL;
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

		/* Priming event, as on GET streams, for the revision that
		 * defines it (mcp_primes). */
		if (mcp_primes(s)) {
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
