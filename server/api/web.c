/*
 * web.c: the dashboard's files, served from the table CMakeLists.txt
 * generates from web/ (embedded.c: web_files).  The page is a static
 * client of the API: everything it shows comes from /api/ with the
 * token, so the files themselves are open routes, like /healthz.  The
 * modules are served as they are, one file each (no bundle), under
 * /js/: one route takes them all and the table says which exist.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "server/api/web.h"
#include "server/http/http.h"

/*
 * Answers with the file of the request's path: the route's own for "/"
 * and "/style.css"; for the modules (route "/js/" and a "*"), the
 * module's name the "*" matched.
 */
static void
web_serve(struct http_req *r, void *arg)
{
	const char *route = http_req_path(r), *seg = http_req_segment(r);
	const char *star = strchr(route, '*');
	char path[64 + HTTP_SEGMENT_MAX];

	(void)arg;
	if (seg != NULL && star != NULL)
		snprintf(path, sizeof(path), "%.*s%s%s", (int)(star - route),
		    route, seg, star + 1);
	else
		snprintf(path, sizeof(path), "%s", route);
	for (size_t i = 0; i < web_nfiles; i++)
		if (strcmp(web_files[i].path, path) == 0) {
			http_reply_file(r, web_files[i].type, web_files[i].data,
			    web_files[i].len);
			return;
		}
	http_reply_error(r, 404, "no such path: %s", path);
}

static const struct http_route web_table[] = {
	{ "GET", "/", web_serve, HTTP_OPEN },
	{ "GET", "/style.css", web_serve, HTTP_OPEN },
	{ "GET", "/js/*", web_serve, HTTP_OPEN },
};

const struct http_route *
web_routes(size_t *n)
{
	*n = sizeof(web_table) / sizeof(web_table[0]);
	return web_table;
}
