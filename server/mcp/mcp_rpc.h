/*
 * mcp_rpc.h: one JSON-RPC message of MCP as a POST carries it, parsed
 * and checked for shape (mcp_rpc.c).  Pure: no I/O, no clock, no state;
 * the fuzz target calls it on its own.  Then the JSON-RPC error codes,
 * and the text mcp_rpc.c writes for MCP's files (results, errors,
 * notifications, tool results).
 */
#ifndef PAPO_MCP_RPC_H
#define PAPO_MCP_RPC_H

#include <stddef.h>

#include "node/node.h"

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

/* One JSON-RPC message as a POST carried it, checked for shape. */
struct mcp_rpc {
	struct cJSON *msg;              /* the whole message, or NULL */
	const struct cJSON *id;         /* string or number, or NULL */
	const struct cJSON *method;     /* string, or NULL (a response) */
	const struct cJSON *params;     /* anything, or NULL: methods check */
	int code;                       /* 0, -32700 or -32600 */
	char err[PAPO_ERR_LEN];
};

/*
 * Parses a POST body into rpc: 0, or -1 with code and err (id set when
 * the message had a usable one, to be echoed in the error).  Pure: the
 * fuzz target calls it on its own.  Free rpc with mcp_rpc_free either way.
 */
int mcp_rpc_parse(const char *body, size_t len, struct mcp_rpc *rpc);
void mcp_rpc_free(struct mcp_rpc *rpc);

struct cJSON;
struct http_req;

/* JSON-RPC text and answers. */

/* o printed unformatted, and freed; NULL without memory. */
char *mcp_print(cJSON *o);
/* A response to id with result (taken), as revision rev (MCP_REV_*)
 * has it: what it does not define left out, what it asks added. */
char *mcp_result(const cJSON *id, cJSON *result, int rev);
/* An error response to id with code, msg and data (taken, or NULL). */
char *mcp_error(const cJSON *id, int code, const char *msg, cJSON *data);
/* A notification of method with params (taken). */
char *mcp_notification(const char *method, cJSON *params);
/* Answers r with text (freed), or an out-of-memory error for NULL. */
void mcp_reply_text(struct http_req *r, int status, char *text);
/* Answers r with a JSON-RPC error. */
void mcp_reply_error(struct http_req *r, int status, const cJSON *id,
    int code, const char *msg);
/* Whether r's Accept allows type (no Accept allows all). */
int mcp_accepts(struct http_req *r, const char *type);
/* A tool's result: structured (taken), or an error for the model. */
cJSON *mcp_tool_result(cJSON *structured, const char *error);
/* Adds to res what 2026-07-28 asks of a result clients may keep (rev
 * 2026-07-28 only): how long (ttl_ms), and whether for anyone
 * ("public") or this client only ("private"). */
void mcp_cacheable(cJSON *res, int rev, int ttl_ms, const char *scope);

#endif
