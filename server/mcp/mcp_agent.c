/*
 * mcp_agent.c: the agents MCP gives messages to (mcp_int.h; docs/MCP.md,
 * "Delivery"): the daemon's own ("") and those named by ?agent=, each
 * with its queue of messages not given yet (in room order, capped per
 * room) and its position in each room; the messages, parsed once and
 * shared by reference; read receipts for what was given.  A change
 * marks agents.json to be written (mcp_store.c's, above).
 *
 * Knows nothing of waits, pushes or sessions: the files above it give
 * an agent's messages out.  Main thread only; nothing here blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_int.h"

#define MCP_SAVE_NS (200ull * NS_PER_MS)      /* agents.json at most so often */

/* Shared messages. */

static struct mcp_msg *
mcp_msg_ref(struct mcp_msg *g)
{
	g->refs++;
	return g;
}

void
mcp_msg_unref(struct mcp_msg *g)
{
	if (g != NULL && --g->refs == 0) {
		cJSON_Delete(g->json);
		free(g);
	}
}

/* Read receipts for messages given to an agent ("ID ID ..."). */
void
mcp_mark_read(struct mcp *m, const char *ids)
{
	struct node_msg *req;

	if (ids == NULL || ids[0] == '\0' ||
	    (req = node_msg_new(NODE_READ)) == NULL)
		return;
	if ((node_args_read(req)->ids = strdup(ids)) == NULL) {
		node_msg_free(req);
		return;
	}
	node_submit(m->node, req);
}

/* The ids of messages ("ID ID ..."), for read receipts; NULL on none. */
char *
mcp_ids(const cJSON *messages, struct mcp_msg *const *msgs, size_t n)
{
	const cJSON *msg;
	size_t len = 0, count = messages != NULL ?
	    (size_t)cJSON_GetArraySize(messages) : n;
	char *ids;

	if (count == 0 || (ids = malloc(count * (PAPO_MSGID_LEN + 1) + 1)) ==
	    NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(ids + len, msgs[i]->id, PAPO_MSGID_LEN);
		len += PAPO_MSGID_LEN;
		ids[len++] = ' ';
	}
	cJSON_ArrayForEach(msg, messages) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");

		if (cJSON_IsString(id) && strlen(id->valuestring) ==
		    PAPO_MSGID_LEN) {
			memcpy(ids + len, id->valuestring, PAPO_MSGID_LEN);
			len += PAPO_MSGID_LEN;
			ids[len++] = ' ';
		}
	}
	ids[len] = '\0';
	return ids;
}

/* An agent's queue: what no wait, history or push gave it yet. */

/* Whether g is of room (NULL or "": any) and of member from (NULL:
 * any). */
int
mcp_matches(const char *from, const char *room, const struct mcp_msg *g)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(g->json, "from");
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(g->json, "from_id");

	if (room != NULL && room[0] != '\0' && strcmp(room, g->room) != 0)
		return 0;
	return from == NULL || (cJSON_IsString(n) &&
	    strcmp(n->valuestring, from) == 0) || (cJSON_IsString(i) &&
	    strcmp(i->valuestring, from) == 0);
}

/* a's position in room; NULL when it has none there. */
struct mcp_pos *
mcp_pos(struct mcp_agent *a, const char *room)
{
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) == 0)
			return &a->pos[i];
	return NULL;
}

/* Each queued message is of a room a has a position in (mcp_queue_put),
 * and that position counts it. */
size_t
mcp_unread(const struct mcp_agent *a, const char *room)
{
	if (room == NULL || room[0] == '\0')
		return a->nqueue;
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) == 0)
			return a->pos[i].queued;
	return 0;
}

/* a's position in room, made (nothing seen yet) when new; NULL when the
 * agent has one in every room a daemon holds already. */
struct mcp_pos *
mcp_pos_add(struct mcp_agent *a, const char *room)
{
	struct mcp_pos *p = mcp_pos(a, room);

	if (p != NULL || a->npos == PAPO_ROOMS_MAX)
		return p;
	p = &a->pos[a->npos++];
	memset(p, 0, sizeof(*p));
	snprintf(p->room, sizeof(p->room), "%s", room);
	return p;
}

int
mcp_restoring(const struct mcp_agent *a)
{
	for (size_t i = 0; i < a->npos; i++)
		if (a->pos[i].restoring)
			return 1;
	return 0;
}

/*
 * The queue's ids: a set by open addressing with linear probing, kept
 * at most half full, so that a message is queued once (a message given
 * back, or read back from the log, may be queued already) without
 * comparing its id with every queued one's.
 */
static size_t
mcp_ids_home(const struct mcp_agent *a, const char *id)
{
	uint64_t h = 14695981039346656037ull;   /* FNV-1a */

	for (size_t i = 0; i < PAPO_MSGID_LEN; i++)
		h = (h ^ (unsigned char)id[i]) * 1099511628211ull;
	return (size_t)h & (a->capbyid - 1);
}

/* Where id is in the set, or the free slot where it would go. */
static size_t
mcp_ids_slot(const struct mcp_agent *a, const char *id)
{
	size_t i = mcp_ids_home(a, id);

	while (a->byid[i] != NULL &&
	    memcmp(a->byid[i]->id, id, PAPO_MSGID_LEN) != 0)
		i = (i + 1) & (a->capbyid - 1);
	return i;
}

static int
mcp_ids_has(const struct mcp_agent *a, const char *id)
{
	return a->capbyid != 0 && a->byid[mcp_ids_slot(a, id)] != NULL;
}

/* Takes g's id out, moving back the ids after it that a probe would no
 * longer reach across the hole (no tombstones to pile up). */
static void
mcp_ids_del(struct mcp_agent *a, const struct mcp_msg *g)
{
	size_t mask = a->capbyid - 1, hole, j, k;

	if (a->capbyid == 0 || a->byid[hole = mcp_ids_slot(a, g->id)] == NULL)
		return;
	a->byid[hole] = NULL;
	for (j = (hole + 1) & mask; a->byid[j] != NULL; j = (j + 1) & mask) {
		k = mcp_ids_home(a, a->byid[j]->id);
		/* It stays when its home lies after the hole, up to j. */
		if (hole <= j ? (hole < k && k <= j) : (hole < k || k <= j))
			continue;
		a->byid[hole] = a->byid[j];
		a->byid[j] = NULL;
		hole = j;
	}
}

/* The set sized for a queue of cap: rebuilt from the queue. */
static int
mcp_ids_grow(struct mcp_agent *a, size_t cap)
{
	size_t n = 8;
	struct mcp_msg **t;

	while (n < cap * 2)
		n *= 2;
	if (n <= a->capbyid)
		return 0;
	if ((t = calloc(n, sizeof(*t))) == NULL)
		return -1;
	free(a->byid);
	a->byid = t;
	a->capbyid = n;
	for (size_t i = 0; i < a->nqueue; i++)
		a->byid[mcp_ids_slot(a, a->queue[i]->id)] = a->queue[i];
	return 0;
}

/* g leaves a's queue (the caller takes it out of the array): out of the
 * id set and of its room's count. */
static void
mcp_queue_out(struct mcp_agent *a, const struct mcp_msg *g)
{
	struct mcp_pos *p = mcp_pos(a, g->room);

	mcp_ids_del(a, g);
	if (p != NULL && p->queued > 0)
		p->queued--;
}

/* Room for one more in a's queue and its id set. */
static int
mcp_queue_room(struct mcp_agent *a)
{
	size_t cap = a->capqueue != 0 ? a->capqueue * 2 : 8;
	struct mcp_msg **q;

	if (a->nqueue < a->capqueue)
		return 0;
	if (cap > MCP_UNSEEN_MAX * PAPO_ROOMS_MAX)
		cap = MCP_UNSEEN_MAX * PAPO_ROOMS_MAX;
	if (cap <= a->nqueue || mcp_ids_grow(a, cap) == -1 ||
	    (q = realloc(a->queue, cap * sizeof(*q))) == NULL)
		return -1;
	a->queue = q;
	a->capqueue = cap;
	return 0;
}

/*
 * Puts g in a's queue in room order (after everything that arrived
 * before it: a message given back goes before what came since), once.
 * A full queue lets its oldest go, counted in dropped.  A message that
 * finds the queue empty starts a burst, which may wake the agent.
 */
void
mcp_queue_put(struct mcp_agent *a, struct mcp_msg *g)
{
	struct mcp_pos *p = mcp_pos(a, g->room);
	size_t i;

	if (p == NULL || mcp_ids_has(a, g->id))
		return;
	/* The cap is per room: a busy room does not push out another's.
	 * Its oldest is near the head when it is the busy one. */
	if (p->queued == MCP_UNSEEN_MAX) {
		for (i = 0; strcmp(a->queue[i]->room, g->room) != 0; i++)
			;
		if (g->order < a->queue[i]->order) {
			a->dropped++;
			return;
		}
		mcp_queue_out(a, a->queue[i]);
		mcp_msg_unref(a->queue[i]);
		memmove(a->queue + i, a->queue + i + 1, (--a->nqueue - i) *
		    sizeof(*a->queue));
		a->dropped++;
	}
	if (mcp_queue_room(a) == -1) {
		a->dropped++;
		return;
	}
	if (a->nqueue == 0)
		a->burst++;
	for (i = a->nqueue; i > 0 && a->queue[i - 1]->order > g->order; i--)
		;
	memmove(a->queue + i + 1, a->queue + i, (a->nqueue - i) *
	    sizeof(*a->queue));
	a->queue[i] = mcp_msg_ref(g);
	a->nqueue++;
	a->byid[mcp_ids_slot(a, g->id)] = g;
	p->queued++;
	mcp_agents_dirty(a->m);
}

/* Takes from a's queue the messages of from (NULL: all) in room (NULL
 * or "": every room), oldest first: their number, in a new array in
 * *out. */
size_t
mcp_queue_take(struct mcp_agent *a, const char *from, const char *room,
    struct mcp_msg ***out)
{
	size_t n = 0, keep = 0;

	*out = NULL;
	if (a->nqueue == 0 || (*out = malloc(a->nqueue * sizeof(**out))) ==
	    NULL)
		return 0;
	for (size_t i = 0; i < a->nqueue; i++) {
		if (mcp_matches(from, room, a->queue[i])) {
			mcp_queue_out(a, a->queue[i]);
			(*out)[n++] = a->queue[i];
		} else
			a->queue[keep++] = a->queue[i];
	}
	a->nqueue = keep;
	if (n == 0) {
		free(*out);
		*out = NULL;
	} else
		mcp_agents_dirty(a->m);
	return n;
}

/* Drops from a's queue the messages whose ids are in ids (given to the
 * agent some other way: a history answer). */
void
mcp_queue_forget(struct mcp_agent *a, const char *ids)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->nqueue; i++) {
		const char *p = strstr(ids, a->queue[i]->id);

		if (p != NULL && (p - ids) % (PAPO_MSGID_LEN + 1) == 0) {
			mcp_queue_out(a, a->queue[i]);
			mcp_msg_unref(a->queue[i]);
		} else
			a->queue[keep++] = a->queue[i];
	}
	if (keep != a->nqueue)
		mcp_agents_dirty(a->m);
	a->nqueue = keep;
}

/* A message of room (its id; NULL: the one json names) as the queues
 * keep it, tagged with its room; NULL when json is not one. */
struct mcp_msg *
mcp_msg_new(struct mcp *m, cJSON *json, const char *room, uint64_t order)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(json, "id");
	const cJSON *rid = cJSON_GetObjectItemCaseSensitive(json, "room_id");
	struct mcp_msg *g;

	if (room == NULL)
		room = cJSON_IsString(rid) ? rid->valuestring : "";
	if (!cJSON_IsString(id) || strlen(id->valuestring) != PAPO_MSGID_LEN ||
	    strlen(room) != PAPO_ROOMID_LEN ||
	    (g = calloc(1, sizeof(*g))) == NULL) {
		cJSON_Delete(json);
		return NULL;
	}
	g->refs = 1;
	g->order = order;
	g->json = json;
	snprintf(g->room, sizeof(g->room), "%s", room);
	mcp_room_tag(m, json, g->room);
	g->id = id->valuestring;
	return g;
}

/* Agents, and what they were not given, kept in agents.json. */

struct mcp_agent *
mcp_agent(struct mcp *m, const char *name)
{
	struct mcp_agent *a;
	size_t n = 0;

	LIST_FOREACH(a, &m->agents, entry)
		if (strcmp(a->name, name) == 0)
			return a;
	LIST_FOREACH(a, &m->agents, entry)
		n++;
	if (n >= MCP_AGENTS_MAX) {
		log_msg(LOG_WARN, "mcp: %d agents already: '%s' refused",
		    MCP_AGENTS_MAX, name);
		return NULL;
	}
	if (strlen(name) > MCP_AGENT_MAX || (a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->m = m;
	snprintf(a->name, sizeof(a->name), "%s", name);
	/* A new agent starts from now in every room: what came before is
	 * history's.  Before the rooms are known (at start), its positions
	 * come with theirs (mcp_rooms). */
	for (size_t i = 0; i < m->nrooms; i++)
		snprintf(mcp_pos_add(a, m->rooms[i].id)->seen,
		    sizeof(a->pos[0].seen), "%s", m->rooms[i].last);
	LIST_INIT(&a->wakers);
	LIST_INSERT_HEAD(&m->agents, a, entry);
	mcp_agents_dirty(m);
	return a;
}

void
mcp_agent_active(struct mcp_agent *a)
{
	a->active = loop_now_ns();
	if (a->wake_ms != 0)
		a->wake_taken = 1;
}

void
mcp_agents_dirty(struct mcp *m)
{
	if (m->dirty || m->save == NULL)
		return;
	m->dirty = 1;
	loop_timer_set(m->save, loop_now_ns() + MCP_SAVE_NS);
}


/* a is out of room: its position there and what it had queued of it
 * go. */
void
mcp_agent_leave(struct mcp_agent *a, const char *room)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, room) == 0) {
			mcp_queue_out(a, a->queue[i]);
			mcp_msg_unref(a->queue[i]);
		} else
			a->queue[keep++] = a->queue[i];
	a->nqueue = keep;
	keep = 0;
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) != 0)
			a->pos[keep++] = a->pos[i];
	a->npos = keep;
}

void
mcp_agent_free(struct mcp_agent *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nqueue; i++)
		mcp_msg_unref(a->queue[i]);
	free(a->queue);
	free(a->byid);
	free(a);
}
