/*
 * frame.c: the wire codec of docs/PROTOCOL.md, "Frames": typed frames to
 * JSON (cJSON) and back, sealing with XChaCha20-Poly1305 under the room
 * key, and the Ed25519 signatures of msg, ack and punch frames and of
 * version 3's presence (peers entries, bye).
 *
 * Pure: no I/O, no clock, no threads (the nonce comes from libsodium's
 * random generator).  Decoding is strict: every field of every type is
 * listed in a table, and a frame with an unknown, duplicated, mistyped or
 * missing field, invalid UTF-8, or a value over its limit is refused with
 * a typed error before anything is allocated for it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/b32.h"
#include "lib/utf8.h"
#include "node/wire/frame.h"

/* The largest integer a JSON number carries exactly (2^53). */
#define FRAME_INT_MAX 9007199254740992.0
#define FRAME_SIG_B64_LEN 86   /* 64 bytes, base64url without padding */
#define FRAME_BOX_B64_LEN 107  /* SEC_BOX_LEN (80), the same */
#define FRAME_SIG_INPUT_MAX (PAPO_BODY_MAX + 512)

/* Field tables: every field a frame type may carry, its JSON type, and
 * whether it must be present.  Up to FIELDS_MAX fields per object. */
#define FIELDS_MAX 12
enum ftype { F_STRING, F_NUMBER, F_ARRAY };

struct field {
	const char *name;
	enum ftype type;
	int required;
};

static const struct field hello_fields[] = {
	{ "t", F_STRING, 1 }, { "v", F_NUMBER, 1 }, { "id", F_STRING, 1 },
	{ "name", F_STRING, 1 }, { "about", F_STRING, 1 },
	{ "addrs", F_ARRAY, 1 }, { "msgs", F_NUMBER, 1 },
	{ "digest", F_STRING, 1 }, { NULL, 0, 0 }
};
/* Version 2's hello: the same, and where the sender sees the receiver. */
static const struct field hello2_fields[] = {
	{ "t", F_STRING, 1 }, { "v", F_NUMBER, 1 }, { "id", F_STRING, 1 },
	{ "name", F_STRING, 1 }, { "about", F_STRING, 1 },
	{ "addrs", F_ARRAY, 1 }, { "msgs", F_NUMBER, 1 },
	{ "digest", F_STRING, 1 }, { "obs", F_STRING, 1 }, { NULL, 0, 0 }
};
/* Version 3's: also the owner as the sender knows it (optional) and how
 * many admin grants it holds. */
static const struct field hello3_fields[] = {
	{ "t", F_STRING, 1 }, { "v", F_NUMBER, 1 }, { "id", F_STRING, 1 },
	{ "name", F_STRING, 1 }, { "about", F_STRING, 1 },
	{ "addrs", F_ARRAY, 1 }, { "msgs", F_NUMBER, 1 },
	{ "digest", F_STRING, 1 }, { "obs", F_STRING, 1 },
	{ "owner", F_STRING, 0 }, { "events", F_NUMBER, 1 },
	{ "epoch", F_NUMBER, 0 }, { NULL, 0, 0 }
};
static const struct field msg_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { "from", F_STRING, 1 },
	{ "name", F_STRING, 1 }, { "ts", F_NUMBER, 1 },
	{ "body", F_STRING, 1 }, { "to", F_STRING, 0 },
	{ "reply_to", F_STRING, 0 }, { "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
/* Version 3's: a person's message is marked (msg_fields' order, then). */
static const struct field msg3_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { "from", F_STRING, 1 },
	{ "name", F_STRING, 1 }, { "ts", F_NUMBER, 1 },
	{ "body", F_STRING, 1 }, { "to", F_STRING, 0 },
	{ "reply_to", F_STRING, 0 }, { "sig", F_STRING, 1 },
	{ "person", F_NUMBER, 0 }, { NULL, 0, 0 }
};
static const struct field ack_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { "by", F_STRING, 1 },
	{ "state", F_STRING, 1 }, { "ts", F_NUMBER, 1 },
	{ "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field peers_fields[] = {
	{ "t", F_STRING, 1 }, { "members", F_ARRAY, 1 }, { NULL, 0, 0 }
};
static const struct field peer_fields[] = {
	{ "id", F_STRING, 1 }, { "name", F_STRING, 1 },
	{ "about", F_STRING, 1 }, { "addrs", F_ARRAY, 1 },
	{ "seen", F_NUMBER, 1 }, { NULL, 0, 0 }
};
static const struct field sync_fields[] = {
	{ "t", F_STRING, 1 }, { "since", F_NUMBER, 1 },
	{ "have", F_ARRAY, 1 }, { NULL, 0, 0 }
};
/* Version 3's presence is signed by the member it is about. */
static const struct field peer3_fields[] = {
	{ "id", F_STRING, 1 }, { "name", F_STRING, 1 },
	{ "about", F_STRING, 1 }, { "addrs", F_ARRAY, 1 },
	{ "seen", F_NUMBER, 1 }, { "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field bye_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field bye3_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { "ts", F_NUMBER, 1 },
	{ "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field admin_fields[] = {
	{ "t", F_STRING, 1 }, { "id", F_STRING, 1 }, { "by", F_STRING, 1 },
	{ "ts", F_NUMBER, 1 }, { "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field epoch_fields[] = {
	{ "t", F_STRING, 1 }, { "n", F_NUMBER, 1 }, { "by", F_STRING, 1 },
	{ "ts", F_NUMBER, 1 }, { "removed", F_ARRAY, 1 },
	{ "keys", F_ARRAY, 1 }, { "sig", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field epoch_key_fields[] = {
	{ "id", F_STRING, 1 }, { "box", F_STRING, 1 }, { NULL, 0, 0 }
};
static const struct field punch_fields[] = {
	{ "t", F_STRING, 1 }, { "from", F_STRING, 1 }, { "to", F_STRING, 1 },
	{ "phase", F_STRING, 1 }, { "n", F_NUMBER, 1 }, { "ts", F_NUMBER, 1 },
	{ "addrs", F_ARRAY, 1 }, { "sig", F_STRING, 1 }, { NULL, 0, 0 }
};

/* Each field's place in its table, for the decoders. */
enum { HELLO_T, HELLO_V, HELLO_ID, HELLO_NAME, HELLO_ABOUT, HELLO_ADDRS,
	HELLO_MSGS, HELLO_DIGEST, HELLO_OBS, HELLO_OWNER, HELLO_EVENTS,
	HELLO_EPOCH };
enum { MSG_T, MSG_ID, MSG_FROM, MSG_NAME, MSG_TS, MSG_BODY, MSG_TO,
	MSG_REPLY_TO, MSG_SIG, MSG_PERSON };
enum { ACK_T, ACK_ID, ACK_BY, ACK_STATE, ACK_TS, ACK_SIG };
enum { PEERS_T, PEERS_MEMBERS };
enum { PEER_ID, PEER_NAME, PEER_ABOUT, PEER_ADDRS, PEER_SEEN, PEER_SIG };
enum { SYNC_T, SYNC_SINCE, SYNC_HAVE };
enum { BYE_T, BYE_ID, BYE_TS, BYE_SIG };
enum { ADMIN_T, ADMIN_ID, ADMIN_BY, ADMIN_TS, ADMIN_SIG };
enum { EPOCH_T, EPOCH_N, EPOCH_BY, EPOCH_TS, EPOCH_REMOVED, EPOCH_KEYS,
	EPOCH_SIG };
enum { EKEY_ID, EKEY_BOX };
enum { PUNCH_T, PUNCH_FROM, PUNCH_TO, PUNCH_PHASE, PUNCH_N, PUNCH_TS,
	PUNCH_ADDRS, PUNCH_SIG };

/* Each type's table per version, 1 to FRAME_VERSION; NULL where it is
 * the same as in the version before, or, in version 1, where the type
 * does not exist yet.  A version's decoder takes only its own fields
 * (a peers entry's: decode_peers). */
static const struct {
	const char *name;
	const struct field *fields[FRAME_VERSION];
} frame_types[] = {
	[FRAME_HELLO] = { "hello", { hello_fields, hello2_fields,
	    hello3_fields } },
	[FRAME_MSG] = { "msg", { msg_fields, NULL, msg3_fields } },
	[FRAME_ACK] = { "ack", { ack_fields, NULL, NULL } },
	[FRAME_PEERS] = { "peers", { peers_fields, NULL, NULL } },
	[FRAME_SYNC] = { "sync", { sync_fields, NULL, NULL } },
	[FRAME_BYE] = { "bye", { bye_fields, NULL, bye3_fields } },
	[FRAME_PUNCH] = { "punch", { NULL, punch_fields, NULL } },
	[FRAME_ADMIN] = { "admin", { NULL, NULL, admin_fields } },
	[FRAME_EPOCH] = { "epoch", { NULL, NULL, epoch_fields } },
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

const char *
frame_type_name(enum frame_type t)
{
	if ((size_t)t == 0 || (size_t)t >= FRAME_NTYPES)
		return "?";
	return frame_types[t].name;
}

const char *
frame_strerror(enum frame_err e)
{
	if ((size_t)e >= sizeof(frame_errors) / sizeof(frame_errors[0]))
		return "unknown error";
	return frame_errors[e];
}

/* Signatures: over a fixed binary layout of the fields, prefixed with a
 * label per frame type and the room id, so a signature is valid for one
 * kind of frame in one room only, and re-encoding the JSON (other key
 * order, other escapes) never breaks it. */
static int
frame_msg_signed(const struct frame_msg *m, const struct room_keys *k,
    struct buf *b)
{
	size_t nlen = strlen(m->name);

	buf_add(b, "papo msg v1", 12);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, m->id, PAPO_MSGID_LEN);
	buf_add(b, m->from, 32);
	buf_u64(b, m->ts);
	buf_u8(b, (uint8_t)nlen);
	buf_add(b, m->name, nlen);
	buf_u8(b, m->has_to ? 1 : 0);
	if (m->has_to)
		buf_add(b, m->to, 32);
	buf_u8(b, m->has_reply_to ? 1 : 0);
	if (m->has_reply_to)
		buf_add(b, m->reply_to, PAPO_MSGID_LEN);
	buf_u32(b, (uint32_t)m->body_len);
	buf_add(b, m->body, m->body_len);
	return b->toobig ? -1 : 0;
}

static int
frame_punch_signed(const struct frame_punch *p, const struct room_keys *k,
    struct buf *b)
{
	buf_add(b, "papo punch v2", 14);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, p->from, 32);
	buf_add(b, p->to, 32);
	buf_u8(b, (uint8_t)p->phase);
	buf_u64(b, p->n);
	buf_u64(b, p->ts);
	buf_u8(b, (uint8_t)p->naddr);
	for (size_t i = 0; i < p->naddr && i < PAPO_ADDR_MAX; i++) {
		buf_u8(b, p->addr[i].family);
		buf_add(b, p->addr[i].ip, p->addr[i].family == 4 ? 4 : 16);
		buf_u8(b, (uint8_t)(p->addr[i].port >> 8));
		buf_u8(b, (uint8_t)p->addr[i].port);
	}
	return b->toobig ? -1 : 0;
}

static void
signed_addrs(struct buf *b, const struct addr *a, size_t n)
{
	buf_u8(b, (uint8_t)n);
	for (size_t i = 0; i < n && i < PAPO_ADDR_MAX; i++) {
		buf_u8(b, a[i].family);
		buf_add(b, a[i].ip, a[i].family == 4 ? 4 : 16);
		buf_u16(b, a[i].port);
	}
}

/* Version 3: everything a member says of itself, with its counter. */
static int
frame_peer_signed(const struct frame_peer *p, const struct room_keys *k,
    struct buf *b)
{
	size_t nlen = strlen(p->name), alen = strlen(p->about);

	buf_add(b, "papo peer v3", 13);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, p->id, 32);
	buf_u64(b, p->seen);
	buf_u8(b, (uint8_t)nlen);
	buf_add(b, p->name, nlen);
	buf_u16(b, (uint16_t)alen);
	buf_add(b, p->about, alen);
	signed_addrs(b, p->addr, p->naddr);
	return b->toobig ? -1 : 0;
}

static int
frame_bye_signed(const struct frame_bye *y, const struct room_keys *k,
    struct buf *b)
{
	buf_add(b, "papo bye v3", 12);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, y->id, 32);
	buf_u64(b, y->ts);
	return b->toobig ? -1 : 0;
}

static int
frame_admin_signed(const struct frame_admin *a, const struct room_keys *k,
    struct buf *b)
{
	buf_add(b, "papo admin v3", 14);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, a->id, 32);
	buf_add(b, a->by, 32);
	buf_u64(b, a->ts);
	return b->toobig ? -1 : 0;
}

static int
frame_epoch_signed(const struct frame_epoch *e, const struct room_keys *k,
    struct buf *b)
{
	buf_add(b, "papo epoch v3", 14);
	buf_add(b, k->id, sizeof(k->id));
	buf_u32(b, (uint32_t)e->n);
	buf_add(b, e->by, 32);
	buf_u64(b, e->ts);
	buf_u16(b, (uint16_t)e->nremoved);
	for (size_t i = 0; i < e->nremoved; i++)
		buf_add(b, e->removed[i], 32);
	buf_u16(b, (uint16_t)e->nkeys);
	for (size_t i = 0; i < e->nkeys; i++) {
		buf_add(b, e->keys[i].id, 32);
		buf_add(b, e->keys[i].box, SEC_BOX_LEN);
	}
	return b->toobig ? -1 : 0;
}

static int
frame_ack_signed(const struct frame_ack *a, const struct room_keys *k,
    struct buf *b)
{
	buf_add(b, "papo ack v1", 12);
	buf_add(b, k->id, sizeof(k->id));
	buf_add(b, a->id, PAPO_MSGID_LEN);
	buf_add(b, a->by, 32);
	buf_u8(b, (uint8_t)a->state);
	buf_u64(b, a->ts);
	return b->toobig ? -1 : 0;
}

/* Checks the limits a decoder enforces, so that an encoder never sends
 * what the other side would refuse. */
static enum frame_err
frame_check_text(const char *s, size_t max, enum frame_err too_long,
    int printable)
{
	size_t n = strlen(s);

	if (n > max)
		return too_long;
	if (!utf8_valid(s, n))
		return FRAME_ERR_UTF8;
	if (printable && !utf8_printable(s, n))
		return FRAME_ERR_VALUE;
	return FRAME_OK;
}

static enum frame_err
frame_check_person(const char *name, const char *about)
{
	enum frame_err e;

	if (name[0] == '\0')
		return FRAME_ERR_VALUE;
	if ((e = frame_check_text(name, PAPO_NAME_MAX, FRAME_ERR_NAME_LONG, 1)))
		return e;
	return frame_check_text(about, PAPO_ABOUT_MAX, FRAME_ERR_ABOUT_LONG, 1);
}

/* An epoch names each member once: given a key or removed, not both. */
static enum frame_err
frame_check_epoch(const struct frame_epoch *e)
{
	if (e->nkeys > FRAME_EPOCH_KEYS_MAX ||
	    e->nremoved > FRAME_EPOCH_REMOVED_MAX)
		return FRAME_ERR_TOO_MANY;
	if (e->n == 0 || e->n > UINT32_MAX || e->nkeys == 0)
		return FRAME_ERR_VALUE;
	for (size_t i = 0; i < e->nkeys; i++) {
		for (size_t j = 0; j < i; j++)
			if (memcmp(e->keys[i].id, e->keys[j].id, 32) == 0)
				return FRAME_ERR_VALUE;
		for (size_t j = 0; j < e->nremoved; j++)
			if (memcmp(e->keys[i].id, e->removed[j], 32) == 0)
				return FRAME_ERR_VALUE;
	}
	for (size_t i = 0; i < e->nremoved; i++)
		for (size_t j = 0; j < i; j++)
			if (memcmp(e->removed[i], e->removed[j], 32) == 0)
				return FRAME_ERR_VALUE;
	return FRAME_OK;
}

static enum frame_err
frame_check(const struct frame *f)
{
	const struct frame_msg *m = &f->u.msg;
	enum frame_err e;

	switch (f->type) {
	case FRAME_HELLO:
		if (f->u.hello.naddr > PAPO_ADDR_MAX)
			return FRAME_ERR_TOO_MANY;
		return frame_check_person(f->u.hello.name, f->u.hello.about);
	case FRAME_MSG:
		if (!sec_msgid_valid(m->id, NULL) ||
		    (m->has_reply_to && !sec_msgid_valid(m->reply_to, NULL)) ||
		    m->body == NULL || strlen(m->body) != m->body_len)
			return FRAME_ERR_VALUE;
		if (m->body_len > PAPO_BODY_MAX)
			return FRAME_ERR_BODY_LONG;
		if (!utf8_valid(m->body, m->body_len))
			return FRAME_ERR_UTF8;
		if ((e = frame_check_text(m->name, PAPO_NAME_MAX,
		    FRAME_ERR_NAME_LONG, 1)) != FRAME_OK)
			return e;
		return m->name[0] == '\0' ? FRAME_ERR_VALUE : FRAME_OK;
	case FRAME_ACK:
		if (!sec_msgid_valid(f->u.ack.id, NULL) ||
		    (f->u.ack.state != ACK_DELIVERED && f->u.ack.state != ACK_READ))
			return FRAME_ERR_VALUE;
		return FRAME_OK;
	case FRAME_PUNCH:
		if (f->u.punch.naddr > PAPO_ADDR_MAX)
			return FRAME_ERR_TOO_MANY;
		if ((f->u.punch.phase != PUNCH_ASK &&
		    f->u.punch.phase != PUNCH_READY) || f->u.punch.n == 0 ||
		    f->u.punch.n > 3)
			return FRAME_ERR_VALUE;
		return FRAME_OK;
	case FRAME_PEERS:
		if (f->u.peers.n > FRAME_PEERS_MAX)
			return FRAME_ERR_TOO_MANY;
		for (size_t i = 0; i < f->u.peers.n; i++) {
			const struct frame_peer *p = &f->u.peers.v[i];

			if (p->naddr > PAPO_ADDR_MAX)
				return FRAME_ERR_TOO_MANY;
			if ((e = frame_check_person(p->name, p->about)))
				return e;
		}
		return FRAME_OK;
	case FRAME_SYNC:
		if (f->u.sync.n > FRAME_SYNC_MAX)
			return FRAME_ERR_TOO_MANY;
		for (size_t i = 0; i < f->u.sync.n; i++)
			if (!sec_msgid_valid(f->u.sync.have[i], NULL))
				return FRAME_ERR_VALUE;
		return FRAME_OK;
	case FRAME_BYE:
	case FRAME_ADMIN:
		return FRAME_OK;
	case FRAME_EPOCH:
		return frame_check_epoch(&f->u.epoch);
	}
	return FRAME_ERR_TYPE;
}

/* Encoding. */

static int
json_key32(cJSON *o, const char *name, const uint8_t k[32])
{
	char text[PAPO_ID_LEN + 1];

	b32_encode(k, 32, text);
	return cJSON_AddStringToObject(o, name, text) == NULL ? -1 : 0;
}

static int
json_addrs(cJSON *o, const struct addr *a, size_t n)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "addrs");

	if (arr == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char text[ADDR_STRLEN];
		cJSON *s;

		addr_format(&a[i], text);
		if ((s = cJSON_CreateString(text)) == NULL)
			return -1;
		cJSON_AddItemToArray(arr, s);
	}
	return 0;
}

static int
json_sig(cJSON *o, const uint8_t sig[64])
{
	char text[FRAME_SIG_B64_LEN + 1];

	sodium_bin2base64(text, sizeof(text), sig, 64,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return cJSON_AddStringToObject(o, "sig", text) == NULL ? -1 : 0;
}

static int
json_num(cJSON *o, const char *name, uint64_t v)
{
	return cJSON_AddNumberToObject(o, name, (double)v) == NULL ? -1 : 0;
}

static int
json_str(cJSON *o, const char *name, const char *v)
{
	return cJSON_AddStringToObject(o, name, v) == NULL ? -1 : 0;
}

static int
epoch_to_json(const struct frame_epoch *e, cJSON *o)
{
	cJSON *rm, *ks;
	int r = 0;

	r |= json_num(o, "n", e->n);
	r |= json_key32(o, "by", e->by);
	r |= json_num(o, "ts", e->ts);
	if ((rm = cJSON_AddArrayToObject(o, "removed")) == NULL ||
	    (ks = cJSON_AddArrayToObject(o, "keys")) == NULL)
		return -1;
	for (size_t i = 0; i < e->nremoved; i++) {
		char text[PAPO_ID_LEN + 1];
		cJSON *s;

		b32_encode(e->removed[i], 32, text);
		if ((s = cJSON_CreateString(text)) == NULL)
			return -1;
		cJSON_AddItemToArray(rm, s);
	}
	for (size_t i = 0; i < e->nkeys; i++) {
		char box[FRAME_BOX_B64_LEN + 1];
		cJSON *k = cJSON_CreateObject();

		if (k == NULL)
			return -1;
		cJSON_AddItemToArray(ks, k);
		r |= json_key32(k, "id", e->keys[i].id);
		sodium_bin2base64(box, sizeof(box), e->keys[i].box, SEC_BOX_LEN,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		r |= json_str(k, "box", box);
	}
	r |= json_sig(o, e->sig);
	return r;
}

static int
frame_to_json(const struct frame *f, cJSON *o)
{
	int r = json_str(o, "t", frame_type_name(f->type));

	switch (f->type) {
	case FRAME_HELLO: {
		const struct frame_hello *h = &f->u.hello;

		r |= json_num(o, "v", h->version);
		r |= json_key32(o, "id", h->id);
		r |= json_str(o, "name", h->name);
		r |= json_str(o, "about", h->about);
		r |= json_addrs(o, h->addr, h->naddr);
		r |= json_num(o, "msgs", h->msgs);
		r |= json_key32(o, "digest", h->digest);
		if (h->version >= 2) {
			char a[ADDR_STRLEN];

			addr_format(&h->obs, a);
			r |= json_str(o, "obs", a);
		}
		if (h->version >= 3) {
			if (h->has_owner)
				r |= json_key32(o, "owner", h->owner);
			r |= json_num(o, "events", h->events);
			if (h->epoch > 0)
				r |= json_num(o, "epoch", h->epoch);
		}
		break;
	}
	case FRAME_MSG: {
		const struct frame_msg *m = &f->u.msg;

		r |= json_str(o, "id", m->id);
		r |= json_key32(o, "from", m->from);
		r |= json_str(o, "name", m->name);
		r |= json_num(o, "ts", m->ts);
		r |= json_str(o, "body", m->body);
		if (m->has_to)
			r |= json_key32(o, "to", m->to);
		if (m->has_reply_to)
			r |= json_str(o, "reply_to", m->reply_to);
		if (m->person)
			r |= json_num(o, "person", 1);
		r |= json_sig(o, m->sig);
		break;
	}
	case FRAME_ACK: {
		const struct frame_ack *a = &f->u.ack;

		r |= json_str(o, "id", a->id);
		r |= json_key32(o, "by", a->by);
		r |= json_str(o, "state",
		    a->state == ACK_READ ? "read" : "delivered");
		r |= json_num(o, "ts", a->ts);
		r |= json_sig(o, a->sig);
		break;
	}
	case FRAME_PEERS: {
		cJSON *arr = cJSON_AddArrayToObject(o, "members");

		if (arr == NULL)
			return -1;
		for (size_t i = 0; i < f->u.peers.n; i++) {
			const struct frame_peer *p = &f->u.peers.v[i];
			cJSON *m = cJSON_CreateObject();

			if (m == NULL)
				return -1;
			cJSON_AddItemToArray(arr, m);
			r |= json_key32(m, "id", p->id);
			r |= json_str(m, "name", p->name);
			r |= json_str(m, "about", p->about);
			r |= json_addrs(m, p->addr, p->naddr);
			r |= json_num(m, "seen", p->seen);
			if (p->has_sig)
				r |= json_sig(m, p->sig);
		}
		break;
	}
	case FRAME_SYNC: {
		cJSON *arr;

		r |= json_num(o, "since", f->u.sync.since);
		if ((arr = cJSON_AddArrayToObject(o, "have")) == NULL)
			return -1;
		for (size_t i = 0; i < f->u.sync.n; i++) {
			cJSON *s = cJSON_CreateString(f->u.sync.have[i]);

			if (s == NULL)
				return -1;
			cJSON_AddItemToArray(arr, s);
		}
		break;
	}
	case FRAME_BYE:
		r |= json_key32(o, "id", f->u.bye.id);
		if (f->u.bye.has_sig) {
			r |= json_num(o, "ts", f->u.bye.ts);
			r |= json_sig(o, f->u.bye.sig);
		}
		break;
	case FRAME_PUNCH: {
		const struct frame_punch *p = &f->u.punch;

		r |= json_key32(o, "from", p->from);
		r |= json_key32(o, "to", p->to);
		r |= json_str(o, "phase", p->phase == PUNCH_ASK ? "ask" : "ready");
		r |= json_num(o, "n", p->n);
		r |= json_num(o, "ts", p->ts);
		r |= json_addrs(o, p->addr, p->naddr);
		r |= json_sig(o, p->sig);
		break;
	}
	case FRAME_ADMIN:
		r |= json_key32(o, "id", f->u.admin.id);
		r |= json_key32(o, "by", f->u.admin.by);
		r |= json_num(o, "ts", f->u.admin.ts);
		r |= json_sig(o, f->u.admin.sig);
		break;
	case FRAME_EPOCH:
		r |= epoch_to_json(&f->u.epoch, o);
		break;
	}
	return r == 0 ? 0 : -1;
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
	if ((o = cJSON_CreateObject()) == NULL || frame_to_json(f, o) == -1)
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

/* Decoding. */

/* Checks obj against a field table: no unknown, duplicate, mistyped or
 * missing field.  got[i] is then field i's value, or NULL when an
 * optional field is absent: the decoders read fields by their place in
 * the table, in this one pass over the object. */
static enum frame_err
frame_fields(const cJSON *obj, const struct field *fields,
    const cJSON *got[FIELDS_MAX])
{
	const cJSON *c;
	size_t i;

	if (!cJSON_IsObject(obj))
		return FRAME_ERR_FIELD_TYPE;
	/* All of them: a decoder may look at a later version's field. */
	for (i = 0; i < FIELDS_MAX; i++)
		got[i] = NULL;
	cJSON_ArrayForEach(c, obj) {
		for (i = 0; fields[i].name != NULL; i++)
			if (strcmp(c->string, fields[i].name) == 0)
				break;
		if (fields[i].name == NULL)
			return FRAME_ERR_UNKNOWN_FIELD;
		if (got[i] != NULL)
			return FRAME_ERR_DUPLICATE_FIELD;
		got[i] = c;
		if ((fields[i].type == F_STRING && !cJSON_IsString(c)) ||
		    (fields[i].type == F_NUMBER && !cJSON_IsNumber(c)) ||
		    (fields[i].type == F_ARRAY && !cJSON_IsArray(c)))
			return FRAME_ERR_FIELD_TYPE;
	}
	for (i = 0; fields[i].name != NULL; i++)
		if (fields[i].required && got[i] == NULL)
			return FRAME_ERR_MISSING_FIELD;
	return FRAME_OK;
}

/* Copies a text field into out (max bytes plus NUL); too_long is the
 * error for a longer one. */
static enum frame_err
get_text(const cJSON *c, char *out, size_t max, enum frame_err too_long)
{
	size_t n = strlen(c->valuestring);

	if (n > max)
		return too_long;
	memcpy(out, c->valuestring, n + 1);
	return FRAME_OK;
}

static enum frame_err
get_u64(const cJSON *c, uint64_t *v)
{
	double d = c->valuedouble;

	if (!(d >= 0 && d <= FRAME_INT_MAX) || floor(d) != d)
		return FRAME_ERR_VALUE;
	*v = (uint64_t)d;
	return FRAME_OK;
}

static enum frame_err
get_key32(const cJSON *c, uint8_t out[32])
{
	return sec_id_parse(c->valuestring, out) == 0 ?
	    FRAME_OK : FRAME_ERR_VALUE;
}

static enum frame_err
get_msgid(const cJSON *c, char out[PAPO_MSGID_LEN + 1])
{
	if (!sec_msgid_valid(c->valuestring, NULL))
		return FRAME_ERR_VALUE;
	memcpy(out, c->valuestring, PAPO_MSGID_LEN + 1);
	return FRAME_OK;
}

static enum frame_err
get_sig(const cJSON *c, uint8_t sig[64])
{
	const char *s = c->valuestring;
	size_t n;

	if (strlen(s) != FRAME_SIG_B64_LEN ||
	    sodium_base642bin(sig, 64, s, FRAME_SIG_B64_LEN, NULL, &n, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 || n != 64)
		return FRAME_ERR_VALUE;
	return FRAME_OK;
}

static enum frame_err
get_addrs(const cJSON *arr, struct addr *a, size_t *n)
{
	const cJSON *c;

	*n = 0;
	if (cJSON_GetArraySize(arr) > PAPO_ADDR_MAX)
		return FRAME_ERR_TOO_MANY;
	cJSON_ArrayForEach(c, arr) {
		if (!cJSON_IsString(c))
			return FRAME_ERR_FIELD_TYPE;
		if (addr_parse(c->valuestring, &a[*n]) == -1)
			return FRAME_ERR_VALUE;
		(*n)++;
	}
	return FRAME_OK;
}

#define TRY(x) do { if ((e = (x)) != FRAME_OK) return e; } while (0)
#define TRY2(x) do { if ((e2 = (x)) != FRAME_OK) return e2; } while (0)

static enum frame_err
decode_hello(const cJSON *const *f, struct frame_hello *h, unsigned flags)
{
	enum frame_err e;
	uint64_t v;

	TRY(get_u64(f[HELLO_V], &v));
	/* A hello names the version of its connection. */
	if (v != flags_version(flags))
		return FRAME_ERR_VALUE;
	h->version = (uint32_t)v;
	if (v >= 2 &&
	    addr_parse(f[HELLO_OBS]->valuestring, &h->obs) == -1)
		return FRAME_ERR_VALUE;
	TRY(get_key32(f[HELLO_ID], h->id));
	TRY(get_text(f[HELLO_NAME], h->name, PAPO_NAME_MAX,
	    FRAME_ERR_NAME_LONG));
	TRY(get_text(f[HELLO_ABOUT], h->about, PAPO_ABOUT_MAX,
	    FRAME_ERR_ABOUT_LONG));
	TRY(get_addrs(f[HELLO_ADDRS], h->addr, &h->naddr));
	TRY(get_u64(f[HELLO_MSGS], &h->msgs));
	if (v >= 3) {
		if (f[HELLO_OWNER] != NULL) {
			TRY(get_key32(f[HELLO_OWNER], h->owner));
			h->has_owner = 1;
		}
		TRY(get_u64(f[HELLO_EVENTS], &h->events));
		if (f[HELLO_EPOCH] != NULL) {
			uint64_t n;

			TRY(get_u64(f[HELLO_EPOCH], &n));
			if (n > UINT32_MAX)
				return FRAME_ERR_VALUE;
			h->epoch = (uint32_t)n;
		}
	}
	return get_key32(f[HELLO_DIGEST], h->digest);
}

static enum frame_err
decode_msg(const cJSON *const *f, struct frame_msg *m)
{
	const char *body;
	enum frame_err e;

	TRY(get_msgid(f[MSG_ID], m->id));
	TRY(get_key32(f[MSG_FROM], m->from));
	TRY(get_text(f[MSG_NAME], m->name, PAPO_NAME_MAX,
	    FRAME_ERR_NAME_LONG));
	TRY(get_u64(f[MSG_TS], &m->ts));
	if (f[MSG_TO] != NULL) {
		m->has_to = 1;
		TRY(get_key32(f[MSG_TO], m->to));
	}
	if (f[MSG_REPLY_TO] != NULL) {
		m->has_reply_to = 1;
		TRY(get_msgid(f[MSG_REPLY_TO], m->reply_to));
	}
	/* Version 3's mark of a person's message: 1 or absent. */
	if (f[MSG_PERSON] != NULL) {
		if (f[MSG_PERSON]->valuedouble != 1)
			return FRAME_ERR_VALUE;
		m->person = 1;
	}
	TRY(get_sig(f[MSG_SIG], m->sig));
	body = f[MSG_BODY]->valuestring;
	m->body_len = strlen(body);
	if (m->body_len > PAPO_BODY_MAX)
		return FRAME_ERR_BODY_LONG;
	if ((m->body = malloc(m->body_len + 1)) == NULL)
		return FRAME_ERR_NOMEM;
	memcpy(m->body, body, m->body_len + 1);
	return FRAME_OK;
}

static enum frame_err
decode_ack(const cJSON *const *f, struct frame_ack *a)
{
	const char *state = f[ACK_STATE]->valuestring;
	enum frame_err e;

	TRY(get_msgid(f[ACK_ID], a->id));
	TRY(get_key32(f[ACK_BY], a->by));
	if (strcmp(state, "delivered") == 0)
		a->state = ACK_DELIVERED;
	else if (strcmp(state, "read") == 0)
		a->state = ACK_READ;
	else
		return FRAME_ERR_VALUE;
	TRY(get_u64(f[ACK_TS], &a->ts));
	return get_sig(f[ACK_SIG], a->sig);
}

static enum frame_err
decode_punch(const cJSON *const *f, struct frame_punch *p)
{
	const char *phase = f[PUNCH_PHASE]->valuestring;
	enum frame_err e;

	TRY(get_key32(f[PUNCH_FROM], p->from));
	TRY(get_key32(f[PUNCH_TO], p->to));
	if (strcmp(phase, "ask") == 0)
		p->phase = PUNCH_ASK;
	else if (strcmp(phase, "ready") == 0)
		p->phase = PUNCH_READY;
	else
		return FRAME_ERR_VALUE;
	TRY(get_u64(f[PUNCH_N], &p->n));
	TRY(get_u64(f[PUNCH_TS], &p->ts));
	TRY(get_addrs(f[PUNCH_ADDRS], p->addr, &p->naddr));
	return get_sig(f[PUNCH_SIG], p->sig);
}

static enum frame_err
decode_peers(const cJSON *const *f, struct frame_peers *ps, unsigned flags)
{
	const cJSON *arr = f[PEERS_MEMBERS], *c, *pf[FIELDS_MAX];
	const struct field *fields = flags_version(flags) >= 3 ?
	    peer3_fields : peer_fields;
	int n = cJSON_GetArraySize(arr);
	enum frame_err e;

	if (n > FRAME_PEERS_MAX)
		return FRAME_ERR_TOO_MANY;
	if (n > 0 && (ps->v = calloc((size_t)n, sizeof(*ps->v))) == NULL)
		return FRAME_ERR_NOMEM;
	cJSON_ArrayForEach(c, arr) {
		struct frame_peer *p = &ps->v[ps->n];

		TRY(frame_fields(c, fields, pf));
		TRY(get_key32(pf[PEER_ID], p->id));
		TRY(get_text(pf[PEER_NAME], p->name, PAPO_NAME_MAX,
		    FRAME_ERR_NAME_LONG));
		TRY(get_text(pf[PEER_ABOUT], p->about, PAPO_ABOUT_MAX,
		    FRAME_ERR_ABOUT_LONG));
		TRY(get_addrs(pf[PEER_ADDRS], p->addr, &p->naddr));
		TRY(get_u64(pf[PEER_SEEN], &p->seen));
		if (fields == peer3_fields) {
			TRY(get_sig(pf[PEER_SIG], p->sig));
			p->has_sig = 1;
		}
		ps->n++;
	}
	return FRAME_OK;
}

static enum frame_err
decode_bye(const cJSON *const *f, struct frame_bye *b, unsigned flags)
{
	enum frame_err e;

	TRY(get_key32(f[BYE_ID], b->id));
	if (flags_version(flags) < 3)
		return FRAME_OK;
	TRY(get_u64(f[BYE_TS], &b->ts));
	TRY(get_sig(f[BYE_SIG], b->sig));
	b->has_sig = 1;
	return FRAME_OK;
}

static enum frame_err
decode_epoch(const cJSON *const *f, struct frame_epoch *e)
{
	const cJSON *rm = f[EPOCH_REMOVED], *ks = f[EPOCH_KEYS], *c;
	const cJSON *kf[FIELDS_MAX];
	int nr = cJSON_GetArraySize(rm), nk = cJSON_GetArraySize(ks);
	enum frame_err e2;
	size_t n;

	TRY2(get_u64(f[EPOCH_N], &e->n));
	TRY2(get_key32(f[EPOCH_BY], e->by));
	TRY2(get_u64(f[EPOCH_TS], &e->ts));
	if (nr > FRAME_EPOCH_REMOVED_MAX || nk > FRAME_EPOCH_KEYS_MAX)
		return FRAME_ERR_TOO_MANY;
	if ((nr > 0 && (e->removed = calloc((size_t)nr,
	    sizeof(*e->removed))) == NULL) ||
	    (nk > 0 && (e->keys = calloc((size_t)nk,
	    sizeof(*e->keys))) == NULL))
		return FRAME_ERR_NOMEM;
	cJSON_ArrayForEach(c, rm) {
		if (!cJSON_IsString(c))
			return FRAME_ERR_FIELD_TYPE;
		TRY2(get_key32(c, e->removed[e->nremoved]));
		e->nremoved++;
	}
	cJSON_ArrayForEach(c, ks) {
		struct frame_epoch_key *k = &e->keys[e->nkeys];
		const char *box;

		TRY2(frame_fields(c, epoch_key_fields, kf));
		TRY2(get_key32(kf[EKEY_ID], k->id));
		box = kf[EKEY_BOX]->valuestring;
		if (strlen(box) != FRAME_BOX_B64_LEN ||
		    sodium_base642bin(k->box, SEC_BOX_LEN, box,
		    FRAME_BOX_B64_LEN, NULL, &n, NULL,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
		    n != SEC_BOX_LEN)
			return FRAME_ERR_VALUE;
		e->nkeys++;
	}
	return get_sig(f[EPOCH_SIG], e->sig);
}

static enum frame_err
decode_sync(const cJSON *const *f, struct frame_sync *s)
{
	const cJSON *arr = f[SYNC_HAVE], *c;
	int n = cJSON_GetArraySize(arr);
	enum frame_err e;

	TRY(get_u64(f[SYNC_SINCE], &s->since));
	if (n > FRAME_SYNC_MAX)
		return FRAME_ERR_TOO_MANY;
	if (n > 0 && (s->have = calloc((size_t)n, sizeof(*s->have))) == NULL)
		return FRAME_ERR_NOMEM;
	cJSON_ArrayForEach(c, arr) {
		if (!cJSON_IsString(c))
			return FRAME_ERR_FIELD_TYPE;
		if (!sec_msgid_valid(c->valuestring, NULL))
			return FRAME_ERR_VALUE;
		memcpy(s->have[s->n++], c->valuestring, PAPO_MSGID_LEN + 1);
	}
	return FRAME_OK;
}

static enum frame_err
frame_verify(const struct frame *f, const struct room_keys *k)
{
	const uint8_t *sig, *pk;
	struct buf b;
	enum frame_err e = FRAME_ERR_SIGNATURE;

	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (f->type == FRAME_MSG) {
		sig = f->u.msg.sig, pk = f->u.msg.from;
		if (frame_msg_signed(&f->u.msg, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_ACK) {
		sig = f->u.ack.sig, pk = f->u.ack.by;
		if (frame_ack_signed(&f->u.ack, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_PUNCH) {
		sig = f->u.punch.sig, pk = f->u.punch.from;
		if (frame_punch_signed(&f->u.punch, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_EPOCH) {
		sig = f->u.epoch.sig, pk = f->u.epoch.by;
		if (frame_epoch_signed(&f->u.epoch, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_ADMIN) {
		sig = f->u.admin.sig, pk = f->u.admin.by;
		if (frame_admin_signed(&f->u.admin, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_BYE && f->u.bye.has_sig) {
		sig = f->u.bye.sig, pk = f->u.bye.id;
		if (frame_bye_signed(&f->u.bye, k, &b) == -1)
			goto out;
	} else if (f->type == FRAME_PEERS) {
		/* Every signed entry by the member it is about: one forged
		 * entry refuses the frame. */
		for (size_t i = 0; i < f->u.peers.n; i++) {
			const struct frame_peer *p = &f->u.peers.v[i];

			if (!p->has_sig)
				continue;
			buf_reset(&b);
			if (frame_peer_signed(p, k, &b) == -1 ||
			    crypto_sign_verify_detached(p->sig, b.p, b.len,
			    p->id) != 0)
				goto out;
		}
		e = FRAME_OK;
		goto out;
	} else {
		e = FRAME_OK;
		goto out;
	}
	if (crypto_sign_verify_detached(sig, b.p, b.len, pk) == 0)
		e = FRAME_OK;
out:
	buf_free(&b);
	return e;
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
	const cJSON *c, *f[FIELDS_MAX];
	const struct field *fields;
	cJSON *o = NULL;
	const char *end = NULL;
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
	/* The type first: it says which table the rest obeys. */
	if ((c = cJSON_GetObjectItemCaseSensitive(o, "t")) == NULL ||
	    !cJSON_IsString(c)) {
		e = c == NULL ? FRAME_ERR_MISSING_FIELD : FRAME_ERR_FIELD_TYPE;
		goto out;
	}
	for (i = 1; i < FRAME_NTYPES; i++)
		if (strcmp(c->valuestring, frame_types[i].name) == 0)
			break;
	if (i == FRAME_NTYPES) {
		e = FRAME_ERR_TYPE;
		goto out;
	}
	out->type = (enum frame_type)i;
	/* This version's table, or the latest before it. */
	fields = NULL;
	for (size_t v = flags_version(flags); v > 0 && fields == NULL; v--)
		fields = frame_types[i].fields[v - 1];
	/* A type of a later version is unknown to an earlier one. */
	if (fields == NULL) {
		e = FRAME_ERR_TYPE;
		goto out;
	}
	if ((e = frame_fields(o, fields, f)) != FRAME_OK)
		goto out;
	switch (out->type) {
	case FRAME_HELLO:
		e = decode_hello(f, &out->u.hello, flags);
		break;
	case FRAME_MSG:
		e = decode_msg(f, &out->u.msg);
		break;
	case FRAME_ACK:
		e = decode_ack(f, &out->u.ack);
		break;
	case FRAME_PEERS:
		e = decode_peers(f, &out->u.peers, flags);
		break;
	case FRAME_SYNC:
		e = decode_sync(f, &out->u.sync);
		break;
	case FRAME_BYE:
		e = decode_bye(f, &out->u.bye, flags);
		break;
	case FRAME_PUNCH:
		e = decode_punch(f, &out->u.punch);
		break;
	case FRAME_EPOCH:
		e = decode_epoch(f, &out->u.epoch);
		break;
	case FRAME_ADMIN:
		if ((e = get_key32(f[ADMIN_ID], out->u.admin.id)) == FRAME_OK &&
		    (e = get_key32(f[ADMIN_BY], out->u.admin.by)) == FRAME_OK &&
		    (e = get_u64(f[ADMIN_TS], &out->u.admin.ts)) == FRAME_OK)
			e = get_sig(f[ADMIN_SIG], out->u.admin.sig);
		break;
	}
	if (e == FRAME_OK)
		e = frame_check(out);
	if (e == FRAME_OK && !(flags & FRAME_TRUSTED))
		e = frame_verify(out, k);
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
    size_t len, unsigned flags, struct frame *out)
{
	uint8_t *plain = NULL;
	unsigned long long plen;
	enum frame_err e;

	memset(out, 0, sizeof(*out));
	if (len > PAPO_FRAME_MAX)
		return FRAME_ERR_TOO_BIG;
	if (len < hlen + FRAME_SEAL_OVERHEAD)
		return FRAME_ERR_SEAL;
	if ((plain = malloc(len)) == NULL)
		return FRAME_ERR_NOMEM;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL,
	    in + hlen + FRAME_NONCE_LEN, len - hlen - FRAME_NONCE_LEN,
	    hlen > 0 ? in : NULL, hlen, in + hlen, k->seal) != 0)
		e = FRAME_ERR_SEAL;
	else
		e = frame_decode(k, (const char *)plain, (size_t)plen,
		    flags & ~FRAME_TRUSTED, out);
	free(plain);
	return e;
}

enum frame_err
frame_open(const struct room_keys *k, const uint8_t *in, size_t len,
    unsigned flags, struct frame *out)
{
	return frame_open_ad(k, 0, in, len, flags, out);
}

enum frame_err
frame_open_epoch(const struct room_keys *k, const uint8_t *in, size_t len,
    unsigned flags, struct frame *out)
{
	return frame_open_ad(k, FRAME_EPOCH_LEN, in, len, flags, out);
}

void
frame_clear(struct frame *f)
{
	switch (f->type) {
	case FRAME_MSG:
		frame_msg_clear(&f->u.msg);
		break;
	case FRAME_PEERS:
		free(f->u.peers.v);
		break;
	case FRAME_SYNC:
		free(f->u.sync.have);
		break;
	case FRAME_EPOCH:
		free(f->u.epoch.removed);
		free(f->u.epoch.keys);
		break;
	default:
		break;
	}
	memset(f, 0, sizeof(*f));
}

void
frame_msg_clear(struct frame_msg *m)
{
	free(m->body);
	memset(m, 0, sizeof(*m));
}

int
frame_msg_sign(struct frame_msg *m, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(m->from, id->pk, 32);
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (m->body != NULL && frame_msg_signed(m, k, &b) == 0)
		rc = crypto_sign_detached(m->sig, NULL, b.p, b.len, id->sk);
	buf_free(&b);
	return rc;
}

int
frame_punch_sign(struct frame_punch *p, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(p->from, id->pk, 32);
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_punch_signed(p, k, &b) == 0)
		rc = crypto_sign_detached(p->sig, NULL, b.p, b.len, id->sk);
	buf_free(&b);
	return rc;
}

int
frame_peer_sign(struct frame_peer *p, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(p->id, id->pk, 32);
	p->has_sig = 0;
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_check_person(p->name, p->about) == FRAME_OK &&
	    p->naddr <= PAPO_ADDR_MAX && frame_peer_signed(p, k, &b) == 0 &&
	    crypto_sign_detached(p->sig, NULL, b.p, b.len, id->sk) == 0)
		rc = 0, p->has_sig = 1;
	buf_free(&b);
	return rc;
}

int
frame_bye_sign(struct frame_bye *y, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(y->id, id->pk, 32);
	y->has_sig = 0;
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_bye_signed(y, k, &b) == 0 &&
	    crypto_sign_detached(y->sig, NULL, b.p, b.len, id->sk) == 0)
		rc = 0, y->has_sig = 1;
	buf_free(&b);
	return rc;
}

int
frame_admin_sign(struct frame_admin *a, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(a->by, id->pk, 32);
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_admin_signed(a, k, &b) == 0)
		rc = crypto_sign_detached(a->sig, NULL, b.p, b.len, id->sk);
	buf_free(&b);
	return rc;
}

int
frame_epoch_sign(struct frame_epoch *e, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(e->by, id->pk, 32);
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_check_epoch(e) == FRAME_OK &&
	    frame_epoch_signed(e, k, &b) == 0)
		rc = crypto_sign_detached(e->sig, NULL, b.p, b.len, id->sk);
	buf_free(&b);
	return rc;
}

int
frame_for_version(const struct frame *f, unsigned version, struct frame *out,
    struct frame_peer *v)
{
	*out = *f;
	if (f->type == FRAME_ADMIN || f->type == FRAME_EPOCH)
		return version >= 3 ? 0 : -1;
	/* A person's mark is version 3's: older decoders refuse the field. */
	if (f->type == FRAME_MSG && version < 3)
		out->u.msg.person = 0;
	if (f->type == FRAME_BYE) {
		if (version < 3)
			out->u.bye.has_sig = 0;
		return version < 3 || f->u.bye.has_sig ? 0 : -1;
	}
	if (f->type != FRAME_PEERS)
		return 0;
	out->u.peers.v = v;
	out->u.peers.n = 0;
	for (size_t i = 0; i < f->u.peers.n && i < FRAME_PEERS_MAX; i++) {
		if (version >= 3 && !f->u.peers.v[i].has_sig)
			continue;
		v[out->u.peers.n] = f->u.peers.v[i];
		if (version < 3)
			v[out->u.peers.n].has_sig = 0;
		out->u.peers.n++;
	}
	return out->u.peers.n > 0 ? 0 : -1;
}

int
frame_signed_input(const struct frame *f, size_t i,
    const struct room_keys *k, struct buf *out)
{
	switch (f->type) {
	case FRAME_MSG:
		return frame_msg_signed(&f->u.msg, k, out);
	case FRAME_ACK:
		return frame_ack_signed(&f->u.ack, k, out);
	case FRAME_PUNCH:
		return frame_punch_signed(&f->u.punch, k, out);
	case FRAME_ADMIN:
		return frame_admin_signed(&f->u.admin, k, out);
	case FRAME_EPOCH:
		return frame_epoch_signed(&f->u.epoch, k, out);
	case FRAME_BYE:
		return f->u.bye.has_sig ? frame_bye_signed(&f->u.bye, k, out) :
		    -1;
	case FRAME_PEERS:
		return i < f->u.peers.n && f->u.peers.v[i].has_sig ?
		    frame_peer_signed(&f->u.peers.v[i], k, out) : -1;
	default:
		return -1;
	}
}

int
frame_ack_sign(struct frame_ack *a, const struct room_keys *k,
    const struct identity *id)
{
	struct buf b;
	int rc = -1;

	memcpy(a->by, id->pk, 32);
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (frame_ack_signed(a, k, &b) == 0)
		rc = crypto_sign_detached(a->sig, NULL, b.p, b.len, id->sk);
	buf_free(&b);
	return rc;
}
