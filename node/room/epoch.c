/*
 * epoch.c: the room's key epochs held by this member (docs/PROTOCOL.md,
 * "Key epochs"), on the node thread.  Epoch 0 is the key of the room
 * secret; each later one has a secret of its own, handed to members
 * sealed to their keys in an epoch frame signed by whoever made it.  A
 * version 3 connection seals with the newest epoch held and names it in
 * the envelope; a frame received picks its key by that number.  The
 * secrets, who made each epoch and its signed frame (to hand on to
 * members who missed it) are kept in epochs.json, 0600, replaced
 * atomically.  Two admins may change the key at once (or apart, in a
 * partition): of two changes of one number every member keeps the one
 * with the lower signature, whom either removed stays removed, and an
 * admin that sees a removed member given the key kept changes it again
 * (docs/PROTOCOL.md, "Concurrent changes").
 *
 * The epochs held and whom they removed are keyring.c's (keyring.h);
 * the frames kept for whom they removed, and whether we were shut out,
 * are this file's own (struct epochs).  It never blocks but for that
 * file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/epoch.h"
#include "node/room/presence.h"

#define EPOCHS_FILE "epochs.json"
#define EPOCHS_FILE_MAX (16 * 1024 * 1024)

/* An epoch frame kept only for whom it removed: a change that lost to
 * another of its number, or the one that removed us. */
struct epoch_kept {
	char *frame;                /* its signed epoch frame, JSON */
	uint8_t sig[PAPO_SIG_LEN];  /* that frame's signature */
	uint32_t n;                 /* its epoch */
};

struct epochs {
	struct epoch_kept *others;  /* epoch frames not held for their key,
	                             * kept for whom they removed */
	size_t nothers;
	char *shut_out;             /* why the room's newest key was not
	                             * given us (the program was told), or
	                             * NULL: in the list of rooms */
};

static int epoch_note(struct room *room, const struct frame_epoch *e,
    int quiet);
static const char *epoch_who(const struct room *room,
    const uint8_t id[PAPO_KEY_LEN],
    char buf[16]);

/* An epoch frame's JSON text we keep (its signature checked when it
 * came), decoded into f: 0, or -1 when text is NULL or no epoch frame. */
static int
epoch_decode(const struct room *room, const char *text, struct frame *f)
{
	if (text == NULL)
		return -1;
	if (frame_decode(room->env.keys, text, strlen(text), FRAME_V3 |
	    FRAME_TRUSTED, f) != FRAME_OK)
		return -1;
	if (f->type != FRAME_EPOCH) {
		frame_clear(f);
		return -1;
	}
	return 0;
}

/* Adds epoch n with its secret; frame (the signed epoch frame's JSON
 * text, may be NULL) is copied.  1 when added, 0 when held already, -1
 * out of memory. */
static int
epoch_take(struct room *room, uint32_t n, const uint8_t secret[PAPO_KEY_LEN],
    const uint8_t by[PAPO_KEY_LEN], const char *frame)
{
	struct epoch_held *e;
	struct frame f;
	char *copy = NULL;

	if (keyring_find(room->keyring, n) != NULL)
		return 0;
	if ((frame != NULL && (copy = strdup(frame)) == NULL) ||
	    (e = keyring_add(room->keyring)) == NULL) {
		free(copy);
		return -1;
	}
	e->frame = copy;
	if (epoch_decode(room, frame, &f) == 0) {
		memcpy(e->sig, f.u.epoch.sig, PAPO_SIG_LEN);
		frame_clear(&f);
	}
	e->n = n;
	memcpy(e->secret, secret, PAPO_KEY_LEN);
	memcpy(e->by, by, PAPO_KEY_LEN);
	if (n == 0)
		e->keys = *room->env.keys;
	else
		sec_epoch_keys(room->env.keys, secret, &e->keys);
	return 1;
}

static void
epoch_save(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN], text[PAPO_ID_LEN + 1];
	cJSON *o = cJSON_CreateObject(), *arr, *e;
	char *out = NULL;

	arr = cJSON_AddArrayToObject(o, "epochs");
	for (size_t i = 0; i < keyring_count(room->keyring); i++) {
		const struct epoch_held *h = keyring_at(room->keyring, i);

		if (h->n == 0)
			continue;       /* the room secret's, in room.json */
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		cJSON_AddNumberToObject(e, "n", h->n);
		sec_id_format(h->secret, text);
		cJSON_AddStringToObject(e, "secret", text);
		sec_id_format(h->by, text);
		cJSON_AddStringToObject(e, "by", text);
		if (h->frame != NULL)
			cJSON_AddStringToObject(e, "frame", h->frame);
	}
	arr = cJSON_AddArrayToObject(o, "others");
	for (size_t i = 0; i < room->epochs->nothers; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(room->epochs->others[i].frame));
	if ((out = cJSON_Print(o)) == NULL)
		room_log(room, LOG_WARN, "%s: out of memory", EPOCHS_FILE);
	else if (fs_path(path, sizeof(path), room->env.home, EPOCHS_FILE) == 0 &&
	    fs_write(err, path, out, strlen(out)) == -1)
		room_log(room, LOG_WARN, "%s", err);
	if (out != NULL)
		sodium_memzero(out, strlen(out));
	cJSON_free(out);
	cJSON_Delete(o);
}

int
epoch_add(struct room *room, uint32_t n, const uint8_t secret[PAPO_KEY_LEN],
    const uint8_t by[PAPO_KEY_LEN], const char *frame)
{
	int rc;

	if ((rc = epoch_take(room, n, secret, by, frame)) == 1) {
		epoch_save(room);
		/* Invites printed from now on carry the newest epoch. */
		if (n == keyring_newest(room->keyring))
			room_invite_changed(room);
		/* Members of versions 1 and 2 cannot follow it. */
		for (size_t i = 0; i < members_n(room); i++) {
			struct member *m = member_at(room, i);

			if (m->conn != NULL && quic_version(m->conn) < 3) {
				room_log(room, LOG_WARN, "%s speaks protocol version "
				    "%u, which cannot follow the room's key "
				    "changes: no longer spoken to until it "
				    "upgrades papo", m->name,
				    quic_version(m->conn));
				quic_close(m->conn);
			}
		}
	}
	return rc;
}

/* Keeps e, whose JSON text is frame, among the frames not held for
 * their key (room->epochs->others): 0 kept, -1 out of memory. */
static int
epoch_other(struct room *room, const struct frame_epoch *e,
    const char *frame)
{
	struct epoch_kept *v;

	if ((v = reallocarray(room->epochs->others, room->epochs->nothers + 1,
	    sizeof(*v))) == NULL)
		return -1;
	room->epochs->others = v;
	v += room->epochs->nothers;
	if ((v->frame = strdup(frame)) == NULL)
		return -1;
	memcpy(v->sig, e->sig, PAPO_SIG_LEN);
	v->n = (uint32_t)e->n;
	room->epochs->nothers++;
	return 0;
}

/* The kept frame of that signature, or NULL. */
static const struct epoch_kept *
epoch_other_find(const struct room *room, const uint8_t sig[PAPO_SIG_LEN])
{
	for (size_t i = 0; i < room->epochs->nothers; i++)
		if (memcmp(room->epochs->others[i].sig, sig, PAPO_SIG_LEN) == 0)
			return &room->epochs->others[i];
	return NULL;
}

/* One entry of epochs.json into the ring; -1 when malformed. */
static int
epoch_load_one(struct room *room, const cJSON *e)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "n");
	const char *s = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(e, "secret"));
	const char *by = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(e, "by"));
	const char *frame = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(e, "frame"));
	uint8_t secret[PAPO_KEY_LEN], who[PAPO_KEY_LEN];
	int rc;

	if (!cJSON_IsNumber(n) || n->valuedouble < 1 ||
	    n->valuedouble > 4294967295.0 || s == NULL ||
	    sec_id_parse(s, secret) == -1 || by == NULL ||
	    sec_id_parse(by, who) == -1)
		return -1;
	rc = epoch_take(room, (uint32_t)n->valuedouble, secret, who, frame);
	sodium_memzero(secret, sizeof(secret));
	/* Whom it removed, from the frame as signed. */
	if (rc != -1 && frame != NULL) {
		struct frame f;

		if (frame_decode(room->env.keys, frame, strlen(frame), FRAME_V3,
		    &f) == FRAME_OK && f.type == FRAME_EPOCH)
			epoch_note(room, &f.u.epoch, 1);
		frame_clear(&f);
	}
	return rc == -1 ? -1 : 0;
}

void
epoch_load(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN];
	static const uint8_t none[PAPO_KEY_LEN];
	char *text = NULL;
	size_t len;
	int exists = 0;
	const cJSON *e;
	cJSON *o;

	epoch_take(room, 0, none, none, NULL);
	if (fs_path(path, sizeof(path), room->env.home, EPOCHS_FILE) == -1 ||
	    fs_read(err, path, EPOCHS_FILE_MAX, &text, &len, &exists) == -1) {
		if (exists)
			room_log(room, LOG_WARN, "%s", err);
		return;
	}
	if ((o = cJSON_ParseWithLength(text, len)) == NULL)
		room_log(room, LOG_WARN, "%s is damaged: the room's later keys come "
		    "again from the other members", path);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "epochs"))
		if (epoch_load_one(room, e) == -1)
			room_log(room, LOG_WARN, "%s: a malformed epoch: skipped",
			    path);
	/* Frames kept for whom they removed (this member too). */
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "others")) {
		const char *frame = cJSON_GetStringValue(e);
		struct frame f;

		if (frame == NULL || frame_decode(room->env.keys, frame,
		    strlen(frame), FRAME_V3, &f) != FRAME_OK) {
			room_log(room, LOG_WARN, "%s: a malformed epoch: skipped",
			    path);
			continue;
		}
		if (f.type == FRAME_EPOCH &&
		    epoch_other(room, &f.u.epoch, frame) == 0)
			epoch_note(room, &f.u.epoch, 1);
		frame_clear(&f);
	}
	cJSON_Delete(o);
	sodium_memzero(text, len);
	free(text);
}

int
epoch_new(struct room *room)
{
	return (room->epochs = calloc(1, sizeof(*room->epochs))) != NULL ? 0 : -1;
}

void
epoch_summary_json(const struct room *room, cJSON *o)
{
	/* Shut out (a key change we were not given): the room is dead to
	 * us, and says why until it is left. */
	if (room->epochs->shut_out != NULL)
		cJSON_AddStringToObject(o, "refused", room->epochs->shut_out);
}

void
epoch_free(struct room *room)
{
	struct epochs *s = room->epochs;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nothers; i++)
		free(s->others[i].frame);
	free(s->others);
	free(s->shut_out);
	free(s);
	room->epochs = NULL;
}

void
epoch_mark(struct room *room)
{
	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		/* Put out of the room, we speak to no one any more. */
		m->removed = keyring_gone(room->keyring) ||
		    keyring_removed(room->keyring, m->id) != NULL;
		if (keyring_gone(room->keyring) && m->conn != NULL)
			quic_close_flush(m->conn);
	}
}

void
epoch_json(const struct room *room, cJSON *o)
{
	char id[PAPO_ID_LEN + 1], nb[16];
	const struct removal *gone;
	cJSON *arr, *e, *me;

	cJSON_AddNumberToObject(o, "epoch", keyring_newest(room->keyring));
	arr = cJSON_AddArrayToObject(o, "removed");
	for (size_t i = 0; i < keyring_nremoved(room->keyring); i++) {
		const struct removal *r = keyring_removal_at(room->keyring, i);

		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "name", epoch_who(room, r->id, nb));
		sec_id_format(r->id, id);
		cJSON_AddStringToObject(e, "id", id);
		cJSON_AddStringToObject(e, "by", epoch_who(room, r->by, nb));
		cJSON_AddNumberToObject(e, "epoch", r->epoch);
		cJSON_AddNumberToObject(e, "ts", (double)r->ts);
	}
	/* This member itself, put out of the room. */
	if ((gone = keyring_me_removal(room->keyring)) != NULL &&
	    (me = cJSON_GetObjectItemCaseSensitive(o, "me")) != NULL) {
		e = cJSON_AddObjectToObject(me, "removed");
		cJSON_AddStringToObject(e, "by", epoch_who(room, gone->by, nb));
		cJSON_AddNumberToObject(e, "epoch", gone->epoch);
		cJSON_AddNumberToObject(e, "ts", (double)gone->ts);
	}
}

/* A member's name for the log and replies, ours included. */
static const char *
epoch_who(const struct room *room, const uint8_t id[PAPO_KEY_LEN], char buf[16])
{
	char text[PAPO_ID_LEN + 1];
	struct member *m;

	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) == 0)
		return room->env.room->me;
	if ((m = member_find(room, id)) != NULL)
		return member_name(m, buf);
	sec_id_format(id, text);
	snprintf(buf, 16, "%.8s", text);
	return buf;
}

/* Tells the program: kind "epoch", its number, by whom, when. */
static void
epoch_emit(struct room *room, const struct frame_epoch *e)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char nb[16];

	cJSON_AddStringToObject(o, "kind", "epoch");
	cJSON_AddNumberToObject(o, "epoch", (double)e->n);
	cJSON_AddStringToObject(o, "by", epoch_who(room, e->by, nb));
	cJSON_AddNumberToObject(o, "ts", (double)e->ts);
	arr = cJSON_AddArrayToObject(o, "removed");
	for (size_t i = 0; i < e->nremoved; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(epoch_who(room,
		    e->removed[i], nb)));
	room_emit_json(room, NODE_EV_ROOM, o);
}

/* Keeps whom e removes: their frames are refused from now on, their
 * connections closed once the frame (already sent) is out; we, when we
 * are one of them.  quiet: at load, nothing said or closed. */
static int
epoch_note(struct room *room, const struct frame_epoch *e, int quiet)
{
	char nb[16], nb2[16];
	int fresh = 0;

	for (size_t i = 0; i < e->nremoved; i++) {
		struct removal *r;
		struct member *m;
		int me = 0;

		if (memcmp(e->removed[i], room->env.me->pk, PAPO_KEY_LEN) == 0) {
			if (keyring_gone(room->keyring))
				continue;
			r = keyring_set_gone(room->keyring);
			me = 1;
		} else if (keyring_removed(room->keyring, e->removed[i]) != NULL) {
			continue;
		} else if ((r = keyring_remove(room->keyring)) == NULL)
			continue;
		memcpy(r->id, e->removed[i], PAPO_KEY_LEN);
		memcpy(r->by, e->by, PAPO_KEY_LEN);
		r->ts = e->ts;
		r->epoch = (uint32_t)e->n;
		fresh++;
		if (quiet)
			continue;
		if (me) {
			room_log(room, LOG_WARN, "this member was removed from the room "
			    "by %s (epoch %llu): it can neither read nor write "
			    "the room from now on", epoch_who(room, e->by, nb),
			    (unsigned long long)e->n);
			epoch_mark(room);
			continue;
		}
		room_log(room, LOG_INFO, "%s removed %s from the room (epoch %llu)",
		    epoch_who(room, e->by, nb), epoch_who(room, r->id, nb2),
		    (unsigned long long)e->n);
		if ((m = member_find(room, r->id)) != NULL) {
			m->removed = 1;
			if (m->conn != NULL)
				quic_close_flush(m->conn);
		}
	}
	/* Whom it removed is offline from now on (member_online). */
	if (fresh > 0 && !quiet)
		members_presence_check(room);
	return fresh;
}

/* The epoch frame's JSON text as it was signed, to keep and hand on. */
static char *
epoch_text(const struct frame_epoch *e)
{
	struct frame f;
	struct buf b;
	char *s = NULL;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_EPOCH;
	f.u.epoch = *e;
	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_encode(&f, &b) == 0 && (s = malloc(b.len + 1)) != NULL) {
		memcpy(s, b.p, b.len);
		s[b.len] = '\0';
	}
	buf_free(&b);
	return s;
}

/* The held or other epoch frame that removed id, decoded into f; -1
 * when there is none. */
static int
epoch_removal_frame(const struct room *room, const uint8_t id[PAPO_KEY_LEN],
    struct frame *f)
{
	for (size_t i = 0; i < keyring_count(room->keyring) + room->epochs->nothers; i++) {
		const char *text = i < keyring_count(room->keyring) ?
		    keyring_at(room->keyring, i)->frame :
		    room->epochs->others[i - keyring_count(room->keyring)].frame;

		if (epoch_decode(room, text, f) == -1)
			continue;
		for (size_t j = 0; j < f->u.epoch.nremoved; j++)
			if (memcmp(f->u.epoch.removed[j], id, PAPO_KEY_LEN) == 0)
				return 0;
		frame_clear(f);
	}
	return -1;
}

/* e, from l, gives the key to members we know were removed: l gets the
 * frames that removed them, so that its side refuses them too (and an
 * admin there changes the key again, epoch_heal). */
static void
epoch_tell(struct room *room, struct link *l, const struct frame_epoch *e)
{
	uint8_t sent[FRAME_EPOCH_REMOVED_MAX][PAPO_SIG_LEN];
	size_t nsent = 0, j;
	struct frame f;

	for (size_t i = 0; i < e->nkeys && nsent < FRAME_EPOCH_REMOVED_MAX;
	    i++) {
		if (keyring_removed(room->keyring, e->keys[i].id) == NULL ||
		    epoch_removal_frame(room, e->keys[i].id, &f) == -1)
			continue;
		for (j = 0; j < nsent; j++)
			if (memcmp(sent[j], f.u.epoch.sig, PAPO_SIG_LEN) == 0)
				break;
		if (j == nsent) {
			memcpy(sent[nsent++], f.u.epoch.sig, PAPO_SIG_LEN);
			room_send_link(room, l, &f);
		}
		frame_clear(&f);
	}
}

static int epoch_make(struct room *room, const uint8_t (*rm)[PAPO_KEY_LEN],
    size_t nrm, uint32_t *n, size_t *nkeys);

/* An owner or admin that holds a newest key given to members it knows
 * were removed (two changes made apart, one removing them) changes the
 * key again without them. */
static void
epoch_heal(struct room *room)
{
	struct epoch_held *h = keyring_find(room->keyring, keyring_newest(room->keyring));
	uint8_t rm[FRAME_EPOCH_REMOVED_MAX][PAPO_KEY_LEN];
	size_t nrm = 0, nkeys;
	struct frame f;
	char nb[16];
	uint32_t n;

	if (keyring_gone(room->keyring) ||
	    strcmp(role_of(room, room->env.me->pk), "member") == 0 ||
	    h == NULL || epoch_decode(room, h->frame, &f) == -1)
		return;
	for (size_t i = 0; i < f.u.epoch.nkeys &&
	    nrm < FRAME_EPOCH_REMOVED_MAX; i++)
		if (keyring_removed(room->keyring, f.u.epoch.keys[i].id) != NULL)
			memcpy(rm[nrm++], f.u.epoch.keys[i].id, PAPO_KEY_LEN);
	frame_clear(&f);
	if (nrm == 0)
		return;
	room_log(room, LOG_WARN, "the room's key (epoch %u) was given to %s, who "
	    "was removed: changing it again", (unsigned)h->n,
	    epoch_who(room, rm[0], nb));
	if (epoch_make(room, (const uint8_t (*)[PAPO_KEY_LEN])rm, nrm, &n, &nkeys) == -1)
		room_log(room, LOG_WARN, "%s", "could not make a new key epoch");
}

/* e has the number of an epoch we hold, h, made by another change: the
 * one with the lower signature is kept, by every member alike.  secret:
 * e's, when it holds a box for us; else NULL. */
static void
epoch_concurrent(struct room *room, struct link *l, struct epoch_held *h,
    const struct frame_epoch *e, const uint8_t *secret)
{
	int theirs = memcmp(e->sig, h->sig, PAPO_SIG_LEN) < 0, have_ours;
	char nb[16], nb2[16], nb3[16], *text = epoch_text(e);
	struct frame fe, ours;

	if (text == NULL)
		return;
	room_log(room, LOG_WARN, "two changes of the room's key were made apart "
	    "(epoch %u, by %s and by %s): the one by %s is kept", (unsigned)h->n,
	    epoch_who(room, h->by, nb), epoch_who(room, e->by, nb2),
	    epoch_who(room, theirs ? e->by : h->by, nb3));
	memset(&fe, 0, sizeof(fe));
	fe.type = FRAME_EPOCH;
	fe.u.epoch = *e;
	have_ours = epoch_decode(room, h->frame, &ours) == 0;
	if (theirs && secret != NULL) {
		/* Ours lost: e's key from now on; ours kept for whom it
		 * removed, and passed on for that. */
		if (have_ours) {
			if (epoch_other(room, &ours.u.epoch, h->frame) == -1)
				goto out;
			if (ours.u.epoch.nremoved > 0)
				members_flood(room, &ours, NULL);
		}
		free(h->frame);
		h->frame = text;
		text = NULL;
		memcpy(h->sig, e->sig, PAPO_SIG_LEN);
		memcpy(h->secret, secret, PAPO_KEY_LEN);
		memcpy(h->by, e->by, PAPO_KEY_LEN);
		sec_epoch_keys(room->env.keys, secret, &h->keys);
		epoch_save(room);
		if (h->n == keyring_newest(room->keyring))
			room_invite_changed(room);
		epoch_emit(room, e);
		members_flood(room, &fe, l->m);
		epoch_note(room, e, 0);
		goto out;
	}
	if (theirs)
		room_log(room, LOG_WARN, "the room's key changed (epoch %llu by %s) "
		    "and this member was not given it: ask for a new invite",
		    (unsigned long long)e->n, epoch_who(room, e->by, nb));
	else if (have_ours)
		room_send_link(room, l, &ours);  /* l's side switches to ours */
	/* e's removals still count, and go on to the others. */
	if (e->nremoved > 0 && epoch_other(room, e, text) == 0) {
		epoch_save(room);
		members_flood(room, &fe, l->m);
		if (epoch_note(room, e, 0) > 0)
			epoch_emit(room, e);
	}
out:
	if (have_ours)
		frame_clear(&ours);
	free(text);
}

/* Tells the program, once, that this member is out of the room for good
 * (a key change it was not given): it stops with why (server/daemon/serve.c). */
static void
epoch_shut_out(struct room *room, const char *why)
{
	struct node_msg *ev;
	cJSON *o;

	if (room->epochs->shut_out != NULL)
		return;
	room->epochs->shut_out = strdup(why);
	if ((ev = node_msg_new(NODE_EV_REFUSED)) == NULL)
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", why);
	ev->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (ev->json != NULL)
		room->env.emit(room->env.arg, ev);
	else
		node_msg_free(ev);
}

void
epoch_on_frame(struct room *room, struct link *l, struct frame *in)
{
	const struct frame_epoch *e = &in->u.epoch;
	const char *role = role_of(room, e->by);
	struct epoch_held *held;
	uint8_t secret[PAPO_KEY_LEN];
	char nb[16], *text;
	size_t i;

	if (e->n > UINT32_MAX || keyring_gone(room->keyring))
		return;
	held = keyring_find(room->keyring, (uint32_t)e->n);
	if (held != NULL && memcmp(held->sig, e->sig, PAPO_SIG_LEN) == 0)
		return;                 /* held already */
	if (epoch_other_find(room, e->sig) != NULL)
		return;                 /* kept already */
	/* The signature was checked by the decoder; who may sign one is
	 * ours to check: the owner or an admin as we know them. */
	if (strcmp(role, "member") == 0) {
		room_log(room, LOG_WARN, "an epoch frame (epoch %llu) by %s, who is "
		    "neither the owner nor an admin: ignored",
		    (unsigned long long)e->n, epoch_who(room, e->by, nb));
		return;
	}
	for (i = 0; i < e->nremoved; i++)
		if (memcmp(e->removed[i], room->env.me->pk, PAPO_KEY_LEN) == 0) {
			/* Kept, so that a restart still knows. */
			if ((text = epoch_text(e)) != NULL &&
			    epoch_other(room, e, text) == 0)
				epoch_save(room);
			free(text);
			epoch_note(room, e, 0);
			epoch_emit(room, e);
			return;
		}
	for (i = 0; i < e->nkeys; i++)
		if (memcmp(e->keys[i].id, room->env.me->pk, PAPO_KEY_LEN) == 0)
			break;
	if (i < e->nkeys && sec_box_open(secret, e->keys[i].box,
	    room->env.me) == -1)
		i = e->nkeys;
	if (held != NULL) {
		epoch_concurrent(room, l, held, e, i < e->nkeys ? secret : NULL);
		goto out;
	}
	if (i == e->nkeys) {
		char why[PAPO_ERR_LEN];

		snprintf(why, sizeof(why), keyring_newest(room->keyring) == 0 ? "this invite "
		    "is from before the room's key changed (epoch %llu by %s): "
		    "ask for a new invite" : "the room's key changed (epoch "
		    "%llu by %s) and this member was not given it: ask for a "
		    "new invite", (unsigned long long)e->n,
		    epoch_who(room, e->by, nb));
		room_log(room, LOG_WARN, "%s", why);
		/* Newer than any we hold, signed by who may, and without a
		 * key for us: nothing said from now on can be read here,
		 * and every member refuses us (epoch_refuse).  An older
		 * one (sent for a message we could not open) says nothing
		 * of that. */
		if (e->n > keyring_newest(room->keyring))
			epoch_shut_out(room, why);
		return;
	}
	text = epoch_text(e);
	if (epoch_add(room, (uint32_t)e->n, secret, e->by, text) == 1) {
		struct frame f;

		room_log(room, LOG_INFO, "%s changed the room's key (epoch %llu)",
		    epoch_who(room, e->by, nb), (unsigned long long)e->n);
		epoch_emit(room, e);
		memset(&f, 0, sizeof(f));
		f.type = FRAME_EPOCH;
		f.u.epoch = *e;
		members_flood(room, &f, l->m);
		epoch_note(room, e, 0);
		epoch_tell(room, l, e);
	}
	free(text);
out:
	sodium_memzero(secret, sizeof(secret));
	epoch_heal(room);
}

void
epoch_unopened(struct room *room, struct link *l, const uint8_t *p, size_t n)
{
	struct epoch_held *h;
	struct frame f;
	uint32_t ep;

	if (frame_envelope_epoch(p, n, &ep) == -1 || ep == 0 ||
	    l->told == ep + 1 || (h = keyring_find(room->keyring, ep)) == NULL ||
	    epoch_decode(room, h->frame, &f) == -1)
		return;
	l->told = ep + 1;
	room_send_link(room, l, &f);
	frame_clear(&f);
}

/* Sends m the epoch frame of JSON text (NULL: nothing); with removals,
 * only when it removes someone. */
static void
epoch_send_text(struct room *room, struct member *m, const char *text,
    int removals)
{
	struct frame f;

	if (epoch_decode(room, text, &f) == -1)
		return;
	if (!removals || f.u.epoch.nremoved > 0)
		member_send(room, m, &f);
	frame_clear(&f);
}

void
epoch_on_hello(struct room *room, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;
	uint32_t newest = keyring_newest(room->keyring);

	if (h->version < 3)
		return;
	/* In order, so each is taken as it comes. */
	for (uint32_t n = h->epoch + 1; n <= newest; n++)
		epoch_send_text(room, m, keyring_find(room->keyring, n) != NULL ?
		    keyring_find(room->keyring, n)->frame : NULL, 0);
	/* Then whom we know removed, whatever epoch m holds: the change m
	 * kept of a number may be another than ours (Concurrent changes),
	 * and a removal only in a change that lost reaches no one through
	 * the loop above.  m drops those it has. */
	for (size_t i = 0; i < keyring_count(room->keyring); i++)
		if (keyring_at(room->keyring, i)->n <= h->epoch)
			epoch_send_text(room, m, keyring_at(room->keyring, i)->frame, 1);
	for (size_t i = 0; i < room->epochs->nothers; i++)
		epoch_send_text(room, m, room->epochs->others[i].frame, 1);
}

/* Makes epoch newest + 1: its secret sealed to us and to every member
 * we know but those removed (up to FRAME_EPOCH_KEYS_MAX), removing rm;
 * signed, kept, said and flooded.  0 with its number and how many were
 * given the key; -1 when it could not be made. */
static int
epoch_make(struct room *room, const uint8_t (*rm)[PAPO_KEY_LEN], size_t nrm,
    uint32_t *n, size_t *nkeys)
{
	struct frame f;
	struct frame_epoch *e = &f.u.epoch;
	uint8_t secret[PAPO_KEY_LEN];
	char *text = NULL;
	int rc = -1;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_EPOCH;
	e->n = keyring_newest(room->keyring) + 1;
	e->ts = loop_wall_ms();
	randombytes_buf(secret, sizeof(secret));
	if ((e->keys = calloc(members_n(room) + 1, sizeof(*e->keys))) == NULL ||
	    (nrm > 0 && (e->removed = calloc(nrm, sizeof(*e->removed))) ==
	    NULL))
		goto out;
	if (nrm > 0)
		memcpy(e->removed, rm, nrm * sizeof(*rm));
	e->nremoved = nrm;
	/* A box for each member we know and for ourselves: the key goes to
	 * no one else. */
	for (size_t i = 0; i <= members_n(room) &&
	    e->nkeys < FRAME_EPOCH_KEYS_MAX; i++) {
		const uint8_t *id = i < members_n(room) ? member_at(room, i)->id :
		    room->env.me->pk;
		size_t j;

		for (j = 0; j < nrm; j++)
			if (memcmp(id, rm[j], PAPO_KEY_LEN) == 0)
				break;
		if (j < nrm || (i < members_n(room) && member_at(room, i)->removed))
			continue;
		memcpy(e->keys[e->nkeys].id, id, PAPO_KEY_LEN);
		if (sec_box_seal(e->keys[e->nkeys].box, secret, id) == 0)
			e->nkeys++;
	}
	if (frame_epoch_sign(e, room->env.keys, room->env.me) == -1 ||
	    (text = epoch_text(e)) == NULL ||
	    epoch_add(room, (uint32_t)e->n, secret, room->env.me->pk, text) != 1)
		goto out;
	room_log(room, LOG_INFO, "the room's key changed (epoch %llu)",
	    (unsigned long long)e->n);
	epoch_emit(room, e);
	/* The removed member gets it too: that is how it learns. */
	members_flood(room, &f, NULL);
	epoch_note(room, e, 0);
	*n = (uint32_t)e->n;
	*nkeys = e->nkeys;
	rc = 0;
out:
	sodium_memzero(secret, sizeof(secret));
	free(text);
	frame_clear(&f);
	return rc;
}

void
epoch_request_rotate(struct room *room, struct node_msg *req)
{
	const char *role = role_of(room, room->env.me->pk);
	int remove = req->kind == NODE_REMOVE, ambiguous = 0;
	struct member *gone = NULL;
	char nb[16];
	cJSON *o;
	uint32_t n;
	size_t nkeys;

	if (strcmp(role, "member") == 0 || keyring_gone(room->keyring)) {
		const char *who = role_owner(room) != NULL ?
		    epoch_who(room, role_owner(room), nb) : "not known yet";

		if (remove)
			room_fail(room, req, 403, "only the room's owner (%s) or "
			    "an admin can remove members", who);
		else
			room_fail(room, req, 403, "only the room's owner (%s) or "
			    "an admin can change the room's key", who);
		return;
	}
	if (remove) {
		const char *name = node_args_member(req)->name;

		if (name == NULL || (gone = member_lookup(room, name,
		    &ambiguous)) == NULL) {
			room_fail(room, req, 404, ambiguous ? "more than one "
			    "member is called %s: give its id" : "no member "
			    "called %s", name != NULL ? name : "");
			return;
		}
		if (role_owner(room) != NULL &&
		    memcmp(gone->id, role_owner(room), PAPO_KEY_LEN) == 0) {
			room_fail(room, req, 403, "%s is the room's owner, who "
			    "cannot be removed", member_name(gone, nb));
			return;
		}
		if (gone->removed) {
			room_fail(room, req, 409, "%s was removed already",
			    member_name(gone, nb));
			return;
		}
	}
	if (keyring_newest(room->keyring) == UINT32_MAX) {
		room_fail(room, req, 409, "the room's key cannot change "
		    "again");
		return;
	}
	if (epoch_make(room, gone != NULL ? (const uint8_t (*)[PAPO_KEY_LEN])&gone->id :
	    NULL, gone != NULL, &n, &nkeys) == -1) {
		room_fail(room, req, 500, "could not make a new key epoch");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "epoch", n);
	if (gone != NULL) {
		cJSON_AddStringToObject(o, "removed", member_name(gone, nb));
		cJSON_AddStringToObject(o, "id", gone->idtext);
	}
	cJSON_AddNumberToObject(o, "keys", (double)nkeys);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	room->env.emit(room->env.arg, req);
}

int
epoch_refuse(struct room *room, struct link *l, const struct frame_hello *h)
{
	uint32_t newest = keyring_newest(room->keyring);
	struct epoch_held *e;
	struct member *m;
	struct frame f;
	int given;

	const struct removal *r = keyring_removed(room->keyring, h->id);
	char nb[16];

	if (keyring_gone(room->keyring)) {
		/* Removed ourselves: the room is no longer ours to talk in. */
		quic_close(l->qc);
		return 1;
	}
	if (r != NULL) {
		room_log(room, LOG_INFO, "refused %s: removed from the room by %s "
		    "(epoch %u)", h->name, epoch_who(room, r->by, nb),
		    (unsigned)r->epoch);
		/* It is told so by the epoch frame that removed it. */
		if (h->version >= 3 && epoch_removal_frame(room, h->id, &f) == 0) {
			room_send_link(room, l, &f);
			frame_clear(&f);
		}
		quic_close_flush(l->qc);
		return 1;
	}
	/* Versions 1 and 2 cannot follow a key change: once there was one
	 * they are not spoken to (docs/PROTOCOL.md, "Key epochs"). */
	if (newest > 0 && h->version < 3) {
		room_log(room, LOG_WARN, "refused %s: it speaks protocol version %u, "
		    "which cannot follow the room's key changes (epoch %u): it "
		    "must upgrade papo", h->name, (unsigned)h->version,
		    (unsigned)newest);
		quic_close(l->qc);
		return 1;
	}
	if (newest == 0 || h->version < 3 || h->epoch >= newest)
		return 0;
	/* A member behind catches up (epoch_on_hello) when our newest epoch
	 * gave it a key.  One it gave none to can never follow: it holds an
	 * invite printed before the key changed (knowing its id proves
	 * nothing: a LAN beacon, sealed under the old key, names it too).
	 * Held from an invite, the newest epoch's frame is not ours to
	 * read: a member we know is taken as before. */
	m = member_find(room, h->id);
	e = keyring_find(room->keyring, newest);
	if (e != NULL && e->frame != NULL) {
		if (epoch_decode(room, e->frame, &f) == -1)
			return 0;
		given = 0;
		for (size_t i = 0; i < f.u.epoch.nkeys; i++)
			given |= memcmp(f.u.epoch.keys[i].id, h->id, PAPO_KEY_LEN) == 0;
	} else
		given = m != NULL;
	if (given) {
		if (e != NULL && e->frame != NULL)
			frame_clear(&f);
		return 0;
	}
	if (m == NULL || m->name[0] == '\0')
		room_log(room, LOG_WARN, "refused %s, a new member: this invite is "
		    "from before the room's key changed (epoch %u): ask for a "
		    "new invite", h->name, (unsigned)newest);
	else
		room_log(room, LOG_WARN, "refused %s: the room's key changed (epoch "
		    "%u) and it was not given it: it needs a new invite",
		    h->name, (unsigned)newest);
	/* The newest epoch frame tells it why: no key in it is its own. */
	if (e != NULL && e->frame != NULL) {
		room_send_link(room, l, &f);
		frame_clear(&f);
	}
	quic_close_flush(l->qc);
	/* Known (a beacon, an earlier life), it is no longer listed,
	 * dialled or waited for. */
	if (m != NULL && !m->refused) {
		m->refused = 1;
		members_save_later(room);
		members_presence_check(room);
	}
	return 1;
}

/* History's line for the epoch frame text (numbered n), added to arr. */
static void
epoch_history_one(const struct room *room, cJSON *arr, uint32_t n,
    const char *text)
{
	const struct frame_epoch *fe;
	struct frame f;
	char nb[16], nb2[16], line[256];
	cJSON *e, *rm;
	size_t at;

	if (epoch_decode(room, text, &f) == -1)
		return;
	fe = &f.u.epoch;
	e = cJSON_CreateObject();
	cJSON_AddItemToArray(arr, e);
	cJSON_AddStringToObject(e, "kind", "epoch");
	cJSON_AddNumberToObject(e, "epoch", n);
	cJSON_AddStringToObject(e, "by", epoch_who(room, fe->by, nb));
	cJSON_AddNumberToObject(e, "ts", (double)fe->ts);
	rm = cJSON_AddArrayToObject(e, "removed");
	at = (size_t)snprintf(line, sizeof(line), "%s ",
	    epoch_who(room, fe->by, nb));
	if (fe->nremoved == 0)
		snprintf(line + at, sizeof(line) - at, "rotated the room key "
		    "(epoch %u)", (unsigned)n);
	else {
		at += (size_t)snprintf(line + at, sizeof(line) - at, "removed");
		for (size_t i = 0; i < fe->nremoved && at < sizeof(line);
		    i++) {
			const char *who = epoch_who(room, fe->removed[i], nb2);

			cJSON_AddItemToArray(rm, cJSON_CreateString(who));
			at += (size_t)snprintf(line + at, sizeof(line) - at,
			    "%s %s", i == 0 ? "" : ",", who);
		}
		if (at < sizeof(line))
			snprintf(line + at, sizeof(line) - at, "; the room key "
			    "changed (epoch %u)", (unsigned)n);
	}
	cJSON_AddStringToObject(e, "text", line);
	frame_clear(&f);
}

void
epoch_history_json(const struct room *room, cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "room");
	uint32_t top = keyring_newest(room->keyring);

	/* The frame that removed this member may be newer than any held. */
	for (size_t i = 0; i < room->epochs->nothers; i++)
		if (room->epochs->others[i].n > top)
			top = room->epochs->others[i].n;
	/* In the order the epochs were made: numbers only grow.  A change
	 * that lost to another of its number follows the one kept. */
	for (uint32_t n = 1; n != 0 && n <= top; n++) {
		struct epoch_held *h = keyring_find(room->keyring, n);

		if (h != NULL && h->frame != NULL)
			epoch_history_one(room, arr, n, h->frame);
		for (size_t i = 0; i < room->epochs->nothers; i++)
			if (room->epochs->others[i].n == n)
				epoch_history_one(room, arr, n,
				    room->epochs->others[i].frame);
	}
}
