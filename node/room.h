/*
 * room.h: $PAPO_HOME/room.json, the room this member belongs to: its
 * secret, this member's name and about, and where to find the other
 * members at first (the inviter's id and addresses).  The public
 * operations (create, join, invite) are declared in node.h.
 */
#ifndef PAPO_ROOM_H
#define PAPO_ROOM_H

#include <stdint.h>

#include "node/addr.h"
#include "node/invite.h"
#include "node/node.h"

#define ROOM_NAME_MAX INVITE_ROOM_MAX

struct room {
	char name[ROOM_NAME_MAX + 1];      /* given by its maker, or "papo-"
	                                    * and the start of the room id */
	uint8_t secret[32];
	char me[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	int has_inviter;
	uint8_t inviter[32];
	int has_owner;                     /* the member who made the room: */
	uint8_t owner[32];                 /* ourselves when we made it, or
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
int room_load(char err[PAPO_ERR_LEN], const char *home, struct room *out);
/* Replaces home's room.json atomically, mode 0600. */
int room_save(char err[PAPO_ERR_LEN], const char *home, const struct room *r);
/* Wipes the secret. */
void room_wipe(struct room *r);
/* The name r's maker gave it, for invites to carry; NULL when it has the
 * name every member derives from the room id. */
const char *room_given_name(const struct room *r);

/* Checks a member name or about text; -1 with err saying what is wrong. */
int room_check_name(char err[PAPO_ERR_LEN], const char *name);
int room_check_about(char err[PAPO_ERR_LEN], const char *about);

#endif
