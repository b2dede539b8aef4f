/*
 * http_route.c: the screen every request passes before its handler, in
 * this order: Host and Origin (403), a listed origin's CORS preflight
 * (204), credentials (http_auth.c), the route in the mounts' tables with
 * its method (404, 405), the Content-Type of a POST (415) and the body
 * size (413), but for an upload's (HTTP_UPLOAD).  Main thread, inside
 * MHD's callbacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

#define HTTP_ALLOW_LEN 32

static int
http_method_is(const char *route, const char *method)
{
	return strcmp(route, method) == 0 ||
	    (strcmp(route, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

/*
 * Whether path matches a route's pattern: the same text, but that a
 * segment "*" of the pattern matches any one segment of path (1 to
 * HTTP_SEGMENT_MAX - 1 bytes, no '/'), copied into seg.
 */
int
http_path_match(const char *pattern, const char *path,
    char seg[HTTP_SEGMENT_MAX])
{
	const char *star = strchr(pattern, '*');
	size_t head, n;

	if (star == NULL)
		return strcmp(pattern, path) == 0;
	head = (size_t)(star - pattern);
	if (strncmp(pattern, path, head) != 0)
		return 0;
	path += head;
	n = strcspn(path, "/");
	if (n == 0 || n >= HTTP_SEGMENT_MAX || strcmp(star + 1, path + n) != 0)
		return 0;
	memcpy(seg, path, n);
	seg[n] = '\0';
	return 1;
}

/*
 * Finds the route of method and path, with its mount's argument and
 * what its "*" matched.  When there is none, *known says whether the
 * path exists under other methods, which allow then lists.  *open says
 * whether the path is served without the token.
 */
static const struct http_route *
http_route_find(const struct http *h, const char *method, const char *path,
    void **arg, int *form, int *known, int *open, char allow[HTTP_ALLOW_LEN],
    char seg[HTTP_SEGMENT_MAX])
{
	const struct http_route *found = NULL;
	char s[HTTP_SEGMENT_MAX];

	*known = *open = 0;
	allow[0] = '\0';
	for (size_t m = 0; m < h->nmounts; m++)
		for (size_t i = 0; i < h->mounts[m].nroutes; i++) {
			const struct http_route *rt = &h->mounts[m].routes[i];

			if (!http_path_match(rt->path, path, s))
				continue;
			*known = 1;
			*open |= (rt->open & HTTP_OPEN) != 0;
			if (found == NULL && http_method_is(rt->method, method)) {
				found = rt;
				*arg = h->mounts[m].arg;
				*form = h->mounts[m].form;
				if (strchr(rt->path, '*') != NULL)
					memcpy(seg, s, HTTP_SEGMENT_MAX);
			}
			if (strlen(allow) + strlen(rt->method) + 3 <
			    HTTP_ALLOW_LEN)
				snprintf(allow + strlen(allow), HTTP_ALLOW_LEN -
				    strlen(allow), "%s%s", allow[0] != '\0' ?
				    ", " : "", rt->method);
		}
	return found;
}

size_t
http_body_max(const struct http_req *r)
{
	return r->ask.route != NULL && (r->ask.route->open & HTTP_LARGE) ?
	    HTTP_LARGE_MAX : HTTP_BODY_MAX;
}

/* Is the media type of a Content-Type type (any case, parameters such
 * as charset allowed)? */
static int
http_is_type(const char *ctype, const char *type)
{
	size_t n = strlen(type);

	if (ctype == NULL)
		return 0;
	while (*ctype == ' ')
		ctype++;
	if (strncasecmp(ctype, type, n) != 0)
		return 0;
	ctype += n;
	while (*ctype == ' ')
		ctype++;
	return *ctype == '\0' || *ctype == ';';
}

static int
http_is_json(const char *ctype)
{
	return http_is_type(ctype, "application/json");
}

/*
 * Runs the checks that need only the headers, in the order the file's
 * opening paragraph gives; a failure answers r at once (state ANSWERED).
 */
void
http_screen(struct http_req *r, const char *url, const char *method)
{
	struct http *h = r->h;
	const char *cl;
	char allow[HTTP_ALLOW_LEN], route_path[HTTP_ROOM_PATH_MAX];
	int known, open;

	const char *origin = http_header(r, MHD_HTTP_HEADER_ORIGIN);
	enum http_origin_kind kind;

	url = http_room_path(r, url, route_path, sizeof(route_path));
	r->ask.route = http_route_find(h, method, url, &r->ask.arg,
	    &r->ask.form, &known, &open, allow, r->ask.seg);
	kind = http_origin_check(h, http_header(r, MHD_HTTP_HEADER_HOST),
	    origin);
	if (kind == HTTP_ORIGIN_BAD) {
		http_reply_error(r, MHD_HTTP_FORBIDDEN, "this daemon answers "
		    "only requests addressed to it (Host) from its own pages "
		    "or the origins of PAPO_CORS_ORIGINS (Origin)");
		return;
	}
	if (kind == HTTP_ORIGIN_CORS)
		snprintf(r->ask.cors, sizeof(r->ask.cors), "%s", origin);
	/* A preflight carries no credentials: it is answered for a listed
	 * origin on any path that exists, and the request it announces
	 * passes every check after. */
	if (kind == HTTP_ORIGIN_CORS && strcmp(method, "OPTIONS") == 0 &&
	    known && http_header(r, "Access-Control-Request-Method") != NULL) {
		r->ask.preflight = 1;
		http_reply(r, MHD_HTTP_NO_CONTENT, "");
		return;
	}
	if (!open) {
		if (http_screen_auth(r) == -1)
			return;
		/* Credentials shown: the connection no longer counts
		 * against its address, streaming, waiting or kept alive,
		 * so that agents and dashboards on one machine (loopback
		 * is one address) may hold as many as they like. */
		r->ask.authed = 1;
		http_conn_count(r->c, 0);
	}
	if (r->ask.route == NULL && !known) {
		http_reply_error(r, MHD_HTTP_NOT_FOUND, "no such path: %s", url);
		return;
	}
	if (r->ask.route == NULL) {
		http_reply_header(r, MHD_HTTP_HEADER_ALLOW, allow);
		http_reply_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, "%s takes %s, "
		    "not %s", url, allow, method);
		return;
	}
	/* An upload's body is a file: its handler checks its size. */
	if (r->ask.route->open & HTTP_UPLOAD)
		return;
	if (strcmp(method, "POST") == 0 && r->ask.form) {
		if (!http_is_type(http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE),
		    "application/x-www-form-urlencoded")) {
			http_reply_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			    "the body must be a form, sent as 'Content-Type: "
			    "application/x-www-form-urlencoded'");
			return;
		}
	} else if (strcmp(method, "POST") == 0 &&
	    !http_is_json(http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE))) {
		http_reply_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "the body "
		    "must be JSON, sent as 'Content-Type: application/json'");
		return;
	}
	cl = http_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > http_body_max(r))
		http_reply_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "the body has "
		    "%s bytes; at most %zu are allowed (a message's text, at "
		    "most %d)", cl, http_body_max(r), PAPO_BODY_MAX);
}

/*
 * Whether an early answer goes out before the body: yes when the client
 * waits for "100 Continue" (it has sent nothing yet) or announced more
 * than is worth reading; else the body is read and dropped first, since
 * closing on unread bytes would reset the connection under the answer.
 */
int
http_answer_early(struct http_req *r)
{
	const char *expect = http_header(r, MHD_HTTP_HEADER_EXPECT);
	const char *cl = http_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
		return 1;
	return cl != NULL && strtoull(cl, NULL, 10) > HTTP_DISCARD_MAX;
}
