/*
 * mcp_reply.c: the answers that carry MCP's JSON-RPC texts (mcp_reply.h):
 * a text or a JSON-RPC error answered on a request, and what its Accept
 * allows.  The glue between mcp_rpc.c, which knows nothing of HTTP, and
 * server/http; it calls none of MCP's other files.  Main thread only.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "server/http/http.h"
#include "server/mcp/mcp_reply.h"
#include "server/mcp/mcp_rpc.h"

void
mcp_reply_text(struct http_req *r, int status, char *text)
{
	http_reply(r, status, text != NULL ? text : MCP_NOMEM_TEXT);
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
