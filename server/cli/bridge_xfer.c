/*
 * bridge_xfer.c: the bridge's transfers to the daemon's /mcp and the
 * session they run in: each message's request (lib/httpc over http://,
 * bridge_tls.c over https://), its headers and its answer (a body, or an
 * event stream), the order kept by barriers, the
 * session's GET stream, a new session when the daemon forgot the old
 * one; and what comes back, written to stdout as whole JSON-RPC
 * messages, one a line.  Main thread, inside the bridge's loop.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/httpc.h"
#include "lib/log.h"
#include "node/node.h"
#include "server/cli/bridge_int.h"
#include "server/cli/client.h"
#include "server/mcp/mcp_rpc.h"

#define BRIDGE_REINIT_MS 1000       /* at most one new session this often */
#define BRIDGE_WAKE_S 55            /* a wake poll's length */
#define BRIDGE_CONNECT_MS 5000      /* to connect to the daemon */
#define BRIDGE_HEADER_MAX (BRIDGE_SESSION_MAX + 300)  /* a request's */

static void xfer_settle(struct xfer *);

/* Writes one message as one line.  The text is kept as the daemon wrote
 * it (numbers exact) unless it spans lines; then it is printed again,
 * compact.  A failed write means the client has gone. */
void
bridge_print(struct bridge *b, const char *text, const cJSON *o)
{
	char *s = NULL;
	size_t n = text != NULL ? strlen(text) : 0;

	if (b->outbroken)
		return;
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' ||
	    text[n - 1] == '\r' || text[n - 1] == '\n'))
		n--;
	if (text == NULL || memchr(text, '\n', n) != NULL ||
	    memchr(text, '\r', n) != NULL) {
		if ((s = cJSON_PrintUnformatted(o)) == NULL) {
			log_msg(LOG_ERROR, "mcp: out of memory: a message is lost");
			return;
		}
		text = s;
		n = strlen(s);
	}
	if (fwrite(text, 1, n, stdout) != n || fputc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF) {
		log_msg(LOG_INFO, "mcp: stdout is closed: stopping");
		b->outbroken = 1;
	}
	cJSON_free(s);
}

/* Writes a JSON-RPC error for id (null when unknown). */
void
bridge_error(struct bridge *b, const cJSON *id, int code, const char *msg)
{
	cJSON *o, *e;

	if ((o = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(o, "jsonrpc", "2.0") == NULL ||
	    !cJSON_AddItemToObject(o, "id", id != NULL ?
	    cJSON_Duplicate(id, 1) : cJSON_CreateNull()) ||
	    (e = cJSON_AddObjectToObject(o, "error")) == NULL ||
	    cJSON_AddNumberToObject(e, "code", code) == NULL ||
	    cJSON_AddStringToObject(e, "message", msg) == NULL)
		log_msg(LOG_ERROR, "mcp: out of memory: an error is lost");
	else
		bridge_print(b, NULL, o);
	cJSON_Delete(o);
}

/*
 * Answers x's request with an error when nothing answered it yet, so
 * that the client is not left waiting; for a notification or a
 * response, or when it was answered, the reason only goes to stderr.
 */
void
bridge_fail(struct bridge *b, struct xfer *x, const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_WARN, "mcp: %s", msg);
	if (x->rid == NULL || x->answered || x->internal)
		return;
	bridge_error(b, x->rid, JSONRPC_INTERNAL_ERROR, msg);
	x->answered = 1;
}

static int
bridge_is_response(const cJSON *o)
{
	return cJSON_IsObject(o) &&
	    cJSON_GetObjectItemCaseSensitive(o, "method") == NULL &&
	    cJSON_GetObjectItemCaseSensitive(o, "id") != NULL &&
	    (cJSON_GetObjectItemCaseSensitive(o, "result") != NULL ||
	    cJSON_GetObjectItemCaseSensitive(o, "error") != NULL);
}

/* The answer to an initialize: the session and the protocol version
 * every later request must name. */
static void
bridge_initialized(struct bridge *b, struct xfer *x, const cJSON *resp)
{
	const cJSON *result, *pv;

	result = cJSON_GetObjectItemCaseSensitive(resp, "result");
	if (!cJSON_IsObject(result)) {
		if (x->internal)
			log_msg(LOG_ERROR, "mcp: papo serve refused a new session");
		return;
	}
	pv = cJSON_GetObjectItemCaseSensitive(result, "protocolVersion");
	if (cJSON_IsString(pv) && bridge_token_ok(pv->valuestring,
	    strlen(pv->valuestring), sizeof(b->version)))
		snprintf(b->version, sizeof(b->version), "%s", pv->valuestring);
	snprintf(b->session, sizeof(b->session), "%s", x->session);
	log_msg(LOG_DEBUG, "mcp: session %s, protocol %s", b->session,
	    b->version);
	if (!x->internal) {
		free(b->init_body);
		b->init_body = strdup(x->body);
	} else
		log_msg(LOG_INFO, "mcp: a new session started on papo serve");
	/* Not from here: this runs inside a transfer's callback, where no
	 * other transfer may be stopped or started. */
	b->get_wanted = 1;
}

/* One message from the daemon, on x's stream or in its body. */
void
bridge_message(struct bridge *b, struct xfer *x, const char *text)
{
	const cJSON *e, *resp = NULL;
	cJSON *o;
	int mine;

	if ((o = cJSON_ParseWithOpts(text, NULL, 1)) == NULL) {
		log_msg(LOG_WARN, "mcp: papo serve sent something that is not "
		    "JSON: dropped");
		return;
	}
	if (cJSON_IsArray(o)) {
		cJSON_ArrayForEach(e, o)
			if (x->rid != NULL && bridge_is_response(e) &&
			    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(e,
			    "id"), x->rid, 1))
				resp = e;
	} else if (x->rid != NULL && bridge_is_response(o) && cJSON_Compare(
	    cJSON_GetObjectItemCaseSensitive(o, "id"), x->rid, 1))
		resp = o;
	mine = resp != NULL;
	/* A channel push to a client that neither declared it takes them
	 * nor had --channels is a courtesy the daemon never counts: passed
	 * on, a client that shows it anyway (Claude Code with channels on
	 * says nothing of it) would see the message twice, there and in
	 * wait.  The wake tells such a client instead. */
	if (!b->channels && !b->client_channels && cJSON_IsObject(o) &&
	    cJSON_IsString(e = cJSON_GetObjectItemCaseSensitive(o, "method")) &&
	    strcmp(e->valuestring, "notifications/claude/channel") == 0) {
		cJSON_Delete(o);
		return;
	}
	if (mine && x->initialize)
		bridge_initialized(b, x, resp);
	if (!(mine && x->internal))
		bridge_print(b, text, o);
	if (mine) {
		x->answered = 1;
		xfer_settle(x);
	}
	cJSON_Delete(o);
}

/* A header of x's answer: its session, and whether it is a stream. */
static void
xfer_on_head(void *arg, long status, const char *name, const char *value)
{
	struct xfer *x = arg;
	size_t n = strlen(value);

	(void)status;
	if (strcasecmp(name, "Content-Type") == 0)
		x->sse_type = strncasecmp(value, "text/event-stream", 17) == 0;
	if (strcasecmp(name, "MCP-Session-Id") != 0)
		return;
	if (bridge_token_ok(value, n, sizeof(x->session)))
		memcpy(x->session, value, n + 1);
	else
		log_msg(LOG_WARN, "mcp: papo serve sent an invalid "
		    "MCP-Session-Id: ignored");
}

/* An event of x's answer stream: one message from the daemon. */
static void
xfer_on_event(void *arg, const char *data)
{
	struct xfer *x = arg;

	bridge_message(x->b, x, data);
}

/* Bytes of x's answer: -1 to stop it. */
static int
xfer_on_body(void *arg, long status, const char *data, size_t n)
{
	struct xfer *x = arg;

	if (x->mode == MODE_UNKNOWN)
		x->mode = status == 200 && x->sse_type ? MODE_SSE : MODE_BODY;
	if (x->mode == MODE_SSE) {
		sse_feed(&x->sse, data, n, xfer_on_event, x);
		return x->b->outbroken ? -1 : 0;
	}
	if (bbuf_add(&x->answer, data, n, BRIDGE_ANSWER_MAX) == -1) {
		x->over = 1;
		return -1;
	}
	return 0;
}

struct xfer *
xfer_new(struct bridge *b, enum xfer_kind kind)
{
	struct xfer *x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->b = b;
	x->kind = kind;
	x->sse.retry = -1;
	return x;
}

/* Ends x's transfer, if one runs, and forgets what it received. */
void
xfer_stop(struct xfer *x)
{
	httpc_free(x->hc);
	x->hc = NULL;
	if (x->tls != NULL)
		bridge_tls_stop(x);
	x->sse_type = 0;
	x->mode = MODE_UNKNOWN;
	x->over = 0;
	x->session[0] = '\0';
	bbuf_free(&x->answer);
	sse_reset(&x->sse);
}

static void
xfer_settle(struct xfer *x)
{
	struct bridge *b = x->b;

	if (!x->counted)
		return;
	x->counted = 0;
	b->barrier--;
	if (x->initialize && x->internal)
		b->reiniting = 0;
	bridge_release(b);
}

/* Frees x, which must be in b->active or in no list. */
void
xfer_free(struct xfer *x, int listed)
{
	struct bridge *b = x->b;

	if (listed)
		TAILQ_REMOVE(&b->active, x, entry);
	if (b->get == x)
		b->get = NULL;
	if (b->wake == x)
		b->wake = NULL;
	xfer_stop(x);
	xfer_settle(x);
	cJSON_Delete(x->rid);
	free(x->body);
	free(x);
}

/* Makes x wait in b->active until at, then run. */
void
xfer_schedule(struct xfer *x, uint64_t at)
{
	x->start_at = at;
	TAILQ_INSERT_TAIL(&x->b->active, x, entry);
}

/* Adds a request header to h's n, formatted into its line of buf. */
static void
xfer_add(char buf[][BRIDGE_HEADER_MAX], const char **h, size_t *n,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf[*n], BRIDGE_HEADER_MAX, fmt, ap);
	va_end(ap);
	h[*n] = buf[*n];
	h[++*n] = NULL;
}

/* Its request over http://. */
static int
xfer_start_http(struct xfer *x, const char *url, const char *const *h)
{
	struct httpc_req r;
	size_t at = strcspn(url + 7, "/") + 7;
	char base[512];

	memset(&r, 0, sizeof(r));
	snprintf(base, sizeof(base), "%.*s", (int)at, url);
	r.url = base;
	r.method = x->kind == XFER_POST ? "POST" : "GET";
	r.path = url + at;
	for (size_t i = 0; h[i] != NULL && i < HTTPC_HEADERS_MAX; i++)
		r.headers[i] = h[i];
	if (x->kind == XFER_POST) {
		r.body = x->body;
		r.body_len = strlen(x->body);
	}
	r.on_head = xfer_on_head;
	r.on_body = xfer_on_body;
	r.body_arg = x;
	r.connect_ms = BRIDGE_CONNECT_MS;
	return (x->hc = httpc_start(&r)) != NULL ? 0 : -1;
}

/* Starts x's transfer with what is known of the daemon and the session
 * now.  -1 when it could not start. */
int
xfer_start(struct xfer *x)
{
	struct bridge *b = x->b;
	char url[1024], buf[HTTPC_HEADERS_MAX][BRIDGE_HEADER_MAX];
	const char *h[HTTPC_HEADERS_MAX + 1] = { NULL };
	size_t n = 0;
	int rc;

	xfer_stop(x);
	if (x->kind == XFER_WAKE)
		snprintf(url, sizeof(url), "%s/api/wake?by=inbox&timeout_s=%d%s%s",
		    b->cl.url, BRIDGE_WAKE_S, b->agent != NULL ? "&agent=" : "",
		    b->agent != NULL ? b->agent : "");
	else
		snprintf(url, sizeof(url), "%s/mcp%s", b->cl.url, b->query);
	if (x->kind == XFER_WAKE) {
		/* Nothing of the session's: the wake is the agent's. */
	} else if (x->kind == XFER_POST) {
		xfer_add(buf, h, &n, "Content-Type: application/json");
		xfer_add(buf, h, &n, "Accept: application/json, "
		    "text/event-stream");
	} else {
		xfer_add(buf, h, &n, "Accept: text/event-stream");
		if (x->sse.id[0] != '\0')
			xfer_add(buf, h, &n, "Last-Event-ID: %s", x->sse.id);
	}
	if (b->cl.token != NULL)
		xfer_add(buf, h, &n, "Authorization: Bearer %s", b->cl.token);
	/* An initialize starts a session: it names none. */
	x->sent_session[0] = '\0';
	if (!x->initialize && x->kind != XFER_WAKE && b->session[0] != '\0') {
		snprintf(x->sent_session, sizeof(x->sent_session), "%s",
		    b->session);
		xfer_add(buf, h, &n, "MCP-Session-Id: %s", b->session);
	}
	if (!x->initialize && x->kind != XFER_WAKE && b->version[0] != '\0')
		xfer_add(buf, h, &n, "MCP-Protocol-Version: %s", b->version);
	if (strncmp(url, "http://", 7) == 0)
		rc = xfer_start_http(x, url, h);
	else
		rc = bridge_tls_start(x, url, h, xfer_on_head, xfer_on_body);
	/* The copies are the clients' now; these may hold the token. */
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

/* Reads serve.json again (the daemon may have restarted, on another
 * port, or loaded another certificate on SIGHUP).  1 when the daemon's
 * URL or pinned key changed, 0 when neither did, -1 when no daemon runs
 * now. */
int
bridge_refresh(struct bridge *b)
{
	char err[PAPO_ERR_LEN];
	struct client c;
	int changed;

	if (client_open(err, b->home, &c) == -1) {
		log_msg(LOG_DEBUG, "mcp: %s", err);
		return -1;
	}
	changed = strcmp(c.url, b->cl.url) != 0 ||
	    (c.pin == NULL) != (b->cl.pin == NULL) ||
	    (c.pin != NULL && strcmp(c.pin, b->cl.pin) != 0);
	client_close(&b->cl);
	b->cl = c;
	return changed;
}

/* Sends held messages in order while no barrier message is on its way. */
void
bridge_release(struct bridge *b)
{
	struct xfer *x;

	while (b->barrier == 0 && (x = TAILQ_FIRST(&b->held)) != NULL) {
		TAILQ_REMOVE(&b->held, x, entry);
		if (x == b->reinit_note)
			b->reinit_note = NULL;
		if (x->barrier) {
			x->counted = 1;
			b->barrier++;
		}
		xfer_schedule(x, 0);
	}
}

/* Stops the session's stream. */
void
bridge_stop_get(struct bridge *b)
{
	if (b->get != NULL)
		xfer_free(b->get, 1);
}

/* Opens the session's notification stream, anew. */
void
bridge_open_get(struct bridge *b)
{
	struct xfer *x;

	bridge_stop_get(b);
	if (b->eof)
		return;
	if ((x = xfer_new(b, XFER_GET)) == NULL) {
		log_msg(LOG_ERROR, "mcp: out of memory: no notifications");
		return;
	}
	b->get = x;
	b->get_logged = 0;
	xfer_schedule(x, 0);
}

/* A message of the bridge's own, for the caller to queue. */
static struct xfer *
bridge_own(struct bridge *b, cJSON *msg, int initialize)
{
	struct xfer *x;
	char *s;

	if ((x = xfer_new(b, XFER_POST)) == NULL)
		return NULL;
	if ((s = cJSON_PrintUnformatted(msg)) != NULL)
		x->body = strdup(s);
	cJSON_free(s);
	if (x->body == NULL || (initialize && (x->rid = cJSON_Duplicate(
	    cJSON_GetObjectItemCaseSensitive(msg, "id"), 1)) == NULL)) {
		xfer_free(x, 0);
		return NULL;
	}
	x->initialize = initialize;
	x->internal = 1;
	x->barrier = 1;
	return x;
}

/*
 * The daemon no longer knows the session (it restarted): makes a new one
 * with the client's own initialize and its initialized notification,
 * sent ahead of every held message.  -1 when there is nothing to make it
 * with, or a new session was made less than BRIDGE_REINIT_MS ago.
 */
int
bridge_renew(struct bridge *b)
{
	char id[32];
	struct xfer *xi = NULL, *xn = NULL;
	cJSON *init = NULL, *note = NULL;
	uint64_t now = bridge_now();
	int rc = -1;

	if (b->init_body == NULL || b->reiniting ||
	    (b->reinit_at != 0 && now - b->reinit_at < BRIDGE_REINIT_MS))
		return -1;
	log_msg(LOG_WARN, "mcp: papo serve no longer knows this session (did "
	    "it restart?): starting a new one");
	snprintf(id, sizeof(id), "papo-mcp-%u", ++b->reinits);
	if ((init = cJSON_Parse(b->init_body)) == NULL ||
	    !cJSON_IsObject(init) ||
	    !cJSON_ReplaceItemInObjectCaseSensitive(init, "id",
	    cJSON_CreateString(id)) ||
	    (note = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(note, "jsonrpc", "2.0") == NULL ||
	    cJSON_AddStringToObject(note, "method",
	    "notifications/initialized") == NULL ||
	    (xi = bridge_own(b, init, 1)) == NULL ||
	    (xn = bridge_own(b, note, 0)) == NULL) {
		log_msg(LOG_ERROR, "mcp: out of memory");
		goto out;
	}
	bridge_stop_get(b);
	b->session[0] = '\0';
	b->reinit_at = now;
	b->reiniting = 1;
	TAILQ_INSERT_HEAD(&b->held, xn, entry);
	TAILQ_INSERT_HEAD(&b->held, xi, entry);
	b->reinit_note = xn;
	xi = xn = NULL;
	bridge_release(b);
	rc = 0;
out:
	if (xi != NULL)
		xfer_free(xi, 0);
	if (xn != NULL)
		xfer_free(xn, 0);
	cJSON_Delete(init);
	cJSON_Delete(note);
	return rc;
}

/*
 * x was sent in a session the daemon no longer knows: sends it again
 * once in the new session (made here unless another message already
 * did).  -1 when it cannot be; x is then the caller's to fail.
 */
int
bridge_resend(struct bridge *b, struct xfer *x)
{
	if (x->renewed)
		return -1;
	if (!b->reiniting && strcmp(x->sent_session, b->session) == 0 &&
	    bridge_renew(b) == -1)
		return -1;
	TAILQ_REMOVE(&b->active, x, entry);
	xfer_stop(x);
	x->renewed = 1;
	/* After the bridge's own initialize and notification, when they
	 * still wait; else ahead of what came after x. */
	if (b->reinit_note != NULL)
		TAILQ_INSERT_AFTER(&b->held, b->reinit_note, x, entry);
	else
		TAILQ_INSERT_HEAD(&b->held, x, entry);
	xfer_settle(x);
	bridge_release(b);
	return 0;
}
