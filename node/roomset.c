/*
 * roomset.c: the rooms a node holds (roomset.h): loading them from the
 * home and starting them, the default one, finding the one a request
 * names, the table that hands every request to who takes it, and the
 * requests about the set itself: join, make, leave, set the default,
 * rename this member, give an invite, search them all, add a file.
 * Node thread, except what node_start calls before the thread runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/blobs.h"
#include "node/net/net.h"
#include "node/room/deliver.h"
#include "node/room/epoch.h"
#include "node/room/files.h"
#include "node/room/role.h"
#include "node/room/room.h"
#include "node/room/search.h"
#include "node/roomset.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/invite.h"

/* NODE_EV_ADDRS's json given "invite": the room's, with the addresses
 * the node is reached at now (a new one, then, to print from now on). */
static void
roomset_addrs_invite(struct node_room *r, struct node_msg *m)
{
	cJSON *o = m->json != NULL ? cJSON_Parse(m->json) : NULL;
	char *invite = roomset_invite(r), *s;

	if (o != NULL && invite != NULL &&
	    cJSON_AddStringToObject(o, "invite", invite) != NULL &&
	    (s = cJSON_PrintUnformatted(o)) != NULL) {
		free(m->json);
		m->json = s;
	}
	cJSON_Delete(o);
	free(invite);
}

/* Every event of a room goes out with its id; its addresses changed, a
 * new invite with them. */
void
roomset_emit(void *arg, struct node_msg *m)
{
	struct node_room *r = arg;
	/* m is the other thread's once pushed: read it before. */
	int refused = m->kind == NODE_EV_REFUSED;

	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	if (m->kind == NODE_EV_ADDRS)
		roomset_addrs_invite(r, m);
	chan_push(r->set->out, &m->link);
	/* A room that shut us out says so in the list of rooms. */
	if (refused)
		roomset_changed(r->set);
}

/* The rooms as home_pick sees them, into refs (PAPO_ROOMS_MAX). */
static void
roomset_refs(const struct roomset *rs, struct room_ref *refs)
{
	for (size_t i = 0; i < rs->nrooms; i++) {
		refs[i].id = rs->rooms[i]->id;
		refs[i].name = rs->rooms[i]->file.name;
		refs[i].dflt = rs->nrooms > 1 &&
		    strcmp(rs->rooms[i]->id, rs->dflt) == 0;
	}
}

/* The default room: the only one, else the one set; NULL when none. */
struct node_room *
roomset_default(const struct roomset *rs)
{
	if (rs->nrooms == 1)
		return rs->rooms[0];
	for (size_t i = 0; i < rs->nrooms; i++)
		if (strcmp(rs->rooms[i]->id, rs->dflt) == 0)
			return rs->rooms[i];
	return NULL;
}

/*
 * The room sel names: its id, its name, or the start of its id (4
 * characters at least), each unambiguous; NULL or "": the default room.
 * NULL with m answered otherwise.
 */
struct node_room *
roomset_find(struct roomset *rs, struct node_msg *m)
{
	const char *sel = m->room;
	struct node_room *found;
	struct room_ref refs[PAPO_ROOMS_MAX];
	char err[PAPO_ERR_LEN];
	int status;
	long at;

	if (rs->nrooms == 0) {
		node_msg_fail(m, rs->out, 404, "this daemon is in no room yet: join one "
		    "with 'papo join INVITE' or make one with 'papo new'");
		return NULL;
	}
	roomset_refs(rs, refs);
	if (sel == NULL || sel[0] == '\0') {
		if ((found = roomset_default(rs)) != NULL)
			return found;
		home_refs_format(refs, rs->nrooms, err, sizeof(err) - 96);
		node_msg_fail(m, rs->out, 409, "this daemon is in %zu rooms and none is "
		    "the default: name one (--room, or room) of %s", rs->nrooms,
		    err);
		return NULL;
	}
	if ((at = home_pick(sel, refs, rs->nrooms, err, &status)) == -1) {
		node_msg_fail(m, rs->out, status, "%s", err);
		return NULL;
	}
	return rs->rooms[at];
}

static int roomset_default_save(char err[PAPO_ERR_LEN], struct roomset *rs);

/* The default room's file: home/rooms.json, {"default": "ID"}. */
void
roomset_default_load(struct roomset *rs)
{
	char path[4096], err[PAPO_ERR_LEN], *text = NULL;
	const cJSON *d;
	cJSON *o;
	size_t len;
	int exists;

	rs->dflt[0] = '\0';
	if (fs_path(path, sizeof(path), rs->home, "rooms.json") == -1)
		goto out;
	if (fs_read(err, path, 4096, &text, &len, &exists) == -1) {
		if (exists) {
			log_msg(LOG_WARN, "%s: no default room", err);
			goto out;
		}
		/* Rooms added while no daemon ran: the first (the home's
		 * own, as before) is the default, as when they are added to
		 * one running. */
		if (rs->nrooms >= 2) {
			strcpy(rs->dflt, rs->rooms[0]->id);
			if (roomset_default_save(err, rs) == -1)
				log_msg(LOG_WARN, "rooms: %s", err);
		}
		goto out;
	}
	if ((o = cJSON_ParseWithLength(text, len)) == NULL) {
		log_msg(LOG_WARN, "%s does not read as JSON: no default room",
		    path);
		goto out;
	}
	d = cJSON_GetObjectItemCaseSensitive(o, "default");
	if (cJSON_IsString(d) && strlen(d->valuestring) == PAPO_ROOMID_LEN)
		strcpy(rs->dflt, d->valuestring);
	cJSON_Delete(o);
out:
	free(text);
}

static int
roomset_default_save(char err[PAPO_ERR_LEN], struct roomset *rs)
{
	char path[4096], body[128];

	if (rs->dflt[0] != '\0')
		snprintf(body, sizeof(body), "{\"default\": \"%s\"}\n", rs->dflt);
	else
		snprintf(body, sizeof(body), "{\"default\": null}\n");
	if (fs_path(path, sizeof(path), rs->home, "rooms.json") == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", rs->home);
		return -1;
	}
	return fs_write(err, path, body, strlen(body));
}

static cJSON *
roomset_json_one(const struct roomset *rs, const struct node_room *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "name", r->file.name);
	cJSON_AddStringToObject(o, "me", r->file.me);
	cJSON_AddBoolToObject(o, "default", r == roomset_default(rs));
	room_summary(r->room, o);
	return o;
}

static char *
roomset_json(const struct roomset *rs)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	const struct node_room *d = roomset_default(rs);
	char *s;

	arr = cJSON_AddArrayToObject(o, "rooms");
	for (size_t i = 0; i < rs->nrooms; i++)
		cJSON_AddItemToArray(arr, roomset_json_one(rs, rs->rooms[i]));
	if (d != NULL)
		cJSON_AddStringToObject(o, "default", d->id);
	else
		cJSON_AddNullToObject(o, "default");
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Tells the program the rooms changed. */
void
roomset_changed(struct roomset *rs)
{
	struct node_msg *ev = node_msg_new(NODE_EV_ROOMS);

	if (ev == NULL || (ev->json = roomset_json(rs)) == NULL) {
		node_msg_free(ev);
		return;
	}
	chan_push(rs->out, &ev->link);
}
/*
 * Retention at start, before any peer is heard: the log is cut to what
 * PAPO_KEEP keeps, so that a daemon restarted with a smaller setting
 * neither serves nor offers what it no longer keeps.
 */
static int
roomset_retain(char err[PAPO_ERR_LEN], struct store *s,
    const struct room_settings *set)
{
	char why[PAPO_ERR_LEN];
	long dropped;

	if (!store_compact_due(s, &set->keep, loop_wall_ms(), 0))
		return 0;
	if ((dropped = store_compact(why, s, &set->keep, loop_wall_ms())) == -1) {
		snprintf(err, PAPO_ERR_LEN, "retention (PAPO_KEEP=%s): %s",
		    set->keep_text, why);
		return -1;
	}
	if (dropped > 0)
		log_msg(LOG_INFO, "retention (PAPO_KEEP=%s): %ld messages "
		    "dropped from the log", set->keep_text, dropped);
	return 0;
}

/* Closes r's room (a bye to its members) and files, and frees r. */
static void
roomset_close_one(struct node_room *r)
{
	if (r == NULL)
		return;
	room_free(r->room);
	store_close(r->store);
	roomfile_wipe(&r->file);
	sodium_memzero(&r->keys, sizeof(r->keys));
	free(r->dir);
	free(r);
}

/* Loads the room in dir: its file, its store (cut to PAPO_KEEP); its
 * room joins the net once there is one (roomset_start). */
static struct node_room *
roomset_load_one(char err[PAPO_ERR_LEN], struct roomset *rs, const char *dir)
{
	struct node_room *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->dir = strdup(dir)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	r->set = rs;
	if (roomfile_load(err, dir, &r->file) == -1)
		goto fail;
	sec_room_keys(r->file.secret, &r->keys);
	sec_room_id_format(&r->keys, r->id);
	for (size_t i = 0; i < rs->nrooms; i++)
		if (strcmp(rs->rooms[i]->id, r->id) == 0) {
			snprintf(err, PAPO_ERR_LEN, "%s and %s hold the same "
			    "room", rs->rooms[i]->dir, dir);
			goto fail;
		}
	if ((r->store = store_open(err, dir, &r->keys, rs->env->me)) == NULL ||
	    roomset_retain(err, r->store, rs->settings) == -1)
		goto fail;
	return r;
fail:
	roomset_close_one(r);
	return NULL;
}

/* Starts r's room on the net. */
int
roomset_start(char err[PAPO_ERR_LEN], struct roomset *rs, struct node_room *r)
{
	struct room_env env = *rs->env;

	env.store = r->store;
	env.keys = &r->keys;
	env.room = &r->file;
	env.home = r->dir;
	env.arg = r;
	return (r->room = room_new(err, &env)) != NULL ? 0 : -1;
}

/* Takes r out of the node's rooms and closes it. */
static void
roomset_drop(struct roomset *rs, struct node_room *r)
{
	for (size_t i = 0; i < rs->nrooms; i++)
		if (rs->rooms[i] == r) {
			memmove(rs->rooms + i, rs->rooms + i + 1,
			    (rs->nrooms - i - 1) * sizeof(rs->rooms[0]));
			rs->nrooms--;
			break;
		}
	roomset_close_one(r);
}

/* Loads the rooms of home not held yet (all of them at start; later the
 * one just joined or made), their rooms not started yet: the last one
 * in *added. */
int
roomset_load(char err[PAPO_ERR_LEN], struct roomset *rs,
    struct node_room **added)
{
	char **dirs;
	size_t nd;
	int rc = 0;

	*added = NULL;
	if (home_dirs(err, rs->home, &dirs, &nd) == -1)
		return -1;
	for (size_t i = 0; i < nd && rc == 0 && rs->nrooms < PAPO_ROOMS_MAX;
	    i++) {
		int held = 0;

		for (size_t j = 0; j < rs->nrooms && !held; j++)
			held = strcmp(rs->rooms[j]->dir, dirs[i]) == 0;
		if (held)
			continue;
		if ((*added = roomset_load_one(err, rs, dirs[i])) == NULL)
			rc = -1;
		else
			rs->rooms[rs->nrooms++] = *added;
	}
	home_dirs_free(dirs, nd);
	return rc;
}

/* NODE_JOIN and NODE_CREATE: the room's files made, then the room
 * started in place, answered with it (and, made, its invite). */
static void
roomset_add(struct roomset *rs, struct node_msg *m)
{
	char err[PAPO_ERR_LEN];
	struct node_room *r;
	struct node_enter_args *args = node_args_enter(m);
	char *invite = NULL, dir[4096] = "";
	cJSON *o;
	int rc;

	if (rs->nrooms == PAPO_ROOMS_MAX) {
		node_msg_fail(m, rs->out, 409, "this daemon holds %d rooms, the most it "
		    "can; leave one first", PAPO_ROOMS_MAX);
		return;
	}
	if (m->kind == NODE_JOIN)
		rc = home_join_in(err, rs->home, args->text != NULL ?
		    args->text : "", args->name, args->about, NULL, dir);
	else
		rc = home_create(err, rs->home, args->name, args->about,
		    args->text, NULL, rs->quic, &invite);
	if (rc == -1) {
		node_msg_fail(m, rs->out, errno == EEXIST ? 409 : 400, "%s", err);
		return;
	}
	/* That one holds the listen address; the answer's, below, where
	 * the node is reached. */
	free(invite);
	err[0] = '\0';
	/* A room held, given the newer key it missed (home_join): opened
	 * again, with it. */
	for (size_t i = 0; rc == 1 && i < rs->nrooms; i++)
		if (strcmp(rs->rooms[i]->dir, dir) == 0) {
			roomset_drop(rs, rs->rooms[i]);
			break;
		}
	if (roomset_load(err, rs, &r) == -1 || r == NULL ||
	    roomset_start(err, rs, r) == -1) {
		char why[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN];

		if (r != NULL)
			roomset_drop(rs, r);
		/* No folder of a room that did not open is left behind. */
		if (rc == 0 && m->kind == NODE_JOIN && dir[0] != '\0' &&
		    home_leave(why, rs->home, dir, 1, aside) == -1)
			log_msg(LOG_WARN, "rooms: %s", why);
		node_msg_fail(m, rs->out, 500, "%s", err[0] == '\0' ?
		    "the room was stored but did not open" : err);
		if (rc == 1)
			roomset_changed(rs);
		return;
	}
	/* A second room: the first stays the default, so that what used
	 * the daemon without naming a room goes on as before. */
	if (rs->nrooms == 2 && rs->dflt[0] == '\0') {
		strcpy(rs->dflt, rs->rooms[0]->id);
		if (roomset_default_save(err, rs) == -1)
			log_msg(LOG_WARN, "rooms: %s", err);
	}
	log_msg(LOG_INFO, "rooms: %s room %s (%.8s)", rc == 1 ? "took the "
	    "newer key of" : m->kind == NODE_JOIN ? "joined" : "made",
	    r->file.name, r->id);
	o = roomset_json_one(rs, r);
	if ((invite = roomset_invite(r)) != NULL)
		cJSON_AddStringToObject(o, "invite", invite);
	free(invite);
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	m->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	chan_push(rs->out, &m->link);
	roomset_changed(rs);
}

/* NODE_LEAVE: a bye to the room's members, its files moved aside (or,
 * limit 1, deleted). */
static void
roomset_leave(struct roomset *rs, struct node_msg *m)
{
	struct node_room *r = roomset_find(rs, m);
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "", name[ROOM_NAME_MAX + 1];
	char id[PAPO_ROOMID_LEN + 1], dir[4096];
	cJSON *o;
	int rc;

	if (r == NULL)
		return;
	strcpy(name, r->file.name);
	strcpy(id, r->id);
	snprintf(dir, sizeof(dir), "%s", r->dir);
	roomset_drop(rs, r);
	rc = home_leave(err, rs->home, dir, node_args_leave(m)->delete, aside);
	if (strcmp(rs->dflt, id) == 0 || (rs->nrooms <= 1 && rs->dflt[0] != '\0')) {
		rs->dflt[0] = '\0';
		if (roomset_default_save(err, rs) == -1)
			log_msg(LOG_WARN, "rooms: %s", err);
	}
	log_msg(LOG_INFO, "rooms: left room %s (%.8s)", name, id);
	snprintf(m->room_id, sizeof(m->room_id), "%s", id);
	if (rc == -1) {
		node_msg_fail(m, rs->out, 500, "left the room, but its files: %s", err);
		roomset_changed(rs);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "left", id);
	cJSON_AddStringToObject(o, "name", name);
	if (aside[0] != '\0') {
		char kept[4096];

		if (fs_path(kept, sizeof(kept), rs->home, aside) == 0)
			cJSON_AddStringToObject(o, "kept", kept);
	} else
		cJSON_AddNullToObject(o, "kept");
	m->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	chan_push(rs->out, &m->link);
	roomset_changed(rs);
}

/* NODE_DEFAULT: the room named is the default from now on. */
static void
roomset_set_default(struct roomset *rs, struct node_msg *m)
{
	struct node_room *r = roomset_find(rs, m);
	char err[PAPO_ERR_LEN];

	if (r == NULL)
		return;
	strcpy(rs->dflt, r->id);
	if (roomset_default_save(err, rs) == -1) {
		node_msg_fail(m, rs->out, 500, "%s", err);
		return;
	}
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	m->json = roomset_json(rs);
	chan_push(rs->out, &m->link);
	roomset_changed(rs);
}

/* NODE_RENAME: this member's name in the room named, or in every room
 * when none is: room.json saved, then the room greets its members again
 * with it (room_renamed). */
static void
roomset_rename(struct roomset *rs, struct node_msg *m)
{
	char err[PAPO_ERR_LEN], was[PAPO_NAME_MAX + 1];
	const char *name = node_args_member(m)->name != NULL ?
	    node_args_member(m)->name : "";
	struct node_room *one = NULL;
	cJSON *o, *arr;

	if (roomfile_check_name(err, name) == -1) {
		node_msg_fail(m, rs->out, 400, "%s", err);
		return;
	}
	if (m->room != NULL && m->room[0] != '\0' &&
	    (one = roomset_find(rs, m)) == NULL)
		return;
	if (rs->nrooms == 0) {
		node_msg_fail(m, rs->out, 404, "this daemon is in no room yet");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	arr = cJSON_AddArrayToObject(o, "rooms");
	for (size_t i = 0; i < rs->nrooms; i++) {
		struct node_room *r = rs->rooms[i];
		cJSON *e;

		if ((one != NULL && r != one) || strcmp(r->file.me, name) == 0)
			continue;
		strcpy(was, r->file.me);
		strcpy(r->file.me, name);
		if (roomfile_save(err, r->dir, &r->file) == -1) {
			strcpy(r->file.me, was);
			cJSON_Delete(o);
			node_msg_fail(m, rs->out, 500, "%s", err);
			return;
		}
		room_renamed(r->room, was);
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "id", r->id);
		cJSON_AddStringToObject(e, "name", r->file.name);
		cJSON_AddStringToObject(e, "was", was);
		cJSON_AddItemToArray(arr, e);
	}
	if (one != NULL)
		snprintf(m->room_id, sizeof(m->room_id), "%s", one->id);
	m->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	chan_push(rs->out, &m->link);
	roomset_changed(rs);
}

/* A room's invite, made now: the addresses it carries are the ones the
 * node is reached at now (they change as reach learns). */
static void
roomset_give_invite(struct roomset *rs, struct node_msg *m)
{
	struct node_room *r;
	cJSON *o;
	char *invite;

	if ((r = roomset_find(rs, m)) == NULL)
		return;
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	if ((invite = roomset_invite(r)) == NULL) {
		node_msg_fail(m, rs->out, 500, "cannot make the room's invite");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "invite", invite);
	cJSON_AddStringToObject(o, "room", r->file.name);
	cJSON_AddStringToObject(o, "room_id", r->id);
	sodium_memzero(invite, strlen(invite));
	free(invite);
	if ((m->json = cJSON_PrintUnformatted(o)) == NULL)
		node_msg_fail(m, rs->out, 500, "out of memory");
	else
		chan_push(rs->out, &m->link);
	cJSON_Delete(o);
}

/*
 * NODE_SEARCH: of every room when room is "*", or when none is named
 * where several are and none is the default (what else could it mean);
 * else of the one named.
 */
static void
roomset_search(struct roomset *rs, struct node_msg *m)
{
	struct room *rooms[PAPO_ROOMS_MAX];
	struct node_room *r;
	int every = m->room != NULL && strcmp(m->room, "*") == 0;

	if (!every && (m->room == NULL || m->room[0] == '\0') &&
	    rs->nrooms > 1 && roomset_default(rs) == NULL)
		every = 1;
	if (!every) {
		if ((r = roomset_find(rs, m)) != NULL) {
			snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
			room_search(r->room, m);
		}
		return;
	}
	if (rs->nrooms == 0) {
		node_msg_fail(m, rs->out, 404, "this daemon is in no room yet: join one "
		    "with 'papo join INVITE' or make one with 'papo new'");
		return;
	}
	for (size_t i = 0; i < rs->nrooms; i++)
		rooms[i] = rs->rooms[i]->room;
	room_search_all(rooms, rs->nrooms, m);
}

/* NODE_ROOMS: the list of rooms. */
static void
roomset_list(struct roomset *rs, struct node_msg *m)
{
	if ((m->json = roomset_json(rs)) == NULL)
		node_msg_fail(m, rs->out, 500, "out of memory");
	else
		chan_push(rs->out, &m->link);
}

/* NODE_BLOB_ADD: the file is read by the worker thread (blobs.h), never
 * the loop: a file of gigabytes is hashed and sealed whole. */
static void
roomset_blob_add(struct roomset *rs, struct node_msg *m)
{
	struct node_room *r = roomset_find(rs, m);

	if (r == NULL)
		return;
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	if (blobwork_add(rs->work, m, r->dir, rs->settings->files_quota) == -1)
		node_msg_fail(m, rs->out, 500, "cannot start sharing the "
		    "file: %s", strerror(errno));
}

/*
 * Who takes each request, by its kind: the set of rooms (set), or the
 * one room it names (room: found first, its id set on the answer; a
 * part of the room, node/room/).  A kind with neither is not a request.
 * What each kind's arguments are and own is msg.h's and msg.c's.
 */
static const struct request_desc {
	void (*set)(struct roomset *rs, struct node_msg *m);
	void (*room)(struct room *room, struct node_msg *m);
} requests[NODE_KIND_END] = {
	[NODE_SEND] = { .room = deliver_send },
	[NODE_STATUS] = { .room = room_status },
	[NODE_HISTORY] = { .room = deliver_history },
	[NODE_READ] = { .room = deliver_read },
	[NODE_ADMIN] = { .room = role_request_admin },
	[NODE_ROTATE] = { .room = epoch_request_rotate },
	[NODE_REMOVE] = { .room = epoch_request_rotate },
	[NODE_BLOB] = { .room = files_request },
	[NODE_FETCH] = { .room = files_request },
	[NODE_SEARCH] = { .set = roomset_search },
	[NODE_ROOMS] = { .set = roomset_list },
	[NODE_JOIN] = { .set = roomset_add },
	[NODE_CREATE] = { .set = roomset_add },
	[NODE_LEAVE] = { .set = roomset_leave },
	[NODE_DEFAULT] = { .set = roomset_set_default },
	[NODE_INVITE] = { .set = roomset_give_invite },
	[NODE_RENAME] = { .set = roomset_rename },
	[NODE_BLOB_ADD] = { .set = roomset_blob_add },
};

void
roomset_request(struct roomset *rs, struct node_msg *m)
{
	const struct request_desc *d = m->kind > 0 && m->kind < NODE_KIND_END ?
	    &requests[m->kind] : NULL;
	struct node_room *r;

	if (d != NULL && d->set != NULL)
		d->set(rs, m);
	else if (d == NULL || d->room == NULL)
		node_msg_fail(m, rs->out, 400, "not a request");
	else if ((r = roomset_find(rs, m)) != NULL) {
		snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
		d->room(r->room, m);
	}
}

/* Every room's bye, and the rooms freed. */
void
roomset_close(struct roomset *rs)
{
	while (rs->nrooms > 0)
		roomset_close_one(rs->rooms[--rs->nrooms]);
}

/*
 * The invite others can join r with: the room (and the name its maker
 * gave it), this member, the addresses the node is reached at, and the
 * relay it uses (unless PAPO_TURN_SHARE=off), so that a joiner behind
 * another NAT reaches our relayed address through it with nothing set
 * (docs/REACHABILITY.md).  Credentials an invite cannot carry (not
 * printable ASCII) leave the relay out, said once in the log.
 */
char *
roomset_invite(struct node_room *r)
{
	struct roomset *rs = r->set;
	struct invite inv;
	const char *room;
	char *s;

	memset(&inv, 0, sizeof(inv));
	memcpy(inv.secret, r->file.secret, PAPO_KEY_LEN);
	memcpy(inv.inviter, rs->env->me->pk, PAPO_KEY_LEN);
	inv.naddr = net_addrs(rs->env->net, inv.addr, PAPO_ADDR_MAX);
	if ((room = roomfile_given_name(&r->file)) != NULL)
		snprintf(inv.room, sizeof(inv.room), "%s", room);
	/* A joiner must hold the room's newest key to be let in. */
	inv.epoch = room_epoch(r->room, inv.epoch_secret);
	if (rs->relay_from != NULL && rs->relay_share) {
		inv.relay = rs->relay;
		if ((s = invite_encode(&inv)) != NULL)
			goto out;
		log_msg(LOG_WARN, "relay: invites leave the TURN server out: "
		    "its credentials are not printable ASCII");
		rs->relay_share = 0;
		memset(&inv.relay, 0, sizeof(inv.relay));
	}
	s = invite_encode(&inv);
out:
	sodium_memzero(&inv, sizeof(inv));
	return s;
}
