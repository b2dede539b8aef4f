/*
 * test_mcp_rpc.c: server/mcp/mcp_rpc.c, linked with lib/ alone: each
 * POST body against the exact answer (the typed error, its JSON-RPC
 * code, the message a client is told, the id echoed), or the message's
 * parts; and the texts it writes, which must be JSON.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "server/mcp/mcp_rpc.h"
#include "tests/check.h"

#define NOT_2_0 "not a JSON-RPC 2.0 message"

static const struct {
	const char *body;
	enum mcp_rpc_err e;
	int code;
	const char *err;        /* "" when it parses */
	const char *id;         /* the id as JSON, or NULL: none kept */
	const char *method;     /* or NULL */
} cases[] = {
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", MCP_RPC_OK, 0,
	  "", "1", "ping" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\","
	  "\"params\":{}}", MCP_RPC_OK, 0, "", "\"a\"", "tools/list" },
	/* A notification (no id), a response (no method). */
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	  MCP_RPC_OK, 0, "", NULL, "notifications/initialized" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", MCP_RPC_OK, 0, "",
	  "7", NULL },
	/* params of any kind: the method checks them. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}",
	  MCP_RPC_OK, 0, "", "1", "x" },
	/* Not JSON: lib/json's reasons, -32700, nothing kept. */
	{ "", MCP_RPC_PARSE, -32700, "the body is not valid JSON", NULL,
	  NULL },
	{ "{\"jsonrpc\":\"2.0\",", MCP_RPC_PARSE, -32700,
	  "the body is not valid JSON", NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}",
	  MCP_RPC_PARSE, -32700, "the body has the key \"method\" twice in "
	  "one object: give each key once", NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000\"}",
	  MCP_RPC_PARSE, -32700, "the body has a string with a NUL character "
	  "(\\u0000), which papo does not carry", NULL, NULL },
	/* JSON, but no message. */
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	  MCP_RPC_BATCH, -32600, "one JSON-RPC message per request: batches "
	  "are not supported", NULL, NULL },
	{ "[]", MCP_RPC_BATCH, -32600, "one JSON-RPC message per request: "
	  "batches are not supported", NULL, NULL },
	{ "\"ping\"", MCP_RPC_NOT_OBJECT, -32600, "a JSON-RPC message is a "
	  "JSON object", NULL, NULL },
	{ "null", MCP_RPC_NOT_OBJECT, -32600, "a JSON-RPC message is a JSON "
	  "object", NULL, NULL },
	/* An id that cannot be echoed is answered as null. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
	  MCP_RPC_BAD_ID, -32600, NOT_2_0, NULL, "ping" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
	  MCP_RPC_BAD_ID, -32600, NOT_2_0, NULL, "ping" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
	  MCP_RPC_BAD_ID, -32600, NOT_2_0, NULL, "ping" },
	/* The version: echoed id. */
	{ "{\"id\":3,\"method\":\"ping\"}", MCP_RPC_BAD_VERSION, -32600,
	  NOT_2_0, "3", "ping" },
	{ "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}",
	  MCP_RPC_BAD_VERSION, -32600, NOT_2_0, "3", "ping" },
	{ "{\"jsonrpc\":2.0,\"id\":\"x\",\"method\":\"ping\"}",
	  MCP_RPC_BAD_VERSION, -32600, NOT_2_0, "\"x\"", "ping" },
	{ "{\"JSONRPC\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
	  MCP_RPC_BAD_VERSION, -32600, NOT_2_0, "3", "ping" },
	/* A method that is not a string. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":5}", MCP_RPC_BAD_METHOD,
	  -32600, NOT_2_0, "4", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":null}",
	  MCP_RPC_BAD_METHOD, -32600, NOT_2_0, "4", NULL },
};

static void
test_parse(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].body);
		char *body = malloc(len + 1);
		struct mcp_rpc rpc;
		enum mcp_rpc_err e;
		char *id;

		memcpy(body, cases[i].body, len + 1);
		e = mcp_rpc_parse(body, len, &rpc);
		if (e != cases[i].e)
			fprintf(stderr, "case %zu: %s: %d\n", i, cases[i].body,
			    (int)e);
		CHECK_EQ_INT(e, cases[i].e);
		CHECK_EQ_INT(mcp_rpc_code(e), cases[i].code);
		CHECK_EQ_STR(rpc.err, cases[i].err);
		id = rpc.id != NULL ? cJSON_PrintUnformatted(rpc.id) : NULL;
		if (cases[i].id == NULL)
			CHECK(id == NULL);
		else
			CHECK_EQ_STR(id, cases[i].id);
		cJSON_free(id);
		if (e == MCP_RPC_OK || cases[i].method != NULL) {
			if (cases[i].method == NULL)
				CHECK(rpc.method == NULL);
			else
				CHECK(cJSON_IsString(rpc.method) &&
				    strcmp(rpc.method->valuestring,
				    cases[i].method) == 0);
		}
		CHECK((rpc.msg == NULL) == (e == MCP_RPC_PARSE));
		mcp_rpc_free(&rpc);
		CHECK(rpc.msg == NULL);
		free(body);
	}
}

/* An answer's text read back: its code, or 0 for a result. */
static int
answer_code(const char *text)
{
	cJSON *o = cJSON_Parse(text), *e, *c;
	int code = -1;

	if (o == NULL)
		return -1;
	e = cJSON_GetObjectItemCaseSensitive(o, "error");
	c = cJSON_GetObjectItemCaseSensitive(e, "code");
	if (cJSON_IsNumber(c))
		code = c->valueint;
	else if (cJSON_HasObjectItem(o, "result"))
		code = 0;
	cJSON_Delete(o);
	return code;
}

static void
test_texts(void)
{
	cJSON *id = cJSON_CreateNumber(9);
	char *t;

	t = mcp_error(id, JSONRPC_METHOD_NOT_FOUND, "no such method: x", NULL);
	CHECK_EQ_STR(t, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":"
	    "{\"code\":-32601,\"message\":\"no such method: x\"}}");
	cJSON_free(t);
	t = mcp_error(NULL, JSONRPC_PARSE_ERROR, "p", NULL);
	CHECK_EQ_STR(t, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-32700,\"message\":\"p\"}}");
	cJSON_free(t);
	t = mcp_result(id, cJSON_CreateObject(), MCP_REV_2025_06_18);
	CHECK_EQ_STR(t, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
	CHECK_EQ_INT(answer_code(t), 0);
	cJSON_free(t);
	t = mcp_notification("notifications/message", cJSON_CreateObject());
	CHECK_EQ_STR(t, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/message\",\"params\":{}}");
	cJSON_free(t);
	cJSON_Delete(id);
	/* What a client gets when no text could be made is JSON too. */
	CHECK_EQ_INT(answer_code(MCP_NOMEM_TEXT), JSONRPC_INTERNAL_ERROR);
}

int
main(void)
{
	test_parse();
	test_texts();
	return check_exit();
}
