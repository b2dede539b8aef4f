/*
 * sim_rand.c: the simulator's randomness, all of it from the seed.
 * libsodium's randombytes (identities, nonces, the order members dial
 * in, epochs) is a ChaCha20 stream keyed by the seed, nonce 0, installed
 * before sodium_init; the network's decisions (jitter, loss) come from
 * the same key under nonce 1, so that changing a network setting does not
 * change the members' keys.
 */
#include <string.h>

#include <sodium.h>

#include "sim/sim.h"

static struct sim_rng sim_members_rng;

void
sim_rng_init(struct sim_rng *r, uint64_t seed, uint64_t nonce)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 8; i++)
		r->key[i] = (uint8_t)(seed >> (8 * i));
	memcpy(r->key + 8, "papo-sim", 8);
	r->nonce = nonce;
	r->used = sizeof(r->buf);
}

static void
sim_rng_bytes(struct sim_rng *r, uint8_t *out, size_t n)
{
	static const uint8_t zero[64];
	uint8_t nonce[crypto_stream_chacha20_NONCEBYTES];

	while (n > 0) {
		size_t k;

		if (r->used == sizeof(r->buf)) {
			memset(nonce, 0, sizeof(nonce));
			memcpy(nonce, &r->nonce, sizeof(r->nonce));
			crypto_stream_chacha20_xor_ic(r->buf, zero, sizeof(zero),
			    nonce, r->block++, r->key);
			r->used = 0;
		}
		k = sizeof(r->buf) - r->used;
		if (k > n)
			k = n;
		memcpy(out, r->buf + r->used, k);
		r->used += k;
		out += k;
		n -= k;
	}
}

uint64_t
sim_rng_u64(struct sim_rng *r)
{
	uint64_t v;

	sim_rng_bytes(r, (uint8_t *)&v, sizeof(v));
	return v;
}

static const char *
sim_rand_name(void)
{
	return "papo-sim";
}

static uint32_t
sim_rand_random(void)
{
	uint32_t v;

	sim_rng_bytes(&sim_members_rng, (uint8_t *)&v, sizeof(v));
	return v;
}

static void
sim_rand_stir(void)
{
}

/* Without modulo bias, as libsodium's own: rejects the low values. */
static uint32_t
sim_rand_uniform(const uint32_t upper)
{
	uint32_t min, r;

	if (upper < 2)
		return 0;
	min = (1u + ~upper) % upper;
	do
		r = sim_rand_random();
	while (r < min);
	return r % upper;
}

static void
sim_rand_buf(void *const buf, const size_t size)
{
	sim_rng_bytes(&sim_members_rng, buf, size);
}

static int
sim_rand_close(void)
{
	return 0;
}

int
sim_rand_install(uint64_t seed)
{
	static struct randombytes_implementation impl = {
		sim_rand_name, sim_rand_random, sim_rand_stir,
		sim_rand_uniform, sim_rand_buf, sim_rand_close
	};

	sim_rng_init(&sim_members_rng, seed, 0);
	if (randombytes_set_implementation(&impl) != 0)
		return -1;
	return sodium_init() < 0 ? -1 : 0;
}
