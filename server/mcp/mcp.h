/*
 * mcp.h: MCP over Streamable HTTP at /mcp (docs/MCP.md): sessions (and
 * the sessionless requests of 2026-07-28), the JSON-RPC methods and the
 * tool table (send, wait, history, status), and the push of room
 * messages to every session's notification streams and to
 * subscriptions/listen streams.  Built of mcp.c, mcp_resources.c,
 * mcp_tools.c, mcp_ask.c, mcp_wake.c, mcp_deliver.c (which defines
 * mcp_message, mcp_rooms, mcp_owns and mcp_node_answer), mcp_wait.c,
 * mcp_store.c, mcp_agent.c, mcp_room.c,
 * mcp_session.c and mcp_rpc.c, which share mcp_int.h.  One endpoint
 * serves every room the daemon is in (docs/MCP.md, "Rooms").  Main
 * thread only.
 */
#ifndef PAPO_MCP_H
#define PAPO_MCP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"

#define MCP_IDLE_DEFAULT_NS (30ull * 60 * NS_PER_S) /* then one ends */

#define MCP_AGENT_MAX 64             /* bytes of an agent's name */

struct mcp;

/* idle_ns: how long a 2025 session may go unused (no request, no
 * stream, no wait) before it ends; 0: MCP_IDLE_DEFAULT_NS.  home holds
 * agents.json, what each agent has not been given yet; NULL with err
 * when it cannot be read. */
struct mcp *mcp_new(char err[PAPO_ERR_LEN], struct loop *l, struct node *n,
    const char *home, uint64_t idle_ns);
/* Ends every session (streams get retry: and close, listen streams after
 * their result); before http_free. */
void mcp_free(struct mcp *m);
/* A message from another member, of any room (NODE_EV_MESSAGE's JSON,
 * which names its room_id). */
void mcp_message(struct mcp *m, const char *json);
/* The node's list of rooms (NODE_EV_ROOMS's JSON): the first, at start,
 * places the agents in each room as agents.json says; later ones add
 * rooms joined or made and forget rooms left. */
void mcp_rooms(struct mcp *m, const char *json);
/* Whether m, a node answer, is one of mcp's own requests (the log read
 * back for an agent); then mcp_node_answer takes it. */
int mcp_owns(const struct mcp *m, const struct node_msg *msg);
void mcp_node_answer(struct mcp *m, struct node_msg *msg);
/* Whether name may name an agent (?agent=, papo mcp --agent): 1 to 64
 * letters, digits, '.', '_' or '-'.  Inline, so that papo mcp's bridge
 * checks it in the front program, which links nothing else of MCP. */
static inline int
mcp_agent_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= MCP_AGENT_MAX && strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	    == n;
}
/* The routes, for an http_mount whose arg is the struct mcp. */
const struct http_route *mcp_routes(size_t *n);

#endif
