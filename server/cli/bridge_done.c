/*
 * bridge_done.c: what the bridge does when a transfer ends: a POST's
 * answer given (or a JSON-RPC error for it when the daemon gave none,
 * or the message sent again to a restarted daemon), the GET stream
 * reopened with Last-Event-ID, the wake poll's answer posted into
 * Claude Code's inbox socket.  Main thread.
 */
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/cli/bridge_int.h"
#include "server/cli/inbox.h"

#define BRIDGE_RESUME_MAX 100       /* resumptions of one answer stream */

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
bridge_post_done(struct bridge *b, struct xfer *x, enum xfer_end end,
    const char *why_not, long status)
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
	if (end != XFER_OK && !x->over) {
		/* A key that does not match: the daemon has another
		 * certificate, which serve.json names.  The notification
		 * stream may have read it already (then nothing changes
		 * here), so the retry does not wait for a change. */
		if (!x->moved && ((end == XFER_CONNECT &&
		    bridge_refresh(b) == 1) ||
		    (end == XFER_PINNED && bridge_refresh(b) != -1))) {
			log_msg(LOG_INFO, "mcp: papo serve is now at %s",
			    b->cl.url);
			x->moved = 1;
			TAILQ_REMOVE(&b->active, x, entry);
			xfer_stop(x);
			xfer_schedule(x, 0);
			return;
		}
		bridge_fail(b, x, "cannot reach papo serve at %s: %s", b->cl.url,
		    why_not);
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
bridge_get_done(struct bridge *b, struct xfer *x, const char *why_not,
    long status)
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
		    "failed (%s): trying again", why_not);
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
bridge_wake_done(struct bridge *b, struct xfer *x, enum xfer_end end,
    const char *why_not, long status)
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
		if (end != XFER_OK || status >= 500)
			log_msg(LOG_DEBUG, "mcp: wake poll failed (%s, HTTP %ld)",
			    why_not, status);
		delay = BRIDGE_RETRY_MS;
	}
	cJSON_Delete(o);
	TAILQ_REMOVE(&b->active, x, entry);
	xfer_stop(x);
	xfer_schedule(x, bridge_now() + delay);
}

void
bridge_done(struct bridge *b, struct xfer *x, enum xfer_end end,
    const char *why, long status)
{
	if (x->kind == XFER_GET)
		bridge_get_done(b, x, why, status);
	else if (x->kind == XFER_WAKE)
		bridge_wake_done(b, x, end, why, status);
	else
		bridge_post_done(b, x, end, why, status);
}
