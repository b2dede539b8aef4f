/*
 * sse.c: GET /api/events (sse.h).  It keeps the last SSE_KEEP events in a
 * ring, each with an id "BOOT-SEQ" (BOOT the daemon's start time in ms,
 * SEQ counting from 1), and the list of open streams.  A client that
 * sends Last-Event-ID from this run gets what came after it, once; one
 * from an earlier run (the daemon restarted) gets every event kept.  Idle
 * streams get a comment every 25 s, so a client that went away is found
 * out; the timer runs only while a stream is open.  Each stream has its
 * place in the ring: an event is queued for it at once only when it has
 * had everything before and little waits for it; else its stream takes
 * the events from the ring, SSE_CHUNK at a time, as its client reads
 * (a replay, or a slow client), so what waits for one client stays
 * small.  A client whose place left the ring fell behind: its stream
 * ends with a comment saying so.  Main thread only; it never blocks:
 * writing to a stream only queues bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "server/api/markdown.h"
#include "server/api/sse.h"

struct sse_event {
	uint64_t seq;                 /* 0: empty slot */
	const char *name;
	char *data;
	char room[PAPO_ROOMID_LEN + 1];   /* its room's id; "": every room's */
};

struct sse_sub {
	struct http_stream *st;
	struct sse *s;
	uint64_t next;                /* the seq of the next event it gets */
	char *room;                   /* the room it follows (a name, an id
	                               * or its start), "*" every room, NULL
	                               * the default */
	int html;                     /* messages with their "html" (?html=1,
	                               * the dashboard's) */
	LIST_ENTRY(sse_sub) entry;
};

/* A room as the node's last list of rooms gave it. */
struct sse_room {
	char id[PAPO_ROOMID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
};

struct sse {
	struct loop *loop;
	struct loop_timer *heartbeat;
	uint64_t boot;
	uint64_t seq;
	uint64_t oldest;              /* the oldest seq kept (seq + 1: none) */
	size_t bytes;                 /* of the events kept */
	struct sse_event ring[SSE_KEEP];
	LIST_HEAD(, sse_sub) subs;
	struct sse_room rooms[PAPO_ROOMS_MAX];
	size_t nrooms;
	char dflt[PAPO_ROOMID_LEN + 1];
};

static const char *
sse_name(enum node_kind kind)
{
	switch (kind) {
	case NODE_EV_MESSAGE:
		return "message";
	case NODE_EV_RECEIPT:
		return "receipt";
	case NODE_EV_PRESENCE:
		return "presence";
	case NODE_EV_ROOM:
		return "room";
	case NODE_EV_ROOMS:
		return "rooms";
	case NODE_EV_BLOB: return "file";
	default:
		return NULL;
	}
}

/* Writes one event in SSE form; a message with its "html" for a
 * stream that asked (rendered per stream: only dashboards ask). */
static int
sse_write(struct sse *s, const struct sse_sub *sub, const struct sse_event *e)
{
	char head[96], *html = NULL;
	const char *data = e->data;
	int n, rc;

	n = snprintf(head, sizeof(head), "id: %" PRIu64 "-%" PRIu64 "\nevent: %s\ndata: ",
	    s->boot, e->seq, e->name);
	if (sub->html && strcmp(e->name, "message") == 0 &&
	    (html = markdown_json(e->data, NULL)) != NULL)
		data = html;
	rc = http_stream_event(sub->st, head, (size_t)n, data, strlen(data));
	free(html);
	return rc;
}

static void
sse_unsub(struct sse_sub *sub)
{
	struct sse *s = sub->s;

	LIST_REMOVE(sub, entry);
	free(sub->room);
	free(sub);
	if (LIST_EMPTY(&s->subs))
		loop_timer_set(s->heartbeat, 0);
}

static void
sse_gone(struct http_stream *st, void *arg)
{
	(void)st;
	sse_unsub(arg);
}

/* Whether sub follows the room of id ("": an event of every room). */
static int
sse_follows(const struct sse *s, const struct sse_sub *sub, const char *id)
{
	if (id[0] == '\0' || (sub->room != NULL && strcmp(sub->room, "*") == 0))
		return 1;
	if (sub->room == NULL)
		return strcmp(id, s->dflt) == 0;
	for (size_t i = 0; i < s->nrooms; i++)
		if (strcmp(s->rooms[i].id, id) == 0)
			return home_matches(sub->room, id, s->rooms[i].name) != 0;
	return strcmp(id, sub->room) == 0;
}

/*
 * Writes sub the events after its place, up to SSE_CHUNK bytes; or,
 * when its place left the ring, a comment saying so, and ends it.
 */
static void
sse_feed(struct sse_sub *sub)
{
	struct sse *s = sub->s;
	char line[160];
	int n;

	if (sub->next < s->oldest) {
		log_msg(LOG_INFO, "sse: a client fell %" PRIu64 " events "
		    "behind; closing its stream", s->seq + 1 - sub->next);
		n = snprintf(line, sizeof(line), ": this client fell %" PRIu64
		    " events behind, more than are kept; the stream ends: read "
		    "/api/history, then reconnect\n\n", s->seq + 1 - sub->next);
		http_stream_write(sub->st, line, (size_t)n);
		http_stream_close(sub->st);
		sse_unsub(sub);
		return;
	}
	while (sub->next <= s->seq &&
	    http_stream_queued(sub->st) < SSE_CHUNK) {
		const struct sse_event *e = &s->ring[sub->next % SSE_KEEP];

		if (sse_follows(s, sub, e->room) &&
		    sse_write(s, sub, e) == -1)
			break;
		sub->next++;
	}
}

/* sub's stream drained: the next part of what it has not had. */
static void
sse_more(struct http_stream *st, void *arg)
{
	(void)st;
	sse_feed(arg);
}

static void
sse_heartbeat(void *arg)
{
	struct sse *s = arg;
	struct sse_sub *sub;

	LIST_FOREACH(sub, &s->subs, entry)
		http_stream_write(sub->st, ": keep-alive\n\n", 14);
	if (!LIST_EMPTY(&s->subs))
		loop_timer_set(s->heartbeat, loop_now_ns() + SSE_HEARTBEAT_NS);
}

struct sse *
sse_new(struct loop *l)
{
	struct sse *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->loop = l;
	s->boot = loop_wall_ms();
	if ((s->heartbeat = loop_timer_new(l, sse_heartbeat, s)) == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

void
sse_free(struct sse *s)
{
	char retry[32];
	int n;

	if (s == NULL)
		return;
	n = snprintf(retry, sizeof(retry), "retry: %d\n\n", SSE_RETRY_MS);
	while (!LIST_EMPTY(&s->subs)) {
		struct sse_sub *sub = LIST_FIRST(&s->subs);

		http_stream_write(sub->st, retry, (size_t)n);
		http_stream_close(sub->st);
		sse_unsub(sub);
	}
	for (size_t i = 0; i < SSE_KEEP; i++)
		free(s->ring[i].data);
	loop_timer_free(s->heartbeat);
	free(s);
}

void
sse_rooms(struct sse *s, const cJSON *o)
{
	const cJSON *it, *d;

	s->nrooms = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "rooms")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");

		if (s->nrooms == PAPO_ROOMS_MAX || !cJSON_IsString(id) ||
		    !cJSON_IsString(name))
			continue;
		snprintf(s->rooms[s->nrooms].id, sizeof(s->rooms[0].id), "%s",
		    id->valuestring);
		snprintf(s->rooms[s->nrooms].name, sizeof(s->rooms[0].name),
		    "%s", name->valuestring);
		s->nrooms++;
	}
	d = cJSON_GetObjectItemCaseSensitive(o, "default");
	snprintf(s->dflt, sizeof(s->dflt), "%s", cJSON_IsString(d) ?
	    d->valuestring : "");
}

void
sse_publish(struct sse *s, enum node_kind kind, const char *room,
    const char *json)
{
	struct sse_event *e;
	struct sse_sub *sub, *next;
	const char *name = sse_name(kind);
	char *data;

	if (name == NULL || json == NULL || (data = strdup(json)) == NULL)
		return;
	s->seq++;
	e = &s->ring[s->seq % SSE_KEEP];
	if (e->data != NULL)
		s->bytes -= strlen(e->data);
	free(e->data);
	e->seq = s->seq;
	e->name = name;
	e->data = data;
	snprintf(e->room, sizeof(e->room), "%s", room != NULL ? room : "");
	s->bytes += strlen(data);
	if (s->oldest == 0)
		s->oldest = 1;
	/* The ring keeps SSE_KEEP events, and SSE_KEEP_BYTES. */
	while (s->oldest + SSE_KEEP <= s->seq || (s->bytes > SSE_KEEP_BYTES &&
	    s->oldest < s->seq)) {
		struct sse_event *old = &s->ring[s->oldest % SSE_KEEP];

		if (old != e) {
			s->bytes -= strlen(old->data);
			free(old->data);
			old->data = NULL;
			old->seq = 0;
		}
		s->oldest++;
	}
	/* A client behind gets it from the ring when it has read what
	 * waits; one whose place left the ring is let go (sse_feed). */
	for (sub = LIST_FIRST(&s->subs); sub != NULL; sub = next) {
		next = LIST_NEXT(sub, entry);
		if (sub->next < s->oldest ||
		    http_stream_queued(sub->st) < SSE_CHUNK)
			sse_feed(sub);
	}
}

/* The sequence number after which a client resumes: 0 for everything
 * kept (no id, or an id of an earlier run). */
static uint64_t
sse_resume_from(const struct sse *s, const char *last)
{
	uint64_t boot, seq;
	char tail;

	if (last == NULL ||
	    sscanf(last, "%" SCNu64 "-%" SCNu64 "%c", &boot, &seq, &tail) != 2 ||
	    boot != s->boot || seq > s->seq)
		return 0;
	return seq;
}

static void
sse_events(struct http_req *r, void *arg)
{
	struct sse *s = arg;
	struct sse_sub *sub;
	struct http_stream *st;
	uint64_t from, first;
	char retry[32];
	int n;

	if ((sub = calloc(1, sizeof(*sub))) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	if ((st = http_stream_open(r, sse_gone, sub)) == NULL) {
		free(sub);
		http_reply_error(r, 500, "cannot open the stream");
		return;
	}
	sub->st = st;
	sub->s = s;
	if (http_req_room(r) != NULL)
		sub->room = strdup(http_req_room(r));
	sub->html = http_req_query(r, "html") != NULL &&
	    strcmp(http_req_query(r, "html"), "1") == 0;
	LIST_INSERT_HEAD(&s->subs, sub, entry);
	http_stream_on_drain(st, sse_more);
	n = snprintf(retry, sizeof(retry), "retry: %d\n\n", SSE_RETRY_MS);
	http_stream_write(st, retry, (size_t)n);
	/* What the client missed goes out oldest first, as it reads; with
	 * ?since=now and no Last-Event-ID (papo tail, which reads the last
	 * messages from the history), only what comes from now on. */
	from = sse_resume_from(s, http_req_header(r, "Last-Event-ID"));
	first = s->oldest != 0 ? s->oldest : 1;
	if (from + 1 > first)
		first = from + 1;
	if (http_req_header(r, "Last-Event-ID") == NULL &&
	    http_req_query(r, "since") != NULL &&
	    strcmp(http_req_query(r, "since"), "now") == 0)
		first = s->seq + 1;
	sub->next = first;
	sse_feed(sub);
	loop_timer_set(s->heartbeat, loop_now_ns() + SSE_HEARTBEAT_NS);
}

static const struct http_route sse_route_table[] = {
	{ "GET", "/api/events", sse_events, 0 },
};

const struct http_route *
sse_routes(size_t *n)
{
	*n = sizeof(sse_route_table) / sizeof(sse_route_table[0]);
	return sse_route_table;
}
