/*
 * mcp_store.c: what MCP keeps of its agents across a restart
 * (mcp_int.h; docs/MCP.md, "Delivery"): agents.json, per agent and per
 * room (by id) the newest message it has seen and the ids it has not
 * been given, written by m->save's timer (mcp_agents_dirty arms it, at
 * most 5 times a second) and at stop; read back at start, each agent
 * placed in each room as it says (what it was not given read back from
 * the node's log), or, in a room new to it, where the room's log ends.
 * A damaged file is kept aside and the agents start afresh.
 *
 * Above mcp_agent.c, whose agents, queues and positions it writes and
 * fills.  Main thread only; the file is written whole and small (at most
 * 1 MiB is read back).
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
#include "server/mcp/mcp_int.h"

#define MCP_AGENTS_FILE_MAX (1024 * 1024)

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

/* Asks the node for what a was not given in the room of p: the ids of
 * unread (a JSON array, or NULL) and everything of the others after
 * message seen; restoring 2: only where the log ends. */
static void
mcp_agent_restore(struct mcp *m, struct mcp_agent *a, struct mcp_pos *p,
    const char *seen, const cJSON *unread, int restoring)
{
	struct node_msg *req = node_msg_new(NODE_HISTORY);
	struct node_history_args *h;
	const cJSON *id;
	size_t len = 0;

	if (req == NULL)
		return;
	h = node_args_history(req);
	if ((req->tag = strdup(a->name)) == NULL ||
	    (req->room = strdup(p->room)) == NULL ||
	    (h->ids = malloc((size_t)cJSON_GetArraySize(unread) *
	    (PAPO_MSGID_LEN + 1) + 1)) == NULL) {
		node_msg_free(req);
		return;
	}
	cJSON_ArrayForEach(id, unread)
		if (cJSON_IsString(id) && strlen(id->valuestring) ==
		    PAPO_MSGID_LEN) {
			memcpy(h->ids + len, id->valuestring, PAPO_MSGID_LEN);
			len += PAPO_MSGID_LEN;
			h->ids[len++] = ' ';
		}
	h->ids[len] = '\0';
	req->ctx = m;
	h->after_set = 1;
	snprintf(h->after, sizeof(h->after), "%s", seen);
	snprintf(p->seen, sizeof(p->seen), "%s", seen);
	h->limit = MCP_UNSEEN_MAX;
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

void
mcp_agents_free(struct mcp *m)
{
	struct mcp_agent *a;

	if (m->save != NULL && m->loaded)
		mcp_agents_save(m);
	while ((a = LIST_FIRST(&m->agents)) != NULL) {
		LIST_REMOVE(a, entry);
		mcp_agent_free(a);
	}
	loop_timer_free(m->save);
	m->save = NULL;
	cJSON_Delete(m->file);
	m->file = NULL;
}
