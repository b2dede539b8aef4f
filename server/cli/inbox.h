/*
 * inbox.h: Claude Code's per-session inbox, a Unix socket whose path
 * and token Claude Code puts in the environment of the programs it
 * starts (CLAUDE_CODE_MESSAGING_SOCKET, CLAUDE_CODE_MESSAGING_TOKEN).
 * One NDJSON line of a user message, after an optional auth line,
 * starts a new turn in an idle session (docs/MCP.md, "Waking an idle
 * agent").  papo only wakes through it: the text says what waits and
 * to call wait; the messages themselves are given by wait.
 */
#ifndef PAPO_INBOX_H
#define PAPO_INBOX_H

#include "node/node.h"

/* Posts text as a user message into the inbox at path (token may be
 * NULL or ""): 0, or -1 with err.  Waits at most a second. */
int inbox_post(char err[PAPO_ERR_LEN], const char *path, const char *token,
    const char *text);

#endif
