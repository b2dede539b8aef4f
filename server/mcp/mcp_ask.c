/*
 * mcp_ask.c: a tool's or a resource's question to the node (mcp_int.h):
 * the request handed over with http_submit, the connection suspended
 * until the node answers, then the answer written as a tool result (a
 * send over a limit as a tool error with retry_after_s) or as
 * resources/read's contents, tagged with its room.  Messages the answer
 * returns (history) ride on a flight, given once it is sent whole.
 *
 * Below the tool and resource tables, above the wait and agent files.
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

/* A send over a limit: a tool error whose structure says which limit
 * and when to try again (docs/MCP.md, "Limits"). */
static cJSON *
mcp_tool_limited(const struct node_msg *msg)
{
	cJSON *res = mcp_tool_result(NULL, msg->err), *s;

	s = cJSON_AddObjectToObject(res, "structuredContent");
	cJSON_AddStringToObject(s, "error", msg->err);
	cJSON_AddStringToObject(s, "limit", msg->limited != NULL ?
	    msg->limited : "rate");
	cJSON_AddNumberToObject(s, "retry_after_s", msg->retry_after_s);
	return res;
}

/* A question to the node on its way. */
struct mcp_call {
	struct mcp *m;
	cJSON *id;
	char *uri;                   /* answer as resources/read of it */
	int rev;                     /* MCP_REV_*: answer as its session's
	                              * revision (which may be gone by then) */
	struct mcp_flight *read;     /* the messages it returns are given */
	cJSON *extra;                /* fields added to the node's answer */
};

static void
mcp_node_done(struct http_req *r, struct node_msg *msg, void *arg)
{
	struct mcp_call *c = arg;
	cJSON *res, *o, *e;
	char *text;

	if (msg->code == 429) {
		res = mcp_tool_limited(msg);
	} else if (msg->code != 0) {
		res = mcp_tool_result(NULL, msg->err);
	} else if ((o = cJSON_Parse(msg->json)) == NULL) {
		res = mcp_tool_result(NULL, "the node answered something that "
		    "is not JSON");
	} else {
		if (c->read != NULL) {
			c->read->ids = mcp_ids(cJSON_GetObjectItemCaseSensitive(o,
			    "messages"), NULL, 0);
			http_req_on_done(r, mcp_flight_done, c->read);
			c->read = NULL;
		}
		while (c->extra != NULL && (e = c->extra->child) != NULL)
			cJSON_AddItemToObject(o, e->string,
			    cJSON_DetachItemViaPointer(c->extra, e));
		/* Which room it is of (status names it already); the files
		 * of the messages it holds with their URIs. */
		if (cJSON_IsObject(o) && msg->room_id[0] != '\0') {
			mcp_room_tag(c->m, o, msg->room_id);
			cJSON_ArrayForEach(e,
			    cJSON_GetObjectItemCaseSensitive(o, "messages"))
				mcp_room_files(e, msg->room_id);
		}
		if (c->uri != NULL) {
			cJSON *contents;

			res = cJSON_CreateObject();
			contents = cJSON_AddArrayToObject(res, "contents");
			e = cJSON_CreateObject();
			cJSON_AddItemToArray(contents, e);
			cJSON_AddStringToObject(e, "uri", c->uri);
			cJSON_AddStringToObject(e, "mimeType", "application/json");
			text = cJSON_PrintUnformatted(o);
			cJSON_AddStringToObject(e, "text", text != NULL ? text :
			    msg->json);
			cJSON_free(text);
			cJSON_Delete(o);
			/* The room's history changes with every message. */
			mcp_cacheable(res, c->rev, 0, "private");
		} else
			res = mcp_tool_result(o, NULL);
	}
	mcp_reply_text(r, 200, mcp_result(c->id, res, c->rev));
	node_msg_free(msg);
	if (c->read != NULL)
		mcp_flight_free(c->read);
	cJSON_Delete(c->extra);
	cJSON_Delete(c->id);
	free(c->uri);
	free(c);
}

/* mcp_ask's, with what it takes of a session: m, rev and the flight. */
static void
mcp_ask_as(struct mcp *m, int rev, struct mcp_flight *read,
    struct http_req *r, const cJSON *id, struct node_msg *req,
    const char *room, const char *uri, cJSON *extra)
{
	struct mcp_call *c = calloc(1, sizeof(*c));

	if (req != NULL && room != NULL && room[0] != '\0' &&
	    req->room == NULL && (req->room = strdup(room)) == NULL) {
		node_msg_free(req);
		req = NULL;
	}
	if (c == NULL || req == NULL || (uri != NULL &&
	    (c->uri = strdup(uri)) == NULL)) {
		if (c != NULL)
			free(c->uri);
		free(c);
		node_msg_free(req);
		cJSON_Delete(extra);
		if (read != NULL)
			mcp_flight_free(read);
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	c->m = m;
	c->id = cJSON_Duplicate(id, 1);
	c->rev = rev;
	c->read = read;
	c->extra = extra;
	http_submit(r, m->node, req, mcp_node_done, c);
}

/*
 * Asks the node req for r, answering it as a tool (or resource) result.
 * read: the messages of the answer are given to the agent when it is
 * sent.  extra: fields for the answer (taken).
 */
void
mcp_ask(struct mcp_session *s, struct http_req *r, const cJSON *id,
    struct node_msg *req, const char *room, int read, const char *uri,
    cJSON *extra)
{
	struct mcp_flight *f = NULL;

	if (read && req != NULL && (f = mcp_flight_new(s->m, s)) == NULL) {
		node_msg_free(req);
		req = NULL;
	}
	mcp_ask_as(s->m, s->rev, f, r, id, req, room, uri, extra);
}

void
mcp_ask_tool(struct mcp *m, int rev, struct http_req *r,
    const cJSON *id, struct node_msg *req, const char *room)
{
	mcp_ask_as(m, rev, NULL, r, id, req, room, NULL, NULL);
}
