/*
 * markdown.h: a message's text as HTML for the dashboard (CommonMark
 * with GitHub's tables, strikethrough and bare URLs, rendered by
 * libcmark-gfm with raw HTML shown as text).  Pure: no I/O; the main
 * thread only (cmark-gfm's registry of extensions is filled once, the
 * first time, without a lock).
 */
#ifndef PAPO_MARKDOWN_H
#define PAPO_MARKDOWN_H

#include <stddef.h>

/*
 * Renders len bytes of Markdown to HTML that is safe to show: raw HTML
 * is shown as text, line breaks are kept, links keep only http:,
 * https:, mailto: and relative URLs (others become their text) and open
 * apart (rel="noopener noreferrer", target="_blank"), images become
 * links to their URL, never loaded; invalid UTF-8 becomes U+FFFD.  Pipe
 * tables become <table>, ~~text~~ <del>, bare http(s):// and www. URLs
 * links, "@name" a <span class="mention">.  A malloc'd string to free(),
 * or NULL when out of memory.
 */
char *markdown_html(const char *text, size_t len);

/*
 * A search hit's excerpt rendered as markdown_html renders a message,
 * the words marks names ([start, end] in code points of excerpt, end
 * excluded, in order, as search answers them) in <mark> elements; marks
 * that are not such pairs are passed over.  A malloc'd string to
 * free(), or NULL when out of memory.
 */
struct cJSON;
char *markdown_excerpt(const char *excerpt, const struct cJSON *marks);

/*
 * JSON text json with an "html" field added beside the "text" of each
 * message: of the object itself when key is NULL (an event's message),
 * else of each object in its array key (history's "messages"); a
 * search hit's "excerpt" gets "excerpt_html" (markdown_excerpt).  A
 * string to free with cJSON_free(); NULL when json is not such JSON or
 * out of memory (the caller then sends json as it is).
 */
char *markdown_json(const char *json, const char *key);

#endif
