/*
 * room.h: $PAPO_HOME/room.json, the room this member belongs to: its
 * secret, this member's name and about, and where to find the other
 * members at first (the inviter's id and addresses).  Its first part
 * is public (node.h includes it): the operations the command line and
 * the daemon use on a home's rooms.
 */
#ifndef PAPO_ROOM_H
#define PAPO_ROOM_H

#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "node/papo.h"
#include "node/wire/invite.h"

/*
 * Creates this member's identity in home if it has none, and a new room
 * whose member name is name (1..64 bytes of UTF-8) and about text about
 * (may be NULL), named room (1..64 bytes of UTF-8; NULL: "papo-" and the
 * start of its id); name NULL: the one this member has in home's rooms
 * (room_member_name).  A home that holds rooms gets it beside them, in
 * home/rooms/ID (at most PAPO_ROOMS_MAX; room_dirs in room.h), unless
 * aside is not NULL (--force): the first room's files (room.json,
 * log.jsonl, peers.json, admins.json, epochs.json, outbox.jsonl,
 * agents.json) are then moved into home/old-ROOMID-YYYYMMDD-HHMMSS, whose
 * name aside gets ("" when there was no room), and the new room takes
 * their place; the caller then makes sure no daemon runs on home
 * (serve_hold).  listen is the QUIC address the daemon will use
 * ("ADDR:PORT"); it fills the invite's addresses.  On success *invite is
 * a malloc'd string the caller frees.
 */
#define PAPO_ASIDE_LEN 64      /* "old-ROOMID-YYYYMMDD-HHMMSS-N" */
int room_create(char err[PAPO_ERR_LEN], const char *home, const char *name,
    const char *about, const char *room, char *aside, const char *listen,
    char **invite);

/*
 * Stores the room of an invite in home, beside the rooms it holds, with
 * this member's name and about; creates the identity if needed.  Refuses
 * a malformed invite with the reason, and a room home already holds
 * (there is nothing to join) with errno EEXIST.  aside not NULL
 * (--force): as room_create.  name NULL: the name this member has in
 * home's rooms (room_member_name; refused when it holds none).
 *
 * An invite of a room home holds whose key epoch is newer than any the
 * room holds (a key change this member missed) is not a new room: its
 * key goes into that room's folder, which keeps its log, and the room
 * is this member's again (1 is returned).  A member that room removed
 * stays removed (every member refuses its key): refused with the
 * reason.  A join or a creation that fails leaves no folder or file
 * behind.  0 when a room was added.
 */
int room_join(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, char *aside);
/* room_join, and the folder of the room joined (or given the newer key)
 * into where (4096 bytes) when not NULL. */
int room_join_in(char err[PAPO_ERR_LEN], const char *home,
    const char *invite, const char *name, const char *about, char *aside,
    char *where);

/*
 * The name this member has in home's first room that reads (the home's
 * own, then rooms/ID by id), for a room made or joined without --name;
 * -1 with err when home holds none.
 */
int room_member_name(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1]);

/*
 * Whether invite is for the room home holds: 1 if it is, 0 if it is for
 * another room, -1 with err when the invite is malformed or home holds no
 * readable room.  name gets the held room's name when there is one.
 */
int room_is(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    char name[PAPO_NAME_MAX + 1]);

/*
 * What tells a room apart without giving it away, for logs: its name, and
 * its fingerprint, the first PAPO_FPR_LEN base32 characters of the
 * BLAKE2b-256 hash of its public room id (the invite, which holds the
 * room's secret, must not be in logs: docs/SECURITY.md).  -1 with err
 * when home holds no readable room.
 */
#define PAPO_FPR_LEN 8
int room_describe(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1], char fpr[PAPO_FPR_LEN + 1]);

/*
 * Writes into *invite (malloc'd) this room's invite, carrying this
 * member's id and the addresses reachable at listen.
 */
int room_invite(char err[PAPO_ERR_LEN], const char *home, const char *listen,
    char **invite);

/*
 * How a ROOM names a room, everywhere (CLI, HTTP, MCP, the node): by its
 * id, or by its name or the start of its id (PAPO_ROOM_PREFIX_MIN
 * characters at least) when that is one room.  room_matches says how
 * sel names the room of id and name: ROOM_BY_ID, ROOM_BY_NAME (its name
 * or the start of its id: the caller counts such hits, and takes one
 * only when it is alone), or 0.
 */
#define PAPO_ROOM_PREFIX_MIN 4
#define ROOM_BY_ID 2
#define ROOM_BY_NAME 1
int room_matches(const char *sel, const char *id, const char *name);

/* A room as room_pick and room_refs_format see it: its id and name, and
 * whether it is the default room. */
struct room_ref {
	const char *id;
	const char *name;
	int dflt;
};

/*
 * The one of n rooms that sel names (room_matches): its index; -1 when
 * none or several do, with err saying which and naming the rooms, and
 * *status (when not NULL) 404 for none, 409 for several.
 */
long room_pick(const char *sel, const struct room_ref *rooms, size_t n,
    char err[PAPO_ERR_LEN], int *status);

/* The rooms for an error a person or a model reads, into out (len
 * bytes, cut if need be): "team (ab3kx2qd) [default], ops (7fq2mm4x)". */
void room_refs_format(const struct room_ref *rooms, size_t n, char *out,
    size_t len);

/*
 * The folder of the room of home that sel names (room_matches), into dir
 * (len bytes); -1 with err naming the rooms when none or several are.
 */
int room_dir_find(char err[PAPO_ERR_LEN], const char *home, const char *sel,
    char *dir, size_t len);

#define ROOM_NAME_MAX INVITE_ROOM_MAX

struct room_file {
	char name[ROOM_NAME_MAX + 1];      /* given by its maker, or "papo-"
	                                    * and the start of the room id */
	uint8_t secret[PAPO_KEY_LEN];
	char me[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	int has_inviter;
	uint8_t inviter[PAPO_KEY_LEN];
	int has_owner;                     /* the member who made the room: */
	uint8_t owner[PAPO_KEY_LEN];                 /* ourselves when we made it, or
	                                    * as our inviter's hello said */
	size_t nboot;
	struct addr boot[PAPO_ADDR_MAX];   /* the inviter's addresses */
	struct invite_relay relay;         /* the invite's relay, or url "" */
};

/*
 * The folders of home's rooms, malloc'd into *out (room_dirs_free): home
 * itself when it holds room.json (the one room every release before
 * many rooms wrote), then home/rooms/ID for each room added since,
 * sorted by id; at most PAPO_ROOMS_MAX.  -1 with err out of memory.
 */
int room_dirs(char err[PAPO_ERR_LEN], const char *home, char ***out,
    size_t *n);
void room_dirs_free(char **dirs, size_t n);

/*
 * After the daemon left the room in dir (one of room_dirs): its files
 * moved into home/old-ROOMID-YYYYMMDD-HHMMSS (named in aside), or with
 * forget deleted (aside "").  -1 with err.
 */
int room_leave(char err[PAPO_ERR_LEN], const char *home, const char *dir,
    int forget, char aside[PAPO_ASIDE_LEN]);

/* Reads home's room.json.  -1 with err set (naming the file) otherwise. */
int room_load(char err[PAPO_ERR_LEN], const char *home, struct room_file *out);
/* Replaces home's room.json atomically, mode 0600. */
int room_save(char err[PAPO_ERR_LEN], const char *home,
    const struct room_file *r);
/* Wipes the secret. */
void room_wipe(struct room_file *r);
/* The name r's maker gave it, for invites to carry; NULL when it has the
 * name every member derives from the room id. */
const char *room_given_name(const struct room_file *r);

/* Checks a member name or about text; -1 with err saying what is wrong. */
int room_check_name(char err[PAPO_ERR_LEN], const char *name);
int room_check_about(char err[PAPO_ERR_LEN], const char *about);

#endif
