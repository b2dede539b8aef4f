/*
 * buf.h: a growable byte buffer with a hard size limit (so that nothing
 * read from the network or disk grows without bound), and a read cursor
 * whose every read is bounds-checked.  Pure; any thread.
 */
#ifndef PAPO_BUF_H
#define PAPO_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *p;
	size_t len;
	size_t cap;
	size_t max;     /* len never exceeds this */
	int toobig;     /* set once an add was refused; later adds fail too */
};

void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
int buf_add(struct buf *b, const void *data, size_t n);
/* Extends b by n uninitialised bytes and returns where they start, or
 * NULL (b unchanged) past the limit. */
uint8_t *buf_reserve(struct buf *b, size_t n);
int buf_u8(struct buf *b, uint8_t v);
int buf_u16(struct buf *b, uint16_t v);     /* big-endian */
int buf_u32(struct buf *b, uint32_t v);
int buf_u64(struct buf *b, uint64_t v);

/* A cursor over bytes it does not own.  Each read returns -1 when fewer
 * bytes remain than it needs, and then consumes nothing. */
struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
};

void rd_init(struct rd *r, const void *p, size_t len);
size_t rd_left(const struct rd *r);
int rd_u8(struct rd *r, uint8_t *v);
int rd_u16(struct rd *r, uint16_t *v);
int rd_u32(struct rd *r, uint32_t *v);
int rd_bytes(struct rd *r, void *out, size_t n);

#endif
