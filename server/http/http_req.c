/*
 * http_req.c: what a handler reads of its request: its path, headers and
 * query (unknown arguments named), the room a /api/rooms/ROOM/ path
 * names, its body.  Main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "server/http/http.h"
#include "server/http/http_int.h"

const char *
http_header(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *
http_req_header(struct http_req *r, const char *name)
{
	return http_header(r, name);
}

/*
 * One room's routes: /api/rooms/ROOM/REST is /api/REST for that room
 * (its id, its name or the start of its id, percent-encoded), and
 * /api/rooms/ROOM itself is /api/room; any route takes ?room=ROOM too.
 * The room named is the request's (http_req_room), given to the node
 * with what the route submits (http_submit).  Returns the path to route
 * by, in out when it was rewritten.
 */
const char *
http_room_path(struct http_req *r, const char *url, char *out, size_t len)
{
	static const char prefix[] = "/api/rooms/";
	const char *sel, *rest, *q;
	char room[HTTP_ROOM_PATH_MAX];
	size_t n;

	if ((q = http_req_query(r, "room")) != NULL && q[0] != '\0')
		r->ask.room = strdup(q);
	if (strncmp(url, prefix, sizeof(prefix) - 1) != 0)
		return url;
	sel = url + sizeof(prefix) - 1;
	rest = strchr(sel, '/');
	n = rest != NULL ? (size_t)(rest - sel) : strlen(sel);
	if (n == 0 || n >= sizeof(room))
		return url;
	memcpy(room, sel, n);
	room[n] = '\0';
	MHD_http_unescape(room);
	free(r->ask.room);
	r->ask.room = strdup(room);
	if (rest == NULL || rest[1] == '\0')
		snprintf(out, len, "/api/room");
	else if ((size_t)snprintf(out, len, "/api/%s", rest + 1) >= len)
		return url;
	return out;
}

const char *
http_req_room(const struct http_req *r)
{
	return r->ask.room;
}

const char *
http_req_query(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

struct http_scan {
	const char *const *known;
	const char *unknown;
};

static enum MHD_Result
http_scan_arg(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct http_scan *s = cls;

	(void)kind;
	(void)value;
	/* Every route takes the room it is for (http_room_path). */
	if (strcmp(key, "room") == 0)
		return MHD_YES;
	for (size_t i = 0; s->known[i] != NULL; i++)
		if (strcmp(key, s->known[i]) == 0)
			return MHD_YES;
	s->unknown = key;
	return MHD_NO;
}

const char *
http_req_query_unknown(struct http_req *r, const char *const *known)
{
	struct http_scan s = { known, NULL };

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND,
	    http_scan_arg, &s);
	return s.unknown;
}

const char *
http_req_body(const struct http_req *r, size_t *len)
{
	*len = r->body.len;
	return r->body.buf != NULL ? r->body.buf : "";
}

const char *
http_req_segment(const struct http_req *r)
{
	return r->ask.seg[0] != '\0' ? r->ask.seg : NULL;
}

const char *
http_req_path(const struct http_req *r)
{
	return r->ask.route->path;
}
