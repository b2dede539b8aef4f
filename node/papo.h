/*
 * papo.h: the limits every part of papo agrees on: lengths of keys, ids
 * and names, sizes of bodies and frames (docs/PROTOCOL.md).  No code.
 */
#ifndef PAPO_PAPO_H
#define PAPO_PAPO_H

#define PAPO_KEY_LEN 32        /* a room secret, a member's public key
                                * (its id's bytes), a sealing key, a
                                * digest (BLAKE2b-256) */
#define PAPO_SIG_LEN 64        /* an Ed25519 signature */
#define PAPO_SECKEY_LEN 64     /* an Ed25519 secret key (seed + public) */
#define PAPO_ID_LEN 52         /* member id: base32 of the public key */
#define PAPO_MSGID_LEN 10      /* message id: 10 base32 characters */
#define PAPO_ROOMID_LEN 26     /* public room id: base32 of 16 bytes */
#define PAPO_NAME_MAX 64       /* bytes of a member name */
#define PAPO_ABOUT_MAX 256     /* bytes of a member's about text */
#define PAPO_BODY_MAX (48 * 1024)   /* bytes of a message body */
#define PAPO_FRAME_MAX (64 * 1024)  /* bytes of a sealed frame */
#define PAPO_ADDR_MAX 8        /* addresses in an invite or a hello */
#define PAPO_ROOMS_MAX 64      /* rooms one daemon holds */

#define PAPO_DEFAULT_LISTEN "0.0.0.0:7778"

#endif
