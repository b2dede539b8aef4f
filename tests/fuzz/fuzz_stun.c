/*
 * fuzz_stun.c: libFuzzer target for node/wire/stun.c.  Any datagram given to
 * stun_decode must give a typed error or a message, never a read past its
 * end; the attribute readers must cope with whatever sizes a message
 * holds; and the attributes of an accepted message, written again with
 * the writer, must decode to the same ones: what the TURN server says is
 * read exactly as it was said.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/wire/stun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[70000];
	struct stun_msg m, again;
	struct stun_out o;
	size_t n;

	if (stun_decode(&m, data, size) != STUN_OK)
		return 0;
	for (size_t i = 0; i < m.na; i++) {
		const uint8_t *ph;
		struct addr a;
		size_t phl;
		uint32_t u;
		int code;

		stun_xaddr(&m, &m.a[i], &a);
		if (stun_error_code(&m.a[i], &code, &ph, &phl) == 0 &&
		    (code < 300 || code > 699 || ph + phl > data + size))
			abort();
		stun_u32(&m.a[i], &u);
	}
	stun_check_integrity(&m, (const uint8_t *)"key", 3);

	stun_begin(&o, out, sizeof(out), m.method, m.cls, m.tid);
	for (size_t i = 0; i < m.na; i++)
		stun_add(&o, m.a[i].type, m.a[i].v, m.a[i].len);
	if ((n = stun_end(&o)) == 0)
		abort();
	if (stun_decode(&again, out, n) != STUN_OK || again.na != m.na ||
	    again.method != m.method || again.cls != m.cls ||
	    again.unknown != m.unknown)
		abort();
	for (size_t i = 0; i < m.na; i++)
		if (again.a[i].type != m.a[i].type ||
		    again.a[i].len != m.a[i].len ||
		    memcmp(again.a[i].v, m.a[i].v, m.a[i].len) != 0)
			abort();
	return 0;
}
