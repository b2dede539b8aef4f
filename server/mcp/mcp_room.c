/*
 * mcp_room.c: the rooms MCP serves (mcp_int.h; docs/MCP.md, "Rooms"):
 * the node's list of rooms as its last NODE_EV_ROOMS said it, a room
 * named by a tool's room argument or by /mcp?room= found in it (by id,
 * name or the start of its id, as the node finds one), and a message
 * tagged with its room (and its files with their URIs).  It knows nothing of sessions or agents:
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

/*
 * A session sees the rooms of its daemon, or, bound to one by
 * /mcp?room= (bound: its id; "" for none), that room alone: the names
 * and ids of the others are not its to learn, nor that they exist.
 */
static int
mcp_room_seen(const struct mcp *m, size_t i, const char *bound)
{
	return bound[0] == '\0' || strcmp(m->rooms[i].id, bound) == 0;
}

/* The rooms seen as home_pick sees them, into refs (PAPO_ROOMS_MAX), and
 * each one's index in m->rooms into at: their count. */
static size_t
mcp_room_refs(const struct mcp *m, const char *bound, struct room_ref *refs,
    size_t *at)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nrooms; i++) {
		if (!mcp_room_seen(m, i, bound))
			continue;
		refs[n].id = m->rooms[i].id;
		refs[n].name = m->rooms[i].name;
		refs[n].dflt = strcmp(m->rooms[i].id, m->dflt) == 0;
		at[n++] = i;
	}
	return n;
}

/* The rooms' names, for an error a model reads: "team (ab3kx2qd), ...". */
void
mcp_room_names(const struct mcp *m, const char *bound, char *out, size_t len)
{
	struct room_ref refs[PAPO_ROOMS_MAX];
	size_t at[PAPO_ROOMS_MAX];

	home_refs_format(refs, mcp_room_refs(m, bound, refs, at), out, len);
}

/*
 * The room sel names among those seen (home_pick, as node.c finds a
 * room).  NULL with err saying why, naming the rooms seen.
 */
struct mcp_room *
mcp_room_find(struct mcp *m, const char *bound, const char *sel,
    char err[PAPO_ERR_LEN])
{
	struct room_ref refs[PAPO_ROOMS_MAX];
	size_t at[PAPO_ROOMS_MAX], n = mcp_room_refs(m, bound, refs, at);
	long i;

	if ((i = home_pick(sel, refs, n, err, NULL)) == -1)
		return NULL;
	return &m->rooms[at[i]];
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
	mcp_room_files(json, id);
}

/*
 * Each file a message names gets the URI an agent reads it by
 * (resources/read, or the fetch tool's ref): papo://rooms/ID/files/REF.
 */
void
mcp_room_files(cJSON *json, const char *id)
{
	cJSON *f;
	const cJSON *ref;
	char uri[MCP_FILE_URI_MAX];

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(json, "files")) {
		ref = cJSON_GetObjectItemCaseSensitive(f, "ref");
		if (!cJSON_IsString(ref) || cJSON_GetObjectItemCaseSensitive(f,
		    "uri") != NULL)
			continue;
		snprintf(uri, sizeof(uri), MCP_ROOMS_URI "%s" MCP_FILES_URI
		    "%.64s", id, ref->valuestring);
		cJSON_AddStringToObject(f, "uri", uri);
	}
}

int
mcp_room_left(const struct mcp_session *s, const char *what, char *msg,
    size_t len)
{
	if (s->room[0] == '\0' || mcp_room_get(s->m, s->room) != NULL)
		return 0;
	snprintf(msg, len, "%s: this session is bound to room %s (%.8s), "
	    "which this daemon has left: start a new session", what,
	    s->room_name, s->room);
	return 1;
}

/* The rooms, for status: id, name, whether the default.  Not their
 * members: the list is the node's when a room came or went, and counts
 * members as they were then. */
cJSON *
mcp_room_list(const struct mcp *m, const char *bound)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < m->nrooms; i++) {
		cJSON *o;

		if (!mcp_room_seen(m, i, bound))
			continue;
		o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", m->rooms[i].id);
		cJSON_AddStringToObject(o, "name", m->rooms[i].name);
		cJSON_AddBoolToObject(o, "default",
		    strcmp(m->rooms[i].id, m->dflt) == 0);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
