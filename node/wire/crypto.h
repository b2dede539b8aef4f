/*
 * crypto.h: everything papo does with libsodium apart from sealing frames:
 * the member identity (an Ed25519 key pair kept in $PAPO_HOME/identity),
 * member ids, message ids, and the keys derived from a room secret
 * (docs/PROTOCOL.md, "Keys").  Prefix sec_ (libsodium owns crypto_).
 */
#ifndef PAPO_CRYPTO_H
#define PAPO_CRYPTO_H

#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"

struct identity {
	uint8_t pk[PAPO_KEY_LEN];      /* public key: the member id */
	uint8_t sk[PAPO_SECKEY_LEN];   /* secret key, libsodium layout
	                                * (seed || pk) */
};

/* Initialises libsodium; safe to call more than once.  -1 on failure. */
int sec_init(void);

/*
 * Loads home's identity, creating it (mode 0600) when there is none.
 * Refuses a file of the wrong size or one that others may read.  Returns
 * a new identity to release with sec_identity_free, or NULL with err set.
 */
struct identity *sec_identity_load(char err[PAPO_ERR_LEN], const char *home);

/* Wipes and frees; NULL is a no-op. */
void sec_identity_free(struct identity *id);

/* The secret QUIC stateless reset tokens are derived from: the same for
 * every run of this identity, and telling nothing of its key. */
void sec_reset_secret(const struct identity *id, uint8_t out[PAPO_KEY_LEN]);

/* The 52-character text of a member id (out holds PAPO_ID_LEN + 1). */
void sec_id_format(const uint8_t pk[PAPO_KEY_LEN], char out[PAPO_ID_LEN + 1]);
/* Parses exactly PAPO_ID_LEN characters; 0 or -1. */
int sec_id_parse(const char *s, uint8_t pk[PAPO_KEY_LEN]);

/* A fresh random message id (out holds PAPO_MSGID_LEN + 1). */
void sec_msgid_new(char out[PAPO_MSGID_LEN + 1]);
/* 1 when s is PAPO_MSGID_LEN base32 characters (then *v is its 50-bit
 * value, if v is not NULL), else 0. */
int sec_msgid_valid(const char *s, uint64_t *v);
/* The text of the message id whose 50-bit value is v (the inverse of
 * sec_msgid_valid). */
void sec_msgid_format(uint64_t v, char out[PAPO_MSGID_LEN + 1]);

struct room_keys {
	uint8_t seal[PAPO_KEY_LEN];       /* XChaCha20-Poly1305 key for frames */
	uint8_t id[16];                   /* public room id */
};

/* Derives a room's keys from its secret (libsodium KDF). */
void sec_room_keys(const uint8_t secret[PAPO_KEY_LEN], struct room_keys *out);
/* Key epochs (docs/PROTOCOL.md, "Key epochs"; not used by the daemon
 * yet): epoch n >= 1 has a random 32-byte secret whose KDF subkey is
 * its sealing key; the room id stays the room's.  out gets room's id and
 * the epoch's sealing key. */
void sec_epoch_keys(const struct room_keys *room,
    const uint8_t secret[PAPO_KEY_LEN],
    struct room_keys *out);

/* An epoch secret sealed to one member: crypto_box_seal to the X25519
 * key of its Ed25519 id, SEC_BOX_LEN bytes.  -1 when the id is no
 * valid Ed25519 key. */
#define SEC_BOX_LEN (PAPO_KEY_LEN + 48)   /* + crypto_box_SEALBYTES */
int sec_box_seal(uint8_t out[SEC_BOX_LEN], const uint8_t secret[PAPO_KEY_LEN],
    const uint8_t member[PAPO_KEY_LEN]);
/* Opens one sealed to us; -1 when it was not, or was altered. */
int sec_box_open(uint8_t secret[PAPO_KEY_LEN], const uint8_t in[SEC_BOX_LEN],
    const struct identity *me);

/* The public room id as text (out holds PAPO_ROOMID_LEN + 1). */
void sec_room_id_format(const struct room_keys *k, char out[PAPO_ROOMID_LEN + 1]);

#endif
