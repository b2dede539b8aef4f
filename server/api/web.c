/*
 * web.c: the dashboard's three files, served from the arrays CMakeLists.txt
 * generates from web/ (embedded.c).  The page is a static client of the
 * API: everything it shows comes from /api/ with the token, so the files
 * themselves are open routes, like /healthz.
 */
#include <stddef.h>
#include <string.h>

#include "server/api/web.h"
#include "server/http/http.h"

/* Defined in the generated embedded.c. */
extern const unsigned char web_index_html[], web_app_js[], web_style_css[];
extern const size_t web_index_html_len, web_app_js_len, web_style_css_len;

struct web_file {
	const char *path;
	const char *type;
	const unsigned char *data;
	const size_t *len;
};

static const struct web_file web_files[] = {
	{ "/", "text/html; charset=utf-8", web_index_html,
	    &web_index_html_len },
	{ "/app.js", "text/javascript; charset=utf-8", web_app_js,
	    &web_app_js_len },
	{ "/style.css", "text/css; charset=utf-8", web_style_css,
	    &web_style_css_len },
};

static void
web_serve(struct http_req *r, void *arg)
{
	const char *path = http_req_path(r);

	(void)arg;
	for (size_t i = 0; i < sizeof(web_files) / sizeof(web_files[0]); i++)
		if (strcmp(web_files[i].path, path) == 0) {
			http_reply_file(r, web_files[i].type, web_files[i].data,
			    *web_files[i].len);
			return;
		}
	http_reply_error(r, 404, "no such path: %s", path);
}

static const struct http_route web_table[] = {
	{ "GET", "/", web_serve, 1 },
	{ "GET", "/app.js", web_serve, 1 },
	{ "GET", "/style.css", web_serve, 1 },
};

const struct http_route *
web_routes(size_t *n)
{
	*n = sizeof(web_table) / sizeof(web_table[0]);
	return web_table;
}
