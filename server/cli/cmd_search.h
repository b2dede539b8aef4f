/*
 * cmd_search.h: papo history's search and threads (README,
 * "Search"): -q WORDS, --from, --since, --before, --after, --thread,
 * --files, through GET /api/search and GET /api/history?thread=.
 */
#ifndef PAPO_CMD_SEARCH_H
#define PAPO_CMD_SEARCH_H

#include <stdint.h>

#include "server/cli/cmd.h"

#define SEARCH_PAGE_MAX 200    /* hits one search shows */

/* Whether o asks for a search rather than the last messages. */
int cli_search_asked(const struct cli_opts *o);
/* Runs it (n hits at most) and prints the newest that match, oldest
 * first, as history prints messages (with words, each with its
 * excerpt), then the --before ID that pages back.  An exit status
 * (cli.h). */
int cli_search(const struct cli_cmd *c, const struct cli_opts *o, long n);
/* Parses a time as --since/--before/--after take it: a duration ago
 * (30s, 15m, 2h, 7d), a date (2026-12-03, "2026-12-03 14:00", local
 * time) or ms since 1970; now is the time now in ms.  0 or -1. */
int cli_search_time(const char *s, uint64_t now, uint64_t *out);

#endif
