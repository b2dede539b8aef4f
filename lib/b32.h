/*
 * b32.h: lowercase RFC 4648 base32 without padding, the text form of member
 * ids, message ids and invites (docs/PROTOCOL.md, "Text encodings").
 * Pure functions; no allocation.
 */
#ifndef PAPO_B32_H
#define PAPO_B32_H

#include <stddef.h>
#include <stdint.h>

/* Characters needed for n bytes, not counting the terminating NUL. */
size_t b32_len(size_t n);

/* Encodes n bytes into out, which holds b32_len(n) + 1 bytes. */
void b32_encode(const uint8_t *in, size_t n, char *out);

/*
 * Decodes len characters of in (upper case accepted) into out, of cap
 * bytes.  Returns the number of bytes written, or -1 when a character is
 * not base32 (its index goes to *bad), or -2 when the length is one no
 * encoder makes or the unused trailing bits are not zero, or -3 when out
 * is too small.
 */
long b32_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *bad);

#endif
