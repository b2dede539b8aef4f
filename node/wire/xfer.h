/*
 * xfer.h: the frames that move files' chunks between members
 * (docs/PROTOCOL.md, "Files between members"), in binary, on a
 * connection's bulk stream
 * (version 4: quic_send_bulk), so that a chunk never holds up the
 * room's other frames.  They are not sealed nor signed: the connection
 * is already encrypted and both ends are members, the chunks are
 * encrypted under the file's key, and every chunk is checked against
 * the file's reference before it is written.
 *
 * Every frame: u8 type, the 32-byte root the reference names
 * (blob.h: REF is its base32), then by type (integers little-endian):
 *
 *   WANT    u8 flags, u32 first, u32 count: send me chunks
 *           [first, first + count) (count <= XFER_WINDOW_MAX; 0 asks
 *           for none); flag XFER_F_LEAVES: first the leaf list and what
 *           you hold (LEAVES, HAVE)
 *   LEAVES  u64 size, u32 n, n leaves of 32 bytes (n is the chunk count
 *           of size; n <= XFER_LEAVES_MAX)
 *   HAVE    u32 first, u32 nbits, ceil(nbits / 8) bytes: the chunks of
 *           [first, first + nbits) the sender holds, bit k of byte k/8
 *           (least significant first) for chunk first + k; bits past
 *           nbits are zero
 *   CHUNK   u32 i, the stored chunk (1 to XFER_CHUNK_MAX bytes)
 *   NONE    u32 first, u32 count: the sender does not hold these chunks
 *           (count 0: any of the file; it may not know it)
 *   CANCEL  nothing: drop what I asked of this file and not yet sent
 *
 * No file has more than XFER_LEAVES_MAX chunks, so a range of chunks
 * (WANT, HAVE, NONE) must end at or before it and a CHUNK's index be
 * below it; a LEAVES' size is at most 4 GiB (BLOB_SIZE_MAX) and n its
 * count of 256 KiB chunks (BLOB_CHUNK; 0 for an empty file).  WANT's
 * flags other than XFER_F_LEAVES are kept as they came, for later use.
 *
 * Pure: no I/O, no allocation but the buffer's; fuzzed.
 */
#ifndef PAPO_XFER_H
#define PAPO_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "node/papo.h"

enum xfer_type {
	XFER_WANT = 1,
	XFER_LEAVES,
	XFER_HAVE,
	XFER_CHUNK,
	XFER_NONE,
	XFER_CANCEL,
};

#define XFER_F_LEAVES 0x01
#define XFER_WINDOW_MAX 64                 /* chunks one WANT asks */
#define XFER_LEAVES_MAX 16384              /* BLOB_CHUNKS_MAX */
#define XFER_CHUNK_MAX (256 * 1024 + 40)   /* BLOB_STORED_MAX */
/* The largest frame: a LEAVES of XFER_LEAVES_MAX leaves. */
#define XFER_FRAME_MAX (1 + PAPO_KEY_LEN + 8 + 4 + \
    XFER_LEAVES_MAX * PAPO_KEY_LEN)

struct xfer {
	enum xfer_type type;
	uint8_t root[PAPO_KEY_LEN];
	uint8_t flags;           /* WANT */
	uint64_t size;           /* LEAVES */
	uint32_t first;          /* WANT, HAVE, NONE; CHUNK: its index */
	uint32_t count;          /* WANT, NONE; LEAVES: n; HAVE: nbits */
	const uint8_t *data;     /* LEAVES: the leaves; HAVE: the bits;
	                          * CHUNK: the stored chunk */
	size_t len;              /* bytes at data */
};

/*
 * Decodes one frame of n bytes at p into x, whose data points into p.
 * 0, or -1 with err when it breaks the rules above (an unknown type, a
 * length that does not match, a count over its limit, a HAVE with bits
 * set past nbits, an empty or oversized chunk).
 */
int xfer_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x);

/* Appends the frame x to b (its data copied): 0, or -1 when x breaks
 * the rules (as xfer_decode would say) or out of memory. */
int xfer_encode(struct buf *b, const struct xfer *x);

#endif
