/*
 * utf8.c: strict UTF-8 validation for every text that crosses the wire or
 * the command line.  Pure, any thread.
 */
#include <stdint.h>

#include "lib/utf8.h"

/* Returns the length of the sequence at s (at most n bytes) and its code
 * point in *cp, or 0 when it is not valid UTF-8. */
static size_t
utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, c &= 0x07, min = 0x10000;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

int
utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;

	while (i < n) {
		/* ASCII runs are the common case and need no decoding. */
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t len = utf8_next(p + i, n - i, &cp);
		if (len == 0)
			return 0;
		i += len;
	}
	return 1;
}

int
utf8_printable(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;

	while (i < n) {
		size_t len = utf8_next(p + i, n - i, &cp);
		if (len == 0 || cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0))
			return 0;
		i += len;
	}
	return 1;
}

int
utf8_format(uint32_t cp)
{
	/* Unicode 15.1's Cf, as ranges. */
	static const uint32_t cf[][2] = {
		{ 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c },
		{ 0x6dd, 0x6dd }, { 0x70f, 0x70f }, { 0x890, 0x891 },
		{ 0x8e2, 0x8e2 }, { 0x180e, 0x180e }, { 0x200b, 0x200f },
		{ 0x202a, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
		{ 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd },
		{ 0x110cd, 0x110cd }, { 0x13430, 0x1343f },
		{ 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
		{ 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
	};

	if (cp < 0xad)
		return 0;
	for (size_t i = 0; i < sizeof(cf) / sizeof(cf[0]); i++)
		if (cp >= cf[i][0] && cp <= cf[i][1])
			return 1;
	return 0;
}

size_t
utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	return n == 0 ? 0 : utf8_next((const unsigned char *)s, n, cp);
}

int
utf8_plain(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;

	if (!utf8_printable(s, n))
		return 0;
	while (i < n) {
		size_t len = utf8_next(p + i, n - i, &cp);

		if (len == 0 || utf8_format(cp))
			return 0;
		i += len;
	}
	return 1;
}
