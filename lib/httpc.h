/*
 * httpc.h: a small HTTP/1.1 client for plain http:// on one TCP
 * connection, one request at a time: a body from memory or from a
 * reader (sized, or chunked when its size is unknown), the answer's body
 * (sized, chunked, or up to the close) handed to a callback as it
 * comes.  No TLS, no proxy, no redirects, no keep-alive.  It exists so
 * that the CLI's commands reach a daemon on this machine without
 * loading libcurl and what it links (docs/ARCHITECTURE.md, "The front
 * program").  Blocking; for the main thread of a short-lived process.
 */
#ifndef PAPO_HTTPC_H
#define PAPO_HTTPC_H

#include <stddef.h>

#include "lib/err.h"

#define HTTPC_HEAD_MAX (64 * 1024)   /* bytes of an answer's status and
                                      * headers */
#define HTTPC_HEADERS_MAX 8          /* extra request headers */

/* What a request ended with; httpc_why says it in words. */
enum httpc_end {
	HTTPC_OK,         /* the whole answer came */
	HTTPC_CONNECT,    /* no connection (refused, unreachable, ...) */
	HTTPC_TIMEOUT,    /* a deadline passed */
	HTTPC_SEND,       /* the request could not be sent whole */
	HTTPC_CUT,        /* the answer stopped before its end */
	HTTPC_BAD,        /* the answer is not HTTP/1.x as we read it */
	HTTPC_STOPPED,    /* the body callback asked to stop */
	HTTPC_READ,       /* the body's reader failed */
};

/*
 * Reads up to n bytes of the request's body into p: how many (0 at its
 * end), or -1 when it cannot (errno says why).
 */
typedef long httpc_read_cb(void *arg, char *p, size_t n);
/*
 * Takes n bytes of the answer's body, whose status is status: 0, or -1
 * to stop (the request then ends HTTPC_STOPPED).
 */
typedef int httpc_body_cb(void *arg, long status, const char *p, size_t n);

struct httpc_req {
	const char *url;          /* "http://HOST:PORT" (IPv6 in brackets) */
	const char *method;       /* "GET", "POST" */
	const char *path;         /* "/api/status?..." */
	const char *headers[HTTPC_HEADERS_MAX];  /* "Name: value" lines, the
	                                          * first NULL ending them */
	const char *body;         /* a body in memory, or NULL */
	size_t body_len;
	httpc_read_cb *read;      /* else a body read as it is sent, or NULL */
	void *read_arg;
	long long read_len;       /* its length, -1 when unknown (chunked) */
	httpc_body_cb *on_body;   /* the answer's body, or NULL to drop it */
	void *body_arg;
	int connect_ms;           /* to have a connection; 0: no limit */
	int total_ms;             /* for the whole request; 0: no limit */
	int idle_ms;              /* with no byte moving; 0: no limit */
};

/*
 * Makes the request.  HTTPC_OK with the answer's status in *status, or
 * how it ended otherwise (*status then the answer's status when one had
 * come, else 0).
 */
enum httpc_end httpc_do(const struct httpc_req *r, long *status);
const char *httpc_why(enum httpc_end e);

#endif
