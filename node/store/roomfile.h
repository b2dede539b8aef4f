/*
 * roomfile.h: $PAPO_HOME/room.json (or home/rooms/ID/room.json), the room
 * this member belongs to: its secret, this member's name and about, and
 * where to find the other members at first (the inviter's id and
 * addresses).  Public (node.h includes it through home.h).
 */
#ifndef PAPO_ROOMFILE_H
#define PAPO_ROOMFILE_H

#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "node/papo.h"
#include "node/wire/invite.h"

#define ROOM_FILE "room.json"

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

/* Reads home's room.json.  -1 with err set (naming the file) otherwise. */
int roomfile_load(char err[PAPO_ERR_LEN], const char *home,
    struct room_file *out);
/* Replaces home's room.json atomically, mode 0600. */
int roomfile_save(char err[PAPO_ERR_LEN], const char *home,
    const struct room_file *r);
/* Wipes the secret. */
void roomfile_wipe(struct room_file *r);
/* The name r's maker gave it, for invites to carry; NULL when it has the
 * name every member derives from the room id. */
const char *roomfile_given_name(const struct room_file *r);

/* Checks a member name or about text; -1 with err saying what is wrong. */
int roomfile_check_name(char err[PAPO_ERR_LEN], const char *name);
int roomfile_check_about(char err[PAPO_ERR_LEN], const char *about);
/* Checks a room's name; -1 with err saying what is wrong. */
int roomfile_check_room(char err[PAPO_ERR_LEN], const char *room);
/* The name every member derives from the room's secret: "papo-" and the
 * first 8 characters of the public room id. */
void roomfile_derived_name(const uint8_t secret[PAPO_KEY_LEN],
    char out[ROOM_NAME_MAX + 1]);

#endif
