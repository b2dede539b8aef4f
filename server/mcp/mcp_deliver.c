/*
 * mcp_deliver.c: the node's events handed to MCP's agents and sessions
 * (mcp.h, mcp_int.h; docs/MCP.md, "Delivery" and "Notifications").
 * Every message from another member goes to every agent (the daemon's
 * own, and any named by ?agent=): returned by a pending wait of one of
 * its sessions (mcp_wait.c), else pushed where a push counts, else kept
 * in its queue (mcp_agent.c) for its next wait.  Pushes are written
 * here: notifications/claude/channel, resources/updated of the history
 * resources subscribed to, notifications/message, on GET streams (kept
 * for replay) and listen streams (tagged).  The rooms' list changing
 * moves agents in and out of rooms and ends waits on rooms left; the
 * log read back at start fills agents' queues.
 *
 * Main thread only; nothing here blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_int.h"

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

/*
 * A push's content: the text, then a line per file the message names
 * (its name, size, type and URI), for an agent that sees only this.
 */
static void
mcp_note_content(cJSON *channel, const char *text, const cJSON *files)
{
	const cJSON *f;
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	if (cJSON_GetArraySize(files) == 0 ||
	    (fp = open_memstream(&out, &len)) == NULL) {
		cJSON_AddStringToObject(channel, "content", text);
		return;
	}
	fputs(text, fp);
	cJSON_ArrayForEach(f, files) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(f, "size");
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(f, "type");
		const cJSON *uri = cJSON_GetObjectItemCaseSensitive(f, "uri");

		fprintf(fp, "%s[file] %s (%.0f bytes, %s) %s",
		    ftell(fp) > 0 ? "\n" : "",
		    cJSON_IsString(name) ? name->valuestring : "?",
		    cJSON_IsNumber(size) ? size->valuedouble : 0,
		    cJSON_IsString(type) ? type->valuestring : "?",
		    cJSON_IsString(uri) ? uri->valuestring : "");
	}
	if (fclose(fp) == 0 && out != NULL)
		cJSON_AddStringToObject(channel, "content", out);
	else
		cJSON_AddStringToObject(channel, "content", text);
	free(out);
}

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
	mcp_note_content(nt->channel, cJSON_IsString(text) ?
	    text->valuestring : "", cJSON_GetObjectItemCaseSensitive(msg,
	    "files"));
	meta = cJSON_AddObjectToObject(nt->channel, "meta");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, keys[i]);

		if (cJSON_IsString(v))
			cJSON_AddStringToObject(meta, keys[i], v->valuestring);
	}
	/* Only its author and its addressee read it. */
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "private")))
		cJSON_AddStringToObject(meta, "private", "true");
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
 * message was given to the agent: notifications/claude/channel queued
 * on a live stream of a session (or listen stream) whose client
 * declared it takes them.  A write that fails (the stream is let go for
 * falling behind at that write) gives nothing.  Elsewhere the push is a
 * courtesy, and the message stays queued for the agent's wait, or for
 * the next stream that delivers (mcp_flush).
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
			int live = s->channels == MCP_PUSH_GIVES &&
			    get != NULL && http_stream_live(get->st);

			if (mcp_event(s, get, nt->tchannel, nt->id) == 0 &&
			    live)
				given = 1;
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
		    http_stream_live(ms->st) &&
		    mcp_send_tagged(ms, "notifications/claude/channel",
		    nt->channel) == 0)
			given = 1;
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
 * session's agent has queued goes out on it, given; what its writes
 * could not carry (the stream let go for falling behind meanwhile)
 * goes back to the queue.
 */
void
mcp_flush(struct mcp_session *s, struct mcp_stream *ms)
{
	struct mcp_msg **msgs;
	size_t n = mcp_queue_take(s->a, NULL, s->room, &msgs), given = 0;
	char *ids;

	for (size_t i = 0; i < n; i++) {
		struct mcp_note nt;
		int rc;

		mcp_note_new(&nt, msgs[i]);
		/* Pushed to this session's GET stream before: its client
		 * has it, or has it in the replay just sent. */
		if (ms->sub == NULL && mcp_ring_has(s, msgs[i]->id))
			rc = 0;
		else if (ms->sub == NULL && nt.tchannel != NULL)
			rc = mcp_event(s, ms, nt.tchannel, nt.id);
		else
			rc = mcp_send_tagged(ms,
			    "notifications/claude/channel", nt.channel);
		mcp_note_clear(&nt);
		if (rc == 0) {
			msgs[given++] = msgs[i];
		} else {
			mcp_queue_put(s->a, msgs[i]);
			mcp_msg_unref(msgs[i]);
		}
	}
	n = given;
	if ((ids = mcp_ids(NULL, msgs, n)) != NULL) {
		mcp_mark_read(s->m, ids);
		mcp_agent_active(s->a);
	}
	free(ids);
	for (size_t i = 0; i < n; i++)
		mcp_msg_unref(msgs[i]);
	free(msgs);
}

/*
 * Each agent gets the message once: a pending wait of one of its
 * sessions takes it (and nothing is pushed), else a push that counts
 * gives it, else it waits in the agent's queue, which may wake it.
 * The sessions are walked twice per message, whatever the number of
 * agents: once for the waits, once for the pushes.
 */
void
mcp_message(struct mcp *m, const char *json)
{
	struct mcp_session *s, *next, *last;
	struct mcp_agent *a;
	struct mcp_room *room;
	struct mcp_note nt = { 0 };
	struct mcp_msg *g;
	int read = 0;

	if ((g = mcp_msg_new(m, cJSON_Parse(json), NULL, ++m->order)) == NULL)
		return;
	if ((room = mcp_room_get(m, g->room)) != NULL)
		snprintf(room->last, sizeof(room->last), "%s", g->id);
	/* The pushes' texts are for sessions: a daemon no client talks to
	 * only queues. */
	if (!TAILQ_EMPTY(&m->sessions))
		mcp_note_new(&nt, g);
	LIST_FOREACH(a, &m->agents, entry) {
		struct mcp_pos *p = mcp_pos_add(a, g->room);

		if (p != NULL)
			snprintf(p->seen, sizeof(p->seen), "%s", g->id);
		a->waiting = a->given = 0;
	}
	mcp_waits_mark(m, g);
	/* Each session once, as in mcp_offer: the waits are answered
	 * after this walk, and were a session moved to the end of the line
	 * (or ended) meanwhile, the walk would not meet it again. */
	last = TAILQ_LAST(&m->sessions, mcp_sessions);
	for (s = TAILQ_FIRST(&m->sessions); s != NULL; s = next) {
		next = s != last ? TAILQ_NEXT(s, entry) : NULL;
		/* A session bound to another room hears nothing of this
		 * one. */
		if (s->a != NULL && (s->room[0] == '\0' ||
		    strcmp(s->room, g->room) == 0))
			s->a->given |= mcp_push(s, &nt, !s->a->waiting);
	}
	LIST_FOREACH(a, &m->agents, entry) {
		if (a->given) {
			read = 1;
			mcp_agent_active(a);
			mcp_agents_dirty(m);
			continue;
		}
		mcp_queue_put(a, g);
		if (a->waiting)
			mcp_offer(a);
		else
			m->wake_check(a);
	}
	if (read)
		mcp_mark_read(m, g->id);
	mcp_note_clear(&nt);
	mcp_msg_unref(g);
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
		if (msg->tag != NULL && strcmp(it->name, msg->tag) == 0)
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
