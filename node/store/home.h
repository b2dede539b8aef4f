/*
 * home.h: $PAPO_HOME's rooms: making one, joining one from an invite,
 * the invite for others, the folders of the rooms, leaving one, and
 * which room a name or id picks.  Public (node.h includes it): what the
 * command line and the daemon do with a home's rooms.  A room's
 * room.json itself is roomfile.h's.
 */
#ifndef PAPO_HOME_H
#define PAPO_HOME_H

#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "node/papo.h"
#include "node/store/roomfile.h"
#include "node/wire/invite.h"

/*
 * Creates this member's identity in home if it has none, and a new room
 * whose member name is name (1..64 bytes of UTF-8) and about text about
 * (may be NULL), named room (1..64 bytes of UTF-8; NULL: "papo-" and the
 * start of its id); name NULL: the one this member has in home's rooms
 * (home_member_name).  A home that holds rooms gets it beside them, in
 * home/rooms/ID (at most PAPO_ROOMS_MAX; home_dirs in room.h), unless
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
int home_create(char err[PAPO_ERR_LEN], const char *home, const char *name,
    const char *about, const char *room, char *aside, const char *listen,
    char **invite);

/*
 * Stores the room of an invite in home, beside the rooms it holds, with
 * this member's name and about; creates the identity if needed.  Refuses
 * a malformed invite with the reason, and a room home already holds
 * (there is nothing to join) with errno EEXIST.  aside not NULL
 * (--force): as home_create.  name NULL: the name this member has in
 * home's rooms (home_member_name; refused when it holds none).
 *
 * An invite of a room home holds whose key epoch is newer than any the
 * room holds (a key change this member missed) is not a new room: its
 * key goes into that room's folder, which keeps its log, and the room
 * is this member's again (1 is returned).  A member that room removed
 * stays removed (every member refuses its key): refused with the
 * reason.  A join or a creation that fails leaves no folder or file
 * behind.  0 when a room was added.
 */
int home_join(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, char *aside);
/* home_join, and the folder of the room joined (or given the newer key)
 * into where (4096 bytes) when not NULL. */
int home_join_in(char err[PAPO_ERR_LEN], const char *home,
    const char *invite, const char *name, const char *about, char *aside,
    char *where);

/*
 * The name this member has in home's first room that reads (the home's
 * own, then rooms/ID by id), for a room made or joined without --name;
 * -1 with err when home holds none.
 */
int home_member_name(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1]);

/*
 * Whether invite is for the room home holds: 1 if it is, 0 if it is for
 * another room, -1 with err when the invite is malformed or home holds no
 * readable room.  name gets the held room's name when there is one.
 */
int home_is(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    char name[PAPO_NAME_MAX + 1]);

/*
 * What tells a room apart without giving it away, for logs: its name, and
 * its fingerprint, the first PAPO_FPR_LEN base32 characters of the
 * BLAKE2b-256 hash of its public room id (the invite, which holds the
 * room's secret, must not be in logs: docs/SECURITY.md).  -1 with err
 * when home holds no readable room.
 */
#define PAPO_FPR_LEN 8
int home_describe(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1], char fpr[PAPO_FPR_LEN + 1]);

/*
 * Writes into *invite (malloc'd) this room's invite, carrying this
 * member's id and the addresses reachable at listen.
 */
int home_invite(char err[PAPO_ERR_LEN], const char *home, const char *listen,
    char **invite);

/*
 * How a ROOM names a room, everywhere (CLI, HTTP, MCP, the node): by its
 * id, or by its name or the start of its id (PAPO_ROOM_PREFIX_MIN
 * characters at least) when that is one room.  home_matches says how
 * sel names the room of id and name: ROOM_BY_ID, ROOM_BY_NAME (its name
 * or the start of its id: the caller counts such hits, and takes one
 * only when it is alone), or 0.
 */
#define PAPO_ROOM_PREFIX_MIN 4
#define ROOM_BY_ID 2
#define ROOM_BY_NAME 1
int home_matches(const char *sel, const char *id, const char *name);

/* A room as home_pick and home_refs_format see it: its id and name, and
 * whether it is the default room. */
struct room_ref {
	const char *id;
	const char *name;
	int dflt;
};

/*
 * The one of n rooms that sel names (home_matches): its index; -1 when
 * none or several do, with err saying which and naming the rooms, and
 * *status (when not NULL) 404 for none, 409 for several.
 */
long home_pick(const char *sel, const struct room_ref *rooms, size_t n,
    char err[PAPO_ERR_LEN], int *status);

/* The rooms for an error a person or a model reads, into out (len
 * bytes, cut if need be): "team (ab3kx2qd) [default], ops (7fq2mm4x)". */
void home_refs_format(const struct room_ref *rooms, size_t n, char *out,
    size_t len);

/*
 * The folder of the room of home that sel names (home_matches), into dir
 * (len bytes); -1 with err naming the rooms when none or several are.
 */
int home_dir_find(char err[PAPO_ERR_LEN], const char *home, const char *sel,
    char *dir, size_t len);

/*
 * The folders of home's rooms, malloc'd into *out (home_dirs_free): home
 * itself when it holds room.json (the one room every release before
 * many rooms wrote), then home/rooms/ID for each room added since,
 * sorted by id; at most PAPO_ROOMS_MAX.  -1 with err out of memory.
 */
int home_dirs(char err[PAPO_ERR_LEN], const char *home, char ***out,
    size_t *n);
void home_dirs_free(char **dirs, size_t n);

/*
 * After the daemon left the room in dir (one of home_dirs): its files
 * moved into home/old-ROOMID-YYYYMMDD-HHMMSS (named in aside), or with
 * forget deleted (aside "").  -1 with err.
 */
int home_leave(char err[PAPO_ERR_LEN], const char *home, const char *dir,
    int forget, char aside[PAPO_ASIDE_LEN]);

#endif
