/*
 * mcp_room.c: the rooms MCP serves (mcp_int.h; docs/MCP.md, "Rooms"):
 * the node's list of rooms as its last NODE_EV_ROOMS said it, a room
 * named by a tool's room argument or by /mcp?room= found in it (by id,
 * name or the start of its id, as the node finds one), and a message
 * tagged with its room.  It knows nothing of sessions or agents:
 * mcp_deliver.c tells them of a changed list.
 *
 * Main thread only; nothing here blocks.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp_int.h"


/* The room of id, or NULL when the daemon is not (or no more) in it. */
struct mcp_room *
mcp_room_get(struct mcp *m, const char *id)
{
	for (size_t i = 0; id != NULL && i < m->nrooms; i++)
		if (strcmp(m->rooms[i].id, id) == 0)
			return &m->rooms[i];
	return NULL;
}

/* The rooms' names, for an error a model reads: "team (ab3kx2qd), ...". */
void
mcp_room_names(const struct mcp *m, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < m->nrooms && used < len; i++) {
		int k = snprintf(out + used, len - used, "%s%s (%.8s)%s",
		    i > 0 ? ", " : "", m->rooms[i].name, m->rooms[i].id,
		    strcmp(m->rooms[i].id, m->dflt) == 0 ? " [default]" : "");

		if (k < 0)
			break;
		used += (size_t)k;
	}
}

/*
 * The room sel names: its id, its name, or the start of its id (4
 * characters at least), each unambiguous, as node.c finds a room.  NULL
 * with err saying why, naming the rooms there are.
 */
struct mcp_room *
mcp_room_find(struct mcp *m, const char *sel, char err[PAPO_ERR_LEN])
{
	struct mcp_room *found = NULL;
	char names[PAPO_ERR_LEN - 80];
	size_t hits = 0;

	for (size_t i = 0; i < m->nrooms; i++) {
		int how = room_matches(sel, m->rooms[i].id, m->rooms[i].name);

		if (how == ROOM_BY_ID)
			return &m->rooms[i];
		if (how == ROOM_BY_NAME) {
			found = &m->rooms[i];
			hits++;
		}
	}
	if (hits == 1)
		return found;
	mcp_room_names(m, names, sizeof(names));
	if (m->nrooms == 0)
		snprintf(err, PAPO_ERR_LEN, "this daemon is in no room yet");
	else if (hits > 1)
		snprintf(err, PAPO_ERR_LEN, "'%.40s' names %zu rooms: give its "
		    "id; the rooms are %s", sel, hits, names);
	else
		snprintf(err, PAPO_ERR_LEN, "no room named '%.40s'; the rooms "
		    "are %s", sel, names);
	return NULL;
}

/*
 * Takes the node's list of rooms (NODE_EV_ROOMS's JSON, parsed).  What
 * was known of a room still there (its log's newest message) stays.
 */
void
mcp_room_update(struct mcp *m, const cJSON *list)
{
	struct mcp_room was[PAPO_ROOMS_MAX], *old;
	size_t nwas = m->nrooms;
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(list, "default");
	const cJSON *e;

	memcpy(was, m->rooms, nwas * sizeof(was[0]));
	m->nrooms = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(list, "rooms")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		struct mcp_room *r;

		if (!cJSON_IsString(id) || strlen(id->valuestring) !=
		    PAPO_ROOMID_LEN || m->nrooms == PAPO_ROOMS_MAX)
			continue;
		r = &m->rooms[m->nrooms++];
		memset(r, 0, sizeof(*r));
		snprintf(r->id, sizeof(r->id), "%s", id->valuestring);
		snprintf(r->name, sizeof(r->name), "%s", cJSON_IsString(name) ?
		    name->valuestring : "");
		old = NULL;
		for (size_t i = 0; i < nwas; i++)
			if (strcmp(was[i].id, r->id) == 0)
				old = &was[i];
		if (old != NULL)
			memcpy(r->last, old->last, sizeof(r->last));
	}
	snprintf(m->dflt, sizeof(m->dflt), "%s", cJSON_IsString(d) ?
	    d->valuestring : "");
}

/*
 * Adds to a message's JSON its room's name ("room") and id ("room_id")
 * when it lacks them (those of the history read back have neither).
 */
void
mcp_room_tag(struct mcp *m, cJSON *json, const char *id)
{
	const struct mcp_room *r = mcp_room_get(m, id);

	if (cJSON_GetObjectItemCaseSensitive(json, "room_id") == NULL)
		cJSON_AddStringToObject(json, "room_id", id);
	if (cJSON_GetObjectItemCaseSensitive(json, "room") == NULL)
		cJSON_AddStringToObject(json, "room", r != NULL ? r->name : "");
}

int
mcp_room_left(const struct mcp_session *s, const char *what, char *msg,
    size_t len)
{
	char names[160];

	if (s->room[0] == '\0' || mcp_room_get(s->m, s->room) != NULL)
		return 0;
	mcp_room_names(s->m, names, sizeof(names));
	snprintf(msg, len, "%s: this session is bound to room %s (%.8s), "
	    "which this daemon has left: start a new session (the rooms now: "
	    "%s)", what, s->room_name, s->room, names[0] != '\0' ? names :
	    "none");
	return 1;
}

/* The rooms, for status: id, name, whether the default.  Not their
 * members: the list is the node's when a room came or went, and counts
 * members as they were then. */
cJSON *
mcp_room_list(const struct mcp *m)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < m->nrooms; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", m->rooms[i].id);
		cJSON_AddStringToObject(o, "name", m->rooms[i].name);
		cJSON_AddBoolToObject(o, "default",
		    strcmp(m->rooms[i].id, m->dflt) == 0);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
