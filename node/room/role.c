/*
 * role.c: who governs the room (docs/PROTOCOL.md, "Owner and admins"):
 * the owner (the member who made the room) and the admins it names, on
 * the node thread.  An admin grant is an event signed by the owner
 * (frame_admin), kept in admins.json and passed on as it was signed, so
 * every member can check it; a member whose version 3 hello says it
 * holds fewer grants than we do gets ours again.  A joiner learns the
 * owner from its inviter's version 3 hello, the member its invite named:
 * the trust the invite already carries.
 *
 * Its state is its own (struct roles); it never blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/role.h"
#include "node/store/home.h"

#define ADMINS_FILE "admins.json"
#define ADMINS_FILE_MAX (1024 * 1024)

struct roles {
	int has_owner;              /* the room's owner is known */
	uint8_t owner[PAPO_KEY_LEN];
	struct frame_admin *admins; /* grants held, malloc'd */
	size_t nadmins, admins_cap;
};

int
role_new(struct room *room)
{
	return (room->roles = calloc(1, sizeof(*room->roles))) != NULL ? 0 : -1;
}

void
role_free(struct room *room)
{
	if (room->roles == NULL)
		return;
	free(room->roles->admins);
	free(room->roles);
	room->roles = NULL;
}

const uint8_t *
role_owner(const struct room *room)
{
	return room->roles->has_owner ? room->roles->owner : NULL;
}

int
role_is_admin(const struct room *room, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t i = 0; i < room->roles->nadmins; i++)
		if (memcmp(room->roles->admins[i].id, id, PAPO_KEY_LEN) == 0)
			return 1;
	return 0;
}

const char *
role_of(const struct room *room, const uint8_t id[PAPO_KEY_LEN])
{
	if (room->roles->has_owner && memcmp(room->roles->owner, id, PAPO_KEY_LEN) == 0)
		return "owner";
	return role_is_admin(room, id) ? "admin" : "member";
}

/* A member's name for the log and replies, ours included. */
static const char *
role_name(const struct room *room, const uint8_t id[PAPO_KEY_LEN], char buf[16])
{
	char text[PAPO_ID_LEN + 1];
	struct member *m;

	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) == 0)
		return room->env.room->me;
	if ((m = member_find(room, id)) != NULL && m->name[0] != '\0')
		return m->name;
	sec_id_format(id, text);
	snprintf(buf, 16, "%.8s", text);
	return buf;
}

static void
role_save(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN];
	cJSON *arr = cJSON_CreateArray();
	char *text = NULL;
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	for (size_t i = 0; i < room->roles->nadmins; i++) {
		struct frame f;

		memset(&f, 0, sizeof(f));
		f.type = FRAME_ADMIN;
		f.u.admin = room->roles->admins[i];
		buf_reset(&b);
		if (frame_encode(&f, &b) == 0)
			cJSON_AddItemToArray(arr, cJSON_ParseWithLength(
			    (const char *)b.p, b.len));
	}
	buf_free(&b);
	if ((text = cJSON_Print(arr)) != NULL &&
	    fs_path(path, sizeof(path), room->env.home, ADMINS_FILE) == 0 &&
	    fs_write(err, path, text, strlen(text)) == -1)
		room_log(room, LOG_WARN, "%s", err);
	cJSON_free(text);
	cJSON_Delete(arr);
}

/* Takes a verified grant: 1 when new (kept), 0 when held already or not
 * the owner's, -1 when the table is full. */
static int
role_take(struct room *room, const struct frame_admin *a)
{
	if (!room->roles->has_owner || memcmp(a->by, room->roles->owner, PAPO_KEY_LEN) != 0)
		return 0;
	if (role_is_admin(room, a->id) ||
	    memcmp(a->id, room->roles->owner, PAPO_KEY_LEN) == 0)
		return 0;
	if (room->roles->nadmins == ROOM_MEMBERS_MAX)
		return -1;
	if (room->roles->nadmins == room->roles->admins_cap) {
		size_t cap = room->roles->admins_cap == 0 ? 4 : room->roles->admins_cap * 2;
		struct frame_admin *v = realloc(room->roles->admins, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		room->roles->admins = v;
		room->roles->admins_cap = cap;
	}
	room->roles->admins[room->roles->nadmins++] = *a;
	return 1;
}

void
role_load(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN];
	char *text = NULL, *one;
	size_t len;
	int exists = 0;
	cJSON *arr, *e;

	/* The owner: ourselves when we made the room (room.json has no
	 * inviter, as in rooms made before owners were kept), else as
	 * room.json says. */
	if (room->env.room->has_owner) {
		room->roles->has_owner = 1;
		memcpy(room->roles->owner, room->env.room->owner, PAPO_KEY_LEN);
	} else if (!room->env.room->has_inviter) {
		room->roles->has_owner = 1;
		memcpy(room->roles->owner, room->env.me->pk, PAPO_KEY_LEN);
	}
	if (fs_path(path, sizeof(path), room->env.home, ADMINS_FILE) == -1 ||
	    fs_read(err, path, ADMINS_FILE_MAX, &text, &len, &exists) == -1) {
		if (exists)
			room_log(room, LOG_WARN, "%s", err);
		return;
	}
	if ((arr = cJSON_ParseWithLength(text, len)) == NULL ||
	    !cJSON_IsArray(arr))
		room_log(room, LOG_WARN, "%s is damaged: its admin grants come again "
		    "from the other members", path);
	cJSON_ArrayForEach(e, arr) {
		struct frame f;

		if ((one = cJSON_PrintUnformatted(e)) == NULL)
			continue;
		/* Checked again: the file is ours, but the signature is
		 * what makes a grant. */
		if (frame_decode(room->env.keys, one, strlen(one), FRAME_V3,
		    &f) == FRAME_OK && f.type == FRAME_ADMIN)
			role_take(room, &f.u.admin);
		else
			room_log(room, LOG_WARN, "%s: a grant that does not verify: "
			    "skipped", path);
		frame_clear(&f);
		cJSON_free(one);
	}
	cJSON_Delete(arr);
	free(text);
}

/* Tells the program: kind "admin", who and by whom. */
static void
role_emit(struct room *room, const struct frame_admin *a)
{
	cJSON *o = cJSON_CreateObject();
	char id[PAPO_ID_LEN + 1], nb[16], nb2[16];

	cJSON_AddStringToObject(o, "kind", "admin");
	cJSON_AddStringToObject(o, "name", role_name(room, a->id, nb));
	sec_id_format(a->id, id);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "by", role_name(room, a->by, nb2));
	cJSON_AddNumberToObject(o, "ts", (double)a->ts);
	room_emit_json(room, NODE_EV_ROOM, o);
}

static void
role_send_all(struct room *room, struct member *to)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_ADMIN;
	for (size_t i = 0; i < room->roles->nadmins; i++) {
		f.u.admin = room->roles->admins[i];
		member_send(room, to, &f);
	}
}

void
role_on_admin(struct room *room, struct link *l, struct frame *in)
{
	const struct frame_admin *a = &in->u.admin;
	char nb[16];
	struct frame f;
	int r;

	if (!room->roles->has_owner) {
		room_log(room, LOG_INFO, "an admin grant before we know the room's "
		    "owner: left for later");
		return;
	}
	if (memcmp(a->by, room->roles->owner, PAPO_KEY_LEN) != 0) {
		room_log(room, LOG_WARN, "an admin grant signed by %s, not the "
		    "room's owner: ignored", role_name(room, a->by, nb));
		return;
	}
	if ((r = role_take(room, a)) <= 0)
		return;
	room_log(room, LOG_INFO, "%s is now an admin of the room",
	    role_name(room, a->id, nb));
	role_save(room);
	role_emit(room, a);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_ADMIN;
	f.u.admin = *a;
	members_flood(room, &f, l->m);
}

void
role_on_hello(struct room *room, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;

	if (h->version < 3)
		return;
	/* The owner, from the member our invite named only. */
	if (!room->roles->has_owner && h->has_owner && room->env.room->has_inviter &&
	    memcmp(m->id, room->env.room->inviter, PAPO_KEY_LEN) == 0) {
		char err[PAPO_ERR_LEN], nb[16];
		struct room_file r;

		room->roles->has_owner = 1;
		memcpy(room->roles->owner, h->owner, PAPO_KEY_LEN);
		room_log(room, LOG_INFO, "the room's owner is %s, as our inviter says",
		    role_name(room, h->owner, nb));
		if (roomfile_load(err, room->env.home, &r) == 0) {
			r.has_owner = 1;
			memcpy(r.owner, h->owner, PAPO_KEY_LEN);
			if (roomfile_save(err, room->env.home, &r) == -1)
				room_log(room, LOG_WARN, "%s", err);
			roomfile_wipe(&r);
		} else
			room_log(room, LOG_WARN, "%s", err);
	}
	if (h->events < room->roles->nadmins)
		role_send_all(room, m);
}

void
role_hello(const struct room *room, struct frame_hello *h)
{
	if (room->roles->has_owner) {
		h->has_owner = 1;
		memcpy(h->owner, room->roles->owner, PAPO_KEY_LEN);
	}
	h->events = room->roles->nadmins;
}

void
role_request_admin(struct room *room, struct node_msg *req)
{
	struct node_member_args *args = node_args_member(req);
	struct frame f;
	struct member *m;
	char nb[16];
	int ambiguous = 0;
	cJSON *o;

	if (!room->roles->has_owner ||
	    memcmp(room->roles->owner, room->env.me->pk, PAPO_KEY_LEN) != 0) {
		room_fail(room, req, 403, "only the room's owner (%s) can make "
		    "admins", room->roles->has_owner ? role_name(room, room->roles->owner, nb) :
		    "not known yet");
		return;
	}
	if (args->name == NULL || (m = member_lookup(room, args->name,
	    &ambiguous)) == NULL) {
		room_fail(room, req, 404, ambiguous ? "more than one member is "
		    "called %s: give its id" : "no member called %s",
		    args->name != NULL ? args->name : "");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "admin", member_name(m, nb));
	cJSON_AddStringToObject(o, "id", m->idtext);
	if (role_is_admin(room, m->id)) {
		cJSON_AddBoolToObject(o, "already", 1);
		goto answer;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_ADMIN;
	memcpy(f.u.admin.id, m->id, PAPO_KEY_LEN);
	f.u.admin.ts = loop_wall_ms();
	if (frame_admin_sign(&f.u.admin, room->env.keys, room->env.me) == -1 ||
	    role_take(room, &f.u.admin) != 1) {
		cJSON_Delete(o);
		room_fail(room, req, 500, "could not make the grant");
		return;
	}
	cJSON_AddBoolToObject(o, "already", 0);
	room_log(room, LOG_INFO, "%s is now an admin of the room", member_name(m, nb));
	role_save(room);
	role_emit(room, &f.u.admin);
	members_flood(room, &f, NULL);
answer:
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	room->env.emit(room->env.arg, req);
}

void
role_json(const struct room *room, cJSON *o)
{
	cJSON *arr;
	char id[PAPO_ID_LEN + 1], nb[16];

	if (room->roles->has_owner) {
		cJSON *w = cJSON_AddObjectToObject(o, "owner");

		cJSON_AddStringToObject(w, "name", role_name(room, room->roles->owner, nb));
		sec_id_format(room->roles->owner, id);
		cJSON_AddStringToObject(w, "id", id);
	} else
		cJSON_AddNullToObject(o, "owner");
	arr = cJSON_AddArrayToObject(o, "admins");
	for (size_t i = 0; i < room->roles->nadmins; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "name",
		    role_name(room, room->roles->admins[i].id, nb));
		sec_id_format(room->roles->admins[i].id, id);
		cJSON_AddStringToObject(e, "id", id);
	}
}

void
role_member_json(const struct room *room, const struct member *m, cJSON *e)
{
	cJSON_AddStringToObject(e, "role", role_of(room, m->id));
}
