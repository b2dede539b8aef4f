/*
 * sim_memo.c: one check of each signature for the whole simulation.
 * Every member verifies every announcement and message it hears, so a
 * room of n spends n checks on one signature, which is most of the
 * simulator's time (81 % in libsodium at 32 members).  A signature's
 * check is a pure function of (key, signature, message), so this
 * definition, which takes the place of libsodium's for the program,
 * remembers each result by a hash of the three and runs Ed25519 only on
 * a triple not seen before.  The room's code and what it decides are
 * unchanged; signing and sealing stay real.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "sim/sim.h"

struct memo_slot {
	uint8_t key[16];
	int used;
	int ok;
};

static struct memo_slot *memo;
static size_t memo_cap, memo_n;
static uint64_t memo_hits, memo_checks;

void
sim_memo_counts(uint64_t *checks, uint64_t *hits)
{
	*checks = memo_checks;
	*hits = memo_hits;
}

void
sim_memo_free(void)
{
	free(memo);
	memo = NULL;
	memo_cap = memo_n = 0;
}

static struct memo_slot *
memo_find(struct memo_slot *t, size_t cap, const uint8_t key[16])
{
	uint64_t h;
	size_t i;

	memcpy(&h, key, sizeof(h));
	for (i = h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].used || memcmp(t[i].key, key, 16) == 0)
			return &t[i];
}

static int
memo_grow(void)
{
	size_t cap = memo_cap ? 2 * memo_cap : 4096;
	struct memo_slot *t = calloc(cap, sizeof(*t));

	if (t == NULL)
		return -1;
	for (size_t i = 0; i < memo_cap; i++)
		if (memo[i].used)
			*memo_find(t, cap, memo[i].key) = memo[i];
	free(memo);
	memo = t;
	memo_cap = cap;
	return 0;
}

int
crypto_sign_verify_detached(const unsigned char *sig, const unsigned char *m,
    unsigned long long mlen, const unsigned char *pk)
{
	crypto_generichash_state st;
	uint8_t key[16];
	struct memo_slot *s;
	int ok;

	crypto_generichash_init(&st, NULL, 0, sizeof(key));
	crypto_generichash_update(&st, pk, crypto_sign_PUBLICKEYBYTES);
	crypto_generichash_update(&st, sig, crypto_sign_BYTES);
	crypto_generichash_update(&st, m, mlen);
	crypto_generichash_final(&st, key, sizeof(key));
	if ((memo_n + 1) * 2 > memo_cap && memo_grow() == -1)
		return crypto_sign_ed25519_verify_detached(sig, m, mlen, pk);
	s = memo_find(memo, memo_cap, key);
	if (s->used) {
		memo_hits++;
		return s->ok;
	}
	memo_checks++;
	ok = crypto_sign_ed25519_verify_detached(sig, m, mlen, pk);
	memcpy(s->key, key, sizeof(key));
	s->used = 1;
	s->ok = ok;
	memo_n++;
	return ok;
}
