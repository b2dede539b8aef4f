/*
 * utf8.h: strict UTF-8 validation (no overlong forms, no surrogates,
 * nothing above U+10FFFF).  Pure.
 */
#ifndef PAPO_UTF8_H
#define PAPO_UTF8_H

#include <stddef.h>

/* 1 when the n bytes are valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t n);

/* 1 when s (n bytes) is usable as a member name or about text: valid
 * UTF-8 with no control characters. */
int utf8_printable(const char *s, size_t n);

#endif
