/*
 * blob_fetch.c: a blob served to others (its leaves, its stored chunks,
 * a partial one's too) and fetched from them: the leaf list checked
 * against the reference, then each chunk against its leaf before it is
 * written; written chunks are committed in batches (REF.part
 * fdatasync'd, and only then their bits set in REF.have and it
 * fdatasync'd), and REF renamed into place once all are there (blob.h).
 * The thread that owns the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/os.h"
#include "node/store/blob_int.h"

int
blob_leaves(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint8_t **leaves, uint32_t *n)
{
	char path[BLOB_PATH_MAX];
	char *data = NULL;
	size_t len;
	int ex;

	if (blob_ref_check(err, ref) == -1)
		return -1;
	blob_path(bs, ref, ".leaves", path);
	if (fs_read(err, path, BLOB_LEAVES_MAX, &data, &len, &ex) == -1) {
		if (!ex)
			err_set(err, "no file %s here", ref);
		return -1;
	}
	if (len % PAPO_KEY_LEN != 0) {
		free(data);
		err_set(err, "%s is damaged", path);
		return -1;
	}
	*leaves = (uint8_t *)data;
	*n = (uint32_t)(len / PAPO_KEY_LEN);
	return 0;
}

static int
chunk_read(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    const char *suffix, uint64_t size, uint32_t n, uint32_t i, uint8_t *out,
    size_t *len)
{
	char path[BLOB_PATH_MAX];

	if (i >= n) {
		err_set(err, "file %s has %u chunks, not %u", ref, n, i + 1);
		return -1;
	}
	*len = blob_chunk_plain(size, i) + BLOB_OVERHEAD;
	blob_path(bs, ref, suffix, path);
	return blob_read_exact(err, path, out, *len, blob_chunk_off(i));
}

int
blob_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint32_t i, uint8_t *out, size_t *len)
{
	struct have hv;
	uint64_t size;
	uint32_t n;

	if (blob_ref_check(err, ref) == -1)
		return -1;
	if (blob_complete_size(err, bs, ref, &size, &n) == 0)
		return chunk_read(err, bs, ref, "", size, n, i, out, len);
	if (blob_have_load(err, bs, ref, &hv) == -1) {
		err_set(err, "no file %s here", ref);
		return -1;
	}
	if (i < hv.n && !blob_have_bit(&hv, i)) {
		free(hv.bits);
		err_set(err, "chunk %u of %s is not here yet", i, ref);
		return -1;
	}
	free(hv.bits);
	return chunk_read(err, bs, ref, ".part", hv.size, hv.n, i, out, len);
}

int
blob_part_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint64_t size, uint32_t i, uint8_t *out, size_t *len)
{
	if (blob_ref_check(err, ref) == -1)
		return -1;
	if (blob_has(bs, ref))
		return blob_chunk(err, bs, ref, i, out, len);
	return chunk_read(err, bs, ref, ".part", size, blob_chunks(size), i,
	    out, len);
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

	if (blob_ref_check(err, ref) == -1)
		return -1;
	if (blob_has(bs, ref))
		return 1;
	if (size > BLOB_SIZE_MAX) {
		err_set(err, "the file has %llu bytes; the largest that can "
		    "be fetched has %llu", (unsigned long long)size,
		    (unsigned long long)BLOB_SIZE_MAX);
		return -1;
	}
	if (n != blob_chunks(size)) {
		err_set(err, "a file of %llu bytes has %u chunks, not %u",
		    (unsigned long long)size, blob_chunks(size), n);
		return BLOB_REFUSED;
	}
	blob_ref_root(ref, want);
	blob_root_init(&h, size);
	crypto_generichash_update(&h, leaves, (size_t)n * PAPO_KEY_LEN);
	crypto_generichash_final(&h, root, PAPO_KEY_LEN);
	if (sodium_memcmp(root, want, PAPO_KEY_LEN) != 0) {
		err_set(err, "the leaf list and size do not make %s", ref);
		return BLOB_REFUSED;
	}
	blob_path(bs, ref, ".part", path);
	blob_path(bs, ref, ".have", hpath);
	blob_path(bs, ref, ".leaves", lpath);
	if (blob_exists(path, NULL) && blob_exists(lpath, NULL) &&
	    blob_have_load(err, bs, ref, &hv) == 0) {
		free(hv.bits);
		return 0;               /* resumed where it stopped */
	}
	blob_unlink(bs, ref);
	need = blob_stored_size(size) + (uint64_t)n * PAPO_KEY_LEN;
	if (blob_quota_check(err, bs, need, "fetching this file") == -1)
		return -1;
	head = calloc(1, BLOB_HAVE_HEAD + (n + 7) / 8);
	if (head == NULL) {
		err_set(err, "out of memory");
		return -1;
	}
	blob_put_u64(head, size);
	if (fs_write(err, lpath, leaves, (size_t)n * PAPO_KEY_LEN) == -1)
		goto out;
	if (n == 0) {
		/* An empty file is complete as soon as it is named. */
		blob_path(bs, ref, "", path);
		if (fs_write(err, path, "", 0) == -1)
			goto out;
		rc = 1;
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || fsync(fd) == -1) {
		err_set(err, "cannot create %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		goto out;
	}
	close(fd);
	/* .have last: with it the fetch exists (blob.h). */
	if (fs_write(err, hpath, head, BLOB_HAVE_HEAD + (n + 7) / 8) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		blob_unlink(bs, ref);
	free(head);
	return rc;
}

int
blob_fetch_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *data, size_t len)
{
	char path[BLOB_PATH_MAX];
	struct have hv;
	uint64_t off;
	int fd = -1, rc = -1, match;

	if (blob_ref_check(err, ref) == -1 ||
	    blob_have_load(err, bs, ref, &hv) == -1)
		return -1;
	blob_path(bs, ref, ".part", path);
	if (i >= hv.n) {
		err_set(err, "file %s has %u chunks, not %u", ref, hv.n,
		    i + 1);
		rc = BLOB_REFUSED;
		goto out;
	}
	if (len != blob_chunk_plain(hv.size, i) + BLOB_OVERHEAD) {
		err_set(err, "chunk %u of %s has %zu bytes, not %zu", i, ref,
		    len, blob_chunk_plain(hv.size, i) + BLOB_OVERHEAD);
		rc = BLOB_REFUSED;
		goto out;
	}
	if (blob_leaf_match(err, bs, ref, i, data, len, &match) == -1)
		goto out;
	if (!match) {
		err_set(err, "chunk %u of %s does not match its leaf", i, ref);
		rc = BLOB_REFUSED;
		goto out;
	}
	off = blob_chunk_off(i);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1 || fs_pwrite(fd, data, len, off) == -1) {
		err_set(err, "cannot write chunk %u of %s: %s", i, ref,
		    strerror(errno));
		goto out;
	}
	/* Its writing to disk starts now, so the commit's fdatasync finds
	 * little left to do. */
	os_write_start(fd, (off_t)off, (off_t)len);
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(hv.bits);
	return rc;
}

int
blob_fetch_commit(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, const uint32_t *written, size_t count)
{
	char path[BLOB_PATH_MAX], hpath[BLOB_PATH_MAX], dst[BLOB_PATH_MAX];
	struct have hv;
	uint32_t k;
	int fd = -1, rc = -1;

	if (blob_ref_check(err, ref) == -1 ||
	    blob_have_load(err, bs, ref, &hv) == -1)
		return -1;
	blob_path(bs, ref, ".part", path);
	blob_path(bs, ref, ".have", hpath);
	for (size_t j = 0; j < count; j++)
		if (written[j] >= hv.n) {
			err_set(err, "file %s has %u chunks, not %u", ref,
			    hv.n, written[j] + 1);
			goto out;
		}
	if (count > 0) {
		/* The chunks durable first, then the record of them. */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd == -1 || fdatasync(fd) == -1)
			goto io;
		close(fd);
		for (size_t j = 0; j < count; j++)
			hv.bits[written[j] / 8] |=
			    (uint8_t)(1u << (written[j] % 8));
		fd = open(hpath, O_WRONLY | O_CLOEXEC);
		if (fd == -1 || fs_pwrite(fd, hv.bits, hv.len,
		    BLOB_HAVE_HEAD) == -1 || fdatasync(fd) == -1)
			goto io;
		close(fd);
		fd = -1;
	}
	for (k = 0; k < hv.n && blob_have_bit(&hv, k); k++)
		;
	rc = 0;
	if (k < hv.n)
		goto out;
	blob_path(bs, ref, "", dst);
	if (rename(path, dst) == -1) {
		err_set(err, "cannot name %s: %s", dst, strerror(errno));
		rc = -1;
		goto out;
	}
	fs_sync_dir(dst);
	unlink(hpath);
	rc = 1;
	goto out;
io:
	err_set(err, "cannot record the chunks of %s: %s", ref,
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

	if (blob_ref_check(err, ref) == -1 ||
	    blob_have_load(err, bs, ref, &hv) == -1)
		return -1;
	for (uint32_t k = 0; k < hv.n; k++) {
		if (blob_have_bit(&hv, k))
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
