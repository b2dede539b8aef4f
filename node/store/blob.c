/*
 * blob.c: the store of shared files, one folder of content-addressed,
 * encrypted blobs (the format and the files are described in blob.h).
 * It owns the folder and the count of bytes it holds; it keeps no file
 * open between calls and no table of blobs: the folder is the state, so
 * a killed process leaves nothing in memory to lose.  One thread runs it.
 *
 * It must never take a half-written file for a blob: REF appears only by
 * rename of a fsync'd file whose every chunk was made here or verified
 * against its leaf, and a chunk of a fetch counts as written only once
 * its bit in REF.have is set, after the chunk itself is on disk.  It must
 * never hold a file in memory: chunks go through one buffer at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/b32.h"
#include "lib/fs.h"
#include "node/store/blob.h"

_Static_assert(BLOB_REF_LEN == PAPO_ID_LEN, "a reference is as long as an id");
_Static_assert(BLOB_CHUNKS_MAX * (unsigned long long)BLOB_CHUNK ==
    BLOB_SIZE_MAX, "the largest file is whole chunks");
_Static_assert(BLOB_NONCE_LEN == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
    "XChaCha20's nonce");
_Static_assert(BLOB_TAG_LEN == crypto_aead_xchacha20poly1305_ietf_ABYTES,
    "Poly1305's tag");
_Static_assert(PAPO_KEY_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES,
    "a file key is an AEAD key");

#define BLOB_PATH_MAX 4096
#define BLOB_KDF_CTX "papoblob"
#define BLOB_HAVE_HEAD 8               /* REF.have: u64 SIZE, then bits */

struct blob_store {
	char *dir;
	uint64_t quota;                 /* 0: no limit */
	uint64_t used;
};

static void
blob_err(char err[PAPO_ERR_LEN], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, PAPO_ERR_LEN, fmt, ap);
	va_end(ap);
}

static void
put_u64(uint8_t *p, uint64_t v)
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
static size_t
chunk_plain(uint64_t size, uint32_t i)
{
	uint64_t left = size - (uint64_t)i * BLOB_CHUNK;

	return left < BLOB_CHUNK ? (size_t)left : BLOB_CHUNK;
}

static uint64_t
chunk_off(uint32_t i)
{
	return (uint64_t)i * BLOB_STORED_MAX;
}

/* A reference's text is exactly BLOB_REF_LEN base32 characters of a root;
 * anything else (a path, a dot) never reaches a file name. */
static int
ref_root(const char *ref, uint8_t root[PAPO_KEY_LEN])
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

static int
ref_check(char err[PAPO_ERR_LEN], const char *ref)
{
	uint8_t root[PAPO_KEY_LEN];

	if (ref_root(ref, root) == -1) {
		blob_err(err, "not a file reference (%d base32 characters): %.60s",
		    BLOB_REF_LEN, ref ? ref : "(null)");
		return -1;
	}
	return 0;
}

static void
path_of(const struct blob_store *bs, const char *ref, const char *suffix,
    char out[BLOB_PATH_MAX])
{
	/* blob_open checked that the folder's name leaves room for these. */
	snprintf(out, BLOB_PATH_MAX, "%s/%s%s", bs->dir, ref, suffix);
}

static int
exists(const char *path, uint64_t *size)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return 0;
	if (size != NULL)
		*size = (uint64_t)st.st_size;
	return 1;
}

static int
write_at(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Reads up to n bytes at off; returns the count (short only at the end of
 * the file), or -1. */
static ssize_t
read_at(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, c + got, n - got, (off_t)(off + got));

		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int
read_exact(char err[PAPO_ERR_LEN], const char *path, void *p, size_t n,
    uint64_t off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd == -1 ? -1 : read_at(fd, p, n, off);
	int e = errno;

	if (fd != -1)
		close(fd);
	if (r == -1 || (size_t)r != n) {
		blob_err(err, "cannot read %s: %s", path,
		    r == -1 ? strerror(e) : "file too short");
		return -1;
	}
	return 0;
}

/* The file key's two subkeys: EK encrypts, NK makes the nonces. */
static void
subkeys(const uint8_t key[PAPO_KEY_LEN], uint8_t ek[PAPO_KEY_LEN],
    uint8_t nk[PAPO_KEY_LEN])
{
	crypto_kdf_derive_from_key(ek, PAPO_KEY_LEN, 1, BLOB_KDF_CTX, key);
	crypto_kdf_derive_from_key(nk, PAPO_KEY_LEN, 2, BLOB_KDF_CTX, key);
}

static void
chunk_ad(uint8_t ad[16], uint32_t i, uint64_t size)
{
	put_u64(ad, i);
	put_u64(ad + 8, size);
}

/* Stored chunk i of plen plain bytes into out; returns its length. */
static size_t
chunk_seal(const uint8_t ek[PAPO_KEY_LEN], const uint8_t nk[PAPO_KEY_LEN],
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
static int
chunk_open(const uint8_t ek[PAPO_KEY_LEN], uint32_t i, uint64_t size,
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

static void
root_init(crypto_generichash_state *h, uint64_t size)
{
	uint8_t s[8];

	put_u64(s, size);
	crypto_generichash_init(h, NULL, 0, PAPO_KEY_LEN);
	crypto_generichash_update(h, (const uint8_t *)BLOB_LABEL,
	    strlen(BLOB_LABEL));
	crypto_generichash_update(h, s, sizeof(s));
}

static void
quota_add(struct blob_store *bs, uint64_t n)
{
	bs->used += n;
}

static void
quota_sub(struct blob_store *bs, uint64_t n)
{
	bs->used = n > bs->used ? 0 : bs->used - n;
}

static int
quota_check(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    uint64_t need, const char *what)
{
	if (bs->quota == 0 || bs->used + need <= bs->quota)
		return 0;
	blob_err(err, "%s needs %llu bytes but the file store's limit is %llu "
	    "bytes and it holds %llu (it would hold %llu)", what,
	    (unsigned long long)need, (unsigned long long)bs->quota,
	    (unsigned long long)bs->used,
	    (unsigned long long)(bs->used + need));
	return -1;
}

/* REF.have of a blob being fetched: its size, chunk count and bits
 * (malloc'd). */
struct have {
	uint64_t size;
	uint32_t n;
	uint8_t *bits;
	size_t len;                     /* bytes of bits */
};

static int
have_load(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, struct have *hv)
{
	char path[BLOB_PATH_MAX];
	char *data = NULL;
	size_t len;
	int ex;

	memset(hv, 0, sizeof(*hv));
	path_of(bs, ref, ".have", path);
	if (fs_read(err, path, BLOB_HAVE_HEAD + BLOB_CHUNKS_MAX / 8, &data,
	    &len, &ex) == -1) {
		if (!ex)
			blob_err(err, "no file %s is being fetched here", ref);
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
		blob_err(err, "out of memory");
		return -1;
	}
	memcpy(hv->bits, data + BLOB_HAVE_HEAD, hv->len);
	free(data);
	return 0;
bad:
	free(data);
	blob_err(err, "%s is damaged", path);
	return -1;
}

static int
have_bit(const struct have *hv, uint32_t i)
{
	return hv->bits[i / 8] >> (i % 8) & 1;
}

/*
 * The complete blob ref's plain size and chunk count, from the lengths of
 * REF and REF.leaves (the stored size grows strictly with the plain size,
 * so it names one).
 */
static int
complete_size(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint64_t *size, uint32_t *n)
{
	char path[BLOB_PATH_MAX], lpath[BLOB_PATH_MAX];
	uint64_t slen, llen, s;

	if (ref_check(err, ref) == -1)
		return -1;
	path_of(bs, ref, "", path);
	path_of(bs, ref, ".leaves", lpath);
	if (!exists(path, &slen) || !exists(lpath, &llen)) {
		blob_err(err, "no file %s here", ref);
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
	blob_err(err, "file %s is damaged: its length does not match its "
	    "leaves", ref);
	return -1;
}

/* What a blob counts against the quota (0 when it is not here). */
static uint64_t
blob_bytes(const struct blob_store *bs, const char *ref)
{
	char path[BLOB_PATH_MAX], err[PAPO_ERR_LEN];
	uint64_t s, l = 0, total = 0;
	struct have hv;

	path_of(bs, ref, ".leaves", path);
	exists(path, &l);
	path_of(bs, ref, "", path);
	if (exists(path, &s))
		return s + l;
	if (have_load(err, bs, ref, &hv) == 0) {
		total = blob_stored_size(hv.size) + l;
		free(hv.bits);
	}
	return total;
}

static void
unlink_blob(const struct blob_store *bs, const char *ref)
{
	static const char *const order[] = {"", ".part", ".have", ".leaves"};
	char path[BLOB_PATH_MAX];

	/* The leaves go last: a blob is there only with its leaves, so a
	 * crash midway leaves what open tidies away. */
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		path_of(bs, ref, order[k], path);
		unlink(path);
	}
}

/*
 * At open, one name of the folder: a temporary is removed; a blob's files
 * are tidied (see blob.h) and what stays is counted.  Names that are not
 * the store's are left alone.
 */
static void
tidy(struct blob_store *bs, const char *name)
{
	char ref[BLOB_REF_LEN + 1], path[BLOB_PATH_MAX], part[BLOB_PATH_MAX];
	char lpath[BLOB_PATH_MAX], err[PAPO_ERR_LEN];
	const char *suffix = name + BLOB_REF_LEN;
	struct have hv;
	size_t len = strlen(name);

	if (strncmp(name, "add-", 4) == 0 ||
	    (len > 4 && strcmp(name + len - 4, ".tmp") == 0)) {
		snprintf(path, sizeof(path), "%s/%s", bs->dir, name);
		unlink(path);
		return;
	}
	if (len < BLOB_REF_LEN)
		return;
	memcpy(ref, name, BLOB_REF_LEN);
	ref[BLOB_REF_LEN] = '\0';
	if (ref_check(err, ref) == -1)
		return;
	path_of(bs, ref, "", path);
	path_of(bs, ref, ".part", part);
	path_of(bs, ref, ".leaves", lpath);
	if (strcmp(suffix, ".leaves") == 0) {
		if (exists(path, NULL)) {
			/* Complete: a fetch's leftovers go (the rename
			 * happened, the unlink of .have did not). */
			unlink(part);
			path_of(bs, ref, ".have", part);
			unlink(part);
			quota_add(bs, blob_bytes(bs, ref));
		} else if (exists(part, NULL) && have_load(err, bs, ref,
		    &hv) == 0) {
			free(hv.bits);
			quota_add(bs, blob_bytes(bs, ref));
		} else {
			unlink_blob(bs, ref);
		}
	} else if ((*suffix == '\0' || strcmp(suffix, ".part") == 0 ||
	    strcmp(suffix, ".have") == 0) && !exists(lpath, NULL)) {
		/* A blob's file without its leaves: a crash between steps. */
		unlink_blob(bs, ref);
	}
}

struct blob_store *
blob_open(char err[PAPO_ERR_LEN], const char *dir, uint64_t quota)
{
	struct blob_store *bs = NULL;
	struct dirent *de;
	DIR *d = NULL;

	if (strlen(dir) + 1 + BLOB_REF_LEN + 16 >= BLOB_PATH_MAX) {
		blob_err(err, "the file store's folder name is too long");
		return NULL;
	}
	if (fs_home(err, dir) == -1)
		return NULL;
	chmod(dir, 0700);
	bs = calloc(1, sizeof(*bs));
	if (bs == NULL || (bs->dir = strdup(dir)) == NULL) {
		blob_err(err, "out of memory");
		goto fail;
	}
	bs->quota = quota;
	if ((d = opendir(dir)) == NULL) {
		blob_err(err, "cannot read %s: %s", dir, strerror(errno));
		goto fail;
	}
	while ((de = readdir(d)) != NULL)
		tidy(bs, de->d_name);
	closedir(d);
	return bs;
fail:
	blob_close(bs);
	return NULL;
}

void
blob_close(struct blob_store *bs)
{
	if (bs == NULL)
		return;
	free(bs->dir);
	free(bs);
}

uint64_t
blob_used(const struct blob_store *bs)
{
	return bs->used;
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

	return complete_size(err, bs, ref, &size, &n) == 0;
}

int
blob_size(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint64_t *size)
{
	uint32_t n;

	return complete_size(err, bs, ref, size, &n);
}

/* A temporary file of the folder, 0600 (mkstemp's mode). */
static int
temp_open(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    char path[BLOB_PATH_MAX])
{
	int fd;

	snprintf(path, BLOB_PATH_MAX, "%s/add-XXXXXX", bs->dir);
	fd = mkstemp(path);
	if (fd == -1)
		blob_err(err, "cannot create a file in %s: %s", bs->dir,
		    strerror(errno));
	return fd;
}

static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int
blob_add(char err[PAPO_ERR_LEN], struct blob_store *bs, int fd,
    const uint8_t key[PAPO_KEY_LEN], char ref[BLOB_REF_LEN + 1],
    uint64_t *size)
{
	char tpath[BLOB_PATH_MAX] = "", lpath[BLOB_PATH_MAX] = "";
	char path[BLOB_PATH_MAX];
	uint8_t ek[PAPO_KEY_LEN], nk[PAPO_KEY_LEN], leaf[PAPO_KEY_LEN];
	uint8_t root[PAPO_KEY_LEN], extra;
	uint8_t *plain = NULL, *stored = NULL;
	crypto_generichash_state h;
	struct stat st0, st1;
	uint64_t fsize;
	uint32_t n;
	int tfd = -1, lfd = -1, rc = -1;
	ssize_t r;

	subkeys(key, ek, nk);
	if (fstat(fd, &st0) == -1 || !S_ISREG(st0.st_mode)) {
		blob_err(err, "only a regular file can be shared");
		goto out;
	}
	fsize = (uint64_t)st0.st_size;
	if (fsize > BLOB_SIZE_MAX) {
		blob_err(err, "the file has %llu bytes; the largest that can "
		    "be shared has %llu", (unsigned long long)fsize,
		    (unsigned long long)BLOB_SIZE_MAX);
		goto out;
	}
	n = blob_chunks(fsize);
	if (quota_check(err, bs, blob_stored_size(fsize) +
	    (uint64_t)n * PAPO_KEY_LEN, "sharing this file") == -1)
		goto out;
	plain = malloc(BLOB_CHUNK);
	stored = malloc(BLOB_STORED_MAX);
	if (plain == NULL || stored == NULL) {
		blob_err(err, "out of memory");
		goto out;
	}
	if ((tfd = temp_open(err, bs, tpath)) == -1 ||
	    (lfd = temp_open(err, bs, lpath)) == -1)
		goto out;
	root_init(&h, fsize);
	for (uint32_t i = 0; i < n; i++) {
		size_t plen = chunk_plain(fsize, i), slen;

		r = read_at(fd, plain, plen, (uint64_t)i * BLOB_CHUNK);
		if (r == -1) {
			blob_err(err, "cannot read the file: %s",
			    strerror(errno));
			goto out;
		}
		if ((size_t)r != plen)
			goto changed;
		slen = chunk_seal(ek, nk, i, fsize, plain, plen, stored);
		crypto_generichash(leaf, PAPO_KEY_LEN, stored, slen, NULL, 0);
		crypto_generichash_update(&h, leaf, PAPO_KEY_LEN);
		if (write_at(tfd, stored, slen, chunk_off(i)) == -1 ||
		    write_at(lfd, leaf, PAPO_KEY_LEN,
		    (uint64_t)i * PAPO_KEY_LEN) == -1) {
			blob_err(err, "cannot write to the file store %s: %s",
			    bs->dir, strerror(errno));
			goto out;
		}
	}
	r = read_at(fd, &extra, 1, fsize);
	if (r != 0 || fstat(fd, &st1) == -1 || !same_file(&st0, &st1))
		goto changed;
	if (fsync(tfd) == -1 || fsync(lfd) == -1) {
		blob_err(err, "cannot write to the file store %s: %s",
		    bs->dir, strerror(errno));
		goto out;
	}
	crypto_generichash_final(&h, root, PAPO_KEY_LEN);
	b32_encode(root, PAPO_KEY_LEN, ref);
	*size = fsize;
	if (blob_has(bs, ref)) {
		rc = 0;                 /* the same bytes under the same key */
		goto out;
	}
	/* The same blob being fetched here: the add completes it. */
	path_of(bs, ref, ".part", path);
	if (exists(path, NULL)) {
		quota_sub(bs, blob_bytes(bs, ref));
		unlink_blob(bs, ref);
	}
	/* The leaves first: REF is a blob only with them, and open tidies
	 * leaves without their REF away. */
	path_of(bs, ref, ".leaves", path);
	if (rename(lpath, path) == -1)
		goto renamed;
	lpath[0] = '\0';
	path_of(bs, ref, "", path);
	if (rename(tpath, path) == -1) {
		path_of(bs, ref, ".leaves", path);
		unlink(path);
		goto renamed;
	}
	tpath[0] = '\0';
	fs_sync_dir(path);
	quota_add(bs, blob_stored_size(fsize) + (uint64_t)n * PAPO_KEY_LEN);
	rc = 0;
	goto out;
renamed:
	blob_err(err, "cannot name the file in %s: %s", bs->dir,
	    strerror(errno));
	goto out;
changed:
	blob_err(err, "the file changed while it was read (its size or "
	    "modification time differ, or it ended early or ran long); "
	    "nothing was shared");
out:
	if (tfd != -1)
		close(tfd);
	if (lfd != -1)
		close(lfd);
	if (tpath[0] != '\0')
		unlink(tpath);
	if (lpath[0] != '\0')
		unlink(lpath);
	if (plain != NULL) {
		sodium_memzero(plain, BLOB_CHUNK);
		free(plain);
	}
	free(stored);
	sodium_memzero(ek, sizeof(ek));
	sodium_memzero(nk, sizeof(nk));
	return rc;
}

/* Checks stored chunk i (slen bytes) against its leaf in REF.leaves. */
static int
leaf_match(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *stored, size_t slen,
    int *match)
{
	char path[BLOB_PATH_MAX];
	uint8_t want[PAPO_KEY_LEN], got[PAPO_KEY_LEN];

	path_of(bs, ref, ".leaves", path);
	if (read_exact(err, path, want, PAPO_KEY_LEN,
	    (uint64_t)i * PAPO_KEY_LEN) == -1)
		return -1;
	crypto_generichash(got, PAPO_KEY_LEN, stored, slen, NULL, 0);
	*match = sodium_memcmp(want, got, PAPO_KEY_LEN) == 0;
	return 0;
}

int
blob_read(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    const uint8_t key[PAPO_KEY_LEN], uint64_t off, void *out, size_t len)
{
	char path[BLOB_PATH_MAX];
	uint8_t ek[PAPO_KEY_LEN], nk[PAPO_KEY_LEN];
	uint8_t *stored = NULL, *plain = NULL, *o = out;
	uint64_t size;
	uint32_t n;
	int rc = -1, match;

	if (complete_size(err, bs, ref, &size, &n) == -1)
		return -1;
	if (off > size || len > size - off) {
		blob_err(err, "bytes %llu to %llu are past the end of file %s "
		    "(%llu bytes)", (unsigned long long)off,
		    (unsigned long long)(off + len), ref,
		    (unsigned long long)size);
		return -1;
	}
	subkeys(key, ek, nk);
	stored = malloc(BLOB_STORED_MAX);
	plain = malloc(BLOB_CHUNK);
	if (stored == NULL || plain == NULL) {
		blob_err(err, "out of memory");
		goto out;
	}
	path_of(bs, ref, "", path);
	while (len > 0) {
		uint32_t i = (uint32_t)(off / BLOB_CHUNK);
		size_t plen = chunk_plain(size, i), slen = plen + BLOB_OVERHEAD;
		size_t at = (size_t)(off - (uint64_t)i * BLOB_CHUNK);
		size_t take = plen - at < len ? plen - at : len;

		if (read_exact(err, path, stored, slen, chunk_off(i)) == -1 ||
		    leaf_match(err, bs, ref, i, stored, slen, &match) == -1)
			goto out;
		if (!match) {
			blob_err(err, "file %s is damaged on disk: chunk %u does "
			    "not match its leaf", ref, i);
			goto out;
		}
		if (chunk_open(ek, i, size, stored, slen, plain) == -1) {
			blob_err(err, "file %s does not open under this key",
			    ref);
			goto out;
		}
		memcpy(o, plain + at, take);
		o += take;
		off += take;
		len -= take;
	}
	rc = 0;
out:
	if (plain != NULL) {
		sodium_memzero(plain, BLOB_CHUNK);
		free(plain);
	}
	free(stored);
	sodium_memzero(ek, sizeof(ek));
	sodium_memzero(nk, sizeof(nk));
	return rc;
}

int
blob_leaves(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint8_t **leaves, uint32_t *n)
{
	char path[BLOB_PATH_MAX];
	char *data = NULL;
	size_t len;
	int ex;

	if (ref_check(err, ref) == -1)
		return -1;
	path_of(bs, ref, ".leaves", path);
	if (fs_read(err, path, BLOB_LEAVES_MAX, &data, &len, &ex) == -1) {
		if (!ex)
			blob_err(err, "no file %s here", ref);
		return -1;
	}
	if (len % PAPO_KEY_LEN != 0) {
		free(data);
		blob_err(err, "%s is damaged", path);
		return -1;
	}
	*leaves = (uint8_t *)data;
	*n = (uint32_t)(len / PAPO_KEY_LEN);
	return 0;
}

int
blob_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint32_t i, uint8_t *out, size_t *len)
{
	char path[BLOB_PATH_MAX];
	struct have hv;
	uint64_t size;
	uint32_t n;
	const char *suffix = "";

	if (ref_check(err, ref) == -1)
		return -1;
	if (complete_size(err, bs, ref, &size, &n) == -1) {
		if (have_load(err, bs, ref, &hv) == -1) {
			blob_err(err, "no file %s here", ref);
			return -1;
		}
		size = hv.size;
		n = hv.n;
		if (i < n && !have_bit(&hv, i)) {
			free(hv.bits);
			blob_err(err, "chunk %u of %s is not here yet", i, ref);
			return -1;
		}
		free(hv.bits);
		suffix = ".part";
	}
	if (i >= n) {
		blob_err(err, "file %s has %u chunks, not %u", ref, n, i + 1);
		return -1;
	}
	*len = chunk_plain(size, i) + BLOB_OVERHEAD;
	path_of(bs, ref, suffix, path);
	return read_exact(err, path, out, *len, chunk_off(i));
}

int
blob_fetch_start(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint64_t size, const uint8_t *leaves, uint32_t n)
{
	char path[BLOB_PATH_MAX], hpath[BLOB_PATH_MAX], lpath[BLOB_PATH_MAX];
	uint8_t want[PAPO_KEY_LEN], root[PAPO_KEY_LEN];
	uint8_t *head = NULL;
	crypto_generichash_state h;
	uint64_t need;
	struct have hv;
	int fd, rc = -1;

	if (ref_check(err, ref) == -1)
		return -1;
	if (blob_has(bs, ref))
		return 1;
	if (size > BLOB_SIZE_MAX || n != blob_chunks(size)) {
		blob_err(err, "a file of %llu bytes has %u chunks (at most %llu "
		    "bytes), not %u", (unsigned long long)size,
		    blob_chunks(size > BLOB_SIZE_MAX ? 0 : size),
		    (unsigned long long)BLOB_SIZE_MAX, n);
		return -1;
	}
	ref_root(ref, want);
	root_init(&h, size);
	crypto_generichash_update(&h, leaves, (size_t)n * PAPO_KEY_LEN);
	crypto_generichash_final(&h, root, PAPO_KEY_LEN);
	if (sodium_memcmp(root, want, PAPO_KEY_LEN) != 0) {
		blob_err(err, "the leaf list and size do not make %s", ref);
		return -1;
	}
	path_of(bs, ref, ".part", path);
	path_of(bs, ref, ".have", hpath);
	path_of(bs, ref, ".leaves", lpath);
	if (exists(path, NULL) && exists(lpath, NULL) &&
	    have_load(err, bs, ref, &hv) == 0) {
		free(hv.bits);
		return 0;               /* resumed where it stopped */
	}
	unlink_blob(bs, ref);
	need = blob_stored_size(size) + (uint64_t)n * PAPO_KEY_LEN;
	if (quota_check(err, bs, need, "fetching this file") == -1)
		return -1;
	head = calloc(1, BLOB_HAVE_HEAD + (n + 7) / 8);
	if (head == NULL) {
		blob_err(err, "out of memory");
		return -1;
	}
	put_u64(head, size);
	if (fs_write(err, lpath, leaves, (size_t)n * PAPO_KEY_LEN) == -1)
		goto out;
	if (n == 0) {
		/* An empty file is complete as soon as it is named. */
		path_of(bs, ref, "", path);
		if (fs_write(err, path, "", 0) == -1)
			goto out;
		quota_add(bs, need);
		rc = 1;
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || fsync(fd) == -1) {
		blob_err(err, "cannot create %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		goto out;
	}
	close(fd);
	/* .have last: with it the fetch exists (blob.h). */
	if (fs_write(err, hpath, head, BLOB_HAVE_HEAD + (n + 7) / 8) == -1)
		goto out;
	quota_add(bs, need);
	rc = 0;
out:
	if (rc == -1)
		unlink_blob(bs, ref);
	free(head);
	return rc;
}

int
blob_fetch_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *data, size_t len)
{
	char path[BLOB_PATH_MAX], hpath[BLOB_PATH_MAX], dst[BLOB_PATH_MAX];
	struct have hv;
	uint32_t k;
	int fd = -1, rc = -1, match;

	if (ref_check(err, ref) == -1 || have_load(err, bs, ref, &hv) == -1)
		return -1;
	if (i >= hv.n) {
		blob_err(err, "file %s has %u chunks, not %u", ref, hv.n, i + 1);
		rc = BLOB_REFUSED;
		goto out;
	}
	if (have_bit(&hv, i)) {
		rc = 0;
		goto out;
	}
	if (len != chunk_plain(hv.size, i) + BLOB_OVERHEAD) {
		blob_err(err, "chunk %u of %s has %zu bytes, not %zu", i, ref,
		    len, chunk_plain(hv.size, i) + BLOB_OVERHEAD);
		rc = BLOB_REFUSED;
		goto out;
	}
	if (leaf_match(err, bs, ref, i, data, len, &match) == -1)
		goto out;
	if (!match) {
		blob_err(err, "chunk %u of %s does not match its leaf", i, ref);
		rc = BLOB_REFUSED;
		goto out;
	}
	path_of(bs, ref, ".part", path);
	path_of(bs, ref, ".have", hpath);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1 || write_at(fd, data, len, chunk_off(i)) == -1 ||
	    fdatasync(fd) == -1)
		goto io;
	close(fd);
	hv.bits[i / 8] |= (uint8_t)(1u << (i % 8));
	fd = open(hpath, O_WRONLY | O_CLOEXEC);
	if (fd == -1 || write_at(fd, &hv.bits[i / 8], 1,
	    BLOB_HAVE_HEAD + i / 8) == -1 || fdatasync(fd) == -1)
		goto io;
	close(fd);
	fd = -1;
	for (k = 0; k < hv.n && have_bit(&hv, k); k++)
		;
	rc = 0;
	if (k < hv.n)
		goto out;
	path_of(bs, ref, "", dst);
	if (rename(path, dst) == -1) {
		blob_err(err, "cannot name %s: %s", dst, strerror(errno));
		rc = -1;
		goto out;
	}
	fs_sync_dir(dst);
	unlink(hpath);
	rc = 1;
	goto out;
io:
	blob_err(err, "cannot write chunk %u of %s: %s", i, ref,
	    strerror(errno));
out:
	if (fd != -1)
		close(fd);
	free(hv.bits);
	return rc;
}

int
blob_missing(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint32_t from, uint32_t *i, uint32_t *have,
    uint32_t *n)
{
	struct have hv;
	uint32_t count = 0;
	int rc = 1;

	if (ref_check(err, ref) == -1 || have_load(err, bs, ref, &hv) == -1)
		return -1;
	for (uint32_t k = 0; k < hv.n; k++) {
		if (have_bit(&hv, k))
			count++;
		else if (k >= from && rc == 1) {
			*i = k;
			rc = 0;
		}
	}
	if (have != NULL)
		*have = count;
	if (n != NULL)
		*n = hv.n;
	free(hv.bits);
	return rc;
}

int
blob_remove(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref)
{
	char path[BLOB_PATH_MAX];
	uint64_t bytes;

	if (ref_check(err, ref) == -1)
		return -1;
	path_of(bs, ref, ".leaves", path);
	if (!exists(path, NULL)) {
		blob_err(err, "no file %s here", ref);
		return -1;
	}
	bytes = blob_bytes(bs, ref);
	unlink_blob(bs, ref);
	if (exists(path, NULL)) {
		blob_err(err, "cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	quota_sub(bs, bytes);
	return 0;
}

int
blob_keep(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *const *keep, size_t n)
{
	char (*gone)[BLOB_REF_LEN + 1] = NULL;
	size_t ngone = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int rc = -1;

	if ((d = opendir(bs->dir)) == NULL) {
		blob_err(err, "cannot read %s: %s", bs->dir, strerror(errno));
		return -1;
	}
	/* Names first, removals after: the folder is not changed while it
	 * is read. */
	while ((de = readdir(d)) != NULL) {
		size_t k;

		if (strlen(de->d_name) != BLOB_REF_LEN + 7 ||
		    strcmp(de->d_name + BLOB_REF_LEN, ".leaves") != 0)
			continue;
		for (k = 0; k < n; k++)
			if (strncmp(keep[k], de->d_name, BLOB_REF_LEN) == 0 &&
			    keep[k][BLOB_REF_LEN] == '\0')
				break;
		if (k < n)
			continue;
		if (ngone == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			void *p = realloc(gone, ncap * sizeof(*gone));

			if (p == NULL) {
				blob_err(err, "out of memory");
				goto out;
			}
			gone = p;
			cap = ncap;
		}
		memcpy(gone[ngone], de->d_name, BLOB_REF_LEN);
		gone[ngone++][BLOB_REF_LEN] = '\0';
	}
	rc = 0;
	for (size_t k = 0; k < ngone; k++) {
		if (blob_remove(err, bs, gone[k]) == -1) {
			rc = -1;
			goto out;
		}
		rc++;
	}
out:
	closedir(d);
	free(gone);
	return rc;
}
