/*
 * blob_file.c: the lowest of the blob store's files (blob_int.h): the
 * format's pieces (chunk sizes and offsets, references, the sealing of a
 * chunk, the root, the leaves), the folder's file operations, REF.have
 * read back, and the quota's count.  The thread that owns the store.
 */
#include <dirent.h>
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
#include "node/store/blob_int.h"

_Static_assert(BLOB_REF_LEN == PAPO_ID_LEN, "a reference is as long as an id");
_Static_assert(BLOB_CHUNKS_MAX * (unsigned long long)BLOB_CHUNK ==
    BLOB_SIZE_MAX, "the largest file is whole chunks");
_Static_assert(BLOB_NONCE_LEN == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
    "XChaCha20's nonce");
_Static_assert(BLOB_TAG_LEN == crypto_aead_xchacha20poly1305_ietf_ABYTES,
    "Poly1305's tag");
_Static_assert(PAPO_KEY_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES,
    "a file key is an AEAD key");


void
blob_put_u64(uint8_t *p, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 7; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

uint32_t
blob_chunks(uint64_t size)
{
	return (uint32_t)((size + BLOB_CHUNK - 1) / BLOB_CHUNK);
}

uint64_t
blob_stored_size(uint64_t size)
{
	return size + (uint64_t)blob_chunks(size) * BLOB_OVERHEAD;
}

/* Plain bytes of chunk i of a file of size bytes. */
size_t
blob_chunk_plain(uint64_t size, uint32_t i)
{
	uint64_t left = size - (uint64_t)i * BLOB_CHUNK;

	return left < BLOB_CHUNK ? (size_t)left : BLOB_CHUNK;
}

uint64_t
blob_chunk_off(uint32_t i)
{
	return (uint64_t)i * BLOB_STORED_MAX;
}

/* A reference's text is exactly BLOB_REF_LEN base32 characters of a root;
 * anything else (a path, a dot) never reaches a file name. */
int
blob_ref_root(const char *ref, uint8_t root[PAPO_KEY_LEN])
{
	size_t bad;

	if (ref == NULL || strnlen(ref, BLOB_REF_LEN + 1) != BLOB_REF_LEN)
		return -1;
	for (size_t k = 0; k < BLOB_REF_LEN; k++)
		if (!(ref[k] >= 'a' && ref[k] <= 'z') &&
		    !(ref[k] >= '2' && ref[k] <= '7'))
			return -1;
	return b32_decode(ref, BLOB_REF_LEN, root, PAPO_KEY_LEN, &bad) ==
	    PAPO_KEY_LEN ? 0 : -1;
}

int
blob_ref_check(char err[PAPO_ERR_LEN], const char *ref)
{
	uint8_t root[PAPO_KEY_LEN];

	if (blob_ref_root(ref, root) == -1) {
		err_set(err, "not a file reference (%d base32 characters): "
		    "%.60s", BLOB_REF_LEN, ref ? ref : "(null)");
		return -1;
	}
	return 0;
}

void
blob_path(const struct blob_store *bs, const char *ref, const char *suffix,
    char out[BLOB_PATH_MAX])
{
	/* blob_open checked that the folder's name leaves room for these. */
	snprintf(out, BLOB_PATH_MAX, "%s/%s%s", bs->dir, ref, suffix);
}

int
blob_exists(const char *path, uint64_t *size)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return 0;
	if (size != NULL)
		*size = (uint64_t)st.st_size;
	return 1;
}



int
blob_read_exact(char err[PAPO_ERR_LEN], const char *path, void *p, size_t n,
    uint64_t off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd == -1 ? -1 : fs_pread(fd, p, n, off);
	int e = errno;

	if (fd != -1)
		close(fd);
	if (r == -1 || (size_t)r != n) {
		err_set(err, "cannot read %s: %s", path,
		    r == -1 ? strerror(e) : "file too short");
		return -1;
	}
	return 0;
}

/* The file key's two subkeys: EK encrypts, NK makes the nonces. */
void
blob_subkeys(const uint8_t key[PAPO_KEY_LEN], uint8_t ek[PAPO_KEY_LEN],
    uint8_t nk[PAPO_KEY_LEN])
{
	crypto_kdf_derive_from_key(ek, PAPO_KEY_LEN, 1, BLOB_KDF_CTX, key);
	crypto_kdf_derive_from_key(nk, PAPO_KEY_LEN, 2, BLOB_KDF_CTX, key);
}

static void
chunk_ad(uint8_t ad[16], uint32_t i, uint64_t size)
{
	blob_put_u64(ad, i);
	blob_put_u64(ad + 8, size);
}

/* Stored chunk i of plen plain bytes into out; returns its length. */
size_t
blob_seal(const uint8_t ek[PAPO_KEY_LEN], const uint8_t nk[PAPO_KEY_LEN],
    uint32_t i, uint64_t size, const uint8_t *plain, size_t plen,
    uint8_t *out)
{
	crypto_generichash_state h;
	uint8_t ad[16];
	unsigned long long clen;

	chunk_ad(ad, i, size);
	crypto_generichash_init(&h, nk, PAPO_KEY_LEN, BLOB_NONCE_LEN);
	crypto_generichash_update(&h, ad, sizeof(ad));
	crypto_generichash_update(&h, plain, plen);
	crypto_generichash_final(&h, out, BLOB_NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(out + BLOB_NONCE_LEN, &clen,
	    plain, plen, ad, sizeof(ad), NULL, out, ek);
	return BLOB_NONCE_LEN + (size_t)clen;
}

/* Opens stored chunk i (slen bytes) into plain; -1 when it does not open
 * under ek. */
int
blob_unseal(const uint8_t ek[PAPO_KEY_LEN], uint32_t i, uint64_t size,
    const uint8_t *stored, size_t slen, uint8_t *plain)
{
	uint8_t ad[16];
	unsigned long long plen;

	if (slen < BLOB_OVERHEAD)
		return -1;
	chunk_ad(ad, i, size);
	return crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL,
	    stored + BLOB_NONCE_LEN, slen - BLOB_NONCE_LEN, ad, sizeof(ad),
	    stored, ek);
}

void
blob_root_init(crypto_generichash_state *h, uint64_t size)
{
	uint8_t s[8];

	blob_put_u64(s, size);
	crypto_generichash_init(h, NULL, 0, PAPO_KEY_LEN);
	crypto_generichash_update(h, (const uint8_t *)BLOB_LABEL,
	    strlen(BLOB_LABEL));
	crypto_generichash_update(h, s, sizeof(s));
}



int
blob_quota_check(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    uint64_t need, const char *what)
{
	uint64_t used;

	if (bs->quota == 0)
		return 0;
	used = blob_used(bs);
	if (used + need <= bs->quota)
		return 0;
	err_set(err, "%s needs %llu bytes but the file store's limit is %llu "
	    "bytes and it holds %llu (it would hold %llu)", what,
	    (unsigned long long)need, (unsigned long long)bs->quota,
	    (unsigned long long)used, (unsigned long long)(used + need));
	return -1;
}

int
blob_have_load(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, struct have *hv)
{
	char path[BLOB_PATH_MAX];
	char *data = NULL;
	size_t len;
	int ex;

	memset(hv, 0, sizeof(*hv));
	blob_path(bs, ref, ".have", path);
	if (fs_read(err, path, BLOB_HAVE_HEAD + BLOB_CHUNKS_MAX / 8, &data,
	    &len, &ex) == -1) {
		if (!ex)
			err_set(err, "no file %s is being fetched here", ref);
		return -1;
	}
	if (len < BLOB_HAVE_HEAD)
		goto bad;
	hv->size = get_u64((uint8_t *)data);
	if (hv->size > BLOB_SIZE_MAX)
		goto bad;
	hv->n = blob_chunks(hv->size);
	hv->len = (hv->n + 7) / 8;
	if (len != BLOB_HAVE_HEAD + hv->len)
		goto bad;
	hv->bits = malloc(hv->len ? hv->len : 1);
	if (hv->bits == NULL) {
		free(data);
		err_set(err, "out of memory");
		return -1;
	}
	memcpy(hv->bits, data + BLOB_HAVE_HEAD, hv->len);
	free(data);
	return 0;
bad:
	free(data);
	err_set(err, "%s is damaged", path);
	return -1;
}

int
blob_have_bit(const struct have *hv, uint32_t i)
{
	return hv->bits[i / 8] >> (i % 8) & 1;
}

/*
 * The complete blob ref's plain size and chunk count, from the lengths of
 * REF and REF.leaves (the stored size grows strictly with the plain size,
 * so it names one).
 */
int
blob_complete_size(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint64_t *size, uint32_t *n)
{
	char path[BLOB_PATH_MAX], lpath[BLOB_PATH_MAX];
	uint64_t slen, llen, s;

	if (blob_ref_check(err, ref) == -1)
		return -1;
	blob_path(bs, ref, "", path);
	blob_path(bs, ref, ".leaves", lpath);
	if (!blob_exists(path, &slen) || !blob_exists(lpath, &llen)) {
		err_set(err, "no file %s here", ref);
		return -1;
	}
	if (llen % PAPO_KEY_LEN != 0 || llen > BLOB_LEAVES_MAX)
		goto bad;
	*n = (uint32_t)(llen / PAPO_KEY_LEN);
	if (slen < (uint64_t)*n * BLOB_OVERHEAD)
		goto bad;
	s = slen - (uint64_t)*n * BLOB_OVERHEAD;
	if (blob_chunks(s) != *n)
		goto bad;
	*size = s;
	return 0;
bad:
	err_set(err, "file %s is damaged: its length does not match its "
	    "leaves", ref);
	return -1;
}

/* What a blob counts against the quota (0 when it is not here). */
uint64_t
blob_bytes(const struct blob_store *bs, const char *ref)
{
	char path[BLOB_PATH_MAX], err[PAPO_ERR_LEN];
	uint64_t s, l = 0, total = 0;
	struct have hv;

	blob_path(bs, ref, ".leaves", path);
	blob_exists(path, &l);
	blob_path(bs, ref, "", path);
	if (blob_exists(path, &s))
		return s + l;
	if (blob_have_load(err, bs, ref, &hv) == 0) {
		total = blob_stored_size(hv.size) + l;
		free(hv.bits);
	}
	return total;
}

void
blob_unlink(const struct blob_store *bs, const char *ref)
{
	static const char *const order[] = {"", ".part", ".have", ".leaves"};
	char path[BLOB_PATH_MAX];

	/* The leaves go last: a blob is there only with its leaves, so a
	 * crash midway leaves what open tidies away. */
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		blob_path(bs, ref, order[k], path);
		unlink(path);
	}
}

/* Summed from the folder each time, not kept: the node thread and a
 * worker may each hold the folder open (blob_attach), and each sees what
 * the other added. */
uint64_t
blob_used(const struct blob_store *bs)
{
	char ref[BLOB_REF_LEN + 1];
	struct dirent *de;
	uint64_t used = 0;
	DIR *d;

	if ((d = opendir(bs->dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != BLOB_REF_LEN + 7 ||
		    strcmp(de->d_name + BLOB_REF_LEN, ".leaves") != 0)
			continue;
		memcpy(ref, de->d_name, BLOB_REF_LEN);
		ref[BLOB_REF_LEN] = '\0';
		used += blob_bytes(bs, ref);
	}
	closedir(d);
	return used;
}

void
blob_key_new(uint8_t key[PAPO_KEY_LEN])
{
	crypto_kdf_keygen(key);
}

int
blob_has(struct blob_store *bs, const char *ref)
{
	char err[PAPO_ERR_LEN];
	uint64_t size;
	uint32_t n;

	return blob_complete_size(err, bs, ref, &size, &n) == 0;
}

int
blob_size(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint64_t *size)
{
	uint32_t n;

	return blob_complete_size(err, bs, ref, size, &n);
}

/* Checks stored chunk i (slen bytes) against its leaf in REF.leaves. */
int
blob_leaf_match(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *stored, size_t slen,
    int *match)
{
	char path[BLOB_PATH_MAX];
	uint8_t want[PAPO_KEY_LEN], got[PAPO_KEY_LEN];

	blob_path(bs, ref, ".leaves", path);
	if (blob_read_exact(err, path, want, PAPO_KEY_LEN,
	    (uint64_t)i * PAPO_KEY_LEN) == -1)
		return -1;
	crypto_generichash(got, PAPO_KEY_LEN, stored, slen, NULL, 0);
	*match = sodium_memcmp(want, got, PAPO_KEY_LEN) == 0;
	return 0;
}
