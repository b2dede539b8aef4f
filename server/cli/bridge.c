/*
 * bridge.c: "papo mcp" (bridge.h), the MCP stdio transport carried to the
 * daemon's Streamable HTTP endpoint /mcp (MCP 2025-11-25, "Transports").
 * It reads JSON-RPC messages, one a line, from stdin and POSTs each to
 * /mcp; every message that comes back (a JSON answer, or the events of an
 * SSE answer as they arrive) and every message of the session's GET
 * stream goes to stdout, one a line.  It finds the daemon through
 * serve.json (client.c) and starts one when none runs.
 *
 * Everything runs on the main thread: one poll loop drives every
 * transfer at once, so that a wait of 55 s holds up nothing else, and
 * watches stdin.  A daemon at an http:// URL (loopback, most often) is
 * reached with lib/httpc, which keeps this program light (the front
 * runs it); one at an https:// URL with libcurl (bridge_tls.c, in
 * papo-full only).  No object is shared between threads, and stdout needs
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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/httpc.h"
#include "lib/log.h"
#include "node/node.h"
#include "server/cli/bridge.h"
#include "server/cli/bridge_int.h"
#include "server/cli/client.h"
#include "server/cli/inbox.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_rpc.h"

#define BRIDGE_READ 65536                     /* bytes of stdin a read */
#define BRIDGE_DRAIN_MS 2000        /* for answers once stdin closed */
#define BRIDGE_DELETE_MS 1000       /* for the session's DELETE */
#define BRIDGE_POLL_MS 1000         /* the longest sleep of the loop */
#define BRIDGE_FDS 64               /* stdin and the requests over http://
                                     * polled at once */

/* Starts what is due in b->active; *timeout becomes the wait until the
 * next one. */
static void
bridge_start_due(struct bridge *b, int *timeout)
{
	struct xfer *x, *next;
	uint64_t now = bridge_now();

	for (x = TAILQ_FIRST(&b->active); x != NULL; x = next) {
		next = TAILQ_NEXT(x, entry);
		if (x->hc != NULL || x->tls != NULL)
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
			bridge_fail(b, x, "cannot start a request to papo serve "
			    "at %s", b->cl.url);
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

/* Moves every request over http:// as far as it goes without waiting
 * (one that has nothing to do costs a recv that says EAGAIN: they are
 * few), and hands over each that ended.  An end may free other
 * transfers (a new session stops the GET stream), so the walk starts
 * again after each. */
static void
bridge_step(struct bridge *b)
{
	enum httpc_end e;
	struct xfer *x;
	long status;

again:
	TAILQ_FOREACH(x, &b->active, entry) {
		if (x->hc == NULL ||
		    (e = httpc_step(x->hc, &status)) == HTTPC_RUNNING)
			continue;
		httpc_free(x->hc);
		x->hc = NULL;
		bridge_done(b, x, e == HTTPC_OK ? XFER_OK : e == HTTPC_CONNECT ?
		    XFER_CONNECT : XFER_FAILED, httpc_why(e), status);
		goto again;
	}
}

/* Waits for stdin, the requests and the next timer; reads and moves
 * what is ready. */
static int
bridge_wait_io(struct bridge *b, int timeout)
{
	struct pollfd fds[BRIDGE_FDS], pfd;
	enum xfer_end end;
	const char *why;
	struct xfer *x;
	nfds_t n = 0;
	long status;
	int ms;

	if (!b->eof) {
		fds[n].fd = STDIN_FILENO;
		fds[n++].events = POLLIN;
	}
	TAILQ_FOREACH(x, &b->active, entry) {
		if (x->hc == NULL)
			continue;
		if ((ms = httpc_timeout(x->hc)) != -1 && ms < timeout)
			timeout = ms;
		if (n < BRIDGE_FDS) {
			fds[n].fd = httpc_fd(x->hc);
			fds[n++].events = httpc_events(x->hc);
		} else
			timeout = 0;      /* the rest are looked at anyway */
	}
	if (bridge_tls_poll(b, fds, n, timeout) == -1)
		return -1;
	/* libcurl does not pass POLLHUP on (a closed pipe): ask poll
	 * itself. */
	pfd.fd = STDIN_FILENO;
	pfd.events = POLLIN;
	if (!b->eof && poll(&pfd, 1, 0) > 0)
		bridge_read(b);
	bridge_step(b);
	while (bridge_tls_done(b, &x, &end, &why, &status))
		bridge_done(b, x, end, why, status);
	return 0;
}

static void
bridge_loop(struct bridge *b)
{
	uint64_t now, drain_until = 0;
	int timeout;

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
		if (bridge_wait_io(b, timeout) == -1) {
			log_msg(LOG_ERROR, "mcp: cannot wait: stopping");
			break;
		}
	}
}

/* Ends the session on the daemon (best effort: it forgets idle ones). */
static void
bridge_delete(struct bridge *b)
{
	char url[1024], h[3][BRIDGE_SESSION_MAX + 300];
	const char *hs[4] = { h[0], NULL, NULL, NULL };
	struct httpc_req r;
	size_t n = 1;
	long status;

	if (b->session[0] == '\0')
		return;
	snprintf(url, sizeof(url), "%s/mcp%s", b->cl.url, b->channels ?
	    "?channels=on" : "");
	snprintf(h[0], sizeof(h[0]), "MCP-Session-Id: %s", b->session);
	if (b->version[0] != '\0') {
		snprintf(h[n], sizeof(h[n]), "MCP-Protocol-Version: %s",
		    b->version);
		hs[n] = h[n];
		n++;
	}
	if (b->cl.token != NULL) {
		snprintf(h[n], sizeof(h[n]), "Authorization: Bearer %s",
		    b->cl.token);
		hs[n] = h[n];
	}
	if (strncmp(url, "http://", 7) != 0)
		bridge_tls_delete(b, url, hs, BRIDGE_DELETE_MS);
	else {
		memset(&r, 0, sizeof(r));
		r.url = b->cl.url;
		r.method = "DELETE";
		r.path = url + strlen(b->cl.url);
		memcpy(r.headers, hs, sizeof(hs));
		r.total_ms = BRIDGE_DELETE_MS;
		httpc_do(&r, &status);
	}
	explicit_bzero(h, sizeof(h));
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
	if (client_open(e, home, &b.cl) == -1) {
		if (bridge_room_ok(err, home, new_room) == -1 ||
		    bridge_spawn(err, home, &pid, &off) == -1 ||
		    bridge_wait(err, &b, pid, off) == -1)
			goto out;
		log_msg(LOG_INFO, "mcp: started papo serve (pid %ld) at %s; its "
		    "output goes to %s/serve.log", b.cl.pid, b.cl.url, home);
	}
	if ((rc = bridge_tls_open(err, &b)) != 0)
		goto out;
	rc = -1;
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
	bridge_tls_close(&b);
	client_close(&b.cl);
	free(b.init_body);
	bbuf_free(&b.in);
	return rc;
}
