/*
 * buf.c: a growable byte buffer that refuses to pass its limit, and a
 * bounds-checked read cursor.  Pure, any thread; a buf belongs to its
 * user.  Nothing here allocates more than the buffer's limit.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"

void
buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->toobig = 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->toobig = 0;
}

uint8_t *
buf_reserve(struct buf *b, size_t n)
{
	if (b->toobig || n > b->max - b->len) {
		b->toobig = 1;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		if (cap > b->max)
			cap = b->max;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->toobig = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->len += n;
	return b->p + b->len - n;
}

int
buf_add(struct buf *b, const void *data, size_t n)
{
	uint8_t *p;

	if (n == 0)
		return b->toobig ? -1 : 0;
	if ((p = buf_reserve(b, n)) == NULL)
		return -1;
	memcpy(p, data, n);
	return 0;
}

int
buf_u8(struct buf *b, uint8_t v)
{
	return buf_add(b, &v, 1);
}

int
buf_u16(struct buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	return buf_add(b, x, sizeof(x));
}

int
buf_u32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v };

	return buf_add(b, x, sizeof(x));
}

int
buf_u64(struct buf *b, uint64_t v)
{
	if (buf_u32(b, (uint32_t)(v >> 32)) == -1)
		return -1;
	return buf_u32(b, (uint32_t)v);
}

void
rd_init(struct rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
}

size_t
rd_left(const struct rd *r)
{
	return r->len - r->off;
}

int
rd_bytes(struct rd *r, void *out, size_t n)
{
	if (rd_left(r) < n)
		return -1;
	memcpy(out, r->p + r->off, n);
	r->off += n;
	return 0;
}

int
rd_u8(struct rd *r, uint8_t *v)
{
	return rd_bytes(r, v, 1);
}

int
rd_u16(struct rd *r, uint16_t *v)
{
	uint8_t x[2];

	if (rd_bytes(r, x, sizeof(x)) == -1)
		return -1;
	*v = (uint16_t)((x[0] << 8) | x[1]);
	return 0;
}

int
rd_u32(struct rd *r, uint32_t *v)
{
	uint8_t x[4];

	if (rd_bytes(r, x, sizeof(x)) == -1)
		return -1;
	*v = (uint32_t)x[0] << 24 | (uint32_t)x[1] << 16 |
	    (uint32_t)x[2] << 8 | x[3];
	return 0;
}
