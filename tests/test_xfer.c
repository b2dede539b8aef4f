/*
 * test_xfer.c: node/wire/xfer.c.  Every frame type round-trips with its
 * bytes as docs/PROTOCOL.md lays them out; every way a member's daemon
 * could send a broken frame (cut short, too long, an unknown type, a
 * count past its limit, a HAVE with stray bits, an empty or huge chunk)
 * is refused with a reason, and the encoder refuses the same frames.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "node/wire/xfer.h"

static uint8_t leaves[3 * PAPO_KEY_LEN];
static uint8_t chunk[XFER_CHUNK_MAX + 1];
static const uint8_t bits[2] = { 0xa5, 0x03 };     /* 10 bits */

static struct xfer
frame(enum xfer_type t)
{
	struct xfer x;

	memset(&x, 0, sizeof(x));
	x.type = t;
	for (size_t i = 0; i < PAPO_KEY_LEN; i++)
		x.root[i] = (uint8_t)(0xc0 + i);
	switch (t) {
	case XFER_WANT:
		x.flags = XFER_F_LEAVES;
		x.first = 0x01020304 & 0x3ff;
		x.count = XFER_WINDOW_MAX;
		break;
	case XFER_LEAVES:
		x.size = 2 * 256 * 1024 + 1;
		x.count = 3;
		x.data = leaves;
		x.len = sizeof(leaves);
		break;
	case XFER_HAVE:
		x.first = 7;
		x.count = 10;
		x.data = bits;
		x.len = sizeof(bits);
		break;
	case XFER_CHUNK:
		x.first = 2;
		x.data = chunk;
		x.len = 1000;
		break;
	case XFER_NONE:
		x.first = 5;
		x.count = 9;
		break;
	case XFER_CANCEL:
		break;
	}
	return x;
}

static int
same(const struct xfer *a, const struct xfer *b)
{
	return a->type == b->type &&
	    memcmp(a->root, b->root, PAPO_KEY_LEN) == 0 &&
	    a->flags == b->flags && a->size == b->size &&
	    a->first == b->first && a->count == b->count &&
	    a->len == b->len &&
	    (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static void
refused(const char *what, const uint8_t *p, size_t n, const char *word)
{
	char err[PAPO_ERR_LEN] = "";
	struct xfer x;

	if (xfer_decode(err, p, n, &x) != -1) {
		fprintf(stderr, "accepted: %s\n", what);
		CHECK(0);
		return;
	}
	/* The reason names what was wrong. */
	if (word != NULL && strstr(err, word) == NULL)
		fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n", what, err, word);
	CHECK(word == NULL || strstr(err, word) != NULL);
	CHECK(err[0] != '\0');
}

static void
test_round_trips(void)
{
	static const size_t sizes[] = { 9, 12 + 3 * PAPO_KEY_LEN, 8 + 2,
	    4 + 1000, 8, 0 };

	for (size_t i = 0; i < sizeof(leaves); i++)
		leaves[i] = (uint8_t)(i * 3);
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)(i * 5 + 1);
	for (int t = XFER_WANT; t <= XFER_CANCEL; t++) {
		struct xfer x = frame((enum xfer_type)t), y;
		struct buf b;
		char err[PAPO_ERR_LEN];

		buf_init(&b, XFER_FRAME_MAX);
		CHECK_EQ_INT(buf_add(&b, "z", 1), 0);
		CHECK_EQ_INT(xfer_encode(&b, &x), 0);
		CHECK_EQ_INT(b.len, 1 + 1 + PAPO_KEY_LEN + sizes[t - 1]);
		CHECK_EQ_INT(b.p[1], t);
		CHECK_EQ_INT(xfer_decode(err, b.p + 1, b.len - 1, &y), 0);
		CHECK(same(&x, &y));
		/* Data points into the frame, not at a copy. */
		if (y.len > 0)
			CHECK(y.data > b.p && y.data < b.p + b.len);

		/* Cut at every byte: refused, never read past. */
		for (size_t n = 0; n + 1 < b.len; n++) {
			uint8_t *cut = malloc(n ? n : 1);

			memcpy(cut, b.p + 1, n);
			/* A CHUNK cut after a byte of its data is a shorter
			 * chunk: the stream's framing gives its length. */
			if (t == XFER_CHUNK && n >= 1 + PAPO_KEY_LEN + 5) {
				CHECK_EQ_INT(xfer_decode(err, cut, n, &y), 0);
				CHECK_EQ_INT(y.len, n - 1 - PAPO_KEY_LEN - 4);
			} else
				CHECK_EQ_INT(xfer_decode(err, cut, n, &y), -1);
			free(cut);
		}
		/* One byte more: refused (a CHUNK's is its own, so a
		 * longer chunk, checked below). */
		CHECK_EQ_INT(buf_add(&b, "!", 1), 0);
		if (t != XFER_CHUNK)
			CHECK_EQ_INT(xfer_decode(err, b.p + 1, b.len - 1, &y),
			    -1);
		buf_free(&b);
	}
}

static void
test_layout(void)
{
	struct xfer x = frame(XFER_WANT);
	struct buf b;
	const uint8_t *p;

	x.first = 0x1234;
	x.count = 0x21;
	buf_init(&b, XFER_FRAME_MAX);
	CHECK_EQ_INT(xfer_encode(&b, &x), 0);
	p = b.p + 1 + PAPO_KEY_LEN;
	/* u8 flags, then little-endian u32s. */
	CHECK(b.p[0] == 1 && b.p[1] == 0xc0 && b.p[32] == 0xdf);
	CHECK(p[0] == XFER_F_LEAVES);
	CHECK(p[1] == 0x34 && p[2] == 0x12 && p[3] == 0 && p[4] == 0);
	CHECK(p[5] == 0x21 && p[6] == 0 && p[7] == 0 && p[8] == 0);
	buf_reset(&b);
	x = frame(XFER_LEAVES);
	x.size = 4ULL << 30;    /* the largest file: 16384 chunks */
	x.count = XFER_LEAVES_MAX;
	x.data = calloc(XFER_LEAVES_MAX, PAPO_KEY_LEN);
	x.len = (size_t)XFER_LEAVES_MAX * PAPO_KEY_LEN;
	CHECK_EQ_INT(xfer_encode(&b, &x), 0);
	CHECK_EQ_INT(b.len, XFER_FRAME_MAX);
	p = b.p + 1 + PAPO_KEY_LEN;
	CHECK(p[0] == 0 && p[4] == 1 && p[5] == 0 && p[7] == 0);
	CHECK(p[8] == 0 && p[9] == 0x40 && p[10] == 0 && p[11] == 0);
	free((void *)x.data);
	buf_free(&b);
}

/* A frame built by hand: type, root, then the bytes given. */
static size_t
raw(uint8_t *out, int type, const void *rest, size_t n)
{
	out[0] = (uint8_t)type;
	memset(out + 1, 0xab, PAPO_KEY_LEN);
	memcpy(out + 1 + PAPO_KEY_LEN, rest, n);
	return 1 + PAPO_KEY_LEN + n;
}

static void
test_refused(void)
{
	static uint8_t f[1 + PAPO_KEY_LEN + 12 + 2 * PAPO_KEY_LEN +
	    XFER_CHUNK_MAX + 8];
	char err[PAPO_ERR_LEN];
	struct xfer x;
	size_t n;

	refused("empty", f, 0, "shorter");
	n = raw(f, 0, "\1\0\0\0\0\0\0\0\0", 9);
	refused("type 0", f, n, "unknown bulk frame type 0");
	n = raw(f, 7, "", 0);
	refused("type 7", f, n, "unknown bulk frame type 7");
	n = raw(f, 255, "", 0);
	refused("type 255", f, n, "type 255");

	/* WANT: the window, the range of chunks. */
	n = raw(f, XFER_WANT, "\1\0\0\0\0\x40\0\0\0", 9);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
	CHECK_EQ_INT(x.count, 64);
	n = raw(f, XFER_WANT, "\1\0\0\0\0\x41\0\0\0", 9);
	refused("WANT 65", f, n, "more than 64");
	n = raw(f, XFER_WANT, "\1\0\0\0\0\0\0\0\x80", 9);
	refused("WANT 2^31", f, n, "more than 64");
	n = raw(f, XFER_WANT, "\0\xf0\x3f\0\0\x11\0\0\0", 9);
	refused("WANT past the last chunk", f, n, "past");
	n = raw(f, XFER_WANT, "\x80\xc0\x3f\0\0\0\0\0\0", 9);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);     /* count 0, flag */
	CHECK(x.flags == 0x80 && x.count == 0 && x.first == 0x3fc0);

	/* LEAVES: n over the limit, n against the bytes and the size. */
	{
		uint8_t l[12 + 2 * PAPO_KEY_LEN];

		memset(l, 0, sizeof(l));
		l[2] = 0x04;                    /* 256 KiB + 1: 2 chunks */
		l[0] = 1;
		l[8] = 2;
		n = raw(f, XFER_LEAVES, l, sizeof(l));
		CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
		CHECK_EQ_INT(x.size, 256 * 1024 + 1);
		refused("LEAVES a leaf short", f, n - 1, "not 64");
		f[n] = 0;
		refused("LEAVES a byte more", f, n + 1, "not 64");
		l[8] = 1;
		n = raw(f, XFER_LEAVES, l, 12 + PAPO_KEY_LEN);
		refused("LEAVES 1 for 2 chunks", f, n, "chunk count");
		memset(l, 0, 12);
		l[8] = 1;
		n = raw(f, XFER_LEAVES, l, 12 + PAPO_KEY_LEN);
		refused("LEAVES 1 for an empty file", f, n, "chunk count");
		l[8] = 0;
		n = raw(f, XFER_LEAVES, l, 12);
		CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);  /* empty file */
		memcpy(l, "\0\0\0\0\0\x40\0\0\x01\x40\0\0", 12);
		n = raw(f, XFER_LEAVES, l, 12);
		refused("LEAVES n 16385", f, n, "more than 16384");
		memcpy(l, "\0\0\0\0\0\0\0\x01\0\0\0\0", 12);
		n = raw(f, XFER_LEAVES, l, 12);
		refused("LEAVES 2^56 bytes", f, n, "chunk count");
		memcpy(l, "\0\0\0\0\0\0\0\0\0\0\0\x01", 12);
		n = raw(f, XFER_LEAVES, l, 12);
		refused("LEAVES n 2^24", f, n, "more than");
	}

	/* HAVE: bits past nbits, lengths, the range. */
	n = raw(f, XFER_HAVE, "\0\0\0\0\x0a\0\0\0\xff\x03", 10);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
	n = raw(f, XFER_HAVE, "\0\0\0\0\x0a\0\0\0\xff\x04", 10);
	refused("HAVE bit 10 of 10", f, n, "past");
	n = raw(f, XFER_HAVE, "\0\0\0\0\x0a\0\0\0\xff\x80", 10);
	refused("HAVE bit 15 of 10", f, n, "past");
	n = raw(f, XFER_HAVE, "\0\0\0\0\x08\0\0\0\xff", 9);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
	n = raw(f, XFER_HAVE, "\0\0\0\0\x08\0\0\0\xff\0", 10);
	refused("HAVE a byte more", f, n, "not 1");
	n = raw(f, XFER_HAVE, "\0\0\0\0\x0a\0\0\0\xff", 9);
	refused("HAVE a byte short", f, n, "not 2");
	n = raw(f, XFER_HAVE, "\0\0\0\0\0\0\0\0", 8);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);      /* nothing held */
	n = raw(f, XFER_HAVE, "\0\0\0\0\x01\x40\0\0", 8);
	refused("HAVE 16385 bits", f, n, "past");
	n = raw(f, XFER_HAVE, "\xff\xff\xff\xff\x01\0\0\0\x01", 9);
	refused("HAVE first 2^32-1", f, n, "past");

	/* CHUNK: empty, at its limit, over it, its index. */
	memset(f, 0, sizeof(f));
	n = raw(f, XFER_CHUNK, "\0\0\0\0", 4);
	refused("CHUNK empty", f, n, "not 1 to");
	CHECK_EQ_INT(xfer_decode(err, f, n + XFER_CHUNK_MAX, &x), 0);
	CHECK_EQ_INT(x.len, XFER_CHUNK_MAX);
	refused("CHUNK over", f, n + XFER_CHUNK_MAX + 1, "not 1 to");
	n = raw(f, XFER_CHUNK, "\xff\x3f\0\0x", 5);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
	n = raw(f, XFER_CHUNK, "\0\x40\0\0x", 5);
	refused("CHUNK 16384", f, n, "past");

	/* NONE and CANCEL: exact lengths. */
	n = raw(f, XFER_NONE, "\0\0\0\0\0\0\0\0", 8);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);     /* not here */
	CHECK(x.type == XFER_NONE && x.count == 0);
	refused("NONE short", f, n - 1, "not 8");
	refused("NONE long", f, n + 1, "not 8");
	n = raw(f, XFER_NONE, "\0\0\0\0\x01\x40\0\0", 8);
	refused("NONE past", f, n, "past");
	n = raw(f, XFER_CANCEL, "", 0);
	CHECK_EQ_INT(xfer_decode(err, f, n, &x), 0);
	refused("CANCEL long", f, n + 1, "not 0");
}

static void
encode_refused(const char *what, const struct xfer *x)
{
	struct buf b;

	buf_init(&b, XFER_FRAME_MAX);
	CHECK_EQ_INT(buf_add(&b, "keep", 4), 0);
	if (xfer_encode(&b, x) != -1)
		fprintf(stderr, "encoded: %s\n", what);
	CHECK(b.len == 4 && memcmp(b.p, "keep", 4) == 0 && !b.toobig);
	buf_free(&b);
}

static void
test_encode_refuses(void)
{
	struct xfer x;
	uint8_t stray[2] = { 0xff, 0x07 };

	x = frame(XFER_WANT); x.type = (enum xfer_type)0;
	encode_refused("type 0", &x);
	x = frame(XFER_WANT); x.type = (enum xfer_type)7;
	encode_refused("type 7", &x);
	x = frame(XFER_WANT); x.count = XFER_WINDOW_MAX + 1;
	encode_refused("WANT 65", &x);
	x = frame(XFER_WANT); x.first = XFER_LEAVES_MAX; x.count = 1;
	encode_refused("WANT past", &x);
	x = frame(XFER_LEAVES); x.len -= 1;
	encode_refused("LEAVES length", &x);
	x = frame(XFER_LEAVES); x.size = 1;
	encode_refused("LEAVES size", &x);
	x = frame(XFER_LEAVES); x.count = XFER_LEAVES_MAX + 1;
	x.len = (size_t)x.count * PAPO_KEY_LEN;
	encode_refused("LEAVES n", &x);
	x = frame(XFER_HAVE); x.data = stray;
	encode_refused("HAVE stray bit", &x);
	x = frame(XFER_HAVE); x.count = 17;
	encode_refused("HAVE length", &x);
	x = frame(XFER_HAVE); x.count = 0xffffffff;
	encode_refused("HAVE 2^32 bits", &x);
	x = frame(XFER_CHUNK); x.len = 0;
	encode_refused("CHUNK empty", &x);
	x = frame(XFER_CHUNK); x.len = XFER_CHUNK_MAX + 1;
	encode_refused("CHUNK over", &x);
	x = frame(XFER_NONE); x.first = XFER_LEAVES_MAX;
	encode_refused("NONE past", &x);

	/* A buffer too small: refused, left as it was. */
	{
		struct buf b;

		x = frame(XFER_CHUNK);
		buf_init(&b, 100);
		CHECK_EQ_INT(buf_add(&b, "keep", 4), 0);
		CHECK_EQ_INT(xfer_encode(&b, &x), -1);
		CHECK(b.len == 4 && !b.toobig);
		x = frame(XFER_CANCEL);
		CHECK_EQ_INT(xfer_encode(&b, &x), 0);
		buf_free(&b);
	}
}

int
main(void)
{
	test_round_trips();
	test_layout();
	test_refused();
	test_encode_refuses();
	return check_exit();
}
