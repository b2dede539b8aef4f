/*
 * blob.h: the store of shared files (docs/FILES.md), one folder of
 * content-addressed, encrypted blobs.  A pure module of node/store/: files
 * and libsodium, no sockets, no threads, no rooms or members.  One thread
 * owns a struct blob_store; nothing in it is shared.
 *
 * The format (what every holder stores, byte for byte):
 *
 * - A file of SIZE plain bytes is cut into n = ceil(SIZE / BLOB_CHUNK)
 *   chunks (the last shorter; an empty file has none).
 * - Each file has a random key K of PAPO_KEY_LEN bytes (blob_key_new),
 *   which will travel inside the sealed, signed message that names the
 *   file.  Two subkeys come from it (crypto_kdf, context "papoblob"): an
 *   encryption key EK (id 1) and a nonce key NK (id 2).
 * - Stored chunk i = nonce || ciphertext || tag, with
 *   nonce = BLAKE2b-192 keyed by NK of (u64 i || u64 SIZE || plain chunk),
 *   and ciphertext || tag = XChaCha20-Poly1305(EK, nonce, plain chunk,
 *   additional data u64 i || u64 SIZE) (all integers little-endian).
 *   The brief asked for a nonce that is the counter i, which is safe only
 *   while K encrypts one file once; the synthetic nonce (SIV-like) keeps
 *   the store deterministic (the same K and bytes give the same stored
 *   bytes, so every holder serves the same chunks) and also stays safe
 *   when a caller reuses K for changed content: two different chunks
 *   then get different nonces, so the stream never repeats, and all an
 *   observer learns is which chunks are equal.  It costs 24 bytes a
 *   chunk.  Moving the chunk to another index or another file size
 *   fails the tag (the additional data).
 * - Leaf h_i = BLAKE2b-256(stored chunk i); the reference (REF) is
 *   root = BLAKE2b-256("papo blob v1" || u64 SIZE || h_0 || ... ||
 *   h_{n-1}), written as base32 (lib/b32.h, member ids' alphabet).  It
 *   commits to what is stored, so a holder without K can serve chunks and
 *   a fetcher can check each before writing it; only K reads them, so a
 *   member removed before the file was shared cannot, even with the bytes.
 *
 * On disk, in the folder given at open (0700, files 0600):
 *   REF          a complete blob: the stored chunks concatenated
 *   REF.leaves   its leaf list, n x PAPO_KEY_LEN bytes
 *   REF.part     a blob being fetched: chunks written at their offsets
 *   REF.have     its progress: u64 SIZE, then one bit per chunk written,
 *                each set only after the chunk is fdatasync'd, so a
 *                kill -9 loses at most the chunk in flight
 *   REF.meta     what a message said of it (blob_meta_save), which may
 *                be there before any of the rest
 * A blob is complete with REF and REF.leaves; being fetched with REF.part,
 * REF.have and REF.leaves; anything else (a crash between the steps that
 * create them, or a temporary *.tmp) is removed at open.  REF appears only
 * by rename after fsync, once every chunk is there and verified, so
 * nothing half-written is ever taken for the file.
 *
 * Errors: functions that can fail take char err[PAPO_ERR_LEN] first and
 * return -1 with one line saying why; the store stays usable after any
 * failure (a full disk included) and leaves no half-made blob behind.
 */
#ifndef PAPO_BLOB_H
#define PAPO_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"

#define BLOB_CHUNK (256 * 1024)                /* plain bytes of a chunk */
#define BLOB_SIZE_MAX (4ULL << 30)             /* the largest file, 4 GiB */
#define BLOB_CHUNKS_MAX (BLOB_SIZE_MAX / BLOB_CHUNK)    /* 16384 */
#define BLOB_NONCE_LEN 24                      /* XChaCha20 nonce */
#define BLOB_TAG_LEN 16                        /* Poly1305 tag */
#define BLOB_OVERHEAD (BLOB_NONCE_LEN + BLOB_TAG_LEN)   /* per chunk */
#define BLOB_STORED_MAX (BLOB_CHUNK + BLOB_OVERHEAD)    /* a stored chunk */
#define BLOB_LEAVES_MAX (BLOB_CHUNKS_MAX * PAPO_KEY_LEN) /* 512 KiB */
#define BLOB_REF_LEN 52                        /* base32 of the root */
#define BLOB_LABEL "papo blob v1"
#define BLOB_DIR "blobs"          /* a room's store, in its folder */

/* blob_fetch_chunk's answer for a chunk that does not match its leaf,
 * and blob_fetch_start's for leaves that do not make the reference: the
 * sender is wrong (or hostile); ask another holder. */
#define BLOB_REFUSED (-2)

struct blob_store;

/*
 * Opens the folder dir (created 0700 if missing), removes what a killed
 * process left half-made (see above), and sums the bytes it holds.  quota
 * is the most bytes the store may hold (complete blobs, partial ones
 * counted at their full size, and leaf lists); 0 means no limit.  NULL
 * with err set on failure.
 */
struct blob_store *blob_open(char err[PAPO_ERR_LEN], const char *dir,
    uint64_t quota);

/*
 * Opens the folder dir for a second thread while the owner has it open
 * (a worker adding a file, a reader): as blob_open, without tidying
 * (what looks half-made may be the other thread's work in progress).
 * The quota is counted from the folder at each check, so both see what
 * the other added; two checks at the same moment may together pass the
 * quota by one file.
 */
struct blob_store *blob_attach(char err[PAPO_ERR_LEN], const char *dir,
    uint64_t quota);

/* Frees the store; NULL is a no-op.  Files stay as they are. */
void blob_close(struct blob_store *bs);

/* Bytes the store holds now, as counted against the quota, summed from
 * the folder. */
uint64_t blob_used(const struct blob_store *bs);

/*
 * What a message said of a file (its key, size, name and media type:
 * node/wire/attach.h), kept beside it as REF.meta (0600, JSON), for a
 * file added here or named by a message, fetched or not.  The first
 * description of a reference stays: saving another is a no-op (the
 * bytes are the same whatever a later message calls them).  blob_remove
 * and blob_keep remove it with the file; a crash's leftovers keep it.
 * blob_meta_load: 0, or -1 with err (none kept, or damaged).
 */
struct attach;
int blob_meta_save(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const struct attach *a);
/* As blob_meta_save, replacing a description already kept: for a file
 * just added here, and for an empty file, whose reference is the same
 * whatever its name (it has no chunks). */
int blob_meta_set(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const struct attach *a);
int blob_meta_load(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, struct attach *a);

/* A new random file key. */
void blob_key_new(uint8_t key[PAPO_KEY_LEN]);

/* Stored bytes of a file of size plain bytes (chunks and their overhead). */
uint64_t blob_stored_size(uint64_t size);

/* Chunks of a file of size plain bytes. */
uint32_t blob_chunks(uint64_t size);

/*
 * Shares the regular file open on fd (read from its offset 0) under key:
 * encrypts it chunk by chunk into a temporary file, writes the leaf list,
 * and renames the temporary to REF, which goes to ref (NUL-terminated);
 * its plain size to *size.  Memory stays constant whatever the size: one
 * plain and one stored chunk (about 512 KiB) and two hash states; the
 * leaves go to their file as they are made.  Refused, leaving nothing
 * behind: a file larger than BLOB_SIZE_MAX, one that would pass the quota,
 * one that changes while read (its size or mtime differ after the read,
 * or the read ends early or runs long), a full disk.  Adding a blob the
 * store already holds (same bytes, same key) succeeds and changes nothing.
 */
int blob_add(char err[PAPO_ERR_LEN], struct blob_store *bs, int fd,
    const uint8_t key[PAPO_KEY_LEN], char ref[BLOB_REF_LEN + 1],
    uint64_t *size);

/* 1 when ref names a complete blob here, 0 otherwise (partial, absent, or
 * not a reference). */
int blob_has(struct blob_store *bs, const char *ref);

/* The plain size of the complete blob ref: 0 with *size, or -1. */
int blob_size(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint64_t *size);

/*
 * Reads len plain bytes from offset off of the complete blob ref into out,
 * decrypting only the chunks the range touches.  The range must lie inside
 * the file.  -1 with err when a stored chunk does not match its leaf (the
 * file was damaged on disk) or does not open under key (the wrong key);
 * out then holds nothing meaningful and must not be used.
 */
int blob_read(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    const uint8_t key[PAPO_KEY_LEN], uint64_t off, void *out, size_t len);

/*
 * For serving to others.  blob_leaves: the leaf list of ref (complete or
 * being fetched), malloc'd into *leaves (free it), *n leaves.
 * blob_chunk: stored chunk i of ref into out (BLOB_STORED_MAX bytes), its
 * length to *len; a blob being fetched serves the chunks it has.
 */
int blob_leaves(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint8_t **leaves, uint32_t *n);
int blob_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs, const char *ref,
    uint32_t i, uint8_t *out, size_t *len);

/*
 * Starts (or resumes) fetching ref, a file of size plain bytes, whose leaf
 * list a holder sent (n leaves).  The leaves are checked against ref
 * first; then the full stored size is reserved against the quota.
 * Returns 1 when the blob is already complete here, 0 when the fetch is
 * ready (new, or resumed where it stopped: blob_missing says what is
 * left), BLOB_REFUSED with err when the leaves and size do not make ref
 * or n is not size's chunk count (the sender is wrong), -1 with err
 * (the size is past the largest, the quota, the disk).
 */
int blob_fetch_start(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint64_t size, const uint8_t *leaves, uint32_t n);

/*
 * Offers stored chunk i of ref being fetched (len bytes, as a holder sent
 * it).  Returns 0 when it was verified and written (not yet durably:
 * blob_fetch_commit makes it so), BLOB_REFUSED when it does not match its
 * leaf or is not a chunk of the file (nothing written), -1 with err when
 * it could not be written (the disk; the chunk may be offered again) or
 * ref is not being fetched.  Writing a chunk again rewrites the same
 * bytes.
 */
int blob_fetch_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint32_t i, const uint8_t *data, size_t len);

/*
 * Makes the count chunks written[] (each written by blob_fetch_chunk)
 * durable and records them, so a fetch resumed after a crash takes them:
 * one fdatasync of the data, then of the record.  Chunks written and
 * never committed are fetched again after a restart; nothing unsynced is
 * ever taken for the file.  Returns 1 when every chunk is now recorded
 * and the blob complete (REF renamed into place; a commit of none
 * retries a rename that failed), 0 when chunks are still missing, -1
 * with err (the disk, or ref not being fetched).
 */
int blob_fetch_commit(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, const uint32_t *written, size_t count);

/* Stored chunk i of ref being fetched (a file of size plain bytes), which
 * the caller wrote with blob_fetch_chunk, committed or not: for serving
 * it on at once.  Otherwise as blob_chunk. */
int blob_part_chunk(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint64_t size, uint32_t i, uint8_t *out, size_t *len);

/*
 * The first chunk of ref being fetched at or after index from that is not
 * yet written, into *i: 0, or 1 when none is missing from there on, or -1
 * with err when ref is not being fetched.  *have and *n (either may be
 * NULL) get the chunks written and the total, for progress.
 */
int blob_missing(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, uint32_t from, uint32_t *i, uint32_t *have,
    uint32_t *n);

/* Calls fn with the reference of every blob being fetched here (a
 * daemon that stopped midway goes on from them). */
void blob_fetching(struct blob_store *bs,
    void (*fn)(void *arg, const char *ref), void *arg);

/* Removes ref, complete or being fetched: 0, or -1 when it names nothing
 * here or a file could not be removed. */
int blob_remove(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref);

/*
 * Retention: removes every blob, complete or being fetched, and every
 * description (REF.meta), whose reference is not among the n in keep
 * (those that no message names any more).  Returns how many blobs were
 * removed, or -1 with err.
 */
int blob_keep(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *const *keep, size_t n);

#endif
