/*
 * search.c: search requests on the node thread (search.h; README,
 * "/api/search").  The names in from and to become member ids (this
 * member's own name included; an id is taken as it is, so a member who
 * left is still found; a from that names no member known is the name
 * its messages bear); the store's index finds the hits, and each is read back
 * from the log and shown as history shows it, with "excerpt": its text
 * around the words found, each marked [ and ].  The cursor is the count
 * of hits already given, written so that it is only ever passed back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/room/search.h"

#define SEARCH_DEFAULT 20
#define CURSOR_PREFIX "s1."

/* who as a member id's text into out: 0; 1 when no member this one
 * knows has that name or id (none is answered); -1 (the request
 * answered 400: more than one has it). */
static int
search_member(struct room *g, struct node_msg *req, const char *who,
    char out[PAPO_ID_LEN + 1])
{
	uint8_t pk[PAPO_KEY_LEN];
	struct member *m;
	int amb = 0;

	if (strcmp(who, g->env.room->me) == 0) {
		sec_id_format(g->env.me->pk, out);
		return 0;
	}
	if ((m = member_lookup(g, who, &amb)) != NULL) {
		sec_id_format(m->id, out);
		return 0;
	}
	if (!amb && sec_id_parse(who, pk) == 0) {
		sec_id_format(pk, out);
		return 0;
	}
	if (!amb)
		return 1;
	room_fail(g, req, 400, "more than one member is named '%s': give "
	    "its id", who);
	return -1;
}

/* The cursor's offset: 0, or -1 when it is not one search gave. */
static int
cursor_parse(const char *c, uint64_t *off)
{
	char *end;

	*off = 0;
	if (c == NULL || c[0] == '\0')
		return 0;
	if (strncmp(c, CURSOR_PREFIX, sizeof(CURSOR_PREFIX) - 1) != 0)
		return -1;
	c += sizeof(CURSOR_PREFIX) - 1;
	if (*c < '0' || *c > '9')
		return -1;
	errno = 0;
	*off = strtoull(c, &end, 10);
	return errno != 0 || *end != '\0' || *off > INT32_MAX ? -1 : 0;
}

/* The answer: the hits as messages, and the cursor that goes on. */
static cJSON *
search_json(struct room *g, const struct ix_hit *h, long n, int more,
    uint64_t next)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "messages");
	char cur[32];

	for (long i = 0; i < n; i++) {
		struct frame_msg m;
		cJSON *j;

		/* A hit the log no longer reads (a damaged line) is left
		 * out: the log is the truth. */
		if (store_get(g->env.store, h[i].id, &m) == -1)
			continue;
		j = deliver_msg_json(g, &m);
		if (h[i].excerpt != NULL)
			cJSON_AddStringToObject(j, "excerpt", h[i].excerpt);
		else
			cJSON_AddNullToObject(j, "excerpt");
		cJSON_AddItemToArray(arr, j);
		frame_msg_clear(&m);
	}
	if (more) {
		snprintf(cur, sizeof(cur), CURSOR_PREFIX "%" PRIu64, next);
		cJSON_AddStringToObject(o, "next", cur);
	} else {
		cJSON_AddNullToObject(o, "next");
	}
	return o;
}

void
room_search(struct room *g, struct node_msg *req)
{
	char from[PAPO_ID_LEN + 1], to[PAPO_ID_LEN + 1];
	char err[PAPO_ERR_LEN];
	struct ix_query q;
	struct ix_hit *h;
	int more, code, r;
	long n;
	cJSON *o;

	memset(&q, 0, sizeof(q));
	q.text = req->text;
	q.limit = req->limit == 0 ? SEARCH_DEFAULT : req->limit;
	if (q.limit > IX_LIMIT_MAX)
		q.limit = IX_LIMIT_MAX;
	q.before = req->before;
	q.after = req->after_ts;
	q.files = req->files_only;
	if (req->thread[0] != '\0')
		q.thread = req->thread;
	if (cursor_parse(req->cursor, &q.offset) == -1) {
		room_fail(g, req, 400, "%s", "cursor must be the \"next\" of "
		    "the page before, as it was given");
		return;
	}
	/* An author no longer met (a member who left, or one of a log
	 * this member was given) is found by the name its messages bear. */
	if (req->from != NULL && req->from[0] != '\0') {
		if ((r = search_member(g, req, req->from, from)) == -1)
			return;
		if (r == 0)
			q.from_id = from;
		else
			q.from_name = req->from;
	}
	if (req->to != NULL && req->to[0] != '\0') {
		if ((r = search_member(g, req, req->to, to)) == -1)
			return;
		if (r == 1) {
			room_fail(g, req, 404, "no member is named '%s'",
			    req->to);
			return;
		}
		q.to_id = to;
	}
	if ((h = calloc(q.limit, sizeof(*h))) == NULL) {
		room_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	if ((n = store_search(err, g->env.store, &q, h, &more, &code)) < 0) {
		free(h);
		room_fail(g, req, code, "%s", err);
		return;
	}
	o = search_json(g, h, n, more, q.offset + (uint64_t)n);
	ix_hits_free(h, (size_t)n);
	free(h);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
}
