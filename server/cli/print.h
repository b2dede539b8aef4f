/*
 * print.h: what commands print of the daemon's answers.  Text from other
 * members goes through cli_put or cli_put_in, never printf's %s, so that
 * it cannot drive the terminal.
 */
#ifndef PAPO_PRINT_H
#define PAPO_PRINT_H

#include <cjson/cJSON.h>

/*
 * Prints text from the room for a terminal: control characters (C0, DEL,
 * and C1 in UTF-8) as '?'.  A newline starts a new line beginning with
 * indent (a message's text, printed whole), or with indent NULL shows as
 * a return sign (names, ids: one line).
 */
void cli_put_in(const char *s, const char *indent);
/* cli_put_in(s, NULL). */
void cli_put(const char *s);
/* o's string member name, or NULL. */
const char *cli_str(const cJSON *o, const char *name);
/* Milliseconds since 1970 as local "YYYY-MM-DD HH:MM:SS" ("never" for 0). */
void cli_time(double ms, char out[32]);
/* n bytes for people: "512 bytes", "300.0 KiB", "5.0 MiB". */
void cli_size(double n, char out[32]);
/*
 * Prints the files a message names (its "files"), one line each after
 * indent: the paperclip, the name, its size, its state here when not
 * "here", and its reference (for papo get).
 */
void cli_files(const cJSON *files, const char *indent);
/*
 * Prints a message's head as history, tail and search show it: time, id,
 * author (its label, which tells apart members of one name: docs/MCP.md,
 * "Names are not unique"), "→ TO" when directed, "↳ ID" when a reply,
 * then ": ".
 */
void cli_message_head(const cJSON *m);
/* Prints the names of a JSON array, comma-separated. */
void cli_names(const cJSON *arr);

#endif
