/*
 * hook.h: "papo hook", run by Claude Code's hooks (docs/MCP.md, "Waking
 * an idle agent").  It reads the hook's event (JSON on stdin) and asks
 * the running daemon what the agent has not been given yet: SessionStart
 * and UserPromptSubmit add a line saying so to the model's context; Stop,
 * run with asyncRewake, waits in the background until the agent needs
 * waking and then exits 2 with that line on stderr, which wakes an idle
 * session.  Like the inbox wake of papo mcp, it never gives a message:
 * wait does.
 */
#ifndef PAPO_HOOK_H
#define PAPO_HOOK_H

#include "node/node.h"

/* Runs the hook for the event on stdin; the process's exit status: 0,
 * or 2 after a Stop hook's wake.  agent: ?agent= of the daemon's /mcp,
 * or NULL.  Any failure (no daemon, bad input) says why on stderr and
 * is 0: a hook must never stop the session it serves. */
int hook_run(const char *home, const char *agent);

#endif
