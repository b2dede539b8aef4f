/*
 * utf8.h: strict UTF-8 validation (no overlong forms, no surrogates,
 * nothing above U+10FFFF).  Pure.
 */
#ifndef PAPO_UTF8_H
#define PAPO_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the n bytes are valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t n);

/* 1 when s (n bytes) is usable as a member name or about text: valid
 * UTF-8 with no control characters. */
int utf8_printable(const char *s, size_t n);

/* 1 when cp is a Unicode format character (general category Cf: the
 * bidi controls such as U+202E, zero-width spaces and joiners, the
 * soft hyphen, tags...), which change how the text around them shows
 * without showing themselves. */
int utf8_format(uint32_t cp);

/* The length of the UTF-8 sequence at s (n bytes left, n > 0) and its
 * code point in *cp, or 0 when it is not valid. */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* 1 when s (n bytes) is utf8_printable and holds no format character:
 * a file's name shows as what it is, no right-to-left override
 * disguising it. */
int utf8_plain(const char *s, size_t n);

#endif
