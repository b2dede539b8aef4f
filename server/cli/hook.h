/*
 * hook.h: "papo hook [HARNESS]", run by the hooks papo setup gives a
 * harness (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot CLI, and
 * papo's opencode plugin; docs/MCP.md, "Waking an idle agent").  It
 * reads the hook's event (JSON on stdin) and asks the running daemon
 * what the agent has not been given yet: a session's start and a
 * person's prompt add a line saying so to the model's context; the
 * event at the end of a turn waits until the idle agent needs waking
 * and then answers in the harness's own way of going on with a prompt
 * (one look only, in a run that ends after its turn).  Like the inbox
 * wake of papo mcp, it never gives a message: wait does.
 */
#ifndef PAPO_HOOK_H
#define PAPO_HOOK_H

#include "node/node.h"

/* Runs the hook of harness (NULL: claude-code) for the event on stdin;
 * the process's exit status: 0, or 2 after a stop hook's wake where the
 * harness takes it so.  agent: ?agent= of the daemon's /mcp, or NULL.
 * Any failure (no daemon, bad input, a harness it does not know) says
 * why on stderr and is 0: a hook must never stop the session it
 * serves. */
int hook_run(const char *home, const char *agent, const char *harness);

#endif
