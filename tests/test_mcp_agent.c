/*
 * test_mcp_agent.c: an agent's inbox (server/mcp/mcp_agent.c, linked
 * with mcp_room.c alone; docs/MCP.md, "Delivery"): two rooms filled
 * past the per-room cap, with the counts an agent is told ("unread"),
 * which message the cap lets go, room order, and each message queued
 * once however it comes back (given back, read back, taken, forgotten,
 * the room left).  Then a CPU budget per message put in a daemon's
 * queue that is full in eight rooms, which a scan of the queue per
 * message misses by far.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "server/mcp/mcp_int.h"
#include "tests/check.h"

/* At most this much CPU per message put in a full queue.  Measured:
 * 1.2-1.4 µs (RelWithDebInfo), 11 µs (ASan+UBSan, Debug), where a scan
 * of the 4,000 queued per message took 132 µs (RelWithDebInfo).  What
 * is left is moving the queue's pointers past the one the cap lets go. */
#define BUDGET_S 50e-6

static const char *const ROOM1 = "aaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *const ROOM2 = "bbbbbbbbbbbbbbbbbbbbbbbbbb";

/* The n-th message id: 10 base32 characters, distinct for each n. */
static void
msg_id(unsigned n, char id[PAPO_MSGID_LEN + 1])
{
	static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

	for (int i = PAPO_MSGID_LEN - 1; i >= 0; i--, n /= 32)
		id[i] = b32[n % 32];
	id[PAPO_MSGID_LEN] = '\0';
}

/* Message n of room, as mcp_message makes it (a ref the caller drops). */
static struct mcp_msg *
msg(struct mcp *m, const char *room, unsigned n, uint64_t order)
{
	char id[PAPO_MSGID_LEN + 1], json[256];

	msg_id(n, id);
	snprintf(json, sizeof(json), "{\"id\":\"%s\",\"from\":\"bob\","
	    "\"from_id\":\"b0b\",\"ts\":1765000000000,\"text\":\"message %u\"}",
	    id, n);
	return mcp_msg_new(m, cJSON_Parse(json), room, order);
}

static void
put(struct mcp_agent *a, struct mcp_msg *g)
{
	mcp_queue_put(a, g);
	mcp_msg_unref(g);
}

/* Whether the queue is in room order, each id in it once. */
static int
queue_sane(const struct mcp_agent *a)
{
	for (size_t i = 1; i < a->nqueue; i++) {
		if (a->queue[i - 1]->order >= a->queue[i]->order)
			return 0;
		for (size_t j = 0; j < i; j++)
			if (strcmp(a->queue[i]->id, a->queue[j]->id) == 0)
				return 0;
	}
	return 1;
}

/* The first queued message of room: its text's number, or -1. */
static int
first_of(const struct mcp_agent *a, const char *room)
{
	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, room) == 0)
			return atoi(cJSON_GetObjectItemCaseSensitive(
			    a->queue[i]->json, "text")->valuestring + 8);
	return -1;
}

static void
take_free(struct mcp_msg **msgs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mcp_msg_unref(msgs[i]);
	free(msgs);
}

/* Messages 1..600 in room 1 and 1001..1600 in room 2, taking turns. */
static void
test_cap(struct mcp *m, struct mcp_agent *a)
{
	struct mcp_msg **out;
	char ids[2 * (PAPO_MSGID_LEN + 1) + 1];
	size_t n;

	for (unsigned i = 1; i <= 600; i++) {
		put(a, msg(m, ROOM1, i, 2 * i));
		put(a, msg(m, ROOM2, 1000 + i, 2 * i + 1));
	}
	CHECK_EQ_INT(mcp_unread(a, ROOM1), MCP_UNSEEN_MAX);
	CHECK_EQ_INT(mcp_unread(a, ROOM2), MCP_UNSEEN_MAX);
	CHECK_EQ_INT(mcp_unread(a, NULL), 2 * MCP_UNSEEN_MAX);
	CHECK_EQ_INT(mcp_unread(a, ""), 2 * MCP_UNSEEN_MAX);
	CHECK_EQ_INT(a->nqueue, 2 * MCP_UNSEEN_MAX);
	CHECK_EQ_INT(a->dropped, 200);
	/* The oldest went: each room keeps its newest 500. */
	CHECK_EQ_INT(first_of(a, ROOM1), 101);
	CHECK_EQ_INT(first_of(a, ROOM2), 1101);
	CHECK(queue_sane(a));

	/* Once: the same message again (read back from the log, another
	 * arrival order) is not queued twice. */
	put(a, msg(m, ROOM1, 300, 5000));
	put(a, msg(m, ROOM2, 1600, 1));
	CHECK_EQ_INT(a->nqueue, 2 * MCP_UNSEEN_MAX);
	CHECK_EQ_INT(a->dropped, 200);
	/* Given back older than all its full room holds: it is the one
	 * let go. */
	put(a, msg(m, ROOM1, 50, 100));
	CHECK_EQ_INT(a->dropped, 201);
	CHECK_EQ_INT(first_of(a, ROOM1), 101);
	/* A new one in a full room lets the oldest go. */
	put(a, msg(m, ROOM1, 601, 1202));
	CHECK_EQ_INT(a->dropped, 202);
	CHECK_EQ_INT(first_of(a, ROOM1), 102);
	CHECK_EQ_INT(mcp_unread(a, ROOM1), MCP_UNSEEN_MAX);

	/* A wait on room 2 takes all of it, in order; given back unsent,
	 * they go back before what came since, once. */
	n = mcp_queue_take(a, NULL, ROOM2, &out);
	CHECK_EQ_INT(n, MCP_UNSEEN_MAX);
	CHECK_EQ_INT(mcp_unread(a, ROOM2), 0);
	CHECK_EQ_INT(mcp_unread(a, ROOM1), MCP_UNSEEN_MAX);
	CHECK(n > 0 && strcmp(out[0]->room, ROOM2) == 0);
	put(a, msg(m, ROOM2, 1700, 1300));
	for (size_t i = 0; i < n; i++)
		mcp_queue_put(a, out[i]);
	CHECK_EQ_INT(a->dropped, 203);          /* 1101, for 1700 */
	/* Given back twice (all but 1101, which the cap let go): once. */
	for (size_t i = 1; i < n; i++)
		mcp_queue_put(a, out[i]);
	take_free(out, n);
	CHECK_EQ_INT(mcp_unread(a, ROOM2), MCP_UNSEEN_MAX);
	CHECK_EQ_INT(a->dropped, 203);
	CHECK_EQ_INT(first_of(a, ROOM2), 1102);
	CHECK(queue_sane(a));

	/* Given some other way (history): out of the queue, and of its
	 * count. */
	msg_id(200, ids);
	ids[PAPO_MSGID_LEN] = ' ';
	msg_id(1200, ids + PAPO_MSGID_LEN + 1);
	mcp_queue_forget(a, ids);
	CHECK_EQ_INT(mcp_unread(a, ROOM1), MCP_UNSEEN_MAX - 1);
	CHECK_EQ_INT(mcp_unread(a, ROOM2), MCP_UNSEEN_MAX - 1);
	/* Forgotten, it may come again (a history answer not sent). */
	put(a, msg(m, ROOM1, 200, 400));
	CHECK_EQ_INT(mcp_unread(a, ROOM1), MCP_UNSEEN_MAX);
	CHECK(queue_sane(a));

	/* Out of room 1: its messages go, and none comes again. */
	mcp_agent_leave(a, ROOM1);
	CHECK_EQ_INT(mcp_unread(a, ROOM1), 0);
	CHECK_EQ_INT(a->nqueue, MCP_UNSEEN_MAX - 1);
	put(a, msg(m, ROOM1, 602, 1204));
	CHECK_EQ_INT(mcp_unread(a, ROOM1), 0);
	CHECK_EQ_INT(a->nqueue, MCP_UNSEEN_MAX - 1);

	/* Taken whole, each once. */
	n = mcp_queue_take(a, NULL, NULL, &out);
	CHECK_EQ_INT(n, MCP_UNSEEN_MAX - 1);
	CHECK_EQ_INT(a->nqueue, 0);
	CHECK_EQ_INT(mcp_unread(a, ROOM2), 0);
	take_free(out, n);
	n = mcp_queue_take(a, NULL, NULL, &out);
	CHECK_EQ_INT(n, 0);
}

/* A daemon left running in eight busy rooms: its queue full in each,
 * then 4,000 more messages. */
static void
test_budget(struct mcp *m, struct mcp_agent *a)
{
	enum { MORE = 4000 };
	static struct mcp_msg *more[MORE];
	char rooms[8][PAPO_ROOMID_LEN + 1];
	unsigned n = 0;
	uint64_t order = 0;
	double t0, per;

	for (int r = 0; r < 8; r++) {
		memset(rooms[r], 'c' + r, PAPO_ROOMID_LEN);
		rooms[r][PAPO_ROOMID_LEN] = '\0';
		mcp_pos_add(a, rooms[r]);
	}
	for (int i = 0; i < MCP_UNSEEN_MAX; i++)
		for (int r = 0; r < 8; r++)
			put(a, msg(m, rooms[r], ++n, ++order));
	CHECK_EQ_INT(a->nqueue, 8 * MCP_UNSEEN_MAX);
	/* Made before: the clock runs on the puts alone. */
	for (int i = 0; i < MORE; i++)
		more[i] = msg(m, rooms[i % 8], ++n, ++order);
	t0 = check_cpu_s();
	for (int i = 0; i < MORE; i++)
		mcp_queue_put(a, more[i]);
	per = (check_cpu_s() - t0) / MORE;
	for (int i = 0; i < MORE; i++)
		mcp_msg_unref(more[i]);
	printf("test_mcp_agent: %.2f µs of CPU per message put in a queue of "
	    "%zu (budget %.0f µs)\n", per * 1e6, a->nqueue, BUDGET_S * 1e6);
	CHECK(per < BUDGET_S);
	CHECK_EQ_INT(a->nqueue, 8 * MCP_UNSEEN_MAX);
	CHECK_EQ_INT(mcp_unread(a, rooms[3]), MCP_UNSEEN_MAX);
}

int
main(void)
{
	struct mcp *m = calloc(1, sizeof(*m));
	struct mcp_agent *a;

	if (m == NULL)
		return 1;
	LIST_INIT(&m->agents);
	TAILQ_INIT(&m->sessions);
	a = mcp_agent(m, "");
	CHECK(a != NULL);
	if (a != NULL) {
		CHECK(mcp_pos_add(a, ROOM1) != NULL);
		CHECK(mcp_pos_add(a, ROOM2) != NULL);
		test_cap(m, a);
		test_budget(m, a);
	}
	while ((a = LIST_FIRST(&m->agents)) != NULL) {
		LIST_REMOVE(a, entry);
		mcp_agent_free(a);
	}
	free(m);
	return check_exit();
}
