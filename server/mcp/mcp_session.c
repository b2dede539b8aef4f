/*
 * mcp_session.c: MCP's sessions and their streams (mcp_int.h): a
 * session made by initialize (with an id) or for one request of
 * 2026-07-28, found by its id, kept in a line by last use and ended when
 * idle, at the cap, or by DELETE; its GET and listen streams, with their
 * heartbeat; the events written to a GET stream, with the next id, kept
 * in a ring for Last-Event-ID, their texts shared between sessions.
 *
 * Below every MCP file but mcp_rpc.c: a session that ends with a wait
 * pending answers it through m->wait_end (the wait is mcp_wait.c's).
 * Main thread only; nothing here blocks.
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

#define MCP_RETRY "retry: 2000\n\n"
#define MCP_META_SUB "io.modelcontextprotocol/subscriptionId"  /* _meta */

/* An event's text, shared by the replay rings of the sessions it was
 * written to. */
struct mcp_text {
	unsigned refs;
	size_t len;
	char data[];
};

/* A session's events kept for Last-Event-ID. */
struct mcp_slot {
	uint64_t seq;
	struct mcp_text *t;
	char id[PAPO_MSGID_LEN + 1]; /* the room message it carries, or "" */
};

/* Shared texts. */

struct mcp_text *
mcp_text_new(char *text)
{
	struct mcp_text *t;
	size_t n;

	if (text == NULL)
		return NULL;
	n = strlen(text);
	if ((t = malloc(sizeof(*t) + n + 1)) != NULL) {
		t->refs = 1;
		t->len = n;
		memcpy(t->data, text, n + 1);
	}
	cJSON_free(text);
	return t;
}

void
mcp_text_unref(struct mcp_text *t)
{
	if (t != NULL && --t->refs == 0)
		free(t);
}

/* Sessions and their streams. */

struct mcp_session *
mcp_session_find(struct mcp *m, const char *id)
{
	struct mcp_session *s;

	if (id == NULL)
		return NULL;
	TAILQ_FOREACH(s, &m->sessions, entry)
		if (!s->modern && strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

/* Whether a session is in use: a stream open, or a wait pending. */
static int
mcp_busy(const struct mcp_session *s)
{
	return s->wait != NULL || !LIST_EMPTY(&s->streams);
}

/* Arms the expiry timer for the least recently used session. */
static void
mcp_expiry_arm(struct mcp *m)
{
	struct mcp_session *s = TAILQ_FIRST(&m->sessions);

	loop_timer_set(m->expiry, s != NULL ? s->last + m->idle_ns : 0);
}

/* The session was used now: it goes to the end of the line. */
void
mcp_touch(struct mcp_session *s)
{
	struct mcp *m = s->m;

	s->last = loop_now_ns();
	TAILQ_REMOVE(&m->sessions, s, entry);
	TAILQ_INSERT_TAIL(&m->sessions, s, entry);
	if (TAILQ_FIRST(&m->sessions) == s)
		mcp_expiry_arm(m);
}

/*
 * Ends the sessions unused for idle_ns, oldest first.  One in use (a
 * stream, a wait) is not idle: it goes to the end of the line.
 */
void
mcp_expire(void *arg)
{
	struct mcp *m = arg;
	struct mcp_session *s;
	uint64_t now = loop_now_ns();
	size_t n = 0, seen = 0, total = m->nsessions;

	while ((s = TAILQ_FIRST(&m->sessions)) != NULL &&
	    s->last + m->idle_ns <= now && seen++ <= total) {
		if (s->modern || mcp_busy(s)) {
			mcp_touch(s);
			continue;
		}
		mcp_session_free(s, 0);
		n++;
	}
	if (n > 0)
		log_msg(LOG_DEBUG, "mcp: %zu idle sessions ended, %zu left", n,
		    m->nsessions);
	mcp_expiry_arm(m);
}

/* A new session: a 2025 one, with an id to be named by, or a 2026-07-28
 * request's (modern).  At the cap of 2025 sessions, the one unused the
 * longest ends to make room.  NULL without memory. */
struct mcp_session *
mcp_session_new(struct mcp *m, int modern)
{
	struct mcp_session *s, *old = NULL;
	uint8_t rnd[16];

	if (!modern && m->nsessions >= MCP_SESSIONS_MAX) {
		TAILQ_FOREACH(s, &m->sessions, entry)
			if (!s->modern && (old == NULL || !mcp_busy(s))) {
				old = s;
				if (!mcp_busy(s))
					break;
			}
		if (old != NULL) {
			log_msg(LOG_INFO, "mcp: %d sessions: ending the one "
			    "unused longest", MCP_SESSIONS_MAX);
			mcp_session_free(old, 1);
		}
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->m = m;
	s->modern = modern;
	s->level = -1;
	s->last = loop_now_ns();
	LIST_INIT(&s->streams);
	if (!modern) {
		node_random(rnd, sizeof(rnd));
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
		m->nsessions++;
	}
	TAILQ_INSERT_TAIL(&m->sessions, s, entry);
	if (TAILQ_FIRST(&m->sessions) == s)
		mcp_expiry_arm(m);
	return s;
}

/* The stream a session's events go to: its newest GET stream. */
struct mcp_stream *
mcp_get_stream(struct mcp_session *s)
{
	struct mcp_stream *ms;

	LIST_FOREACH(ms, &s->streams, entry)
		if (ms->sub == NULL)
			return ms;
	return NULL;
}

/* Writes one event, with the next id, to the session's GET stream ms
 * (NULL: none is open now), and keeps it for replay (with id, the room
 * message it carries).  0 when it was queued on ms, else -1 (no stream,
 * or one that has just been let go). */
int
mcp_event(struct mcp_session *s, struct mcp_stream *ms, struct mcp_text *t,
    const char *id)
{
	struct mcp_slot *slot;
	char head[48];
	int n;

	s->seq++;
	if (s->ring == NULL &&
	    (s->ring = calloc(MCP_KEEP, sizeof(*s->ring))) == NULL)
		return -1;
	slot = &s->ring[s->seq % MCP_KEEP];
	mcp_text_unref(slot->t);
	slot->seq = s->seq;
	slot->t = t;
	t->refs++;
	snprintf(slot->id, sizeof(slot->id), "%s", id != NULL ? id : "");
	if (ms == NULL)
		return -1;
	n = snprintf(head, sizeof(head), "id: %" PRIu64 "\ndata: ", s->seq);
	return http_stream_event(ms->st, head, (size_t)n, t->data, t->len);
}

/* Whether the room message id went to s's GET streams, as an event
 * still kept for replay. */
int
mcp_ring_has(const struct mcp_session *s, const char *id)
{
	for (size_t i = 0; s->ring != NULL && i < MCP_KEEP; i++)
		if (s->ring[i].t != NULL && strcmp(s->ring[i].id, id) == 0)
			return 1;
	return 0;
}

/*
 * Whether s's SSE streams begin with a priming event (an id, empty
 * data).  2025-11-25 defines it (SEP-1699); a client of 2025-06-18 or
 * 2025-03-26 may parse every event's data as JSON (the SDK in Gemini
 * CLI does, and fails on empty data), and 2026-07-28 streams have no
 * event ids.
 */
int
mcp_primes(const struct mcp_session *s)
{
	return s->rev == MCP_REV_2025_11_25;
}

/*
 * A GET stream ms of s opened: what its client missed since last (its
 * Last-Event-ID, or NULL), then, for the revisions that define it, the
 * priming event: an id and no data, so that it resumes from here.
 * Priming last keeps a resume from skipping a replayed event.  From now
 * on the session keeps its events for a replay, whether or not a stream
 * of it is open (mcp_push).  -1 when the stream failed.
 */
int
mcp_stream_resume(struct mcp_session *s, struct mcp_stream *ms,
    const char *last)
{
	uint64_t from = 0;
	char head[48];
	int n;

	if (s->ring == NULL)
		s->ring = calloc(MCP_KEEP, sizeof(*s->ring));
	if (last != NULL && sscanf(last, "%" SCNu64, &from) == 1)
		for (uint64_t q = from + 1; q <= s->seq; q++) {
			size_t i = q % MCP_KEEP;

			if (s->ring == NULL || s->ring[i].seq != q ||
			    s->ring[i].t == NULL)
				continue;
			n = snprintf(head, sizeof(head), "id: %" PRIu64 "\ndata: ", q);
			if (http_stream_event(ms->st, head, (size_t)n,
			    s->ring[i].t->data, s->ring[i].t->len) == -1)
				return -1;
		}
	if (mcp_primes(s)) {
		s->seq++;
		n = snprintf(head, sizeof(head), "id: %" PRIu64 "\ndata: \n\n",
		    s->seq);
		http_stream_write(ms->st, head, (size_t)n);
	}
	return 0;
}

/* Writes one JSON-RPC message as an event without an id: on streams
 * that are not resumed (a request's answer, a listen stream). */
int
mcp_send(struct http_stream *st, const char *json)
{
	if (json == NULL)
		return -1;
	return http_stream_event(st, "event: message\ndata: ", 21, json,
	    strlen(json));
}

/* Writes a notification to a listen stream, tagged with its
 * subscription id in params._meta. */
int
mcp_send_tagged(struct mcp_stream *ms, const char *method,
    const cJSON *params)
{
	cJSON *p, *meta;
	char *text;
	int rc;

	p = params != NULL ? cJSON_Duplicate(params, 1) : cJSON_CreateObject();
	if ((meta = cJSON_GetObjectItemCaseSensitive(p, "_meta")) == NULL)
		meta = cJSON_AddObjectToObject(p, "_meta");
	cJSON_AddItemToObject(meta, MCP_META_SUB, cJSON_Duplicate(ms->sub, 1));
	text = mcp_notification(method, p);
	rc = mcp_send(ms->st, text);
	cJSON_free(text);
	return rc;
}

/* A comment on every stream while any is open, so that proxies keep
 * quiet streams open. */
void
mcp_heartbeat(void *arg)
{
	struct mcp *m = arg;
	struct mcp_session *s;
	struct mcp_stream *ms;

	TAILQ_FOREACH(s, &m->sessions, entry)
		LIST_FOREACH(ms, &s->streams, entry)
			http_stream_write(ms->st, ": keep-alive\n\n", 14);
	if (m->nstreams > 0)
		loop_timer_set(m->heartbeat, loop_now_ns() + MCP_HEARTBEAT_NS);
}

static void
mcp_stream_gone(struct http_stream *st, void *arg);

/* Answers r with a stream of s: a GET stream (sub NULL) or a listen
 * stream.  NULL when it cannot; r is then still to be answered. */
struct mcp_stream *
mcp_stream_open(struct mcp_session *s, struct http_req *r, const cJSON *sub,
    unsigned want)
{
	struct mcp_stream *ms;

	if ((ms = calloc(1, sizeof(*ms))) == NULL)
		return NULL;
	if (sub != NULL && (ms->sub = cJSON_Duplicate(sub, 1)) == NULL) {
		free(ms);
		return NULL;
	}
	http_reply_header(r, "X-Accel-Buffering", "no");
	if ((ms->st = http_stream_open(r, mcp_stream_gone, ms)) == NULL) {
		cJSON_Delete(ms->sub);
		free(ms);
		return NULL;
	}
	ms->s = s;
	ms->want = want;
	LIST_INSERT_HEAD(&s->streams, ms, entry);
	if (s->m->nstreams++ == 0)
		loop_timer_set(s->m->heartbeat, loop_now_ns() +
		    MCP_HEARTBEAT_NS);
	return ms;
}

void
mcp_stream_free(struct mcp_stream *ms)
{
	struct mcp_session *s = ms->s;
	struct mcp *m = s->m;

	LIST_REMOVE(ms, entry);
	if (--m->nstreams == 0)
		loop_timer_set(m->heartbeat, 0);
	cJSON_Delete(ms->sub);
	free(ms->rooms);
	free(ms);
	if (!s->closing)
		mcp_touch(s);        /* idle from now */
}

/* The client closed the stream: for a listen stream, that cancels the
 * subscription. */
static void
mcp_stream_gone(struct http_stream *st, void *arg)
{
	struct mcp_stream *ms = arg;
	struct mcp_session *s = ms->s;

	(void)st;
	mcp_stream_free(ms);
	mcp_session_release(s);
}

/*
 * Ends a stream from this side, after retry: (when to come back) if
 * asked and its revision defines it (2025-11-25 on: to an older client
 * an event without data may be one it fails to parse).  A listen stream
 * ends with the result of its request, which tells the client the
 * subscription ended rather than was cut.
 */
static void
mcp_stream_end(struct mcp_stream *ms, int retry)
{
	if (retry && ms->s->rev >= MCP_REV_2025_11_25)
		http_stream_write(ms->st, MCP_RETRY, sizeof(MCP_RETRY) - 1);
	if (ms->sub != NULL) {
		cJSON *res = cJSON_CreateObject();
		char *text;

		cJSON_AddItemToObject(cJSON_AddObjectToObject(res, "_meta"),
		    MCP_META_SUB, cJSON_Duplicate(ms->sub, 1));
		text = mcp_result(ms->sub, res, MCP_REV_2026_07_28);
		mcp_send(ms->st, text);
		cJSON_free(text);
	}
	http_stream_close(ms->st);
	mcp_stream_free(ms);
}

void
mcp_session_free(struct mcp_session *s, int retry)
{
	struct mcp *m = s->m;
	struct mcp_stream *ms;

	s->closing = 1;
	while ((ms = LIST_FIRST(&s->streams)) != NULL)
		mcp_stream_end(ms, retry);
	if (s->wait != NULL)
		m->wait_end(s->wait, NULL, 0);     /* answered empty */
	if (s->ring != NULL)
		for (size_t i = 0; i < MCP_KEEP; i++)
			mcp_text_unref(s->ring[i].t);
	free(s->ring);
	free(s->subs);
	TAILQ_REMOVE(&m->sessions, s, entry);
	if (!s->modern)
		m->nsessions--;
	free(s);
	mcp_expiry_arm(m);
}

/* A 2026-07-28 request's session ends when nothing of it is open any
 * more: its answer was sent, its wait answered, its stream closed. */
void
mcp_session_release(struct mcp_session *s)
{
	if (s->modern && !s->closing && s->wait == NULL &&
	    LIST_EMPTY(&s->streams))
		mcp_session_free(s, 0);
}

/*
 * Answers r with a tool error: a tool's input the model got wrong (an
 * unknown argument, a wrong type, a value out of range) is the model's
 * to correct, so it reads it as a tool result with isError (MCP
 * 2025-11-25, SEP-1303), not as a protocol error its client may hide.
 */
void
mcp_tool_error(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const char *msg)
{
	mcp_reply_text(r, 200, mcp_result(id, mcp_tool_result(NULL, msg),
	    s->rev));
}
