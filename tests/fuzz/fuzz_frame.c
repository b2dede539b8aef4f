/*
 * fuzz_frame.c: libFuzzer target for node/wire/frame.c.  The input is tried
 * both as a frame's JSON text and as a sealed frame under a fixed room
 * key.  Whatever decodes must encode again into a frame the decoder
 * accepts, of the same type, and must seal into one that opens: a node
 * that forwards what it received must never send what its peers refuse.
 * The same holds across versions: what frame_for_version gives a
 * connection of another version, that version's decoder takes, its
 * signatures checked (a hello, whose "v" is its own connection's, is
 * never passed on).
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/buf.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The room every input is tried in; set once, read-only after. */
static struct room_keys keys;
/* frame_for_version's room for a peers frame's entries. */
static struct frame_peer entries[FRAME_PEERS_MAX];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t secret[PAPO_KEY_LEN];

	(void)argc;
	(void)argv;
	if (sec_init() == -1)
		abort();
	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)i;
	sec_room_keys(secret, &keys);
	return 0;
}

/* Encodes f as JSON, decodes that as the member's own log would, and
 * seals and opens it as a peer would; traps when any step refuses. */
static void
again(const struct frame *f, unsigned version)
{
	struct frame g;
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_encode(f, &b) == -1)
		__builtin_trap();
	if (frame_decode(&keys, (const char *)b.p, b.len, FRAME_TRUSTED |
	    version, &g) != FRAME_OK || g.type != f->type)
		__builtin_trap();
	frame_clear(&g);

	buf_reset(&b);
	if (frame_seal(&keys, f, &b) == -1)
		__builtin_trap();
	if (frame_open(&keys, b.p, b.len, version, &g) != FRAME_OK ||
	    g.type != f->type)
		__builtin_trap();
	frame_clear(&g);
	buf_free(&b);
}

/* What frame_for_version gives each version, that version's decoder
 * takes; its signatures checked unless trusted (FRAME_TRUSTED: f's own
 * were not). */
static void
across(const struct frame *f, unsigned trusted)
{
	struct frame g, o;
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	for (unsigned w = 1; w <= FRAME_VERSION && f->type != FRAME_HELLO;
	    w++) {
		if (frame_for_version(f, w, &o, entries) == -1)
			continue;
		buf_reset(&b);
		if (frame_encode(&o, &b) == -1 ||
		    frame_decode(&keys, (const char *)b.p, b.len,
		    frame_flags(w) | trusted, &g) != FRAME_OK ||
		    g.type != f->type)
			__builtin_trap();
		frame_clear(&g);
	}
	buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame f;

	/* As a connection of each protocol version would. */
	for (unsigned ver = 1; ver <= FRAME_VERSION; ver++) {
		unsigned v = frame_flags(ver);

		if (frame_decode(&keys, (const char *)data, size, v, &f) ==
		    FRAME_OK) {
			again(&f, v);
			across(&f, 0);
			frame_clear(&f);
		} else if (frame_decode(&keys, (const char *)data, size,
		    v | FRAME_TRUSTED, &f) == FRAME_OK) {
			/* Signed in another room, as the seeds are. */
			across(&f, FRAME_TRUSTED);
			frame_clear(&f);
		}
		if (frame_open(&keys, data, size, v, &f) == FRAME_OK)
			frame_clear(&f);
		if (ver >= 3 && frame_open_epoch(&keys, data, size, v, &f) ==
		    FRAME_OK)
			frame_clear(&f);
	}
	return 0;
}
