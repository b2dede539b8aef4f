/*
 * blob_int.h: the blob store's private header, shared by its files
 * (blob.c > blob_fetch.c > blob_file.c, calling one way): the store's
 * struct, the folder's file names, and the pieces of the format (blob.h)
 * that both sharing and fetching use.  One thread, as blob.h says.
 */
#ifndef PAPO_BLOB_INT_H
#define PAPO_BLOB_INT_H

#include <sys/types.h>

#include <sodium.h>

#include "node/store/blob.h"

#define BLOB_PATH_MAX 4096
#define BLOB_KDF_CTX "papoblob"
#define BLOB_HAVE_HEAD 8               /* REF.have: u64 SIZE, then bits */

struct blob_store {
	char *dir;
	uint64_t quota;                 /* 0: no limit */
};

/* REF.have of a blob being fetched: its size, chunk count and bits
 * (malloc'd). */
struct have {
	uint64_t size;
	uint32_t n;
	uint8_t *bits;
	size_t len;                     /* bytes of bits */
};

/* blob_file.c: errors, the layout of the stored bytes, references. */
void blob_put_u64(uint8_t *p, uint64_t v);
size_t blob_chunk_plain(uint64_t size, uint32_t i);    /* plain bytes */
uint64_t blob_chunk_off(uint32_t i);    /* offset in REF and REF.part */
/* The root a reference names; -1 unless it is exactly BLOB_REF_LEN
 * lowercase base32 characters (so it never makes a path). */
int blob_ref_root(const char *ref, uint8_t root[PAPO_KEY_LEN]);
int blob_ref_check(char err[PAPO_ERR_LEN], const char *ref);
/* dir/REF+suffix; blob_open checked that it fits. */
void blob_path(const struct blob_store *bs, const char *ref,
    const char *suffix, char out[BLOB_PATH_MAX]);

/* blob_file.c: the folder's files. */
int blob_exists(const char *path, uint64_t *size);
int blob_read_exact(char err[PAPO_ERR_LEN], const char *path, void *p,
    size_t n, uint64_t off);

/* blob_file.c: the cryptography of blob.h's format. */
void blob_subkeys(const uint8_t key[PAPO_KEY_LEN], uint8_t ek[PAPO_KEY_LEN],
    uint8_t nk[PAPO_KEY_LEN]);
/* Stored chunk i of plen plain bytes into out; returns its length. */
size_t blob_seal(const uint8_t ek[PAPO_KEY_LEN],
    const uint8_t nk[PAPO_KEY_LEN], uint32_t i, uint64_t size,
    const uint8_t *plain, size_t plen, uint8_t *out);
/* Opens stored chunk i into plain; -1 when it does not open under ek. */
int blob_unseal(const uint8_t ek[PAPO_KEY_LEN], uint32_t i, uint64_t size,
    const uint8_t *stored, size_t slen, uint8_t *plain);
/* The root's hash started: the label and the size; the leaves follow. */
void blob_root_init(crypto_generichash_state *h, uint64_t size);
/* Stored chunk i against its leaf in REF.leaves: *match 1 or 0. */
int blob_leaf_match(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *stored, size_t slen,
    int *match);

/* blob_file.c: the quota and a blob's files as a whole. */
int blob_quota_check(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    uint64_t need, const char *what);
int blob_have_load(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, struct have *hv);
int blob_have_bit(const struct have *hv, uint32_t i);
/* A complete blob's plain size and chunks, from its files' lengths. */
int blob_complete_size(char err[PAPO_ERR_LEN], const struct blob_store *bs,
    const char *ref, uint64_t *size, uint32_t *n);
/* What a blob counts against the quota (0 when it is not here). */
uint64_t blob_bytes(const struct blob_store *bs, const char *ref);
/* Removes a blob's files, its leaves last. */
void blob_unlink(const struct blob_store *bs, const char *ref);

#endif
