/*
 * mcp_rpc.h: one JSON-RPC message of MCP as a POST carries it, parsed
 * and checked for shape (mcp_rpc.c), with a typed error; then the
 * JSON-RPC error codes, and the text of MCP's messages (results,
 * errors, notifications, tool results).  Pure: no I/O, no clock, no
 * state, nothing of HTTP (the answers that carry these texts are
 * mcp_reply.h's); the unit test and the fuzz target link it with lib/
 * alone.
 */
#ifndef PAPO_MCP_RPC_H
#define PAPO_MCP_RPC_H

#include <stddef.h>

#include "lib/err.h"

/* JSON-RPC 2.0's error codes, and MCP's own. */
#define JSONRPC_PARSE_ERROR (-32700)
#define JSONRPC_INVALID_REQUEST (-32600)
#define JSONRPC_METHOD_NOT_FOUND (-32601)
#define JSONRPC_INVALID_PARAMS (-32602)
#define JSONRPC_INTERNAL_ERROR (-32603)
#define MCP_RESOURCE_NOT_FOUND (-32002)
#define MCP_HEADER_MISMATCH (-32020)    /* headers and body disagree */
#define MCP_UNSUPPORTED_VERSION (-32022) /* a revision not spoken */

/*
 * The revisions papo speaks, oldest first: what a session negotiated
 * decides what its answers and streams may carry (docs/MCP.md,
 * "Revisions").  Each is a number that later ones exceed.
 */
#define MCP_REV_2025_03_26 0
#define MCP_REV_2025_06_18 1
#define MCP_REV_2025_11_25 2
#define MCP_REV_2026_07_28 3

/* Why a POST's body is not a JSON-RPC message papo takes. */
enum mcp_rpc_err {
	MCP_RPC_OK = 0,
	MCP_RPC_PARSE,          /* not JSON (lib/json's reasons): -32700 */
	MCP_RPC_BATCH,          /* an array: batches are not supported */
	MCP_RPC_NOT_OBJECT,     /* another JSON value */
	MCP_RPC_BAD_ID,         /* an id neither string nor number */
	MCP_RPC_BAD_VERSION,    /* no "jsonrpc": "2.0" */
	MCP_RPC_BAD_METHOD,     /* a method that is not a string */
};

struct cJSON;

/* One JSON-RPC message as a POST carried it, checked for shape. */
struct mcp_rpc {
	struct cJSON *msg;              /* the whole message, or NULL */
	const struct cJSON *id;         /* string or number, or NULL */
	const struct cJSON *method;     /* string, or NULL (a response) */
	const struct cJSON *params;     /* anything, or NULL: methods check */
	char err[PAPO_ERR_LEN];         /* the error's message, or "" */
};

/*
 * Parses a POST body (len bytes and a NUL after them, as lib/json.h's
 * json_read takes it) into rpc: MCP_RPC_OK, or the error with err set
 * (and id when the message had a usable one, to be echoed in the error
 * answer).  Free rpc with mcp_rpc_free either way.
 */
enum mcp_rpc_err mcp_rpc_parse(const char *body, size_t len,
    struct mcp_rpc *rpc);
void mcp_rpc_free(struct mcp_rpc *rpc);
/* The JSON-RPC error code an error is answered with: JSONRPC_PARSE_ERROR
 * for MCP_RPC_PARSE, JSONRPC_INVALID_REQUEST for the others (0 for OK). */
int mcp_rpc_code(enum mcp_rpc_err e);

/* JSON-RPC text. */

/* o printed unformatted, and freed; NULL without memory. */
char *mcp_print(cJSON *o);
/* A response to id with result (taken), as revision rev (MCP_REV_*)
 * has it: what it does not define left out, what it asks added. */
char *mcp_result(const cJSON *id, cJSON *result, int rev);
/* An error response to id with code, msg and data (taken, or NULL). */
char *mcp_error(const cJSON *id, int code, const char *msg, cJSON *data);
/* A notification of method with params (taken). */
char *mcp_notification(const char *method, cJSON *params);
/* The error answered when a text could not be made: out of memory. */
#define MCP_NOMEM_TEXT "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":" \
	"{\"code\":-32603,\"message\":\"out of memory\"}}"
/* A tool's result: structured (taken), or an error for the model. */
cJSON *mcp_tool_result(cJSON *structured, const char *error);
/* Adds to res what 2026-07-28 asks of a result clients may keep (rev
 * 2026-07-28 only): how long (ttl_ms), and whether for anyone
 * ("public") or this client only ("private"). */
void mcp_cacheable(cJSON *res, int rev, int ttl_ms, const char *scope);

#endif
