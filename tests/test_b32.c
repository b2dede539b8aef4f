/*
 * test_b32.c: node/b32.c.  The RFC 4648 vectors in papo's spelling (lower
 * case, no padding), round trips, and the strictness that gives every
 * value one text form.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "lib/b32.h"

static const struct {
	const char *plain;
	const char *text;
} vectors[] = {
	{ "", "" },
	{ "f", "my" },
	{ "fo", "mzxq" },
	{ "foo", "mzxw6" },
	{ "foob", "mzxw6yq" },
	{ "fooba", "mzxw6ytb" },
	{ "foobar", "mzxw6ytboi" },
};

/* A fixed generator, so that a failure repeats. */
static uint32_t
next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static long
decode(const char *text, uint8_t *out, size_t cap, size_t *bad)
{
	return b32_decode(text, strlen(text), out, cap, bad);
}

static void
test_vectors(void)
{
	char text[64];
	uint8_t out[64];

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const char *p = vectors[i].plain;
		size_t n = strlen(p);

		CHECK_EQ_INT(b32_len(n), strlen(vectors[i].text));
		memset(text, 'X', sizeof(text));
		b32_encode((const uint8_t *)p, n, text);
		CHECK_EQ_STR(text, vectors[i].text);
		CHECK_EQ_INT(decode(vectors[i].text, out, sizeof(out), NULL),
		    n);
		CHECK(memcmp(out, p, n) == 0);
	}
}

static void
test_round_trips(void)
{
	uint8_t in[100], out[100];
	char text[200];
	uint32_t seed = 0x9e3779b9;

	/* A member id: 32 bytes are 52 characters. */
	CHECK_EQ_INT(b32_len(32), 52);
	memset(in, 0xff, 32);
	b32_encode(in, 32, text);
	CHECK_EQ_INT(strlen(text), 52);
	CHECK_EQ_INT(decode(text, out, 32, NULL), 32);
	CHECK(memcmp(in, out, 32) == 0);

	for (int round = 0; round < 500; round++) {
		size_t n = next(&seed) % 101;

		for (size_t i = 0; i < n; i++)
			in[i] = (uint8_t)next(&seed);
		b32_encode(in, n, text);
		CHECK_EQ_INT(strlen(text), b32_len(n));
		CHECK_EQ_INT(strspn(text, "abcdefghijklmnopqrstuvwxyz234567"),
		    b32_len(n));
		CHECK_EQ_INT(decode(text, out, n, NULL), n);
		CHECK(memcmp(in, out, n) == 0);
	}
}

static void
test_strict(void)
{
	uint8_t out[64];
	size_t bad;

	/* Characters outside the alphabet, and where they are. */
	bad = 99;
	CHECK_EQ_INT(decode("mz1w6", out, sizeof(out), &bad), -1);
	CHECK_EQ_INT(bad, 2);
	bad = 99;
	CHECK_EQ_INT(decode("0zxw6", out, sizeof(out), &bad), -1);
	CHECK_EQ_INT(bad, 0);
	bad = 99;
	CHECK_EQ_INT(decode("mzxw6yt=", out, sizeof(out), &bad), -1);
	CHECK_EQ_INT(bad, 7);
	CHECK_EQ_INT(decode("mz w6", out, sizeof(out), NULL), -1);
	CHECK_EQ_INT(decode("mz8w6", out, sizeof(out), NULL), -1);

	/* Lengths of 1, 3 or 6 modulo 8 come from no number of bytes. */
	CHECK_EQ_INT(decode("m", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzx", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw6y", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw6ytbm", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw6ytbmzx", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw6ytbmzxw6y", out, sizeof(out), NULL), -2);

	/* Unused trailing bits must be zero: "mz" would be a second
	 * spelling of "my". */
	CHECK_EQ_INT(decode("mz", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxr", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw7", out, sizeof(out), NULL), -2);
	CHECK_EQ_INT(decode("mzxw6yr", out, sizeof(out), NULL), -2);

	/* Too small an output. */
	CHECK_EQ_INT(decode("mzxw6", out, 2, NULL), -3);
	CHECK_EQ_INT(decode("mzxw6ytboi", out, 5, NULL), -3);
	CHECK_EQ_INT(decode("mzxw6ytboi", out, 6, NULL), 6);

	/* Upper case decodes to the same bytes. */
	CHECK_EQ_INT(decode("MZXW6YTBOI", out, sizeof(out), NULL), 6);
	CHECK(memcmp(out, "foobar", 6) == 0);
	CHECK_EQ_INT(decode("MzXw6YtBoI", out, sizeof(out), NULL), 6);
	CHECK(memcmp(out, "foobar", 6) == 0);
}

int
main(void)
{
	test_vectors();
	test_round_trips();
	test_strict();
	return check_exit();
}
