/*
 * mcp_tools.c: MCP's tools (mcp_int.h; docs/MCP.md, "Tools"): the table
 * of tools, each its declaration (mcp_schema.c: name, description,
 * arguments) and its handler; tools/list and tools/call, a call's
 * arguments checked and read by its declaration, and its room resolved,
 * a mistake answered as a tool error a model can act on; and send,
 * history and status, which ask the node (mcp_ask.c).  wait is
 * mcp_wait.c's, fetch mcp_files.c's.
 *
 * Main thread only; nothing here blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp_int.h"

static void
tool_send(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room)
{
	const struct mcp_send_in *a = in;
	struct node_send_args *sa;
	struct node_msg *req;
	const char *text = a->text;
	const cJSON *files = a->attachments;
	char err[PAPO_ERR_LEN];

	(void)meta;
	if (cJSON_GetArraySize(files) == 0)
		files = NULL;
	/* A message may be its files alone. */
	if (text == NULL && files != NULL)
		text = "";
	if (text == NULL) {
		mcp_schema_missing(err, &mcp_send_desc, "text");
		mcp_tool_error(s, r, id, err);
		return;
	}
	if ((req = node_msg_new(NODE_SEND)) == NULL) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	sa = node_args_send(req);
	sa->text = strdup(text);
	sa->to = a->to != NULL ? strdup(a->to) : NULL;
	sa->private = a->to != NULL && a->to[0] != '\0' && !a->public;
	if (a->reply_to != NULL)
		snprintf(sa->reply_to, sizeof(sa->reply_to), "%s", a->reply_to);
	if (files != NULL)
		mcp_attach(s, r, id, files, req, room);
	else
		mcp_ask(s, r, id, req, room, 0, NULL, NULL);
}

/* Whether a history call is a search (README, "/api/search"): words, a
 * thread, files, an addressee, a cursor or after. */
static int
history_searches(const struct mcp_history_in *a)
{
	return a->query != NULL || a->thread != NULL || a->files ||
	    a->to != NULL || a->cursor != NULL || a->has_after;
}

/* history as a search: NODE_SEARCH, whose hits come best first (a
 * thread's oldest first), each with its excerpt. */
static void
history_search(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const struct mcp_history_in *a, const char *room)
{
	struct node_search_args *q;
	struct node_msg *req;
	char err[PAPO_ERR_LEN];

	/* A search's page is smaller than the table's limit. */
	if (a->limit > MCP_SEARCH_MAX) {
		snprintf(err, sizeof(err), "history: limit must be a whole "
		    "number from 1 to %d in a search", MCP_SEARCH_MAX);
		mcp_tool_error(s, r, id, err);
		return;
	}
	if ((req = node_msg_new(NODE_SEARCH)) == NULL) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	q = node_args_search(req);
	q->limit = (size_t)a->limit;
	q->before = a->before;
	/* since: from that time on; after: after it. */
	q->after_ts = a->since > 0 ? a->since - 1 : a->after;
	q->files_only = a->files;
	if (a->thread != NULL)
		memcpy(q->thread, a->thread, PAPO_MSGID_LEN + 1);
	q->text = a->query != NULL && a->query[0] != '\0' ?
	    strdup(a->query) : NULL;
	q->from = a->from != NULL ? strdup(a->from) : NULL;
	q->to = a->to != NULL ? strdup(a->to) : NULL;
	q->cursor = a->cursor != NULL ? strdup(a->cursor) : NULL;
	mcp_ask(s, r, id, req, room, 1, NULL, NULL);
}

static void
tool_history(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room)
{
	const struct mcp_history_in *a = in;
	struct node_history_args *h;
	struct node_msg *req;
	char err[PAPO_ERR_LEN];

	(void)meta;
	if (history_searches(a)) {
		history_search(s, r, id, a, room);
		return;
	}
	if (strcmp(room, "*") == 0) {
		mcp_tool_error(s, r, id, "history: room \"*\" (every room) is "
		    "for a search: give query, to, thread, files or after");
		return;
	}
	/* before_id goes on from a page's earlier: with its before. */
	if (a->before_id != NULL && a->before == 0) {
		mcp_schema_bad(err, &mcp_history_desc, "before_id");
		mcp_tool_error(s, r, id, err);
		return;
	}
	if ((req = node_msg_new(NODE_HISTORY)) == NULL) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	h = node_args_history(req);
	if (a->before_id != NULL)
		memcpy(h->before_id, a->before_id, PAPO_MSGID_LEN + 1);
	h->limit = (size_t)a->limit;
	h->before = a->before;
	h->since = a->since;
	h->from = a->from != NULL ? strdup(a->from) : NULL;
	mcp_ask(s, r, id, req, room, 1, NULL, NULL);
}

static void
tool_status(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room)
{
	cJSON *extra = cJSON_CreateObject();
	const struct mcp_stream *ms;
	int channels = s->channels == MCP_PUSH_GIVES;

	(void)in;
	(void)meta;
	/* What this session's agent has still to get, and how: pushes
	 * count when its client declared it takes them, or listens for
	 * them on a stream; and whether it was woken. */
	LIST_FOREACH(ms, &s->streams, entry)
		if (ms->want & MCP_WANT_CHANNEL)
			channels = 1;
	cJSON_AddStringToObject(extra, "agent", s->a->name);
	cJSON_AddNumberToObject(extra, "unread", (double)mcp_unread(s->a,
	    room));
	cJSON_AddBoolToObject(extra, "channels", channels);
	cJSON_AddItemToObject(extra, "wake", mcp_wake_json(s->a));
	/* Every room the daemon is in, and the one this session is bound
	 * to (null: it hears every room). */
	cJSON_AddItemToObject(extra, "rooms", mcp_room_list(s->m, s->room));
	if (s->room[0] != '\0')
		cJSON_AddStringToObject(extra, "bound", s->room);
	else
		cJSON_AddNullToObject(extra, "bound");
	mcp_ask(s, r, id, node_msg_new(NODE_STATUS), room, 0, NULL, extra);
}

/* The tools, in tools/list's order: mcp_schema.c's, each with its
 * handler (mcp_tools_open sees that none is left out). */
static const struct {
	const struct mcp_tool_desc *desc;
	mcp_tool_fn *fn;
} mcp_tools[] = {
	{ &mcp_send_desc, tool_send },
	{ &mcp_wait_desc, tool_wait },
	{ &mcp_history_desc, tool_history },
	{ &mcp_status_desc, tool_status },
	{ &mcp_fetch_desc, tool_fetch },
};
#define MCP_NTOOLS (sizeof(mcp_tools) / sizeof(mcp_tools[0]))

void
m_tools_list(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params)
{
	cJSON *res = cJSON_CreateObject();

	(void)params;
	cJSON_AddItemToObject(res, "tools", cJSON_Duplicate(s->m->tools, 1));
	mcp_cacheable(res, s->rev, MCP_TTL_MS, "public");
	mcp_reply_text(r, 200, mcp_result(id, res, s->rev));
}

/*
 * The room a tool call acts on, into room: the one its room argument
 * (sel; NULL when not given) names, else the session's (?room=), else
 * "" (the default room for send, history, status and fetch; every room
 * for wait).  -1, with r answered
 * by a tool error, when the argument names no room, or another than the
 * session's, or the session's room was left.
 */
static int
mcp_tool_room(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const char *tool, const char *sel, char room[PAPO_ROOMID_LEN + 1])
{
	const struct mcp_room *named;
	char err[PAPO_ERR_LEN], msg[PAPO_ERR_LEN + 64];

	if (mcp_room_left(s, tool, msg, sizeof(msg))) {
		mcp_tool_error(s, r, id, msg);
		return -1;
	}
	snprintf(room, PAPO_ROOMID_LEN + 1, "%s", s->room);
	if (sel == NULL)
		return 0;
	/* Every room: a search's (history checks it searches). */
	if (strcmp(sel, "*") == 0 && strcmp(tool, "history") == 0 &&
	    s->room[0] == '\0') {
		strcpy(room, "*");
		return 0;
	}
	/* A bound session finds its own room alone (mcp_room_find): the
	 * error names no other. */
	if ((named = mcp_room_find(s->m, s->room, sel, err)) == NULL) {
		if (s->room[0] != '\0')
			snprintf(msg, sizeof(msg), "%s: this session is bound to "
			    "room %s (%.8s) by /mcp?room=, and '%.40s' does not "
			    "name it: leave room out, or use a session of the "
			    "room you mean", tool, s->room_name, s->room, sel);
		else
			snprintf(msg, sizeof(msg), "%s: %s", tool, err);
		mcp_tool_error(s, r, id, msg);
		return -1;
	}
	snprintf(room, PAPO_ROOMID_LEN + 1, "%s", named->id);
	return 0;
}

void
m_tools_call(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	char msg[192], err[PAPO_ERR_LEN], room[PAPO_ROOMID_LEN + 1];
	union mcp_tool_in in;
	size_t off;

	if (!cJSON_IsString(name) || (args != NULL && !cJSON_IsObject(args))) {
		mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, "tools/call takes name and "
		    "arguments (an object)");
		return;
	}
	for (size_t i = 0; i < MCP_NTOOLS; i++) {
		const struct mcp_tool_desc *d = mcp_tools[i].desc;

		if (strcmp(name->valuestring, d->name) != 0)
			continue;
		if (mcp_schema_read(err, d, args, &in) == -1) {
			mcp_tool_error(s, r, id, err);
			return;
		}
		if (mcp_tool_room(s, r, id, d->name, mcp_schema_str(d, &in,
		    "room"), room) == -1)
			return;
		mcp_tools[i].fn(s, r, id, &in, meta, room);
		return;
	}
	off = (size_t)snprintf(msg, sizeof(msg), "no tool named '%.40s': the "
	    "tools are", name->valuestring);
	for (size_t i = 0; i < MCP_NTOOLS && off < sizeof(msg); i++)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off, "%s%s",
		    i > 0 ? ", " : " ", mcp_tools[i].desc->name);
	mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, msg);
}

int
mcp_tools_open(struct mcp *m)
{
	cJSON *t;

	if ((m->tools = cJSON_CreateArray()) == NULL)
		return -1;
	for (size_t i = 0; i < MCP_NTOOLS; i++) {
		/* Every tool declared is served, in the same order. */
		if (mcp_tools[i].desc != mcp_tool_descs[i] ||
		    (t = mcp_schema_tool(mcp_tools[i].desc)) == NULL)
			return -1;
		cJSON_AddItemToArray(m->tools, t);
	}
	return mcp_tool_descs[MCP_NTOOLS] == NULL ? 0 : -1;
}

void
mcp_tools_close(struct mcp *m)
{
	cJSON_Delete(m->tools);
	m->tools = NULL;
}
