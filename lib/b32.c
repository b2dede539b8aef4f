/*
 * b32.c: lowercase base32 (RFC 4648 alphabet, no padding) for ids and
 * invites; docs/PROTOCOL.md, "Text encodings".  Pure, any thread.
 *
 * Decoding is strict so that every value has exactly one text form: a
 * length no encoder produces and non-zero unused trailing bits are
 * refused, which keeps two spellings of one member id from existing.
 */
#include "lib/b32.h"

static const char b32_alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

size_t
b32_len(size_t n)
{
	return (n * 8 + 4) / 5;
}

void
b32_encode(const uint8_t *in, size_t n, char *out)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = b32_alphabet[(acc >> bits) & 31];
		}
	}
	if (bits > 0)
		out[o++] = b32_alphabet[(acc << (5 - bits)) & 31];
	out[o] = '\0';
}

static int
b32_value(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= '2' && c <= '7')
		return c - '2' + 26;
	return -1;
}

long
b32_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *bad)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	size_t rem = len % 8;

	/* 1, 3 and 6 trailing characters cannot come from whole bytes. */
	if (rem == 1 || rem == 3 || rem == 6)
		return -2;
	if (len * 5 / 8 > cap)
		return -3;
	for (size_t i = 0; i < len; i++) {
		int v = b32_value(in[i]);

		if (v < 0) {
			if (bad != NULL)
				*bad = i;
			return -1;
		}
		acc = (acc << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	if ((acc & ((1u << bits) - 1)) != 0)
		return -2;
	return (long)o;
}
