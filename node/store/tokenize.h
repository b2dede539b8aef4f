/*
 * tokenize.h: the search index's FTS5 tokenizer (tokenize.c): unicode61
 * with each character of a script written without spaces (CJK, Thai) a
 * token of its own, so words are found inside runs of them.
 */
#ifndef PAPO_TOKENIZE_H
#define PAPO_TOKENIZE_H

#include <sqlite3.h>

#define TOKENIZE_NAME "papo"

/* Registers the tokenizer on db (each connection needs it before it
 * reads or writes the FTS5 table).  0, or -1 when SQLite has no FTS5. */
int tokenize_register(sqlite3 *db);

#endif
