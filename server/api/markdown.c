/*
 * markdown.c: messages' Markdown as HTML for the dashboard (markdown.h),
 * so the page never parses Markdown itself.  libcmark-gfm parses the
 * text (CommonMark with GitHub's tables, strikethrough and bare URLs as
 * links, its own extensions) and renders it without CMARK_OPT_UNSAFE,
 * so no raw HTML ever reaches the output; this file adds what cmark
 * leaves to its callers: the tree is walked first, raw HTML becomes
 * text (shown, not omitted), links to schemes other than http, https
 * and mailto become their text, images become links (a page that loads
 * a URL a message names tells its author who read it, and when),
 * @names get a span of their own, a search excerpt's words found get
 * <mark>, and every link of the output gets rel and target.  Pure: no
 * I/O; the one global is cmark-gfm's registry of extensions, filled
 * once; called on the main thread by api.c and sse.c.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>

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

/* An inline node rendered as enter and exit around child; NULL when
 * out of memory (child then freed). */
static cmark_node *
markdown_wrap(const char *enter, const char *exit, cmark_node *child)
{
	cmark_node *n = cmark_node_new(CMARK_NODE_CUSTOM_INLINE);

	if (n == NULL || !cmark_node_set_on_enter(n, enter) ||
	    !cmark_node_set_on_exit(n, exit) ||
	    !cmark_node_append_child(n, child)) {
		cmark_node_free(n);
		cmark_node_free(child);
		return NULL;
	}
	return n;
}

/* A text node of the n bytes at s, wrapped by enter and exit when enter
 * is not NULL, put before at; -1 when out of memory. */
static int
markdown_piece(cmark_node *at, const char *s, size_t n, const char *enter,
    const char *exit)
{
	cmark_node *t = cmark_node_new(CMARK_NODE_TEXT);
	char *lit = strndup(s, n);

	if (t == NULL || lit == NULL || !cmark_node_set_literal(t, lit)) {
		cmark_node_free(t);
		free(lit);
		return -1;
	}
	free(lit);
	if (enter != NULL && (t = markdown_wrap(enter, exit, t)) == NULL)
		return -1;
	if (cmark_node_insert_before(at, t))
		return 0;
	/* A parent that takes no custom node (a table's cell): the text
	 * alone, unwrapped. */
	if (enter != NULL) {
		cmark_node *c = cmark_node_first_child(t);

		cmark_node_unlink(c);
		cmark_node_free(t);
		t = c;
		if (cmark_node_insert_before(at, t))
			return 0;
	}
	cmark_node_free(t);
	return -1;
}

/* The rest of text node at, rest (its literal's tail), put before it as
 * markdown_piece puts one, and at freed: the pieces before took the
 * rest of its place.  -1 when out of memory (at then kept). */
static int
markdown_last_piece(cmark_node *at, const char *rest, const char *enter,
    const char *exit)
{
	if (rest[0] != '\0' && markdown_piece(at, rest, strlen(rest), enter,
	    exit) == -1)
		return -1;
	cmark_node_unlink(at);
	cmark_node_free(at);
	return 0;
}

/* The text nodes of doc, in document order, into *out (*n of them):
 * 0, or -1 when out of memory. */
static int
markdown_texts(cmark_node *doc, cmark_node ***out, size_t *n)
{
	cmark_iter *it = cmark_iter_new(doc);
	cmark_event_type ev;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (it == NULL)
		return -1;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *node = cmark_iter_get_node(it);

		if (ev != CMARK_EVENT_ENTER ||
		    cmark_node_get_type(node) != CMARK_NODE_TEXT)
			continue;
		if (*n == cap) {
			cmark_node **g = realloc(*out, (cap = cap ? 2 * cap :
			    16) * sizeof(**out));

			if (g == NULL) {
				cmark_iter_free(it);
				return -1;
			}
			*out = g;
		}
		(*out)[(*n)++] = node;
	}
	cmark_iter_free(it);
	return 0;
}

/* Whether c may be part of a member's name after '@'. */
static int
markdown_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	    c >= 0x80;
}

/*
 * "@name" in text (after a space, punctuation or the text's start; not
 * in code or a link's URL) in a span of class "mention", so that the
 * dashboard can show who is addressed.  A trailing '.' or '-' is not
 * the name's.  -1 when out of memory.
 */
static int
markdown_mentions(cmark_node *doc)
{
	cmark_node **texts;
	size_t n;
	int rc = 0;

	if (markdown_texts(doc, &texts, &n) == -1)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *lit = cmark_node_get_literal(texts[i]);
		size_t from = 0, len, k, e;
		int split = 0;

		if (lit == NULL || strchr(lit, '@') == NULL)
			continue;
		len = strlen(lit);
		for (k = 0; k < len && rc == 0; k++) {
			if (lit[k] != '@' || (k > 0 &&
			    markdown_name_char((unsigned char)lit[k - 1])))
				continue;
			for (e = k + 1; e < len &&
			    markdown_name_char((unsigned char)lit[e]); e++)
				;
			while (e > k + 1 && (lit[e - 1] == '.' ||
			    lit[e - 1] == '-'))
				e--;
			if (e == k + 1)
				continue;
			if (markdown_piece(texts[i], lit + from, k - from, NULL,
			    NULL) == -1 || markdown_piece(texts[i], lit + k,
			    e - k, "<span class=\"mention\">", "</span>") == -1)
				rc = -1;
			from = e;
			k = e - 1;
			split = 1;
		}
		if (rc == 0 && split)
			rc = markdown_last_piece(texts[i], lit + from, NULL, NULL);
	}
	free(texts);
	return rc;
}

/* U+E000 and U+E001 (private use) open and close a mark in an excerpt's
 * source; nothing else in the output keeps them. */
#define MD_OPEN "\xee\x80\x80"
#define MD_CLOSE "\xee\x80\x81"
#define MD_SENTINEL_LEN 3

/* s less every sentinel, in place. */
static void
markdown_strip(char *s)
{
	char *o = s;

	for (const char *p = s; *p != '\0';) {
		if (strncmp(p, MD_OPEN, MD_SENTINEL_LEN) == 0 ||
		    strncmp(p, MD_CLOSE, MD_SENTINEL_LEN) == 0) {
			p += MD_SENTINEL_LEN;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
}

/* A literal or URL of node (get, set) less its sentinels; -1 when out
 * of memory. */
static int
markdown_strip_field(cmark_node *node, const char *(*get)(cmark_node *),
    int (*set)(cmark_node *, const char *))
{
	const char *v = get(node);
	char *c;
	int ok;

	if (v == NULL || (strstr(v, MD_OPEN) == NULL &&
	    strstr(v, MD_CLOSE) == NULL))
		return 0;
	if ((c = strdup(v)) == NULL)
		return -1;
	markdown_strip(c);
	ok = set(node, c);
	free(c);
	return ok ? 0 : -1;
}

/*
 * The sentinels of an excerpt's source made marks: each text node's
 * parts between an open and a close (in document order, so a mark may
 * span emphasis) wrapped in <mark>; the sentinels anywhere else (code,
 * a link's URL or title, a fence's info) taken out.  -1 when out of
 * memory.
 */
static int
markdown_marks(cmark_node *doc)
{
	cmark_iter *it = cmark_iter_new(doc);
	cmark_event_type ev;
	cmark_node **texts;
	size_t n;
	int in = 0, rc = 0;

	if (it == NULL)
		return -1;
	while (rc == 0 && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *node = cmark_iter_get_node(it);
		cmark_node_type t = cmark_node_get_type(node);

		if (ev != CMARK_EVENT_ENTER)
			continue;
		if (t == CMARK_NODE_LINK || t == CMARK_NODE_IMAGE)
			rc = markdown_strip_field(node, cmark_node_get_url,
			    cmark_node_set_url) == -1 ||
			    markdown_strip_field(node, cmark_node_get_title,
			    cmark_node_set_title) == -1 ? -1 : 0;
		else if (t == CMARK_NODE_CODE_BLOCK)
			rc = markdown_strip_field(node, cmark_node_get_literal,
			    cmark_node_set_literal) == -1 ||
			    markdown_strip_field(node, cmark_node_get_fence_info,
			    cmark_node_set_fence_info) == -1 ? -1 : 0;
		else if (t == CMARK_NODE_CODE)
			rc = markdown_strip_field(node, cmark_node_get_literal,
			    cmark_node_set_literal);
	}
	cmark_iter_free(it);
	if (rc == -1 || markdown_texts(doc, &texts, &n) == -1)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *lit = cmark_node_get_literal(texts[i]);
		size_t from = 0, k;

		if (lit == NULL)
			continue;
		for (k = 0; lit[k] != '\0' && rc == 0; k++) {
			int open = strncmp(lit + k, MD_OPEN, MD_SENTINEL_LEN) == 0;

			if (!open && strncmp(lit + k, MD_CLOSE,
			    MD_SENTINEL_LEN) != 0)
				continue;
			if (k > from && markdown_piece(texts[i], lit + from,
			    k - from, in ? "<mark>" : NULL, "</mark>") == -1)
				rc = -1;
			in = open;
			from = k + MD_SENTINEL_LEN;
			k = from - 1;
		}
		if (rc == 0 && (from > 0 || in))
			rc = markdown_last_piece(texts[i], lit + from,
			    in ? "<mark>" : NULL, "</mark>");
	}
	free(texts);
	return rc;
}

/* text (len bytes) as safe HTML; marks: the excerpt's sentinels made
 * <mark> (markdown_marks). */
static char *
markdown_render(const char *text, size_t len, int marks)
{
	static const char *const exts[] = { "table", "strikethrough",
	    "autolink" };
	/* CMARK_OPT_VALIDATE_UTF8: invalid bytes become U+FFFD, so the
	 * HTML is a valid JSON string; ~~ alone strikes (a chat's "~5
	 * min" stays text). */
	int opts = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8 |
	    CMARK_OPT_STRIKETHROUGH_DOUBLE_TILDE;
	cmark_parser *ps;
	cmark_node *doc = NULL;
	char *html = NULL, *out = NULL;

	cmark_gfm_core_extensions_ensure_registered();
	if ((ps = cmark_parser_new(opts)) == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		cmark_syntax_extension *e = cmark_find_syntax_extension(exts[i]);

		if (e == NULL || !cmark_parser_attach_syntax_extension(ps, e))
			goto out;
	}
	cmark_parser_feed(ps, text, len);
	if ((doc = cmark_parser_finish(ps)) == NULL)
		goto out;
	/* CMARK_OPT_HARDBREAKS: a chat's lines are lines. */
	if (markdown_clean(doc) == 0 && (!marks || markdown_marks(doc) == 0) &&
	    markdown_mentions(doc) == 0 && (html = cmark_render_html(doc,
	    opts | CMARK_OPT_HARDBREAKS,
	    cmark_parser_get_syntax_extensions(ps))) != NULL)
		out = markdown_links(html);
out:
	free(html);
	cmark_node_free(doc);
	cmark_parser_free(ps);
	return out;
}

char *
markdown_html(const char *text, size_t len)
{
	return markdown_render(text, len, 0);
}

char *
markdown_excerpt(const char *excerpt, const cJSON *marks)
{
	const cJSON *m;
	size_t len = strlen(excerpt), nmarks = 0, cp = 0, o = 0;
	char *src, *clean, *out;
	long last = -1;

	if ((clean = strdup(excerpt)) == NULL)
		return NULL;
	markdown_strip(clean);
	len = strlen(clean);
	cJSON_ArrayForEach(m, marks)
		nmarks++;
	if ((src = malloc(len + 2 * MD_SENTINEL_LEN * nmarks + 1)) == NULL) {
		free(clean);
		return NULL;
	}
	/* Walks the excerpt a code point at a time, a sentinel put at each
	 * mark's start and end; marks out of order or not [start, end]
	 * pairs of numbers are passed over. */
	m = cJSON_IsArray(marks) ? marks->child : NULL;
	for (size_t i = 0; i <= len; i++) {
		int at_cp = i == len || ((unsigned char)clean[i] & 0xc0) != 0x80;

		while (at_cp && m != NULL) {
			const cJSON *a = cJSON_GetArrayItem(m, 0);
			const cJSON *b = cJSON_GetArrayItem(m, 1);
			long s, e;

			if (cJSON_GetArraySize(m) != 2 || !cJSON_IsNumber(a) ||
			    !cJSON_IsNumber(b) ||
			    (s = (long)a->valuedouble) < 0 ||
			    (e = (long)b->valuedouble) <= s || s < last) {
				m = m->next;
				continue;
			}
			if ((long)cp == s && last < s) {
				memcpy(src + o, MD_OPEN, MD_SENTINEL_LEN);
				o += MD_SENTINEL_LEN;
				last = s;
			}
			if ((long)cp == e) {
				memcpy(src + o, MD_CLOSE, MD_SENTINEL_LEN);
				o += MD_SENTINEL_LEN;
				last = e;
				m = m->next;
				continue;
			}
			break;
		}
		if (i == len)
			break;
		if (at_cp)
			cp++;
		src[o++] = clean[i];
	}
	src[o] = '\0';
	free(clean);
	out = markdown_render(src, o, 1);
	free(src);
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
	/* A search hit: its excerpt rendered too, the words found marked. */
	text = cJSON_GetObjectItemCaseSensitive(m, "excerpt");
	if (!cJSON_IsString(text))
		return 0;
	if ((html = markdown_excerpt(text->valuestring,
	    cJSON_GetObjectItemCaseSensitive(m, "marks"))) == NULL)
		return -1;
	s = cJSON_CreateString(html);
	free(html);
	if (s == NULL)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(m, "excerpt_html");
	cJSON_AddItemToObject(m, "excerpt_html", s);
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
