/*
 * sse.c: GET /api/events (sse.h).  It keeps the last SSE_KEEP events in a
 * ring, each with an id "BOOT-SEQ" (BOOT the daemon's start time in ms,
 * SEQ counting from 1), and the list of open streams.  A client that
 * sends Last-Event-ID from this run gets what came after it, once; one
 * from an earlier run (the daemon restarted) gets every event kept.  Idle
 * streams get a comment every 25 s, so a client that went away is found
 * out; the timer runs only while a stream is open.  Main thread only;
 * it never blocks: writing to a stream only queues bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "server/sse.h"

struct sse_event {
	uint64_t seq;                 /* 0: empty slot */
	const char *name;
	char *data;
};

struct sse_sub {
	struct http_stream *st;
	struct sse *s;
	LIST_ENTRY(sse_sub) entry;
};

struct sse {
	struct loop *loop;
	struct loop_timer *heartbeat;
	uint64_t boot;
	uint64_t seq;
	struct sse_event ring[SSE_KEEP];
	LIST_HEAD(, sse_sub) subs;
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
	default:
		return NULL;
	}
}

/* Writes one event in SSE form. */
static int
sse_write(struct sse *s, struct http_stream *st, const struct sse_event *e)
{
	char head[96];
	int n;

	n = snprintf(head, sizeof(head), "id: %" PRIu64 "-%" PRIu64 "\nevent: %s\ndata: ",
	    s->boot, e->seq, e->name);
	if (http_stream_write(st, head, (size_t)n) == -1 ||
	    http_stream_write(st, e->data, strlen(e->data)) == -1)
		return -1;
	return http_stream_write(st, "\n\n", 2);
}

static void
sse_unsub(struct sse_sub *sub)
{
	struct sse *s = sub->s;

	LIST_REMOVE(sub, entry);
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
sse_publish(struct sse *s, enum node_kind kind, const char *json)
{
	struct sse_event *e;
	struct sse_sub *sub;
	const char *name = sse_name(kind);
	char *data;

	if (name == NULL || json == NULL || (data = strdup(json)) == NULL)
		return;
	s->seq++;
	e = &s->ring[s->seq % SSE_KEEP];
	free(e->data);
	e->seq = s->seq;
	e->name = name;
	e->data = data;
	/* A write that finds its client too far behind only marks the
	 * stream closing; the list is not changed under us. */
	LIST_FOREACH(sub, &s->subs, entry)
		sse_write(s, sub->st, e);
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
	LIST_INSERT_HEAD(&s->subs, sub, entry);
	n = snprintf(retry, sizeof(retry), "retry: %d\n\n", SSE_RETRY_MS);
	http_stream_write(st, retry, (size_t)n);
	/* Replay what the client missed, oldest first. */
	from = sse_resume_from(s, http_req_header(r, "Last-Event-ID"));
	first = s->seq >= SSE_KEEP ? s->seq - SSE_KEEP + 1 : 1;
	if (from + 1 > first)
		first = from + 1;
	for (uint64_t q = first; q <= s->seq; q++)
		sse_write(s, st, &s->ring[q % SSE_KEEP]);
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
