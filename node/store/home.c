/*
 * home.c: $PAPO_HOME's rooms (home.h) and the three things a person does
 * with a room before any daemon runs: create one, join one from an
 * invite, and print the invite for others (docs/PROTOCOL.md, "Files" and
 * "Invite"); the folders of the rooms added since (home/rooms/ID), a room
 * left, and which room a name or id picks.  Runs on the caller's thread;
 * the secret is wiped before returning.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/b32.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/utf8.h"
#include "node/store/blob.h"
#include "node/store/home.h"
#include "node/store/roomfile.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "node/wire/invite.h"

#define ROOMS_DIR "rooms"             /* home/rooms/ID: the rooms added */
/*
 * The files of a room, which another room must not inherit: its log and
 * outbox, its search index, the members met, its admins and key epochs,
 * what agents were given.  room.json goes last, so that a crash halfway leaves the old
 * room whole enough to be named.  The identity, the TLS certificate and
 * OAuth's grants belong to the member, and stay.
 */
static const char *const home_room_files[] = {
	"log.jsonl", "log.jsonl.tmp", "outbox.jsonl", "peers.json",
	"admins.json", "epochs.json", "agents.json", "agents.json.bad",
	/* the search index (node/store/store_search.c), a cache of the log */
	"search.db", "search.db-wal", "search.db-shm", "search.db.tmp",
	BLOB_DIR, ROOM_FILE,
};

/* Deletes path, a file, or the blob store's folder (flat: files only). */
static int
home_file_delete(const char *path)
{
	char one[4096];
	struct dirent *de;
	DIR *d;

	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    fs_path(one, sizeof(one), path, de->d_name) == 0)
			unlink(one);
	closedir(d);
	return rmdir(path);
}

/*
 * Moves the room of from_dir (NULL: the home's first, in home itself)
 * into home/old-ROOMID-YYYYMMDD-HHMMSS (ROOMID: the start of its public
 * id, "damaged" when room.json does not load), and names that directory
 * in aside; from_dir, then empty, goes.  Nothing is deleted.
 */
static int
home_set_aside(char err[PAPO_ERR_LEN], const char *home,
    const char *from_dir, char aside[PAPO_ASIDE_LEN])
{
	const char *src = from_dir != NULL ? from_dir : home;
	char dir[4096], from[4096], to[4096], rid[PAPO_ROOMID_LEN + 1];
	char why[PAPO_ERR_LEN], stamp[32];
	struct room_keys keys;
	struct room_file old;
	struct tm tm;
	time_t now = (time_t)(loop_wall_ms() / 1000);

	snprintf(rid, sizeof(rid), "damaged");
	if (roomfile_load(why, src, &old) == 0) {
		sec_room_keys(old.secret, &keys);
		sec_room_id_format(&keys, rid);
		rid[8] = '\0';
		sodium_memzero(&keys, sizeof(keys));
		roomfile_wipe(&old);
	}
	if (localtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm) == 0)
		snprintf(stamp, sizeof(stamp), "%lld", (long long)now);
	/* Two in one second: -2, -3... */
	for (int i = 1;; i++) {
		if (i == 1)
			snprintf(aside, PAPO_ASIDE_LEN, "old-%s-%s", rid, stamp);
		else
			snprintf(aside, PAPO_ASIDE_LEN, "old-%s-%s-%d", rid,
			    stamp, i);
		if (fs_path(dir, sizeof(dir), home, aside) == -1) {
			snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
			return -1;
		}
		if (mkdir(dir, 0700) == 0)
			break;
		if (errno != EEXIST || i == 100) {
			snprintf(err, PAPO_ERR_LEN, "cannot create %s to keep "
			    "the old room in: %s", dir, strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(home_room_files) / sizeof(home_room_files[0]);
	    i++) {
		if (fs_path(from, sizeof(from), src, home_room_files[i]) == -1 ||
		    fs_path(to, sizeof(to), dir, home_room_files[i]) == -1) {
			snprintf(err, PAPO_ERR_LEN, "path too long: %s", dir);
			return -1;
		}
		if (rename(from, to) == -1 && errno != ENOENT) {
			snprintf(err, PAPO_ERR_LEN, "cannot move %s into %s: %s "
			    "(what was moved is there)", from, dir,
			    strerror(errno));
			return -1;
		}
	}
	if (from_dir != NULL && rmdir(from_dir) == -1)
		log_msg(LOG_WARN, "%s is left: %s", from_dir, strerror(errno));
	fs_sync_dir(to);
	fs_sync_dir(from);
	return 0;
}

int
home_leave(char err[PAPO_ERR_LEN], const char *home, const char *dir,
    int forget, char aside[PAPO_ASIDE_LEN])
{
	char path[4096];

	aside[0] = '\0';
	if (!forget)
		return home_set_aside(err, home, strcmp(dir, home) == 0 ?
		    NULL : dir, aside);
	for (size_t i = 0; i < sizeof(home_room_files) / sizeof(home_room_files[0]);
	    i++)
		if (fs_path(path, sizeof(path), dir, home_room_files[i]) == 0 &&
		    home_file_delete(path) == -1) {
			snprintf(err, PAPO_ERR_LEN, "cannot delete %s: %s",
			    path, strerror(errno));
			return -1;
		}
	if (strcmp(dir, home) != 0 && rmdir(dir) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot delete %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	fs_sync_dir(home);
	return 0;
}

/*
 * Refuses to replace an existing room without aside (--force), saying
 * which; with it, moves the old room's files aside (home_set_aside), or
 * sets aside to "" when there was none.  invite_secret, when not NULL,
 * is the secret of the room being joined: joining the room already held
 * is refused, --force or not, since it would only lose the log.
 */
/* The newest key epoch home's epochs.json holds: 0 when none (or none
 * that reads). */
static uint32_t
home_epoch_held(const char *home)
{
	char path[4096], err[PAPO_ERR_LEN], *text = NULL;
	const cJSON *e;
	cJSON *o = NULL;
	uint32_t newest = 0;
	size_t len;
	int exists;

	if (fs_path(path, sizeof(path), home, "epochs.json") == -1 ||
	    fs_read(err, path, 1 << 20, &text, &len, &exists) == -1)
		return 0;
	if ((o = cJSON_ParseWithLength(text, len)) != NULL)
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o,
		    "epochs")) {
			int64_t n;

			if (fs_json_int(cJSON_GetObjectItemCaseSensitive(e, "n"),
			    0, UINT32_MAX, &n) == 0 && n > newest)
				newest = (uint32_t)n;
		}
	cJSON_Delete(o);
	free(text);
	return newest;
}

/* Whether dir holds a room.json. */
static int
home_has_room(const char *dir)
{
	char path[4096];

	return fs_path(path, sizeof(path), dir, ROOM_FILE) == 0 &&
	    access(path, F_OK) == 0;
}

static int
home_dir_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
home_dirs(char err[PAPO_ERR_LEN], const char *home, char ***out, size_t *n)
{
	char path[4096], **v;
	struct dirent *e;
	size_t first;
	DIR *d;

	*n = 0;
	if ((v = *out = calloc(PAPO_ROOMS_MAX + 1, sizeof(*v))) == NULL)
		goto oom;
	if (home_has_room(home) && (v[(*n)++] = strdup(home)) == NULL)
		goto oom;
	first = *n;
	if (fs_path(path, sizeof(path), home, ROOMS_DIR) == -1 ||
	    (d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char dir[4096];

		if (e->d_name[0] == '.' || strlen(e->d_name) != PAPO_ROOMID_LEN ||
		    fs_path(dir, sizeof(dir), path, e->d_name) == -1 ||
		    !home_has_room(dir))
			continue;
		if (*n == PAPO_ROOMS_MAX) {
			log_msg(LOG_WARN, "%s holds more than %d rooms: %s is "
			    "left out", path, PAPO_ROOMS_MAX, e->d_name);
			continue;
		}
		if ((v[(*n)++] = strdup(dir)) == NULL) {
			closedir(d);
			goto oom;
		}
	}
	closedir(d);
	qsort(v + first, *n - first, sizeof(*v), home_dir_cmp);
	return 0;
oom:
	snprintf(err, PAPO_ERR_LEN, "out of memory");
	home_dirs_free(*out, *n);
	*out = NULL;
	*n = 0;
	return -1;
}

void
home_dirs_free(char **dirs, size_t n)
{
	if (dirs == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/*
 * Whether home holds the room of secret already: 1 with its folder in
 * dir when it does and epoch (an invite's key epoch) is newer than any
 * it holds, so that the invite's key goes into that room; 0 when home
 * holds no such room; -1 with err and errno EEXIST when it holds it
 * with that key or a newer one (there is nothing to join).
 */
static int
home_find_held(char err[PAPO_ERR_LEN], const char *home,
    const uint8_t *secret, uint32_t epoch, char dir[4096])
{
	char **dirs;
	size_t n;
	int rc = 0;

	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct room_file old;
		char why[PAPO_ERR_LEN];

		if (roomfile_load(why, dirs[i], &old) == -1)
			continue;
		if (sodium_memcmp(secret, old.secret, sizeof(old.secret)) != 0)
			;
		else if (epoch <= home_epoch_held(dirs[i])) {
			snprintf(err, PAPO_ERR_LEN, "%s is already in room %s, "
			    "as %s: there is nothing to join (start it with "
			    "'papo serve')", home, old.name, old.me);
			rc = -1;
		} else {
			snprintf(dir, 4096, "%s", dirs[i]);
			rc = 1;
		}
		roomfile_wipe(&old);
	}
	home_dirs_free(dirs, n);
	if (rc == -1)
		errno = EEXIST;
	return rc;
}

/*
 * Where a room joined or made next goes: home itself when it holds none
 * (a home of one room reads as every release wrote it), else the new
 * folder home/rooms/ID, made here.  Refuses the room held already
 * (secret; home_find_held, which a join asks first), with errno EEXIST,
 * and a 65th.
 */
static int
home_place(char err[PAPO_ERR_LEN], const char *home, const uint8_t *secret,
    uint32_t epoch, char dir[4096])
{
	struct room_keys keys;
	char rid[PAPO_ROOMID_LEN + 1], path[4096], **dirs;
	size_t n;
	int rc = -1;

	if ((rc = home_find_held(err, home, secret, epoch, dir)) != 0) {
		if (rc == 1) {
			snprintf(err, PAPO_ERR_LEN, "%s holds that room "
			    "already", home);
			errno = EEXIST;
		}
		return -1;
	}
	rc = -1;
	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	if (n == PAPO_ROOMS_MAX) {
		snprintf(err, PAPO_ERR_LEN, "%s holds %d rooms, the most a "
		    "daemon keeps; leave one first ('papo leave ROOM')", home,
		    PAPO_ROOMS_MAX);
		goto out;
	}
	if (!home_has_room(home)) {
		snprintf(dir, 4096, "%s", home);
		rc = 0;
		goto out;
	}
	sec_room_keys(secret, &keys);
	sec_room_id_format(&keys, rid);
	sodium_memzero(&keys, sizeof(keys));
	if (fs_path(path, sizeof(path), home, ROOMS_DIR) == -1 ||
	    fs_path(dir, 4096, path, rid) == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		goto out;
	}
	if (fs_home(err, path) == -1 || fs_home(err, dir) == -1)
		goto out;
	fs_sync_dir(path);
	fs_sync_dir(dir);
	rc = 0;
out:
	home_dirs_free(dirs, n);
	return rc;
}

/*
 * Undoes home_place after what followed failed: the files written in dir
 * deleted, and dir itself when it is not home, so that no folder of a
 * join or a room that failed is left for papo serve to trip on.
 */
static void
home_unplace(const char *home, const char *dir)
{
	char why[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN];

	if (home_leave(why, home, dir, 1, aside) == -1)
		log_msg(LOG_WARN, "%s", why);
}

int
home_member_name(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1])
{
	char **dirs;
	size_t n;
	int rc = -1;

	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	for (size_t i = 0; i < n && rc == -1; i++) {
		struct room_file r;
		char why[PAPO_ERR_LEN];

		if (roomfile_load(why, dirs[i], &r) == -1)
			continue;
		snprintf(name, PAPO_NAME_MAX + 1, "%s", r.me);
		roomfile_wipe(&r);
		rc = 0;
	}
	home_dirs_free(dirs, n);
	if (rc == -1)
		snprintf(err, PAPO_ERR_LEN, "%s holds no room to take this "
		    "member's name from", home);
	return rc;
}

/* name, or when it is NULL the one this member has in home's rooms
 * (into held); NULL with err when it has none there. */
static const char *
home_name_given(char err[PAPO_ERR_LEN], const char *home, const char *name,
    char held[PAPO_NAME_MAX + 1])
{
	if (name != NULL)
		return name;
	if (home_member_name(err, home, held) == -1) {
		snprintf(err, PAPO_ERR_LEN, "--name NAME is required: %s holds "
		    "no room whose name this member could take", home);
		return NULL;
	}
	return held;
}

static int
home_check_free(char err[PAPO_ERR_LEN], const char *home, char *aside,
    const uint8_t *invite_secret, uint32_t invite_epoch)
{
	struct room_file old;
	char path[4096];

	if (aside != NULL)
		aside[0] = '\0';
	if (fs_path(path, sizeof(path), home, ROOM_FILE) == -1 ||
	    access(path, F_OK) == -1)
		return 0;
	if (roomfile_load(err, home, &old) == 0) {
		/* The same room: nothing to join, unless the invite holds a
		 * newer key than this home (one printed after a change this
		 * member was not given: --force takes it). */
		if (invite_secret != NULL && sodium_memcmp(invite_secret,
		    old.secret, sizeof(old.secret)) == 0 &&
		    invite_epoch <= home_epoch_held(home)) {
			snprintf(err, PAPO_ERR_LEN, "%s is already in room %s, "
			    "as %s: there is nothing to join (start it with "
			    "'papo serve')", home, old.name, old.me);
			roomfile_wipe(&old);
			return -1;
		}
		if (aside == NULL)
			snprintf(err, PAPO_ERR_LEN, "%s already holds room %s, "
			    "where you are %s; pass --force to leave that room "
			    "(its files are moved aside, not deleted)", home,
			    old.name, old.me);
		roomfile_wipe(&old);
	} else if (aside == NULL) {
		snprintf(err, PAPO_ERR_LEN, "%s already holds a room file; "
		    "pass --force to replace it (the old files are moved "
		    "aside, not deleted)", home);
	}
	if (aside == NULL)
		return -1;
	return home_set_aside(err, home, NULL, aside);
}

static int
home_listen(char err[PAPO_ERR_LEN], const char *listen, struct addr *a)
{
	if (addr_parse(listen, a) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the QUIC listen address '%s' is not "
		    "ADDR:PORT (for example 0.0.0.0:7778 or [::]:7778)", listen);
		return -1;
	}
	return 0;
}

/* Encodes the invite of r for member id reachable at listen, with the
 * relay r's own invite carried (a daemon's invite says which relay it
 * uses: node.c). */
static int
home_make_invite(char err[PAPO_ERR_LEN], const struct room_file *r,
    const struct identity *id, const struct addr *listen, char **invite)
{
	struct invite inv;
	int n;

	memset(&inv, 0, sizeof(inv));
	memcpy(inv.secret, r->secret, sizeof(inv.secret));
	memcpy(inv.inviter, id->pk, sizeof(inv.inviter));
	if ((n = addr_local(listen, inv.addr, PAPO_ADDR_MAX)) <= 0) {
		snprintf(err, PAPO_ERR_LEN, "no network address to put in the "
		    "invite: this machine has no interface that is up");
		sodium_memzero(&inv, sizeof(inv));
		return -1;
	}
	inv.naddr = (size_t)n;
	inv.relay = r->relay;
	if (roomfile_given_name(r) != NULL)
		snprintf(inv.room, sizeof(inv.room), "%s", r->name);
	*invite = invite_encode(&inv);
	sodium_memzero(&inv, sizeof(inv));
	if (*invite == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	return 0;
}

int
home_create(char err[PAPO_ERR_LEN], const char *home, const char *name,
    const char *about, const char *room, char *aside, const char *listen,
    char **invite)
{
	struct identity *id = NULL;
	struct room_file r;
	struct addr la;
	char dir[4096], held[PAPO_NAME_MAX + 1];
	int rc = -1, placed = 0;

	memset(&r, 0, sizeof(r));
	/* No name given: the one this member has in the home's rooms. */
	if ((name = home_name_given(err, home, name, held)) == NULL)
		goto out;
	if (roomfile_check_name(err, name) == -1 ||
	    roomfile_check_about(err, about) == -1 ||
	    (room != NULL && roomfile_check_room(err, room) == -1) ||
	    home_listen(err, listen, &la) == -1)
		goto out;
	randombytes_buf(r.secret, sizeof(r.secret));
	/* --force (aside) replaces the home's first room; else the room
	 * is added beside those held. */
	if ((id = sec_identity_load(err, home)) == NULL)
		goto out;
	if (aside != NULL ? home_check_free(err, home, aside, NULL, 0) :
	    home_place(err, home, r.secret, 0, dir))
		goto out;
	if (aside != NULL)
		snprintf(dir, sizeof(dir), "%s", home);
	placed = 1;
	/* A name given travels in the invites; without one, every member
	 * derives the same from the public room id. */
	if (room != NULL)
		snprintf(r.name, sizeof(r.name), "%s", room);
	else
		roomfile_derived_name(r.secret, r.name);
	snprintf(r.me, sizeof(r.me), "%s", name);
	snprintf(r.about, sizeof(r.about), "%s", about != NULL ? about : "");
	/* Who makes the room owns it. */
	r.has_owner = 1;
	memcpy(r.owner, id->pk, sizeof(r.owner));
	if (roomfile_save(err, dir, &r) == -1)
		goto out;
	rc = home_make_invite(err, &r, id, &la, invite);
out:
	if (rc == -1 && placed)
		home_unplace(home, dir);
	roomfile_wipe(&r);
	sec_identity_free(id);
	return rc;
}

/* Decodes an invite; -1 with err giving the reason (and the place of a
 * bad character) otherwise. */
static int
home_decode_invite(char err[PAPO_ERR_LEN], const char *invite,
    struct invite *inv)
{
	enum invite_err ie;
	size_t pos = 0;

	if ((ie = invite_decode(invite, inv, &pos)) == INVITE_OK)
		return 0;
	if (ie == INVITE_CHAR)
		snprintf(err, PAPO_ERR_LEN, "%s (character %zu, '%c')",
		    invite_strerror(ie), pos + 1, invite[pos]);
	else
		snprintf(err, PAPO_ERR_LEN, "%s", invite_strerror(ie));
	return -1;
}

int
home_is(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    char name[PAPO_NAME_MAX + 1])
{
	struct invite inv;
	struct room_file r;
	int rc = -1;

	if (roomfile_load(err, home, &r) == -1)
		return -1;
	snprintf(name, PAPO_NAME_MAX + 1, "%s", r.name);
	if (home_decode_invite(err, invite, &inv) == 0)
		rc = sodium_memcmp(inv.secret, r.secret, sizeof(r.secret)) == 0;
	sodium_memzero(&inv, sizeof(inv));
	roomfile_wipe(&r);
	return rc;
}

/* The key epoch an invite carried, as epochs.json (node/room/epoch.c) keeps
 * it: the joiner's first hello says it holds it, and it is let in. */
static int
home_save_epoch(char err[PAPO_ERR_LEN], const char *home,
    const struct invite *inv)
{
	char path[4096], text[PAPO_ID_LEN + 1], by[PAPO_ID_LEN + 1];
	char body[256];
	int rc;

	sec_id_format(inv->epoch_secret, text);
	sec_id_format(inv->inviter, by);
	snprintf(body, sizeof(body), "{\"epochs\": [{\"n\": %u, \"secret\": "
	    "\"%s\", \"by\": \"%s\"}]}\n", (unsigned)inv->epoch, text, by);
	if (fs_path(path, sizeof(path), home, "epochs.json") == -1) {
		snprintf(err, PAPO_ERR_LEN, "%s/epochs.json: path too long",
		    home);
		rc = -1;
	} else
		rc = fs_write(err, path, body, strlen(body));
	sodium_memzero(body, sizeof(body));
	sodium_memzero(text, sizeof(text));
	return rc;
}

/* Whether an epoch frame kept in epochs.json (text, its JSON; checked
 * when it came) removed member me: 1 if it did, else 0. */
static int
home_frame_removes(const struct room_keys *keys, const char *text,
    const uint8_t me[PAPO_KEY_LEN])
{
	struct frame f;
	int hit = 0;

	if (text == NULL || frame_decode(keys, text, strlen(text), FRAME_V3 |
	    FRAME_TRUSTED, &f) != FRAME_OK)
		return 0;
	if (f.type == FRAME_EPOCH)
		for (size_t i = 0; i < f.u.epoch.nremoved && !hit; i++)
			hit = memcmp(f.u.epoch.removed[i], me, PAPO_KEY_LEN) == 0;
	frame_clear(&f);
	return hit;
}

/*
 * Takes the key epoch of inv into dir's epochs.json, keeping the epochs
 * held and the frames kept (docs/PROTOCOL.md, "Files"); refuses, with
 * err, when those frames removed this member (me): every member refuses
 * its key for good, whatever invite it holds.
 */
static int
home_epoch_merge(char err[PAPO_ERR_LEN], const char *dir,
    const struct room_file *r, const struct invite *inv,
    const uint8_t me[PAPO_KEY_LEN])
{
	char path[4096], text[PAPO_ID_LEN + 1], *data = NULL, *out = NULL;
	struct room_keys keys;
	cJSON *o = NULL, *arr, *e;
	const cJSON *c;
	size_t len = 0;
	int exists = 0, rc = -1, removed = 0;

	sec_room_keys(r->secret, &keys);
	if (fs_path(path, sizeof(path), dir, "epochs.json") == -1) {
		snprintf(err, PAPO_ERR_LEN, "%s/epochs.json: path too long", dir);
		goto out;
	}
	if (fs_read(err, path, 16 * 1024 * 1024, &data, &len, &exists) == -1 &&
	    exists)
		goto out;
	if (exists && (o = cJSON_ParseWithLength(data, len)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "%s is damaged: it is not valid "
		    "JSON", path);
		goto out;
	}
	if (o == NULL && (o = cJSON_CreateObject()) == NULL)
		goto nomem;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "others"))
		removed |= home_frame_removes(&keys, cJSON_GetStringValue(c), me);
	if ((arr = cJSON_GetObjectItemCaseSensitive(o, "epochs")) == NULL &&
	    (arr = cJSON_AddArrayToObject(o, "epochs")) == NULL)
		goto nomem;
	if (!cJSON_IsArray(arr)) {
		snprintf(err, PAPO_ERR_LEN, "%s is damaged: \"epochs\" is not "
		    "a list", path);
		goto out;
	}
	cJSON_ArrayForEach(c, arr)
		removed |= home_frame_removes(&keys, cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(c, "frame")), me);
	if (removed) {
		snprintf(err, PAPO_ERR_LEN, "this member (%s) was removed from "
		    "room %s, and every member refuses its key for good, "
		    "whatever invite it holds: join as a new member, from "
		    "another PAPO_HOME", r->me, r->name);
		goto out;
	}
	if ((e = cJSON_CreateObject()) == NULL)
		goto nomem;
	cJSON_AddItemToArray(arr, e);
	sec_id_format(inv->epoch_secret, text);
	if (cJSON_AddNumberToObject(e, "n", inv->epoch) == NULL ||
	    cJSON_AddStringToObject(e, "secret", text) == NULL)
		goto nomem;
	sec_id_format(inv->inviter, text);
	if (cJSON_AddStringToObject(e, "by", text) == NULL ||
	    (out = cJSON_Print(o)) == NULL)
		goto nomem;
	rc = fs_write(err, path, out, strlen(out));
	goto out;
nomem:
	snprintf(err, PAPO_ERR_LEN, "out of memory writing %s", path);
out:
	sodium_memzero(&keys, sizeof(keys));
	sodium_memzero(text, sizeof(text));
	if (data != NULL) {
		sodium_memzero(data, len);
		free(data);
	}
	if (out != NULL) {
		sodium_memzero(out, strlen(out));
		cJSON_free(out);
	}
	cJSON_Delete(o);
	return rc;
}

/*
 * The invite of a room home holds, with a key epoch newer than the room's
 * (one this member missed: it was away, or left out): the key goes into
 * that room's folder, dir, which keeps its log and everything else; the
 * inviter and its addresses become the invite's.  name and about, when
 * not NULL, replace this member's.
 */
static int
home_rekey(char err[PAPO_ERR_LEN], const char *dir, const struct invite *inv,
    const struct identity *id, const char *name, const char *about)
{
	struct room_file r;
	int rc = -1;

	if (roomfile_load(err, dir, &r) == -1)
		return -1;
	if (name != NULL)
		snprintf(r.me, sizeof(r.me), "%s", name);
	if (about != NULL)
		snprintf(r.about, sizeof(r.about), "%s", about);
	r.has_inviter = 1;
	memcpy(r.inviter, inv->inviter, sizeof(r.inviter));
	r.nboot = inv->naddr;
	memcpy(r.boot, inv->addr, inv->naddr * sizeof(inv->addr[0]));
	if (inv->relay.url[0] != '\0')
		r.relay = inv->relay;
	if (home_epoch_merge(err, dir, &r, inv, id->pk) == 0)
		rc = roomfile_save(err, dir, &r);
	roomfile_wipe(&r);
	return rc;
}

int
home_join(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, char *aside)
{
	return home_join_in(err, home, invite, name, about, aside, NULL);
}

int
home_join_in(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, char *aside, char *where)
{
	struct identity *id = NULL;
	struct invite inv;
	struct room_file r;
	char dir[4096], held[PAPO_NAME_MAX + 1];
	int rc = -1, placed = 0, had;

	memset(&r, 0, sizeof(r));
	if (aside != NULL)
		aside[0] = '\0';
	if (home_decode_invite(err, invite, &inv) == -1)
		goto out;
	if ((name != NULL && roomfile_check_name(err, name) == -1) ||
	    roomfile_check_about(err, about) == -1)
		goto out;
	if ((id = sec_identity_load(err, home)) == NULL)
		goto out;
	if (memcmp(id->pk, inv.inviter, sizeof(inv.inviter)) == 0) {
		snprintf(err, PAPO_ERR_LEN, "this invite was made by this very "
		    "member (%s); join it from another PAPO_HOME", home);
		goto out;
	}
	/* The room held already, the invite with a newer key: taken into
	 * that room, --force or not (moving it aside would lose its log). */
	if ((had = home_find_held(err, home, inv.secret, inv.epoch, dir)) == -1)
		goto out;
	if (had == 1) {
		if ((rc = home_rekey(err, dir, &inv, id, name, about)) == 0) {
			rc = 1;
			if (where != NULL)
				snprintf(where, 4096, "%s", dir);
		}
		goto out;
	}
	/* No name given: the one this member has in the home's rooms. */
	if ((name = home_name_given(err, home, name, held)) == NULL)
		goto out;
	if (aside != NULL ? home_check_free(err, home, aside, inv.secret,
	    inv.epoch) : home_place(err, home, inv.secret, inv.epoch, dir))
		goto out;
	if (aside != NULL)
		snprintf(dir, sizeof(dir), "%s", home);
	placed = 1;
	memcpy(r.secret, inv.secret, sizeof(r.secret));
	/* The name its maker gave, or the one every member derives. */
	if (inv.room[0] != '\0')
		snprintf(r.name, sizeof(r.name), "%s", inv.room);
	else
		roomfile_derived_name(r.secret, r.name);
	snprintf(r.me, sizeof(r.me), "%s", name);
	snprintf(r.about, sizeof(r.about), "%s", about != NULL ? about : "");
	r.has_inviter = 1;
	memcpy(r.inviter, inv.inviter, sizeof(r.inviter));
	r.nboot = inv.naddr;
	memcpy(r.boot, inv.addr, inv.naddr * sizeof(inv.addr[0]));
	r.relay = inv.relay;
	if ((rc = roomfile_save(err, dir, &r)) == 0) {
		char path[4096];

		/* No other room's epochs in a home joined again (--force
		 * moved them aside; a stray file is not trusted either). */
		if (inv.epoch > 0)
			rc = home_save_epoch(err, dir, &inv);
		else if (fs_path(path, sizeof(path), dir, "epochs.json") == 0)
			(void)unlink(path);
	}
	if (rc == 0 && where != NULL)
		snprintf(where, 4096, "%s", dir);
out:
	if (rc == -1 && placed)
		home_unplace(home, dir);
	sodium_memzero(&inv, sizeof(inv));
	roomfile_wipe(&r);
	sec_identity_free(id);
	return rc;
}

int
home_describe(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1], char fpr[PAPO_FPR_LEN + 1])
{
	struct room_keys keys;
	struct room_file r;
	uint8_t h[PAPO_KEY_LEN];
	char text[(sizeof(h) * 8 + 4) / 5 + 1];

	if (roomfile_load(err, home, &r) == -1)
		return -1;
	snprintf(name, PAPO_NAME_MAX + 1, "%s", r.name);
	sec_room_keys(r.secret, &keys);
	crypto_generichash(h, sizeof(h), keys.id, sizeof(keys.id), NULL, 0);
	b32_encode(h, sizeof(h), text);
	snprintf(fpr, PAPO_FPR_LEN + 1, "%s", text);
	sodium_memzero(&keys, sizeof(keys));
	roomfile_wipe(&r);
	return 0;
}

int
home_invite(char err[PAPO_ERR_LEN], const char *home, const char *listen,
    char **invite)
{
	struct identity *id = NULL;
	struct room_file r;
	struct addr la;
	int rc = -1;

	if (home_listen(err, listen, &la) == -1)
		return -1;
	if (roomfile_load(err, home, &r) == -1)
		return -1;
	if ((id = sec_identity_load(err, home)) != NULL)
		rc = home_make_invite(err, &r, id, &la, invite);
	roomfile_wipe(&r);
	sec_identity_free(id);
	return rc;
}

int
home_matches(const char *sel, const char *id, const char *name)
{
	size_t len = strlen(sel);

	if (strcmp(id, sel) == 0)
		return ROOM_BY_ID;
	if (strcmp(name, sel) == 0 ||
	    (len >= PAPO_ROOM_PREFIX_MIN && strncmp(id, sel, len) == 0))
		return ROOM_BY_NAME;
	return 0;
}

void
home_refs_format(const struct room_ref *rooms, size_t n, char *out,
    size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		int k = snprintf(out + used, len - used, "%s%s (%.8s)%s",
		    i > 0 ? ", " : "", rooms[i].name, rooms[i].id,
		    rooms[i].dflt ? " [default]" : "");

		if (k < 0)
			break;
		used += (size_t)k;
	}
}

long
home_pick(const char *sel, const struct room_ref *rooms, size_t n,
    char err[PAPO_ERR_LEN], int *status)
{
	char names[PAPO_ERR_LEN - 80];
	size_t hits = 0;
	long found = -1;

	for (size_t i = 0; i < n; i++) {
		int how = home_matches(sel, rooms[i].id, rooms[i].name);

		if (how == ROOM_BY_ID)
			return (long)i;
		if (how == ROOM_BY_NAME) {
			found = (long)i;
			hits++;
		}
	}
	if (hits == 1)
		return found;
	home_refs_format(rooms, n, names, sizeof(names));
	if (status != NULL)
		*status = hits > 1 ? 409 : 404;
	if (n == 0)
		snprintf(err, PAPO_ERR_LEN, "this daemon is in no room yet");
	else if (hits > 1)
		snprintf(err, PAPO_ERR_LEN, "'%.64s' names %zu rooms: give its "
		    "id; the rooms are %s", sel, hits, names);
	else
		snprintf(err, PAPO_ERR_LEN, "no room named '%.64s'; the rooms "
		    "are %s", sel, names);
	return -1;
}

int
home_dir_find(char err[PAPO_ERR_LEN], const char *home, const char *sel,
    char *dir, size_t len)
{
	/* Each room's id and name as its room.json says, for home_pick. */
	struct found {
		char id[PAPO_ROOMID_LEN + 1];
		char name[ROOM_NAME_MAX + 1];
		size_t dir;             /* its index in dirs */
	} *f = NULL;
	struct room_ref *refs = NULL;
	char **dirs = NULL;
	size_t n = 0, nrefs = 0;
	long at;
	int rc = -1;

	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	if (n == 0) {
		snprintf(err, PAPO_ERR_LEN, "%s holds no room yet", home);
		goto done;
	}
	if ((f = calloc(n, sizeof(*f))) == NULL ||
	    (refs = calloc(n, sizeof(*refs))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		struct room_file r;
		struct room_keys keys;
		char why[PAPO_ERR_LEN];

		if (roomfile_load(why, dirs[i], &r) == -1)
			continue;
		sec_room_keys(r.secret, &keys);
		sec_room_id_format(&keys, f[nrefs].id);
		sodium_memzero(&keys, sizeof(keys));
		snprintf(f[nrefs].name, sizeof(f[nrefs].name), "%s", r.name);
		roomfile_wipe(&r);
		f[nrefs].dir = i;
		refs[nrefs].id = f[nrefs].id;
		refs[nrefs].name = f[nrefs].name;
		nrefs++;
	}
	if ((at = home_pick(sel, refs, nrefs, err, NULL)) == -1)
		goto done;
	if ((size_t)snprintf(dir, len, "%s", dirs[f[at].dir]) >= len)
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", dirs[f[at].dir]);
	else
		rc = 0;
done:
	free(refs);
	free(f);
	home_dirs_free(dirs, n);
	return rc;
}
