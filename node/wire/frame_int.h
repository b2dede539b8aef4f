/*
 * frame_int.h: the frame module's private header (frame.c, frame_desc.c
 * and the family files frame_msg.c, frame_member.c, frame_room.c).
 *
 * A frame type is declared once, by a descriptor: its "t", the protocol
 * version it appears in, and its fields in the order of its JSON text,
 * each with its JSON name, kind, place in the struct, the version that
 * brings it, whether it may be absent, and its place in the signed
 * input (docs/PROTOCOL.md, "Frames" and "Signatures").  The engine in
 * frame_desc.c encodes, decodes, checks, signs and verifies any
 * descriptor's struct; nothing in it names a frame type.  An object
 * nested in a frame (a peers entry, an epoch's key) has a descriptor of
 * its own, with no "t".
 */
#ifndef PAPO_FRAME_INT_H
#define PAPO_FRAME_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "lib/buf.h"
#include "node/wire/frame.h"

/* What a field holds, which says its JSON type, how it is checked and
 * how it is written into a signed input. */
enum frame_kind {
	FK_KEY = 1,     /* uint8_t[PAPO_KEY_LEN]: a member id, base32 */
	FK_MSGID,       /* char[PAPO_MSGID_LEN + 1]: a message id */
	FK_TEXT,        /* char[max + 1], NUL-terminated UTF-8 */
	FK_BODY,        /* char *, owned, its length at n_off (size_t) */
	FK_U64,         /* uint64_t: a JSON number up to 2^53 */
	FK_U32,         /* uint32_t: the same, up to 2^32 - 1 */
	FK_VERSION,     /* uint32_t "v": the connection's version, exactly */
	FK_FLAG,        /* int: the number 1, or absent (FF_NONZERO) */
	FK_ENUM,        /* an enum (int-sized): one of names[1..] */
	FK_ADDR,        /* struct addr, "host:port" */
	FK_ADDRS,       /* struct addr[PAPO_ADDR_MAX], count at n_off */
	FK_SIG,         /* uint8_t[PAPO_SIG_LEN], base64url */
	FK_BOX,         /* uint8_t[SEC_BOX_LEN], base64url */
	FK_LIST,        /* owned array of elem (or of sub objects), count
	                 * at n_off (size_t), at most max */
};

/* Field flags. */
#define FF_OPTIONAL 1u   /* a decoder takes it absent */
#define FF_HAS 2u        /* sent when the int at has_off is set; a
                          * decoder sets it when present */
#define FF_NONZERO 4u    /* sent when its value is not 0 */
#define FF_PRINTABLE 8u  /* text: printable (utf8_printable) */
#define FF_NONEMPTY 16u  /* text: not "" */
#define FF_FILTER 32u    /* list: entries a version cannot carry are left
                          * out (frame_for_version); none left, nothing
                          * to send */

struct frame_desc;

struct frame_field {
	const char *name;              /* its JSON key */
	enum frame_kind kind;
	size_t off;                    /* of the value in the struct */
	unsigned since;                /* the version that brings it (0: 1) */
	unsigned flags;                /* FF_* */
	size_t has_off;                /* FF_HAS: of its int flag */
	size_t n_off;                  /* FK_BODY: of its length; FK_ADDRS,
	                                * FK_LIST: of its count (size_t) */
	size_t max;                    /* FK_TEXT, FK_BODY: bytes; FK_LIST:
	                                * entries */
	enum frame_err too_long;       /* FK_TEXT: the error over max */
	const char *const *names;      /* FK_ENUM: names[value], NULL-ended,
	                                * names[0] NULL */
	enum frame_kind elem;          /* FK_LIST: FK_KEY, FK_MSGID, or 0
	                                * for objects of sub */
	size_t elem_size;              /* FK_LIST: bytes of one entry */
	const struct frame_desc *sub;  /* FK_LIST of objects */
	unsigned sig;                  /* its place in the signed input, 1
	                                * first; 0 when not signed */
	unsigned sig_width;            /* there: bytes of an integer, or of
	                                * the length or count before a text
	                                * or list (FK_BODY, FK_TEXT, FK_ADDRS,
	                                * FK_LIST); an FF_OPTIONAL field is
	                                * preceded by a byte 1 or 0 */
};

struct frame_desc {
	const char *name;              /* its "t"; NULL for a nested object */
	unsigned since;                /* the version that brings it (0: 1) */
	const struct frame_field *fields;   /* in the JSON text's order */
	size_t nfields;
	/* The signature, when it has one: the label that starts its signed
	 * input (with its NUL), the key field that signs and the FK_SIG
	 * field; sign_checked when it is checked before it is signed. */
	const char *label;
	size_t label_len;
	int signer, sig;               /* field indexes */
	int sign_checked;
	/* What the fields' own checks cannot say (NULL when nothing). */
	enum frame_err (*check)(const void *obj);
};

#define FRAME_FIELDS(a) (a), (sizeof(a) / sizeof((a)[0]))
#define FRAME_LABEL(s) (s), sizeof(s)

/* The engine (frame_desc.c).  obj is the struct d describes; version
 * the protocol version, 1 to FRAME_VERSION. */

/* The limits a decoder enforces, so an encoder never sends what the
 * other side would refuse. */
enum frame_err frame_desc_check(const struct frame_desc *d, const void *obj);
/* Adds obj's fields to o, as version (or the version obj names, a
 * hello's) carries them.  -1 when memory runs out. */
int frame_desc_to_json(const struct frame_desc *d, const void *obj,
    unsigned version, cJSON *o);
/* Decodes the JSON object c, which must carry exactly version's fields
 * (and "t" when d has a name), into the zeroed obj; on error obj may
 * hold heap parts for frame_desc_free. */
enum frame_err frame_desc_decode(const struct frame_desc *d, const cJSON *c,
    unsigned version, void *obj);
/* Appends the bytes obj's signature covers in the room of k; -1 when d
 * is not signed or b's limit runs out. */
int frame_desc_signed(const struct frame_desc *d, const void *obj,
    const struct room_keys *k, struct buf *b);
/* Appends the bytes signature i of obj covers: its own (i is 0), or
 * that of entry i of its list of objects signed on their own (a peers
 * frame's); -1 when it carries no such signature. */
int frame_desc_signed_at(const struct frame_desc *d, const void *obj, size_t i,
    const struct room_keys *k, struct buf *b);
/* Signs obj as id: sets its signer field, its signature (and the flag
 * saying it has one). */
int frame_desc_sign(const struct frame_desc *d, void *obj,
    const struct room_keys *k, const struct identity *id);
/* FRAME_OK when every signature obj carries (its own, its nested
 * objects') verifies, else FRAME_ERR_SIGNATURE. */
enum frame_err frame_desc_verify(const struct frame_desc *d, const void *obj,
    const struct room_keys *k);
/* Leaves out of obj what version does not carry; -1 when what is left
 * cannot be sent (a field version requires has no value).  An FF_FILTER
 * list's entries go to v (its max entries), obj then pointing there. */
int frame_desc_for_version(const struct frame_desc *d, void *obj,
    unsigned version, void *v);
/* Releases obj's heap parts (not obj) and zeroes their pointers. */
void frame_desc_free(const struct frame_desc *d, void *obj);

/* The families' descriptors, by frame type. */
extern const struct frame_desc frame_hello_desc, frame_peers_desc,
    frame_bye_desc, frame_punch_desc;                 /* frame_member.c */
extern const struct frame_desc frame_msg_desc, frame_ack_desc,
    frame_sync_desc;                                  /* frame_msg.c */
extern const struct frame_desc frame_admin_desc,
    frame_epoch_desc;                                 /* frame_room.c */
/* A peers frame's entry, signed on its own (frame_member.c). */
extern const struct frame_desc frame_peer_desc;

#endif
