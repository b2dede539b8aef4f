/*
 * keyring.h: what the room's key changes decided, as held by this member
 * (keyring.c): the key epochs held (number, secret, sealing keys, maker,
 * signed frame) and who was removed, this member included.  The table is
 * opaque; one epoch's record and one removal are plain structs, as the
 * parts above (core.c seals with an epoch's keys, epoch.c replaces one
 * that lost to another of its number) read and fill them.  It sits below
 * every other part of a room, so that sealing and the member table may
 * ask it, and it calls none of them; epoch.c, above, does the protocol
 * and keeps epochs.json.  All of it belongs to the node thread.
 */
#ifndef PAPO_KEYRING_H
#define PAPO_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "node/papo.h"
#include "node/wire/crypto.h"

/* A key epoch held. */
struct epoch_held {
	uint32_t n;                 /* 0: the room secret's key */
	uint8_t secret[PAPO_KEY_LEN];  /* zeros for epoch 0 */
	struct room_keys keys;      /* its sealing key; the room's id */
	uint8_t by[PAPO_KEY_LEN];   /* who made it; zeros for epoch 0 */
	char *frame;                /* its signed epoch frame, JSON; or NULL */
	uint8_t sig[PAPO_SIG_LEN];  /* that frame's signature: of two
	                             * changes of one number, the lower is
	                             * kept */
};

/* A member removed from the room. */
struct removal {
	uint8_t id[PAPO_KEY_LEN];
	uint8_t by[PAPO_KEY_LEN];   /* the owner or admin who removed it */
	uint64_t ts;                /* ms, by's clock */
	uint32_t epoch;             /* the epoch that removed it */
};

struct keyring;

/* An empty keyring; NULL out of memory. */
struct keyring *keyring_new(void);
/* Frees k, its secrets wiped; NULL is a no-op. */
void keyring_free(struct keyring *k);

/* The epoch numbered n, or NULL when we do not hold it. */
struct epoch_held *keyring_find(const struct keyring *k, uint32_t n);
/* Epoch n's keys, or NULL when not held. */
const struct room_keys *keyring_keys(const struct keyring *k, uint32_t n);
/* The newest epoch held: version 3 connections are sealed with it. */
uint32_t keyring_newest(const struct keyring *k);
/* The epochs held, in no order: i below keyring_count. */
size_t keyring_count(const struct keyring *k);
struct epoch_held *keyring_at(const struct keyring *k, size_t i);
/* A new epoch record, zeroed and counted: the caller fills it.  NULL out
 * of memory. */
struct epoch_held *keyring_add(struct keyring *k);

/* The removal of member id, or NULL when it was not removed. */
const struct removal *keyring_removed(const struct keyring *k,
    const uint8_t id[PAPO_KEY_LEN]);
/* The removals held, in the order learnt: i below keyring_nremoved. */
size_t keyring_nremoved(const struct keyring *k);
const struct removal *keyring_removal_at(const struct keyring *k, size_t i);
/* A new removal record, zeroed and counted: the caller fills it.  NULL
 * out of memory. */
struct removal *keyring_remove(struct keyring *k);
/* Whether this member was removed, and how (NULL when it was not). */
int keyring_gone(const struct keyring *k);
const struct removal *keyring_me_removal(const struct keyring *k);
/* Marks this member removed: its removal record, for the caller to
 * fill. */
struct removal *keyring_set_gone(struct keyring *k);

#endif
