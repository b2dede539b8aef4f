/*
 * http_grant.c: the OAuth grant each stream and wait was opened with,
 * ended at its revocation (http_grant_ended) or its token's expiry (one
 * timer for all).  Main thread.
 */
#include <stdio.h>
#include <string.h>
#include <sys/queue.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

/* Is grant (of a token expiring at end) ended: the grant id, when id is
 * given, else expired by now? */
static int
http_grant_over(const char *grant, uint64_t end, const char *id,
    uint64_t now)
{
	if (grant[0] == '\0')
		return 0;
	return id != NULL ? strcmp(grant, id) == 0 : end <= now;
}

/*
 * Ends every stream and wait of grant id (or, id NULL, of every token
 * expired by now).  A stream gets a comment saying why and then its
 * end, and its owner's gone(); a wait that its owner watches (the only
 * kind that may be answered from here: a node request's answer would
 * find it gone) is forgotten by its owner and answered 401.
 */
static size_t
http_grant_sweep(struct http *h, const char *id, uint64_t now)
{
	const char *why = id != NULL ? "the grant of this token was revoked" :
	    "this token expired";
	struct http_stream *st;
	struct http_req *r;
	size_t n = 0;
	char line[96];
	int len;

again:
	LIST_FOREACH(r, &h->waiting, wait.entry) {
		http_req_gone *gone = r->wait.gone;

		if (gone == NULL || !http_grant_over(r->ask.grant.id,
		    r->ask.grant_end, id, now))
			continue;
		http_req_watch(r, NULL, NULL);
		gone(r, r->wait.gone_arg);
		if (r->state == HTTP_WAITING) {
			http_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			    h->auth.challenge != NULL ?
			    h->auth.challenge(h->auth.arg) :
			    "Bearer realm=\"papo\"");
			http_reply_error(r, MHD_HTTP_UNAUTHORIZED, "%s: get a new "
			    "one, and ask again", why);
		}
		n++;
		goto again;            /* the list changed under us */
	}
	len = snprintf(line, sizeof(line), ": %s; the stream ends\n\n", why);
	LIST_FOREACH(st, &h->streams, entry) {
		if (st->closing || !http_grant_over(st->grant, st->grant_end,
		    id, now))
			continue;
		http_stream_write(st, line, (size_t)len);
		st->closing = 1;       /* gone() still follows */
		http_stream_wake(st);
		n++;
	}
	return n;
}

void
http_on_grant_timer(void *arg)
{
	struct http *h = arg;
	struct http_stream *st;
	struct http_req *r;
	size_t n;

	h->grant_next = 0;
	if ((n = http_grant_sweep(h, NULL, loop_now_ns())) > 0)
		log_msg(LOG_INFO, "http: %zu streams and waits ended with their "
		    "token's life", n);
	LIST_FOREACH(r, &h->waiting, wait.entry)
		if (r->wait.gone != NULL && r->ask.grant.id[0] != '\0')
			http_grant_arm(h, r->ask.grant_end);
	LIST_FOREACH(st, &h->streams, entry)
		if (!st->closing && st->grant[0] != '\0')
			http_grant_arm(h, st->grant_end);
}

void
http_grant_ended(struct http *h, const char *id)
{
	size_t n;

	if (h == NULL || id == NULL || id[0] == '\0')
		return;
	if ((n = http_grant_sweep(h, id, 0)) > 0)
		log_msg(LOG_INFO, "http: grant %s ended: %zu of its streams and "
		    "waits closed", id, n);
}
