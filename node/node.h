/*
 * node.h: the public face of the papo node library, and the only header of
 * node/ that server/ includes.  It holds the limits every part of papo
 * agrees on and the operations the command line and the daemon use.
 *
 * Conventions: functions return 0 on success and -1 on failure; where a
 * person needs the reason, the first parameter is an error buffer of
 * PAPO_ERR_LEN bytes that receives one line without a trailing newline.
 */
#ifndef PAPO_NODE_H
#define PAPO_NODE_H

#include <stddef.h>
#include <stdint.h>

#define PAPO_ERR_LEN 256

#define PAPO_KEY_LEN 32        /* room secret, member public key */
#define PAPO_ID_LEN 52         /* member id: base32 of the public key */
#define PAPO_MSGID_LEN 10      /* message id: 10 base32 characters */
#define PAPO_ROOMID_LEN 26     /* public room id: base32 of 16 bytes */
#define PAPO_NAME_MAX 64       /* bytes of a member name */
#define PAPO_ABOUT_MAX 256     /* bytes of a member's about text */
#define PAPO_BODY_MAX (48 * 1024)   /* bytes of a message body */
#define PAPO_FRAME_MAX (64 * 1024)  /* bytes of a sealed frame */
#define PAPO_ADDR_MAX 8        /* addresses in an invite or a hello */

#define PAPO_DEFAULT_LISTEN "0.0.0.0:7778"

/*
 * Creates this member's identity in home if it has none, and a new room
 * whose member name is name (1..64 bytes of UTF-8) and about text about
 * (may be NULL).  Refuses when home already holds a room unless force is
 * set.  listen is the QUIC address the daemon will use ("ADDR:PORT"); it
 * fills the invite's addresses.  On success *invite is a malloc'd string
 * the caller frees.
 */
int room_create(char err[PAPO_ERR_LEN], const char *home, const char *name,
    const char *about, int force, const char *listen, char **invite);

/*
 * Stores the room of an invite in home, with this member's name and
 * about; creates the identity if needed.  Refuses a malformed invite with
 * the reason, and an existing room unless force is set.
 */
int room_join(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, int force);

/*
 * Writes into *invite (malloc'd) this room's invite, carrying this
 * member's id and the addresses reachable at listen.
 */
int room_invite(char err[PAPO_ERR_LEN], const char *home, const char *listen,
    char **invite);

/*
 * Diagnostics: one line each on stderr, prefixed with the level.  The
 * level is the one process-wide setting papo keeps: main sets it once
 * from PAPO_LOG before any thread starts; afterwards it is only read.
 */
enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Parses "error", "warn", "info" or "debug"; -1 for anything else. */
int log_parse_level(const char *s);
void log_set_level(enum log_level l);
void log_msg(enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
