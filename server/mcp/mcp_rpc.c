/*
 * mcp_rpc.c: MCP's JSON-RPC messages (mcp_rpc.h, mcp_int.h): a POST's
 * message parsed and checked for shape (pure: the fuzz target calls it
 * on its own), and the text of results, errors, notifications and tool
 * results, with the answers that carry them.  The lowest of MCP's
 * files: it calls none of the others.  Main thread only, but for the
 * parser and the texts, which hold no state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp_rpc.h"

#define MCP_META_SERVER "io.modelcontextprotocol/serverInfo"  /* _meta */

char *
mcp_print(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	cJSON_Delete(o);
	return s;
}

/*
 * A response, as revision rev has it.  Results of 2026-07-28 say what
 * they are (resultType) and who made them (serverInfo in _meta); a tool
 * result's structuredContent is 2025-06-18's, and a client of 2025-03-26
 * reads content alone (which has the same JSON as text).
 */
char *
mcp_result(const cJSON *id, cJSON *result, int rev)
{
	cJSON *o = cJSON_CreateObject();

	if (rev < MCP_REV_2025_06_18 && result != NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(result,
		    "structuredContent");
	if (rev >= MCP_REV_2026_07_28 && result != NULL) {
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(result, "_meta");
		cJSON *info;

		if (!cJSON_HasObjectItem(result, "resultType"))
			cJSON_AddStringToObject(result, "resultType",
			    "complete");
		if (meta == NULL)
			meta = cJSON_AddObjectToObject(result, "_meta");
		info = cJSON_AddObjectToObject(meta, MCP_META_SERVER);
		cJSON_AddStringToObject(info, "name", "papo");
		cJSON_AddStringToObject(info, "version", PAPO_VERSION);
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id != NULL ? cJSON_Duplicate(id, 1) :
	    cJSON_CreateNull());
	cJSON_AddItemToObject(o, "result", result);
	return mcp_print(o);
}

char *
mcp_error(const cJSON *id, int code, const char *msg, cJSON *data)
{
	cJSON *o = cJSON_CreateObject(), *e;

	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id != NULL ? cJSON_Duplicate(id, 1) :
	    cJSON_CreateNull());
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	if (data != NULL)
		cJSON_AddItemToObject(e, "data", data);
	return mcp_print(o);
}

char *
mcp_notification(const char *method, cJSON *params)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddItemToObject(o, "params", params);
	return mcp_print(o);
}

void
mcp_reply_text(struct http_req *r, int status, char *text)
{
	http_reply(r, status, text != NULL ? text :
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":JSONRPC_INTERNAL_ERROR,"
	    "\"message\":\"out of memory\"}}");
	cJSON_free(text);
}

void
mcp_reply_error(struct http_req *r, int status, const cJSON *id, int code,
    const char *msg)
{
	mcp_reply_text(r, status, mcp_error(id, code, msg, NULL));
}

int
mcp_accepts(struct http_req *r, const char *type)
{
	const char *a = http_req_header(r, "Accept");

	return a == NULL || strstr(a, type) != NULL || strstr(a, "*/*") != NULL;
}

/* A tool's answer: the JSON as text for the model, and as structure. */
cJSON *
mcp_tool_result(cJSON *structured, const char *error)
{
	cJSON *res = cJSON_CreateObject(), *content, *c;
	char *text;

	content = cJSON_AddArrayToObject(res, "content");
	c = cJSON_CreateObject();
	cJSON_AddItemToArray(content, c);
	cJSON_AddStringToObject(c, "type", "text");
	if (error != NULL) {
		cJSON_AddStringToObject(c, "text", error);
		cJSON_AddBoolToObject(res, "isError", 1);
		cJSON_Delete(structured);
		return res;
	}
	text = cJSON_PrintUnformatted(structured);
	cJSON_AddStringToObject(c, "text", text != NULL ? text : "{}");
	cJSON_free(text);
	cJSON_AddItemToObject(res, "structuredContent", structured);
	cJSON_AddBoolToObject(res, "isError", 0);
	return res;
}

int
mcp_rpc_parse(const char *body, size_t len, struct mcp_rpc *rpc)
{
	const cJSON *v;

	memset(rpc, 0, sizeof(*rpc));
	rpc->code = JSONRPC_INVALID_REQUEST;
	if ((rpc->msg = http_json_parse(body, len, rpc->err)) == NULL) {
		rpc->code = JSONRPC_PARSE_ERROR;
		return -1;
	}
	if (!cJSON_IsObject(rpc->msg)) {
		snprintf(rpc->err, sizeof(rpc->err), "%s",
		    cJSON_IsArray(rpc->msg) ? "one JSON-RPC message per "
		    "request: batches are not supported" :
		    "a JSON-RPC message is a JSON object");
		return -1;
	}
	rpc->id = cJSON_GetObjectItemCaseSensitive(rpc->msg, "id");
	rpc->method = cJSON_GetObjectItemCaseSensitive(rpc->msg, "method");
	rpc->params = cJSON_GetObjectItemCaseSensitive(rpc->msg, "params");
	v = cJSON_GetObjectItemCaseSensitive(rpc->msg, "jsonrpc");
	if (rpc->id != NULL && !cJSON_IsString(rpc->id) &&
	    !cJSON_IsNumber(rpc->id))
		rpc->id = NULL;    /* answered as null: it cannot be echoed */
	else if (cJSON_IsString(v) && strcmp(v->valuestring, "2.0") == 0 &&
	    (rpc->method == NULL || cJSON_IsString(rpc->method))) {
		rpc->code = 0;
		return 0;
	}
	snprintf(rpc->err, sizeof(rpc->err), "not a JSON-RPC 2.0 message");
	return -1;
}

void
mcp_rpc_free(struct mcp_rpc *rpc)
{
	cJSON_Delete(rpc->msg);
	rpc->msg = NULL;
}

void
mcp_cacheable(cJSON *res, int rev, int ttl_ms, const char *scope)
{
	if (rev < MCP_REV_2026_07_28)
		return;
	cJSON_AddNumberToObject(res, "ttlMs", ttl_ms);
	cJSON_AddStringToObject(res, "cacheScope", scope);
}
