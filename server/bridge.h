/*
 * bridge.h: "papo mcp", MCP over stdio carried to the running daemon's
 * Streamable HTTP endpoint /mcp.  For the main thread of the papo mcp
 * process, which it keeps until stdin closes.
 */
#ifndef PAPO_BRIDGE_H
#define PAPO_BRIDGE_H

#include "node/node.h"

/*
 * Finds the daemon of home through serve.json, starting "papo serve" in
 * the background (its output appended to home/serve.log) when none runs,
 * then carries JSON-RPC messages, one a line, from stdin to the daemon
 * and the daemon's messages to stdout until stdin closes; then it ends
 * the MCP session.  Diagnostics go to stderr.  Returns 0 after stdin
 * closed (or stdout did), -1 with err when no daemon could be found or
 * started.  channels: the session opts in to channel pushes
 * (/mcp?channels=on), for a client that listens to them.
 */
int bridge_run(char err[PAPO_ERR_LEN], const char *home, int channels);

#endif
