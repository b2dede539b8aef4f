/*
 * fuzz_jsonrpc.c: libFuzzer target for the JSON-RPC envelope of POST /mcp
 * (mcp_rpc_parse in server/mcp/mcp_rpc.c), the step every request's bytes go
 * through before any method runs.  Any bytes must give either a message
 * whose shape the dispatcher relies on (jsonrpc "2.0", a string method or
 * none, a string or number id or none) or a -32700/-32600 error with a
 * message and an id that can be echoed; never a crash or a leak.
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
	const cJSON *v;
	char *body;

	/* The HTTP side hands over bodies NUL-terminated. */
	if ((body = malloc(size + 1)) == NULL)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	if (mcp_rpc_parse(body, size, &rpc) == 0) {
		v = cJSON_GetObjectItemCaseSensitive(rpc.msg, "jsonrpc");
		if (rpc.code != 0 || !cJSON_IsObject(rpc.msg) ||
		    !cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0 ||
		    (rpc.method != NULL && !cJSON_IsString(rpc.method)))
			abort();
	} else if ((rpc.code != -32700 && rpc.code != -32600) ||
	    rpc.err[0] == '\0' || (rpc.code == -32700 && rpc.msg != NULL))
		abort();
	if (rpc.id != NULL && !cJSON_IsString(rpc.id) && !cJSON_IsNumber(rpc.id))
		abort();
	mcp_rpc_free(&rpc);
	free(body);
	return 0;
}
