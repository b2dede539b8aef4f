/*
 * crypto.c: the member identity and the keys of a room, on libsodium
 * (docs/PROTOCOL.md, "Identity" and "Keys").  Any thread.  Secret keys are
 * wiped with sodium_memzero whenever they are released; this file never
 * writes a secret anywhere but $PAPO_HOME/identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/b32.h"
#include "lib/fs.h"
#include "node/wire/crypto.h"

_Static_assert(PAPO_KEY_LEN == crypto_sign_PUBLICKEYBYTES &&
    PAPO_KEY_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES &&
    PAPO_KEY_LEN == crypto_generichash_BYTES &&
    PAPO_SIG_LEN == crypto_sign_BYTES &&
    PAPO_SECKEY_LEN == crypto_sign_SECRETKEYBYTES,
    "papo.h's lengths are libsodium's");

/* The KDF context: exactly crypto_kdf_CONTEXTBYTES (8) characters. */
#define SEC_KDF_CONTEXT "paporoom"
#define SEC_KDF_EPOCH_CONTEXT "papoepch"   /* an epoch secret's subkeys */
#define SEC_KDF_RESET_CONTEXT "paporset"   /* QUIC stateless resets */
#define SEC_KDF_SEAL 1
#define SEC_KDF_ROOM_ID 2

int
sec_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

/* The identity file holds the 32-byte Ed25519 seed; the key pair is
 * derived from it, so the file cannot hold a mismatched public key. */
struct identity *
sec_identity_load(char err[PAPO_ERR_LEN], const char *home)
{
	struct identity *id = NULL;
	uint8_t seed[crypto_sign_SEEDBYTES];
	char path[4096];
	char *data = NULL;
	size_t len = 0;
	struct stat st;
	int exists;

	if (sec_init() == -1) {
		snprintf(err, PAPO_ERR_LEN, "libsodium failed to initialise");
		return NULL;
	}
	if (fs_path(path, sizeof(path), home, "identity") == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return NULL;
	}
	if ((id = sodium_malloc(sizeof(*id))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	if (fs_read(err, path, 4096, &data, &len, &exists) == -1) {
		if (exists || fs_home(err, home) == -1)
			goto fail;
		randombytes_buf(seed, sizeof(seed));
		if (fs_write(err, path, seed, sizeof(seed)) == -1)
			goto fail;
	} else {
		if (len != sizeof(seed)) {
			snprintf(err, PAPO_ERR_LEN, "%s is damaged: %zu bytes "
			    "where an identity has %zu", path, len, sizeof(seed));
			goto fail;
		}
		if (stat(path, &st) == 0 && (st.st_mode & 077) != 0) {
			snprintf(err, PAPO_ERR_LEN, "%s can be read by others "
			    "(mode %03o): chmod 600 it", path,
			    (unsigned)(st.st_mode & 0777));
			goto fail;
		}
		memcpy(seed, data, sizeof(seed));
	}
	crypto_sign_seed_keypair(id->pk, id->sk, seed);
	sodium_memzero(seed, sizeof(seed));
	if (data != NULL) {
		sodium_memzero(data, len);
		free(data);
	}
	return id;
fail:
	sodium_memzero(seed, sizeof(seed));
	if (data != NULL) {
		sodium_memzero(data, len);
		free(data);
	}
	sec_identity_free(id);
	return NULL;
}

void
sec_identity_free(struct identity *id)
{
	/* sodium_free wipes the memory before releasing it. */
	if (id != NULL)
		sodium_free(id);
}

void
sec_id_format(const uint8_t pk[PAPO_KEY_LEN], char out[PAPO_ID_LEN + 1])
{
	b32_encode(pk, PAPO_KEY_LEN, out);
}

int
sec_id_parse(const char *s, uint8_t pk[PAPO_KEY_LEN])
{
	if (strlen(s) != PAPO_ID_LEN)
		return -1;
	for (size_t i = 0; i < PAPO_ID_LEN; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return -1;    /* one spelling per id */
	return b32_decode(s, PAPO_ID_LEN, pk, PAPO_KEY_LEN, NULL) ==
	    PAPO_KEY_LEN ? 0 : -1;
}

static const char sec_alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

void
sec_msgid_new(char out[PAPO_MSGID_LEN + 1])
{
	for (size_t i = 0; i < PAPO_MSGID_LEN; i++)
		out[i] = sec_alphabet[randombytes_uniform(32)];
	out[PAPO_MSGID_LEN] = '\0';
}

int
sec_msgid_valid(const char *s, uint64_t *v)
{
	uint64_t acc = 0;
	size_t i;

	for (i = 0; i < PAPO_MSGID_LEN; i++) {
		const char *p;

		if (s[i] == '\0' || (p = strchr(sec_alphabet, s[i])) == NULL)
			return 0;
		acc = (acc << 5) | (uint64_t)(p - sec_alphabet);
	}
	if (s[i] != '\0')
		return 0;
	if (v != NULL)
		*v = acc;
	return 1;
}

void
sec_msgid_format(uint64_t v, char out[PAPO_MSGID_LEN + 1])
{
	for (size_t i = PAPO_MSGID_LEN; i > 0; i--, v >>= 5)
		out[i - 1] = sec_alphabet[v & 31];
	out[PAPO_MSGID_LEN] = '\0';
}

void
sec_room_keys(const uint8_t secret[PAPO_KEY_LEN], struct room_keys *out)
{
	crypto_kdf_derive_from_key(out->seal, sizeof(out->seal), SEC_KDF_SEAL,
	    SEC_KDF_CONTEXT, secret);
	crypto_kdf_derive_from_key(out->id, sizeof(out->id), SEC_KDF_ROOM_ID,
	    SEC_KDF_CONTEXT, secret);
}

void
sec_reset_secret(const struct identity *id, uint8_t out[PAPO_KEY_LEN])
{
	/* The seed is the first half of libsodium's secret key. */
	crypto_kdf_derive_from_key(out, PAPO_KEY_LEN, 1, SEC_KDF_RESET_CONTEXT, id->sk);
}

void
sec_epoch_keys(const struct room_keys *room, const uint8_t secret[PAPO_KEY_LEN],
    struct room_keys *out)
{
	crypto_kdf_derive_from_key(out->seal, sizeof(out->seal), SEC_KDF_SEAL,
	    SEC_KDF_EPOCH_CONTEXT, secret);
	memcpy(out->id, room->id, sizeof(out->id));
}

int
sec_box_seal(uint8_t out[SEC_BOX_LEN], const uint8_t secret[PAPO_KEY_LEN],
    const uint8_t member[PAPO_KEY_LEN])
{
	uint8_t x[crypto_box_PUBLICKEYBYTES];

	if (crypto_sign_ed25519_pk_to_curve25519(x, member) != 0)
		return -1;
	return crypto_box_seal(out, secret, PAPO_KEY_LEN, x) == 0 ? 0 : -1;
}

int
sec_box_open(uint8_t secret[PAPO_KEY_LEN], const uint8_t in[SEC_BOX_LEN],
    const struct identity *me)
{
	uint8_t xpk[crypto_box_PUBLICKEYBYTES], xsk[crypto_box_SECRETKEYBYTES];
	int rc = -1;

	if (crypto_sign_ed25519_pk_to_curve25519(xpk, me->pk) == 0 &&
	    crypto_sign_ed25519_sk_to_curve25519(xsk, me->sk) == 0 &&
	    crypto_box_seal_open(secret, in, SEC_BOX_LEN, xpk, xsk) == 0)
		rc = 0;
	sodium_memzero(xsk, sizeof(xsk));
	return rc;
}

void
sec_room_id_format(const struct room_keys *k, char out[PAPO_ROOMID_LEN + 1])
{
	b32_encode(k->id, sizeof(k->id), out);
}
