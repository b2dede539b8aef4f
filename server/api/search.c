/*
 * search.c: GET /api/search and GET /api/history?thread=ID (search.h;
 * README, "/api/search"): the parameters checked here, each refused
 * with a 400 that says what is accepted, then one NODE_SEARCH request;
 * the node answers with the hits (node/room/search.c).  Main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/markdown.h"
#include "server/api/param.h"
#include "server/api/search.h"

#define SEARCH_CURSOR_MAX 64

static void
search_done(struct http_req *r, struct node_msg *m, void *arg)
{
	(void)arg;
	if (m->code == 0 && m->json != NULL)
		http_reply(r, 200, m->json);
	else if (m->code >= 400 && m->code <= 599)
		http_reply_error(r, m->code, "%s", m->err[0] != '\0' ? m->err :
		    "the node refused the search");
	else
		http_reply_error(r, 500, "the node gave no answer");
	node_msg_free(m);
}

/* search_done for html=1: each hit's message gets its "html" (markdown.h)
 * for the dashboard, as history's do. */
static void
search_done_html(struct http_req *r, struct node_msg *m, void *arg)
{
	char *json;

	if (m->code == 0 && m->json != NULL &&
	    (json = markdown_json(m->json, "messages")) != NULL) {
		free(m->json);
		m->json = json;
	}
	search_done(r, m, arg);
}

/* html (1 or 0) into *on: 0, or -1 answered 400. */
static int
search_html(struct http_req *r, int *on)
{
	const char *html = http_req_query(r, "html");

	if (html != NULL && strcmp(html, "1") != 0 && strcmp(html, "0") != 0) {
		http_reply_error(r, 400, "html is 1 or 0");
		return -1;
	}
	*on = html != NULL && strcmp(html, "1") == 0;
	return 0;
}

/* limit, cursor and thread into a: 0, or -1 answered 400. */
static int
search_paging(struct http_req *r, struct node_search_args *a)
{
	const char *limit = http_req_query(r, "limit");
	const char *cursor = http_req_query(r, "cursor");
	const char *thread = http_req_query(r, "thread");
	uint64_t n = 20;

	if (limit != NULL && (api_number(limit, SEARCH_LIMIT_MAX, &n) ==
	    -1 || n == 0)) {
		http_reply_error(r, 400, "limit must be a whole number from 1 "
		    "to %d", SEARCH_LIMIT_MAX);
		return -1;
	}
	a->limit = (size_t)n;
	if (cursor != NULL && cursor[0] != '\0') {
		if (strlen(cursor) > SEARCH_CURSOR_MAX ||
		    (a->cursor = strdup(cursor)) == NULL) {
			http_reply_error(r, 400, "cursor must be the \"next\" "
			    "of the page before, as it was given");
			return -1;
		}
	}
	if (thread != NULL && api_msgid(thread, a->thread) == -1) {
		http_reply_error(r, 400, "thread must be a message id (10 "
		    "characters)");
		return -1;
	}
	return 0;
}

/* from or to (name) into *out: 0, or -1 answered 400. */
static int
search_who(struct http_req *r, const char *name, char **out)
{
	const char *v = http_req_query(r, name);
	size_t n;

	if (v == NULL)
		return 0;
	n = strlen(v);
	if (n == 0 || n > (PAPO_NAME_MAX > PAPO_ID_LEN ? PAPO_NAME_MAX :
	    PAPO_ID_LEN)) {
		http_reply_error(r, 400, "%s must be a member's name or id",
		    name);
		return -1;
	}
	if ((*out = strdup(v)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return -1;
	}
	return 0;
}

/* before, before_id, after, files and order into a: 0, or -1 answered
 * 400. */
static int
search_filters(struct http_req *r, struct node_search_args *a)
{
	const char *before = http_req_query(r, "before");
	const char *before_id = http_req_query(r, "before_id");
	const char *after = http_req_query(r, "after");
	const char *files = http_req_query(r, "files");
	const char *order = http_req_query(r, "order");

	if ((before != NULL && (api_number(before, API_TIME_MAX,
	    &a->before) == -1 || a->before == 0)) ||
	    (after != NULL && api_number(after, API_TIME_MAX,
	    &a->after_ts) == -1)) {
		http_reply_error(r, 400, "before and after must be times in "
		    "milliseconds since 1970");
		return -1;
	}
	if (files != NULL && strcmp(files, "1") != 0 &&
	    strcmp(files, "0") != 0) {
		http_reply_error(r, 400, "files must be 1 (only messages that "
		    "name files) or 0");
		return -1;
	}
	a->files_only = files != NULL && strcmp(files, "1") == 0;
	if (before_id != NULL && api_msgid(before_id, a->before_id) == -1) {
		http_reply_error(r, 400, "before_id must be a message id (10 "
		    "characters)");
		return -1;
	}
	if (order != NULL && strcmp(order, "best") != 0 &&
	    strcmp(order, "time") != 0) {
		http_reply_error(r, 400, "order is best (words ranked, the "
		    "default) or time (the newest that match, oldest first)");
		return -1;
	}
	a->in_time = order != NULL && strcmp(order, "time") == 0;
	return 0;
}

void
api_search(struct http_req *r, void *node)
{
	static const char *const known[] = { "q", "from", "to", "thread",
	    "before", "before_id", "after", "files", "order", "limit",
	    "cursor", "room", "html", NULL };
	const char *bad, *q;
	struct node_search_args *a;
	struct node_msg *m;
	int html;

	if ((bad = http_req_query_unknown(r, known)) != NULL) {
		http_reply_error(r, 400, "unknown parameter '%s': search "
		    "takes q, from, to, thread, before, before_id, after, "
		    "files, order, limit, cursor, room and html", bad);
		return;
	}
	if (search_html(r, &html) == -1)
		return;
	q = http_req_query(r, "q");
	if (q != NULL && strlen(q) > SEARCH_QUERY_MAX) {
		http_reply_error(r, 400, "q is longer than %d bytes",
		    SEARCH_QUERY_MAX);
		return;
	}
	if ((m = node_msg_new(NODE_SEARCH)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	a = node_args_search(m);
	if (q != NULL && q[0] != '\0' && (a->text = strdup(q)) == NULL) {
		node_msg_free(m);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	if (search_paging(r, a) == -1 || search_filters(r, a) == -1 ||
	    search_who(r, "from", &a->from) == -1 ||
	    search_who(r, "to", &a->to) == -1) {
		node_msg_free(m);
		return;
	}
	http_submit(r, node, m, html ? search_done_html : search_done, NULL);
}

void
api_thread(struct http_req *r, void *node)
{
	static const char *const known[] = { "thread", "limit", "cursor",
	    "room", "html", NULL };
	const char *bad;
	struct node_msg *m;
	int html;

	if ((bad = http_req_query_unknown(r, known)) != NULL) {
		http_reply_error(r, 400, "unknown parameter '%s': history "
		    "with thread takes limit, cursor and html", bad);
		return;
	}
	if (search_html(r, &html) == -1)
		return;
	if ((m = node_msg_new(NODE_SEARCH)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	if (search_paging(r, node_args_search(m)) == -1) {
		node_msg_free(m);
		return;
	}
	http_submit(r, node, m, html ? search_done_html : search_done, NULL);
}
