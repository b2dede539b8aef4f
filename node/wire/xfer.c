/*
 * xfer.c: the binary frames of the bulk stream that move files' chunks
 * (docs/PROTOCOL.md, "Files between members"), their decoder and their
 * encoder.  Pure: no I/O, no clock, no allocation but the caller's
 * buffer, so any thread may call it and it is fuzzed
 * (tests/fuzz/fuzz_xfer.c).
 *
 * A frame comes from another member's daemon, which may be broken or
 * hostile: every length is checked against the frame's own and against a
 * named limit before anything points into it.  The encoder writes the
 * frame and then decodes it, so it refuses exactly what the decoder
 * would, with no second copy of the rules to drift apart.
 */
#include <stdio.h>
#include <string.h>

#include "node/wire/xfer.h"

#define HEAD_LEN (1 + PAPO_KEY_LEN)
/* The plain bytes of a chunk and the largest file (node/store/blob.h's
 * BLOB_CHUNK and BLOB_SIZE_MAX, which wire/ may not include). */
#define PLAIN_CHUNK (256 * 1024)
#define SIZE_MAX_ (4ULL << 30)

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Whether chunks [first, first + count) can name chunks of a file. */
static int
range_ok(char err[PAPO_ERR_LEN], const char *what, uint32_t first,
    uint32_t count)
{
	if ((uint64_t)first + count > XFER_LEAVES_MAX) {
		snprintf(err, PAPO_ERR_LEN, "%s names chunks [%u, %llu), past "
		    "the %d a file may have", what, first,
		    (unsigned long long)first + count, XFER_LEAVES_MAX);
		return -1;
	}
	return 0;
}

static int
want_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	if (n != 9) {
		snprintf(err, PAPO_ERR_LEN, "WANT has %zu bytes after its "
		    "root, not 9", n);
		return -1;
	}
	x->flags = p[0];
	x->first = le32(p + 1);
	x->count = le32(p + 5);
	if (x->count > XFER_WINDOW_MAX) {
		snprintf(err, PAPO_ERR_LEN, "WANT asks %u chunks, more than "
		    "%d", x->count, XFER_WINDOW_MAX);
		return -1;
	}
	return range_ok(err, "WANT", x->first, x->count);
}

static int
leaves_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	uint64_t chunks;

	if (n < 12) {
		snprintf(err, PAPO_ERR_LEN, "LEAVES is cut short (%zu bytes "
		    "after its root)", n);
		return -1;
	}
	x->size = le64(p);
	x->count = le32(p + 8);
	if (x->count > XFER_LEAVES_MAX) {
		snprintf(err, PAPO_ERR_LEN, "LEAVES has %u leaves, more than "
		    "%d", x->count, XFER_LEAVES_MAX);
		return -1;
	}
	if (n - 12 != (size_t)x->count * PAPO_KEY_LEN) {
		snprintf(err, PAPO_ERR_LEN, "LEAVES of %u leaves has %zu bytes "
		    "of them, not %zu", x->count, n - 12,
		    (size_t)x->count * PAPO_KEY_LEN);
		return -1;
	}
	chunks = (x->size + PLAIN_CHUNK - 1) / PLAIN_CHUNK;
	if (x->size > SIZE_MAX_ || chunks != x->count) {
		snprintf(err, PAPO_ERR_LEN, "LEAVES of a file of %llu bytes "
		    "has %u leaves, not its chunk count",
		    (unsigned long long)x->size, x->count);
		return -1;
	}
	x->data = p + 12;
	x->len = n - 12;
	return 0;
}

static int
have_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	size_t bytes;

	if (n < 8) {
		snprintf(err, PAPO_ERR_LEN, "HAVE is cut short (%zu bytes "
		    "after its root)", n);
		return -1;
	}
	x->first = le32(p);
	x->count = le32(p + 4);
	if (range_ok(err, "HAVE", x->first, x->count) != 0)
		return -1;
	bytes = ((size_t)x->count + 7) / 8;
	if (n - 8 != bytes) {
		snprintf(err, PAPO_ERR_LEN, "HAVE of %u bits has %zu bytes of "
		    "them, not %zu", x->count, n - 8, bytes);
		return -1;
	}
	if (x->count % 8 != 0 && (p[8 + bytes - 1] >> (x->count % 8)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "HAVE of %u bits has a bit set "
		    "past them", x->count);
		return -1;
	}
	x->data = p + 8;
	x->len = bytes;
	return 0;
}

static int
chunk_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	if (n < 4) {
		snprintf(err, PAPO_ERR_LEN, "CHUNK is cut short (%zu bytes "
		    "after its root)", n);
		return -1;
	}
	x->first = le32(p);
	if (n == 4 || n - 4 > XFER_CHUNK_MAX) {
		snprintf(err, PAPO_ERR_LEN, "CHUNK %u has %zu bytes, not 1 to "
		    "%d", x->first, n - 4, XFER_CHUNK_MAX);
		return -1;
	}
	if (range_ok(err, "CHUNK", x->first, 1) != 0)
		return -1;
	x->data = p + 4;
	x->len = n - 4;
	return 0;
}

static int
none_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	if (n != 8) {
		snprintf(err, PAPO_ERR_LEN, "NONE has %zu bytes after its "
		    "root, not 8", n);
		return -1;
	}
	x->first = le32(p);
	x->count = le32(p + 4);
	return range_ok(err, "NONE", x->first, x->count);
}

int
xfer_decode(char err[PAPO_ERR_LEN], const uint8_t *p, size_t n,
    struct xfer *x)
{
	memset(x, 0, sizeof(*x));
	if (n < HEAD_LEN) {
		snprintf(err, PAPO_ERR_LEN, "a bulk frame of %zu bytes is "
		    "shorter than its type and root (%d)", n, HEAD_LEN);
		return -1;
	}
	if (p[0] < XFER_WANT || p[0] > XFER_CANCEL) {
		snprintf(err, PAPO_ERR_LEN, "unknown bulk frame type %u", p[0]);
		return -1;
	}
	x->type = (enum xfer_type)p[0];
	memcpy(x->root, p + 1, PAPO_KEY_LEN);
	p += HEAD_LEN;
	n -= HEAD_LEN;
	switch (x->type) {
	case XFER_WANT:
		return want_decode(err, p, n, x);
	case XFER_LEAVES:
		return leaves_decode(err, p, n, x);
	case XFER_HAVE:
		return have_decode(err, p, n, x);
	case XFER_CHUNK:
		return chunk_decode(err, p, n, x);
	case XFER_NONE:
		return none_decode(err, p, n, x);
	case XFER_CANCEL:
		if (n != 0) {
			snprintf(err, PAPO_ERR_LEN, "CANCEL has %zu bytes "
			    "after its root, not 0", n);
			return -1;
		}
		return 0;
	}
	return -1;
}

/* The bytes after the root for x, or -1 when its type or its data's
 * length cannot make a frame. */
static long
body_len(const struct xfer *x)
{
	switch (x->type) {
	case XFER_WANT:
		return 9;
	case XFER_LEAVES:
		if (x->count > XFER_LEAVES_MAX ||
		    x->len != (size_t)x->count * PAPO_KEY_LEN)
			return -1;
		return 12 + (long)x->len;
	case XFER_HAVE:
		if (x->len != ((size_t)x->count + 7) / 8 ||
		    x->len > XFER_LEAVES_MAX / 8 + 1)
			return -1;
		return 8 + (long)x->len;
	case XFER_CHUNK:
		if (x->len > XFER_CHUNK_MAX)
			return -1;
		return 4 + (long)x->len;
	case XFER_NONE:
		return 8;
	case XFER_CANCEL:
		return 0;
	}
	return -1;
}

int
xfer_encode(struct buf *b, const struct xfer *x)
{
	char err[PAPO_ERR_LEN];
	struct xfer back;
	size_t start = b->len;
	int toobig = b->toobig;
	uint8_t *p;
	long n;

	if ((n = body_len(x)) < 0 ||
	    (p = buf_reserve(b, HEAD_LEN + (size_t)n)) == NULL)
		goto fail;
	p[0] = (uint8_t)x->type;
	memcpy(p + 1, x->root, PAPO_KEY_LEN);
	p += HEAD_LEN;
	switch (x->type) {
	case XFER_WANT:
		p[0] = x->flags;
		put32(p + 1, x->first);
		put32(p + 5, x->count);
		break;
	case XFER_LEAVES:
		put64(p, x->size);
		put32(p + 8, x->count);
		if (x->len > 0)
			memcpy(p + 12, x->data, x->len);
		break;
	case XFER_HAVE:
		put32(p, x->first);
		put32(p + 4, x->count);
		if (x->len > 0)
			memcpy(p + 8, x->data, x->len);
		break;
	case XFER_CHUNK:
		put32(p, x->first);
		if (x->len > 0)
			memcpy(p + 4, x->data, x->len);
		break;
	case XFER_NONE:
		put32(p, x->first);
		put32(p + 4, x->count);
		break;
	case XFER_CANCEL:
		break;
	}
	if (xfer_decode(err, b->p + start, b->len - start, &back) == 0)
		return 0;
fail:
	b->len = start;
	b->toobig = toobig;
	return -1;
}
