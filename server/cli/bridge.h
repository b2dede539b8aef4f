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
 * started, 1 before reading anything when this program cannot reach the
 * daemon (the front, which speaks no TLS, and a daemon at an https://
 * URL: papo-full must run).  A daemon is started only for a home that holds a room, or
 * PAPO_INVITE to join, or with new_room set (papo mcp --new-room): a
 * client started with no room would otherwise make one, alone, named
 * after the login; -1 then, with err saying what to run instead.
 * channels: the session opts in to channel pushes (/mcp?channels=on),
 * for a client that listens to them.  agent: the agent's name
 * (/mcp?agent=NAME), or NULL for the daemon's own.  room: the room the
 * session is bound to (/mcp?room=ROOM: its name or id), or NULL for
 * every room.  With
 * CLAUDE_CODE_MESSAGING_SOCKET set (inside Claude Code), it asks the
 * daemon when the agent needs waking and posts a line saying so into
 * that inbox (inbox.h).
 */
int bridge_run(char err[PAPO_ERR_LEN], const char *home, int channels,
    const char *agent, const char *room, int new_room);

#endif
