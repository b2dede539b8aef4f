/*
 * fuzz_jsonrpc.c: libFuzzer target for the JSON-RPC envelope of POST /mcp
 * (mcp_rpc_parse in server/mcp/mcp_rpc.c, linked with lib/ alone), the
 * step every request's bytes go through before any method runs.  Any
 * bytes must give either a message whose shape the dispatcher relies on
 * (jsonrpc "2.0", a string method or none, a string or number id or
 * none) or a typed error with its JSON-RPC code (-32700 only for bytes
 * that are not JSON, with no message kept), a message and an id that
 * can be echoed; never a crash or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "server/mcp/mcp_rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_rpc rpc;
	enum mcp_rpc_err e;
	const cJSON *v;
	char *body;

	/* The HTTP side hands over bodies NUL-terminated. */
	if ((body = malloc(size + 1)) == NULL)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	if ((e = mcp_rpc_parse(body, size, &rpc)) == MCP_RPC_OK) {
		v = cJSON_GetObjectItemCaseSensitive(rpc.msg, "jsonrpc");
		if (mcp_rpc_code(e) != 0 || !cJSON_IsObject(rpc.msg) ||
		    !cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0 ||
		    (rpc.method != NULL && !cJSON_IsString(rpc.method)))
			abort();
	} else if ((mcp_rpc_code(e) != -32700 && mcp_rpc_code(e) != -32600) ||
	    rpc.err[0] == '\0' || (mcp_rpc_code(e) == -32700) !=
	    (e == MCP_RPC_PARSE) || (e == MCP_RPC_PARSE && rpc.msg != NULL))
		abort();
	if (rpc.id != NULL && !cJSON_IsString(rpc.id) && !cJSON_IsNumber(rpc.id))
		abort();
	mcp_rpc_free(&rpc);
	free(body);
	return 0;
}
