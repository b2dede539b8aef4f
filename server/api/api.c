/*
 * api.c: the JSON API for curl and scripts (SPEC "HTTP API"): /healthz,
 * /api/status, /api/history, /api/send and /api/admin; the routes of
 * shared files are blobs.c's, in this table.  Its handlers run on the main
 * thread, called by http.c once a request has passed the checks there:
 * they check the query or body, turn it into a node request and the
 * node's answer into the reply.  They never block; a request waits for
 * the node as a suspended connection (http_submit), so a send that waits
 * 8 s for acks holds up no one else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "node/node.h"
#include "server/api/api.h"
#include "server/api/blobs.h"
#include "server/api/markdown.h"
#include "server/api/param.h"
#include "server/api/search.h"
#include "server/http/http.h"

/* A member is named by name (1..64 bytes) or id (52 characters); the
 * node says whether one exists. */
static int
api_member_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= (PAPO_NAME_MAX > PAPO_ID_LEN ? PAPO_NAME_MAX :
	    PAPO_ID_LEN);
}

/* A send over a limit: 429 with Retry-After, and the same seconds in
 * the body for clients that do not read headers. */
static void
api_limited(struct http_req *r, const struct node_msg *m)
{
	char secs[16], *json;
	cJSON *o = cJSON_CreateObject();

	snprintf(secs, sizeof(secs), "%u", m->retry_after_s);
	http_reply_header(r, "Retry-After", secs);
	cJSON_AddStringToObject(o, "error", m->err);
	cJSON_AddStringToObject(o, "limit", m->limited != NULL ? m->limited :
	    "rate");
	cJSON_AddNumberToObject(o, "retry_after_s", m->retry_after_s);
	json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	http_reply(r, 429, json != NULL ? json : "{\"error\":\"out of memory\"}");
	cJSON_free(json);
}

/* The node's answer to any request: its JSON, or its error and status. */
static void
api_done(struct http_req *r, struct node_msg *m, void *arg)
{
	(void)arg;
	if (m->code == 0 && m->json != NULL)
		http_reply(r, 200, m->json);
	else if (m->code == 429)
		api_limited(r, m);
	else if (m->code >= 400 && m->code <= 599)
		http_reply_error(r, m->code, "%s", m->err[0] != '\0' ? m->err :
		    "the node refused the request");
	else
		http_reply_error(r, 500, "the node gave no answer");
	node_msg_free(m);
}

/* api_done for a history asked with html=1: each message's "html"
 * (markdown.h) added for the dashboard; other clients' JSON is as the
 * node made it. */
static void
api_done_html(struct http_req *r, struct node_msg *m, void *arg)
{
	char *json;

	if (m->code == 0 && m->json != NULL &&
	    (json = markdown_json(m->json, "messages")) != NULL) {
		free(m->json);
		m->json = json;
	}
	api_done(r, m, arg);
}

static void
api_healthz(struct http_req *r, void *node)
{
	(void)node;
	http_reply(r, 200, "{\"ok\":true}");
}

/* A request of kind that takes no parameters (what: its name). */
static void
api_plain(struct http_req *r, void *node, enum node_kind kind,
    const char *what)
{
	struct node_msg *m;

	if (http_req_query_unknown(r, (const char *const[]){ NULL }) != NULL) {
		http_reply_error(r, 400, "%s takes no parameters", what);
		return;
	}
	if ((m = node_msg_new(kind)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	http_submit(r, node, m, api_done, NULL);
}

static void
api_status(struct http_req *r, void *node)
{
	api_plain(r, node, NODE_STATUS, "status");
}

/* GET /api/invite: the room's invite, which holds its key: behind the
 * token like every other route that acts as this member. */
static void
api_invite(struct http_req *r, void *node)
{
	api_plain(r, node, NODE_INVITE, "the invite");
}

static void
api_history(struct http_req *r, void *node)
{
	static const char *const known[] = { "limit", "before", "before_id",
	    "since", "from", "html", NULL };
	const char *bad, *limit, *before, *before_id, *since, *from, *html;
	uint64_t n = API_HISTORY_DEFAULT, b = 0, s = 0;
	char bid[PAPO_MSGID_LEN + 1] = "";
	struct node_history_args *a;
	struct node_msg *m;

	/* A thread is a search (server/api/search.c). */
	if (http_req_query(r, "thread") != NULL) {
		api_thread(r, node);
		return;
	}
	if ((bad = http_req_query_unknown(r, known)) != NULL) {
		http_reply_error(r, 400, "unknown parameter '%s': history takes "
		    "limit, before, before_id, since, from and html (or thread)",
		    bad);
		return;
	}
	limit = http_req_query(r, "limit");
	before = http_req_query(r, "before");
	before_id = http_req_query(r, "before_id");
	since = http_req_query(r, "since");
	from = http_req_query(r, "from");
	html = http_req_query(r, "html");
	if (html != NULL && strcmp(html, "1") != 0 && strcmp(html, "0") != 0) {
		http_reply_error(r, 400, "html is 1 or 0");
		return;
	}
	if (limit != NULL &&
	    (api_number(limit, API_HISTORY_MAX, &n) == -1 || n == 0)) {
		http_reply_error(r, 400, "limit must be a whole number from 1 "
		    "to %d", API_HISTORY_MAX);
		return;
	}
	if ((before != NULL && api_number(before, API_TIME_MAX, &b) == -1) ||
	    (since != NULL && api_number(since, API_TIME_MAX, &s) == -1)) {
		http_reply_error(r, 400, "before and since must be times in "
		    "milliseconds since 1970");
		return;
	}
	if (before_id != NULL && (before == NULL ||
	    api_msgid(before_id, bid) == -1)) {
		http_reply_error(r, 400, "before_id must be a message id (10 "
		    "characters) and goes with before: pass the \"earlier\" "
		    "of the page before as they are");
		return;
	}
	if (from != NULL && !api_member_ok(from)) {
		http_reply_error(r, 400, "from must be a member's name or id");
		return;
	}
	if ((m = node_msg_new(NODE_HISTORY)) == NULL ||
	    (from != NULL &&
	    (node_args_history(m)->from = strdup(from)) == NULL)) {
		node_msg_free(m);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	a = node_args_history(m);
	a->limit = (size_t)n;
	a->before = b;
	memcpy(a->before_id, bid, sizeof(bid));
	a->since = s;
	http_submit(r, node, m, html != NULL && strcmp(html, "1") == 0 ?
	    api_done_html : api_done, NULL);
}

/*
 * Parses body as a JSON object whose keys are all among the n fields:
 * f[i] is then the value of fields[i], NULL when absent.  takes says
 * what the route takes, for the error.  NULL with err otherwise.
 */
static cJSON *
api_object(const char *body, size_t len, const char *const *fields,
    size_t n, const cJSON **f, const char *takes, char err[PAPO_ERR_LEN])
{
	const cJSON *it;
	cJSON *o;

	if (json_read(err, body, len, &o) != JSON_OK)
		return NULL;
	if (!cJSON_IsObject(o)) {
		snprintf(err, PAPO_ERR_LEN, "the body must be a JSON object");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		f[i] = NULL;
	cJSON_ArrayForEach(it, o) {
		size_t i = 0;

		while (i < n && strcmp(it->string, fields[i]) != 0)
			i++;
		if (i == n) {
			snprintf(err, PAPO_ERR_LEN, "unknown field '%.64s': %s",
			    it->string, takes);
			goto fail;
		}
		f[i] = it;       /* once: json_read refuses a key twice */
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/*
 * The files a send names: an array of at most API_FILES_MAX references
 * ("REF") or objects {"ref", "name", "type"} (name and type optional
 * strings), handed to the node as its JSON text; the node says whether
 * each names a file of the room.  0, or -1 with err.
 */
static int
api_files(const cJSON *v, char **out, char err[PAPO_ERR_LEN])
{
	static const char *const keys[] = { "ref", "name", "type" };
	const cJSON *f, *k;
	int n = 0;

	*out = NULL;
	if (!cJSON_IsArray(v)) {
		snprintf(err, PAPO_ERR_LEN, "files must be an array of file "
		    "references (from POST /api/blobs) or of objects {\"ref\", "
		    "\"name\", \"type\"}");
		return -1;
	}
	cJSON_ArrayForEach(f, v) {
		const cJSON *ref = f;

		if (++n > API_FILES_MAX) {
			snprintf(err, PAPO_ERR_LEN, "a message names at most %d "
			    "files", API_FILES_MAX);
			return -1;
		}
		if (cJSON_IsObject(f)) {
			cJSON_ArrayForEach(k, f) {
				size_t i = 0;

				while (i < 3 && strcmp(k->string, keys[i]) != 0)
					i++;
				if (i == 3 || !cJSON_IsString(k)) {
					snprintf(err, PAPO_ERR_LEN, "a file of "
					    "files is {\"ref\", \"name\", "
					    "\"type\"}, each a string");
					return -1;
				}
			}
			ref = cJSON_GetObjectItemCaseSensitive(f, "ref");
		}
		if (!cJSON_IsString(ref) || !blobs_ref_ok(ref->valuestring)) {
			snprintf(err, PAPO_ERR_LEN, "each of files is a file's "
			    "reference (52 characters of a-z and 2-7), or an "
			    "object with one as its ref");
			return -1;
		}
	}
	if (n == 0)
		return 0;
	if ((*out = cJSON_PrintUnformatted(v)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	return 0;
}

/* The fields of a send, in the order of api_send's slots. */
static const char *const api_send_fields[] = { "text", "to", "reply_to",
    "files", "public" };
#define API_NFIELDS (sizeof(api_send_fields) / sizeof(api_send_fields[0]))

int
api_send_parse(const char *body, size_t len, struct node_msg **out,
    char err[PAPO_ERR_LEN])
{
	const cJSON *f[API_NFIELDS];
	const char *text = "", *to = NULL;
	char reply_to[PAPO_MSGID_LEN + 1] = "", *files = NULL;
	struct node_msg *m = NULL;
	cJSON *o = NULL;
	size_t i;
	int status = 400;

#define API_FAIL(code, ...) do {					\
	status = (code);						\
	snprintf(err, PAPO_ERR_LEN, __VA_ARGS__);			\
	goto out;							\
} while (0)
	*out = NULL;
	if ((o = api_object(body, len, api_send_fields, API_NFIELDS, f,
	    "send takes text, to, reply_to, files and public", err)) == NULL)
		return 400;
	/* Files: the text may be empty, or absent. */
	if (f[3] != NULL && !cJSON_IsNull(f[3]) &&
	    api_files(f[3], &files, err) == -1) {
		status = 400;
		goto out;
	}
	if (f[0] == NULL && files == NULL)
		API_FAIL(400, "text is missing");
	/* Optional fields may be null, as many clients send absent ones. */
	for (i = 0; i < 3; i++)
		if (f[i] != NULL && !cJSON_IsString(f[i]) &&
		    ((i == 0 && files == NULL) || !cJSON_IsNull(f[i])))
			API_FAIL(400, "%s must be a string", api_send_fields[i]);
	if (cJSON_IsString(f[0]))
		text = f[0]->valuestring;
	if (text[0] == '\0' && files == NULL)
		API_FAIL(400, "text is empty");
	if (strlen(text) > PAPO_BODY_MAX)
		API_FAIL(413, "text has %zu bytes; at most %d are allowed",
		    strlen(text), PAPO_BODY_MAX);
	if (cJSON_IsString(f[1])) {
		to = f[1]->valuestring;
		if (!api_member_ok(to))
			API_FAIL(400, "to must be a member's name or id");
	}
	if (f[4] != NULL && !cJSON_IsBool(f[4]) && !cJSON_IsNull(f[4]))
		API_FAIL(400, "public must be true or false");
	if (cJSON_IsString(f[2]) && api_msgid(f[2]->valuestring,
	    reply_to) == -1)
		API_FAIL(400, "reply_to must be a message id: %d characters "
		    "of a-z and 2-7", PAPO_MSGID_LEN);
	if ((m = node_msg_new(NODE_SEND)) == NULL ||
	    (node_args_send(m)->text = strdup(text)) == NULL ||
	    (to != NULL && (node_args_send(m)->to = strdup(to)) == NULL))
		API_FAIL(500, "out of memory");
#undef API_FAIL
	/* to alone is private; "public": true makes it the room's. */
	node_args_send(m)->private = to != NULL && to[0] != '\0' &&
	    !cJSON_IsTrue(f[4]);
	memcpy(node_args_send(m)->reply_to, reply_to, sizeof(reply_to));
	if (files != NULL &&
	    (node_args_send(m)->files = strdup(files)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		status = 500;
		goto out;
	}
	*out = m;
	m = NULL;
	status = 0;
out:
	if (m != NULL)
		node_msg_free(m);
	cJSON_free(files);
	cJSON_Delete(o);
	return status;
}

static void
api_send(struct http_req *r, void *node)
{
	char err[PAPO_ERR_LEN];
	struct node_msg *m;
	const char *body;
	size_t len;
	int status;

	body = http_req_body(r, &len);
	if ((status = api_send_parse(body, len, &m, err)) != 0) {
		http_reply_error(r, status, "%s", err);
		return;
	}
	/* The API cannot tell a person from a script: whatever comes this
	 * way (the dashboard, papo say, curl) counts as a person's word for
	 * damping (docs/SECURITY.md). */
	node_args_send(m)->person = 1;
	http_submit(r, node, m, api_done, NULL);
}

/* POST /api/admin and /api/remove {"name": NAME}: a request of kind
 * about member NAME (what: the route's word, for errors). */
static void
api_member_request(struct http_req *r, void *node, enum node_kind kind,
    const char *what)
{
	static const char *const fields[] = { "name" };
	char err[PAPO_ERR_LEN], takes[32];
	const cJSON *name;
	struct node_msg *m;
	const char *body;
	size_t len;
	cJSON *o;

	body = http_req_body(r, &len);
	snprintf(takes, sizeof(takes), "%s takes name", what);
	if ((o = api_object(body, len, fields, 1, &name, takes, err)) == NULL) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	if (!cJSON_IsString(name) || !api_member_ok(name->valuestring)) {
		cJSON_Delete(o);
		http_reply_error(r, 400, "name must be a member's name or id");
		return;
	}
	if ((m = node_msg_new(kind)) == NULL ||
	    (node_args_member(m)->name = strdup(name->valuestring)) == NULL) {
		node_msg_free(m);
		cJSON_Delete(o);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	cJSON_Delete(o);
	http_submit(r, node, m, api_done, NULL);
}

/* POST /api/admin {"name": NAME}: the owner makes NAME an admin.  Not
 * an MCP tool: agents do not govern the room. */
static void
api_admin(struct http_req *r, void *node)
{
	api_member_request(r, node, NODE_ADMIN, "admin");
}

/* POST /api/remove {"name": NAME}: the owner or an admin removes NAME
 * (a new key epoch without it).  Not an MCP tool either. */
static void
api_remove(struct http_req *r, void *node)
{
	api_member_request(r, node, NODE_REMOVE, "remove");
}

/* POST /api/rename {"name": NAME}: this member is NAME from now on, in
 * every room (or in the one the route names); each greets its members
 * again, so that they learn it. */
static void
api_rename(struct http_req *r, void *node)
{
	api_member_request(r, node, NODE_RENAME, "rename");
}

/* POST /api/rotate {}: a new key epoch, by the owner or an admin (403
 * with the reason otherwise).  Not an MCP tool either. */
static void
api_rotate(struct http_req *r, void *node)
{
	char err[PAPO_ERR_LEN];
	struct node_msg *m;
	const char *body;
	size_t len;
	cJSON *o = NULL;

	body = http_req_body(r, &len);
	if (len > 0 && json_read(err, body, len, &o) != JSON_OK) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	if (o != NULL && (!cJSON_IsObject(o) || o->child != NULL)) {
		cJSON_Delete(o);
		http_reply_error(r, 400, "rotate takes no fields: send {}");
		return;
	}
	cJSON_Delete(o);
	if ((m = node_msg_new(NODE_ROTATE)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	http_submit(r, node, m, api_done, NULL);
}

/* GET /api/rooms: the rooms this daemon is in, and the default. */
static void
api_rooms(struct http_req *r, void *node)
{
	api_plain(r, node, NODE_ROOMS, "the list of rooms");
}

/* A copy of a string field's value v into *out (NULL when v is absent
 * or null); -1 when it is not a string, or out of memory. */
static int
api_str(const cJSON *v, char **out)
{
	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return -1;
	return (*out = strdup(v->valuestring)) != NULL ? 0 : -1;
}

/*
 * POST /api/rooms: {"invite", "name", "about"} joins the room of the
 * invite; {"room", "name", "about"} (no invite) makes a new room named
 * room (null: the derived name).  Either starts at once, beside the
 * rooms held; the answer is the room (with its invite when made).
 */
static void
api_rooms_add(struct http_req *r, void *node)
{
	static const char *const fields[] = { "invite", "room", "name",
	    "about" };
	const cJSON *f[4];
	char err[PAPO_ERR_LEN];
	struct node_enter_args *a;
	struct node_msg *m = NULL;
	const char *body;
	size_t len;
	cJSON *o;
	int join;

	body = http_req_body(r, &len);
	if ((o = api_object(body, len, fields, 4, f, "a room is joined with "
	    "invite, name and about, or made with room, name and about",
	    err)) == NULL) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	join = f[0] != NULL && !cJSON_IsNull(f[0]);
	if (join && !cJSON_IsString(f[0])) {
		http_reply_error(r, 400, "invite must be a string");
		goto out;
	}
	if ((m = node_msg_new(join ? NODE_JOIN : NODE_CREATE)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		goto out;
	}
	/* Joined: text is the invite; made: the room's name. */
	a = node_args_enter(m);
	if (api_str(f[2], &a->name) == -1 || api_str(f[3], &a->about) == -1 ||
	    (!join && api_str(f[1], &a->text) == -1)) {
		http_reply_error(r, 400, "name, about and room must be strings");
		goto out;
	}
	if (join && f[1] != NULL) {
		http_reply_error(r, 400, "a room joined by invite has the name "
		    "its maker gave it: drop room");
		goto out;
	}
	/* No name: the one this member has in its rooms (home_join). */
	if (join && api_str(f[0], &a->text) == -1) {
		http_reply_error(r, 500, "out of memory");
		goto out;
	}
	http_submit(r, node, m, api_done, NULL);
	m = NULL;
out:
	node_msg_free(m);
	cJSON_Delete(o);
}

/* DELETE /api/rooms/ROOM[?delete=1] (or POST /api/rooms/ROOM/leave):
 * leaves ROOM (a bye to its members);
 * its files are kept aside, or with delete=1 deleted. */
static void
api_room_leave(struct http_req *r, void *node)
{
	static const char *const known[] = { "delete", NULL };
	const char *del;
	struct node_msg *m;

	if (http_req_query_unknown(r, known) != NULL) {
		http_reply_error(r, 400, "leaving takes delete=1 or nothing");
		return;
	}
	del = http_req_query(r, "delete");
	if (del != NULL && strcmp(del, "1") != 0 && strcmp(del, "0") != 0) {
		http_reply_error(r, 400, "delete is 1 or 0");
		return;
	}
	if (http_req_room(r) == NULL) {
		http_reply_error(r, 400, "name the room to leave: DELETE "
		    "/api/rooms/ROOM");
		return;
	}
	if ((m = node_msg_new(NODE_LEAVE)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	node_args_leave(m)->delete = del != NULL && strcmp(del, "1") == 0;
	http_submit(r, node, m, api_done, NULL);
}

/* POST /api/rooms/ROOM/default: ROOM is the default room from now on
 * (the routes without a room, and agents that name none). */
static void
api_room_default(struct http_req *r, void *node)
{
	struct node_msg *m;

	if (http_req_room(r) == NULL) {
		http_reply_error(r, 400, "name the room: POST "
		    "/api/rooms/ROOM/default");
		return;
	}
	if ((m = node_msg_new(NODE_DEFAULT)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	http_submit(r, node, m, api_done, NULL);
}

static const struct http_route api_table[] = {
	{ "GET", "/healthz", api_healthz, 1 },
	{ "GET", "/api/status", api_status, 0 },
	{ "GET", "/api/invite", api_invite, 0 },
	{ "GET", "/api/history", api_history, 0 },
	{ "GET", "/api/search", api_search, 0 },
	{ "POST", "/api/send", api_send, 0 },
	{ "POST", "/api/admin", api_admin, 0 },
	{ "POST", "/api/rotate", api_rotate, 0 },
	{ "POST", "/api/remove", api_remove, 0 },
	{ "POST", "/api/rename", api_rename, 0 },
	{ "GET", "/api/rooms", api_rooms, 0 },
	{ "POST", "/api/rooms", api_rooms_add, 0 },
	/* /api/rooms/ROOM and /api/rooms/ROOM/default (http.c). */
	{ "DELETE", "/api/room", api_room_leave, 0 },
	{ "POST", "/api/leave", api_room_leave, 0 },
	{ "POST", "/api/default", api_room_default, 0 },
	{ "POST", "/api/blobs", blobs_upload, HTTP_UPLOAD },
	{ "GET", "/api/blobs/*", blobs_get, 0 },
	{ "GET", "/api/blobs/*/state", blobs_state, 0 },
	{ "POST", "/api/blobs/*/fetch", blobs_fetch, 0 },
};

const struct http_route *
api_routes(size_t *n)
{
	*n = sizeof(api_table) / sizeof(api_table[0]);
	return api_table;
}
