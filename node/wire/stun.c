/*
 * stun.c: the STUN codec (stun.h), docs/PROTOCOL.md "TURN client".
 *
 * Everything read from the datagram goes through explicit length checks
 * before it is touched: the header length must be the datagram's, each
 * attribute with its padding must fit inside it.  The hashes come from
 * GnuTLS (HMAC-SHA1 and MD5, which papo has no other use for); the CRC is
 * a few lines here rather than a dependency on zlib.  No state, no I/O.
 */
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <sodium.h>

#include "node/wire/stun.h"

#define STUN_FP_XOR 0x5354554eu   /* "STUN", RFC 8489 section 14.7 */

/*
 * Comprehension-required attributes (type below 0x8000) papo knows.  A
 * response carrying one not listed here is ignored (RFC 8489 section
 * 7.3.3); several of these papo never uses but may safely leave unread.
 */
static const uint16_t stun_known[] = {
	STUN_A_MAPPED_ADDRESS, STUN_A_USERNAME, STUN_A_MESSAGE_INTEGRITY,
	STUN_A_ERROR_CODE, STUN_A_UNKNOWN_ATTRIBUTES, STUN_A_CHANNEL_NUMBER,
	STUN_A_LIFETIME, STUN_A_XOR_PEER_ADDRESS, STUN_A_DATA, STUN_A_REALM,
	STUN_A_NONCE, STUN_A_XOR_RELAYED_ADDRESS,
	STUN_A_REQUESTED_ADDRESS_FAMILY, STUN_A_EVEN_PORT,
	STUN_A_REQUESTED_TRANSPORT, STUN_A_DONT_FRAGMENT,
	STUN_A_MESSAGE_INTEGRITY_SHA256, STUN_A_PASSWORD_ALGORITHM,
	STUN_A_USERHASH, STUN_A_XOR_MAPPED_ADDRESS, STUN_A_RESERVATION_TOKEN,
};

static const char *const stun_errs[] = {
	[STUN_OK] = "ok",
	[STUN_E_SHORT] = "shorter than a STUN header",
	[STUN_E_NOT_STUN] = "not STUN (no magic cookie)",
	[STUN_E_LENGTH] = "header length does not match the datagram",
	[STUN_E_ATTR] = "an attribute runs past the end or has a bad size",
	[STUN_E_TOO_MANY] = "too many attributes",
	[STUN_E_FINGERPRINT] = "wrong or misplaced FINGERPRINT",
};

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The message type interleaves the class's two bits with the method's
 * twelve (RFC 8489 section 5). */
static uint16_t
stun_type(uint16_t method, uint8_t cls)
{
	return (uint16_t)((method & 0x000f) | (method & 0x0070) << 1 |
	    (method & 0x0f80) << 2 | (cls & 1) << 4 | (cls & 2) << 7);
}

uint32_t
stun_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	/* Bit by bit: only control messages and the few Send indications
	 * before a channel is bound are ever checksummed. */
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

static int
stun_is_known(uint16_t type)
{
	for (size_t i = 0; i < sizeof(stun_known) / sizeof(stun_known[0]); i++)
		if (stun_known[i] == type)
			return 1;
	return 0;
}

enum stun_err
stun_decode(struct stun_msg *m, const uint8_t *p, size_t n)
{
	uint16_t type;
	size_t off;

	memset(m, 0, sizeof(*m));
	if (n < STUN_HDR)
		return STUN_E_SHORT;
	if ((p[0] & 0xc0) != 0 || get32(p + 4) != STUN_COOKIE)
		return STUN_E_NOT_STUN;
	if (get16(p + 2) % 4 != 0 || STUN_HDR + (size_t)get16(p + 2) != n)
		return STUN_E_LENGTH;
	type = get16(p);
	m->method = (uint16_t)((type & 0x000f) | (type & 0x00e0) >> 1 |
	    (type & 0x3e00) >> 2);
	m->cls = (uint8_t)((type >> 4 & 1) | (type >> 7 & 2));
	memcpy(m->tid, p + 8, STUN_TID_LEN);
	m->raw = p;
	m->len = n;

	/* off stays a multiple of 4 below n, so each header fits. */
	for (off = STUN_HDR; off < n; ) {
		uint16_t at = get16(p + off), al = get16(p + off + 2);
		size_t padded = ((size_t)al + 3) & ~(size_t)3;

		if (padded > n - off - 4)
			return STUN_E_ATTR;
		if (m->fingerprint)
			return STUN_E_FINGERPRINT;
		if (at == STUN_A_FINGERPRINT) {
			if (al != 4)
				return STUN_E_ATTR;
			if (off + 8 != n || (stun_crc32(p, off) ^ STUN_FP_XOR) !=
			    get32(p + off + 4))
				return STUN_E_FINGERPRINT;
			m->fingerprint = 1;
		} else if (m->mi_off != 0) {
			/* After MESSAGE-INTEGRITY only FINGERPRINT counts. */
		} else if (at == STUN_A_MESSAGE_INTEGRITY) {
			if (al != STUN_MI_LEN)
				return STUN_E_ATTR;
			m->mi_off = off;
		} else {
			if (m->na == STUN_ATTRS_MAX)
				return STUN_E_TOO_MANY;
			m->a[m->na].type = at;
			m->a[m->na].len = al;
			m->a[m->na].v = p + off + 4;
			m->na++;
			if (at < 0x8000 && m->unknown == 0 && !stun_is_known(at))
				m->unknown = at;
		}
		off += 4 + padded;
	}
	return STUN_OK;
}

const char *
stun_strerror(enum stun_err e)
{
	if ((size_t)e >= sizeof(stun_errs) / sizeof(stun_errs[0]))
		return "unknown error";
	return stun_errs[e];
}

const struct stun_attr *
stun_get(const struct stun_msg *m, uint16_t type)
{
	for (size_t i = 0; i < m->na; i++)
		if (m->a[i].type == type)
			return &m->a[i];
	return NULL;
}

int
stun_check_integrity(const struct stun_msg *m, const uint8_t *key,
    size_t keylen)
{
	gnutls_hmac_hd_t h;
	uint8_t len[2], mac[STUN_MI_LEN];
	int rc;

	if (m->mi_off == 0)
		return -1;
	/* The HMAC covers everything before the attribute, with the header
	 * length as if the message ended right after it. */
	put16(len, (uint16_t)(m->mi_off + 4 + STUN_MI_LEN - STUN_HDR));
	if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA1, key, keylen) < 0)
		return -1;
	gnutls_hmac(h, m->raw, 2);
	gnutls_hmac(h, len, 2);
	gnutls_hmac(h, m->raw + 4, m->mi_off - 4);
	gnutls_hmac_deinit(h, mac);
	rc = sodium_memcmp(mac, m->raw + m->mi_off + 4, STUN_MI_LEN);
	return rc == 0 ? 0 : -1;
}

int
stun_xaddr(const struct stun_msg *m, const struct stun_attr *a,
    struct addr *out)
{
	int x = a->type != STUN_A_MAPPED_ADDRESS;
	uint8_t mask[16];
	size_t n;

	if (a->len < 4 || a->v[0] != 0)
		return -1;
	if (a->v[1] == 1 && a->len == 8)
		n = 4;
	else if (a->v[1] == 2 && a->len == 20)
		n = 16;
	else
		return -1;
	/* XOR with the cookie, then (IPv6) the transaction id, so that
	 * NATs rewriting addresses they find in payloads leave it be. */
	put32(mask, STUN_COOKIE);
	memcpy(mask + 4, m->tid, STUN_TID_LEN);
	memset(out, 0, sizeof(*out));
	out->family = n == 4 ? 4 : 6;
	out->port = get16(a->v + 2);
	if (x)
		out->port ^= (uint16_t)(STUN_COOKIE >> 16);
	for (size_t i = 0; i < n; i++)
		out->ip[i] = (uint8_t)(a->v[4 + i] ^ (x ? mask[i] : 0));
	return 0;
}

int
stun_error_code(const struct stun_attr *a, int *code, const uint8_t **reason,
    size_t *reasonlen)
{
	int cls, num;

	if (a->len < 4)
		return -1;
	cls = a->v[2] & 7;
	num = a->v[3];
	if (cls < 3 || cls > 6 || num > 99)
		return -1;
	*code = cls * 100 + num;
	*reason = a->v + 4;
	*reasonlen = a->len - 4u;
	return 0;
}

int
stun_u32(const struct stun_attr *a, uint32_t *v)
{
	if (a->len != 4)
		return -1;
	*v = get32(a->v);
	return 0;
}

void
stun_begin(struct stun_out *o, uint8_t *p, size_t cap, uint16_t method,
    uint8_t cls, const uint8_t tid[STUN_TID_LEN])
{
	o->p = p;
	o->cap = cap;
	o->len = 0;
	o->bad = cap < STUN_HDR;
	if (o->bad)
		return;
	put16(p, stun_type(method, cls));
	put16(p + 2, 0);
	put32(p + 4, STUN_COOKIE);
	memcpy(p + 8, tid, STUN_TID_LEN);
	o->len = STUN_HDR;
}

void
stun_add(struct stun_out *o, uint16_t type, const void *v, size_t n)
{
	size_t padded = (n + 3) & ~(size_t)3;

	if (o->bad || n > 0xffff || 4 + padded > o->cap - o->len ||
	    o->len + 4 + padded - STUN_HDR > 0xffff) {
		o->bad = 1;
		return;
	}
	put16(o->p + o->len, type);
	put16(o->p + o->len + 2, (uint16_t)n);
	if (n > 0)
		memcpy(o->p + o->len + 4, v, n);
	memset(o->p + o->len + 4 + n, 0, padded - n);
	o->len += 4 + padded;
	put16(o->p + 2, (uint16_t)(o->len - STUN_HDR));
}

void
stun_add_u32(struct stun_out *o, uint16_t type, uint32_t v)
{
	uint8_t b[4];

	put32(b, v);
	stun_add(o, type, b, 4);
}

void
stun_add_xaddr(struct stun_out *o, uint16_t type, const struct addr *a)
{
	uint8_t v[20], mask[16];
	size_t n = a->family == 6 ? 16 : 4;

	if (o->bad)
		return;
	put32(mask, STUN_COOKIE);
	memcpy(mask + 4, o->p + 8, STUN_TID_LEN);
	v[0] = 0;
	v[1] = a->family == 6 ? 2 : 1;
	put16(v + 2, (uint16_t)(a->port ^ (STUN_COOKIE >> 16)));
	for (size_t i = 0; i < n; i++)
		v[4 + i] = a->ip[i] ^ mask[i];
	stun_add(o, type, v, 4 + n);
}

void
stun_add_integrity(struct stun_out *o, const uint8_t *key, size_t keylen)
{
	uint8_t mac[STUN_MI_LEN];

	if (o->bad || o->cap - o->len < 4 + STUN_MI_LEN) {
		o->bad = 1;
		return;
	}
	put16(o->p + 2, (uint16_t)(o->len + 4 + STUN_MI_LEN - STUN_HDR));
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA1, key, keylen, o->p, o->len,
	    mac) < 0) {
		o->bad = 1;
		return;
	}
	stun_add(o, STUN_A_MESSAGE_INTEGRITY, mac, sizeof(mac));
}

void
stun_add_fingerprint(struct stun_out *o)
{
	if (o->bad || o->cap - o->len < 8) {
		o->bad = 1;
		return;
	}
	put16(o->p + 2, (uint16_t)(o->len + 8 - STUN_HDR));
	stun_add_u32(o, STUN_A_FINGERPRINT,
	    stun_crc32(o->p, o->len) ^ STUN_FP_XOR);
}

size_t
stun_end(struct stun_out *o)
{
	return o->bad ? 0 : o->len;
}

int
stun_lt_key(const char *user, const char *realm, size_t realmlen,
    const char *pass, uint8_t key[16])
{
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, GNUTLS_DIG_MD5) < 0)
		return -1;
	gnutls_hash(h, user, strlen(user));
	gnutls_hash(h, ":", 1);
	gnutls_hash(h, realm, realmlen);
	gnutls_hash(h, ":", 1);
	gnutls_hash(h, pass, strlen(pass));
	gnutls_hash_deinit(h, key);
	return 0;
}
