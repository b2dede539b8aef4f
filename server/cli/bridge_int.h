/*
 * bridge_int.h: the bridge's internal header (papo mcp), included only
 * by its files (bridge.c, bridge_done.c, bridge_xfer.c, bridge_tls.c or
 * bridge_notls.c, bridge_sse.c, bridge_spawn.c, which call one way, in
 * that order): its limits, the buffer, event-stream, transfer and bridge
 * structs, and the functions that cross between the files.
 */
#ifndef PAPO_BRIDGE_INT_H
#define PAPO_BRIDGE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/httpc.h"
#include "node/node.h"
#include "server/cli/client.h"

#define BRIDGE_LINE_MAX (4 * 1024 * 1024)     /* a message, or an event */

#define BRIDGE_ANSWER_MAX (16 * 1024 * 1024)  /* a JSON answer's body */

#define BRIDGE_SESSION_MAX 256                /* an MCP-Session-Id, NUL */

#define BRIDGE_VERSION_MAX 32                 /* a protocol version, NUL */

#define BRIDGE_EVENT_ID_MAX 256               /* an SSE event id, NUL */

#define BRIDGE_RETRY_MS 1000        /* SSE reconnection unless retry: */

/* A growable buffer, always NUL-terminated once it holds anything. */
struct bbuf {
	char *p;
	size_t len;
	size_t cap;
};

/* The state of one server-sent event stream (the SSE specification's
 * parsing rules: lines end in CR, LF or CRLF; a blank line dispatches). */
struct sse {
	struct bbuf line;
	int toolong;          /* the current line is over the limit */
	int cr;               /* the last byte was a CR */
	struct bbuf data;     /* the event's data lines, joined by LF */
	int hasdata;
	int broken;           /* the event lost a line: it is dropped */
	int othertype;        /* an event type other than "message" */
	char id[BRIDGE_EVENT_ID_MAX];   /* the last event id */
	int gotid;            /* an id came on this connection */
	long retry;           /* ms; -1 until retry: says */
};

enum xfer_kind {
	XFER_POST,            /* a message from stdin, or the bridge's own */
	XFER_RESUME,          /* a POST's answer stream, resumed by GET */
	XFER_GET,             /* the session's notification stream */
	XFER_WAKE,            /* GET /api/wake: when to wake the agent */
};

enum xfer_mode {
	MODE_UNKNOWN,         /* no body byte yet */
	MODE_SSE,             /* 200 text/event-stream */
	MODE_BODY,            /* anything else, kept whole */
};

/* How a transfer ended, over either client. */
enum xfer_end {
	XFER_OK,              /* the whole answer came */
	XFER_CONNECT,         /* no connection to the daemon */
	XFER_PINNED,          /* its key is not the one serve.json pins */
	XFER_FAILED,          /* anything else: the words say what */
};

/* One message or stream, and its HTTP transfer while one runs. */
struct xfer {
	TAILQ_ENTRY(xfer) entry;
	struct bridge *b;
	enum xfer_kind kind;
	struct httpc *hc;     /* its request over http://, while it runs */
	void *tls;            /* over https:// (bridge_tls.c's), while it
	                       * runs */
	uint64_t start_at;    /* pending until then (monotonic ms) */
	char *body;           /* POST: the message as the client wrote it */
	cJSON *rid;           /* the id of a request, or NULL */
	int initialize;       /* the message is an initialize request */
	int internal;         /* the bridge's own: its answer is not shown */
	int barrier;          /* later messages wait until it is settled */
	int counted;          /* it is in b->barrier */
	int answered;         /* the response to rid was written */
	int moved;            /* sent again to the daemon's new address */
	int renewed;          /* sent again in a new session */
	int resumes;
	char sent_session[BRIDGE_SESSION_MAX];
	char session[BRIDGE_SESSION_MAX];   /* MCP-Session-Id of the answer */
	int sse_type;         /* the answer is text/event-stream */
	enum xfer_mode mode;
	struct sse sse;
	struct bbuf answer;
	int over;             /* the answer passed BRIDGE_ANSWER_MAX */
};

TAILQ_HEAD(xfer_list, xfer);

struct bridge {
	const char *home;
	int channels;                 /* /mcp?channels=on: pushes wanted */
	int client_channels;          /* the client declared claude/channel */
	char query[512];              /* /mcp's: channels, agent, room */
	const char *agent;            /* ?agent=, or NULL */
	const char *inbox;            /* Claude Code's inbox socket, or NULL */
	const char *inbox_token;
	struct xfer *wake;            /* the wake poll, or NULL */
	void *tls;                    /* bridge_tls.c's, or NULL */
	struct client cl;             /* the daemon, from serve.json */
	struct xfer_list held;        /* messages waiting for a barrier */
	struct xfer_list active;      /* transfers pending or running */
	int barrier;                  /* barrier messages not yet settled */
	struct xfer *get;             /* the session's stream, or NULL */
	int get_wanted;               /* (re)open it when the loop can */
	int get_logged;               /* its failure was told once */
	char session[BRIDGE_SESSION_MAX];
	char version[BRIDGE_VERSION_MAX];
	char *init_body;              /* the client's initialize */
	int reiniting;
	struct xfer *reinit_note;     /* its initialized, while held */
	uint64_t reinit_at;
	unsigned reinits;
	struct bbuf in;               /* the stdin line being read */
	int in_toolong;
	int eof;                      /* stdin closed */
	int outbroken;                /* stdout closed */
};

/* bridge_sse.c */
int bbuf_add(struct bbuf *bb, const char *data, size_t n, size_t max);
void bbuf_free(struct bbuf *bb);
int bridge_token_ok(const char *s, size_t n, size_t max);
/* An event's data, whole, for the function sse_feed was given. */
typedef void sse_event(void *arg, const char *data);
/* data (n bytes of a stream, cut anywhere) read into s; each whole event
 * of type "message" with data, and no line lost, goes to fn(arg, ...). */
void sse_feed(struct sse *s, const char *data, size_t n, sse_event *fn,
    void *arg);
void sse_reset(struct sse *s);

/* bridge_spawn.c */
uint64_t bridge_now(void);
int bridge_spawn(char err[PAPO_ERR_LEN], const char *home, pid_t *pid,
    off_t *logoff);
int bridge_wait(char err[PAPO_ERR_LEN], struct bridge *b, pid_t pid,
    off_t off);

/* bridge_xfer.c */
void bridge_print(struct bridge *b, const char *text, const cJSON *o);
void bridge_error(struct bridge *b, const cJSON *id, int code, const char *msg);
void bridge_fail(struct bridge *b, struct xfer *x, const char *fmt, ...);
void bridge_message(struct bridge *b, struct xfer *x, const char *text);
struct xfer *xfer_new(struct bridge *b, enum xfer_kind kind);
void xfer_stop(struct xfer *x);
void xfer_free(struct xfer *x, int listed);
void xfer_schedule(struct xfer *x, uint64_t at);
int xfer_start(struct xfer *x);
int bridge_refresh(struct bridge *b);
void bridge_release(struct bridge *b);
void bridge_stop_get(struct bridge *b);
void bridge_open_get(struct bridge *b);
int bridge_renew(struct bridge *b);
int bridge_resend(struct bridge *b, struct xfer *x);

/*
 * bridge_tls.c (libcurl, papo-full) or bridge_notls.c (the front, which
 * hands a daemon at an https:// URL to papo-full): what the bridge asks
 * of a daemon over HTTPS, with the key serve.json pins.
 * bridge_tls_open: after the daemon is found; 0, or -1 with err, or 1
 * when this program cannot reach it (the front: papo-full must).
 * bridge_tls_start: x's request to url with headers (NULL-terminated)
 * and x->body for a POST, its answer's headers and body handed to head
 * and body with x as they come (body returns -1 to stop); -1 when it
 * cannot start.  bridge_tls_poll: waits as poll(2) on fds and on every
 * running request, and moves them; bridge_tls_done then gives each that
 * ended, one a call (0 when none is left).  bridge_tls_delete: a DELETE
 * of at most ms, its answer dropped.
 */
int bridge_tls_open(char err[PAPO_ERR_LEN], struct bridge *b);
void bridge_tls_close(struct bridge *b);
int bridge_tls_start(struct xfer *x, const char *url,
    const char *const *headers, httpc_head_cb *head, httpc_body_cb *body);
void bridge_tls_stop(struct xfer *x);
int bridge_tls_poll(struct bridge *b, struct pollfd *fds, nfds_t n,
    int timeout);
int bridge_tls_done(struct bridge *b, struct xfer **x, enum xfer_end *end,
    const char **why, long *status);
void bridge_tls_delete(struct bridge *b, const char *url,
    const char *const *headers, int ms);

/* bridge_done.c */
/* x's transfer ended: end, in words why (for the log), and the
 * answer's status (0 when none came). */
void bridge_done(struct bridge *b, struct xfer *x, enum xfer_end end,
    const char *why, long status);

#endif
