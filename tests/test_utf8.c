/*
 * test_utf8.c: node/utf8.c.  Valid text of every sequence length, each
 * kind of invalid sequence strict UTF-8 refuses, and the printable test
 * names and about texts go through.
 */
#include <string.h>

#include "check.h"
#include "lib/utf8.h"

static int
valid(const char *s)
{
	return utf8_valid(s, strlen(s));
}

static int
printable(const char *s)
{
	return utf8_printable(s, strlen(s));
}

static void
test_valid(void)
{
	CHECK(valid(""));
	CHECK(valid("hello, room"));
	CHECK(valid("\xc2\x80"));                 /* U+0080, smallest of 2 */
	CHECK(valid("Zo\xc3\xab"));               /* Zoë */
	CHECK(valid("\xdf\xbf"));                 /* U+07FF */
	CHECK(valid("\xe0\xa0\x80"));             /* U+0800, smallest of 3 */
	CHECK(valid("\xe2\x82\xac"));             /* € */
	CHECK(valid("\xed\x9f\xbf"));             /* U+D7FF, below surrogates */
	CHECK(valid("\xee\x80\x80"));             /* U+E000, above them */
	CHECK(valid("\xef\xbf\xbf"));             /* U+FFFF */
	CHECK(valid("\xf0\x90\x80\x80"));         /* U+10000, smallest of 4 */
	CHECK(valid("\xf0\x9f\x9a\x80"));         /* 🚀 */
	CHECK(valid("\xf4\x8f\xbf\xbf"));         /* U+10FFFF, the last */
	CHECK(valid("a\xc3\xab\xe2\x82\xac\xf0\x9f\x9a\x80z"));
	/* A NUL inside is valid UTF-8; printable() is what refuses it. */
	CHECK(utf8_valid("a\0b", 3));
	/* Only n bytes count: a cut inside a sequence is past n here. */
	CHECK(utf8_valid("ab\xe2\x82\xac", 2));
}

static void
test_invalid(void)
{
	/* Overlong forms: a second spelling of an ASCII or short code. */
	CHECK(!valid("\xc0\x80"));
	CHECK(!valid("\xc1\xbf"));
	CHECK(!valid("\xe0\x80\x80"));
	CHECK(!valid("\xe0\x9f\xbf"));
	CHECK(!valid("\xf0\x80\x80\x80"));
	CHECK(!valid("\xf0\x8f\xbf\xbf"));
	/* UTF-16 surrogates. */
	CHECK(!valid("\xed\xa0\x80"));
	CHECK(!valid("\xed\xbf\xbf"));
	/* Above U+10FFFF, and lead bytes of sequences longer than 4. */
	CHECK(!valid("\xf4\x90\x80\x80"));
	CHECK(!valid("\xf7\xbf\xbf\xbf"));
	CHECK(!valid("\xf8\x88\x80\x80\x80"));
	/* Truncated sequences, at the end and followed by more text. */
	CHECK(!valid("\xc3"));
	CHECK(!valid("\xe2\x82"));
	CHECK(!valid("\xf0\x9f\x9a"));
	CHECK(!valid("\xe2\x82z"));
	CHECK(!valid("\xf0\x9f\x9a "));
	CHECK(!utf8_valid("\xe2\x82\xac", 2));
	/* Continuation bytes with no lead. */
	CHECK(!valid("\x80"));
	CHECK(!valid("a\xbf"));
	CHECK(!valid("\xc3\xab\xab"));
	/* Bytes that never occur. */
	CHECK(!valid("\xff"));
	CHECK(!valid("\xfe"));
	CHECK(!valid("ok\xff"));
}

static void
test_printable(void)
{
	CHECK(printable("Zo\xc3\xab \xf0\x9f\x9a\x80"));   /* Zoë 🚀 */
	CHECK(printable("ana"));
	CHECK(printable("reviewer of C code; answers in English"));
	CHECK(printable(""));
	CHECK(printable("\xc2\xa0"));   /* U+00A0, just past the C1 block */
	CHECK(printable("~"));

	CHECK(!printable("two\nlines"));
	CHECK(!printable("tab\there"));
	CHECK(!printable("\x01"));
	CHECK(!printable("esc\x1b[31m"));
	CHECK(!printable("del\x7f"));
	CHECK(!printable("\xc2\x85"));  /* U+0085, a C1 line break */
	CHECK(!printable("\xc2\x9f"));
	CHECK(!utf8_printable("a\0b", 3));
	/* Invalid UTF-8 is never printable. */
	CHECK(!printable("\xc0\x80"));
	CHECK(!printable("\xff"));
	CHECK(!printable("Zo\xc3"));
}

int
main(void)
{
	test_valid();
	test_invalid();
	test_printable();
	return check_exit();
}
