/*
 * bridge.c: "papo mcp" (bridge.h), the MCP stdio transport carried to the
 * daemon's Streamable HTTP endpoint /mcp (MCP 2025-11-25, "Transports").
 * It reads JSON-RPC messages, one a line, from stdin and POSTs each to
 * /mcp; every message that comes back (a JSON answer, or the events of an
 * SSE answer as they arrive) and every message of the session's GET
 * stream goes to stdout, one a line.  It finds the daemon through
 * serve.json (client.c) and starts one when none runs.
 *
 * Everything runs on the main thread: one curl_multi loop drives every
 * transfer at once, so that a wait of 55 s holds up nothing else, and
 * watches stdin.  No object is shared between threads, and stdout needs
 * no lock.  Order is kept where it matters: a message is not sent while
 * an initialize, a notification or a response sent before it is still
 * on its way (they answer at once), so the session exists before
 * anything uses it and notifications arrive in the order written;
 * requests run side by side.  When the daemon has forgotten the session
 * (it restarted), the bridge makes a new one with the client's own
 * initialize and sends the message again, since a stdio client cannot
 * know that its server changed.
 *
 * It must never write to stdout anything but whole JSON-RPC messages,
 * and it must never leave a request without an answer: when the daemon
 * cannot give one, the bridge writes a JSON-RPC error for it.
 */
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "lib/log.h"
#include "lib/units.h"
#include "node/node.h"
#include "server/cli/bridge.h"
#include "server/cli/client.h"
#include "server/cli/inbox.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_rpc.h"

#define BRIDGE_LOG "serve.log"   /* in $PAPO_HOME: a daemon started here */
#define BRIDGE_LINE_MAX (4 * 1024 * 1024)     /* a message, or an event */
#define BRIDGE_ANSWER_MAX (16 * 1024 * 1024)  /* a JSON answer's body */
#define BRIDGE_READ 65536                     /* bytes of stdin a read */
#define BRIDGE_SESSION_MAX 256                /* an MCP-Session-Id, NUL */
#define BRIDGE_VERSION_MAX 32                 /* a protocol version, NUL */
#define BRIDGE_EVENT_ID_MAX 256               /* an SSE event id, NUL */
#define BRIDGE_RETRY_MS 1000        /* SSE reconnection unless retry: */
#define BRIDGE_RETRY_MAX_MS 60000   /* the most a retry: field may ask */
#define BRIDGE_RESUME_MAX 100       /* resumptions of one answer stream */
#define BRIDGE_REINIT_MS 1000       /* at most one new session this often */
#define BRIDGE_START_MS 10000       /* for a daemon started here */
#define BRIDGE_DRAIN_MS 2000        /* for answers once stdin closed */
#define BRIDGE_DELETE_MS 1000       /* for the session's DELETE */
#define BRIDGE_POLL_MS 1000         /* the longest sleep of the loop */
#define BRIDGE_WAKE_S 55            /* a wake poll's length */


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

/* One message or stream, and its HTTP transfer while one runs. */
struct xfer {
	TAILQ_ENTRY(xfer) entry;
	struct bridge *b;
	enum xfer_kind kind;
	CURL *curl;           /* NULL while held or pending */
	struct curl_slist *headers;
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
	CURLM *multi;
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

static uint64_t
bridge_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / NS_PER_MS;
}

/* Appends n bytes; -1 when that would pass max bytes (or no memory). */
static int
bbuf_add(struct bbuf *bb, const char *data, size_t n, size_t max)
{
	size_t cap;
	char *p;

	if (n > max - bb->len)
		return -1;
	if (bb->len + n + 1 > bb->cap) {
		cap = bb->cap < 256 ? 256 : bb->cap;
		while (cap < bb->len + n + 1)
			cap *= 2;
		if ((p = realloc(bb->p, cap)) == NULL)
			return -1;
		bb->p = p;
		bb->cap = cap;
	}
	memcpy(bb->p + bb->len, data, n);
	bb->len += n;
	bb->p[bb->len] = '\0';
	return 0;
}

static void
bbuf_free(struct bbuf *bb)
{
	free(bb->p);
	memset(bb, 0, sizeof(*bb));
}

/* Writes one message as one line.  The text is kept as the daemon wrote
 * it (numbers exact) unless it spans lines; then it is printed again,
 * compact.  A failed write means the client has gone. */
static void
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
static void
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
static void
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

/* Visible ASCII only, as MCP-Session-Id must be, and as anything put
 * back into a header must be. */
static int
bridge_token_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n >= max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

static void xfer_settle(struct xfer *);

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
	/* Not from here: this runs inside a libcurl callback, where no
	 * other transfer may be stopped or started. */
	b->get_wanted = 1;
}

/* One message from the daemon, on x's stream or in its body. */
static void
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

static void
sse_dispatch(struct bridge *b, struct xfer *x)
{
	struct sse *s = &x->sse;

	if (s->hasdata && !s->broken && !s->othertype && s->data.len > 0)
		bridge_message(b, x, s->data.p);
	s->data.len = 0;
	if (s->data.p != NULL)
		s->data.p[0] = '\0';
	s->hasdata = s->broken = s->othertype = 0;
}

/* One line of an event stream: "field: value", or blank (dispatch), or
 * ":" a comment. */
static void
sse_line(struct bridge *b, struct xfer *x)
{
	struct sse *s = &x->sse;
	const char *l = s->line.p != NULL ? s->line.p : "";
	const char *v;
	size_t n, vn;
	char *end;
	long r;

	if (s->toolong) {
		log_msg(LOG_WARN, "mcp: a line from papo serve is over %d bytes: "
		    "its event is dropped", BRIDGE_LINE_MAX);
		s->broken = 1;
		return;
	}
	if (s->line.len == 0) {
		sse_dispatch(b, x);
		return;
	}
	if (l[0] == ':')
		return;
	if ((v = memchr(l, ':', s->line.len)) == NULL) {
		n = s->line.len;
		v = l + n;
	} else {
		n = (size_t)(v - l);
		if (*++v == ' ')
			v++;
	}
	vn = s->line.len - (size_t)(v - l);
	if (n == 4 && memcmp(l, "data", 4) == 0) {
		if ((s->hasdata && bbuf_add(&s->data, "\n", 1,
		    BRIDGE_LINE_MAX) == -1) ||
		    bbuf_add(&s->data, v, vn, BRIDGE_LINE_MAX) == -1)
			s->broken = 1;
		s->hasdata = 1;
	} else if (n == 2 && memcmp(l, "id", 2) == 0) {
		/* An id the bridge could not send back is of no use. */
		if (vn == 0 || bridge_token_ok(v, vn, sizeof(s->id))) {
			memcpy(s->id, v, vn);
			s->id[vn] = '\0';
			s->gotid = 1;
		}
	} else if (n == 5 && memcmp(l, "event", 5) == 0) {
		s->othertype = !(vn == 0 || (vn == 7 &&
		    memcmp(v, "message", 7) == 0));
	} else if (n == 5 && memcmp(l, "retry", 5) == 0) {
		errno = 0;
		r = strtol(v, &end, 10);
		if (vn > 0 && v[0] >= '0' && v[0] <= '9' && *end == '\0' &&
		    errno == 0)
			s->retry = r > BRIDGE_RETRY_MAX_MS ? BRIDGE_RETRY_MAX_MS : r;
	}
}

static void
sse_feed(struct bridge *b, struct xfer *x, const char *data, size_t n)
{
	struct sse *s = &x->sse;
	size_t i = 0, j;

	while (i < n) {
		if (data[i] == '\r' || data[i] == '\n') {
			if (data[i] == '\n' && s->cr) {
				s->cr = 0;
				i++;
				continue;
			}
			s->cr = data[i] == '\r';
			sse_line(b, x);
			s->line.len = 0;
			s->toolong = 0;
			i++;
			continue;
		}
		s->cr = 0;
		for (j = i; j < n && data[j] != '\r' && data[j] != '\n'; j++)
			;
		if (!s->toolong && bbuf_add(&s->line, data + i, j - i,
		    BRIDGE_LINE_MAX) == -1)
			s->toolong = 1;
		i = j;
	}
}

/* Forgets the connection's part of a stream, keeping the last event id
 * and the retry delay for the next connection. */
static void
sse_reset(struct sse *s)
{
	bbuf_free(&s->line);
	bbuf_free(&s->data);
	s->toolong = s->cr = s->hasdata = s->broken = s->othertype = 0;
	s->gotid = 0;
}

static size_t
xfer_discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

static size_t
xfer_header(char *data, size_t size, size_t n, void *arg)
{
	static const char name[] = "mcp-session-id:";
	struct xfer *x = arg;
	size_t len = size * n;
	const char *v, *end;

	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0)
		x->session[0] = '\0';
	if (len > sizeof(name) - 1 &&
	    strncasecmp(data, name, sizeof(name) - 1) == 0) {
		v = data + sizeof(name) - 1;
		end = data + len;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
		    end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (bridge_token_ok(v, (size_t)(end - v), sizeof(x->session))) {
			memcpy(x->session, v, (size_t)(end - v));
			x->session[end - v] = '\0';
		} else
			log_msg(LOG_WARN, "mcp: papo serve sent an invalid "
			    "MCP-Session-Id: ignored");
	}
	return len;
}

static size_t
xfer_write(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	const char *ct = NULL;
	long status = 0;

	if (x->mode == MODE_UNKNOWN) {
		curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(x->curl, CURLINFO_CONTENT_TYPE, &ct);
		x->mode = status == 200 && ct != NULL &&
		    strncasecmp(ct, "text/event-stream", 17) == 0 ?
		    MODE_SSE : MODE_BODY;
	}
	if (x->mode == MODE_SSE) {
		sse_feed(x->b, x, data, len);
		return x->b->outbroken ? 0 : len;
	}
	if (bbuf_add(&x->answer, data, len, BRIDGE_ANSWER_MAX) == -1) {
		x->over = 1;
		return 0;
	}
	return len;
}

static struct xfer *
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
static void
xfer_stop(struct xfer *x)
{
	if (x->curl != NULL) {
		curl_multi_remove_handle(x->b->multi, x->curl);
		curl_easy_cleanup(x->curl);
		x->curl = NULL;
	}
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	x->mode = MODE_UNKNOWN;
	x->over = 0;
	x->session[0] = '\0';
	bbuf_free(&x->answer);
	sse_reset(&x->sse);
}

/* Lets later messages go once a barrier message is answered (or has
 * failed). */
static void bridge_release(struct bridge *);

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
static void
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
static void
xfer_schedule(struct xfer *x, uint64_t at)
{
	x->start_at = at;
	TAILQ_INSERT_TAIL(&x->b->active, x, entry);
}

/* Adds a request header to x's list.  The formatted copy is wiped: it
 * may hold the token. */
static int
xfer_add(struct xfer *x, const char *fmt, ...)
{
	char h[BRIDGE_SESSION_MAX + 300];
	struct curl_slist *l;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h, sizeof(h), fmt, ap);
	va_end(ap);
	l = curl_slist_append(x->headers, h);
	explicit_bzero(h, sizeof(h));
	if (l == NULL)
		return -1;
	x->headers = l;
	return 0;
}

/* Starts x's transfer with what is known of the daemon and the session
 * now.  -1 when libcurl could not. */
static int
xfer_start(struct xfer *x)
{
	struct bridge *b = x->b;
	char url[1024];
	const char *last = NULL;
	int rc = 0;

	xfer_stop(x);
	if ((x->curl = curl_easy_init()) == NULL)
		return -1;
	if (x->kind == XFER_WAKE)
		snprintf(url, sizeof(url), "%s/api/wake?by=inbox&timeout_s=%d%s%s",
		    b->cl.url, BRIDGE_WAKE_S, b->agent != NULL ? "&agent=" : "",
		    b->agent != NULL ? b->agent : "");
	else
		snprintf(url, sizeof(url), "%s/mcp%s", b->cl.url, b->query);
	if (x->kind == XFER_WAKE) {
		/* Nothing of the session's: the wake is the agent's. */
	} else if (x->kind == XFER_POST) {
		rc |= xfer_add(x, "Content-Type: application/json");
		rc |= xfer_add(x, "Accept: application/json, text/event-stream");
		/* A large body must not wait for "100 Continue". */
		rc |= xfer_add(x, "Expect:");
	} else {
		rc |= xfer_add(x, "Accept: text/event-stream");
		last = x->sse.id[0] != '\0' ? x->sse.id : NULL;
	}
	if (last != NULL)
		rc |= xfer_add(x, "Last-Event-ID: %s", last);
	if (b->cl.token != NULL)
		rc |= xfer_add(x, "Authorization: Bearer %s", b->cl.token);
	/* An initialize starts a session: it names none. */
	x->sent_session[0] = '\0';
	if (!x->initialize && x->kind != XFER_WAKE && b->session[0] != '\0') {
		snprintf(x->sent_session, sizeof(x->sent_session), "%s",
		    b->session);
		rc |= xfer_add(x, "MCP-Session-Id: %s", b->session);
	}
	if (!x->initialize && x->kind != XFER_WAKE && b->version[0] != '\0')
		rc |= xfer_add(x, "MCP-Protocol-Version: %s", b->version);
	if (rc != 0)
		return -1;
	curl_easy_setopt(x->curl, CURLOPT_URL, url);
	curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, x->headers);
	client_setup(&b->cl, x->curl);
	curl_easy_setopt(x->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->curl, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(x->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(x->curl, CURLOPT_HEADERFUNCTION, xfer_header);
	curl_easy_setopt(x->curl, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->curl, CURLOPT_WRITEFUNCTION, xfer_write);
	curl_easy_setopt(x->curl, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->curl, CURLOPT_PRIVATE, x);
	if (x->kind == XFER_POST) {
		curl_easy_setopt(x->curl, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(x->curl, CURLOPT_POSTFIELDSIZE,
		    (long)strlen(x->body));
	}
	if (curl_multi_add_handle(b->multi, x->curl) != CURLM_OK)
		return -1;
	return 0;
}

/* Reads serve.json again (the daemon may have restarted, on another
 * port, or loaded another certificate on SIGHUP).  1 when the daemon's
 * URL or pinned key changed, 0 when neither did, -1 when no daemon runs
 * now. */
static int
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
static void
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
static void
bridge_stop_get(struct bridge *b)
{
	if (b->get != NULL)
		xfer_free(b->get, 1);
}

/* Opens the session's notification stream, anew. */
static void
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
static int
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
static int
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

/* The message of an error answer: a JSON-RPC error's, or the API's
 * {"error": ...}, or none. */
static const char *
bridge_reason(const cJSON *o)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error"), *m;

	if (cJSON_IsString(e))
		return e->valuestring;
	m = cJSON_GetObjectItemCaseSensitive(e, "message");
	return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* A POST (or its resumed stream) is over: its answer, or why none. */
static void
bridge_post_done(struct bridge *b, struct xfer *x, CURLcode cc, long status)
{
	const char *why;
	cJSON *o = NULL;
	int rpc;

	if (x->mode == MODE_SSE) {
		if (x->rid == NULL || x->answered)
			goto done;
		/* The daemon may end an answer stream early once it has
		 * given an event id; the rest is fetched with that id. */
		if (x->sse.id[0] != '\0' && x->resumes < BRIDGE_RESUME_MAX &&
		    !b->outbroken) {
			TAILQ_REMOVE(&b->active, x, entry);
			x->resumes++;
			x->kind = XFER_RESUME;
			xfer_stop(x);
			xfer_schedule(x, bridge_now() + (uint64_t)(x->sse.retry >= 0 ?
			    x->sse.retry : BRIDGE_RETRY_MS));
			return;
		}
		bridge_fail(b, x, "the answer stream of papo serve ended before "
		    "the answer");
		goto done;
	}
	if (cc != CURLE_OK && !x->over) {
		/* A key that does not match: the daemon has another
		 * certificate, which serve.json names.  The notification
		 * stream may have read it already (then nothing changes
		 * here), so the retry does not wait for a change. */
		if (!x->moved && ((cc == CURLE_COULDNT_CONNECT &&
		    bridge_refresh(b) == 1) ||
		    (cc == CURLE_SSL_PINNEDPUBKEYNOTMATCH &&
		    bridge_refresh(b) != -1))) {
			log_msg(LOG_INFO, "mcp: papo serve is now at %s",
			    b->cl.url);
			x->moved = 1;
			TAILQ_REMOVE(&b->active, x, entry);
			xfer_stop(x);
			xfer_schedule(x, 0);
			return;
		}
		bridge_fail(b, x, "cannot reach papo serve at %s: %s", b->cl.url,
		    curl_easy_strerror(cc));
		goto done;
	}
	if (x->over) {
		bridge_fail(b, x, "the answer of papo serve is over %d bytes",
		    BRIDGE_ANSWER_MAX);
		goto done;
	}
	if (status == 202) {
		if (x->rid != NULL)
			bridge_fail(b, x, "papo serve accepted the request "
			    "without answering it");
		goto done;
	}
	if (status == 200 && x->kind == XFER_POST) {
		if (x->answer.p != NULL)
			bridge_message(b, x, x->answer.p);
		if (x->rid != NULL && !x->answered)
			bridge_fail(b, x, "papo serve's answer did not carry the "
			    "response");
		goto done;
	}
	if (status == 404 && x->kind == XFER_POST && !x->initialize &&
	    x->sent_session[0] != '\0' && bridge_resend(b, x) == 0)
		return;
	o = x->answer.p != NULL ? cJSON_Parse(x->answer.p) : NULL;
	rpc = cJSON_IsObject(o) &&
	    cJSON_GetObjectItemCaseSensitive(o, "jsonrpc") != NULL &&
	    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "error"));
	why = bridge_reason(o);
	if (rpc && x->rid != NULL && !x->internal && !x->answered) {
		/* The daemon may not have read the id (a body it refused);
		 * the client still waits for an answer with it. */
		if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "id")) ||
		    cJSON_GetObjectItemCaseSensitive(o, "id") == NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
			cJSON_AddItemToObject(o, "id", cJSON_Duplicate(x->rid, 1));
			bridge_print(b, NULL, o);
		} else
			bridge_print(b, x->answer.p, o);
		x->answered = 1;
		log_msg(LOG_DEBUG, "mcp: papo serve answered HTTP %ld: %s",
		    status, why != NULL ? why : "");
	} else if (why != NULL)
		bridge_fail(b, x, "papo serve answered HTTP %ld: %s", status, why);
	else
		bridge_fail(b, x, "papo serve answered HTTP %ld", status);
done:
	cJSON_Delete(o);
	xfer_free(x, 1);
}

/* The session's stream is over: come back after the retry delay, unless
 * the session or the stream is gone for good. */
static void
bridge_get_done(struct bridge *b, struct xfer *x, CURLcode cc, long status)
{
	uint64_t delay = (uint64_t)(x->sse.retry >= 0 ? x->sse.retry :
	    BRIDGE_RETRY_MS);
	const char *why;
	cJSON *o;

	if (x->mode != MODE_SSE && status != 0) {
		o = x->answer.p != NULL ? cJSON_Parse(x->answer.p) : NULL;
		why = bridge_reason(o);
		if (status == 404 && x->sent_session[0] != '\0' &&
		    strcmp(x->sent_session, b->session) == 0) {
			cJSON_Delete(o);
			xfer_free(x, 1);
			if (bridge_renew(b) == -1)
				log_msg(LOG_WARN, "mcp: papo serve no longer knows "
				    "this session: no more notifications until "
				    "the client initializes again");
			return;
		}
		/* A busy or failing daemon may do better soon; anything
		 * else will not change by asking again. */
		if (status >= 500 || status == 429) {
			cJSON_Delete(o);
			goto again;
		}
		if (status == 405)
			log_msg(LOG_DEBUG, "mcp: papo serve has no stream for "
			    "this session");
		else if (status == 404)
			log_msg(LOG_WARN, "mcp: papo serve no longer knows this "
			    "session: no more notifications until the client "
			    "initializes again");
		else
			log_msg(LOG_WARN, "mcp: papo serve refused the "
			    "notification stream: HTTP %ld%s%s", status,
			    why != NULL ? ": " : "", why != NULL ? why : "");
		cJSON_Delete(o);
		xfer_free(x, 1);
		return;
	}
	if (x->mode == MODE_SSE)
		b->get_logged = 0;
	else if (!b->get_logged) {
		log_msg(LOG_WARN, "mcp: the notification stream from papo serve "
		    "failed (%s): trying again", curl_easy_strerror(cc));
		b->get_logged = 1;
	}
again:
	TAILQ_REMOVE(&b->active, x, entry);
	xfer_stop(x);
	xfer_schedule(x, bridge_now() + delay);
}

/*
 * The wake poll answered: when the agent needs waking, a line goes into
 * Claude Code's inbox saying who wrote and to call wait (the daemon
 * answers once per burst, and never while a wait of the agent is
 * pending).  Then the next poll; a daemon away is asked again later,
 * one without /api/wake (older) never again.
 */
static void
bridge_wake_done(struct bridge *b, struct xfer *x, CURLcode cc, long status)
{
	cJSON *o = status == 200 && x->answer.p != NULL ?
	    cJSON_Parse(x->answer.p) : NULL;
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text");
	char err[PAPO_ERR_LEN];
	uint64_t delay = 0;

	if (status == 404 || status == 405) {
		log_msg(LOG_WARN, "mcp: papo serve cannot say when to wake "
		    "the agent (an older daemon?): no wakes");
		cJSON_Delete(o);
		b->wake = NULL;
		xfer_free(x, 1);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "wake")) &&
	    cJSON_IsString(text)) {
		if (inbox_post(err, b->inbox, b->inbox_token,
		    text->valuestring) == -1)
			log_msg(LOG_WARN, "mcp: %s", err);
		else
			log_msg(LOG_DEBUG, "mcp: woke the session: %s",
			    text->valuestring);
	} else if (status != 200) {
		if (cc != CURLE_OK || status >= 500)
			log_msg(LOG_DEBUG, "mcp: wake poll failed (%s, HTTP %ld)",
			    curl_easy_strerror(cc), status);
		delay = BRIDGE_RETRY_MS;
	}
	cJSON_Delete(o);
	TAILQ_REMOVE(&b->active, x, entry);
	xfer_stop(x);
	xfer_schedule(x, bridge_now() + delay);
}

static void
bridge_done(struct bridge *b, CURL *curl, CURLcode cc)
{
	struct xfer *x;
	void *priv = NULL;
	long status = 0;

	curl_easy_getinfo(curl, CURLINFO_PRIVATE, &priv);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if ((x = priv) == NULL)
		return;
	if (x->kind == XFER_GET)
		bridge_get_done(b, x, cc, status);
	else if (x->kind == XFER_WAKE)
		bridge_wake_done(b, x, cc, status);
	else
		bridge_post_done(b, x, cc, status);
}

/* Starts what is due in b->active; *timeout becomes the wait until the
 * next one. */
static void
bridge_start_due(struct bridge *b, int *timeout)
{
	struct xfer *x, *next;
	uint64_t now = bridge_now();

	for (x = TAILQ_FIRST(&b->active); x != NULL; x = next) {
		next = TAILQ_NEXT(x, entry);
		if (x->curl != NULL)
			continue;
		if (x->start_at > now) {
			if (x->start_at - now < (uint64_t)*timeout)
				*timeout = (int)(x->start_at - now);
			continue;
		}
		/* A stream comes back to wherever the daemon is now. */
		if (x->kind != XFER_POST && x->start_at != 0 &&
		    bridge_refresh(b) == -1) {
			if (x->kind == XFER_GET || x->kind == XFER_WAKE) {
				x->start_at = now + BRIDGE_RETRY_MS;
				continue;
			}
			bridge_fail(b, x, "papo serve is gone");
			xfer_free(x, 1);
			continue;
		}
		if (xfer_start(x) == -1) {
			bridge_fail(b, x, "cannot start a transfer with libcurl");
			xfer_free(x, 1);
		}
	}
}

/* The revision a message names in params._meta, or NULL (2025's do
 * not: theirs is the session's). */
static const char *
bridge_modern(const cJSON *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o,
	    "params"), "_meta"), "io.modelcontextprotocol/protocolVersion");

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* -32022, unsupported protocol version, with what is supported: the
 * error 2026-07-28 gives a client to fall back on. */
static void
bridge_unsupported(struct bridge *b, const cJSON *o, const cJSON *id)
{
	static const char *const versions[] = { "2025-11-25", "2025-06-18",
	    "2025-03-26" };
	cJSON *r = cJSON_CreateObject(), *e, *d;

	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, 1));
	e = cJSON_AddObjectToObject(r, "error");
	cJSON_AddNumberToObject(e, "code", MCP_UNSUPPORTED_VERSION);
	cJSON_AddStringToObject(e, "message", "papo mcp speaks the 2025 "
	    "revisions over stdio: begin with initialize");
	d = cJSON_AddObjectToObject(e, "data");
	cJSON_AddItemToObject(d, "supported", cJSON_CreateStringArray(versions,
	    3));
	cJSON_AddStringToObject(d, "requested", bridge_modern(o));
	bridge_print(b, NULL, r);
	cJSON_Delete(r);
}

/* One line from stdin: a JSON-RPC message for the daemon. */
static void
bridge_submit(struct bridge *b, char *line, size_t n)
{
	const cJSON *method, *id;
	struct xfer *x = NULL;
	cJSON *o;

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' ||
	    line[n - 1] == '\t'))
		n--;
	line[n] = '\0';
	if (strspn(line, " \t") == n)
		return;
	/* The length counts the NUL: nothing may follow the message. */
	if ((o = cJSON_ParseWithLengthOpts(line, n + 1, NULL, 1)) == NULL) {
		bridge_error(b, NULL, JSONRPC_PARSE_ERROR,
		    "papo mcp: a line on stdin is not JSON");
		return;
	}
	method = cJSON_GetObjectItemCaseSensitive(o, "method");
	id = cJSON_GetObjectItemCaseSensitive(o, "id");
	/* Over stdio papo speaks the 2025 revisions, whose first request is
	 * initialize: a request of a revision without sessions (2026-07-28:
	 * its version in params._meta, as Claude Code's server/discover
	 * probe) is told so, and the client goes on with initialize. */
	if (cJSON_IsString(method) && id != NULL && bridge_modern(o)) {
		bridge_unsupported(b, o, id);
		goto out;
	}
	if ((x = xfer_new(b, XFER_POST)) == NULL ||
	    (x->body = strdup(line)) == NULL ||
	    (cJSON_IsString(method) && id != NULL &&
	    (x->rid = cJSON_Duplicate(id, 1)) == NULL)) {
		bridge_error(b, id, JSONRPC_INTERNAL_ERROR,
		    "papo mcp: out of memory");
		if (x != NULL)
			free(x->body);
		free(x);
		goto out;
	}
	x->initialize = x->rid != NULL &&
	    strcmp(method->valuestring, "initialize") == 0;
	if (x->initialize && cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(o, "params"), "capabilities"),
	    "experimental"), "claude/channel") != NULL)
		b->client_channels = 1;
	/* Requests may take long and run side by side; anything else
	 * answers at once, and what follows it waits for it. */
	x->barrier = x->rid == NULL || x->initialize;
	TAILQ_INSERT_TAIL(&b->held, x, entry);
	bridge_release(b);
out:
	cJSON_Delete(o);
}

/* Reads what stdin has, and sends every whole line. */
static void
bridge_read(struct bridge *b)
{
	char buf[BRIDGE_READ];
	ssize_t n;
	size_t i = 0, j;

	if ((n = read(STDIN_FILENO, buf, sizeof(buf))) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		log_msg(LOG_WARN, "mcp: cannot read stdin: %s", strerror(errno));
		n = 0;
	}
	if (n == 0) {
		b->eof = 1;
		if (b->in.len > 0 && !b->in_toolong)
			bridge_submit(b, b->in.p, b->in.len);
		bbuf_free(&b->in);
		return;
	}
	while (i < (size_t)n) {
		for (j = i; j < (size_t)n && buf[j] != '\n'; j++)
			;
		if (!b->in_toolong && bbuf_add(&b->in, buf + i, j - i,
		    BRIDGE_LINE_MAX) == -1) {
			b->in_toolong = 1;
			bbuf_free(&b->in);
		}
		if (j == (size_t)n)
			break;
		if (b->in_toolong)
			bridge_error(b, NULL, JSONRPC_INVALID_REQUEST,
			    "papo mcp: a message on stdin is over 4 MiB");
		else if (b->in.len > 0)
			bridge_submit(b, b->in.p, b->in.len);
		b->in.len = 0;
		b->in_toolong = 0;
		i = j + 1;
	}
}

/* Is a message still on its way (held, or a POST or its stream)? */
static int
bridge_busy(const struct bridge *b)
{
	const struct xfer *x;

	if (!TAILQ_EMPTY(&b->held))
		return 1;
	TAILQ_FOREACH(x, &b->active, entry)
		if (x->kind != XFER_GET)
			return 1;
	return 0;
}

static void
bridge_loop(struct bridge *b)
{
	struct curl_waitfd wfd;
	struct pollfd pfd;
	struct CURLMsg *m;
	uint64_t now, drain_until = 0;
	int timeout, nfd, numfds, running, left;

	for (;;) {
		if (b->get_wanted) {
			b->get_wanted = 0;
			bridge_open_get(b);
		}
		timeout = BRIDGE_POLL_MS;
		bridge_start_due(b, &timeout);
		if (b->outbroken)
			break;
		if (b->eof) {
			now = bridge_now();
			if (drain_until == 0) {
				drain_until = now + BRIDGE_DRAIN_MS;
				bridge_stop_get(b);
				if (b->wake != NULL)
					xfer_free(b->wake, 1);
			}
			if (!bridge_busy(b) || now >= drain_until)
				break;
			if (drain_until - now < (uint64_t)timeout)
				timeout = (int)(drain_until - now);
		}
		nfd = 0;
		if (!b->eof) {
			wfd.fd = STDIN_FILENO;
			wfd.events = CURL_WAIT_POLLIN;
			wfd.revents = 0;
			nfd = 1;
		}
		if (curl_multi_poll(b->multi, nfd ? &wfd : NULL, (unsigned)nfd,
		    timeout, &numfds) != CURLM_OK) {
			log_msg(LOG_ERROR, "mcp: libcurl cannot wait: stopping");
			break;
		}
		/* libcurl does not pass POLLHUP on (a closed pipe): ask
		 * poll itself. */
		pfd.fd = STDIN_FILENO;
		pfd.events = POLLIN;
		if (nfd && poll(&pfd, 1, 0) > 0)
			bridge_read(b);
		curl_multi_perform(b->multi, &running);
		while ((m = curl_multi_info_read(b->multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE)
				bridge_done(b, m->easy_handle, m->data.result);
	}
}

/* Ends the session on the daemon (best effort: it forgets idle ones). */
static void
bridge_delete(struct bridge *b)
{
	char url[1024], h[BRIDGE_SESSION_MAX + 300];
	struct curl_slist *headers = NULL, *l;
	CURL *curl;

	if (b->session[0] == '\0' || (curl = curl_easy_init()) == NULL)
		return;
	snprintf(url, sizeof(url), "%s/mcp%s", b->cl.url, b->channels ?
	    "?channels=on" : "");
	snprintf(h, sizeof(h), "MCP-Session-Id: %s", b->session);
	headers = curl_slist_append(headers, h);
	if (headers != NULL && b->version[0] != '\0') {
		snprintf(h, sizeof(h), "MCP-Protocol-Version: %s", b->version);
		if ((l = curl_slist_append(headers, h)) != NULL)
			headers = l;
	}
	if (headers != NULL && b->cl.token != NULL) {
		snprintf(h, sizeof(h), "Authorization: Bearer %s", b->cl.token);
		if ((l = curl_slist_append(headers, h)) != NULL)
			headers = l;
		explicit_bzero(h, sizeof(h));
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	client_setup(&b->cl, curl);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)BRIDGE_DELETE_MS);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, xfer_discard);
	curl_easy_perform(curl);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
}

/* In the daemon-to-be: closes every descriptor but stdin, stdout and
 * stderr, so that it holds nothing of the process that started it (a
 * client's pipe kept open would never close). */
static void
bridge_close_from3(void)
{
	struct dirent *d;
	DIR *dir;
	int fd, self;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return;
	self = dirfd(dir);
	while ((d = readdir(dir)) != NULL) {
		fd = atoi(d->d_name);
		if (fd > STDERR_FILENO && fd != self)
			close(fd);
	}
	closedir(dir);
}

/*
 * Starts "papo serve" for home, detached: in a session of its own, stdin
 * /dev/null, stdout and stderr appended to home/serve.log, through a
 * middle process that leaves at once, so that the daemon is nobody's
 * child here and outlives papo mcp.  The daemon's pid goes to *pid and
 * the log's size before it to *logoff.
 */
static int
bridge_spawn(char err[PAPO_ERR_LEN], const char *home, pid_t *pid,
    off_t *logoff)
{
	static const char failed[] = "papo: cannot run papo serve\n";
	char *argv[] = { "papo", "serve", NULL };
	char log[4096];
	int fds[2] = { -1, -1 }, logfd = -1, nullfd = -1, rc = -1, status;
	pid_t mid, child = -1;
	struct stat st;
	ssize_t n;

	/* serve makes home private itself; the log must have a place. */
	if (mkdir(home, 0700) == -1 && errno != EEXIST) {
		snprintf(err, PAPO_ERR_LEN, "cannot make %s: %s", home,
		    strerror(errno));
		goto out;
	}
	snprintf(log, sizeof(log), "%s/%s", home, BRIDGE_LOG);
	if ((logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) == -1 || fstat(logfd, &st) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot open %s: %s", log,
		    strerror(errno));
		goto out;
	}
	*logoff = st.st_size;
	if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    pipe(fds) == -1 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: %s",
		    strerror(errno));
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	if ((mid = fork()) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: %s",
		    strerror(errno));
		goto out;
	}
	if (mid == 0) {
		sigset_t none;

		setsid();
		if ((child = fork()) == 0) {
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			signal(SIGPIPE, SIG_DFL);
			if (dup2(nullfd, STDIN_FILENO) == -1 ||
			    dup2(logfd, STDOUT_FILENO) == -1 ||
			    dup2(logfd, STDERR_FILENO) == -1)
				_exit(127);
			bridge_close_from3();
			/* The very binary running now, wherever it lies. */
			execv("/proc/self/exe", argv);
			(void)!write(STDERR_FILENO, failed, sizeof(failed) - 1);
			_exit(127);
		}
		(void)!write(fds[1], &child, sizeof(child));
		_exit(child == -1);
	}
	close(fds[1]);
	fds[1] = -1;
	while ((n = read(fds[0], &child, sizeof(child))) == -1 && errno == EINTR)
		;
	while (waitpid(mid, &status, 0) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(child) || child <= 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: fork "
		    "failed");
		goto out;
	}
	*pid = child;
	rc = 0;
out:
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	if (logfd != -1)
		close(logfd);
	if (nullfd != -1)
		close(nullfd);
	return rc;
}

/* The last line the daemon wrote to serve.log after off, without its
 * "papo: " prefix; "" when none. */
static void
bridge_log_tail(const char *home, off_t off, char *out, size_t outlen)
{
	char path[4096], buf[4096], *p, *end;
	struct stat st;
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", home, BRIDGE_LOG);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > off) {
		if (st.st_size - off > (off_t)sizeof(buf) - 1)
			off = st.st_size - (off_t)sizeof(buf) + 1;
		if ((n = pread(fd, buf, sizeof(buf) - 1, off)) > 0) {
			buf[n] = '\0';
			end = buf + n;
			while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
				*--end = '\0';
			p = strrchr(buf, '\n');
			p = p != NULL ? p + 1 : buf;
			if (strncmp(p, "papo: ", 6) == 0)
				p += 6;
			snprintf(out, outlen, "%s", p);
		}
	}
	close(fd);
}

/* Waits for the daemon just started to write serve.json. */
static int
bridge_wait(char err[PAPO_ERR_LEN], struct bridge *b, pid_t pid, off_t off)
{
	char e[PAPO_ERR_LEN], why[160];
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	uint64_t until = bridge_now() + BRIDGE_START_MS;
	int dead = 0;

	for (;;) {
		if (client_open(e, b->home, &b->cl) == 0)
			return 0;
		dead = kill(pid, 0) == -1 && errno == ESRCH;
		if (dead || bridge_now() >= until)
			break;
		nanosleep(&tick, NULL);
	}
	/* It may have lost the lock to a daemon that came up meanwhile. */
	if (client_open(e, b->home, &b->cl) == 0)
		return 0;
	bridge_log_tail(b->home, off, why, sizeof(why));
	snprintf(err, PAPO_ERR_LEN, "papo serve %s%s%s (see %s/serve.log)",
	    dead ? "did not start" : "did not come up in 10 s",
	    why[0] != '\0' ? ": " : "", why, b->home);
	return -1;
}

/*
 * Whether papo serve may be started for home: it holds a room, or
 * PAPO_INVITE names one to join, or new_room asks for a room to be made.
 * Otherwise serve would make a room named after the login, with this
 * member alone in it, because an MCP client was started: -1 with err
 * saying what to run instead, and nothing made.
 */
static int
bridge_room_ok(char err[PAPO_ERR_LEN], const char *home, int new_room)
{
	const char *invite = getenv("PAPO_INVITE");
	char path[4096];

	snprintf(path, sizeof(path), "%s/room.json", home);
	if (new_room || access(path, F_OK) == 0 ||
	    (invite != NULL && invite[0] != '\0'))
		return 0;
	if (errno != ENOENT) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
		    strerror(errno));
		return -1;
	}
	snprintf(err, PAPO_ERR_LEN, "%s has no room, and no papo serve runs: "
	    "make a room with 'papo new' or join one with 'papo join INVITE', "
	    "then start papo mcp again ('papo setup CLIENT' adds it to an "
	    "agent); 'papo mcp --new-room' makes a room of your own instead",
	    home);
	return -1;
}

/* Adds name=value to b's query, value percent-encoded (a room's name
 * may hold any UTF-8); -1 when it does not fit. */
static int
bridge_query_add(struct bridge *b, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(b->query);
	int k = snprintf(b->query + len, sizeof(b->query) - len, "%c%s=",
	    len == 0 ? '?' : '&', name);

	if (k < 0 || (size_t)k >= sizeof(b->query) - len)
		return -1;
	len += (size_t)k;
	for (const unsigned char *p = (const unsigned char *)value; *p != '\0';
	    p++) {
		if (len + 4 > sizeof(b->query))
			return -1;
		if (strchr("-._~", *p) != NULL || (*p < 0x80 && isalnum(*p)))
			b->query[len++] = (char)*p;
		else {
			b->query[len++] = '%';
			b->query[len++] = hex[*p >> 4];
			b->query[len++] = hex[*p & 0xf];
		}
	}
	b->query[len] = '\0';
	return 0;
}

int
bridge_run(char err[PAPO_ERR_LEN], const char *home, int channels,
    const char *agent, const char *room, int new_room)
{
	struct bridge b;
	char e[PAPO_ERR_LEN];
	struct xfer *x;
	off_t off = 0;
	pid_t pid;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	b.home = home;
	b.channels = channels;
	b.agent = agent;
	if (agent != NULL && !mcp_agent_name_ok(agent)) {
		snprintf(err, PAPO_ERR_LEN, "--agent takes 1 to 64 letters, "
		    "digits, '.', '_' or '-'");
		return -1;
	}
	if ((channels && bridge_query_add(&b, "channels", "on") == -1) ||
	    (agent != NULL && bridge_query_add(&b, "agent", agent) == -1) ||
	    (room != NULL && bridge_query_add(&b, "room", room) == -1)) {
		snprintf(err, PAPO_ERR_LEN, "--room is too long: a room's name "
		    "or id");
		return -1;
	}
	b.inbox = getenv("CLAUDE_CODE_MESSAGING_SOCKET");
	b.inbox_token = getenv("CLAUDE_CODE_MESSAGING_TOKEN");
	if (b.inbox != NULL && b.inbox[0] == '\0')
		b.inbox = NULL;
	TAILQ_INIT(&b.held);
	TAILQ_INIT(&b.active);
	/* A client that goes away shows as a failed write, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		return -1;
	}
	if (client_open(e, home, &b.cl) == -1) {
		if (bridge_room_ok(err, home, new_room) == -1 ||
		    bridge_spawn(err, home, &pid, &off) == -1 ||
		    bridge_wait(err, &b, pid, off) == -1)
			goto out;
		log_msg(LOG_INFO, "mcp: started papo serve (pid %ld) at %s; its "
		    "output goes to %s/serve.log", b.cl.pid, b.cl.url, home);
	}
	if ((b.multi = curl_multi_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		goto out;
	}
	if (b.inbox != NULL) {
		if ((b.wake = xfer_new(&b, XFER_WAKE)) != NULL)
			xfer_schedule(b.wake, 0);
		log_msg(LOG_DEBUG, "mcp: will wake the session through %s",
		    b.inbox);
	}
	bridge_loop(&b);
	/* What is still on its way is abandoned: the client has gone. */
	while ((x = TAILQ_FIRST(&b.held)) != NULL) {
		TAILQ_REMOVE(&b.held, x, entry);
		xfer_free(x, 0);
	}
	while ((x = TAILQ_FIRST(&b.active)) != NULL)
		xfer_free(x, 1);
	bridge_delete(&b);
	rc = 0;
out:
	if (b.multi != NULL)
		curl_multi_cleanup(b.multi);
	client_close(&b.cl);
	free(b.init_body);
	bbuf_free(&b.in);
	curl_global_cleanup();
	return rc;
}
