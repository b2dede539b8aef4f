/*
 * mcp_resources.c: MCP's resources and subscriptions (mcp_int.h;
 * docs/MCP.md, "Rooms" and "Revision 2026-07-28"): the history resources
 * (papo://room/history, the session's or the default room's, and
 * papo://rooms/ID/history, each room's), listed (and as templates, with
 * the files'), read through the node
 * (mcp_ask.c), subscribed to; a history URI that names no room the
 * session may hear refused saying why; and subscriptions/listen, whose
 * answer is a stream of the notifications it asked for (the pushes
 * themselves are mcp_deliver.c's).
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

/*
 * The room of the history resource uri names, into room: for
 * papo://room/history the session's room ("" when it has none: the
 * default room); for papo://rooms/ID/history that room.  -1, with err
 * saying why, when it names no such resource: not a history URI, a room
 * this daemon is not in, another room than the one the session is bound
 * to, or the session's room was left.
 */
static int
mcp_history_room(const struct mcp_session *s, const char *uri,
    char room[PAPO_ROOMID_LEN + 1], char err[PAPO_ERR_LEN])
{
	const size_t pre = sizeof(MCP_ROOMS_URI) - 1;
	const size_t end = sizeof(MCP_ROOMS_URI_END) - 1;
	size_t len = strlen(uri);
	char names[160];

	if (mcp_room_left(s, uri, err, PAPO_ERR_LEN))
		return -1;
	if (strcmp(uri, MCP_HISTORY_URI) == 0) {
		snprintf(room, PAPO_ROOMID_LEN + 1, "%s", s->room);
		return 0;
	}
	if (len <= pre + end || strncmp(uri, MCP_ROOMS_URI, pre) != 0 ||
	    strcmp(uri + len - end, MCP_ROOMS_URI_END) != 0) {
		snprintf(err, PAPO_ERR_LEN, "no such resource: the resources "
		    "are " MCP_HISTORY_URI " and " MCP_ROOMS_URI "ID"
		    MCP_ROOMS_URI_END " of each room resources/list lists");
		return -1;
	}
	mcp_room_names(s->m, s->room, names, sizeof(names));
	if (len - pre - end != PAPO_ROOMID_LEN) {
		snprintf(err, PAPO_ERR_LEN, "no such resource: %.100s names no "
		    "room id (" MCP_ROOMS_URI "ID" MCP_ROOMS_URI_END " takes a "
		    "room's whole id, as resources/list and status give them); "
		    "the rooms are %s", uri, names);
		return -1;
	}
	snprintf(room, PAPO_ROOMID_LEN + 1, "%.*s", PAPO_ROOMID_LEN, uri + pre);
	if (mcp_room_get(s->m, room) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "no such resource: this daemon is "
		    "not in room %s (it left it, or never joined it); the rooms "
		    "are %s", room, names[0] != '\0' ? names : "none");
		return -1;
	}
	if (s->room[0] != '\0' && strcmp(s->room, room) != 0) {
		snprintf(err, PAPO_ERR_LEN, "no such resource: this session is "
		    "bound to room %s (%.8s) by /mcp?room=, and %.100s is "
		    "another room's: use a session of that room", s->room_name,
		    s->room, uri);
		return -1;
	}
	return 0;
}

/* The URI of room's own history. */
static void
mcp_history_uri(char *out, size_t len, const char *room)
{
	snprintf(out, len, MCP_ROOMS_URI "%s" MCP_ROOMS_URI_END, room);
}

/* A resource that is not there, err saying why: -32002 until
 * 2025-11-25, invalid params (-32602) naming the uri in 2026-07-28. */
static void
mcp_no_resource(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const char *uri, const char *err)
{
	cJSON *data = NULL;

	if (s->modern && uri != NULL) {
		data = cJSON_CreateObject();
		cJSON_AddStringToObject(data, "uri", uri);
	}
	mcp_reply_text(r, 200, mcp_error(id, s->modern ?
	    JSONRPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND, err, data));
}

/* The history uri params name, and the id of its room into room; NULL
 * with r answered when there is none or s may not hear that room. */
static const char *
mcp_resource_uri(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params, char room[PAPO_ROOMID_LEN + 1])
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(params, "uri");
	char err[PAPO_ERR_LEN];

	if (!cJSON_IsString(u)) {
		mcp_no_resource(s, r, id, NULL, "no such resource: params.uri "
		    "must be a resource's URI, as resources/list gives them");
		return NULL;
	}
	if (mcp_history_room(s, u->valuestring, room, err) == -1) {
		mcp_no_resource(s, r, id, u->valuestring, err);
		return NULL;
	}
	return u->valuestring;
}

void
m_resources_list(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params)
{
	cJSON *res = cJSON_CreateObject(), *arr, *e;
	char desc_err[PAPO_ERR_LEN];

	(void)params;
	arr = cJSON_AddArrayToObject(res, "resources");
	e = cJSON_CreateObject();
	cJSON_AddItemToArray(arr, e);
	cJSON_AddStringToObject(e, "uri", MCP_HISTORY_URI);
	cJSON_AddStringToObject(e, "name", "room history");
	cJSON_AddStringToObject(e, "description", "The room's last 50 "
	    "messages, oldest first; subscribe to hear when it changes.");
	cJSON_AddStringToObject(e, "mimeType", "application/json");
	/* Each room's own, but another than the session's. */
	for (size_t i = 0; i < s->m->nrooms; i++) {
		const struct mcp_room *room = &s->m->rooms[i];
		char uri[128], desc[PAPO_NAME_MAX + 96];

		if (s->room[0] != '\0' && strcmp(s->room, room->id) != 0)
			continue;
		mcp_history_uri(uri, sizeof(uri), room->id);
		snprintf(desc, sizeof(desc), "The last 50 messages of room %s, "
		    "oldest first.", room->name);
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "uri", uri);
		cJSON_AddStringToObject(e, "name", room->name);
		cJSON_AddStringToObject(e, "description", desc);
		cJSON_AddStringToObject(e, "mimeType", "application/json");
	}
	/* Then the files of the rooms' recent messages. */
	if (mcp_room_left(s, "resources/list", desc_err, sizeof(desc_err))) {
		mcp_cacheable(res, s->rev, 0, "private");
		mcp_reply_text(r, 200, mcp_result(id, res, s->rev));
	} else
		mcp_files_list(s, r, id, res);
}

/*
 * resources/templates/list: the resources papo serves by a room's id
 * (and a file's ref), as URI templates (RFC 6570), the same for every
 * session.  resources/list lists the rooms' and recent files' URIs
 * themselves.
 */
void
m_resources_templates(struct mcp_session *s, struct http_req *r,
    const cJSON *id, const cJSON *params)
{
	static const struct {
		const char *uri, *name, *description, *type;
	} templates[] = {
		{ MCP_ROOMS_URI "{room_id}" MCP_ROOMS_URI_END, "room history",
		  "The last 50 messages of a room, oldest first; room_id is "
		  "the room's whole id, as status and resources/list give it.",
		  "application/json" },
		{ MCP_ROOMS_URI "{room_id}" MCP_FILES_URI "{ref}", "shared file",
		  "A file a message of the room shared; ref as the message's "
		  "files give it (the fetch tool saves a large one to a "
		  "path).", NULL },
	};
	cJSON *res = cJSON_CreateObject(), *arr, *e;

	(void)params;
	arr = cJSON_AddArrayToObject(res, "resourceTemplates");
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "uriTemplate", templates[i].uri);
		cJSON_AddStringToObject(e, "name", templates[i].name);
		cJSON_AddStringToObject(e, "description",
		    templates[i].description);
		if (templates[i].type != NULL)
			cJSON_AddStringToObject(e, "mimeType",
			    templates[i].type);
	}
	mcp_cacheable(res, s->rev, MCP_TTL_MS, "public");
	mcp_reply_text(r, 200, mcp_result(id, res, s->rev));
}

void
m_resources_read(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params)
{
	struct node_msg *req;
	const char *uri;
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(params, "uri");
	char room[PAPO_ROOMID_LEN + 1];

	if (cJSON_IsString(u) && mcp_file_uri(u->valuestring)) {
		mcp_file_read(s, r, id, u->valuestring);
		return;
	}
	if ((uri = mcp_resource_uri(s, r, id, params, room)) == NULL)
		return;
	if ((req = node_msg_new(NODE_HISTORY)) != NULL)
		node_args_history(req)->limit = 50;
	mcp_ask(s, r, id, req, room, 1, uri, NULL);
}

/* Whether s subscribes to papo://rooms/ROOM/history: on 1 or 0; -1
 * without memory. */
static int
mcp_subscribe_room(struct mcp_session *s, const char *room, int on)
{
	char (*subs)[PAPO_ROOMID_LEN + 1];

	for (size_t i = 0; i < s->nsubs; i++)
		if (strcmp(s->subs[i], room) == 0) {
			if (!on)
				memmove(s->subs[i], s->subs[i + 1],
				    (--s->nsubs - i) * sizeof(s->subs[0]));
			return 0;
		}
	if (!on)
		return 0;
	if ((subs = realloc(s->subs, (s->nsubs + 1) * sizeof(*subs))) == NULL)
		return -1;
	s->subs = subs;
	snprintf(s->subs[s->nsubs++], sizeof(s->subs[0]), "%s", room);
	return 0;
}

static void
m_subscribe(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params, int on)
{
	const char *uri;
	char room[PAPO_ROOMID_LEN + 1];

	if ((uri = mcp_resource_uri(s, r, id, params, room)) == NULL)
		return;
	if (strcmp(uri, MCP_HISTORY_URI) == 0)
		s->subscribed = on;
	else if (mcp_subscribe_room(s, room, on) == -1) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	mcp_reply_text(r, 200, mcp_result(id, cJSON_CreateObject(), s->rev));
}

void
m_resources_subscribe(struct mcp_session *s, struct http_req *r,
    const cJSON *id, const cJSON *params)
{
	m_subscribe(s, r, id, params, 1);
}

void
m_resources_unsubscribe(struct mcp_session *s, struct http_req *r,
    const cJSON *id, const cJSON *params)
{
	m_subscribe(s, r, id, params, 0);
}

/*
 * subscriptions/listen: the answer is a stream that stays open: first
 * notifications/subscriptions/acknowledged with what will be sent, then
 * those notifications as they happen, each tagged with the request's id
 * in params._meta; when the daemon stops (or the session is deleted),
 * the request's result, and the stream ends.  The client cancels by
 * closing it.  papo's lists of tools and resources never change, so of
 * the kinds of the revision only resourceSubscriptions of the histories
 * (papo://room/history, papo://rooms/ID/history) are granted;
 * "claude/channel": true asks for the room's messages.  Kinds it cannot
 * send, and URIs that are not papo's, are left out of the
 * acknowledgement, as the revision says; a kind given with the wrong
 * type is invalid params, and so is a room's history that names no room
 * this session may hear (a clear error rather than a silent stream).
 */
void
m_listen(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *params)
{
	static const char *const flags[] = {
		"toolsListChanged", "promptsListChanged",
		"resourcesListChanged", MCP_CHANNEL, NULL
	};
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(params,
	    "notifications");
	const cJSON *uris, *u, *v;
	struct mcp_stream *ms;
	cJSON *p, *granted, *arr, *data;
	unsigned want = 0;
	int bad;
	char msg[PAPO_ERR_LEN + 48], err[PAPO_ERR_LEN];
	char rooms[PAPO_ROOMS_MAX][PAPO_ROOMID_LEN + 1], room[PAPO_ROOMID_LEN + 1];
	char uri[sizeof(MCP_ROOMS_URI) + PAPO_ROOMID_LEN +
	    sizeof(MCP_ROOMS_URI_END)];
	size_t nrooms = 0, k;

	if (!cJSON_IsObject(f)) {
		mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, "subscriptions/listen takes "
		    "notifications, an object such as {\"resourceSubscriptions\":"
		    "[\"" MCP_HISTORY_URI "\"],\"" MCP_CHANNEL "\":true}");
		return;
	}
	for (size_t i = 0; flags[i] != NULL; i++) {
		v = cJSON_GetObjectItemCaseSensitive(f, flags[i]);
		if (v != NULL && !cJSON_IsBool(v)) {
			snprintf(msg, sizeof(msg), "notifications.%s must be true "
			    "or false", flags[i]);
			mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, msg);
			return;
		}
	}
	if (mcp_room_left(s, "subscriptions/listen", msg, sizeof(msg))) {
		mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, msg);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, MCP_CHANNEL)))
		want |= MCP_WANT_CHANNEL;
	uris = cJSON_GetObjectItemCaseSensitive(f, "resourceSubscriptions");
	bad = uris != NULL && !cJSON_IsArray(uris);
	if (!bad)
		cJSON_ArrayForEach(u, uris) {
			if (!cJSON_IsString(u)) {
				bad = 1;
				break;
			}
			if (strcmp(u->valuestring, MCP_HISTORY_URI) == 0) {
				want |= MCP_WANT_HISTORY;
				continue;
			}
			if (strncmp(u->valuestring, MCP_ROOMS_URI,
			    sizeof(MCP_ROOMS_URI) - 1) != 0)
				continue;    /* not papo's: left out */
			if (mcp_history_room(s, u->valuestring, room, err) ==
			    -1) {
				snprintf(msg, sizeof(msg), "notifications."
				    "resourceSubscriptions: %s", err);
				data = cJSON_CreateObject();
				cJSON_AddStringToObject(data, "uri",
				    u->valuestring);
				mcp_reply_text(r, 200, mcp_error(id,
				    JSONRPC_INVALID_PARAMS, msg, data));
				return;
			}
			for (k = 0; k < nrooms && strcmp(rooms[k], room) != 0;
			    k++)
				;
			if (k == nrooms)
				memcpy(rooms[nrooms++], room, sizeof(room));
		}
	if (bad) {
		mcp_reply_error(r, 200, id, JSONRPC_INVALID_PARAMS, "notifications."
		    "resourceSubscriptions must be an array of resource URIs "
		    "(strings)");
		return;
	}
	if ((ms = mcp_stream_open(s, r, id, want)) == NULL) {
		mcp_reply_error(r, 500, id, JSONRPC_INTERNAL_ERROR, "cannot open the stream");
		return;
	}
	if (nrooms > 0 && (ms->rooms = malloc(nrooms *
	    sizeof(*ms->rooms))) != NULL) {
		memcpy(ms->rooms, rooms, nrooms * sizeof(*ms->rooms));
		ms->nrooms = nrooms;
	}
	p = cJSON_CreateObject();
	granted = cJSON_AddObjectToObject(p, "notifications");
	if ((want & MCP_WANT_HISTORY) || ms->nrooms > 0) {
		arr = cJSON_AddArrayToObject(granted, "resourceSubscriptions");
		if (want & MCP_WANT_HISTORY)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateString(MCP_HISTORY_URI));
		for (k = 0; k < ms->nrooms; k++) {
			mcp_history_uri(uri, sizeof(uri), ms->rooms[k]);
			cJSON_AddItemToArray(arr, cJSON_CreateString(uri));
		}
	}
	if (want & MCP_WANT_CHANNEL)
		cJSON_AddBoolToObject(granted, MCP_CHANNEL, 1);
	mcp_send_tagged(ms, "notifications/subscriptions/acknowledged", p);
	cJSON_Delete(p);
	if (want & MCP_WANT_CHANNEL)
		mcp_flush(s, ms);
}
