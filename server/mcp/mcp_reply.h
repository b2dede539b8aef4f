/*
 * mcp_reply.h: MCP's JSON-RPC texts (mcp_rpc.h) answered on an HTTP
 * request, and what a request's Accept allows (mcp_reply.c).  Main
 * thread only, as the requests are.
 */
#ifndef PAPO_MCP_REPLY_H
#define PAPO_MCP_REPLY_H

struct cJSON;
struct http_req;

/* Answers r with text (freed), or an out-of-memory error for NULL. */
void mcp_reply_text(struct http_req *r, int status, char *text);
/* Answers r with a JSON-RPC error. */
void mcp_reply_error(struct http_req *r, int status, const struct cJSON *id,
    int code, const char *msg);
/* Whether r's Accept allows type (no Accept allows all). */
int mcp_accepts(struct http_req *r, const char *type);

#endif
