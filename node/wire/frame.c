/*
 * frame.c: the frame codec's public face (frame.h, docs/PROTOCOL.md,
 * "Frames"): a frame type's descriptor by its "t", then the engine
 * (frame_desc.c) for JSON text both ways, the checks and the
 * signatures; sealing with XChaCha20-Poly1305 under the room key (and
 * version 3's envelope, which names its key epoch); what each version
 * is sent.  The frame types themselves are declared in their families'
 * files: frame_member.c, frame_msg.c, frame_room.c.
 *
 * Pure: no I/O, no clock, no threads (the nonce comes from libsodium's
 * random generator).
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/utf8.h"
#include "node/wire/frame.h"
#include "node/wire/frame_int.h"

/* Each type's descriptor, by its enum frame_type. */
static const struct frame_desc *const frame_types[] = {
	[FRAME_HELLO] = &frame_hello_desc,
	[FRAME_MSG] = &frame_msg_desc,
	[FRAME_ACK] = &frame_ack_desc,
	[FRAME_PEERS] = &frame_peers_desc,
	[FRAME_SYNC] = &frame_sync_desc,
	[FRAME_BYE] = &frame_bye_desc,
	[FRAME_PUNCH] = &frame_punch_desc,
	[FRAME_ADMIN] = &frame_admin_desc,
	[FRAME_EPOCH] = &frame_epoch_desc,
};
#define FRAME_NTYPES (sizeof(frame_types) / sizeof(frame_types[0]))

static const char *const frame_errors[] = {
	[FRAME_OK] = "ok",
	[FRAME_ERR_TOO_BIG] = "frame larger than 64 KiB",
	[FRAME_ERR_SEAL] = "frame does not open with this room's key",
	[FRAME_ERR_UTF8] = "text that is not valid UTF-8",
	[FRAME_ERR_JSON] = "not a JSON object",
	[FRAME_ERR_TYPE] = "unknown frame type",
	[FRAME_ERR_UNKNOWN_FIELD] = "unknown field",
	[FRAME_ERR_DUPLICATE_FIELD] = "field given twice",
	[FRAME_ERR_FIELD_TYPE] = "field of the wrong type",
	[FRAME_ERR_MISSING_FIELD] = "missing field",
	[FRAME_ERR_VALUE] = "malformed value",
	[FRAME_ERR_NAME_LONG] = "name longer than 64 bytes",
	[FRAME_ERR_ABOUT_LONG] = "about longer than 256 bytes",
	[FRAME_ERR_BODY_LONG] = "body longer than 48 KiB",
	[FRAME_ERR_TOO_MANY] = "list longer than its limit",
	[FRAME_ERR_SIGNATURE] = "signature does not verify",
	[FRAME_ERR_NOMEM] = "out of memory",
	[FRAME_ERR_SKIPPED] = "a copy already held, left unread",
};

unsigned
frame_flags(unsigned version)
{
	return version >= 3 ? FRAME_V3 : version == 2 ? FRAME_V2 : 0;
}

/* The version a decoder's flags say. */
static unsigned
flags_version(unsigned flags)
{
	return (flags & FRAME_V3) ? 3 : (flags & FRAME_V2) ? 2 : 1;
}

/* f's descriptor; NULL for a type that is none. */
static const struct frame_desc *
desc_of(enum frame_type t)
{
	if ((size_t)t == 0 || (size_t)t >= FRAME_NTYPES)
		return NULL;
	return frame_types[t];
}

const char *
frame_type_name(enum frame_type t)
{
	const struct frame_desc *d = desc_of(t);

	return d != NULL ? d->name : "?";
}

const char *
frame_strerror(enum frame_err e)
{
	if ((size_t)e >= sizeof(frame_errors) / sizeof(frame_errors[0]))
		return "unknown error";
	return frame_errors[e];
}

static enum frame_err
frame_check(const struct frame *f)
{
	const struct frame_desc *d = desc_of(f->type);

	return d != NULL ? frame_desc_check(d, &f->u) : FRAME_ERR_TYPE;
}

int
frame_encode(const struct frame *f, struct buf *out)
{
	cJSON *o = NULL;
	char *text = NULL;
	size_t len;
	int rc = -1;

	if (frame_check(f) != FRAME_OK)
		goto out;
	/* Each version's fields: a hello's, its own; the others carry what
	 * is set (frame_for_version leaves out what a version does not). */
	if ((o = cJSON_CreateObject()) == NULL ||
	    frame_desc_to_json(desc_of(f->type), &f->u, FRAME_VERSION,
	    o) == -1)
		goto out;
	if ((text = cJSON_PrintUnformatted(o)) == NULL)
		goto out;
	len = strlen(text);
	if (len > FRAME_JSON_MAX)
		goto out;
	rc = buf_add(out, text, len);
out:
	cJSON_free(text);
	cJSON_Delete(o);
	return rc;
}

/* The strings cJSON hands back are NUL-terminated copies, so a NUL byte
 * inside the raw JSON would silently cut a field short: refuse it, and
 * anything that is not UTF-8, before parsing. */
static enum frame_err
frame_precheck(const char *json, size_t len)
{
	if (len > FRAME_JSON_MAX)
		return FRAME_ERR_TOO_BIG;
	if (memchr(json, '\0', len) != NULL)
		return FRAME_ERR_JSON;
	if (!utf8_valid(json, len))
		return FRAME_ERR_UTF8;
	return FRAME_OK;
}

enum frame_err
frame_decode(const struct room_keys *k, const char *json, size_t len,
    unsigned flags, struct frame *out)
{
	const struct frame_desc *d = NULL;
	const cJSON *c;
	cJSON *o = NULL;
	const char *end = NULL;
	unsigned version = flags_version(flags);
	enum frame_err e;
	size_t i;

	memset(out, 0, sizeof(*out));
	if ((e = frame_precheck(json, len)) != FRAME_OK)
		return e;
	o = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (o == NULL || !cJSON_IsObject(o)) {
		e = FRAME_ERR_JSON;
		goto out;
	}
	/* Nothing but white space may follow the object. */
	for (; end < json + len; end++)
		if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') {
			e = FRAME_ERR_JSON;
			goto out;
		}
	/* The type first: it says which descriptor the rest obeys. */
	if ((c = cJSON_GetObjectItemCaseSensitive(o, "t")) == NULL ||
	    !cJSON_IsString(c)) {
		e = c == NULL ? FRAME_ERR_MISSING_FIELD : FRAME_ERR_FIELD_TYPE;
		goto out;
	}
	for (i = 1; i < FRAME_NTYPES; i++)
		if (strcmp(c->valuestring, frame_types[i]->name) == 0)
			break;
	/* A type of a later version is unknown to an earlier one. */
	if (i == FRAME_NTYPES || frame_types[i]->since > version) {
		e = FRAME_ERR_TYPE;
		goto out;
	}
	out->type = (enum frame_type)i;
	d = frame_types[i];
	if ((e = frame_desc_decode(d, o, version, &out->u)) != FRAME_OK)
		goto out;
	if ((e = frame_desc_check(d, &out->u)) != FRAME_OK)
		goto out;
	if (!(flags & FRAME_TRUSTED))
		e = frame_desc_verify(d, &out->u, k);
out:
	cJSON_Delete(o);
	if (e != FRAME_OK)
		frame_clear(out);
	return e;
}

/* Seals f after the len bytes of hdr (the envelope's clear header, also
 * authenticated as associated data so that it cannot be changed). */
static int
frame_seal_ad(const struct room_keys *k, const uint8_t *hdr, size_t hlen,
    const struct frame *f, struct buf *out)
{
	struct buf plain;
	uint8_t *sealed;
	unsigned long long clen;
	int rc = -1;

	buf_init(&plain, FRAME_JSON_MAX);
	if (frame_encode(f, &plain) == -1)
		goto out;
	/* Over the limit a receiver would refuse it: version 3's header
	 * takes 4 bytes of what the JSON text may use. */
	if (hlen + FRAME_SEAL_OVERHEAD + plain.len > PAPO_FRAME_MAX)
		goto out;
	if ((sealed = buf_reserve(out, hlen + FRAME_NONCE_LEN + plain.len +
	    FRAME_TAG_LEN)) == NULL)
		goto out;
	if (hlen > 0)
		memcpy(sealed, hdr, hlen);
	sealed += hlen;
	randombytes_buf(sealed, FRAME_NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(sealed + FRAME_NONCE_LEN,
	    &clen, plain.p, plain.len, hlen > 0 ? hdr : NULL, hlen, NULL,
	    sealed, k->seal);
	rc = 0;
out:
	if (plain.p != NULL)
		sodium_memzero(plain.p, plain.cap);
	buf_free(&plain);
	return rc;
}

int
frame_seal(const struct room_keys *k, const struct frame *f, struct buf *out)
{
	return frame_seal_ad(k, NULL, 0, f, out);
}

int
frame_seal_epoch(const struct room_keys *k, uint32_t epoch,
    const struct frame *f, struct buf *out)
{
	uint8_t hdr[FRAME_EPOCH_LEN];

	hdr[0] = (uint8_t)(epoch >> 24);
	hdr[1] = (uint8_t)(epoch >> 16);
	hdr[2] = (uint8_t)(epoch >> 8);
	hdr[3] = (uint8_t)epoch;
	return frame_seal_ad(k, hdr, sizeof(hdr), f, out);
}

int
frame_envelope_epoch(const uint8_t *in, size_t len, uint32_t *epoch)
{
	if (len < FRAME_EPOCH_LEN + FRAME_SEAL_OVERHEAD)
		return -1;
	*epoch = (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 |
	    (uint32_t)in[2] << 8 | in[3];
	return 0;
}

static enum frame_err
frame_open_ad(const struct room_keys *k, size_t hlen, const uint8_t *in,
    size_t len, unsigned flags, frame_peek_fn *peek, void *arg,
    struct frame *out)
{
	uint8_t *plain = NULL;
	unsigned long long plen;
	/* Only the log of a member's own writing is trusted; a frame from
	 * the net is checked now, or later by a caller that asked to. */
	unsigned dflags = flags & (FRAME_V2 | FRAME_V3);
	enum frame_err e;

	memset(out, 0, sizeof(*out));
	if (len > PAPO_FRAME_MAX)
		return FRAME_ERR_TOO_BIG;
	if (len < hlen + FRAME_SEAL_OVERHEAD)
		return FRAME_ERR_SEAL;
	if ((plain = malloc(len)) == NULL)
		return FRAME_ERR_NOMEM;
	if (flags & FRAME_VERIFY_LATER)
		dflags |= FRAME_TRUSTED;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL,
	    in + hlen + FRAME_NONCE_LEN, len - hlen - FRAME_NONCE_LEN,
	    hlen > 0 ? in : NULL, hlen, in + hlen, k->seal) != 0)
		e = FRAME_ERR_SEAL;
	else if (peek != NULL && peek((const char *)plain, (size_t)plen, arg))
		e = FRAME_ERR_SKIPPED;
	else
		e = frame_decode(k, (const char *)plain, (size_t)plen, dflags,
		    out);
	free(plain);
	return e;
}

enum frame_err
frame_open(const struct room_keys *k, const uint8_t *in, size_t len,
    unsigned flags, struct frame *out)
{
	return frame_open_ad(k, 0, in, len, flags & ~FRAME_VERIFY_LATER, NULL,
	    NULL, out);
}

enum frame_err
frame_open_epoch(const struct room_keys *k, const uint8_t *in, size_t len,
    unsigned flags, struct frame *out)
{
	return frame_open_ad(k, FRAME_EPOCH_LEN, in, len,
	    flags & ~FRAME_VERIFY_LATER, NULL, NULL, out);
}

enum frame_err
frame_open_epoch_peek(const struct room_keys *k, const uint8_t *in,
    size_t len, unsigned flags, frame_peek_fn *peek, void *arg,
    struct frame *out)
{
	return frame_open_ad(k, FRAME_EPOCH_LEN, in, len, flags, peek, arg,
	    out);
}

int
frame_peek_msg(const char *json, size_t len, char id[PAPO_MSGID_LEN + 1],
    char from[PAPO_ID_LEN + 1])
{
	static const char pre[] = "{\"t\":\"msg\",\"id\":\"";
	static const char mid[] = "\",\"from\":\"";
	size_t pl = sizeof(pre) - 1, ml = sizeof(mid) - 1;
	size_t at = pl + PAPO_MSGID_LEN;

	if (len < at + ml + PAPO_ID_LEN + 1 || memcmp(json, pre, pl) != 0 ||
	    memcmp(json + at, mid, ml) != 0 ||
	    json[at + ml + PAPO_ID_LEN] != '"')
		return 0;
	memcpy(id, json + pl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	memcpy(from, json + at + ml, PAPO_ID_LEN);
	from[PAPO_ID_LEN] = '\0';
	return 1;
}

enum frame_err
frame_verify(const struct room_keys *k, const struct frame *f)
{
	const struct frame_desc *d = desc_of(f->type);

	return d != NULL ? frame_desc_verify(d, &f->u, k) : FRAME_ERR_TYPE;
}

void
frame_clear(struct frame *f)
{
	const struct frame_desc *d = desc_of(f->type);

	if (d != NULL)
		frame_desc_free(d, &f->u);
	memset(f, 0, sizeof(*f));
}

int
frame_signed_input(const struct frame *f, size_t i,
    const struct room_keys *k, struct buf *out)
{
	const struct frame_desc *d = desc_of(f->type);

	return d != NULL ? frame_desc_signed_at(d, &f->u, i, k, out) : -1;
}

int
frame_for_version(const struct frame *f, unsigned version, struct frame *out,
    struct frame_peer *v)
{
	const struct frame_desc *d = desc_of(f->type);

	*out = *f;
	if (d == NULL)
		return 0;
	return frame_desc_for_version(d, &out->u, version, v);
}
