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

#include "node/room/search.h"

#define SEARCH_DEFAULT 20
#define CURSOR_PREFIX "s1."

struct search_part;

struct searching {
	int fd;                  /* the store's jobs watched, or -1 */
	struct search_part *parts;   /* of asks not yet answered */
};

/* who as a member id's text into out: 0; 1 when no member this one
 * knows has that name or id; -1 with err (more than one has it). */
static int
search_member(struct room *room, char err[PAPO_ERR_LEN], const char *who,
    char out[PAPO_ID_LEN + 1])
{
	uint8_t pk[PAPO_KEY_LEN];
	struct member *m;
	int amb = 0;

	if (strcmp(who, room->env.room->me) == 0) {
		sec_id_format(room->env.me->pk, out);
		return 0;
	}
	if ((m = member_lookup(room, who, &amb)) != NULL) {
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
	    "id", room->env.room->name, who);
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

struct search_ask;

/* One room's part of a search: its query, the store's search running
 * it beside the node thread, then its hits (the search's until the
 * ask is answered). */
struct search_part {
	struct room *room;          /* NULL once the room is gone */
	struct search_ask *ask;
	struct search_part *next;    /* in its room's list (searching) */
	struct ix_query q;
	char from[PAPO_ID_LEN + 1], to[PAPO_ID_LEN + 1];
	char name[ROOM_NAME_MAX + 1], rid[PAPO_ROOMID_LEN + 1];
	struct store_find *f;
	int over;                /* its search ended (or never ran) */
	struct ix_hit *h;
	long n;                  /* hits, or -1 with code and err */
	int more, ranked, code;
	char err[PAPO_ERR_LEN];
};

/* A search request in flight: its parts (one, or one a room), how many
 * are still running, and how the answer leaves (the node's, whichever
 * room goes first). */
struct search_ask {
	struct node_msg *req;
	struct node_search_args *args;   /* req's */
	void (*emit)(void *arg, struct node_msg *m);
	void *arg;
	int all;                 /* of several rooms: merged */
	uint64_t offset;         /* all: the page's start and length */
	size_t limit;
	struct search_part *parts;
	size_t np, left;
};

/*
 * The query args asks of p->room: 0; 1 when the room can have no hit (to
 * names nobody there); -1 with err and *code.
 */
static int
search_prepare(struct search_part *p, const struct node_search_args *args,
    char err[PAPO_ERR_LEN], int *code)
{
	struct ix_query *q = &p->q;
	int r;

	*code = 400;
	memset(q, 0, sizeof(*q));
	q->text = args->text;
	q->limit = args->limit == 0 ? SEARCH_DEFAULT : args->limit;
	if (q->limit > IX_LIMIT_MAX)
		q->limit = IX_LIMIT_MAX;
	q->before = args->before;
	if (args->before != 0 && args->before_id[0] != '\0')
		q->before_id = args->before_id;
	q->newest = args->in_time;
	q->after = args->after_ts;
	q->files = args->files_only;
	if (args->thread[0] != '\0')
		q->thread = args->thread;
	if (cursor_parse(args->cursor, &q->offset) == -1) {
		err_set(err, "%s", "cursor must be the \"next\" of the page "
		    "before, as it was given");
		return -1;
	}
	/* An author no longer met (a member who left, or one of a log
	 * this member was given) is found by the name its messages bear. */
	if (args->from != NULL && args->from[0] != '\0') {
		if ((r = search_member(p->room, err, args->from, p->from)) == -1)
			return -1;
		if (r == 0)
			q->from_id = p->from;
		else
			q->from_name = args->from;
	}
	if (args->to != NULL && args->to[0] != '\0') {
		if ((r = search_member(p->room, err, args->to, p->to)) == -1)
			return -1;
		if (r == 1) {
			*code = 404;
			err_set(err, "no member is named '%s'", args->to);
			return 1;
		}
		q->to_id = p->to;
	}
	return 0;
}

/* Starts p's query beside the node thread; a search that cannot start
 * is over at once with its error. */
static void
search_launch(struct search_part *p)
{
	struct room *room = p->room;

	snprintf(p->name, sizeof(p->name), "%s", room->env.room->name);
	snprintf(p->rid, sizeof(p->rid), "%s", room->rid);
	p->next = room->searching->parts;
	room->searching->parts = p;
	if ((p->f = store_find_start(p->err, room->env.store, &p->q,
	    &p->code)) == NULL) {
		p->over = 1;
		p->n = -1;
		p->ask->left--;
		return;
	}
	search_watch(room);
}

/* p ends: out of its room's list, its search freed. */
static void
search_part_clear(struct search_part *p)
{
	struct search_part **pp;

	if (p->room != NULL) {
		for (pp = &p->room->searching->parts; *pp != NULL && *pp != p;
		    pp = &(*pp)->next)
			;
		if (*pp == p)
			*pp = p->next;
		store_find_free(p->room->env.store, p->f);
	}
	p->f = NULL;
	p->h = NULL;
	p->n = 0;
}

/* A hit as the answer shows it: the message as history shows it, its
 * excerpt and marks, and, across rooms, its room.  NULL when the log no
 * longer reads it (a damaged line): the log is the truth; or when it is
 * not this member's to see. */
static cJSON *
search_hit_json(struct room *room, const struct ix_hit *h, int with_room)
{
	struct frame_msg m;
	cJSON *j, *marks;

	if (store_get(room->env.store, h->id, &m) == -1)
		return NULL;
	j = deliver_msg_json(room, &m);
	frame_msg_clear(&m);
	if (j == NULL)
		return NULL;   /* not ours to see: the index holds no such row */
	if (with_room) {
		cJSON_AddStringToObject(j, "room", room->env.room->name);
		cJSON_AddStringToObject(j, "room_id", room->rid);
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

/* The answer's "earlier" when the hits are in time (in_time): where
 * the page before this one ends, as history gives it. */
static void
search_earlier(cJSON *o, const struct ix_hit *oldest)
{
	cJSON *e = cJSON_AddObjectToObject(o, "earlier");

	cJSON_AddNumberToObject(e, "before", (double)oldest->ts);
	cJSON_AddStringToObject(e, "before_id", oldest->id);
}

/*
 * A search by time names the message it pages back from (before_id)
 * without its time: the time is read from the log of whichever of the
 * rooms holds it.  0, or -1 with err and *code 404.
 */
static int
search_before(struct room **rooms, size_t n, struct node_search_args *args,
    char err[PAPO_ERR_LEN], int *code)
{
	struct frame_msg m;

	if (args->before_id[0] == '\0' || args->before != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (store_get(rooms[i]->env.store, args->before_id, &m) == 0) {
			args->before = m.ts;
			frame_msg_clear(&m);
			return 0;
		}
	*code = 404;
	err_set(err, "no message %s here to page back from",
	    args->before_id);
	return -1;
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

/* The ask is answered (o its JSON, or code and err) and freed. */
static void
search_end(struct search_ask *a, cJSON *o, int code, const char *err)
{
	struct node_msg *req = a->req;

	if (o != NULL && (req->json = cJSON_PrintUnformatted(o)) == NULL) {
		code = 500;
		err = "out of memory";
	}
	if (o == NULL || req->json == NULL) {
		req->code = code;
		snprintf(req->err, sizeof(req->err), "%s", err);
	}
	cJSON_Delete(o);
	for (size_t i = 0; i < a->np; i++)
		search_part_clear(&a->parts[i]);
	a->emit(a->arg, req);
	free(a->parts);
	free(a);
}

/* The answer of a search of one room. */
static void
search_one(struct search_ask *a)
{
	struct search_part *p = &a->parts[0];
	cJSON *o, *arr;

	if (p->n < 0 || p->room == NULL) {
		search_end(a, NULL, p->n < 0 ? p->code : 503, p->n < 0 ?
		    p->err : "the room was left");
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (long i = 0; i < p->n; i++) {
		/* In time, the newest found are given oldest first. */
		long k = a->args->in_time ? p->n - 1 - i : i;
		cJSON *j = search_hit_json(p->room, &p->h[k], 0);

		if (j != NULL)
			cJSON_AddItemToArray(arr, j);
	}
	search_next(o, p->more, p->q.offset + (uint64_t)p->n);
	if (a->args->in_time && p->more && p->n > 0)
		search_earlier(o, &p->h[p->n - 1]);
	search_end(a, o, 0, NULL);
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

	if (x->h->ts != y->h->ts)
		return x->h->ts > y->h->ts ? -1 : 1;
	return -strcmp(x->h->id, y->h->id);
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
search_merge(struct search_part *parts, size_t np,
    const struct node_search_args *args, uint64_t offset, size_t limit,
    cJSON *arr, struct ix_hit *oldest)
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
	order = args->in_time ? by_newest : args->text != NULL &&
	    args->text[0] != '\0' && all ? by_rank : args->thread[0] != '\0' ?
	    by_oldest : by_newest;
	qsort(v, n, sizeof(*v), order);
	for (size_t i = (size_t)offset; i < n && i < offset + limit; i++) {
		cJSON *j = search_hit_json(v[i].p->room, v[i].h, 1);

		if (j == NULL)
			continue;
		/* In time, the newest found are given oldest first. */
		if (args->in_time)
			cJSON_InsertItemInArray(arr, 0, j);
		else
			cJSON_AddItemToArray(arr, j);
		*oldest = *v[i].h;
		oldest->excerpt = NULL;
	}
	free(v);
	return n;
}

/* The answer of a search of every room: each room's hits merged; a
 * room whose index could not answer (or that was left) named in
 * "unavailable", a query refused (400) refused whole. */
static void
search_every(struct search_ask *a)
{
	struct ix_hit last;
	cJSON *o, *arr, *off = NULL;
	size_t n;
	int more = 0;

	for (size_t i = 0; i < a->np; i++)
		if (a->parts[i].n < 0 && a->parts[i].code == 400) {
			search_end(a, NULL, 400, a->parts[i].err);
			return;
		}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (size_t i = 0; i < a->np; i++) {
		struct search_part *p = &a->parts[i];
		cJSON *u;

		if (p->room == NULL && p->n >= 0) {
			p->n = -1;
			snprintf(p->err, sizeof(p->err), "%s", "the room was "
			    "left");
		}
		if (p->n >= 0) {
			more |= p->more;
			continue;
		}
		if (off == NULL)
			off = cJSON_AddArrayToObject(o, "unavailable");
		u = cJSON_CreateObject();
		cJSON_AddStringToObject(u, "room", p->name);
		cJSON_AddStringToObject(u, "room_id", p->rid);
		cJSON_AddStringToObject(u, "error", p->err);
		cJSON_AddItemToArray(off, u);
	}
	memset(&last, 0, sizeof(last));
	n = search_merge(a->parts, a->np, a->args, a->offset, a->limit, arr,
	    &last);
	more = more || n > a->offset + a->limit;
	search_next(o, more, a->offset + a->limit);
	if (a->args->in_time && more && last.id[0] != '\0')
		search_earlier(o, &last);
	search_end(a, o, 0, NULL);
}

/* A part is over: the ask answered when it was the last. */
static void
search_part_over(struct search_part *p)
{
	struct search_ask *a = p->ask;

	p->over = 1;
	if (--a->left > 0)
		return;
	if (a->all)
		search_every(a);
	else
		search_one(a);
}

/* A new ask of req over np parts, or NULL (req answered 500). */
static struct search_ask *
search_ask_new(struct room *room, struct node_msg *req, size_t np)
{
	struct search_ask *a;

	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->parts = calloc(np, sizeof(*a->parts))) == NULL) {
		free(a);
		room_fail(room, req, 500, "out of memory");
		return NULL;
	}
	a->req = req;
	a->args = node_args_search(req);
	a->emit = room->env.emit;
	a->arg = room->env.arg;
	a->np = np;
	for (size_t i = 0; i < np; i++)
		a->parts[i].ask = a;
	return a;
}

/* Every part of a prepared: started, and the ask answered at once when
 * none is left running. */
static void
search_start(struct search_ask *a)
{
	a->left = a->np + 1;     /* none ends it before all are started */
	for (size_t i = 0; i < a->np; i++)
		search_launch(&a->parts[i]);
	a->left--;
	if (a->left == 0) {
		a->left = 1;
		search_part_over(&a->parts[0]);
	}
}

void
room_search(struct room *room, struct node_msg *req)
{
	struct search_ask *a;
	char err[PAPO_ERR_LEN];
	int code;

	if ((a = search_ask_new(room, req, 1)) == NULL)
		return;
	a->parts[0].room = room;
	if (search_before(&room, 1, a->args, err, &code) == -1 ||
	    search_prepare(&a->parts[0], a->args, err, &code) != 0) {
		free(a->parts);
		free(a);
		room_fail(room, req, code, "%s", err);
		return;
	}
	search_start(a);
}

void
room_search_all(struct room **rooms, size_t nrooms, struct node_msg *req)
{
	struct search_ask *a;
	char err[PAPO_ERR_LEN];
	size_t np = 0;
	int code = 500, rc;

	if ((a = search_ask_new(rooms[0], req, nrooms)) == NULL)
		return;
	a->all = 1;
	if (search_before(rooms, nrooms, a->args, err, &code) == -1)
		goto fail;
	for (size_t i = 0; i < nrooms; i++) {
		struct search_part *p = &a->parts[np];

		p->room = rooms[i];
		if ((rc = search_prepare(p, a->args, err, &code)) == -1)
			goto fail;
		if (rc == 1)
			continue;
		/* Each room's first hits, as many as the page's end. */
		a->offset = p->q.offset;
		a->limit = p->q.limit;
		if (a->offset + a->limit > IX_RANKED_MAX) {
			code = 400;
			err_set(err, "a search of every room pages through its "
			    "first %d hits: narrow it (words, from, before...) "
			    "or search one room", IX_RANKED_MAX);
			goto fail;
		}
		p->q.limit = (size_t)a->offset + a->limit + 1;
		p->q.offset = 0;
		np++;
	}
	if (np == 0) {
		code = 404;
		err_set(err, "no member is named '%s' in any room",
		    a->args->to);
		goto fail;
	}
	a->np = np;
	search_start(a);
	return;
fail:
	free(a->parts);
	free(a);
	room_fail(rooms[0], req, code, "%s", err);
}

/* The searches of room that ended, each taken (the ask answered when it
 * was its last part). */
static void
search_collect(struct room *room)
{
	struct search_part *p;

again:
	for (p = room->searching->parts; p != NULL; p = p->next) {
		if (p->over || p->f == NULL || !store_find_over(p->f))
			continue;
		p->n = store_find_result(p->f, p->err, &p->h, &p->more,
		    &p->ranked, &p->code);
		/* The answer unlinks parts (of this room and others): the
		 * list is read again from its start. */
		search_part_over(p);
		goto again;
	}
}

/* A job of the store's ended (a rebuild, a check, a search): the index
 * taken, the searches ended answered, and the next watched (a
 * compaction while a rebuild ran starts another). */
static void
search_rebuilt(void *arg, uint32_t events)
{
	struct room *room = arg;

	(void)events;
	loop_del_fd(room->env.loop, room->searching->fd);
	room->searching->fd = -1;
	store_ix_ready(room->env.store);
	search_collect(room);
	search_watch(room);
}

void
search_watch(struct room *room)
{
	int fd;

	if (room->searching == NULL || room->searching->fd != -1 ||
	    (fd = store_ix_fd(room->env.store)) == -1)
		return;
	if (loop_add_fd(room->env.loop, fd, LOOP_IN, search_rebuilt, room) == 0)
		room->searching->fd = fd;
}

int
search_new(struct room *room)
{
	if ((room->searching = calloc(1, sizeof(*room->searching))) == NULL)
		return -1;
	room->searching->fd = -1;
	return 0;
}

void
search_free(struct room *room)
{
	struct search_part *p;

	if (room->searching == NULL)
		return;
	/* Its searches stopped; an ask waiting for no other room is
	 * answered now. */
	while ((p = room->searching->parts) != NULL) {
		room->searching->parts = p->next;
		store_find_free(room->env.store, p->f);
		p->f = NULL;
		p->room = NULL;
		p->h = NULL;
		p->n = -1;
		p->code = 503;
		snprintf(p->err, sizeof(p->err), "%s", "the room was left");
		if (!p->over)
			search_part_over(p);
	}
	if (room->searching->fd != -1)
		loop_del_fd(room->env.loop, room->searching->fd);
	free(room->searching);
	room->searching = NULL;
}
