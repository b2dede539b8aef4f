/*
 * invite.h: the invite string that carries a room to a new member
 * (docs/PROTOCOL.md, "Invite").  Pure: no I/O, no clock; fuzzed.
 */
#ifndef PAPO_INVITE_H
#define PAPO_INVITE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "node/papo.h"

#define INVITE_VERSION 1        /* an invite without extensions */
#define INVITE_VERSION_EXT 2    /* one with: a relay, a room name, a key
                                 * epoch */
#define INVITE_PREFIX "papo1"
#define INVITE_URL_MAX 200      /* bytes of the relay's URL */
#define INVITE_CRED_MAX 127     /* bytes of a relay user, password, secret */
#define INVITE_ROOM_MAX 64      /* bytes of a room's name */

/*
 * The TURN relay an invite hands to the joiner, as the inviter was given
 * it: "turn:HOST[:PORT]" and either a user and password, or coturn's
 * shared secret (then user may be empty).  An empty url: no relay.
 */
struct invite_relay {
	char url[INVITE_URL_MAX + 1];
	char user[INVITE_CRED_MAX + 1];
	char pass[INVITE_CRED_MAX + 1];
	char secret[INVITE_CRED_MAX + 1];
};

struct invite {
	uint8_t version;
	uint8_t secret[PAPO_KEY_LEN];    /* the room secret */
	uint8_t inviter[PAPO_KEY_LEN];   /* the inviting member's public key */
	size_t naddr;
	struct addr addr[PAPO_ADDR_MAX];
	struct invite_relay relay;
	char room[INVITE_ROOM_MAX + 1];   /* the room's name, or "" */
	uint32_t epoch;        /* the newest key epoch, 0: none after the
	                        * room secret's (docs/PROTOCOL.md, "Key
	                        * epochs") */
	uint8_t epoch_secret[PAPO_KEY_LEN];  /* its secret, when epoch > 0 */
};

enum invite_err {
	INVITE_OK = 0,
	INVITE_EMPTY,          /* nothing given */
	INVITE_PREFIX_BAD,     /* does not start with papo1 */
	INVITE_CHAR,           /* a character that is not base32 */
	INVITE_LENGTH,         /* a length no encoder makes, or far too long */
	INVITE_TRUNCATED,      /* fewer bytes than its contents need */
	INVITE_CHECKSUM,       /* checksum mismatch: typo or cut short */
	INVITE_VERSION_BAD,    /* a version this papo does not know */
	INVITE_TOO_MANY_ADDRS, /* more than PAPO_ADDR_MAX addresses */
	INVITE_FAMILY,         /* an address family other than 4 or 6 */
	INVITE_PORT,           /* port 0 */
	INVITE_TRAILING,       /* bytes after the last address */
	INVITE_RELAY,          /* a relay that is empty, too long or not text */
	INVITE_ROOM,           /* a room name that is empty, too long, not text */
	INVITE_EXTENSION,      /* an extension given twice */
	INVITE_EPOCH,          /* a key epoch of the wrong length, or 0 */
};

/* Encodes inv (its version is ignored: INVITE_VERSION is written, or
 * INVITE_VERSION_EXT when relay.url, room or epoch is set) into a malloc'd
 * string; NULL when out of memory, or when it holds what a decoder would
 * refuse: too many addresses, a family other than 4 or 6, port 0, a relay
 * whose fields are too long or not printable ASCII, or one without
 * credentials, a room name too long or with control characters. */
char *invite_encode(const struct invite *inv);

/*
 * Decodes s, ignoring surrounding white space; *out is written only on
 * INVITE_OK.  On INVITE_CHAR, *pos (if not NULL) is the offending
 * character's index in s.
 */
enum invite_err invite_decode(const char *s, struct invite *out, size_t *pos);

/* A one-line reason a person can act on. */
const char *invite_strerror(enum invite_err e);

#endif
