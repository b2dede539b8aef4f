/*
 * test_turn.c: the STUN codec (RFC 5769's vectors, round trips, malformed
 * messages), REST credentials and TURN URLs; then the TURN client against
 * real coturn servers this test starts on 127.0.0.1: allocating, relaying
 * both ways, permissions, refreshes through stale nonces, lapsing, wrong
 * credentials, a dead server, a restart on the same port, the shared
 * secret, a server restarted under an allocation found out by
 * turn_refresh.  Without turnserver (Debian's coturn) that half is skipped,
 * exit 77.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/turn.h"
#include "node/node.h"
#include "node/wire/stun.h"
#include "tests/check.h"

static const char short_pass[] = "VOkJxbRl1RmTxUk/WvJxBt";

/* RFC 5769 section 2.1: a Binding request with a short-term credential. */
static const uint8_t rfc_req[] = {
	0x00, 0x01, 0x00, 0x58, 0x21, 0x12, 0xa4, 0x42,
	0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
	0x80, 0x22, 0x00, 0x10, 0x53, 0x54, 0x55, 0x4e, 0x20, 0x74, 0x65, 0x73,
	0x74, 0x20, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74,
	0x00, 0x24, 0x00, 0x04, 0x6e, 0x00, 0x01, 0xff,
	0x80, 0x29, 0x00, 0x08, 0x93, 0x2f, 0xf9, 0xb1, 0x51, 0x26, 0x3b, 0x36,
	0x00, 0x06, 0x00, 0x09, 0x65, 0x76, 0x74, 0x6a, 0x3a, 0x68, 0x36, 0x76,
	0x59, 0x20, 0x20, 0x20,
	0x00, 0x08, 0x00, 0x14, 0x9a, 0xea, 0xa7, 0x0c, 0xbf, 0xd8, 0xcb, 0x56,
	0x78, 0x1e, 0xf2, 0xb5, 0xb2, 0xd3, 0xf2, 0x49, 0xc1, 0xb5, 0x71, 0xa2,
	0x80, 0x28, 0x00, 0x04, 0xe5, 0x7a, 0x3b, 0xcf,
};

/* Section 2.2: the IPv4 response, XOR-MAPPED-ADDRESS 192.0.2.1:32853. */
static const uint8_t rfc_resp4[] = {
	0x01, 0x01, 0x00, 0x3c, 0x21, 0x12, 0xa4, 0x42,
	0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
	0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63,
	0x74, 0x6f, 0x72, 0x20,
	0x00, 0x20, 0x00, 0x08, 0x00, 0x01, 0xa1, 0x47, 0xe1, 0x12, 0xa6, 0x43,
	0x00, 0x08, 0x00, 0x14, 0x2b, 0x91, 0xf5, 0x99, 0xfd, 0x9e, 0x90, 0xc3,
	0x8c, 0x74, 0x89, 0xf9, 0x2a, 0xf9, 0xba, 0x53, 0xf0, 0x6b, 0xe7, 0xd7,
	0x80, 0x28, 0x00, 0x04, 0xc0, 0x7d, 0x4c, 0x96,
};

/* Section 2.3: the IPv6 response,
 * [2001:db8:1234:5678:11:2233:4455:6677]:32853. */
static const uint8_t rfc_resp6[] = {
	0x01, 0x01, 0x00, 0x48, 0x21, 0x12, 0xa4, 0x42,
	0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
	0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63,
	0x74, 0x6f, 0x72, 0x20,
	0x00, 0x20, 0x00, 0x14, 0x00, 0x02, 0xa1, 0x47, 0x01, 0x13, 0xa9, 0xfa,
	0xa5, 0xd3, 0xf1, 0x79, 0xbc, 0x25, 0xf4, 0xb5, 0xbe, 0xd2, 0xb9, 0xd9,
	0x00, 0x08, 0x00, 0x14, 0xa3, 0x82, 0x95, 0x4e, 0x4b, 0xe6, 0x7b, 0xf1,
	0x17, 0x84, 0xc9, 0x7c, 0x82, 0x92, 0xc2, 0x75, 0xbf, 0xe3, 0xed, 0x41,
	0x80, 0x28, 0x00, 0x04, 0xc8, 0xfb, 0x0b, 0x4c,
};

static struct addr
A(const char *s)
{
	struct addr a;

	memset(&a, 0, sizeof(a));
	CHECK(addr_parse(s, &a) == 0);
	return a;
}

static const char *
fmt(const struct addr *a)
{
	static char s[4][ADDR_STRLEN];
	static int i;

	i = (i + 1) % 4;
	addr_format(a, s[i]);
	return s[i];
}

/*
 * Each vector decodes, its MESSAGE-INTEGRITY checks under the password
 * and fails under another or with a byte changed, and our writer, given
 * the bytes before MESSAGE-INTEGRITY, appends exactly the vector's
 * MESSAGE-INTEGRITY and FINGERPRINT.
 */
static void
check_vector(const uint8_t *v, size_t n, const char *mapped)
{
	const uint8_t *key = (const uint8_t *)short_pass;
	size_t keylen = strlen(short_pass);
	struct stun_msg m;
	struct stun_out o;
	uint8_t buf[256], bad[256];
	struct addr a;

	CHECK_EQ_INT(stun_decode(&m, v, n), STUN_OK);
	CHECK(m.fingerprint);
	CHECK_EQ_INT(m.mi_off, n - 32);
	CHECK(stun_check_integrity(&m, key, keylen) == 0);
	CHECK(stun_check_integrity(&m, (const uint8_t *)"VOkJxbRl1RmTxUk/WvJxBT",
	    keylen) == -1);
	if (mapped != NULL) {
		const struct stun_attr *x = stun_get(&m, STUN_A_XOR_MAPPED_ADDRESS);

		CHECK_EQ_INT(m.cls, STUN_SUCCESS);
		CHECK_EQ_INT(m.method, STUN_BINDING);
		CHECK(x != NULL && stun_xaddr(&m, x, &a) == 0);
		CHECK_EQ_STR(fmt(&a), mapped);
	} else {
		const struct stun_attr *u = stun_get(&m, STUN_A_USERNAME);

		CHECK_EQ_INT(m.cls, STUN_REQUEST);
		CHECK(u != NULL && u->len == 9 && memcmp(u->v, "evtj:h6vY", 9) == 0);
		CHECK_EQ_INT(m.unknown, 0x0024);   /* PRIORITY: ICE's, not ours */
	}

	/* The writer's MESSAGE-INTEGRITY and FINGERPRINT. */
	memcpy(buf, v, n - 32);
	o.p = buf;
	o.cap = sizeof(buf);
	o.len = n - 32;
	o.bad = 0;
	stun_add_integrity(&o, key, keylen);
	stun_add_fingerprint(&o);
	CHECK_EQ_INT(stun_end(&o), n);
	CHECK(memcmp(buf, v, n) == 0);

	/* A changed byte: the fingerprint catches it first. */
	memcpy(bad, v, n);
	bad[30] ^= 1;
	CHECK_EQ_INT(stun_decode(&m, bad, n), STUN_E_FINGERPRINT);
	/* Without FINGERPRINT, only MESSAGE-INTEGRITY does. */
	memcpy(bad, v, n - 8);
	bad[3] = (uint8_t)(bad[3] - 8);
	CHECK_EQ_INT(stun_decode(&m, bad, n - 8), STUN_OK);
	CHECK(stun_check_integrity(&m, key, keylen) == 0);
	bad[30] ^= 1;
	CHECK_EQ_INT(stun_decode(&m, bad, n - 8), STUN_OK);
	CHECK(stun_check_integrity(&m, key, keylen) == -1);
}

static void
test_vectors(void)
{
	check_vector(rfc_req, sizeof(rfc_req), NULL);
	check_vector(rfc_resp4, sizeof(rfc_resp4), "192.0.2.1:32853");
	check_vector(rfc_resp6, sizeof(rfc_resp6),
	    "[2001:db8:1234:5678:11:2233:4455:6677]:32853");
	/* The CRC itself: the check value of CRC-32/ISO-HDLC. */
	CHECK_EQ_INT(stun_crc32((const uint8_t *)"123456789", 9), 0xcbf43926u);
}

/* Every attribute papo writes comes back as written. */
static void
test_roundtrip(void)
{
	uint8_t tid[STUN_TID_LEN], buf[512], key[16], want[16] = {
		0x52, 0x35, 0x33, 0x1d, 0x78, 0x3a, 0x8a, 0x38,
		0xc7, 0xd0, 0xce, 0x94, 0x4a, 0x6c, 0xaa, 0xcd };
	struct addr v4 = A("198.51.100.7:4000"), v6 = A("[2001:db8::9]:65535"),
	    got;
	const struct stun_attr *a;
	struct stun_out o;
	struct stun_msg m;
	uint32_t u;
	size_t n;

	CHECK(stun_lt_key("u", "papo", 4, "p", key) == 0);
	CHECK(memcmp(key, want, 16) == 0);      /* MD5("u:papo:p") */

	for (size_t i = 0; i < sizeof(tid); i++)
		tid[i] = (uint8_t)(i * 37 + 1);
	stun_begin(&o, buf, sizeof(buf), STUN_CHANNEL_BIND, STUN_REQUEST, tid);
	stun_add_u32(&o, STUN_A_CHANNEL_NUMBER, 0x40010000u);
	stun_add_xaddr(&o, STUN_A_XOR_PEER_ADDRESS, &v4);
	stun_add_xaddr(&o, STUN_A_XOR_RELAYED_ADDRESS, &v6);
	stun_add(&o, STUN_A_USERNAME, "u", 1);
	stun_add(&o, STUN_A_REALM, "papo", 4);
	stun_add(&o, STUN_A_NONCE, "abcdefg", 7);
	stun_add_integrity(&o, key, 16);
	stun_add_fingerprint(&o);
	CHECK((n = stun_end(&o)) > 0);
	CHECK_EQ_INT(n % 4, 0);
	CHECK_EQ_INT(buf[0], 0x00);
	CHECK_EQ_INT(buf[1], 0x09);

	CHECK_EQ_INT(stun_decode(&m, buf, n), STUN_OK);
	CHECK_EQ_INT(m.method, STUN_CHANNEL_BIND);
	CHECK_EQ_INT(m.cls, STUN_REQUEST);
	CHECK(memcmp(m.tid, tid, sizeof(tid)) == 0);
	CHECK(m.fingerprint && m.mi_off != 0 && m.unknown == 0);
	CHECK(stun_check_integrity(&m, key, 16) == 0);
	CHECK((a = stun_get(&m, STUN_A_CHANNEL_NUMBER)) != NULL &&
	    stun_u32(a, &u) == 0 && u == 0x40010000u);
	CHECK((a = stun_get(&m, STUN_A_XOR_PEER_ADDRESS)) != NULL &&
	    stun_xaddr(&m, a, &got) == 0 && addr_equal(&got, &v4));
	CHECK((a = stun_get(&m, STUN_A_XOR_RELAYED_ADDRESS)) != NULL &&
	    stun_xaddr(&m, a, &got) == 0 && addr_equal(&got, &v6));
	CHECK((a = stun_get(&m, STUN_A_NONCE)) != NULL && a->len == 7 &&
	    memcmp(a->v, "abcdefg", 7) == 0);
	/* XORed on the wire: the address does not appear in the clear. */
	for (size_t i = 0; i + 4 <= n; i++)
		CHECK(memcmp(buf + i, v4.ip, 4) != 0);

	/* Classes and methods with high bits survive the interleaving. */
	stun_begin(&o, buf, sizeof(buf), STUN_REFRESH, STUN_ERROR, tid);
	stun_add(&o, STUN_A_ERROR_CODE, "\0\0\4\46Stale Nonce", 15);
	CHECK((n = stun_end(&o)) > 0);
	CHECK_EQ_INT(buf[0] << 8 | buf[1], 0x0114);
	CHECK_EQ_INT(stun_decode(&m, buf, n), STUN_OK);
	CHECK_EQ_INT(m.method, STUN_REFRESH);
	CHECK_EQ_INT(m.cls, STUN_ERROR);
	{
		const uint8_t *ph = NULL;
		size_t phl = 0;
		int code = 0;

		CHECK((a = stun_get(&m, STUN_A_ERROR_CODE)) != NULL &&
		    stun_error_code(a, &code, &ph, &phl) == 0);
		CHECK_EQ_INT(code, 438);
		CHECK(phl == 11 && memcmp(ph, "Stale Nonce", 11) == 0);
	}
	stun_begin(&o, buf, sizeof(buf), STUN_DATA, STUN_INDICATION, tid);
	CHECK(stun_end(&o) == STUN_HDR);
	CHECK_EQ_INT(buf[0] << 8 | buf[1], 0x0017);

	/* A writer out of room says so instead of writing past the end. */
	stun_begin(&o, buf, 40, STUN_SEND, STUN_INDICATION, tid);
	stun_add(&o, STUN_A_DATA, buf + 100, 17);
	CHECK_EQ_INT(stun_end(&o), 0);
}

/* Truncations, lengths, padding, sizes: each a typed error, none read
 * past the end (ASan watches). */
static void
test_malformed(void)
{
	uint8_t b[256], tid[STUN_TID_LEN] = { 1, 2, 3 };
	struct addr v4 = A("10.0.0.1:5"), got;
	struct stun_attr at;
	struct stun_out o;
	struct stun_msg m;
	const uint8_t *ph;
	size_t n, phl;
	int code;

	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add_xaddr(&o, STUN_A_XOR_RELAYED_ADDRESS, &v4);
	stun_add(&o, STUN_A_SOFTWARE, "abcde", 5);
	stun_add_fingerprint(&o);
	n = stun_end(&o);
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_OK);

	/* Every truncation is refused. */
	for (size_t k = 0; k < n; k++) {
		uint8_t *c = malloc(k > 0 ? k : 1);

		memcpy(c, b, k);
		CHECK(stun_decode(&m, c, k) != STUN_OK);
		free(c);
	}
	CHECK_EQ_INT(stun_decode(&m, b, 19), STUN_E_SHORT);
	/* Header length off by 4, or not a multiple of 4. */
	b[3] += 4;
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_E_LENGTH);
	b[3] -= 5;
	CHECK_EQ_INT(stun_decode(&m, b, n - 1), STUN_E_LENGTH);
	b[3] += 1;
	/* Not STUN: top bits, cookie. */
	b[0] |= 0x40;
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_E_NOT_STUN);
	b[0] &= 0x3f;
	b[5] ^= 1;
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_E_NOT_STUN);
	b[5] ^= 1;
	/* An attribute longer than what is left. */
	b[20 + 3] = 13;                 /* XOR-RELAYED-ADDRESS says 13 */
	CHECK(stun_decode(&m, b, n) != STUN_OK);
	b[20 + 3] = 200;
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_E_ATTR);
	b[20 + 3] = 8;
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_OK);

	/* Padding that would run past the end: a 5-byte value as the
	 * last attribute with its padding cut off. */
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add(&o, STUN_A_SOFTWARE, "abcde", 5);
	n = stun_end(&o);
	CHECK_EQ_INT(n, 32);
	b[3] = 8;                       /* header: 9 bytes of attribute... */
	CHECK_EQ_INT(stun_decode(&m, b, 28), STUN_E_ATTR);
	b[3] = 12;
	CHECK_EQ_INT(stun_decode(&m, b, 32), STUN_OK);

	/* Something after FINGERPRINT; a FINGERPRINT of the wrong size. */
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add_fingerprint(&o);
	stun_add(&o, STUN_A_SOFTWARE, "x", 1);
	n = stun_end(&o);
	CHECK_EQ_INT(stun_decode(&m, b, n), STUN_E_FINGERPRINT);
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add(&o, STUN_A_FINGERPRINT, "12345678", 8);
	CHECK_EQ_INT(stun_decode(&m, b, stun_end(&o)), STUN_E_ATTR);
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add(&o, STUN_A_MESSAGE_INTEGRITY, "short", 5);
	CHECK_EQ_INT(stun_decode(&m, b, stun_end(&o)), STUN_E_ATTR);

	/* Too many attributes. */
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	for (int i = 0; i <= STUN_ATTRS_MAX; i++)
		stun_add(&o, STUN_A_SOFTWARE, "", 0);
	CHECK_EQ_INT(stun_decode(&m, b, stun_end(&o)), STUN_E_TOO_MANY);

	/* An unknown comprehension-required attribute is noted; attributes
	 * after MESSAGE-INTEGRITY are not taken. */
	stun_begin(&o, b, sizeof(b), STUN_ALLOCATE, STUN_SUCCESS, tid);
	stun_add(&o, 0x7777, "abcd", 4);
	stun_add(&o, STUN_A_MESSAGE_INTEGRITY, "01234567890123456789", 20);
	stun_add(&o, STUN_A_LIFETIME, "abcd", 4);
	CHECK_EQ_INT(stun_decode(&m, b, stun_end(&o)), STUN_OK);
	CHECK_EQ_INT(m.unknown, 0x7777);
	CHECK(stun_get(&m, STUN_A_LIFETIME) == NULL);
	CHECK(stun_check_integrity(&m, (const uint8_t *)"k", 1) == -1);

	/* Address and error code values. */
	memset(&m, 0, sizeof(m));
	at.type = STUN_A_XOR_PEER_ADDRESS;
	at.v = (const uint8_t *)"\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	at.len = 8;
	CHECK(stun_xaddr(&m, &at, &got) == 0);
	at.len = 20;                    /* IPv4 family, IPv6 size */
	CHECK(stun_xaddr(&m, &at, &got) == -1);
	at.v = (const uint8_t *)"\0\3\0\0\0\0\0\0";
	at.len = 8;                     /* family 3 */
	CHECK(stun_xaddr(&m, &at, &got) == -1);
	at.v = (const uint8_t *)"\1\1\0\0\0\0\0\0";
	CHECK(stun_xaddr(&m, &at, &got) == -1);
	at.len = 3;
	CHECK(stun_xaddr(&m, &at, &got) == -1);
	at.v = (const uint8_t *)"\0\0\2\0";     /* class 2: not an error */
	at.len = 4;
	CHECK(stun_error_code(&at, &code, &ph, &phl) == -1);
	at.v = (const uint8_t *)"\0\0\4\144";   /* number 100 */
	CHECK(stun_error_code(&at, &code, &ph, &phl) == -1);
	at.len = 3;
	CHECK(stun_error_code(&at, &code, &ph, &phl) == -1);
	CHECK(stun_u32(&at, (uint32_t *)&code) == -1);
}

static void
test_rest(void)
{
	char name[TURN_NAME_MAX], pass[TURN_CRED_MAX];

	/* Worked out with openssl: printf '1700000000:papo' | openssl dgst
	 * -sha1 -hmac s3cret -binary | base64 */
	CHECK(turn_rest_cred("s3cret", "", 1700000000, name, pass) == 0);
	CHECK_EQ_STR(name, "1700000000:papo");
	CHECK_EQ_STR(pass, "+WVbde/RDNEixC+ZlVL6lWiQPlw=");
	CHECK(turn_rest_cred("s3cret", "ann", 1700000000, name, pass) == 0);
	CHECK_EQ_STR(name, "1700000000:ann");
	CHECK(strcmp(pass, "+WVbde/RDNEixC+ZlVL6lWiQPlw=") != 0);
}

static void
test_url(void)
{
	static const struct {
		const char *url, *want, *err;
	} cases[] = {
		{ "turn:127.0.0.1:3479", "127.0.0.1:3479", NULL },
		{ "turn:127.0.0.1", "127.0.0.1:3478", NULL },
		{ "turn:[::1]:5000", "[::1]:5000", NULL },
		{ "turn:[::1]", "[::1]:3478", NULL },
		{ "turn:localhost:9?transport=udp", "127.0.0.1:9", NULL },
		{ "turns:example.org", NULL, "TLS" },
		{ "stun:127.0.0.1", NULL, "turn:HOST" },
		{ "turn:", NULL, "no host" },
		{ "turn::3478", NULL, "no host" },
		{ "turn:127.0.0.1:0", NULL, "1 to 65535" },
		{ "turn:127.0.0.1:65536", NULL, "1 to 65535" },
		{ "turn:127.0.0.1:x", NULL, "1 to 65535" },
		{ "turn:127.0.0.1:", NULL, "1 to 65535" },
		{ "turn:::1", NULL, "brackets" },
		{ "turn:[::1", NULL, "]" },
		{ "turn:[::1]x", NULL, ":PORT" },
		{ "turn:127.0.0.1?transport=tcp", NULL, "udp" },
	};
	char err[PAPO_ERR_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct addr a;
		int rc;

		err[0] = '\0';
		rc = turn_parse_url(cases[i].url, &a, err);
		if (cases[i].want != NULL) {
			CHECK_EQ_INT(rc, 0);
			if (rc == 0)
				CHECK_EQ_STR(fmt(&a), cases[i].want);
		} else {
			CHECK_EQ_INT(rc, -1);
			if (strstr(err, cases[i].err) == NULL)
				fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n",
				    cases[i].url, err, cases[i].err);
			CHECK(strstr(err, cases[i].err) != NULL);
		}
	}
}

/*
 * The live half: sockets on 127.0.0.x in one loop, each maybe driving a
 * struct turn, and coturn servers in child processes.
 */
#define RX_MAX 1024

struct rx {
	struct addr from;
	char text[64];
};

struct sock {
	int fd;
	struct addr local;
	struct turn *t;
	int drop;                 /* env.send says it sent, sends nothing */
	int states;               /* state() calls */
	unsigned sent_channel, sent_send, sent_refresh, sent_allocate;
	unsigned got_438, direct;
	struct rx rx[RX_MAX];     /* what arrived: datagrams (no turn), or
	                           * the relay's data callback */
	size_t nrx;
};

static struct loop *lp;
static pid_t servers[4];
static char tmpdir[64];

static void
sock_rx(struct sock *s, const struct addr *from, const uint8_t *p, size_t n)
{
	struct rx *r;

	if (s->nrx == RX_MAX)
		return;
	r = &s->rx[s->nrx++];
	r->from = *from;
	snprintf(r->text, sizeof(r->text), "%.*s", (int)(n < 63 ? n : 63),
	    (const char *)p);
}

static void
sock_read(void *arg, uint32_t events)
{
	struct sock *s = arg;
	uint8_t p[65536];

	(void)events;
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		struct stun_msg m;
		struct addr a;
		ssize_t n;

		n = recvfrom(s->fd, p, sizeof(p), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fl);
		if (n < 0)
			break;
		memset(&a, 0, sizeof(a));
		a.family = 4;
		memcpy(a.ip, &from.sin_addr, 4);
		a.port = ntohs(from.sin_port);
		/* What the server says, seen from outside the module. */
		if (stun_decode(&m, p, (size_t)n) == STUN_OK &&
		    m.cls == STUN_ERROR) {
			const struct stun_attr *e = stun_get(&m,
			    STUN_A_ERROR_CODE);
			const uint8_t *ph;
			size_t phl;
			int code;

			if (e != NULL && stun_error_code(e, &code, &ph,
			    &phl) == 0 && code == 438)
				s->got_438++;
		}
		if (s->t != NULL && turn_input(s->t, &a, p, (size_t)n))
			continue;
		s->direct++;
		sock_rx(s, &a, p, (size_t)n);
	}
}

static int
env_send(void *arg, const struct addr *to, const uint8_t *p, size_t n)
{
	struct sock *s = arg;
	struct sockaddr_in sa;
	struct stun_msg m;

	if (n > 0 && (p[0] & 0xc0) == 0x40)
		s->sent_channel++;
	else if (stun_decode(&m, p, n) == STUN_OK) {
		if (m.method == STUN_SEND)
			s->sent_send++;
		if (m.method == STUN_REFRESH)
			s->sent_refresh++;
		if (m.method == STUN_ALLOCATE)
			s->sent_allocate++;
	}
	if (s->drop)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	memcpy(&sa.sin_addr, to->ip, 4);
	sa.sin_port = htons(to->port);
	return sendto(s->fd, p, n, 0, (struct sockaddr *)&sa, sizeof(sa)) ==
	    (ssize_t)n ? 0 : -1;
}

static void
env_data(void *arg, const struct addr *peer, const uint8_t *p, size_t n)
{
	sock_rx(arg, peer, p, n);
}

static void
env_state(void *arg, const struct turn *t)
{
	struct sock *s = arg;

	s->states++;
	if (turn_state(t) == TURN_FAILED)
		fprintf(stderr, "  (state: FAILED: %s)\n", turn_reason(t));
}

static int
sock_open(struct sock *s, const char *ip)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	memset(s, 0, sizeof(*s));
	if ((s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&sa, &sl) != 0)
		return -1;
	s->local.family = 4;
	memcpy(s->local.ip, &sa.sin_addr, 4);
	s->local.port = ntohs(sa.sin_port);
	return loop_add_fd(lp, s->fd, LOOP_IN, sock_read, s);
}

static void
sock_close(struct sock *s)
{
	turn_free(s->t);
	s->t = NULL;
	loop_del_fd(lp, s->fd);
	close(s->fd);
}

static int
sock_sendto(struct sock *s, const struct addr *to, const char *text)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	memcpy(&sa.sin_addr, to->ip, 4);
	sa.sin_port = htons(to->port);
	return sendto(s->fd, text, strlen(text), 0, (struct sockaddr *)&sa,
	    sizeof(sa)) == (ssize_t)strlen(text) ? 0 : -1;
}

/* Whether s received text from `from` (NULL: from anyone). */
static int
sock_got(const struct sock *s, const struct addr *from, const char *text)
{
	for (size_t i = 0; i < s->nrx; i++)
		if (strcmp(s->rx[i].text, text) == 0 &&
		    (from == NULL || addr_equal(&s->rx[i].from, from)))
			return 1;
	return 0;
}

/* Runs the loop until cond(arg) holds or ms pass; cond's last value. */
struct wait {
	int (*cond)(void *);
	void *arg;
	uint64_t until;
	int met;
	struct loop_timer *tm;
};

static void
wait_tick(void *arg)
{
	struct wait *w = arg;

	if ((w->cond != NULL && (w->met = w->cond(w->arg))) ||
	    loop_now_ns() >= w->until) {
		loop_stop(lp);
		return;
	}
	loop_timer_set(w->tm, loop_now_ns() + 5000000);
}

static int
run_until(int (*cond)(void *), void *arg, unsigned ms)
{
	struct wait w = { cond, arg, loop_now_ns() + ms * 1000000ull, 0, NULL };

	w.tm = loop_timer_new(lp, wait_tick, &w);
	loop_timer_set(w.tm, loop_now_ns());
	loop_run(lp);
	loop_timer_free(w.tm);
	return w.met;
}

static int
not_allocating(void *arg)
{
	return turn_state(((struct sock *)arg)->t) != TURN_ALLOCATING;
}

static int
is_allocated(void *arg)
{
	return turn_state(((struct sock *)arg)->t) == TURN_ALLOCATED;
}

static int
is_failed(void *arg)
{
	return turn_state(((struct sock *)arg)->t) == TURN_FAILED;
}

static int
has_rx(void *arg)
{
	return ((struct sock *)arg)->nrx > 0;
}

struct count {
	struct sock *s;
	size_t want;
};

static int
has_n(void *arg)
{
	struct count *c = arg;

	return c->s->nrx >= c->want;
}

static int
both_n(void *arg)
{
	struct count *c = arg;

	return c[0].s->nrx >= c[0].want && c[1].s->nrx >= c[1].want;
}

static uint16_t
free_port(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint16_t port = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int
find_turnserver(void)
{
	const char *path = getenv("PATH");
	char dir[512], f[600];

	if (path == NULL)
		path = "/usr/bin:/bin";
	while (*path != '\0') {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		snprintf(f, sizeof(f), "%s/turnserver", dir);
		if (access(f, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

static void
stop_servers(void)
{
	for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++)
		if (servers[i] > 0) {
			kill(servers[i], SIGTERM);
			waitpid(servers[i], NULL, 0);
			servers[i] = 0;
		}
}

/*
 * Starts coturn on 127.0.0.1:port with the extra arguments, and waits
 * until it answers a Binding request.  Short lifetimes make refreshes
 * and stale nonces happen within the test.
 */
static int
start_server(int slot, uint16_t port, const char *name, const char **extra)
{
	char ps[8], pid[128], db[128], log[128];
	const char *argv[48];
	size_t n = 0;
	pid_t p;

	snprintf(ps, sizeof(ps), "%u", port);
	snprintf(pid, sizeof(pid), "%s/%s.pid", tmpdir, name);
	snprintf(db, sizeof(db), "%s/%s.db", tmpdir, name);
	snprintf(log, sizeof(log), "%s/%s.log", tmpdir, name);
	const char *base[] = { "turnserver", "-n", "--listening-ip",
	    "127.0.0.1", "--relay-ip", "127.0.0.1", "-p", ps,
	    "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-tcp",
	    "--no-cli", "--pidfile", pid, "--userdb", db, "-v", "--log-file",
	    log, "--simple-log", "--no-stdout-log", "--realm", "papo" };
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[n++] = base[i];
	for (size_t i = 0; extra[i] != NULL && n < 47; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;

	if ((p = fork()) < 0)
		return -1;
	if (p == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp("turnserver", (char *const *)argv);
		_exit(127);
	}
	servers[slot] = p;

	/* Poll with Binding requests, which need no credentials. */
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa;
	uint8_t req[STUN_HDR], tid[STUN_TID_LEN] = { 9 }, resp[512];
	struct stun_out o;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	stun_begin(&o, req, sizeof(req), STUN_BINDING, STUN_REQUEST, tid);
	for (int i = 0; i < 100; i++) {
		struct timeval tv = { 0, 100000 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		sendto(fd, req, stun_end(&o), 0, (struct sockaddr *)&sa,
		    sizeof(sa));
		if (recv(fd, resp, sizeof(resp), 0) > 0) {
			close(fd);
			return 0;
		}
	}
	close(fd);
	return -1;
}

static struct turn *
turn_for(struct sock *s, uint16_t port, const char *user, const char *pass,
    const char *secret, unsigned perm_s, unsigned life)
{
	struct turn_conf c;
	struct turn_env e;
	char err[PAPO_ERR_LEN];
	struct turn *t;

	memset(&c, 0, sizeof(c));
	c.server = A("127.0.0.1:1");
	c.server.port = port;
	snprintf(c.user, sizeof(c.user), "%s", user);
	snprintf(c.pass, sizeof(c.pass), "%s", pass);
	snprintf(c.secret, sizeof(c.secret), "%s", secret);
	c.perm_s = perm_s;
	c.lifetime_s = life;
	memset(&e, 0, sizeof(e));
	e.loop = lp;
	e.arg = s;
	e.send = env_send;
	e.data = env_data;
	e.state = env_state;
	t = turn_new(err, &c, &e);
	if (t == NULL)
		fprintf(stderr, "turn_new: %s\n", err);
	s->t = t;
	return t;
}

/* Long-term credentials, with 4 s permissions, 8 s channels, 4 s
 * allocations and 3 s nonces. */
static void
test_relay(uint16_t port)
{
	struct sock a, b, c;
	struct addr relayed, mapped;
	struct count cnt[2];
	char text[32];
	int ok;

	CHECK(sock_open(&a, "127.0.0.1") == 0);
	CHECK(sock_open(&b, "127.0.0.1") == 0);
	CHECK(sock_open(&c, "127.0.0.3") == 0);
	CHECK(turn_for(&a, port, "u", "p", "", 4, 3600) != NULL);
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATING);
	CHECK(turn_send(a.t, &b.local, (const uint8_t *)"early", 5) == -1);

	/* Allocated, at 127.0.0.1, and the server sees us where we are. */
	CHECK(run_until(not_allocating, &a, 5000));
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	CHECK(turn_reason(a.t) == NULL);
	CHECK_EQ_INT(a.states, 1);
	CHECK(turn_relayed(a.t, &relayed) == 0);
	CHECK(turn_mapped(a.t, &mapped) == 0);
	CHECK_EQ_STR(fmt(&mapped), fmt(&a.local));
	relayed.port = 1;
	CHECK_EQ_STR(fmt(&relayed), "127.0.0.1:1");
	CHECK(turn_relayed(a.t, &relayed) == 0);
	fprintf(stderr, "  relayed %s for %s\n", fmt(&relayed), fmt(&a.local));

	/* A to B through the relay: B sees the relayed address. */
	CHECK(turn_send(a.t, &b.local, (const uint8_t *)"hello", 5) == 0);
	CHECK(run_until(has_rx, &b, 3000));
	CHECK(sock_got(&b, &relayed, "hello"));
	CHECK(turn_is_relayed(a.t, &b.local));
	CHECK(!turn_is_relayed(a.t, &c.local));
	/* B answers the relayed address: A's data callback has it, from
	 * B's own address. */
	CHECK(sock_sendto(&b, &relayed, "hi") == 0);
	CHECK(run_until(has_rx, &a, 3000));
	CHECK(sock_got(&a, &b.local, "hi"));
	CHECK_EQ_INT(a.direct, 0);

	/*
	 * Only the server's address is TURN's; what comes from it malformed
	 * is taken and dropped: ChannelData on a channel never bound, on a
	 * number outside 0x4000-0x4fff, longer than the datagram; a success
	 * answer to no request; a Data indication without DATA.
	 */
	{
		static const uint8_t bad[][24] = {
			{ 0x4f, 0xff, 0x00, 0x01, 'x' },
			{ 0x50, 0x00, 0x00, 0x01, 'x' },
			{ 0x40, 0x00, 0x00, 0x09, 'x' },
			{ 0x01, 0x03, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42, 1 },
			{ 0x00, 0x17, 0x00, 0x04, 0x21, 0x12, 0xa4, 0x42, 1,
			    [20] = 0x00, 0x12, 0x00, 0x00 },
		};
		struct addr srv = A("127.0.0.1:1");
		size_t before = a.nrx;

		srv.port = port;
		CHECK_EQ_INT(turn_input(a.t, &b.local, bad[0], 5), 0);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[0], 5), 1);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[1], 5), 1);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[2], 5), 1);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[3], 20), 1);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[4], 24), 1);
		CHECK_EQ_INT(turn_input(a.t, &srv, bad[4], 3), 1);
		CHECK_EQ_INT(a.nrx, before);
		CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	}

	/* 100 each way, all arrive; by then over a channel. */
	a.nrx = b.nrx = 0;
	for (int i = 0; i < 100; i++) {
		snprintf(text, sizeof(text), "a%d", i);
		CHECK(turn_send(a.t, &b.local, (const uint8_t *)text,
		    strlen(text)) == 0);
		snprintf(text, sizeof(text), "b%d", i);
		CHECK(sock_sendto(&b, &relayed, text) == 0);
		if (i % 10 == 9)
			run_until(NULL, NULL, 5);
	}
	cnt[0].s = &a;
	cnt[0].want = 100;
	cnt[1].s = &b;
	cnt[1].want = 100;
	CHECK(run_until(both_n, cnt, 5000));
	ok = 1;
	for (int i = 0; i < 100; i++) {
		snprintf(text, sizeof(text), "a%d", i);
		ok &= sock_got(&b, &relayed, text);
		snprintf(text, sizeof(text), "b%d", i);
		ok &= sock_got(&a, &b.local, text);
	}
	CHECK(ok);
	CHECK(a.sent_channel >= 90);
	fprintf(stderr, "  %u Send indications, %u ChannelData\n",
	    a.sent_send, a.sent_channel);

	/* C may not reach us before we permit it, and may after. */
	CHECK(sock_sendto(&c, &relayed, "too soon") == 0);
	run_until(NULL, NULL, 300);
	CHECK(!sock_got(&a, &c.local, "too soon"));
	CHECK(turn_permit(a.t, &c.local) == 0);
	run_until(NULL, NULL, 300);
	CHECK(turn_is_relayed(a.t, &c.local));
	CHECK(sock_sendto(&c, &relayed, "from c") == 0);
	run_until(NULL, NULL, 300);
	CHECK(sock_got(&a, &c.local, "from c"));

	/* 12 s of traffic between A and B, C silent: the allocation,
	 * permission and channel are refreshed through stale nonces; C's
	 * permission lapses. */
	for (int i = 0; i < 24; i++) {
		size_t na = a.nrx, nb = b.nrx;

		snprintf(text, sizeof(text), "late a%d", i);
		CHECK(turn_send(a.t, &b.local, (const uint8_t *)text,
		    strlen(text)) == 0);
		cnt[0].s = &b;
		cnt[0].want = nb + 1;
		CHECK(run_until(has_n, &cnt[0], 2000));
		CHECK(sock_got(&b, &relayed, text));
		snprintf(text, sizeof(text), "late b%d", i);
		CHECK(sock_sendto(&b, &relayed, text) == 0);
		cnt[0].s = &a;
		cnt[0].want = na + 1;
		CHECK(run_until(has_n, &cnt[0], 2000));
		CHECK(sock_got(&a, &b.local, text));
		run_until(NULL, NULL, 500);
	}
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	CHECK_EQ_INT(a.states, 1);
	CHECK(turn_relayed(a.t, &mapped) == 0 && addr_equal(&mapped, &relayed));
	CHECK(a.sent_refresh >= 2);
	CHECK(a.got_438 >= 1);
	fprintf(stderr, "  %u Refresh, %u stale nonces\n", a.sent_refresh,
	    a.got_438);
	CHECK(turn_is_relayed(a.t, &b.local));
	CHECK(!turn_is_relayed(a.t, &c.local));
	CHECK(sock_sendto(&c, &relayed, "lapsed") == 0);
	run_until(NULL, NULL, 300);
	CHECK(!sock_got(&a, &c.local, "lapsed"));

	/*
	 * A restart on the same port: the old allocation (of the server's
	 * default 10 minutes now) was not released, its Refresh lost as in
	 * a crash, so the server answers 437; the new one releases it and
	 * allocates.
	 */
	turn_free(a.t);
	a.t = NULL;
	run_until(NULL, NULL, 1500);
	CHECK(turn_for(&a, port, "u", "p", "", 4, 0) != NULL);
	CHECK(run_until(is_allocated, &a, 5000));
	a.drop = 1;
	turn_free(a.t);
	a.drop = 0;
	a.sent_refresh = a.sent_allocate = 0;
	a.states = 0;
	CHECK(turn_for(&a, port, "u", "p", "", 4, 0) != NULL);
	CHECK(run_until(is_allocated, &a, 5000));
	CHECK(a.sent_refresh >= 1);       /* the release */
	CHECK(a.sent_allocate >= 3);
	CHECK_EQ_INT(a.states, 1);
	CHECK(turn_relayed(a.t, &relayed) == 0);
	b.nrx = 0;
	CHECK(turn_send(a.t, &b.local, (const uint8_t *)"again", 5) == 0);
	CHECK(run_until(has_rx, &b, 3000));
	CHECK(sock_got(&b, &relayed, "again"));

	/* turn_free releases: the next allocation from the same address
	 * needs no release. */
	turn_free(a.t);
	a.t = NULL;
	run_until(NULL, NULL, 1500);
	a.sent_refresh = a.sent_allocate = 0;
	CHECK(turn_for(&a, port, "u", "p", "", 4, 0) != NULL);
	CHECK(run_until(is_allocated, &a, 5000));
	CHECK_EQ_INT(a.sent_refresh, 0);
	CHECK_EQ_INT(a.sent_allocate, 2);    /* without, then with, the key */

	sock_close(&a);
	sock_close(&b);
	sock_close(&c);
}

static void
test_fail(uint16_t port)
{
	struct sock d;
	const char *r;
	uint64_t t0;

	/* A wrong password: FAILED at once with a reason a person gets. */
	CHECK(sock_open(&d, "127.0.0.1") == 0);
	CHECK(turn_for(&d, port, "u", "wrong", "", 0, 0) != NULL);
	t0 = loop_now_ns();
	CHECK(run_until(not_allocating, &d, 5000));
	CHECK(loop_now_ns() - t0 < 3000000000ull);
	CHECK_EQ_INT(turn_state(d.t), TURN_FAILED);
	CHECK((r = turn_reason(d.t)) != NULL);
	CHECK(r != NULL && strstr(r, "401") != NULL &&
	    strstr(r, "password") != NULL);
	CHECK_EQ_INT(d.states, 1);
	CHECK(turn_send(d.t, &d.local, (const uint8_t *)"x", 1) == -1);
	CHECK(turn_permit(d.t, &d.local) == -1);
	{
		struct addr x;

		CHECK(turn_relayed(d.t, &x) == -1);
	}
	sock_close(&d);

	/* An unknown user fails the same way. */
	CHECK(sock_open(&d, "127.0.0.1") == 0);
	CHECK(turn_for(&d, port, "nobody", "p", "", 0, 0) != NULL);
	CHECK(run_until(is_failed, &d, 5000));
	CHECK((r = turn_reason(d.t)) != NULL && strstr(r, "401") != NULL);
	sock_close(&d);
}

/* A server that is not there: FAILED after the retransmissions. */
static void
test_dead(void)
{
	struct turn_conf c;
	struct turn_env e;
	char err[PAPO_ERR_LEN], want[PAPO_ERR_LEN];
	struct sock d;
	uint64_t t0;

	CHECK(sock_open(&d, "127.0.0.1") == 0);
	memset(&c, 0, sizeof(c));
	c.server = A("127.0.0.1:1");
	c.server.port = free_port();
	snprintf(c.user, sizeof(c.user), "u");
	snprintf(c.pass, sizeof(c.pass), "p");
	c.rto_ms = 100;
	c.tries = 4;
	memset(&e, 0, sizeof(e));
	e.loop = lp;
	e.arg = &d;
	e.send = env_send;
	e.data = env_data;
	e.state = env_state;
	t0 = loop_now_ns();
	CHECK((d.t = turn_new(err, &c, &e)) != NULL);
	CHECK(run_until(is_failed, &d, 5000));
	/* Sends at 0, 0.1, 0.3 and 0.7 s; given up at 1.5 s. */
	CHECK(loop_now_ns() - t0 >= 1400000000ull);
	CHECK(loop_now_ns() - t0 < 2500000000ull);
	CHECK_EQ_INT(d.sent_allocate, 4);
	snprintf(want, sizeof(want), "no answer from 127.0.0.1:%u after 4 tries",
	    c.server.port);
	CHECK_EQ_STR(turn_reason(d.t), want);
	sock_close(&d);

	/* No credentials at all, or no server: refused by turn_new. */
	memset(&c, 0, sizeof(c));
	c.server = A("127.0.0.1:3478");
	CHECK(turn_new(err, &c, &e) == NULL);
	CHECK(strstr(err, "password") != NULL);
	memset(&c, 0, sizeof(c));
	snprintf(c.secret, sizeof(c.secret), "s");
	CHECK(turn_new(err, &c, &e) == NULL);
	CHECK_EQ_STR(err, "no TURN server address");
}

/* coturn's REST API: a user name with an expiry, the password its HMAC. */
static void
test_secret(uint16_t port)
{
	struct sock a, b;
	struct addr relayed;

	CHECK(sock_open(&a, "127.0.0.1") == 0);
	CHECK(sock_open(&b, "127.0.0.2") == 0);
	CHECK(turn_for(&a, port, "", "", "s3cret", 0, 0) != NULL);
	CHECK(run_until(not_allocating, &a, 5000));
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	CHECK(turn_relayed(a.t, &relayed) == 0);
	CHECK(turn_send(a.t, &b.local, (const uint8_t *)"rest", 4) == 0);
	CHECK(run_until(has_rx, &b, 3000));
	CHECK(sock_got(&b, &relayed, "rest"));
	CHECK(sock_sendto(&b, &relayed, "back") == 0);
	CHECK(run_until(has_rx, &a, 3000));
	CHECK(sock_got(&a, &b.local, "back"));
	sock_close(&a);

	CHECK(sock_open(&a, "127.0.0.1") == 0);
	CHECK(turn_for(&a, port, "ann", "", "wrong", 0, 0) != NULL);
	CHECK(run_until(not_allocating, &a, 5000));
	CHECK_EQ_INT(turn_state(a.t), TURN_FAILED);
	CHECK(turn_reason(a.t) != NULL &&
	    strstr(turn_reason(a.t), "401") != NULL &&
	    strstr(turn_reason(a.t), "secret") != NULL);
	sock_close(&a);
	sock_close(&b);
}

/*
 * turn_refresh: the owner's way to find out soon that a server lost the
 * allocation (a restart), where the next refresh of a 10-minute one is
 * 9 minutes away.  On the REST server, whose allocations last the
 * default 10 minutes.
 */
static void
test_refresh(uint16_t port, const char **args)
{
	struct sock a;
	const char *r;
	uint64_t t0;

	CHECK(sock_open(&a, "127.0.0.1") == 0);
	CHECK(turn_for(&a, port, "", "", "s3cret", 0, 0) != NULL);
	CHECK(run_until(is_allocated, &a, 5000));
	/* A server that has it: one Refresh, still allocated. */
	a.sent_refresh = 0;
	turn_refresh(a.t);
	run_until(NULL, NULL, 500);
	CHECK_EQ_INT(a.sent_refresh, 1);
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	/* The server restarts on the same port and forgets it: nothing
	 * tells us, until we ask. */
	kill(servers[1], SIGTERM);
	waitpid(servers[1], NULL, 0);
	servers[1] = 0;
	CHECK(start_server(1, port, "rest", args) == 0);
	run_until(NULL, NULL, 1000);
	CHECK_EQ_INT(turn_state(a.t), TURN_ALLOCATED);
	a.states = 0;
	t0 = loop_now_ns();
	turn_refresh(a.t);
	CHECK(run_until(is_failed, &a, 3000));
	CHECK((r = turn_reason(a.t)) != NULL && strstr(r, "allocation lost") !=
	    NULL && strstr(r, "437") != NULL);
	/* Allocated again after the first back-off (5 s). */
	CHECK(run_until(is_allocated, &a, 8000));
	CHECK(loop_now_ns() - t0 < 8000000000ull);
	CHECK_EQ_INT(a.states, 2);
	sock_close(&a);
	/* Not allocated: nothing to refresh. */
	CHECK(sock_open(&a, "127.0.0.1") == 0);
	CHECK(turn_for(&a, port, "", "", "wrong", 0, 0) != NULL);
	CHECK(run_until(is_failed, &a, 5000));
	a.sent_refresh = 0;
	turn_refresh(a.t);
	run_until(NULL, NULL, 300);
	CHECK_EQ_INT(a.sent_refresh, 0);
	sock_close(&a);
}

static int
test_live(void)
{
	/* coturn's optional arguments need the "=" form.  It raises any
	 * LIFETIME below 600 to 600 and caps it at the maximum, so turn_for
	 * asks for an hour to get 4 s. */
	static const char *lt[] = { "--lt-cred-mech", "--user", "u:p",
	    "--permission-lifetime=4", "--channel-lifetime=8",
	    "--max-allocate-lifetime=4", "--stale-nonce=3", NULL };
	static const char *rest[] = { "--use-auth-secret",
	    "--static-auth-secret=s3cret", NULL };
	uint16_t p1 = free_port(), p2 = free_port();

	check_tmpdir(tmpdir, sizeof(tmpdir), "turn");
	atexit(stop_servers);
	CHECK(start_server(0, p1, "lt", lt) == 0);
	CHECK(start_server(1, p2, "rest", rest) == 0);
	if ((lp = loop_new()) == NULL)
		return -1;
	test_relay(p1);
	test_fail(p1);
	test_dead();
	test_secret(p2);
	test_refresh(p2, rest);
	loop_free(lp);
	stop_servers();
	if (check_failed == 0) {
		if (check_rmtree(tmpdir) == -1)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	} else {
		fprintf(stderr, "coturn's logs are in %s\n", tmpdir);
	}
	return 0;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	test_vectors();
	test_roundtrip();
	test_malformed();
	test_rest();
	test_url();
	if (!find_turnserver()) {
		check_exit();
		printf("SKIPPED: turnserver not found (apt-get install "
		    "coturn)\n");
		return check_failed == 0 ? 77 : 1;
	}
	if (test_live() != 0)
		CHECK(!"the live test could not set up");
	return check_exit();
}
