/*
 * private.c: a private message's body, sealed by its author to its
 * addressee and opened by either (private.h says the form).  Any
 * thread.  Secrets (the X25519 secret key, the shared key, the padded
 * plain text) are wiped before return.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/utf8.h"
#include "node/wire/private.h"

#define PRIV_LABEL "papo private v1"
#define PRIV_AD_LEN (sizeof(PRIV_LABEL) + 16 + PAPO_MSGID_LEN + \
	2 * PAPO_KEY_LEN)
#define PRIV_NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define PRIV_TAG crypto_aead_xchacha20poly1305_ietf_ABYTES
/* The longest sealed line: nonce, the padded text at its longest, tag. */
#define PRIV_SEALED_MAX (PRIV_NONCE + PRIV_TEXT_MAX + PRIV_PAD + PRIV_TAG)

#define PRIV_START PRIV_HEAD "\n\n" PRIV_PREFIX

_Static_assert(sizeof(PRIV_START) + sizeof(PRIV_SUFFIX) +
    (PRIV_SEALED_MAX + 2) / 3 * 4 <= PAPO_BODY_MAX,
    "a private body at its longest fits a message body");

static const char *const priv_errors[] = {
	[PRIV_OK] = "ok",
	[PRIV_NOT_PRIVATE] = "not a private message",
	[PRIV_NOT_OURS] = "a private message between two other members",
	[PRIV_DAMAGED] = ("a private message that does not open (damaged, "
	    "or moved from another message)"),
	[PRIV_BAD_KEY] = "a member id that is no Ed25519 key",
	[PRIV_TOO_LONG] = "too long for a private message",
	[PRIV_NO_MEMORY] = "out of memory",
};

const char *
priv_strerror(enum priv_err e)
{
	if ((size_t)e >= sizeof(priv_errors) / sizeof(priv_errors[0]))
		return "unknown error";
	return priv_errors[e];
}

/* The key me shares with peer; -1 when either key is no Ed25519 key. */
static int
priv_key(uint8_t key[crypto_box_BEFORENMBYTES], const struct identity *me,
    const uint8_t peer[PAPO_KEY_LEN])
{
	uint8_t xpk[crypto_box_PUBLICKEYBYTES], xsk[crypto_box_SECRETKEYBYTES];
	int rc = -1;

	if (crypto_sign_ed25519_pk_to_curve25519(xpk, peer) == 0 &&
	    crypto_sign_ed25519_sk_to_curve25519(xsk, me->sk) == 0 &&
	    crypto_box_beforenm(key, xpk, xsk) == 0)
		rc = 0;
	sodium_memzero(xsk, sizeof(xsk));
	return rc;
}

static void
priv_ad(uint8_t ad[PRIV_AD_LEN], const uint8_t room_id[16],
    const char id[PAPO_MSGID_LEN + 1], const uint8_t from[PAPO_KEY_LEN],
    const uint8_t to[PAPO_KEY_LEN])
{
	uint8_t *p = ad;

	memcpy(p, PRIV_LABEL, sizeof(PRIV_LABEL));   /* with its NUL */
	p += sizeof(PRIV_LABEL);
	memcpy(p, room_id, 16);
	p += 16;
	memcpy(p, id, PAPO_MSGID_LEN);
	p += PAPO_MSGID_LEN;
	memcpy(p, from, PAPO_KEY_LEN);
	memcpy(p + PAPO_KEY_LEN, to, PAPO_KEY_LEN);
}

enum priv_err
priv_seal(struct buf *out, const struct identity *me,
    const uint8_t to[PAPO_KEY_LEN], const uint8_t room_id[16],
    const char id[PAPO_MSGID_LEN + 1], const char *in, size_t n)
{
	uint8_t key[crypto_box_BEFORENMBYTES], ad[PRIV_AD_LEN];
	uint8_t *plain, *sealed;
	char *line;
	unsigned long long clen;
	size_t padded, line_len;
	enum priv_err rc = PRIV_OK;

	if (n > PRIV_TEXT_MAX)
		return PRIV_TOO_LONG;
	if (priv_key(key, me, to) == -1)
		return PRIV_BAD_KEY;
	padded = (n / PRIV_PAD + 1) * PRIV_PAD;
	line_len = sodium_base64_encoded_len(PRIV_NONCE + padded + PRIV_TAG,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	if ((plain = malloc(padded + PRIV_NONCE + padded + PRIV_TAG +
	    line_len)) == NULL) {
		sodium_memzero(key, sizeof(key));
		return PRIV_NO_MEMORY;
	}
	sealed = plain + padded;
	line = (char *)sealed + PRIV_NONCE + padded + PRIV_TAG;
	memcpy(plain, in, n);
	(void)sodium_pad(&padded, plain, n, PRIV_PAD, padded);   /* fits */
	priv_ad(ad, room_id, id, me->pk, to);
	randombytes_buf(sealed, PRIV_NONCE);
	crypto_aead_xchacha20poly1305_ietf_encrypt(sealed + PRIV_NONCE, &clen,
	    plain, padded, ad, sizeof(ad), NULL, sealed, key);
	sodium_bin2base64(line, line_len, sealed, PRIV_NONCE + clen,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	if (buf_add(out, PRIV_START, sizeof(PRIV_START) - 1) == -1 ||
	    buf_add(out, line, strlen(line)) == -1 ||
	    buf_add(out, PRIV_SUFFIX, sizeof(PRIV_SUFFIX) - 1) == -1)
		rc = PRIV_TOO_LONG;
	sodium_memzero(key, sizeof(key));
	sodium_memzero(plain, padded);
	free(plain);
	return rc;
}

/* Where the sealed line's base64 starts in body, and its length, or
 * NULL. */
static const char *
priv_line(const char *body, size_t n, size_t *len)
{
	static const char start[] = PRIV_START;
	const size_t a = sizeof(start) - 1, z = sizeof(PRIV_SUFFIX) - 1;

	if (n <= a + z || memcmp(body, start, a) != 0 ||
	    memcmp(body + n - z, PRIV_SUFFIX, z) != 0)
		return NULL;
	*len = n - a - z;
	return body + a;
}

int
priv_is(const char *body, size_t n)
{
	size_t len;

	return priv_line(body, n, &len) != NULL;
}

enum priv_err
priv_open(struct buf *out, const struct identity *me,
    const uint8_t from[PAPO_KEY_LEN], const uint8_t to[PAPO_KEY_LEN],
    const uint8_t room_id[16], const char id[PAPO_MSGID_LEN + 1],
    const char *body, size_t n)
{
	uint8_t *sealed, *plain;
	uint8_t key[crypto_box_BEFORENMBYTES], ad[PRIV_AD_LEN];
	const uint8_t *peer;
	const char *b64;
	unsigned long long plen;
	size_t len, slen, unpadded;
	enum priv_err rc = PRIV_DAMAGED;

	if ((b64 = priv_line(body, n, &len)) == NULL)
		return PRIV_NOT_PRIVATE;
	if (sodium_memcmp(me->pk, from, PAPO_KEY_LEN) == 0)
		peer = to;
	else if (sodium_memcmp(me->pk, to, PAPO_KEY_LEN) == 0)
		peer = from;
	else
		return PRIV_NOT_OURS;
	if (len > (PRIV_SEALED_MAX + 2) / 3 * 4)
		return PRIV_DAMAGED;
	if (priv_key(key, me, peer) == -1)
		return PRIV_BAD_KEY;
	if ((sealed = malloc(2 * PRIV_SEALED_MAX)) == NULL) {
		sodium_memzero(key, sizeof(key));
		return PRIV_NO_MEMORY;
	}
	plain = sealed + PRIV_SEALED_MAX;
	if (sodium_base642bin(sealed, PRIV_SEALED_MAX, b64, len, NULL, &slen,
	    NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    slen < PRIV_NONCE + PRIV_TAG)
		goto done;
	priv_ad(ad, room_id, id, from, to);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL,
	    sealed + PRIV_NONCE, slen - PRIV_NONCE, ad, sizeof(ad), sealed,
	    key) == 0 &&
	    sodium_unpad(&unpadded, plain, plen, PRIV_PAD) == 0)
		rc = buf_add(out, plain, unpadded) == 0 ? PRIV_OK :
		    PRIV_TOO_LONG;
done:
	sodium_memzero(key, sizeof(key));
	sodium_memzero(plain, PRIV_SEALED_MAX);
	free(sealed);
	return rc;
}

enum priv_err
priv_view(const struct identity *me, const uint8_t room_id[16],
    const struct frame_msg *m, struct frame_msg *view, struct buf *inner)
{
	enum priv_err rc;

	buf_init(inner, PRIV_TEXT_MAX + 1);
	if (!m->has_to || m->body == NULL || !priv_is(m->body, m->body_len))
		return PRIV_NOT_PRIVATE;
	if (me == NULL)
		return PRIV_NOT_OURS;
	rc = priv_open(inner, me, m->from, m->to, room_id, m->id, m->body,
	    m->body_len);
	/* What the author sealed is checked as a body is when it arrives
	 * in the clear: UTF-8 without a NUL. */
	if (rc == PRIV_OK && inner->len > 0 &&
	    (!utf8_valid((const char *)inner->p, inner->len) ||
	    memchr(inner->p, '\0', inner->len) != NULL))
		rc = PRIV_DAMAGED;
	if (rc == PRIV_OK && buf_add(inner, "", 1) == -1)
		rc = PRIV_TOO_LONG;
	if (rc != PRIV_OK) {
		buf_free(inner);
		return rc;
	}
	*view = *m;
	view->body = (char *)inner->p;
	view->body_len = inner->len - 1;
	return PRIV_OK;
}
