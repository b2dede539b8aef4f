/*
 * test_http_guard.c: server/http/http_guard.c linked alone (with lib/):
 * the settings a daemon starts with (http_check: each bad one against
 * its exact error), origins and Host values parsed, the one Host/Origin
 * decision for daemons bound to loopback, behind a public URL with CORS
 * origins, and on a wildcard address over TLS; the token compared, a
 * client address's key.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "lib/addr.h"
#include "server/http/http.h"
#include "server/http/http_int.h"
#include "tests/check.h"

#define TOKEN "0123456789abcdef0123456789abcdef"   /* 32 characters */
#define NO_TOKEN_ERR(bind) "refusing to serve HTTP on " bind " without a " \
	"token, since anyone who reaches it could speak in the room: set " \
	"--token or PAPO_TOKEN, or bind 127.0.0.1"
#define TOKEN_CHARS_ERR "the token (PAPO_TOKEN or --token) must be 32 to " \
	"256 visible ASCII characters, without spaces"
#define PUB_ERR(u) "PAPO_PUBLIC_URL '" u "' is not a URL such as " \
	"https://papo.example.net (a scheme and a host, an optional port, " \
	"no path)"
#define CORS_ERR(o) "PAPO_CORS_ORIGINS: '" o "' is not an origin such as " \
	"https://app.example.net or http://127.0.0.1:5173 (no path, no " \
	"wildcard)"

static char long_token[HTTP_TOKEN_MAX + 2];
static char long_origin[HTTP_URL_MAX + 16];
static char many_origins[17 * 24];

static void
test_check(void)
{
	const struct {
		const char *bind, *token, *pub, *cors;
		const char *err;        /* "" when it passes */
	} cases[] = {
		{ "127.0.0.1:7777", NULL, NULL, NULL, "" },
		{ "localhost:7777", NULL, NULL, NULL, "" },
		{ "[::1]:0", "", NULL, NULL, "" },
		{ "0.0.0.0:7777", TOKEN, NULL, NULL, "" },
		{ "127.0.0.1:7777", NULL, "https://papo.example.net/", NULL, "" },
		{ "127.0.0.1:7777", NULL, "http://[::1]:8080", NULL, "" },
		{ "127.0.0.1:7777", NULL, NULL,
		  " https://a.example, http://127.0.0.1:5173\thttp://b.example ",
		  "" },
		/* The address. */
		{ "nonsense", NULL, NULL, NULL, "the HTTP address 'nonsense' is "
		  "not ADDR:PORT (for example 127.0.0.1:7777): no :PORT after "
		  "the address" },
		{ "example.com:80", NULL, NULL, NULL, "the HTTP address "
		  "'example.com:80' is not ADDR:PORT (for example "
		  "127.0.0.1:7777): not an IP address (no names are looked up)" },
		{ "127.0.0.1:70000", NULL, NULL, NULL, "the HTTP address "
		  "'127.0.0.1:70000' is not ADDR:PORT (for example "
		  "127.0.0.1:7777): the port must be a number up to 65535" },
		{ "::1:7777", NULL, NULL, NULL, "the HTTP address '::1:7777' is "
		  "not ADDR:PORT (for example 127.0.0.1:7777): put an IPv6 "
		  "address in brackets: [ADDR]:PORT" },
		/* The token. */
		{ "0.0.0.0:7777", NULL, NULL, NULL, NO_TOKEN_ERR("0.0.0.0:7777") },
		{ "[::]:7777", "", NULL, NULL, NO_TOKEN_ERR("[::]:7777") },
		{ "127.0.0.1:7777", "0123456789abcdef 0123456789abcdef", NULL,
		  NULL, TOKEN_CHARS_ERR },
		{ "127.0.0.1:7777", "0123456789abcdef\t0123456789abcdef", NULL,
		  NULL, TOKEN_CHARS_ERR },
		{ "127.0.0.1:7777", long_token, NULL, NULL, TOKEN_CHARS_ERR },
		{ "127.0.0.1:7777", "secret", NULL, NULL, "the token (PAPO_TOKEN "
		  "or --token) is 6 characters; it must be at least 32 random "
		  "ones (128 bits even as hex), or it can be guessed: make one "
		  "with 'openssl rand -hex 32' or 'head -c 24 /dev/urandom | "
		  "base64'" },
		/* The public URL. */
		{ "127.0.0.1:7777", NULL, "papo.example.net", NULL,
		  PUB_ERR("papo.example.net") },
		{ "127.0.0.1:7777", NULL, "ftp://papo.example.net", NULL,
		  PUB_ERR("ftp://papo.example.net") },
		{ "127.0.0.1:7777", NULL, "https://papo.example.net/mcp", NULL,
		  PUB_ERR("https://papo.example.net/mcp") },
		{ "127.0.0.1:7777", NULL, "https://bo@papo.example.net", NULL,
		  PUB_ERR("https://bo@papo.example.net") },
		{ "127.0.0.1:7777", NULL, "https://papo.example.net:0", NULL,
		  PUB_ERR("https://papo.example.net:0") },
		/* The CORS origins. */
		{ "127.0.0.1:7777", NULL, NULL, "*", CORS_ERR("*") },
		{ "127.0.0.1:7777", NULL, NULL, "https://a.example,https://b/x",
		  CORS_ERR("https://b/x") },
		{ "127.0.0.1:7777", NULL, NULL, "a.example", CORS_ERR("a.example") },
		{ "127.0.0.1:7777", NULL, NULL, long_origin, "PAPO_CORS_ORIGINS: "
		  "an origin is longer than 255 bytes" },
		{ "127.0.0.1:7777", NULL, NULL, many_origins, "PAPO_CORS_ORIGINS: "
		  "more than 16 origins" },
	};

	memset(long_token, 'x', sizeof(long_token) - 1);
	memcpy(long_origin, "https://", 8);
	memset(long_origin + 8, 'a', sizeof(long_origin) - 9);
	for (int i = 0; i < 17; i++)
		snprintf(many_origins + strlen(many_origins),
		    sizeof(many_origins) - strlen(many_origins),
		    "https://o%d.example,", i);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_config c = { .bind = cases[i].bind,
		    .token = cases[i].token, .public_url = cases[i].pub,
		    .cors = cases[i].cors };
		char err[PAPO_ERR_LEN] = "";
		int rc = http_check(err, &c);

		CHECK_EQ_INT(rc, cases[i].err[0] == '\0' ? 0 : -1);
		CHECK_EQ_STR(err, cases[i].err);
	}
}

static void
test_parse_origin(void)
{
	static const struct {
		const char *s;
		int rc, https;
		const char *name;
		unsigned port;
	} cases[] = {
		{ "https://a.example", 0, 1, "a.example", 443 },
		{ "http://a.example", 0, 0, "a.example", 80 },
		{ "HTTP://A.example:8080/", 0, 0, "A.example", 8080 },
		{ "https://[::1]:8443", 0, 1, "[::1]", 8443 },
		{ "http://127.0.0.1:5173", 0, 0, "127.0.0.1", 5173 },
		{ "http://127.0.0.1:0", -1, 0, "", 0 },
		{ "ftp://a.example", -1, 0, "", 0 },
		{ "https://", -1, 0, "", 0 },
		{ "https://a.example/x", -1, 0, "", 0 },
		{ "https://a.example?x", -1, 0, "", 0 },
		{ "https://a.example#x", -1, 0, "", 0 },
		{ "https://bo@a.example", -1, 0, "", 0 },
		{ "https://a.example:99999", -1, 0, "", 0 },
		{ "https://a b", -1, 0, "", 0 },
		{ "null", -1, 0, "", 0 },
		{ "", -1, 0, "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_origin o;
		int rc = http_parse_origin(cases[i].s, &o);

		if (rc != cases[i].rc)
			fprintf(stderr, "origin \"%s\": %d\n", cases[i].s, rc);
		CHECK_EQ_INT(rc, cases[i].rc);
		if (rc != 0)
			continue;
		CHECK_EQ_INT(o.https, cases[i].https);
		CHECK_EQ_STR(o.name, cases[i].name);
		CHECK_EQ_INT(o.port, cases[i].port);
	}
}

static void
test_split_host(void)
{
	static const struct {
		const char *s;
		int rc;
		const char *name;
		unsigned port;
	} cases[] = {
		{ "a.example:80", 0, "a.example", 80 },
		{ "a.example", 0, "a.example", 0 },
		{ "127.0.0.1:7777", 0, "127.0.0.1", 7777 },
		{ "[::1]:7777", 0, "[::1]", 7777 },
		{ "[::1]", 0, "[::1]", 0 },
		{ "", -1, "", 0 },
		{ "a.example:port", -1, "", 0 },
		{ "[::1", -1, "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[HTTP_NAME_MAX] = "";
		unsigned port = 12345;
		int rc = http_split_host(cases[i].s, name, &port);

		if (rc != cases[i].rc)
			fprintf(stderr, "host \"%s\": %d\n", cases[i].s, rc);
		CHECK_EQ_INT(rc, cases[i].rc);
		if (rc != 0)
			continue;
		CHECK_EQ_STR(name, cases[i].name);
		CHECK_EQ_INT(port, cases[i].port);
	}
}

/* A daemon's guard as http_new sets it, bound to port. */
static void
guard(struct http *h, const char *bind, unsigned port, int tls,
    const char *pub, const char *cors)
{
	static char cert;       /* a struct tls the guard never reads */
	struct http_config c = { .bind = bind, .token = TOKEN,
	    .tls = tls ? (struct tls *)(void *)&cert : NULL,
	    .public_url = pub, .cors = cors };
	char err[PAPO_ERR_LEN];
	struct addr_bind b;

	memset(h, 0, sizeof(*h));
	CHECK_EQ_INT(http_check(err, &c), 0);
	CHECK_EQ_INT(addr_bind(bind, HTTP_BIND_FLAGS, &b), ADDR_OK);
	http_guard_set(h, &c, &b);
	h->port = port;
}

static struct http loop_h, pub_h, wild_h;

static void
test_origin_check(void)
{
	static const struct {
		const struct http *h;
		const char *host, *origin;
		enum http_origin_kind want;
	} cases[] = {
		/* Bound to 127.0.0.1:7777, plain HTTP. */
		{ &loop_h, "127.0.0.1:7777", NULL, HTTP_ORIGIN_NONE },
		{ &loop_h, "localhost:7777", NULL, HTTP_ORIGIN_NONE },
		{ &loop_h, "[::1]:7777", NULL, HTTP_ORIGIN_NONE },
		{ &loop_h, NULL, NULL, HTTP_ORIGIN_NONE },   /* HTTP/1.0 */
		{ &loop_h, "evil.example:7777", NULL, HTTP_ORIGIN_BAD },
		{ &loop_h, "127.0.0.1:8888", NULL, HTTP_ORIGIN_BAD },
		{ &loop_h, "127.0.0.1", NULL, HTTP_ORIGIN_BAD },
		{ &loop_h, "", NULL, HTTP_ORIGIN_BAD },
		{ &loop_h, "127.0.0.1:7777", "http://127.0.0.1:7777",
		  HTTP_ORIGIN_SELF },
		{ &loop_h, "127.0.0.1:7777", "http://LOCALHOST:7777",
		  HTTP_ORIGIN_SELF },
		{ &loop_h, "127.0.0.1:7777", "https://127.0.0.1:7777",
		  HTTP_ORIGIN_BAD },                      /* not over TLS */
		{ &loop_h, "127.0.0.1:7777", "http://evil.example",
		  HTTP_ORIGIN_BAD },
		{ &loop_h, "127.0.0.1:7777", "http://127.0.0.1:7778",
		  HTTP_ORIGIN_BAD },
		{ &loop_h, "127.0.0.1:7777", "null", HTTP_ORIGIN_BAD },
		/* Behind https://papo.example.net, one CORS origin. */
		{ &pub_h, "papo.example.net", "https://papo.example.net",
		  HTTP_ORIGIN_SELF },
		{ &pub_h, "PAPO.example.net:443", NULL, HTTP_ORIGIN_NONE },
		{ &pub_h, "papo.example.net:8443", NULL, HTTP_ORIGIN_BAD },
		{ &pub_h, "127.0.0.1:7777", "https://app.example.net",
		  HTTP_ORIGIN_CORS },
		{ &pub_h, "papo.example.net", "https://app.example.net:443",
		  HTTP_ORIGIN_CORS },
		{ &pub_h, "papo.example.net", "http://app.example.net",
		  HTTP_ORIGIN_BAD },                      /* another scheme */
		{ &pub_h, "evil.example", "https://app.example.net",
		  HTTP_ORIGIN_BAD },                      /* Host first */
		/* On 0.0.0.0:7777 over TLS: any Host, the page's own Origin. */
		{ &wild_h, "box.lan:1234", NULL, HTTP_ORIGIN_NONE },
		{ &wild_h, "box.lan:7777", "https://box.lan:7777",
		  HTTP_ORIGIN_SELF },
		{ &wild_h, "box.lan:7777", "https://other.lan:7777",
		  HTTP_ORIGIN_BAD },
		{ &wild_h, "box.lan:7777", "http://box.lan:7777",
		  HTTP_ORIGIN_BAD },
		{ &wild_h, NULL, "https://box.lan:7777", HTTP_ORIGIN_BAD },
	};

	guard(&loop_h, "127.0.0.1:7777", 7777, 0, NULL, NULL);
	guard(&pub_h, "127.0.0.1:7777", 7777, 0, "https://papo.example.net/",
	    "https://app.example.net");
	guard(&wild_h, "0.0.0.0:7777", 7777, 1, NULL, NULL);
	CHECK_EQ_STR(pub_h.pub_url, "https://papo.example.net");
	CHECK_EQ_INT(pub_h.ncors, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum http_origin_kind k = http_origin_check(cases[i].h,
		    cases[i].host, cases[i].origin);

		if (k != cases[i].want)
			fprintf(stderr, "case %zu: Host %s, Origin %s: %d\n", i,
			    cases[i].host ? cases[i].host : "(none)",
			    cases[i].origin ? cases[i].origin : "(none)", (int)k);
		CHECK_EQ_INT(k, cases[i].want);
	}
}

static void
test_token_equal(void)
{
	CHECK(http_token_equal("abc", "abc", 3));
	CHECK(!http_token_equal("abd", "abc", 3));
	CHECK(!http_token_equal("ab", "abc", 3));
	CHECK(!http_token_equal("abcd", "abc", 3));
	CHECK(!http_token_equal("", "abc", 3));
	CHECK(http_token_equal(TOKEN, TOKEN, strlen(TOKEN)));
}

static void
test_peer_key(void)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	unsigned char k[9], k2[9];
	static const unsigned char want4[9] = { 4, 192, 0, 2, 7 };
	static const unsigned char want6[9] = { 6, 0x20, 0x01, 0x0d, 0xb8,
	    0, 1, 0, 2 };

	inet_pton(AF_INET, "192.0.2.7", &a4.sin_addr);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&a4, k), 0);
	CHECK(memcmp(k, want4, 9) == 0);
	/* An IPv4-mapped address is the IPv4 one. */
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &a6.sin6_addr);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&a6, k), 0);
	CHECK(memcmp(k, want4, 9) == 0);
	/* IPv6 by its /64. */
	inet_pton(AF_INET6, "2001:db8:1:2::1", &a6.sin6_addr);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&a6, k), 0);
	CHECK(memcmp(k, want6, 9) == 0);
	inet_pton(AF_INET6, "2001:db8:1:2:ffff::9", &a6.sin6_addr);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&a6, k2), 0);
	CHECK(memcmp(k, k2, 9) == 0);
	inet_pton(AF_INET6, "2001:db8:1:3::1", &a6.sin6_addr);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&a6, k2), 0);
	CHECK(memcmp(k, k2, 9) != 0);
	CHECK_EQ_INT(http_peer_key((struct sockaddr *)&un, k), -1);
}

int
main(void)
{
	test_check();
	test_parse_origin();
	test_split_host();
	test_origin_check();
	test_token_equal();
	test_peer_key();
	return check_exit();
}
