/*
 * invite.h: the invite string that carries a room to a new member
 * (docs/PROTOCOL.md, "Invite").  Pure: no I/O, no clock; fuzzed.
 */
#ifndef PAPO_INVITE_H
#define PAPO_INVITE_H

#include <stddef.h>
#include <stdint.h>

#include "node/addr.h"
#include "node/node.h"

#define INVITE_VERSION 1
#define INVITE_PREFIX "papo1"

struct invite {
	uint8_t version;
	uint8_t secret[32];    /* the room secret */
	uint8_t inviter[32];   /* the inviting member's public key */
	size_t naddr;
	struct addr addr[PAPO_ADDR_MAX];
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
};

/* Encodes inv (its version is ignored: INVITE_VERSION is written) into a
 * malloc'd string; NULL when out of memory, or when naddr is too large or
 * an address has another family than 4 or 6 or port 0 (what a decoder
 * would refuse). */
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
