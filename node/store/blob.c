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
 *
 * Here: the store opened (leftovers tidied, bytes counted), files shared
 * and read back, removal and retention.  Its files call one way: blob.c
 * (and blob_fetch.c, serving and fetching) > blob_file.c (the format's
 * pieces, the folder's files); what they share is in blob_int.h.
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
	if (blob_ref_check(err, ref) == -1)
		return;
	blob_path(bs, ref, "", path);
	blob_path(bs, ref, ".part", part);
	blob_path(bs, ref, ".leaves", lpath);
	if (strcmp(suffix, ".leaves") == 0) {
		if (blob_exists(path, NULL)) {
			/* Complete: a fetch's leftovers go (the rename
			 * happened, the unlink of .have did not). */
			unlink(part);
			blob_path(bs, ref, ".have", part);
			unlink(part);
		} else if (blob_exists(part, NULL) &&
		    blob_have_load(err, bs, ref, &hv) == 0) {
			free(hv.bits);
		} else {
			blob_unlink(bs, ref);
		}
	} else if ((*suffix == '\0' || strcmp(suffix, ".part") == 0 ||
	    strcmp(suffix, ".have") == 0) && !blob_exists(lpath, NULL)) {
		/* A blob's file without its leaves: a crash between steps. */
		blob_unlink(bs, ref);
	}
}

static struct blob_store *
store_new(char err[PAPO_ERR_LEN], const char *dir, uint64_t quota, int tidying)
{
	struct blob_store *bs = NULL;
	struct dirent *de;
	DIR *d = NULL;

	if (strlen(dir) + 1 + BLOB_REF_LEN + 16 >= BLOB_PATH_MAX) {
		err_set(err, "the file store's folder name is too long");
		return NULL;
	}
	if (fs_home(err, dir) == -1)
		return NULL;
	chmod(dir, 0700);
	bs = calloc(1, sizeof(*bs));
	if (bs == NULL || (bs->dir = strdup(dir)) == NULL) {
		err_set(err, "out of memory");
		goto fail;
	}
	bs->quota = quota;
	if ((d = opendir(dir)) == NULL) {
		err_set(err, "cannot read %s: %s", dir, strerror(errno));
		goto fail;
	}
	while (tidying && (de = readdir(d)) != NULL)
		tidy(bs, de->d_name);
	closedir(d);
	return bs;
fail:
	blob_close(bs);
	return NULL;
}

struct blob_store *
blob_open(char err[PAPO_ERR_LEN], const char *dir, uint64_t quota)
{
	return store_new(err, dir, quota, 1);
}

struct blob_store *
blob_attach(char err[PAPO_ERR_LEN], const char *dir, uint64_t quota)
{
	return store_new(err, dir, quota, 0);
}

void
blob_close(struct blob_store *bs)
{
	if (bs == NULL)
		return;
	free(bs->dir);
	free(bs);
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
		err_set(err, "cannot create a file in %s: %s", bs->dir,
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

	blob_subkeys(key, ek, nk);
	if (fstat(fd, &st0) == -1 || !S_ISREG(st0.st_mode)) {
		err_set(err, "only a regular file can be shared");
		goto out;
	}
	fsize = (uint64_t)st0.st_size;
	if (fsize > BLOB_SIZE_MAX) {
		err_set(err, "the file has %llu bytes; the largest that can "
		    "be shared has %llu", (unsigned long long)fsize,
		    (unsigned long long)BLOB_SIZE_MAX);
		goto out;
	}
	n = blob_chunks(fsize);
	if (blob_quota_check(err, bs, blob_stored_size(fsize) +
	    (uint64_t)n * PAPO_KEY_LEN, "sharing this file") == -1)
		goto out;
	plain = malloc(BLOB_CHUNK);
	stored = malloc(BLOB_STORED_MAX);
	if (plain == NULL || stored == NULL) {
		err_set(err, "out of memory");
		goto out;
	}
	if ((tfd = temp_open(err, bs, tpath)) == -1 ||
	    (lfd = temp_open(err, bs, lpath)) == -1)
		goto out;
	blob_root_init(&h, fsize);
	for (uint32_t i = 0; i < n; i++) {
		size_t plen = blob_chunk_plain(fsize, i), slen;

		r = fs_pread(fd, plain, plen, (uint64_t)i * BLOB_CHUNK);
		if (r == -1) {
			err_set(err, "cannot read the file: %s",
			    strerror(errno));
			goto out;
		}
		if ((size_t)r != plen)
			goto changed;
		slen = blob_seal(ek, nk, i, fsize, plain, plen, stored);
		crypto_generichash(leaf, PAPO_KEY_LEN, stored, slen, NULL, 0);
		crypto_generichash_update(&h, leaf, PAPO_KEY_LEN);
		if (fs_pwrite(tfd, stored, slen, blob_chunk_off(i)) == -1 ||
		    fs_pwrite(lfd, leaf, PAPO_KEY_LEN,
		    (uint64_t)i * PAPO_KEY_LEN) == -1) {
			err_set(err, "cannot write to the file store %s: %s",
			    bs->dir, strerror(errno));
			goto out;
		}
	}
	r = fs_pread(fd, &extra, 1, fsize);
	if (r != 0 || fstat(fd, &st1) == -1 || !same_file(&st0, &st1))
		goto changed;
	if (fsync(tfd) == -1 || fsync(lfd) == -1) {
		err_set(err, "cannot write to the file store %s: %s",
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
	blob_path(bs, ref, ".part", path);
	if (blob_exists(path, NULL)) {
		blob_unlink(bs, ref);
	}
	/* The leaves first: REF is a blob only with them, and open tidies
	 * leaves without their REF away. */
	blob_path(bs, ref, ".leaves", path);
	if (rename(lpath, path) == -1)
		goto renamed;
	lpath[0] = '\0';
	blob_path(bs, ref, "", path);
	if (rename(tpath, path) == -1) {
		blob_path(bs, ref, ".leaves", path);
		unlink(path);
		goto renamed;
	}
	tpath[0] = '\0';
	fs_sync_dir(path);
	rc = 0;
	goto out;
renamed:
	err_set(err, "cannot name the file in %s: %s", bs->dir,
	    strerror(errno));
	goto out;
changed:
	err_set(err, "the file changed while it was read (its size or "
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

	if (blob_complete_size(err, bs, ref, &size, &n) == -1)
		return -1;
	if (off > size || len > size - off) {
		err_set(err, "bytes %llu to %llu are past the end of file %s "
		    "(%llu bytes)", (unsigned long long)off,
		    (unsigned long long)(off + len), ref,
		    (unsigned long long)size);
		return -1;
	}
	blob_subkeys(key, ek, nk);
	stored = malloc(BLOB_STORED_MAX);
	plain = malloc(BLOB_CHUNK);
	if (stored == NULL || plain == NULL) {
		err_set(err, "out of memory");
		goto out;
	}
	blob_path(bs, ref, "", path);
	while (len > 0) {
		uint32_t i = (uint32_t)(off / BLOB_CHUNK);
		size_t plen = blob_chunk_plain(size, i);
		size_t slen = plen + BLOB_OVERHEAD;
		size_t at = (size_t)(off - (uint64_t)i * BLOB_CHUNK);
		size_t take = plen - at < len ? plen - at : len;

		if (blob_read_exact(err, path, stored, slen,
		    blob_chunk_off(i)) == -1 || blob_leaf_match(err, bs, ref,
		    i, stored, slen, &match) == -1)
			goto out;
		if (!match) {
			err_set(err, "file %s is damaged on disk: chunk %u "
			    "does not match its leaf", ref, i);
			goto out;
		}
		if (blob_unseal(ek, i, size, stored, slen, plain) == -1) {
			err_set(err, "file %s does not open under this key",
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
blob_remove(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref)
{
	char path[BLOB_PATH_MAX];

	if (blob_ref_check(err, ref) == -1)
		return -1;
	blob_path(bs, ref, ".leaves", path);
	if (!blob_exists(path, NULL)) {
		err_set(err, "no file %s here", ref);
		return -1;
	}
	blob_unlink(bs, ref);
	if (blob_exists(path, NULL)) {
		err_set(err, "cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	blob_path(bs, ref, ".meta", path);
	unlink(path);
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
		err_set(err, "cannot read %s: %s", bs->dir, strerror(errno));
		return -1;
	}
	/* Names first, removals after: the folder is not changed while it
	 * is read. */
	while ((de = readdir(d)) != NULL) {
		size_t k;

		size_t len = strlen(de->d_name);

		/* A blob (its leaves) or a description without one. */
		if (!(len == BLOB_REF_LEN + 7 &&
		    strcmp(de->d_name + BLOB_REF_LEN, ".leaves") == 0) &&
		    !(len == BLOB_REF_LEN + 5 &&
		    strcmp(de->d_name + BLOB_REF_LEN, ".meta") == 0))
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
				err_set(err, "out of memory");
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
		char path[BLOB_PATH_MAX];

		blob_path(bs, gone[k], ".leaves", path);
		if (!blob_exists(path, NULL)) {
			/* A description alone (or one whose blob went with
			 * an earlier name of the list). */
			blob_path(bs, gone[k], ".meta", path);
			if (unlink(path) == -1 && errno != ENOENT) {
				err_set(err, "cannot remove %s: %s", path,
				    strerror(errno));
				rc = -1;
				goto out;
			}
			continue;
		}
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
