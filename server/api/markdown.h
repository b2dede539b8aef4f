/*
 * markdown.h: a message's text as HTML for the dashboard (CommonMark,
 * rendered by libcmark with raw HTML shown as text).  Pure: no I/O, no
 * state; any thread.
 */
#ifndef PAPO_MARKDOWN_H
#define PAPO_MARKDOWN_H

#include <stddef.h>

/*
 * Renders len bytes of Markdown to HTML that is safe to show: raw HTML
 * is shown as text, line breaks are kept, links keep only http:,
 * https:, mailto: and relative URLs (others become their text) and open
 * apart (rel="noopener noreferrer", target="_blank"), images become
 * links to their URL, never loaded; invalid UTF-8 becomes U+FFFD.  A malloc'd string to free(), or NULL
 * when out of memory.
 */
char *markdown_html(const char *text, size_t len);

/*
 * JSON text json with an "html" field added beside the "text" of each
 * message: of the object itself when key is NULL (an event's message),
 * else of each object in its array key (history's "messages").  A
 * string to free with cJSON_free(); NULL when json is not such JSON or
 * out of memory (the caller then sends json as it is).
 */
char *markdown_json(const char *json, const char *key);

#endif
