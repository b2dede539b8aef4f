/*
 * mcp_rpc.c: MCP's JSON-RPC messages (mcp_rpc.h): a POST's message
 * parsed and checked for shape, with a typed error, and the text of
 * results, errors, notifications and tool results.  Pure: bytes in,
 * structs or text out; no I/O, no clock, no state, nothing of HTTP
 * (mcp_reply.c answers with these texts).  The lowest of MCP's files:
 * it calls only lib/json.  Any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "server/mcp/mcp_rpc.h"

#define MCP_META_SERVER "io.modelcontextprotocol/serverInfo"  /* _meta */
/* What a message of the wrong shape is told. */
#define MCP_RPC_NOT_2_0 "not a JSON-RPC 2.0 message"

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

/* e, with its message in err; the id stays only when it can be echoed. */
static enum mcp_rpc_err
mcp_rpc_fail(struct mcp_rpc *rpc, enum mcp_rpc_err e, const char *msg)
{
	snprintf(rpc->err, sizeof(rpc->err), "%s", msg);
	return e;
}

enum mcp_rpc_err
mcp_rpc_parse(const char *body, size_t len, struct mcp_rpc *rpc)
{
	const cJSON *v;

	memset(rpc, 0, sizeof(*rpc));
	if (json_read(rpc->err, body, len, &rpc->msg) != JSON_OK)
		return MCP_RPC_PARSE;
	if (cJSON_IsArray(rpc->msg))
		return mcp_rpc_fail(rpc, MCP_RPC_BATCH, "one JSON-RPC message "
		    "per request: batches are not supported");
	if (!cJSON_IsObject(rpc->msg))
		return mcp_rpc_fail(rpc, MCP_RPC_NOT_OBJECT, "a JSON-RPC "
		    "message is a JSON object");
	rpc->id = cJSON_GetObjectItemCaseSensitive(rpc->msg, "id");
	rpc->method = cJSON_GetObjectItemCaseSensitive(rpc->msg, "method");
	rpc->params = cJSON_GetObjectItemCaseSensitive(rpc->msg, "params");
	v = cJSON_GetObjectItemCaseSensitive(rpc->msg, "jsonrpc");
	if (rpc->id != NULL && !cJSON_IsString(rpc->id) &&
	    !cJSON_IsNumber(rpc->id)) {
		rpc->id = NULL;    /* answered as null: it cannot be echoed */
		return mcp_rpc_fail(rpc, MCP_RPC_BAD_ID, MCP_RPC_NOT_2_0);
	}
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
		return mcp_rpc_fail(rpc, MCP_RPC_BAD_VERSION, MCP_RPC_NOT_2_0);
	if (rpc->method != NULL && !cJSON_IsString(rpc->method))
		return mcp_rpc_fail(rpc, MCP_RPC_BAD_METHOD, MCP_RPC_NOT_2_0);
	return MCP_RPC_OK;
}

int
mcp_rpc_code(enum mcp_rpc_err e)
{
	switch (e) {
	case MCP_RPC_OK:
		return 0;
	case MCP_RPC_PARSE:
		return JSONRPC_PARSE_ERROR;
	case MCP_RPC_BATCH:
	case MCP_RPC_NOT_OBJECT:
	case MCP_RPC_BAD_ID:
	case MCP_RPC_BAD_VERSION:
	case MCP_RPC_BAD_METHOD:
		break;
	}
	return JSONRPC_INVALID_REQUEST;
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
