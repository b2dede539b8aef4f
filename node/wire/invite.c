/*
 * invite.c: the invite string that carries a room to a new member, its
 * encoder and its decoder; docs/PROTOCOL.md, "Invite".  Pure: no I/O, no
 * clock, no threads, no state, so any thread may call it and it is fuzzed
 * (tests/fuzz/fuzz_invite.c).  It must never trust the text it is given:
 * every byte is read through a bounds-checked cursor, and every way an
 * invite can be broken has its own error a person can act on.
 *
 * The text is "papo1" and the lowercase base32 (no padding) of:
 *
 *	version u8 (1 or 2) | room secret 32 | inviter public key 32 |
 *	address count u8 | addresses | [relay] | checksum 4
 *
 * where each address is family u8 (4 or 6), 4 or 16 bytes of IP and the
 * port as u16 big-endian.  Version 2 is version 1 with extensions after
 * the addresses, each a type u8, a length u16 big-endian and that many
 * bytes:
 *
 *	1 relay      the room's TURN relay: four strings, each a length u8
 *	             and its bytes (printable ASCII, no NUL): the URL (1 to
 *	             200 bytes), user, password and shared secret (0 to 127
 *	             each; a secret, or a user and a password)
 *	2 room name  the room's name given by its maker, 1 to 64 bytes of
 *	             UTF-8 without control characters
 *
 * A type this papo does not know is skipped, so a later one needs no new
 * version; a known one given twice is refused.  An invite without
 * extensions stays version 1, so papo that predates them still joins it.  The checksum is the first 4 bytes of a BLAKE2b
 * hash (libsodium's crypto_generichash) with a 16-byte output
 * (crypto_generichash_BYTES_MIN) over every byte before it.  The output
 * length is part of BLAKE2b's parameters, so a 16-byte hash cut to 4
 * differs from a 32-byte hash cut to 4; 16 is the value that is fixed.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "lib/b32.h"
#include "lib/buf.h"
#include "lib/utf8.h"
#include "node/wire/invite.h"

#define INVITE_PREFIX_LEN (sizeof(INVITE_PREFIX) - 1)
#define INVITE_SUM_LEN 4
#define INVITE_HEAD_LEN (1 + PAPO_KEY_LEN + PAPO_KEY_LEN + 1)
#define INVITE_MIN_BYTES (INVITE_HEAD_LEN + INVITE_SUM_LEN)
#define INVITE_ADDR_MAX_BYTES (1 + 16 + 2)
#define INVITE_EXT_RELAY 1
#define INVITE_EXT_ROOM 2
#define INVITE_EXT_EPOCH 3      /* u32 epoch || its 32-byte secret */
#define INVITE_EPOCH_LEN (4 + PAPO_KEY_LEN)
/* The longest invite this papo writes (877 bytes: 8 IPv6 addresses, a
 * relay and a room name at their longest), and room for extensions a
 * later papo may add. */
#define INVITE_MAX_BYTES 1536
_Static_assert(INVITE_MIN_BYTES + PAPO_ADDR_MAX * INVITE_ADDR_MAX_BYTES +
    3 + 1 + INVITE_URL_MAX + 3 * (1 + INVITE_CRED_MAX) +
    3 + INVITE_ROOM_MAX + 3 + INVITE_EPOCH_LEN <= INVITE_MAX_BYTES - 512,
    "invite room");

/*
 * Writes the checksum of the n bytes at p.  BLAKE2b needs no sodium_init:
 * libsodium selects its reference implementation statically, and
 * sodium_init only swaps in a faster one that computes the same hash.
 */
static void
invite_sum(const uint8_t *p, size_t n, uint8_t sum[INVITE_SUM_LEN])
{
	uint8_t h[crypto_generichash_BYTES_MIN];

	crypto_generichash(h, sizeof(h), p, n, NULL, 0);
	memcpy(sum, h, INVITE_SUM_LEN);
}

static size_t
invite_ip_len(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

/* 1 when the n bytes at p are printable ASCII; space too when sp. */
static int
invite_text(const char *p, size_t n, int sp)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < (sp ? 0x20 : 0x21) || p[i] > 0x7e)
			return 0;
	return 1;
}

/* 1 when r is a relay a decoder accepts (invite_parse_relay). */
static int
invite_relay_ok(const struct invite_relay *r)
{
	size_t n = strlen(r->url);

	return n > 0 && n <= INVITE_URL_MAX && invite_text(r->url, n, 0) &&
	    strlen(r->user) <= INVITE_CRED_MAX &&
	    strlen(r->pass) <= INVITE_CRED_MAX &&
	    strlen(r->secret) <= INVITE_CRED_MAX &&
	    invite_text(r->user, strlen(r->user), 1) &&
	    invite_text(r->pass, strlen(r->pass), 1) &&
	    invite_text(r->secret, strlen(r->secret), 1) &&
	    (r->secret[0] != '\0' ||
	    (r->user[0] != '\0' && r->pass[0] != '\0'));
}

/* 1 when name is a room name a decoder accepts. */
static int
invite_room_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= INVITE_ROOM_MAX && utf8_printable(name, n);
}

static void
invite_put_str(struct buf *b, const char *s)
{
	buf_u8(b, (uint8_t)strlen(s));
	buf_add(b, s, strlen(s));
}

/* Writes the relay extension of r. */
static void
invite_put_relay(struct buf *b, const struct invite_relay *r)
{
	buf_u8(b, INVITE_EXT_RELAY);
	buf_u16(b, (uint16_t)(4 + strlen(r->url) + strlen(r->user) +
	    strlen(r->pass) + strlen(r->secret)));
	invite_put_str(b, r->url);
	invite_put_str(b, r->user);
	invite_put_str(b, r->pass);
	invite_put_str(b, r->secret);
}

char *
invite_encode(const struct invite *inv)
{
	struct buf b;
	uint8_t sum[INVITE_SUM_LEN];
	char *s = NULL;
	int relay, room;

	if (inv->naddr > PAPO_ADDR_MAX)
		return NULL;
	relay = inv->relay.url[0] != '\0';
	room = inv->room[0] != '\0';
	if ((relay && !invite_relay_ok(&inv->relay)) ||
	    (room && !invite_room_ok(inv->room)))
		return NULL;
	buf_init(&b, INVITE_MAX_BYTES);
	buf_u8(&b, relay || room || inv->epoch > 0 ? INVITE_VERSION_EXT :
	    INVITE_VERSION);
	buf_add(&b, inv->secret, sizeof(inv->secret));
	buf_add(&b, inv->inviter, sizeof(inv->inviter));
	buf_u8(&b, (uint8_t)inv->naddr);
	for (size_t i = 0; i < inv->naddr; i++) {
		const struct addr *a = &inv->addr[i];

		/* The decoder refuses these, so an invite carrying one
		 * would be useless to whoever receives it. */
		if ((a->family != 4 && a->family != 6) || a->port == 0)
			goto out;
		buf_u8(&b, a->family);
		buf_add(&b, a->ip, invite_ip_len(a->family));
		buf_u16(&b, a->port);
	}
	if (relay)
		invite_put_relay(&b, &inv->relay);
	if (room) {
		buf_u8(&b, INVITE_EXT_ROOM);
		buf_u16(&b, (uint16_t)strlen(inv->room));
		buf_add(&b, inv->room, strlen(inv->room));
	}
	if (inv->epoch > 0) {
		buf_u8(&b, INVITE_EXT_EPOCH);
		buf_u16(&b, INVITE_EPOCH_LEN);
		buf_u32(&b, inv->epoch);
		buf_add(&b, inv->epoch_secret, sizeof(inv->epoch_secret));
	}
	/* A failed add sets toobig and refuses every later one, so one
	 * check here covers them all. */
	if (b.toobig)
		goto out;
	invite_sum(b.p, b.len, sum);
	if (buf_add(&b, sum, sizeof(sum)) == -1)
		goto out;
	if ((s = malloc(INVITE_PREFIX_LEN + b32_len(b.len) + 1)) == NULL)
		goto out;
	memcpy(s, INVITE_PREFIX, INVITE_PREFIX_LEN);
	b32_encode(b.p, b.len, s + INVITE_PREFIX_LEN);
out:
	/* The bytes hold the room secret. */
	if (b.p != NULL)
		sodium_memzero(b.p, b.cap);
	buf_free(&b);
	return s;
}

static int
invite_b32_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '2' && c <= '7');
}

/* Reads one string of the relay into out (max bytes and a NUL). */
static enum invite_err
invite_get_str(struct rd *r, char *out, size_t max, int sp)
{
	uint8_t n;

	if (rd_u8(r, &n) == -1)
		return INVITE_TRUNCATED;
	if (n > max)
		return INVITE_RELAY;
	if (rd_bytes(r, out, n) == -1)
		return INVITE_TRUNCATED;
	out[n] = '\0';
	return invite_text(out, n, sp) ? INVITE_OK : INVITE_RELAY;
}

/* Reads the relay extension's value (r holds just it) into rl. */
static enum invite_err
invite_parse_relay(struct rd *r, struct invite_relay *rl)
{
	enum invite_err e;

	if ((e = invite_get_str(r, rl->url, INVITE_URL_MAX, 0)) != INVITE_OK ||
	    (e = invite_get_str(r, rl->user, INVITE_CRED_MAX, 1)) != INVITE_OK ||
	    (e = invite_get_str(r, rl->pass, INVITE_CRED_MAX, 1)) != INVITE_OK ||
	    (e = invite_get_str(r, rl->secret, INVITE_CRED_MAX, 1)) != INVITE_OK)
		return e == INVITE_TRUNCATED ? INVITE_RELAY : e;
	if (rd_left(r) > 0)
		return INVITE_RELAY;
	return invite_relay_ok(rl) ? INVITE_OK : INVITE_RELAY;
}

/* Reads the extensions of a version 2 invite, up to the checksum. */
static enum invite_err
invite_parse_ext(struct rd *r, struct invite *inv)
{
	enum invite_err e;
	int seen = 0;

	while (rd_left(r) > 0) {
		uint8_t type;
		uint16_t len;
		struct rd v;

		if (rd_u8(r, &type) == -1 || rd_u16(r, &len) == -1 ||
		    rd_left(r) < len)
			return INVITE_TRUNCATED;
		rd_init(&v, r->p + r->off, len);
		r->off += len;
		if (type != INVITE_EXT_RELAY && type != INVITE_EXT_ROOM &&
		    type != INVITE_EXT_EPOCH)
			continue;            /* a later papo's: not needed */
		if (seen & (1 << type))
			return INVITE_EXTENSION;
		seen |= 1 << type;
		if (type == INVITE_EXT_RELAY) {
			if ((e = invite_parse_relay(&v, &inv->relay)) != INVITE_OK)
				return e;
		} else if (type == INVITE_EXT_EPOCH) {
			if (len != INVITE_EPOCH_LEN ||
			    rd_u32(&v, &inv->epoch) == -1 || inv->epoch == 0 ||
			    rd_bytes(&v, inv->epoch_secret, PAPO_KEY_LEN) == -1)
				return INVITE_EPOCH;
		} else {
			if (len > INVITE_ROOM_MAX)
				return INVITE_ROOM;
			memcpy(inv->room, v.p, len);
			inv->room[len] = '\0';
			if (!invite_room_ok(inv->room))
				return INVITE_ROOM;
		}
	}
	return INVITE_OK;
}

/* Reads the bytes between the count and the checksum into inv. */
static enum invite_err
invite_parse(struct rd *r, struct invite *inv)
{
	enum invite_err e;
	uint8_t n;

	if (rd_u8(r, &inv->version) == -1)
		return INVITE_TRUNCATED;
	if (inv->version != INVITE_VERSION &&
	    inv->version != INVITE_VERSION_EXT)
		return INVITE_VERSION_BAD;
	if (rd_bytes(r, inv->secret, sizeof(inv->secret)) == -1 ||
	    rd_bytes(r, inv->inviter, sizeof(inv->inviter)) == -1 ||
	    rd_u8(r, &n) == -1)
		return INVITE_TRUNCATED;
	if (n > PAPO_ADDR_MAX)
		return INVITE_TOO_MANY_ADDRS;
	for (size_t i = 0; i < n; i++) {
		struct addr *a = &inv->addr[i];

		if (rd_u8(r, &a->family) == -1)
			return INVITE_TRUNCATED;
		if (a->family != 4 && a->family != 6)
			return INVITE_FAMILY;
		if (rd_bytes(r, a->ip, invite_ip_len(a->family)) == -1 ||
		    rd_u16(r, &a->port) == -1)
			return INVITE_TRUNCATED;
		if (a->port == 0)
			return INVITE_PORT;
	}
	inv->naddr = n;
	if (inv->version == INVITE_VERSION_EXT &&
	    (e = invite_parse_ext(r, inv)) != INVITE_OK)
		return e;
	if (rd_left(r) > 0)
		return INVITE_TRAILING;
	return INVITE_OK;
}

enum invite_err
invite_decode(const char *s, struct invite *out, size_t *pos)
{
	uint8_t raw[INVITE_MAX_BYTES], sum[INVITE_SUM_LEN];
	struct invite inv;
	struct rd r;
	enum invite_err e;
	const char *body;
	size_t start, end, len;
	long n;

	memset(&inv, 0, sizeof(inv));
	start = 0;
	while (s[start] != '\0' && isspace((unsigned char)s[start]))
		start++;
	end = start + strlen(s + start);
	while (end > start && isspace((unsigned char)s[end - 1]))
		end--;
	if (end == start)
		return INVITE_EMPTY;
	if (end - start < INVITE_PREFIX_LEN ||
	    strncasecmp(s + start, INVITE_PREFIX, INVITE_PREFIX_LEN) != 0)
		return INVITE_PREFIX_BAD;
	body = s + start + INVITE_PREFIX_LEN;
	len = end - start - INVITE_PREFIX_LEN;
	if (len > b32_len(INVITE_MAX_BYTES))
		return INVITE_LENGTH;
	/*
	 * Characters are checked before lengths because a stray character
	 * (a quote, a line break inside the invite) also makes the length
	 * wrong, and pointing at it tells the person what to fix.
	 */
	for (size_t i = 0; i < len; i++) {
		if (!invite_b32_char(body[i])) {
			if (pos != NULL)
				*pos = (size_t)(body - s) + i;
			return INVITE_CHAR;
		}
	}
	/* Shorter than the smallest invite: whatever else is wrong, it was
	 * cut short, and saying so is what helps. */
	if (len < b32_len(INVITE_MIN_BYTES))
		return INVITE_TRUNCATED;
	n = b32_decode(body, len, raw, sizeof(raw), NULL);
	if (n == -2) {
		/* b32_decode gives -2 for a length no encoder makes and for
		 * non-zero unused bits in the last character; the second
		 * comes from a typo or a cut in the last characters, as a
		 * checksum mismatch does, so it reads the same. */
		len %= 8;
		e = len == 1 || len == 3 || len == 6 ? INVITE_LENGTH :
		    INVITE_CHECKSUM;
		goto out;
	}
	if (n < 0) {
		/* The characters and the capacity were checked above. */
		e = INVITE_LENGTH;
		goto out;
	}
	if ((size_t)n < INVITE_MIN_BYTES) {
		e = INVITE_TRUNCATED;
		goto out;
	}
	invite_sum(raw, (size_t)n - INVITE_SUM_LEN, sum);
	if (sodium_memcmp(sum, raw + n - INVITE_SUM_LEN, INVITE_SUM_LEN) != 0) {
		e = INVITE_CHECKSUM;
		goto out;
	}
	/* The invite is parsed into a copy so that out never holds half an
	 * invite: it is written only when everything checked out. */
	rd_init(&r, raw, (size_t)n - INVITE_SUM_LEN);
	if ((e = invite_parse(&r, &inv)) == INVITE_OK)
		memcpy(out, &inv, sizeof(inv));
out:
	/* Both copies hold the room secret. */
	sodium_memzero(raw, sizeof(raw));
	sodium_memzero(&inv, sizeof(inv));
	return e;
}

const char *
invite_strerror(enum invite_err e)
{
	static const char *const msg[] = {
		[INVITE_OK] = "ok",
		[INVITE_EMPTY] = "invite is empty: paste the whole invite, "
		    "which starts with papo1",
		[INVITE_PREFIX_BAD] = "invite does not start with papo1: it is "
		    "not a papo invite, or was copied incompletely at the start",
		[INVITE_CHAR] = "invite has a character no invite contains "
		    "(only a-z and 2-7): it was mistyped or changed in copying",
		[INVITE_LENGTH] = "invite has a length no invite has: a "
		    "character is missing or extra, or something was pasted "
		    "with it",
		[INVITE_TRUNCATED] = "invite is too short: it was cut off, "
		    "copy all of it",
		[INVITE_CHECKSUM] = "invite checksum does not match: it was "
		    "mistyped or cut short, copy it again",
		[INVITE_VERSION_BAD] = "invite was made by a newer papo: "
		    "upgrade papo to join this room",
		[INVITE_TOO_MANY_ADDRS] = "invite lists more addresses than "
		    "papo accepts: it was made by a different papo",
		[INVITE_FAMILY] = "invite has an address that is neither IPv4 "
		    "nor IPv6: it was made by a different papo",
		[INVITE_PORT] = "invite has an address with port 0, where no "
		    "member can be reached: it was made by a different papo",
		[INVITE_TRAILING] = "invite has bytes after its last address: "
		    "it was made by a different papo",
		[INVITE_RELAY] = "invite has a relay that is empty, too long "
		    "or not text: it was made by a different papo",
		[INVITE_ROOM] = "invite has a room name that is empty, too "
		    "long or not text: it was made by a different papo",
		[INVITE_EXTENSION] = "invite gives the same field twice: it "
		    "was made by a different papo",
		[INVITE_EPOCH] = "invite has a room key that is malformed: it "
		    "was made by a different papo",
	};

	if ((size_t)e >= sizeof(msg) / sizeof(msg[0]) || msg[e] == NULL)
		return "invite is not valid";
	return msg[e];
}
