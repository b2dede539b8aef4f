/*
 * httpc.h: a small HTTP/1.1 client for plain http:// on one TCP
 * connection, one request at a time: a body from memory or from a
 * reader (sized, or chunked when its size is unknown), the answer's body
 * (sized, chunked, or up to the close) handed to a callback as it
 * comes.  No TLS, no proxy, no redirects, no keep-alive.  It exists so
 * that the CLI's commands and papo mcp reach a daemon on this machine
 * without loading libcurl and what it links (docs/ARCHITECTURE.md, "The
 * front program").  A request is made whole by httpc_do (blocking), or
 * step by step inside the caller's own poll loop (httpc_start), several
 * side by side; either on one thread, the caller's.
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
	HTTPC_RUNNING,    /* not over yet (httpc_step) */
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
/*
 * Takes one header of the answer (not of a 1xx before it), its name and
 * value without the spaces around them, before any of its body.
 */
typedef void httpc_head_cb(void *arg, long status, const char *name,
    const char *value);

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
	httpc_head_cb *on_head;   /* the answer's headers, or NULL */
	httpc_body_cb *on_body;   /* the answer's body, or NULL to drop it */
	void *body_arg;           /* on_head's and on_body's */
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

/*
 * A request made step by step, for a loop that waits on many things:
 * httpc_start copies what r says (its strings and its body too), so r
 * may go; the loop waits until httpc_fd is ready for httpc_events or
 * httpc_timeout ms have passed, then calls httpc_step, which does what
 * can be done without waiting (the callbacks run inside it) and returns
 * HTTPC_RUNNING, or how the request ended as httpc_do would (the status
 * in *status).  After its end a request is only freed.  httpc_start
 * returns NULL when out of memory.  httpc_free(NULL) does nothing; a
 * request freed before its end is dropped, its connection closed.
 */
struct httpc;
struct httpc *httpc_start(const struct httpc_req *r);
int httpc_fd(const struct httpc *h);
short httpc_events(const struct httpc *h);
int httpc_timeout(const struct httpc *h);
enum httpc_end httpc_step(struct httpc *h, long *status);
void httpc_free(struct httpc *h);

#endif
