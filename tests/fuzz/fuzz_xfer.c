/*
 * fuzz_xfer.c: libFuzzer target for node/wire/xfer.c.  Any bytes a member
 * sends on the bulk stream must decode to a frame or an error, never a
 * read past their end; a frame that decodes, encoded again, must be the
 * same bytes (one spelling per frame) and decode to the same frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/wire/xfer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PAPO_ERR_LEN];
	struct xfer x, y;
	struct buf b;

	err[0] = '\0';
	if (xfer_decode(err, data, size, &x) != 0) {
		if (err[0] == '\0')
			__builtin_trap();
		return 0;
	}
	if (x.len > 0 && (x.data < data || x.data + x.len > data + size))
		__builtin_trap();
	buf_init(&b, XFER_FRAME_MAX + XFER_CHUNK_MAX);
	if (xfer_encode(&b, &x) != 0 || b.len != size ||
	    memcmp(b.p, data, size) != 0)
		__builtin_trap();
	if (xfer_decode(err, b.p, b.len, &y) != 0 || y.type != x.type ||
	    memcmp(y.root, x.root, PAPO_KEY_LEN) != 0 ||
	    y.flags != x.flags || y.size != x.size || y.first != x.first ||
	    y.count != x.count || y.len != x.len ||
	    (x.len > 0 && memcmp(y.data, x.data, x.len) != 0))
		__builtin_trap();
	buf_free(&b);
	return 0;
}
