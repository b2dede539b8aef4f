/*
 * frame.h: the frames members exchange (docs/PROTOCOL.md, "Frames"), as
 * typed structs; their JSON form (cJSON); sealing with XChaCha20-Poly1305
 * under the room key; and the Ed25519 signatures of msg, ack, punch,
 * admin and epoch frames and of version 3's presence, made over their
 * fields rather than their JSON text.  Each type is declared once, as a
 * descriptor (frame_int.h), in its family's file.
 *
 * Pure apart from the random nonce of frame_seal: no I/O, no clock, no
 * threads; fuzzed.  A decoded frame owns its heap parts: release them with
 * frame_clear.
 */
#ifndef PAPO_FRAME_H
#define PAPO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/buf.h"
#include "node/papo.h"
#include "node/wire/crypto.h"

#define FRAME_VERSION 5         /* the newest protocol version spoken */
#define FRAME_NONCE_LEN 24
#define FRAME_TAG_LEN 16
#define FRAME_SEAL_OVERHEAD (FRAME_NONCE_LEN + FRAME_TAG_LEN)
#define FRAME_EPOCH_LEN 4            /* version 3's envelope: the epoch */
#define FRAME_JSON_MAX (PAPO_FRAME_MAX - FRAME_SEAL_OVERHEAD)
#define FRAME_PEERS_MAX 64     /* members in one peers frame */
#define FRAME_SYNC_MAX 4096    /* ids in one sync frame */
#define FRAME_EPOCH_KEYS_MAX 256     /* members given an epoch's secret */
#define FRAME_EPOCH_REMOVED_MAX 64   /* members removed by one epoch */

enum frame_type {
	FRAME_HELLO = 1,
	FRAME_MSG,
	FRAME_ACK,
	FRAME_PEERS,
	FRAME_SYNC,
	FRAME_BYE,
	FRAME_PUNCH,            /* version 2 and later */
	FRAME_ADMIN,            /* version 3 and later */
	FRAME_EPOCH,            /* version 3 and later; codec only so far */
};

struct frame_hello {
	uint32_t version;                  /* FRAME_VERSION */
	uint8_t id[PAPO_KEY_LEN];                    /* the sender */
	char name[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	size_t naddr;
	struct addr addr[PAPO_ADDR_MAX];
	uint64_t msgs;                     /* messages in its history */
	uint8_t digest[PAPO_KEY_LEN];                /* digest of their ids (store.h) */
	struct addr obs;                   /* version 2: where the sender
	                                    * sees the receiver */
	int has_owner;                     /* version 3: the room's owner, */
	uint8_t owner[PAPO_KEY_LEN];                 /* as far as the sender knows */
	uint64_t events;                   /* version 3: the admin grants it
	                                    * holds */
	uint32_t epoch;                    /* version 3: the newest key epoch
	                                    * it holds (0 when absent) */
};

struct frame_msg {
	char id[PAPO_MSGID_LEN + 1];
	uint8_t from[PAPO_KEY_LEN];                  /* author */
	char name[PAPO_NAME_MAX + 1];      /* author's name when sent */
	uint64_t ts;                       /* ms since the epoch, author's clock */
	char *body;                        /* owned, NUL-terminated UTF-8 */
	size_t body_len;                   /* <= PAPO_BODY_MAX */
	int has_to;
	uint8_t to[PAPO_KEY_LEN];                    /* addressee, if has_to */
	int has_reply_to;
	char reply_to[PAPO_MSGID_LEN + 1]; /* if has_reply_to */
	int person;                        /* version 3: a person wrote it
	                                    * (the dashboard, the API), not an
	                                    * agent; not signed */
	uint8_t sig[PAPO_SIG_LEN];                   /* by from, over frame_msg_signed() */
};

enum ack_state { ACK_DELIVERED = 1, ACK_READ };

struct frame_ack {
	char id[PAPO_MSGID_LEN + 1];       /* the message acknowledged */
	uint8_t by[PAPO_KEY_LEN];                    /* the acknowledging member */
	enum ack_state state;
	uint64_t ts;                       /* ms, by's clock */
	uint8_t sig[PAPO_SIG_LEN];                   /* by by */
};

/* A member's presence.  Version 3: signed by the member itself over all
 * its fields (frame_peer_sign), seen its counter: a receiver takes only
 * an entry newer than the last it took from that member, so an old one
 * replayed says nothing.  Relays pass the entry on as it was signed. */
struct frame_peer {
	uint8_t id[PAPO_KEY_LEN];
	char name[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	uint64_t seen;                     /* ms of last sign of life, 0 unknown */
	size_t naddr;
	struct addr addr[PAPO_ADDR_MAX];
	int has_sig;                       /* version 3: sig is id's */
	uint8_t sig[PAPO_SIG_LEN];
};

struct frame_peers {
	size_t n;                          /* <= FRAME_PEERS_MAX */
	struct frame_peer *v;              /* owned */
};

struct frame_sync {
	uint64_t since;                    /* asks for messages with ts >= since */
	size_t n;                          /* <= FRAME_SYNC_MAX */
	char (*have)[PAPO_MSGID_LEN + 1];  /* owned: ids it already has since then */
};

/* Version 3: signed by the member leaving, ts on the same counter as
 * its announcements (newer than its last one), so a bye cannot be
 * forged by another member nor replayed after it came back. */
struct frame_bye {
	uint8_t id[PAPO_KEY_LEN];                    /* the member leaving */
	int has_sig;                       /* version 3: ts and sig set */
	uint64_t ts;                       /* ms, id's announcement counter */
	uint8_t sig[PAPO_SIG_LEN];
};

/* Hole punching arranged through a member both sides are connected to
 * (docs/REACHABILITY.md): from asks to (ask), to answers it is ready
 * (ready); each says where it may be reached.  Signed by from, carried
 * by the mutual member to the one it names. */
enum punch_phase { PUNCH_ASK = 1, PUNCH_READY };

struct frame_punch {
	uint8_t from[PAPO_KEY_LEN], to[PAPO_KEY_LEN];
	enum punch_phase phase;
	uint64_t n;                        /* the attempt, 1 to 3 */
	uint64_t ts;                       /* ms, from's clock */
	size_t naddr;
	struct addr addr[PAPO_ADDR_MAX];
	uint8_t sig[PAPO_SIG_LEN];
};

/* Version 3: the room's owner makes id an admin (docs/PROTOCOL.md,
 * "Owner and admins"); signed by by, taken only when by is the owner. */
struct frame_admin {
	uint8_t id[PAPO_KEY_LEN];                    /* the new admin */
	uint8_t by[PAPO_KEY_LEN];                    /* the owner */
	uint64_t ts;                       /* ms, by's clock */
	uint8_t sig[PAPO_SIG_LEN];
};

/* Version 3: a new key epoch (docs/PROTOCOL.md, "Key epochs"): its
 * secret sealed to each remaining member (sec_box_seal), the members it
 * removes, signed by the member who made it (node/room/epoch.c makes and
 * takes them). */
struct frame_epoch_key {
	uint8_t id[PAPO_KEY_LEN];                    /* the member */
	uint8_t box[SEC_BOX_LEN];          /* the epoch secret, sealed to it */
};

struct frame_epoch {
	uint64_t n;                        /* the epoch, 1 to 2^32 - 1 */
	uint8_t by[PAPO_KEY_LEN];                    /* who made it: owner or admin */
	uint64_t ts;                       /* ms, by's clock */
	size_t nremoved;                   /* <= FRAME_EPOCH_REMOVED_MAX */
	uint8_t (*removed)[PAPO_KEY_LEN];            /* owned; none for a rotation */
	size_t nkeys;                      /* 1 to FRAME_EPOCH_KEYS_MAX */
	struct frame_epoch_key *keys;      /* owned */
	uint8_t sig[PAPO_SIG_LEN];
};

struct frame {
	enum frame_type type;
	union {
		struct frame_hello hello;
		struct frame_msg msg;
		struct frame_ack ack;
		struct frame_peers peers;
		struct frame_sync sync;
		struct frame_bye bye;
		struct frame_punch punch;
		struct frame_admin admin;
		struct frame_epoch epoch;
	} u;
};

enum frame_err {
	FRAME_OK = 0,
	FRAME_ERR_TOO_BIG,        /* frame over PAPO_FRAME_MAX */
	FRAME_ERR_SEAL,           /* does not open with this room's key */
	FRAME_ERR_UTF8,           /* text that is not valid UTF-8 */
	FRAME_ERR_JSON,           /* not a JSON object */
	FRAME_ERR_TYPE,           /* unknown "t" */
	FRAME_ERR_UNKNOWN_FIELD,
	FRAME_ERR_DUPLICATE_FIELD,
	FRAME_ERR_FIELD_TYPE,     /* a field of the wrong JSON type */
	FRAME_ERR_MISSING_FIELD,
	FRAME_ERR_VALUE,          /* malformed id, address, state, number */
	FRAME_ERR_NAME_LONG,      /* name over PAPO_NAME_MAX bytes */
	FRAME_ERR_ABOUT_LONG,     /* about over PAPO_ABOUT_MAX bytes */
	FRAME_ERR_BODY_LONG,      /* body over PAPO_BODY_MAX bytes */
	FRAME_ERR_TOO_MANY,       /* a list over its limit */
	FRAME_ERR_SIGNATURE,      /* signature does not verify */
	FRAME_ERR_NOMEM,
	FRAME_ERR_SKIPPED,        /* left undecoded: its peek said so */
};

/* Decoding flags: skip signature checks, for the member's own log only;
 * the frame came on a connection of protocol version 2 (or 3), whose
 * fields it may (and, where required, must) carry.  Without FRAME_V2 or
 * FRAME_V3 a decoder takes version 1's fields only, as daemons of
 * version 1 do.  frame_flags gives the flags of a connection's version. */
#define FRAME_TRUSTED 1u
#define FRAME_V2 2u
#define FRAME_V3 4u
/* Opening only: decode without checking signatures, which the caller
 * then does with frame_verify, or vouches for itself. */
#define FRAME_VERIFY_LATER 8u

unsigned frame_flags(unsigned version);

/* Appends f's JSON text to out.  -1 when out's limit or memory runs out,
 * or f breaks a limit (a decoder would refuse what we sent). */
int frame_encode(const struct frame *f, struct buf *out);

/* Decodes len bytes of JSON text into *out (zeroed first).  On any error
 * *out holds nothing to free. */
enum frame_err frame_decode(const struct room_keys *k, const char *json,
    size_t len, unsigned flags, struct frame *out);

/* Appends nonce || ciphertext || tag of f to out. */
int frame_seal(const struct room_keys *k, const struct frame *f, struct buf *out);

/* Opens and decodes one sealed frame (signatures checked); flags as for
 * frame_decode (FRAME_V2). */
enum frame_err frame_open(const struct room_keys *k, const uint8_t *in,
    size_t len, unsigned flags, struct frame *out);

/* Version 3's envelope (docs/PROTOCOL.md, "Key epochs"): the epoch whose
 * key sealed it, in clear, then as frame_seal's; the epoch is also the
 * seal's associated data.  k is that epoch's keys (sec_epoch_keys; the
 * room's own for epoch 0).  The JSON text may be 4 bytes shorter than
 * version 1's: the sealed frame stays within PAPO_FRAME_MAX. */
int frame_seal_epoch(const struct room_keys *k, uint32_t epoch,
    const struct frame *f, struct buf *out);
/* The epoch an envelope names, so the receiver picks its key; -1 when
 * too short to be one. */
int frame_envelope_epoch(const uint8_t *in, size_t len, uint32_t *epoch);
enum frame_err frame_open_epoch(const struct room_keys *k, const uint8_t *in,
    size_t len, unsigned flags, struct frame *out);

/*
 * A look at an opened frame's JSON text before it is decoded: 1 leaves
 * it undecoded (FRAME_ERR_SKIPPED), 0 decodes it.  A receiver drops a
 * copy it already holds this way, without paying for the parse and the
 * signature check.
 */
typedef int frame_peek_fn(const char *json, size_t len, void *arg);
enum frame_err frame_open_epoch_peek(const struct room_keys *k,
    const uint8_t *in, size_t len, unsigned flags, frame_peek_fn *peek,
    void *arg, struct frame *out);

/*
 * The id and author of a msg frame's JSON text, read from the fixed
 * order frame_encode writes ({"t":"msg","id":"…","from":"…"), without
 * decoding it: 1 when the text starts so, else 0 (a text written in
 * another order peeks as nothing, and is decoded in full).  What it
 * reads is not checked: a caller may only use it to skip what it would
 * drop anyway.
 */
int frame_peek_msg(const char *json, size_t len,
    char id[PAPO_MSGID_LEN + 1], char from[PAPO_ID_LEN + 1]);

/* Checks f's signatures (all of them: a peers frame's entries too), as
 * decoding does without FRAME_TRUSTED. */
enum frame_err frame_verify(const struct room_keys *k, const struct frame *f);
/* Signature checks done by this process so far: for tests. */
unsigned long frame_verifies(void);

/* Releases what a frame owns and zeroes it; safe on a zeroed frame. */
void frame_clear(struct frame *f);
/* The same for a message held outside a struct frame. */
void frame_msg_clear(struct frame_msg *m);

/* Sign m or a as id, in the room of k: sets m->from / a->by and sig. */
int frame_msg_sign(struct frame_msg *m, const struct room_keys *k,
    const struct identity *id);
int frame_ack_sign(struct frame_ack *a, const struct room_keys *k,
    const struct identity *id);
int frame_punch_sign(struct frame_punch *p, const struct room_keys *k,
    const struct identity *id);
/* Version 3: sign a member's own entry or bye as id (sets id, has_sig
 * and sig; p->seen and b->ts must be set). */
int frame_peer_sign(struct frame_peer *p, const struct room_keys *k,
    const struct identity *id);
int frame_bye_sign(struct frame_bye *b, const struct room_keys *k,
    const struct identity *id);
int frame_admin_sign(struct frame_admin *a, const struct room_keys *k,
    const struct identity *id);
int frame_epoch_sign(struct frame_epoch *e, const struct room_keys *k,
    const struct identity *id);

/* f as a connection of that version takes it, in *out (which may share
 * f's heap parts: never frame_clear it): version 3's signatures left out
 * for older versions; for version 3, unsigned presence left out (a peers
 * entry, a bye), which only its member can vouch for.  0 when there is
 * something to send, -1 when nothing is left.  v holds the entries of a
 * peers frame (FRAME_PEERS_MAX). */
int frame_for_version(const struct frame *f, unsigned version,
    struct frame *out, struct frame_peer *v);

/* Appends to out the bytes a signature covers (docs/PROTOCOL.md,
 * "Signatures"): those of entry i of a peers frame, else of f itself (i
 * is then 0).  -1 when that carries no signature (or out runs out).  For
 * tests and tools: the codec signs and verifies on its own. */
int frame_signed_input(const struct frame *f, size_t i,
    const struct room_keys *k, struct buf *out);

/* The name of a type ("msg") and of an error, for logs and replies. */
const char *frame_type_name(enum frame_type t);
const char *frame_strerror(enum frame_err e);

#endif
