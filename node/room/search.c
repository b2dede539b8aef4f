/*
 * search.c: search requests on the node thread (search.h; README,
 * "/api/search"), in one room or in several at once.  The names in from
 * and to become member ids (this member's own name included; an id is
 * taken as it is, so a member who left is still found; a from that
 * names no member known is the name its messages bear); the store's
 * index finds the hits, and each is read back from the log and shown as
 * history shows it, with "excerpt" (its text around the words found)
 * and "marks" (where those words are in it).  Across rooms, each room's
 * best hits are merged: by bm25 when every room ranked its hits, else
 * newest first.  The cursor is the count of hits already given, written
 * so that it is only ever passed back.  The room's part also watches a
 * rebuild of its index that runs beside it (store_ix_fd).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "node/room/search.h"

#define SEARCH_DEFAULT 20
#define CURSOR_PREFIX "s1."

struct searching {
	int fd;                  /* the rebuild watched, or -1 */
};

/* who as a member id's text into out: 0; 1 when no member this one
 * knows has that name or id; -1 with err (more than one has it). */
static int
search_member(struct room *g, char err[PAPO_ERR_LEN], const char *who,
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
	err_set(err, "more than one member of %s is named '%s': give its "
	    "id", g->env.room->name, who);
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

/* One room's part of a search: its query and its hits. */
struct search_part {
	struct room *g;
	struct ix_query q;
	char from[PAPO_ID_LEN + 1], to[PAPO_ID_LEN + 1];
	struct ix_hit *h;
	long n;
	int more, ranked;
};

/*
 * The query req asks of p->g: 0; 1 when the room can have no hit (to
 * names nobody there); -1 with err and *code.
 */
static int
search_prepare(struct search_part *p, const struct node_msg *req,
    char err[PAPO_ERR_LEN], int *code)
{
	struct ix_query *q = &p->q;
	int r;

	*code = 400;
	memset(q, 0, sizeof(*q));
	q->text = req->text;
	q->limit = req->limit == 0 ? SEARCH_DEFAULT : req->limit;
	if (q->limit > IX_LIMIT_MAX)
		q->limit = IX_LIMIT_MAX;
	q->before = req->before;
	q->after = req->after_ts;
	q->files = req->files_only;
	if (req->thread[0] != '\0')
		q->thread = req->thread;
	if (cursor_parse(req->cursor, &q->offset) == -1) {
		err_set(err, "%s", "cursor must be the \"next\" of the page "
		    "before, as it was given");
		return -1;
	}
	/* An author no longer met (a member who left, or one of a log
	 * this member was given) is found by the name its messages bear. */
	if (req->from != NULL && req->from[0] != '\0') {
		if ((r = search_member(p->g, err, req->from, p->from)) == -1)
			return -1;
		if (r == 0)
			q->from_id = p->from;
		else
			q->from_name = req->from;
	}
	if (req->to != NULL && req->to[0] != '\0') {
		if ((r = search_member(p->g, err, req->to, p->to)) == -1)
			return -1;
		if (r == 1) {
			*code = 404;
			err_set(err, "no member is named '%s'", req->to);
			return 1;
		}
		q->to_id = p->to;
	}
	return 0;
}

/* Runs p's query: 0, or -1 with err and *code. */
static int
search_run(struct search_part *p, char err[PAPO_ERR_LEN], int *code)
{
	if ((p->h = calloc(p->q.limit, sizeof(*p->h))) == NULL) {
		*code = 500;
		err_set(err, "%s", "out of memory");
		return -1;
	}
	p->n = store_search(err, p->g->env.store, &p->q, p->h, &p->more,
	    &p->ranked, code);
	return p->n < 0 ? -1 : 0;
}

static void
search_part_clear(struct search_part *p)
{
	if (p->h != NULL && p->n > 0)
		ix_hits_free(p->h, (size_t)p->n);
	free(p->h);
	p->h = NULL;
	p->n = 0;
}

/* A hit as the answer shows it: the message as history shows it, its
 * excerpt and marks, and, across rooms, its room.  NULL when the log no
 * longer reads it (a damaged line): the log is the truth. */
static cJSON *
search_hit_json(struct room *g, const struct ix_hit *h, int with_room)
{
	struct frame_msg m;
	cJSON *j, *marks;

	if (store_get(g->env.store, h->id, &m) == -1)
		return NULL;
	j = deliver_msg_json(g, &m);
	frame_msg_clear(&m);
	if (with_room) {
		cJSON_AddStringToObject(j, "room", g->env.room->name);
		cJSON_AddStringToObject(j, "room_id", g->rid);
	}
	if (h->excerpt == NULL) {
		cJSON_AddNullToObject(j, "excerpt");
		cJSON_AddNullToObject(j, "marks");
		return j;
	}
	cJSON_AddStringToObject(j, "excerpt", h->excerpt);
	marks = cJSON_AddArrayToObject(j, "marks");
	for (size_t i = 0; i < h->nmarks; i++) {
		cJSON *pair = cJSON_CreateArray();

		cJSON_AddItemToArray(pair, cJSON_CreateNumber(h->marks[i][0]));
		cJSON_AddItemToArray(pair, cJSON_CreateNumber(h->marks[i][1]));
		cJSON_AddItemToArray(marks, pair);
	}
	return j;
}

/* The answer's "next": the cursor that goes on, or null. */
static void
search_next(cJSON *o, int more, uint64_t next)
{
	char cur[32];

	if (more) {
		snprintf(cur, sizeof(cur), CURSOR_PREFIX "%" PRIu64, next);
		cJSON_AddStringToObject(o, "next", cur);
	} else {
		cJSON_AddNullToObject(o, "next");
	}
}

/* req's answer o: its JSON, handed to the program through g. */
static void
search_answer(struct room *g, struct node_msg *req, cJSON *o)
{
	if ((req->json = cJSON_PrintUnformatted(o)) == NULL)
		req->code = 500;
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
}

void
room_search(struct room *g, struct node_msg *req)
{
	struct search_part p = { .g = g };
	char err[PAPO_ERR_LEN];
	cJSON *o, *arr;
	int code;

	if (search_prepare(&p, req, err, &code) != 0 ||
	    search_run(&p, err, &code) == -1) {
		search_part_clear(&p);
		room_fail(g, req, code, "%s", err);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (long i = 0; i < p.n; i++) {
		cJSON *j = search_hit_json(g, &p.h[i], 0);

		if (j != NULL)
			cJSON_AddItemToArray(arr, j);
	}
	search_next(o, p.more, p.q.offset + (uint64_t)p.n);
	search_part_clear(&p);
	search_answer(g, req, o);
}

/* One hit of the merge: its room's part and its place there. */
struct search_ref {
	const struct search_part *p;
	const struct ix_hit *h;
};

static int
by_rank(const void *a, const void *b)
{
	const struct search_ref *x = a, *y = b;

	if (x->h->rank != y->h->rank)
		return x->h->rank < y->h->rank ? -1 : 1;
	return x->h->ts > y->h->ts ? -1 : x->h->ts < y->h->ts;
}

static int
by_newest(const void *a, const void *b)
{
	const struct search_ref *x = a, *y = b;

	return x->h->ts > y->h->ts ? -1 : x->h->ts < y->h->ts;
}

static int
by_oldest(const void *a, const void *b)
{
	return -by_newest(a, b);
}

/*
 * The merge of parts: every hit of every room in one order, the page
 * of it from offset into o's "messages".  Returns how many hits there
 * are in all (of what the rooms gave).
 */
static size_t
search_merge(struct search_part *parts, size_t np, const struct node_msg *req,
    uint64_t offset, size_t limit, cJSON *arr)
{
	struct search_ref *v;
	size_t n = 0;
	int all = 1;
	int (*order)(const void *, const void *);

	for (size_t i = 0; i < np; i++) {
		n += parts[i].n > 0 ? (size_t)parts[i].n : 0;
		if (parts[i].n > 0 && !parts[i].ranked)
			all = 0;
	}
	if (n == 0 || (v = calloc(n, sizeof(*v))) == NULL)
		return 0;
	n = 0;
	for (size_t i = 0; i < np; i++)
		for (long k = 0; k < parts[i].n; k++) {
			v[n].p = &parts[i];
			v[n++].h = &parts[i].h[k];
		}
	order = req->text != NULL && req->text[0] != '\0' && all ? by_rank :
	    req->thread[0] != '\0' ? by_oldest : by_newest;
	qsort(v, n, sizeof(*v), order);
	for (size_t i = (size_t)offset; i < n && i < offset + limit; i++) {
		cJSON *j = search_hit_json(v[i].p->g, v[i].h, 1);

		if (j != NULL)
			cJSON_AddItemToArray(arr, j);
	}
	free(v);
	return n;
}

void
room_search_all(struct room **rooms, size_t nrooms, struct node_msg *req)
{
	struct search_part *parts;
	char err[PAPO_ERR_LEN];
	cJSON *o = NULL, *arr, *off = NULL;
	uint64_t offset = 0;
	size_t limit = 0, np = 0, n;
	int code = 500, more = 0, rc;

	if ((parts = calloc(nrooms, sizeof(*parts))) == NULL)
		goto fail;
	for (size_t i = 0; i < nrooms; i++) {
		struct search_part *p = &parts[np];

		p->g = rooms[i];
		if ((rc = search_prepare(p, req, err, &code)) == -1)
			goto fail;
		if (rc == 1)
			continue;
		/* Each room's first hits, as many as the page's end. */
		offset = p->q.offset;
		limit = p->q.limit;
		if (offset + limit > IX_RANKED_MAX) {
			code = 400;
			err_set(err, "a search of every room pages through its "
			    "first %d hits: narrow it (words, from, before...) "
			    "or search one room", IX_RANKED_MAX);
			goto fail;
		}
		p->q.limit = (size_t)offset + limit + 1;
		p->q.offset = 0;
		np++;
	}
	if (np == 0) {
		code = 404;
		err_set(err, "no member is named '%s' in any room", req->to);
		goto fail;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (size_t i = 0; i < np; i++) {
		if (search_run(&parts[i], err, &code) == 0) {
			more |= parts[i].more;
			continue;
		}
		if (code == 400)
			goto fail;
		/* A room whose index is not there: the others answer. */
		if (off == NULL)
			off = cJSON_AddArrayToObject(o, "unavailable");
		cJSON *u = cJSON_CreateObject();

		cJSON_AddStringToObject(u, "room", parts[i].g->env.room->name);
		cJSON_AddStringToObject(u, "room_id", parts[i].g->rid);
		cJSON_AddStringToObject(u, "error", err);
		cJSON_AddItemToArray(off, u);
		search_part_clear(&parts[i]);
	}
	n = search_merge(parts, np, req, offset, limit, arr);
	search_next(o, more || n > offset + limit, offset + limit);
	for (size_t i = 0; i < np; i++)
		search_part_clear(&parts[i]);
	free(parts);
	search_answer(rooms[0], req, o);
	return;
fail:
	cJSON_Delete(o);
	for (size_t i = 0; parts != NULL && i < np; i++)
		search_part_clear(&parts[i]);
	free(parts);
	if (code == 500 && err[0] == '\0')
		err_set(err, "%s", "out of memory");
	room_fail(rooms[0], req, code, "%s", err);
}

/* The rebuild watched is over: the index taken, and the next watched
 * (a compaction while it ran starts another). */
static void
search_rebuilt(void *arg, uint32_t events)
{
	struct room *g = arg;

	(void)events;
	loop_del_fd(g->env.loop, g->searching->fd);
	g->searching->fd = -1;
	store_ix_ready(g->env.store);
	search_watch(g);
}

void
search_watch(struct room *g)
{
	int fd;

	if (g->searching == NULL || g->searching->fd != -1 ||
	    (fd = store_ix_fd(g->env.store)) == -1)
		return;
	if (loop_add_fd(g->env.loop, fd, EPOLLIN, search_rebuilt, g) == 0)
		g->searching->fd = fd;
}

int
search_new(struct room *g)
{
	if ((g->searching = calloc(1, sizeof(*g->searching))) == NULL)
		return -1;
	g->searching->fd = -1;
	return 0;
}

void
search_free(struct room *g)
{
	if (g->searching == NULL)
		return;
	if (g->searching->fd != -1)
		loop_del_fd(g->env.loop, g->searching->fd);
	free(g->searching);
	g->searching = NULL;
}
