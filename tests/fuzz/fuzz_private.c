/*
 * fuzz_private.c: libFuzzer target for node/wire/private.c.  The first
 * byte chooses: a text that ana seals to bo, which bo and ana must open
 * back to the same bytes and carol must not open; or a body received,
 * which must open without a crash, and, when it is not of the private
 * form, be called so by both priv_is and priv_open.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "node/wire/private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct identity ana, bo, carol;
static const uint8_t room[16] = "0123456789abcdef";
#define ID "abcdefghij"

static void
keys(void)
{
	uint8_t seed[crypto_sign_SEEDBYTES];

	if (sodium_init() < 0)
		abort();
	memset(seed, 1, sizeof(seed));
	crypto_sign_seed_keypair(ana.pk, ana.sk, seed);
	memset(seed, 2, sizeof(seed));
	crypto_sign_seed_keypair(bo.pk, bo.sk, seed);
	memset(seed, 3, sizeof(seed));
	crypto_sign_seed_keypair(carol.pk, carol.sk, seed);
}

static void
opens_to(const struct identity *who, const struct buf *b,
    const uint8_t *text, size_t n)
{
	struct buf out;

	buf_init(&out, PAPO_BODY_MAX);
	if (priv_open(&out, who, ana.pk, bo.pk, room, ID, (const char *)b->p,
	    b->len) != PRIV_OK || out.len != n ||
	    (n > 0 && memcmp(out.p, text, n) != 0))
		__builtin_trap();
	buf_free(&out);
}

static void
round_trip(const uint8_t *text, size_t n)
{
	struct buf b, out;
	enum priv_err rc;

	buf_init(&b, PAPO_BODY_MAX);
	rc = priv_seal(&b, &ana, bo.pk, room, ID, (const char *)text, n);
	if (rc != (n > PRIV_TEXT_MAX ? PRIV_TOO_LONG : PRIV_OK))
		__builtin_trap();
	if (rc == PRIV_OK) {
		if (!priv_is((const char *)b.p, b.len))
			__builtin_trap();
		opens_to(&bo, &b, text, n);
		opens_to(&ana, &b, text, n);
		buf_init(&out, PAPO_BODY_MAX);
		if (priv_open(&out, &carol, ana.pk, bo.pk, room, ID,
		    (const char *)b.p, b.len) != PRIV_NOT_OURS || out.len != 0)
			__builtin_trap();
		buf_free(&out);
	}
	buf_free(&b);
}

static void
received(const uint8_t *body, size_t n)
{
	struct buf out;
	enum priv_err rc;

	buf_init(&out, PAPO_BODY_MAX);
	rc = priv_open(&out, &bo, ana.pk, bo.pk, room, ID, (const char *)body,
	    n);
	if ((rc == PRIV_NOT_PRIVATE) != !priv_is((const char *)body, n) ||
	    (rc != PRIV_OK && out.len != 0))
		__builtin_trap();
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;

	if (!ready) {
		keys();
		ready = 1;
	}
	if (size == 0)
		return 0;
	if (data[0] & 1)
		round_trip(data + 1, size - 1);
	else
		received(data + 1, size - 1);
	return 0;
}
