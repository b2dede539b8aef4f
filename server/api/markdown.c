/*
 * markdown.c: messages' Markdown as HTML for the dashboard (markdown.h),
 * so the page never parses Markdown itself.  libcmark parses the text
 * (CommonMark) and renders it without CMARK_OPT_UNSAFE, so no raw HTML
 * ever reaches the output; this file adds what cmark leaves to its
 * callers: the tree is walked first, raw HTML becomes text (shown, not
 * omitted), links to schemes other than http, https and mailto become
 * their text, images become links (a page that loads a URL a message
 * names tells its author who read it, and when), and every link of the
 * output gets rel and target.  Pure: no I/O, no globals; called
 * on the main thread by api.c and sse.c.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <cmark.h>

#include "server/api/markdown.h"

#define MD_LINK "<a href=\""
#define MD_LINK_SAFE "<a rel=\"noopener noreferrer\" target=\"_blank\" href=\""

/* Whether a link may point at url: no scheme (relative), or one of a
 * few that only navigate. */
static int
markdown_url_ok(const char *url)
{
	static const char *const schemes[] = { "http:", "https:", "mailto:" };
	size_t n = strcspn(url, ":/?#");

	if (url[n] != ':')
		return 1;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (strncasecmp(url, schemes[i], strlen(schemes[i])) == 0)
			return 1;
	return 0;
}

/* Puts node's children in its place and frees it. */
static void
markdown_unwrap(cmark_node *node)
{
	cmark_node *c;

	while ((c = cmark_node_first_child(node)) != NULL)
		cmark_node_insert_before(node, c);
	cmark_node_free(node);
}

/*
 * An image becomes a link to its URL, with its description as the
 * text, or the URL when it has none; -1 when out of memory.
 */
static int
markdown_image_link(cmark_node *img)
{
	const char *url = cmark_node_get_url(img);
	cmark_node *a, *c, *t;

	if ((a = cmark_node_new(CMARK_NODE_LINK)) == NULL)
		return -1;
	cmark_node_set_url(a, url != NULL ? url : "");
	if (cmark_node_first_child(img) == NULL) {
		if ((t = cmark_node_new(CMARK_NODE_TEXT)) == NULL) {
			cmark_node_free(a);
			return -1;
		}
		cmark_node_set_literal(t, url != NULL ? url : "");
		cmark_node_append_child(a, t);
	}
	while ((c = cmark_node_first_child(img)) != NULL)
		cmark_node_append_child(a, c);
	cmark_node_replace(img, a);
	cmark_node_free(img);
	return 0;
}

/*
 * Raw HTML becomes the text it is: a person who writes "<b>" in a chat
 * sees it, rather than nothing (what cmark's safe mode renders).  A
 * block is a paragraph of its lines.  -1 when out of memory.
 */
static int
markdown_html_text(cmark_node *raw)
{
	const char *lit = cmark_node_get_literal(raw), *p, *nl;
	cmark_node *t, *para = NULL;

	if (lit == NULL)
		lit = "";
	if (cmark_node_get_type(raw) == CMARK_NODE_HTML_INLINE) {
		if ((t = cmark_node_new(CMARK_NODE_TEXT)) == NULL)
			return -1;
		cmark_node_set_literal(t, lit);
		cmark_node_replace(raw, t);
		cmark_node_free(raw);
		return 0;
	}
	if ((para = cmark_node_new(CMARK_NODE_PARAGRAPH)) == NULL)
		return -1;
	for (p = lit; *p != '\0'; p = *nl == '\n' ? nl + 1 : nl) {
		char *line;

		nl = p + strcspn(p, "\n");
		if (p != lit) {
			if ((t = cmark_node_new(CMARK_NODE_LINEBREAK)) == NULL) {
				cmark_node_free(para);
				return -1;
			}
			cmark_node_append_child(para, t);
		}
		if ((line = strndup(p, (size_t)(nl - p))) == NULL ||
		    (t = cmark_node_new(CMARK_NODE_TEXT)) == NULL) {
			free(line);
			cmark_node_free(para);
			return -1;
		}
		cmark_node_set_literal(t, line);
		free(line);
		cmark_node_append_child(para, t);
	}
	cmark_node_replace(raw, para);
	cmark_node_free(raw);
	return 0;
}

/*
 * Makes the tree's links and images safe (see the top).  Nodes are
 * changed after the walk, leaves first, so the iterator never stands on
 * a node that is gone.
 */
static int
markdown_clean(cmark_node *doc)
{
	cmark_iter *it;
	cmark_event_type ev;
	cmark_node **todo = NULL, **grown;
	size_t n = 0, cap = 0;
	int rc = -1;

	if ((it = cmark_iter_new(doc)) == NULL)
		return -1;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *node = cmark_iter_get_node(it);
		cmark_node_type type = cmark_node_get_type(node);

		/* Raw HTML is a leaf (entered only); links and images are
		 * taken on their way out, after what they hold. */
		if (type == CMARK_NODE_HTML_INLINE ||
		    type == CMARK_NODE_HTML_BLOCK ? ev != CMARK_EVENT_ENTER :
		    ev != CMARK_EVENT_EXIT || (type != CMARK_NODE_LINK &&
		    type != CMARK_NODE_IMAGE))
			continue;
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			grown = realloc(todo, cap * sizeof(*todo));
			if (grown == NULL)
				goto out;
			todo = grown;
		}
		todo[n++] = node;
	}
	for (size_t i = 0; i < n; i++) {
		cmark_node_type type = cmark_node_get_type(todo[i]);
		const char *url = cmark_node_get_url(todo[i]);

		if (type == CMARK_NODE_HTML_INLINE ||
		    type == CMARK_NODE_HTML_BLOCK) {
			if (markdown_html_text(todo[i]) == -1)
				goto out;
		} else if (url == NULL || !markdown_url_ok(url))
			markdown_unwrap(todo[i]);
		else if (type == CMARK_NODE_IMAGE &&
		    markdown_image_link(todo[i]) == -1)
			goto out;
	}
	rc = 0;
out:
	free(todo);
	cmark_iter_free(it);
	return rc;
}

/*
 * html with rel and target added to each link.  cmark escapes '<' in
 * text, code and attributes, and raw HTML is omitted, so MD_LINK in its
 * output opens a link it made and nothing else.
 */
static char *
markdown_links(const char *html)
{
	size_t links = 0, len = strlen(html), extra;
	const char *p, *q;
	char *out, *o;

	for (p = html; (p = strstr(p, MD_LINK)) != NULL; p += strlen(MD_LINK))
		links++;
	extra = strlen(MD_LINK_SAFE) - strlen(MD_LINK);
	if ((out = malloc(len + links * extra + 1)) == NULL)
		return NULL;
	o = out;
	for (p = html; (q = strstr(p, MD_LINK)) != NULL;
	    p = q + strlen(MD_LINK)) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, MD_LINK_SAFE, strlen(MD_LINK_SAFE));
		o += strlen(MD_LINK_SAFE);
	}
	strcpy(o, p);
	return out;
}

char *
markdown_html(const char *text, size_t len)
{
	cmark_node *doc;
	char *html = NULL, *out = NULL;

	/* CMARK_OPT_VALIDATE_UTF8: invalid bytes become U+FFFD, so the
	 * HTML is a valid JSON string. */
	if ((doc = cmark_parse_document(text, len, CMARK_OPT_DEFAULT |
	    CMARK_OPT_VALIDATE_UTF8)) == NULL)
		return NULL;
	/* CMARK_OPT_HARDBREAKS: a chat's lines are lines. */
	if (markdown_clean(doc) == 0 && (html = cmark_render_html(doc,
	    CMARK_OPT_DEFAULT | CMARK_OPT_HARDBREAKS)) != NULL)
		out = markdown_links(html);
	free(html);
	cmark_node_free(doc);
	return out;
}

/* Adds "html" to message object m when it has a "text"; -1 when out of
 * memory. */
static int
markdown_msg(cJSON *m)
{
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(m, "text");
	char *html;
	cJSON *s;

	if (!cJSON_IsObject(m) || !cJSON_IsString(text))
		return 0;
	if ((html = markdown_html(text->valuestring,
	    strlen(text->valuestring))) == NULL)
		return -1;
	s = cJSON_CreateString(html);
	free(html);
	if (s == NULL)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(m, "html");
	cJSON_AddItemToObject(m, "html", s);
	return 0;
}

char *
markdown_json(const char *json, const char *key)
{
	cJSON *o, *it;
	char *out = NULL;

	if ((o = cJSON_Parse(json)) == NULL)
		return NULL;
	if (key == NULL) {
		if (markdown_msg(o) == -1)
			goto out;
	} else {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, key))
			if (markdown_msg(it) == -1)
				goto out;
	}
	out = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return out;
}
