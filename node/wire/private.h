/*
 * private.h: a private message's body (docs/PROTOCOL.md, "Private
 * messages"): the text and file lines of a message, sealed so that only
 * its author and its addressee open them, carried in an ordinary `msg`
 * frame's body.  Every member stores, signs and forwards that body as
 * it does any other, since the frame is unchanged; only the two ends
 * read it.  A daemon of an older release shows the first line, which
 * says what the message is; as text (not in its dashboard) the sealed
 * line under it too.
 *
 * The body, a line, an empty line, and a Markdown link reference
 * definition without a newline, which a dashboard's Markdown renderer
 * (CommonMark) shows as nothing:
 *
 *   PRIV_HEAD
 *
 *   [papo-private]: <papo-private:1:BASE64URL(nonce (24) ||
 *       XChaCha20-Poly1305(padded))>
 *
 * padded is the inner body (text, then attach.h's file lines) padded to
 * a multiple of PRIV_PAD bytes (ISO/IEC 7816-4, as sodium_pad), so the
 * size seen by others says little of the text's.  The key is the
 * X25519 shared key of the author and the addressee, each taken from
 * their Ed25519 member ids (crypto_box_beforenm: the same from either
 * end, so the author reads its own message after a restart too); the
 * associated data binds it to its frame:
 *
 *   "papo private v1" NUL || room id (16) || message id (10 ASCII)
 *   || from (32) || to (32)
 *
 * so a sealed line copied into another message, room or pair does not
 * open.  Pure: no I/O, no clock; libsodium's calls only.
 */
#ifndef PAPO_PRIVATE_H
#define PAPO_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "node/papo.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

/* The first line, shown as it is by a daemon that cannot open it. */
#define PRIV_HEAD "\xF0\x9F\x94\x92 A private message, sealed to its " \
	"addressee (a papo that knows private messages opens yours)"
#define PRIV_PREFIX "[papo-private]: <papo-private:1:"
#define PRIV_SUFFIX ">"
#define PRIV_PAD 256
/* The protocol version from which a daemon opens private messages. */
#define PRIV_VERSION 5
/* The most an inner body holds: sealed, padded and in base64, it still
 * fits PAPO_BODY_MAX with room to spare. */
#define PRIV_TEXT_MAX (32 * 1024)

enum priv_err {
	PRIV_OK = 0,
	PRIV_NOT_PRIVATE,   /* the body is not of the private form */
	PRIV_NOT_OURS,      /* we are neither its author nor its addressee */
	PRIV_DAMAGED,       /* of the form, but it does not open */
	PRIV_BAD_KEY,       /* an id that is no Ed25519 public key */
	PRIV_TOO_LONG,      /* an inner body over PRIV_TEXT_MAX */
	PRIV_NO_MEMORY,
};

/* Why, in words. */
const char *priv_strerror(enum priv_err e);

/*
 * Seals the inner body in[0..n) from me to member to, for message id in
 * room room_id, and appends the private body to out (whose limit must
 * take PAPO_BODY_MAX).
 */
enum priv_err priv_seal(struct buf *out, const struct identity *me,
    const uint8_t to[PAPO_KEY_LEN], const uint8_t room_id[16],
    const char id[PAPO_MSGID_LEN + 1], const char *in, size_t n);

/* 1 when body[0..n) has the private form (whoever may open it), else 0. */
int priv_is(const char *body, size_t n);

/*
 * Opens a private body of message id from from to to in room room_id,
 * as me (its author or its addressee): appends the inner body to out.
 */
enum priv_err priv_open(struct buf *out, const struct identity *me,
    const uint8_t from[PAPO_KEY_LEN], const uint8_t to[PAPO_KEY_LEN],
    const uint8_t room_id[16], const char id[PAPO_MSGID_LEN + 1],
    const char *body, size_t n);

/*
 * What member me may see of message m of room room_id: PRIV_NOT_PRIVATE,
 * m as it is (no addressee, or a body not of the private form);
 * PRIV_OK, a private message of ours, opened: *view is m with its body
 * the inner body, which inner holds (NUL-terminated; buf_free it); any
 * other, a private message nobody here may read (PRIV_NOT_OURS, or one
 * that does not open): shown to no one.  me NULL: no member; every
 * private message is PRIV_NOT_OURS.
 */
enum priv_err priv_view(const struct identity *me, const uint8_t room_id[16],
    const struct frame_msg *m, struct frame_msg *view, struct buf *inner);

#endif
