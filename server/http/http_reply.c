/*
 * http_reply.c: answers: JSON, files, HTML pages that cannot be framed,
 * JSON errors, each with its CORS and security headers; an answer given
 * to a waiting request resumes its connection (by the kick).  Main
 * thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

#define HTTP_CORS_AGE "600"        /* seconds a preflight's answer holds */

void
http_reply_header(struct http_req *r, const char *name, const char *value)
{
	if (r->answer.nhdr == HTTP_HEADERS_MAX ||
	    strnlen(value, HTTP_HEADER_VALUE_MAX + 1) > HTTP_HEADER_VALUE_MAX ||
	    (r->answer.hdr[r->answer.nhdr].value = strdup(value)) == NULL)
		return;
	r->answer.hdr[r->answer.nhdr].name = name;
	r->answer.nhdr++;
}

void
http_add_headers(struct http_req *r, struct MHD_Response *resp)
{
	for (size_t i = 0; i < r->answer.nhdr; i++)
		MHD_add_response_header(resp, r->answer.hdr[i].name,
		    r->answer.hdr[i].value);
	if (r->ask.cors[0] == '\0')
		return;
	/* A page of a listed origin may read the answer, and the headers
	 * an MCP client needs (the session, the version, and where to
	 * authenticate). */
	MHD_add_response_header(resp, "Access-Control-Allow-Origin",
	    r->ask.cors);
	MHD_add_response_header(resp, "Vary", "Origin");
	if (r->ask.preflight) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods",
		    "GET, POST, DELETE, OPTIONS");
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
		    "Authorization, Content-Type, Accept, Mcp-Session-Id, "
		    "MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name");
		MHD_add_response_header(resp, "Access-Control-Max-Age",
		    HTTP_CORS_AGE);
	} else {
		MHD_add_response_header(resp, "Access-Control-Expose-Headers",
		    "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate");
	}
}

void
http_reply(struct http_req *r, int status, const char *json)
{
	size_t n = strlen(json);
	enum http_state was = r->state;

	if (was == HTTP_ANSWERED || was == HTTP_DONE) {
		log_msg(LOG_WARN, "http: %s %s answered twice", r->ask.method,
		    r->ask.path);
		return;
	}
	/* A newline ends the body, as curl users expect of a terminal; an
	 * empty answer (202) stays empty. */
	if ((r->answer.json = malloc(n + 2)) != NULL) {
		memcpy(r->answer.json, json, n);
		if (n > 0)
			r->answer.json[n++] = '\n';
		r->answer.json[n] = '\0';
	}
	r->answer.status = status;
	r->state = HTTP_ANSWERED;
	if (was == HTTP_WAITING) {
		http_unwait(r);
		if (r->suspended) {
			r->suspended = 0;
			MHD_resume_connection(r->conn);
			http_kick(r->h);
		}
	}
}

void
http_reply_file(struct http_req *r, const char *type, const void *data,
    size_t len)
{
	if (r->state == HTTP_ANSWERED || r->state == HTTP_DONE)
		return;
	r->answer.file = data;
	r->answer.file_len = len;
	r->answer.file_type = type;
	r->answer.status = MHD_HTTP_OK;
	r->state = HTTP_ANSWERED;
}

void
http_reply_reader(struct http_req *r, int status, const char *type,
    uint64_t size, http_body_read *read, http_body_release *release,
    void *arg)
{
	enum http_state was = r->state;

	if (was == HTTP_ANSWERED || was == HTTP_DONE) {
		release(arg);
		return;
	}
	r->answer.reader = read;
	r->answer.release = release;
	r->answer.reader_arg = arg;
	r->answer.reader_size = size;
	snprintf(r->answer.reader_type, sizeof(r->answer.reader_type), "%s",
	    type);
	r->answer.status = status;
	r->state = HTTP_ANSWERED;
	if (was == HTTP_WAITING) {
		http_unwait(r);
		if (r->suspended) {
			r->suspended = 0;
			MHD_resume_connection(r->conn);
			http_kick(r->h);
		}
	}
}

void
http_reply_page(struct http_req *r, int status, const char *html,
    const char *csp)
{
	if (r->state == HTTP_ANSWERED || r->state == HTTP_DONE)
		return;
	if ((r->answer.page_csp = strdup(csp)) == NULL) {
		http_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "out of memory");
		return;
	}
	http_reply(r, status, html);
}

void
http_reply_error(struct http_req *r, int status, const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN];
	cJSON *o;
	char *json = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((o = cJSON_CreateObject()) != NULL &&
	    cJSON_AddStringToObject(o, "error", msg) != NULL)
		json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	http_reply(r, status, json != NULL ? json :
	    "{\"error\":\"out of memory\"}");
	cJSON_free(json);
}
