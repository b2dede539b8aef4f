/*
 * node.c: the node thread (node.h).  It owns the room, the identity, the
 * store and the live rooms, runs their loop, and talks to the rest of the
 * program only through two channels: requests in, answers and events out.
 * Everything is built on the caller's thread before the node thread
 * starts and released after it has ended, so each object has one owner
 * at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/net.h"
#include "node/net/turn.h"
#include "node/blobs.h"
#include "node/node.h"
#include "node/room/files.h"
#include "node/room/room.h"
#include "node/store/room.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "node/wire/invite.h"

/* One room the node holds: its folder and files, its keys, and the room
 * itself (node/room/room.h) once started. */
struct node_room {
	struct node *n;
	char *dir;               /* home, or home/rooms/ID (room.h) */
	char id[PAPO_ROOMID_LEN + 1];
	struct room_file file;
	struct room_keys keys;
	struct store *store;
	struct room *room;
};

struct node {
	pthread_t thread;
	int started;
	struct loop *loop;
	struct chan *in, *out;
	int stop_fd;
	char *home;
	struct identity *me;
	struct net *net;
	struct node_room *rooms[PAPO_ROOMS_MAX];
	size_t nrooms;
	char dflt[PAPO_ROOMID_LEN + 1];   /* the default set, or "" */
	struct room_env env;   /* what every room's room_env shares */
	struct room_settings settings;  /* what every room's env points to */
	char quic[ADDR_STRLEN];
	char *invite;
	struct addr advertise[PAPO_ADDR_MAX];
	size_t nadvertise;
	/* The relay and its credentials (wiped at stop), and whether it
	 * was set for this daemon ("settings") or came with the invite of
	 * its first room that had one ("invite"); NULL: none. */
	struct turn_conf turn;
	struct invite_relay relay;
	const char *relay_from;
	int relay_share;         /* invites carry the relay */
	struct blobwork *work;   /* adds shared files (blobs.h) */
	char *spool;             /* home/spool (node_spool_dir) */
};

/* Parses "ADDR:PORT,ADDR:PORT" (--advertise, PAPO_ADVERTISE) into n. */
static int
node_parse_advertise(char err[PAPO_ERR_LEN], struct node *n, const char *list)
{
	char one[128];
	const char *p = list, *end;
	size_t len;

	while (list != NULL && *p != '\0') {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			snprintf(one, sizeof(one), "%.*s", (int)len, p);
			if (n->nadvertise == PAPO_ADDR_MAX) {
				snprintf(err, PAPO_ERR_LEN, "at most %d advertised "
				    "addresses", PAPO_ADDR_MAX);
				return -1;
			}
			if (addr_parse(one, &n->advertise[n->nadvertise]) == -1 ||
			    addr_is_unspecified(&n->advertise[n->nadvertise])) {
				snprintf(err, PAPO_ERR_LEN, "the advertised address "
				    "'%s' is not ADDR:PORT (for example "
				    "203.0.113.7:7778)", one);
				return -1;
			}
			n->nadvertise++;
		}
		p += len + (end != NULL);
	}
	return 0;
}

/* Copies one TURN credential; -1 with err when it does not fit. */
static int
node_turn_cred(char err[PAPO_ERR_LEN], const char *what, const char *v,
    char out[TURN_CRED_MAX])
{
	if (v == NULL)
		return 0;
	if (strlen(v) >= TURN_CRED_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the TURN %s is longer than %d "
		    "bytes", what, TURN_CRED_MAX - 1);
		return -1;
	}
	strcpy(out, v);
	return 0;
}

/*
 * The TURN relay this daemon uses, into n->relay (as an invite carries
 * it) and n->turn (resolved, on the caller's thread: a name may take a
 * while): the one set for it (PAPO_TURN and its credentials), else the
 * one its invite carried (room.json).  0 with none; -1 with err.
 */
static int
node_turn_conf(char err[PAPO_ERR_LEN], struct node *n,
    const struct node_config *c)
{
	struct invite_relay *r = &n->relay;
	char why[PAPO_ERR_LEN];

	if (c->turn != NULL && c->turn[0] != '\0') {
		if (strlen(c->turn) > INVITE_URL_MAX) {
			snprintf(err, PAPO_ERR_LEN, "the TURN server's URL is "
			    "longer than %d bytes", INVITE_URL_MAX);
			return -1;
		}
		strcpy(r->url, c->turn);
		if (node_turn_cred(err, "user", c->turn_user, r->user) == -1 ||
		    node_turn_cred(err, "password", c->turn_pass,
		    r->pass) == -1 ||
		    node_turn_cred(err, "shared secret", c->turn_secret,
		    r->secret) == -1)
			return -1;
		n->relay_from = "settings";
	} else {
		for (size_t i = 0; i < n->nrooms && n->relay_from == NULL; i++)
			if (n->rooms[i]->file.relay.url[0] != '\0') {
				*r = n->rooms[i]->file.relay;
				n->relay_from = "invite";
			}
		if (n->relay_from == NULL)
			return 0;
	}
	if (turn_parse_url(r->url, &n->turn.server, why) == -1) {
		/* A relay set for us that cannot work stops the start, as
		 * any wrong setting; one the invite brought (a name only the
		 * inviter's network resolves, say) must not. */
		if (strcmp(n->relay_from, "invite") == 0) {
			log_msg(LOG_WARN, "relay: the invite's TURN server "
			    "cannot be used, going on without one: %s", why);
			n->relay_from = NULL;
			sodium_memzero(r, sizeof(*r));
			return 0;
		}
		snprintf(err, PAPO_ERR_LEN, "TURN server: %s", why);
		return -1;
	}
	if (r->secret[0] == '\0' && (r->user[0] == '\0' || r->pass[0] == '\0')) {
		snprintf(err, PAPO_ERR_LEN, "the TURN server %s needs a user "
		    "and password, or a shared secret", r->url);
		return -1;
	}
	strcpy(n->turn.user, r->user);
	strcpy(n->turn.pass, r->pass);
	strcpy(n->turn.secret, r->secret);
	return 0;
}

void
node_random(void *p, size_t n)
{
	randombytes_buf(p, n);
}

/* The next message of a channel (lib/chan.h), or NULL. */
static struct node_msg *
node_msg_pop(struct chan *c)
{
	struct chan_link *l = chan_pop(c);

	return l != NULL ? chan_item(l, struct node_msg, link) : NULL;
}

/* A message still in a channel when it is freed. */
static void
node_msg_drop(struct chan_link *l)
{
	node_msg_free(chan_item(l, struct node_msg, link));
}

static char *node_make_invite(struct node_room *r);
static void node_rooms_changed(struct node *n);

static void
node_emit(void *arg, struct node_msg *m)
{
	struct node_room *r = arg;
	/* m is the other thread's once pushed: read it before. */
	int refused = m->kind == NODE_EV_REFUSED;

	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	if (m->kind == NODE_EV_ADDRS)
		m->text = node_make_invite(r);
	chan_push(r->n->out, &m->link);
	/* A room that shut us out says so in the list of rooms. */
	if (refused)
		node_rooms_changed(r->n);
}

/* Answers m with an error. */
static void
node_fail(struct node *n, struct node_msg *m, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
node_fail(struct node *n, struct node_msg *m, int code, const char *fmt, ...)
{
	va_list ap;

	m->code = code;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	chan_push(n->out, &m->link);
}

/* The rooms as room_pick sees them, into refs (PAPO_ROOMS_MAX). */
static void
node_refs(const struct node *n, struct room_ref *refs)
{
	for (size_t i = 0; i < n->nrooms; i++) {
		refs[i].id = n->rooms[i]->id;
		refs[i].name = n->rooms[i]->file.name;
		refs[i].dflt = n->nrooms > 1 &&
		    strcmp(n->rooms[i]->id, n->dflt) == 0;
	}
}

/* The default room: the only one, else the one set; NULL when none. */
static struct node_room *
node_default(const struct node *n)
{
	if (n->nrooms == 1)
		return n->rooms[0];
	for (size_t i = 0; i < n->nrooms; i++)
		if (strcmp(n->rooms[i]->id, n->dflt) == 0)
			return n->rooms[i];
	return NULL;
}

/*
 * The room sel names: its id, its name, or the start of its id (4
 * characters at least), each unambiguous; NULL or "": the default room.
 * NULL with m answered otherwise.
 */
static struct node_room *
node_find(struct node *n, struct node_msg *m)
{
	const char *sel = m->room;
	struct node_room *found;
	struct room_ref refs[PAPO_ROOMS_MAX];
	char err[PAPO_ERR_LEN];
	int status;
	long at;

	if (n->nrooms == 0) {
		node_fail(n, m, 404, "this daemon is in no room yet: join one "
		    "with 'papo join INVITE' or make one with 'papo new'");
		return NULL;
	}
	node_refs(n, refs);
	if (sel == NULL || sel[0] == '\0') {
		if ((found = node_default(n)) != NULL)
			return found;
		room_refs_format(refs, n->nrooms, err, sizeof(err) - 96);
		node_fail(n, m, 409, "this daemon is in %zu rooms and none is "
		    "the default: name one (--room, or room) of %s", n->nrooms,
		    err);
		return NULL;
	}
	if ((at = room_pick(sel, refs, n->nrooms, err, &status)) == -1) {
		node_fail(n, m, status, "%s", err);
		return NULL;
	}
	return n->rooms[at];
}

static int node_default_save(char err[PAPO_ERR_LEN], struct node *n);

/* The default room's file: home/rooms.json, {"default": "ID"}. */
static void
node_default_load(struct node *n)
{
	char path[4096], err[PAPO_ERR_LEN], *text = NULL;
	const cJSON *d;
	cJSON *o;
	size_t len;
	int exists;

	n->dflt[0] = '\0';
	if (fs_path(path, sizeof(path), n->home, "rooms.json") == -1)
		goto out;
	if (fs_read(err, path, 4096, &text, &len, &exists) == -1) {
		if (exists) {
			log_msg(LOG_WARN, "%s: no default room", err);
			goto out;
		}
		/* Rooms added while no daemon ran: the first (the home's
		 * own, as before) is the default, as when they are added to
		 * one running. */
		if (n->nrooms >= 2) {
			strcpy(n->dflt, n->rooms[0]->id);
			if (node_default_save(err, n) == -1)
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
		strcpy(n->dflt, d->valuestring);
	cJSON_Delete(o);
out:
	free(text);
}

static int
node_default_save(char err[PAPO_ERR_LEN], struct node *n)
{
	char path[4096], body[128];

	if (n->dflt[0] != '\0')
		snprintf(body, sizeof(body), "{\"default\": \"%s\"}\n", n->dflt);
	else
		snprintf(body, sizeof(body), "{\"default\": null}\n");
	if (fs_path(path, sizeof(path), n->home, "rooms.json") == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", n->home);
		return -1;
	}
	return fs_write(err, path, body, strlen(body));
}

static cJSON *
node_room_json(const struct node *n, const struct node_room *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "name", r->file.name);
	cJSON_AddStringToObject(o, "me", r->file.me);
	cJSON_AddBoolToObject(o, "default", r == node_default(n));
	room_summary(r->room, o);
	return o;
}

static char *
node_rooms_json(const struct node *n)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	const struct node_room *d = node_default(n);
	char *s;

	arr = cJSON_AddArrayToObject(o, "rooms");
	for (size_t i = 0; i < n->nrooms; i++)
		cJSON_AddItemToArray(arr, node_room_json(n, n->rooms[i]));
	if (d != NULL)
		cJSON_AddStringToObject(o, "default", d->id);
	else
		cJSON_AddNullToObject(o, "default");
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Tells the program the rooms changed. */
static void
node_rooms_changed(struct node *n)
{
	struct node_msg *ev = node_msg_new(NODE_EV_ROOMS);

	if (ev == NULL || (ev->json = node_rooms_json(n)) == NULL) {
		node_msg_free(ev);
		return;
	}
	chan_push(n->out, &ev->link);
}

int
node_keep_check(char err[PAPO_ERR_LEN], const char *text)
{
	struct store_keep k;

	return store_keep_parse(err, text, &k);
}

/*
 * Retention at start, before any peer is heard: the log is cut to what
 * PAPO_KEEP keeps, so that a daemon restarted with a smaller setting
 * neither serves nor offers what it no longer keeps.
 */
static int
node_retain(char err[PAPO_ERR_LEN], struct store *s,
    const struct room_settings *set)
{
	char why[PAPO_ERR_LEN];
	long n;

	if (!store_compact_due(s, &set->keep, loop_wall_ms(), 0))
		return 0;
	if ((n = store_compact(why, s, &set->keep, loop_wall_ms())) == -1) {
		snprintf(err, PAPO_ERR_LEN, "retention (PAPO_KEEP=%s): %s",
		    set->keep_text, why);
		return -1;
	}
	if (n > 0)
		log_msg(LOG_INFO, "retention (PAPO_KEEP=%s): %ld messages "
		    "dropped from the log", set->keep_text, n);
	return 0;
}

/* Closes r's room (a bye to its members) and files, and frees r. */
static void
node_room_close(struct node_room *r)
{
	if (r == NULL)
		return;
	room_free(r->room);
	store_close(r->store);
	room_wipe(&r->file);
	sodium_memzero(&r->keys, sizeof(r->keys));
	free(r->dir);
	free(r);
}

/* Loads the room in dir: its file, its store (cut to PAPO_KEEP); its
 * room joins the net once there is one (node_room_start). */
static struct node_room *
node_room_load(char err[PAPO_ERR_LEN], struct node *n, const char *dir)
{
	struct node_room *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->dir = strdup(dir)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	r->n = n;
	if (room_load(err, dir, &r->file) == -1)
		goto fail;
	sec_room_keys(r->file.secret, &r->keys);
	sec_room_id_format(&r->keys, r->id);
	for (size_t i = 0; i < n->nrooms; i++)
		if (strcmp(n->rooms[i]->id, r->id) == 0) {
			snprintf(err, PAPO_ERR_LEN, "%s and %s hold the same "
			    "room", n->rooms[i]->dir, dir);
			goto fail;
		}
	if ((r->store = store_open(err, dir, &r->keys)) == NULL ||
	    node_retain(err, r->store, &n->settings) == -1)
		goto fail;
	return r;
fail:
	node_room_close(r);
	return NULL;
}

/* Starts r's room on the net. */
static int
node_room_start(char err[PAPO_ERR_LEN], struct node *n, struct node_room *r)
{
	struct room_env env = n->env;

	env.store = r->store;
	env.keys = &r->keys;
	env.room = &r->file;
	env.home = r->dir;
	env.arg = r;
	return (r->room = room_new(err, &env)) != NULL ? 0 : -1;
}

/* Takes r out of the node's rooms and closes it. */
static void
node_room_drop(struct node *n, struct node_room *r)
{
	for (size_t i = 0; i < n->nrooms; i++)
		if (n->rooms[i] == r) {
			memmove(n->rooms + i, n->rooms + i + 1,
			    (n->nrooms - i - 1) * sizeof(n->rooms[0]));
			n->nrooms--;
			break;
		}
	node_room_close(r);
}

/* Loads the rooms of home not held yet (all of them at start; later the
 * one just joined or made), their rooms not started yet: the last one
 * in *added. */
static int
node_rooms_load(char err[PAPO_ERR_LEN], struct node *n,
    struct node_room **added)
{
	char **dirs;
	size_t nd;
	int rc = 0;

	*added = NULL;
	if (room_dirs(err, n->home, &dirs, &nd) == -1)
		return -1;
	for (size_t i = 0; i < nd && rc == 0 && n->nrooms < PAPO_ROOMS_MAX;
	    i++) {
		int held = 0;

		for (size_t j = 0; j < n->nrooms && !held; j++)
			held = strcmp(n->rooms[j]->dir, dirs[i]) == 0;
		if (held)
			continue;
		if ((*added = node_room_load(err, n, dirs[i])) == NULL)
			rc = -1;
		else
			n->rooms[n->nrooms++] = *added;
	}
	room_dirs_free(dirs, nd);
	return rc;
}

/* NODE_JOIN and NODE_CREATE: the room's files made, then the room
 * started in place, answered with it (and, made, its invite). */
static void
node_do_add(struct node *n, struct node_msg *m)
{
	char err[PAPO_ERR_LEN];
	struct node_room *r;
	char *invite = NULL, dir[4096] = "";
	cJSON *o;
	int rc;

	if (n->nrooms == PAPO_ROOMS_MAX) {
		node_fail(n, m, 409, "this daemon holds %d rooms, the most it "
		    "can; leave one first", PAPO_ROOMS_MAX);
		return;
	}
	if (m->kind == NODE_JOIN)
		rc = room_join_in(err, n->home, m->text != NULL ? m->text : "",
		    m->name, m->about, NULL, dir);
	else
		rc = room_create(err, n->home, m->name, m->about, m->text, NULL,
		    n->quic, &invite);
	if (rc == -1) {
		node_fail(n, m, errno == EEXIST ? 409 : 400, "%s", err);
		return;
	}
	/* That one holds the listen address; the answer's, below, where
	 * the node is reached. */
	free(invite);
	err[0] = '\0';
	/* A room held, given the newer key it missed (room_join): opened
	 * again, with it. */
	for (size_t i = 0; rc == 1 && i < n->nrooms; i++)
		if (strcmp(n->rooms[i]->dir, dir) == 0) {
			node_room_drop(n, n->rooms[i]);
			break;
		}
	if (node_rooms_load(err, n, &r) == -1 || r == NULL ||
	    node_room_start(err, n, r) == -1) {
		char why[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN];

		if (r != NULL)
			node_room_drop(n, r);
		/* No folder of a room that did not open is left behind. */
		if (rc == 0 && m->kind == NODE_JOIN && dir[0] != '\0' &&
		    room_leave(why, n->home, dir, 1, aside) == -1)
			log_msg(LOG_WARN, "rooms: %s", why);
		node_fail(n, m, 500, "%s", err[0] == '\0' ?
		    "the room was stored but did not open" : err);
		if (rc == 1)
			node_rooms_changed(n);
		return;
	}
	/* A second room: the first stays the default, so that what used
	 * the daemon without naming a room goes on as before. */
	if (n->nrooms == 2 && n->dflt[0] == '\0') {
		strcpy(n->dflt, n->rooms[0]->id);
		if (node_default_save(err, n) == -1)
			log_msg(LOG_WARN, "rooms: %s", err);
	}
	log_msg(LOG_INFO, "rooms: %s room %s (%.8s)", rc == 1 ? "took the "
	    "newer key of" : m->kind == NODE_JOIN ? "joined" : "made",
	    r->file.name, r->id);
	o = node_room_json(n, r);
	if ((invite = node_make_invite(r)) != NULL)
		cJSON_AddStringToObject(o, "invite", invite);
	free(invite);
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	m->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	chan_push(n->out, &m->link);
	node_rooms_changed(n);
}

/* NODE_LEAVE: a bye to the room's members, its files moved aside (or,
 * limit 1, deleted). */
static void
node_do_leave(struct node *n, struct node_msg *m)
{
	struct node_room *r = node_find(n, m);
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "", name[ROOM_NAME_MAX + 1];
	char id[PAPO_ROOMID_LEN + 1], dir[4096];
	cJSON *o;
	int rc;

	if (r == NULL)
		return;
	strcpy(name, r->file.name);
	strcpy(id, r->id);
	snprintf(dir, sizeof(dir), "%s", r->dir);
	node_room_drop(n, r);
	rc = room_leave(err, n->home, dir, m->limit == 1, aside);
	if (strcmp(n->dflt, id) == 0 || (n->nrooms <= 1 && n->dflt[0] != '\0')) {
		n->dflt[0] = '\0';
		if (node_default_save(err, n) == -1)
			log_msg(LOG_WARN, "rooms: %s", err);
	}
	log_msg(LOG_INFO, "rooms: left room %s (%.8s)", name, id);
	snprintf(m->room_id, sizeof(m->room_id), "%s", id);
	if (rc == -1) {
		node_fail(n, m, 500, "left the room, but its files: %s", err);
		node_rooms_changed(n);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "left", id);
	cJSON_AddStringToObject(o, "name", name);
	if (aside[0] != '\0') {
		char kept[4096];

		if (fs_path(kept, sizeof(kept), n->home, aside) == 0)
			cJSON_AddStringToObject(o, "kept", kept);
	} else
		cJSON_AddNullToObject(o, "kept");
	m->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	chan_push(n->out, &m->link);
	node_rooms_changed(n);
}

/* NODE_DEFAULT: the room named is the default from now on. */
static void
node_do_default(struct node *n, struct node_msg *m)
{
	struct node_room *r = node_find(n, m);
	char err[PAPO_ERR_LEN];

	if (r == NULL)
		return;
	strcpy(n->dflt, r->id);
	if (node_default_save(err, n) == -1) {
		node_fail(n, m, 500, "%s", err);
		return;
	}
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	m->json = node_rooms_json(n);
	chan_push(n->out, &m->link);
	node_rooms_changed(n);
}

/* NODE_RENAME: this member's name in the room named, or in every room
 * when none is: room.json saved, then the room greets its members again
 * with it (room_renamed). */
static void
node_do_rename(struct node *n, struct node_msg *m)
{
	char err[PAPO_ERR_LEN], was[PAPO_NAME_MAX + 1];
	const char *name = m->to != NULL ? m->to : "";
	struct node_room *one = NULL;
	cJSON *o, *arr;

	if (room_check_name(err, name) == -1) {
		node_fail(n, m, 400, "%s", err);
		return;
	}
	if (m->room != NULL && m->room[0] != '\0' &&
	    (one = node_find(n, m)) == NULL)
		return;
	if (n->nrooms == 0) {
		node_fail(n, m, 404, "this daemon is in no room yet");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	arr = cJSON_AddArrayToObject(o, "rooms");
	for (size_t i = 0; i < n->nrooms; i++) {
		struct node_room *r = n->rooms[i];
		cJSON *e;

		if ((one != NULL && r != one) || strcmp(r->file.me, name) == 0)
			continue;
		strcpy(was, r->file.me);
		strcpy(r->file.me, name);
		if (room_save(err, r->dir, &r->file) == -1) {
			strcpy(r->file.me, was);
			cJSON_Delete(o);
			node_fail(n, m, 500, "%s", err);
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
	chan_push(n->out, &m->link);
	node_rooms_changed(n);
}

/* A room's invite, made now: the addresses it carries are the ones the
 * node is reached at now (they change as reach learns). */
static void
node_do_invite(struct node *n, struct node_msg *m)
{
	struct node_room *r;
	cJSON *o;
	char *invite;

	if ((r = node_find(n, m)) == NULL)
		return;
	snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
	if ((invite = node_make_invite(r)) == NULL) {
		node_fail(n, m, 500, "cannot make the room's invite");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "invite", invite);
	cJSON_AddStringToObject(o, "room", r->file.name);
	cJSON_AddStringToObject(o, "room_id", r->id);
	sodium_memzero(invite, strlen(invite));
	free(invite);
	if ((m->json = cJSON_PrintUnformatted(o)) == NULL)
		node_fail(n, m, 500, "out of memory");
	else
		chan_push(n->out, &m->link);
	cJSON_Delete(o);
}

/*
 * A search of every room: room "*", or no room named where several are
 * and none is the default (what else could it mean).  Answers m and
 * returns 1; 0 for a search of one room.
 */
static int
node_search_every(struct node *n, struct node_msg *m)
{
	struct room *rooms[PAPO_ROOMS_MAX];
	int every = m->room != NULL && strcmp(m->room, "*") == 0;

	if (!every && (m->room == NULL || m->room[0] == '\0') &&
	    n->nrooms > 1 && node_default(n) == NULL)
		every = 1;
	if (!every)
		return 0;
	if (n->nrooms == 0) {
		node_fail(n, m, 404, "this daemon is in no room yet: join one "
		    "with 'papo join INVITE' or make one with 'papo new'");
		return 1;
	}
	for (size_t i = 0; i < n->nrooms; i++)
		rooms[i] = n->rooms[i]->room;
	rooms_search(rooms, n->nrooms, m);
	return 1;
}

static void
node_on_request(void *arg, uint32_t events)
{
	struct node *n = arg;
	struct node_msg *m;
	struct node_room *r;

	(void)events;
	while ((m = node_msg_pop(n->in)) != NULL) {
		switch (m->kind) {
		case NODE_ROOMS:
			if ((m->json = node_rooms_json(n)) == NULL)
				node_fail(n, m, 500, "out of memory");
			else
				chan_push(n->out, &m->link);
			break;
		case NODE_JOIN:
		case NODE_CREATE:
			node_do_add(n, m);
			break;
		case NODE_LEAVE:
			node_do_leave(n, m);
			break;
		case NODE_DEFAULT:
			node_do_default(n, m);
			break;
		case NODE_INVITE:
			node_do_invite(n, m);
			break;
		case NODE_RENAME:
			node_do_rename(n, m);
			break;
		case NODE_SEARCH:
			if (node_search_every(n, m))
				break;
			/* FALLTHROUGH */
		default:
			if ((r = node_find(n, m)) == NULL)
				break;
			snprintf(m->room_id, sizeof(m->room_id), "%s", r->id);
			if (m->kind != NODE_BLOB_ADD)
				room_request(r->room, m);
			else if (blobwork_add(n->work, m, r->dir,
			    n->settings.files_quota) == -1)
				node_fail(n, m, 500, "cannot start sharing "
				    "the file: %s", strerror(errno));
			break;
		}
	}
}

static void
node_on_stop(void *arg, uint32_t events)
{
	struct node *n = arg;

	(void)events;
	loop_stop(n->loop);
}

/* Every room's bye, then the net's end. */
static void
node_close_rooms(struct node *n)
{
	while (n->nrooms > 0)
		node_room_close(n->rooms[--n->nrooms]);
	net_free(n->net);
	n->net = NULL;
}

static void *
node_main(void *arg)
{
	struct node *n = arg;

	/* The program learns the rooms first, before any event of one. */
	node_rooms_changed(n);
	if (loop_run(n->loop) == -1)
		log_msg(LOG_ERROR, "the node loop failed: %s", strerror(errno));
	/* Bye to everyone from this thread, which owns the connections. */
	node_close_rooms(n);
	return NULL;
}

/*
 * The invite others can join r with: the room (and the name its maker
 * gave it), this member, the addresses the node is reached at, and the
 * relay it uses (unless PAPO_TURN_SHARE=off), so that a joiner behind
 * another NAT reaches our relayed address through it with nothing set
 * (docs/REACHABILITY.md).  Credentials an invite cannot carry (not
 * printable ASCII) leave the relay out, said once in the log.
 */
static char *
node_make_invite(struct node_room *r)
{
	struct node *n = r->n;
	struct invite inv;
	const char *room;
	char *s;

	memset(&inv, 0, sizeof(inv));
	memcpy(inv.secret, r->file.secret, PAPO_KEY_LEN);
	memcpy(inv.inviter, n->me->pk, PAPO_KEY_LEN);
	inv.naddr = net_addrs(n->net, inv.addr, PAPO_ADDR_MAX);
	if ((room = room_given_name(&r->file)) != NULL)
		snprintf(inv.room, sizeof(inv.room), "%s", room);
	/* A joiner must hold the room's newest key to be let in. */
	inv.epoch = room_epoch(r->room, inv.epoch_secret);
	if (n->relay_from != NULL && n->relay_share) {
		inv.relay = n->relay;
		if ((s = invite_encode(&inv)) != NULL)
			goto out;
		log_msg(LOG_WARN, "relay: invites leave the TURN server out: "
		    "its credentials are not printable ASCII");
		n->relay_share = 0;
		memset(&inv.relay, 0, sizeof(inv.relay));
	}
	s = invite_encode(&inv);
out:
	sodium_memzero(&inv, sizeof(inv));
	return s;
}

/* home/spool, made 0700 and emptied of what a killed upload left. */
static int
node_spool_make(char err[PAPO_ERR_LEN], struct node *n)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (fs_path(path, sizeof(path), n->home, "spool") == -1 ||
	    (n->spool = strdup(path)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the home's name is too long");
		return -1;
	}
	if (fs_home(err, n->spool) == -1)
		return -1;
	if ((d = opendir(n->spool)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && fs_path(path, sizeof(path),
		    n->spool, de->d_name) == 0)
			unlink(path);
	closedir(d);
	return 0;
}

const char *
node_spool_dir(const struct node *n)
{
	return n->spool;
}

struct node_blob *
node_blob_open(char err[PAPO_ERR_LEN], int *code, struct node *n,
    const char *room, const char *ref)
{
	return blobs_open(err, code, n->home, room, ref);
}

uint64_t
node_blob_size(const struct node_blob *b)
{
	return blobs_size(b);
}

const char *
node_blob_name(const struct node_blob *b)
{
	return blobs_name(b);
}

const char *
node_blob_type(const struct node_blob *b)
{
	return blobs_type(b);
}

int
node_blob_read(char err[PAPO_ERR_LEN], struct node_blob *b, uint64_t off,
    void *out, size_t len)
{
	return blobs_read(err, b, off, out, len);
}

void
node_blob_close(struct node_blob *b)
{
	blobs_close(b);
}

_Static_assert(NODE_FILES_AUTO_NONE == FILES_AUTO_NONE,
    "PAPO_FILES_AUTO=0 reaches the rooms as it is");

struct node *
node_start(char err[PAPO_ERR_LEN], const struct node_config *c)
{
	struct node *n = calloc(1, sizeof(*n));
	struct room_env *env;
	struct room_settings *set;
	struct net_env ne;
	struct node_room *added;
	struct addr bound;

	if (n == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	n->stop_fd = -1;
	env = &n->env;
	set = &n->settings;
	env->set = set;
	if ((n->home = strdup(c->home)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if ((n->me = sec_identity_load(err, c->home)) == NULL)
		goto fail;
	if (store_keep_parse(err, c->keep, &set->keep) == -1)
		goto fail;
	set->keep_text = c->keep != NULL && c->keep[0] != '\0' ? c->keep : NULL;
	set->files_auto = c->files_auto;     /* NODE_FILES_AUTO_NONE too */
	set->files_quota = c->files_quota;
	set->bad_chunks = c->bad_chunks;
	if (node_spool_make(err, n) == -1)
		goto fail;
	/* Every room's files first (a damaged one stops the start), for
	 * the relay an invite brought (node_turn_conf). */
	if (node_rooms_load(err, n, &added) == -1)
		goto fail;
	node_default_load(n);
	memset(&ne, 0, sizeof(ne));
	ne.ops = &room_net_ops;
	if (addr_parse_listen(c->listen, &ne.listen) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the QUIC listen address '%s' is not "
		    "ADDR:PORT (for example 0.0.0.0:7778)", c->listen);
		goto fail;
	}
	if ((n->loop = loop_new()) == NULL || (n->in = chan_new()) == NULL ||
	    (n->out = chan_new()) == NULL ||
	    (n->work = blobwork_new(n->out)) == NULL ||
	    (n->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    loop_add_fd(n->loop, chan_fd(n->in), EPOLLIN, node_on_request, n) == -1 ||
	    loop_add_fd(n->loop, n->stop_fd, EPOLLIN, node_on_stop, n) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot set up the node: %s",
		    strerror(errno));
		goto fail;
	}
	ne.loop = env->loop = n->loop;
	ne.me = env->me = n->me;
	ne.version = set->version = c->version != 0 ? c->version :
	    FRAME_VERSION;
	if (node_parse_advertise(err, n, c->advertise) == -1)
		goto fail;
	ne.advertise = n->advertise;
	ne.nadvertise = n->nadvertise;
	/* A daemon speaking as one of version 1 keeps to what those did. */
	set->lan = !c->nolan && set->version >= 2;
	ne.portmap = !c->noportmap;
	ne.portmap_private = c->portmap_private;
	if (node_turn_conf(err, n, c) == -1)
		goto fail;
	if (n->relay_from != NULL) {
		ne.turn = &n->turn;
		ne.turn_from = n->relay_from;
	}
	n->relay_share = !c->turn_noshare;
	set->rate = c->rate;
	set->damp = c->damp;
	set->rate_self_off = c->rate_self_off;
	env->emit = node_emit;
	if ((n->net = net_new(err, &ne)) == NULL)
		goto fail;
	env->net = n->net;
	for (size_t i = 0; i < n->nrooms; i++)
		if (node_room_start(err, n, n->rooms[i]) == -1)
			goto fail;
	net_local(n->net, &bound);
	addr_format(&bound, n->quic);
	if (node_default(n) != NULL &&
	    (n->invite = node_make_invite(node_default(n))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot make the invite");
		goto fail;
	}
	if ((errno = pthread_create(&n->thread, NULL, node_main, n)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot start the node thread: %s",
		    strerror(errno));
		goto fail;
	}
	n->started = 1;
	return n;
fail:
	node_stop(n);
	return NULL;
}

void
node_halt(struct node *n)
{
	uint64_t one = 1;

	if (n == NULL || !n->started)
		return;
	while (write(n->stop_fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
	pthread_join(n->thread, NULL);
	n->started = 0;
}

void
node_stop(struct node *n)
{
	if (n == NULL)
		return;
	node_halt(n);
	node_close_rooms(n);
	/* The worker's last answer goes to out: it stops first. */
	blobwork_free(n->work);
	chan_free(n->in, node_msg_drop);
	chan_free(n->out, node_msg_drop);
	loop_free(n->loop);
	if (n->stop_fd != -1)
		close(n->stop_fd);
	sec_identity_free(n->me);
	sodium_memzero(&n->turn, sizeof(n->turn));
	sodium_memzero(&n->relay, sizeof(n->relay));
	free(n->invite);
	free(n->spool);
	free(n->home);
	free(n);
}

void
node_quic_addr(const struct node *n, char *out, size_t len)
{
	snprintf(out, len, "%s", n->quic);
}

int
node_relay(const struct node *n)
{
	return n->relay_from != NULL;
}

char *
node_invite(const struct node *n)
{
	return n->invite != NULL ? strdup(n->invite) : NULL;
}

int
node_fd(const struct node *n)
{
	return chan_fd(n->out);
}

void
node_submit(struct node *n, struct node_msg *m)
{
	chan_push(n->in, &m->link);
}

struct node_msg *
node_take(struct node *n)
{
	return node_msg_pop(n->out);
}
