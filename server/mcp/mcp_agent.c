/*
 * mcp_agent.c: the agents MCP gives messages to (mcp_int.h; docs/MCP.md,
 * "Delivery"): the daemon's own ("") and those named by ?agent=, each
 * with its queue of messages not given yet (in room order, capped per
 * room) and its position in each room; the messages, parsed once and
 * shared by reference; read receipts for what was given; and
 * agents.json, where queues and positions are kept, written by a timer
 * (at most 5 times a second) and read back from the log at start.
 *
 * Knows nothing of waits, pushes or sessions: the files above it give
 * an agent's messages out.  Main thread only; nothing here blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_int.h"

#define MCP_SAVE_NS (200ull * NS_PER_MS)      /* agents.json at most so often */
#define MCP_AGENTS_FILE_MAX (1024 * 1024)

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
	if ((req->text = strdup(ids)) == NULL) {
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

size_t
mcp_unread(const struct mcp_agent *a, const char *room)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nqueue; i++)
		n += mcp_matches(NULL, room, a->queue[i]);
	return n;
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

static int
mcp_queue_has(const struct mcp_agent *a, const char *id)
{
	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->id, id) == 0)
			return 1;
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
	size_t i;

	if (mcp_queue_has(a, g->id))
		return;
	/* The cap is per room: a busy room does not push out another's. */
	if (mcp_unread(a, g->room) == MCP_UNSEEN_MAX) {
		for (i = 0; strcmp(a->queue[i]->room, g->room) != 0; i++)
			;
		if (g->order < a->queue[i]->order) {
			a->dropped++;
			return;
		}
		mcp_msg_unref(a->queue[i]);
		memmove(a->queue + i, a->queue + i + 1, (--a->nqueue - i) *
		    sizeof(*a->queue));
		a->dropped++;
	}
	if (a->nqueue == a->capqueue) {
		size_t cap = a->capqueue != 0 ? a->capqueue * 2 : 8;
		struct mcp_msg **q;

		if (cap > MCP_UNSEEN_MAX * PAPO_ROOMS_MAX)
			cap = MCP_UNSEEN_MAX * PAPO_ROOMS_MAX;
		if ((q = realloc(a->queue, cap * sizeof(*q))) == NULL) {
			a->dropped++;
			return;
		}
		a->queue = q;
		a->capqueue = cap;
	}
	if (a->nqueue == 0)
		a->burst++;
	for (i = a->nqueue; i > 0 && a->queue[i - 1]->order > g->order; i--)
		;
	memmove(a->queue + i + 1, a->queue + i, (a->nqueue - i) *
	    sizeof(*a->queue));
	a->queue[i] = mcp_msg_ref(g);
	a->nqueue++;
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
		if (mcp_matches(from, room, a->queue[i]))
			(*out)[n++] = a->queue[i];
		else
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

		if (p != NULL && (p - ids) % (PAPO_MSGID_LEN + 1) == 0)
			mcp_msg_unref(a->queue[i]);
		else
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

int
mcp_agent_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= MCP_AGENT_MAX && strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	    == n;
}

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

/*
 * The room whose position an agents.json of before rooms (its "seen"
 * and "unread" of the agent itself) is: the default room, else the
 * first (the home's own).  Written there too, for an older papo.
 */
static const char *
mcp_home_room(const struct mcp *m)
{
	if (m->dflt[0] != '\0')
		return m->dflt;
	return m->nrooms > 0 ? m->rooms[0].id : "";
}

/* One room's position of a as agents.json has it: {"seen", "unread"}. */
static cJSON *
mcp_pos_json(struct mcp *m, const struct mcp_agent *a,
    const struct mcp_pos *p)
{
	const struct mcp_room *r = mcp_room_get(m, p->room);
	const struct mcp_flight *f;
	cJSON *o = cJSON_CreateObject(), *ids;

	cJSON_AddStringToObject(o, "seen", p->seen[0] != '\0' || r == NULL ?
	    p->seen : r->last);
	ids = cJSON_AddArrayToObject(o, "unread");
	LIST_FOREACH(f, &m->flights, entry)
		for (size_t i = 0; f->a == a && i < f->n; i++)
			if (strcmp(f->msgs[i]->room, p->room) == 0)
				cJSON_AddItemToArray(ids,
				    cJSON_CreateString(f->msgs[i]->id));
	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, p->room) == 0)
			cJSON_AddItemToArray(ids,
			    cJSON_CreateString(a->queue[i]->id));
	return o;
}

/*
 * agents.json: for each agent, per room (by id, in "rooms"), the newest
 * message it has seen and the ids it has not been given (queued, or in
 * an answer not yet sent); the home room's also as the agent's own
 * "seen" and "unread", as a papo of before rooms wrote and reads them.
 * A position not known yet (being learnt) is left out: the next start
 * learns it again.
 */
static char *
mcp_agents_text(struct mcp *m)
{
	const struct mcp_agent *a;
	cJSON *o = cJSON_CreateObject(), *arr, *e, *rooms;
	const char *home = mcp_home_room(m);
	char *text;

	cJSON_AddNumberToObject(o, "version", 2);
	arr = cJSON_AddArrayToObject(o, "agents");
	LIST_FOREACH(a, &m->agents, entry) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", a->name);
		rooms = cJSON_CreateObject();
		for (size_t i = 0; i < a->npos; i++) {
			cJSON *p;

			if (a->pos[i].restoring == 2)
				continue;
			p = mcp_pos_json(m, a, &a->pos[i]);
			if (strcmp(a->pos[i].room, home) == 0) {
				cJSON_AddItemReferenceToObject(e, "seen",
				    cJSON_GetObjectItemCaseSensitive(p, "seen"));
				cJSON_AddItemReferenceToObject(e, "unread",
				    cJSON_GetObjectItemCaseSensitive(p, "unread"));
			}
			cJSON_AddItemToObject(rooms, a->pos[i].room, p);
		}
		cJSON_AddItemToObject(e, "rooms", rooms);
		cJSON_AddItemToArray(arr, e);
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

static void
mcp_agents_save(void *arg)
{
	struct mcp *m = arg;
	char err[PAPO_ERR_LEN], *text;

	m->dirty = 0;
	/* Until the rooms are known, the file read at start is the truth:
	 * mcp_rooms marks it dirty once they are. */
	if (!m->loaded || (text = mcp_agents_text(m)) == NULL)
		return;
	if (fs_write(err, m->agents_path, text, strlen(text)) == -1)
		log_msg(LOG_WARN, "mcp: %s (what agents were not given yet "
		    "is kept in memory only)", err);
	cJSON_free(text);
}

void
mcp_agents_dirty(struct mcp *m)
{
	if (m->dirty || m->save == NULL)
		return;
	m->dirty = 1;
	loop_timer_set(m->save, loop_now_ns() + MCP_SAVE_NS);
}

/* Asks the node for what a was not given in the room of p: the ids of
 * unread (a JSON array, or NULL) and everything of the others after
 * message seen; restoring 2: only where the log ends. */
static void
mcp_agent_restore(struct mcp *m, struct mcp_agent *a, struct mcp_pos *p,
    const char *seen, const cJSON *unread, int restoring)
{
	struct node_msg *req = node_msg_new(NODE_HISTORY);
	const cJSON *id;
	size_t len = 0;

	if (req == NULL || (req->to = strdup(a->name)) == NULL ||
	    (req->room = strdup(p->room)) == NULL ||
	    (req->text = malloc((size_t)cJSON_GetArraySize(unread) *
	    (PAPO_MSGID_LEN + 1) + 1)) == NULL) {
		node_msg_free(req);
		return;
	}
	cJSON_ArrayForEach(id, unread)
		if (cJSON_IsString(id) && strlen(id->valuestring) ==
		    PAPO_MSGID_LEN) {
			memcpy(req->text + len, id->valuestring, PAPO_MSGID_LEN);
			len += PAPO_MSGID_LEN;
			req->text[len++] = ' ';
		}
	req->text[len] = '\0';
	req->ctx = m;
	req->after_set = 1;
	snprintf(req->after, sizeof(req->after), "%s", seen);
	snprintf(p->seen, sizeof(p->seen), "%s", seen);
	req->limit = MCP_UNSEEN_MAX;
	p->restoring = restoring;
	node_submit(m->node, req);
}

int
mcp_agents_load(char err[PAPO_ERR_LEN], struct mcp *m)
{
	char buf[MCP_AGENTS_FILE_MAX + 1];
	const cJSON *e;
	cJSON *o;
	ssize_t n;
	int fd;

	if (m->save == NULL && (m->save = loop_timer_new(m->loop,
	    mcp_agents_save, m)) == NULL)
		return -1;
	if ((fd = open(m->agents_path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno != ENOENT) {
			snprintf(err, PAPO_ERR_LEN, "%s: %s", m->agents_path,
			    strerror(errno));
			return -1;
		}
		/* A home from before agents.json, or a new one: the daemon's
		 * agent starts at the log's end (nothing old given again),
		 * once the rooms are known. */
		return mcp_agent(m, "") != NULL ? 0 : -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1) {
		snprintf(err, PAPO_ERR_LEN, "%s: %s", m->agents_path, n < 0 ?
		    strerror(errno) : "too large");
		return -1;
	}
	buf[n] = '\0';
	if ((o = cJSON_Parse(buf)) == NULL ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "agents"))) {
		char aside[sizeof(m->agents_path) + 8];

		/* Kept aside, not lost; the agents start at the log's end,
		 * as on a first start. */
		cJSON_Delete(o);
		snprintf(aside, sizeof(aside), "%s.bad", m->agents_path);
		if (rename(m->agents_path, aside) == -1) {
			snprintf(err, PAPO_ERR_LEN, "%s is damaged, and cannot be "
			    "moved aside: %s", m->agents_path, strerror(errno));
			return -1;
		}
		log_msg(LOG_WARN, "%s is damaged: kept as %s; what agents were "
		    "given starts afresh", m->agents_path, aside);
		return mcp_agents_load(err, m);
	}
	/* The agents now; where each is in each room once the rooms are
	 * known (mcp_rooms: the node's first event). */
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "agents")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");

		if (cJSON_IsString(name))
			mcp_agent(m, name->valuestring);
	}
	m->file = o;
	if (mcp_agent(m, "") == NULL)
		return -1;
	return 0;
}

/* a's entry in the agents.json read at start, or NULL. */
static const cJSON *
mcp_agent_entry(const struct mcp *m, const struct mcp_agent *a)
{
	const cJSON *e, *name;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(m->file,
	    "agents")) {
		name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (cJSON_IsString(name) && strcmp(name->valuestring,
		    a->name) == 0)
			return e;
	}
	return NULL;
}

/*
 * Where a is in room, read back: from agents.json at start (its "rooms"
 * entry of the room; a file of before rooms holds the home room's as the
 * agent's own "seen" and "unread"), else, for a room new to it (or a
 * first start), where the room's log ends.
 */
void
mcp_agent_place(struct mcp *m, struct mcp_agent *a, const char *room,
    int start)
{
	const cJSON *e = start ? mcp_agent_entry(m, a) : NULL, *p, *seen;
	const cJSON *rooms = cJSON_GetObjectItemCaseSensitive(e, "rooms");
	struct mcp_pos *pos;

	if (mcp_pos(a, room) != NULL || (pos = mcp_pos_add(a, room)) == NULL)
		return;
	if (rooms != NULL)
		p = cJSON_GetObjectItemCaseSensitive(rooms, room);
	else
		p = strcmp(room, mcp_home_room(m)) == 0 ? e : NULL;
	seen = cJSON_GetObjectItemCaseSensitive(p, "seen");
	if (cJSON_IsString(seen) && strlen(seen->valuestring) <= PAPO_MSGID_LEN)
		mcp_agent_restore(m, a, pos, seen->valuestring,
		    cJSON_GetObjectItemCaseSensitive(p, "unread"), 1);
	else
		mcp_agent_restore(m, a, pos, "", NULL, 2);
}

/* a is out of room: its position there and what it had queued of it
 * go. */
void
mcp_agent_leave(struct mcp_agent *a, const char *room)
{
	size_t keep = 0;

	for (size_t i = 0; i < a->nqueue; i++)
		if (strcmp(a->queue[i]->room, room) == 0)
			mcp_msg_unref(a->queue[i]);
		else
			a->queue[keep++] = a->queue[i];
	a->nqueue = keep;
	keep = 0;
	for (size_t i = 0; i < a->npos; i++)
		if (strcmp(a->pos[i].room, room) != 0)
			a->pos[keep++] = a->pos[i];
	a->npos = keep;
}

void
mcp_agents_free(struct mcp *m)
{
	struct mcp_agent *a;

	if (m->save != NULL && m->loaded)
		mcp_agents_save(m);
	while ((a = LIST_FIRST(&m->agents)) != NULL) {
		LIST_REMOVE(a, entry);
		for (size_t i = 0; i < a->nqueue; i++)
			mcp_msg_unref(a->queue[i]);
		free(a->queue);
		free(a);
	}
	loop_timer_free(m->save);
	m->save = NULL;
	cJSON_Delete(m->file);
	m->file = NULL;
}
