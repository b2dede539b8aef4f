/*
 * test_invite.c: node/wire/invite.c.  Round trips of every shape of invite,
 * and for each error an input a person could really paste (a typo, a
 * truncation, a stray character, an invite from another papo), checking
 * the error and, for a bad character, where it is.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "check.h"
#include "lib/b32.h"
#include "node/wire/invite.h"

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static struct addr
v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
	struct addr x;

	memset(&x, 0, sizeof(x));
	x.family = 4;
	x.ip[0] = a, x.ip[1] = b, x.ip[2] = c, x.ip[3] = d;
	x.port = port;
	return x;
}

static struct addr
v6(uint8_t last, uint16_t port)
{
	struct addr x;

	memset(&x, 0, sizeof(x));
	x.family = 6;
	x.ip[0] = 0x20, x.ip[1] = 0x01, x.ip[2] = 0x0d, x.ip[3] = 0xb8;
	x.ip[15] = last;
	x.port = port;
	return x;
}

static void
sample(struct invite *inv, size_t naddr)
{
	memset(inv, 0, sizeof(*inv));
	fill(inv->secret, sizeof(inv->secret), 1);
	fill(inv->inviter, sizeof(inv->inviter), 100);
	inv->naddr = naddr;
	for (size_t i = 0; i < naddr; i++)
		inv->addr[i] = i % 2 == 0 ?
		    v4(192, 0, 2, (uint8_t)(i + 1), (uint16_t)(7778 + i)) :
		    v6((uint8_t)i, (uint16_t)(65535 - i));
}

static int
same(const struct invite *a, const struct invite *b)
{
	if (b->version != INVITE_VERSION || a->naddr != b->naddr ||
	    memcmp(a->secret, b->secret, PAPO_KEY_LEN) != 0 ||
	    memcmp(a->inviter, b->inviter, PAPO_KEY_LEN) != 0)
		return 0;
	for (size_t i = 0; i < a->naddr; i++) {
		const struct addr *x = &a->addr[i], *y = &b->addr[i];

		if (x->family != y->family || x->port != y->port ||
		    memcmp(x->ip, y->ip, x->family == 4 ? 4 : 16) != 0)
			return 0;
	}
	return 1;
}

static void
round_trip(size_t naddr)
{
	struct invite in, out;
	char *s;

	sample(&in, naddr);
	in.version = 7;   /* ignored: the encoder writes INVITE_VERSION */
	s = invite_encode(&in);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strncmp(s, "papo1", 5) == 0);
	CHECK_EQ_INT(strspn(s + 5, "abcdefghijklmnopqrstuvwxyz234567"),
	    strlen(s + 5));
	memset(&out, 0xaa, sizeof(out));
	CHECK_EQ_INT(invite_decode(s, &out, NULL), INVITE_OK);
	CHECK(same(&in, &out));
	free(s);
}

/*
 * Builds the invite text of n crafted bytes followed by their checksum,
 * computed as the encoder does, so that the decoder gets past the
 * checksum to the fault under test.
 */
static const char *
craft(const uint8_t *p, size_t n)
{
	static char s[2048];
	uint8_t b[1024], h[crypto_generichash_BYTES_MIN];

	memcpy(b, p, n);
	crypto_generichash(h, sizeof(h), p, n, NULL, 0);
	memcpy(b + n, h, 4);
	memcpy(s, "papo1", 5);
	b32_encode(b, n + 4, s + 5);
	return s;
}

/* The first 66 bytes every crafted invite starts with. */
static size_t
head(uint8_t *b, uint8_t version, uint8_t count)
{
	b[0] = version;
	fill(b + 1, 32, 1);
	fill(b + 33, 32, 100);
	b[65] = count;
	return 66;
}

static size_t
put_v4(uint8_t *b, uint8_t family, uint16_t port)
{
	b[0] = family;
	b[1] = 127, b[2] = 0, b[3] = 0, b[4] = 1;
	b[5] = (uint8_t)(port >> 8), b[6] = (uint8_t)port;
	return 7;
}

static void
test_round_trips(void)
{
	struct invite in;
	char *s;

	round_trip(0);
	round_trip(1);
	round_trip(2);
	round_trip(PAPO_ADDR_MAX);

	/* The length people will see: one IPv4 address, as a daemon on one
	 * public address gives. */
	sample(&in, 1);
	s = invite_encode(&in);
	CHECK(s != NULL);
	if (s != NULL) {
		printf("invite with one IPv4 address: %zu bytes, %zu "
		    "characters: %s\n", (size_t)(1 + 32 + 32 + 1 + 7 + 4),
		    strlen(s), s);
		CHECK_EQ_INT(strlen(s), 5 + b32_len(77));
	}
	free(s);

	/* An all-IPv6 invite at the limit is the longest there is. */
	memset(&in, 0, sizeof(in));
	in.naddr = PAPO_ADDR_MAX;
	for (size_t i = 0; i < PAPO_ADDR_MAX; i++)
		in.addr[i] = v6((uint8_t)i, 1);
	s = invite_encode(&in);
	CHECK(s != NULL);
	if (s != NULL) {
		struct invite out;

		CHECK_EQ_INT(strlen(s), 5 + b32_len(70 + PAPO_ADDR_MAX * 19));
		CHECK_EQ_INT(invite_decode(s, &out, NULL), INVITE_OK);
		CHECK(same(&in, &out));
	}
	free(s);

	/* Too many addresses, or ones no decoder accepts, are refused. */
	sample(&in, PAPO_ADDR_MAX);
	in.naddr = PAPO_ADDR_MAX + 1;
	CHECK(invite_encode(&in) == NULL);
	sample(&in, 1);
	in.addr[0].family = 5;
	CHECK(invite_encode(&in) == NULL);
	sample(&in, 1);
	in.addr[0].port = 0;
	CHECK(invite_encode(&in) == NULL);
}

static void
test_text(void)
{
	struct invite in, out;
	char *s, t[4096];
	size_t pos;

	sample(&in, 1);
	s = invite_encode(&in);
	if (s == NULL) {
		CHECK(s != NULL);
		return;
	}

	/* Surrounding white space, as a terminal copy brings, is fine. */
	snprintf(t, sizeof(t), " \t\n%s\r\n ", s);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_OK);
	CHECK(same(&in, &out));

	/* So is upper case, as a person reading it aloud might type. */
	for (size_t i = 0; s[i] != '\0'; i++)
		t[i] = (char)toupper((unsigned char)s[i]);
	t[strlen(s)] = '\0';
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_OK);
	CHECK(same(&in, &out));

	/* Empty. */
	CHECK_EQ_INT(invite_decode("", &out, NULL), INVITE_EMPTY);
	CHECK_EQ_INT(invite_decode("  \t\r\n", &out, NULL), INVITE_EMPTY);

	/* Not a papo invite, or another version's prefix. */
	snprintf(t, sizeof(t), "papo2%s", s + 5);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_PREFIX_BAD);
	CHECK_EQ_INT(invite_decode("http://example.com/join?papo1abc", &out,
	    NULL), INVITE_PREFIX_BAD);
	CHECK_EQ_INT(invite_decode("pap", &out, NULL), INVITE_PREFIX_BAD);
	CHECK_EQ_INT(invite_decode(s + 1, &out, NULL), INVITE_PREFIX_BAD);

	/* A character base32 does not have, where it is, counting the
	 * leading white space. */
	const char bad[] = { '1', '0', '!', '8', '-', '"', ' ', '\n' };
	for (size_t i = 0; i < sizeof(bad); i++) {
		snprintf(t, sizeof(t), "  %s", s);
		t[2 + 20] = bad[i];
		pos = 9999;
		CHECK_EQ_INT(invite_decode(t, &out, &pos), INVITE_CHAR);
		CHECK_EQ_INT(pos, 22);
	}
	/* A stray character also makes the length impossible; the
	 * character is what gets reported. */
	snprintf(t, sizeof(t), "%.40s!%s", s, s + 40);
	CHECK_EQ_INT(invite_decode(t, &out, &pos), INVITE_CHAR);
	CHECK_EQ_INT(pos, 40);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_CHAR);

	/* A character lost or doubled in copying: impossible lengths. */
	snprintf(t, sizeof(t), "%.40s%s", s, s + 41);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_LENGTH);
	snprintf(t, sizeof(t), "%s%s", s, "aa");
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_LENGTH);
	/* Longer than any invite: twenty pasted together; three make a
	 * length an invite with extensions can have, and fail their
	 * checksum. */
	snprintf(t, sizeof(t), "%s%s%s", s, s + 5, s + 5);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_CHECKSUM);
	snprintf(t, sizeof(t), "%s", s);
	for (int i = 1; i < 20; i++)
		strcat(t, s + 5);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_LENGTH);
	memset(t, 'a', 2600);   /* invites have at most 2,463 */
	memcpy(t, "papo1", 5);
	t[2600] = '\0';
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_LENGTH);

	/* Cut short, at any length below the smallest invite. */
	for (size_t n = 5; n < 5 + b32_len(70); n++) {
		snprintf(t, sizeof(t), "%.*s", (int)n, s);
		CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_TRUNCATED);
	}
	snprintf(t, sizeof(t), "%.40s", s);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_TRUNCATED);
	/* Cut short but still long enough to hold an invite: the
	 * checksum, now read from the wrong bytes, catches it. */
	snprintf(t, sizeof(t), "%.*s", (int)(strlen(s) - 8), s);
	CHECK_EQ_INT(invite_decode(t, &out, NULL), INVITE_CHECKSUM);

	/* One character changed anywhere: every other base32 character at
	 * every position must fail, and the checksum says so. */
	const char alpha[] = "abcdefghijklmnopqrstuvwxyz234567";
	size_t tries = 0, sums = 0;
	for (size_t i = 5; s[i] != '\0'; i++) {
		for (size_t j = 0; j < 32; j++) {
			enum invite_err e;

			if (alpha[j] == s[i])
				continue;
			strcpy(t, s);
			t[i] = alpha[j];
			e = invite_decode(t, &out, NULL);
			tries++;
			if (e == INVITE_CHECKSUM)
				sums++;
			else
				fprintf(stderr, "change at %zu to %c: %s\n",
				    i, alpha[j], invite_strerror(e));
		}
	}
	CHECK_EQ_INT(tries, (strlen(s) - 5) * 31);
	CHECK_EQ_INT(sums, tries);
	free(s);
}

static void
test_crafted(void)
{
	struct invite out;
	uint8_t b[512];
	size_t n;

	/* The crafting itself: a valid invite crafted by hand decodes. */
	n = head(b, 1, 1);
	n += put_v4(b + n, 4, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_OK);
	CHECK_EQ_INT(out.naddr, 1);
	CHECK_EQ_INT(out.addr[0].port, 7778);
	CHECK_EQ_INT(out.addr[0].ip[0], 127);

	/* From a newer papo. */
	n = head(b, 3, 0);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_VERSION_BAD);
	n = head(b, 0, 0);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_VERSION_BAD);

	/* Nine addresses, all present. */
	n = head(b, 1, PAPO_ADDR_MAX + 1);
	for (int i = 0; i < PAPO_ADDR_MAX + 1; i++)
		n += put_v4(b + n, 4, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_TOO_MANY_ADDRS);
	n = head(b, 1, 255);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_TOO_MANY_ADDRS);

	/* An address family other than 4 or 6. */
	n = head(b, 1, 1);
	n += put_v4(b + n, 5, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_FAMILY);
	n = head(b, 1, 2);
	n += put_v4(b + n, 4, 7778);
	n += put_v4(b + n, 0, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_FAMILY);

	/* Port 0. */
	n = head(b, 1, 1);
	n += put_v4(b + n, 4, 0);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_PORT);

	/* Bytes after the last address. */
	n = head(b, 1, 0);
	b[n++] = 0;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_TRAILING);
	n = head(b, 1, 1);
	n += put_v4(b + n, 4, 7778);
	n += put_v4(b + n, 4, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_TRAILING);

	/* A count larger than the addresses present. */
	n = head(b, 1, 2);
	n += put_v4(b + n, 4, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_TRUNCATED);
	/* An IPv6 family with only an IPv4 address's bytes behind it. */
	n = head(b, 1, 1);
	n += put_v4(b + n, 6, 7778);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_TRUNCATED);
	/* An address cut inside its port. */
	n = head(b, 1, 1);
	n += put_v4(b + n, 4, 7778) - 1;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL),
	    INVITE_TRUNCATED);
}

static void
test_strerror(void)
{
	const char *seen[INVITE_TRAILING + 1];

	for (int e = INVITE_OK; e <= INVITE_TRAILING; e++) {
		const char *m = invite_strerror((enum invite_err)e);

		CHECK(m != NULL && m[0] != '\0');
		CHECK(strchr(m, '\n') == NULL);
		for (int i = INVITE_OK; i < e; i++)
			CHECK(strcmp(seen[i], m) != 0);
		seen[e] = m;
	}
	/* Every error's reason names what it is about. */
	for (int e = INVITE_EMPTY; e <= INVITE_TRAILING; e++)
		CHECK(strncmp(invite_strerror((enum invite_err)e), "invite ",
		    7) == 0);
	CHECK(strstr(invite_strerror(INVITE_PREFIX_BAD), "papo1") != NULL);
	CHECK(strstr(invite_strerror(INVITE_CHECKSUM), "mistyped") != NULL);
	CHECK(strstr(invite_strerror(INVITE_VERSION_BAD), "newer") != NULL);
	CHECK(invite_strerror((enum invite_err)99) != NULL);
}

static void
relay_sample(struct invite *inv, const char *url, const char *user,
    const char *pass, const char *secret)
{
	sample(inv, 2);
	snprintf(inv->relay.url, sizeof(inv->relay.url), "%s", url);
	snprintf(inv->relay.user, sizeof(inv->relay.user), "%s", user);
	snprintf(inv->relay.pass, sizeof(inv->relay.pass), "%s", pass);
	snprintf(inv->relay.secret, sizeof(inv->relay.secret), "%s", secret);
}

static int
same_relay(const struct invite_relay *a, const struct invite_relay *b)
{
	return strcmp(a->url, b->url) == 0 && strcmp(a->user, b->user) == 0 &&
	    strcmp(a->pass, b->pass) == 0 && strcmp(a->secret, b->secret) == 0;
}

/* Puts a length byte and the string s at b; its size. */
static size_t
put_str(uint8_t *b, const char *s)
{
	b[0] = (uint8_t)strlen(s);
	memcpy(b + 1, s, strlen(s));
	return 1 + strlen(s);
}

/* Puts an extension of type with the value v at b; its size. */
static size_t
put_ext(uint8_t *b, uint8_t type, const char *v)
{
	size_t n = strlen(v);

	b[0] = type;
	b[1] = (uint8_t)(n >> 8), b[2] = (uint8_t)n;
	memcpy(b + 3, v, n);
	return 3 + n;
}

/* Puts a relay extension at b; its size. */
static size_t
put_relay(uint8_t *b, const char *url, const char *user, const char *pass,
    const char *secret)
{
	size_t n = 3;

	b[0] = 1;
	n += put_str(b + n, url);
	n += put_str(b + n, user);
	n += put_str(b + n, pass);
	n += put_str(b + n, secret);
	b[1] = (uint8_t)((n - 3) >> 8), b[2] = (uint8_t)(n - 3);
	return n;
}

/* The relay of version 2: kept whole, refused when it could not be
 * used, and absent from version 1, which older papo still reads. */
static void
test_relay(void)
{
	struct invite in, out;
	char url[INVITE_URL_MAX + 2], cred[INVITE_CRED_MAX + 2];
	uint8_t b[1024];
	size_t n;
	char *s;

	/* Long-term credentials (a password with a space), and a secret. */
	relay_sample(&in, "turn:relay.example.net:3478", "u", "p w!", "");
	s = invite_encode(&in);
	CHECK(s != NULL);
	memset(&out, 0xaa, sizeof(out));
	CHECK_EQ_INT(invite_decode(s, &out, NULL), INVITE_OK);
	CHECK_EQ_INT(out.version, INVITE_VERSION_EXT);
	CHECK(same_relay(&in.relay, &out.relay));
	CHECK_EQ_INT(out.naddr, 2);
	CHECK(memcmp(out.secret, in.secret, PAPO_KEY_LEN) == 0);
	free(s);
	relay_sample(&in, "turn:[2001:db8::1]", "", "", "s3cret");
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK(same_relay(&in.relay, &out.relay));
	free(s);

	/* The largest: 8 IPv6 addresses, every field at its most. */
	sample(&in, PAPO_ADDR_MAX);
	for (size_t i = 0; i < PAPO_ADDR_MAX; i++)
		in.addr[i] = v6((uint8_t)i, 7778);
	memset(in.relay.url, 'u', INVITE_URL_MAX);
	memset(in.relay.user, 'a', INVITE_CRED_MAX);
	memset(in.relay.pass, 'b', INVITE_CRED_MAX);
	memset(in.relay.secret, 'c', INVITE_CRED_MAX);
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK(same_relay(&in.relay, &out.relay));
	CHECK_EQ_INT(out.naddr, PAPO_ADDR_MAX);
	free(s);

	/* No relay: version 1, 129 characters with one IPv4 address. */
	sample(&in, 1);
	s = invite_encode(&in);
	CHECK(s != NULL && strlen(s) == 129);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(out.version, INVITE_VERSION);
	CHECK_EQ_STR(out.relay.url, "");
	free(s);

	/* What a decoder would refuse is never encoded. */
	memset(url, 'u', sizeof(url) - 1);
	url[sizeof(url) - 1] = '\0';
	memset(cred, 'c', sizeof(cred) - 1);
	cred[sizeof(cred) - 1] = '\0';
	relay_sample(&in, "turn:h", "", "", "");
	CHECK(invite_encode(&in) == NULL);          /* no credentials */
	relay_sample(&in, "turn:h", "u", "", "");
	CHECK(invite_encode(&in) == NULL);          /* no password */
	relay_sample(&in, "turn:h", "u", "p\n", "");
	CHECK(invite_encode(&in) == NULL);          /* not printable */
	relay_sample(&in, "turn: h", "u", "p", "");
	CHECK(invite_encode(&in) == NULL);          /* a space in the URL */
	relay_sample(&in, "turn:h", "u", "p\xc3\xa9", "");
	CHECK(invite_encode(&in) == NULL);          /* not ASCII */
	sample(&in, 1);
	memcpy(in.relay.url, url, INVITE_URL_MAX + 1);   /* 201 bytes */
	strcpy(in.relay.secret, "s");
	CHECK(invite_encode(&in) == NULL);

	/* Crafted: each fault of an extension has its error. */
	n = head(b, 2, 1);
	n += put_v4(b + n, 4, 7778);
	n += put_relay(b + n, "turn:h", "u", "p", "");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_OK);
	CHECK_EQ_STR(out.relay.url, "turn:h");
	CHECK_EQ_STR(out.relay.pass, "p");
	CHECK_EQ_STR(out.room, "");
	CHECK_EQ_INT(invite_decode(craft(b, n - 1), &out, NULL),
	    INVITE_TRUNCATED);                      /* the value cut */
	CHECK_EQ_INT(invite_decode(craft(b, n + put_ext(b + n, 9, "")), &out,
	    NULL), INVITE_OK);                      /* an empty unknown one */
	n += put_ext(b + n, 77, "from a later papo");
	n += put_ext(b + n, 2, "ops");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_OK);
	CHECK_EQ_STR(out.room, "ops");
	CHECK_EQ_STR(out.relay.user, "u");
	b[n] = 2;                                   /* a type, no length */
	CHECK_EQ_INT(invite_decode(craft(b, n + 1), &out, NULL),
	    INVITE_TRUNCATED);
	CHECK_EQ_INT(invite_decode(craft(b, n + put_ext(b + n, 2, "x")), &out,
	    NULL), INVITE_EXTENSION);               /* a name twice */
	n = head(b, 2, 0);                          /* version 2, nothing */
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_OK);
	n = head(b, 2, 0);                          /* an empty URL */
	n += put_relay(b + n, "", "u", "p", "");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* a URL of 201 bytes */
	n += put_relay(b + n, url, "", "", "s");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* a user of 128 bytes */
	n += put_relay(b + n, "turn:h", cred, "p", "");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* a NUL in the secret */
	n += put_relay(b + n, "turn:h", "", "", "ab");
	b[n - 1] = 0;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* no credentials */
	n += put_relay(b + n, "turn:h", "u", "", "");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* strings cut short */
	n += put_ext(b + n, 1, "\x06turn:h\x01u");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* a byte after them */
	n += put_ext(b + n, 1, "\x06turn:h\x01u\x01p\x00z");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_RELAY);
	n = head(b, 2, 0);                          /* an empty name */
	n += put_ext(b + n, 2, "");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_ROOM);
	n = head(b, 2, 0);                          /* a control character */
	n += put_ext(b + n, 2, "a\tb");
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_ROOM);
	n = head(b, 2, 0);                          /* a name of 65 bytes */
	cred[65] = '\0';
	n += put_ext(b + n, 2, cred);
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_ROOM);
}

/* A room name: kept whole (UTF-8), alone or with a relay. */
static void
test_room(void)
{
	struct invite in, out;
	char *s;

	sample(&in, 1);
	snprintf(in.room, sizeof(in.room), "%s", "équipe ops");
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(out.version, INVITE_VERSION_EXT);
	CHECK_EQ_STR(out.room, "équipe ops");
	CHECK_EQ_STR(out.relay.url, "");
	free(s);
	relay_sample(&in, "turn:h", "u", "p", "");
	snprintf(in.room, sizeof(in.room), "%s", "ops");
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_STR(out.room, "ops");
	CHECK(same_relay(&in.relay, &out.relay));
	free(s);
	snprintf(in.room, sizeof(in.room), "%s", "a\nb");
	CHECK(invite_encode(&in) == NULL);
	memset(in.room, 'r', INVITE_ROOM_MAX);
	in.room[INVITE_ROOM_MAX] = '\0';
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(strlen(out.room), INVITE_ROOM_MAX);
	free(s);
}

/* The room's key epoch (extension 3): round trip, with a room name;
 * crafted ones of the wrong length or epoch 0 refused; skipped by an
 * older papo's decoder like any type it does not know. */
static void
test_epoch(void)
{
	struct invite in, out;
	uint8_t b[512], v[40];
	char *s;
	size_t n;

	sample(&in, 2);
	in.epoch = 7;
	fill(in.epoch_secret, 32, 9);
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(out.version, INVITE_VERSION_EXT);
	CHECK_EQ_INT(out.epoch, 7);
	CHECK(memcmp(out.epoch_secret, in.epoch_secret, PAPO_KEY_LEN) == 0);
	CHECK_EQ_STR(out.room, "");
	free(s);
	snprintf(in.room, sizeof(in.room), "%s", "ops");
	in.epoch = 0xffffffffu;
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(out.epoch, 0xffffffffu);
	CHECK_EQ_STR(out.room, "ops");
	free(s);
	/* Without an epoch none is written: version 1 as before. */
	sample(&in, 1);
	s = invite_encode(&in);
	CHECK(s != NULL && invite_decode(s, &out, NULL) == INVITE_OK);
	CHECK_EQ_INT(out.version, INVITE_VERSION);
	CHECK_EQ_INT(out.epoch, 0);
	free(s);

	/* Crafted: right, short, long, epoch 0, twice. */
	memset(v, 0, sizeof(v));
	v[3] = 2;
	fill(v + 4, 32, 3);
	n = head(b, 2, 0);
	b[n++] = 3, b[n++] = 0, b[n++] = 36;
	memcpy(b + n, v, 36), n += 36;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_OK);
	CHECK_EQ_INT(out.epoch, 2);
	n = head(b, 2, 0);
	b[n++] = 3, b[n++] = 0, b[n++] = 35;
	memcpy(b + n, v, 35), n += 35;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_EPOCH);
	n = head(b, 2, 0);
	b[n++] = 3, b[n++] = 0, b[n++] = 37;
	memcpy(b + n, v, 37), n += 37;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_EPOCH);
	v[3] = 0;
	n = head(b, 2, 0);
	b[n++] = 3, b[n++] = 0, b[n++] = 36;
	memcpy(b + n, v, 36), n += 36;
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_EPOCH);
	v[3] = 2;
	n = head(b, 2, 0);
	for (int i = 0; i < 2; i++) {
		b[n++] = 3, b[n++] = 0, b[n++] = 36;
		memcpy(b + n, v, 36), n += 36;
	}
	CHECK_EQ_INT(invite_decode(craft(b, n), &out, NULL), INVITE_EXTENSION);
	CHECK(strstr(invite_strerror(INVITE_EPOCH), "room key") != NULL);
}

int
main(void)
{
	test_relay();
	test_room();
	test_epoch();
	test_round_trips();
	test_text();
	test_crafted();
	test_strerror();
	return check_exit();
}
