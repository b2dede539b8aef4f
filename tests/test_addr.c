/* test_addr.c: address text forms and local address listing. */
#include "lib/addr.h"
#include "node/node.h"
#include "tests/check.h"

static void
roundtrip(const char *text)
{
	struct addr a;
	char out[ADDR_STRLEN];

	CHECK(addr_parse(text, &a) == 0);
	addr_format(&a, out);
	CHECK_EQ_STR(out, text);
}

int
main(void)
{
	struct addr a, b, local[PAPO_ADDR_MAX];
	int n;

	roundtrip("127.0.0.1:7778");
	roundtrip("192.0.2.10:1");
	roundtrip("[::1]:65535");
	roundtrip("[2001:db8::42]:7778");

	CHECK(addr_parse("127.0.0.1", &a) == -1);        /* no port */
	CHECK(addr_parse("127.0.0.1:0", &a) == -1);      /* port 0 */
	CHECK(addr_parse("127.0.0.1:65536", &a) == -1);
	CHECK(addr_parse("127.0.0.1:-5", &a) == -1);
	CHECK(addr_parse("127.0.0.1:77x", &a) == -1);
	CHECK(addr_parse("::1:7778", &a) == -1);         /* IPv6 needs [] */
	CHECK(addr_parse("[::1]7778", &a) == -1);
	CHECK(addr_parse("example.org:7778", &a) == -1); /* no names */
	CHECK(addr_parse("", &a) == -1);

	CHECK(addr_parse("10.0.0.1:5", &a) == 0 && addr_parse("10.0.0.1:5", &b) == 0);
	CHECK(addr_equal(&a, &b));
	b.port = 6;
	CHECK(!addr_equal(&a, &b));

	/* A specific listen address is the one address to give out. */
	CHECK(addr_parse("127.0.0.1:9000", &a) == 0);
	CHECK_EQ_INT(addr_local(&a, local, PAPO_ADDR_MAX), 1);
	CHECK(addr_equal(&local[0], &a));

	/* A wildcard gives the interfaces' IPv4 addresses, loopback last. */
	CHECK(addr_parse("0.0.0.0:9001", &a) == 0);
	CHECK(addr_is_unspecified(&a));
	n = addr_local(&a, local, PAPO_ADDR_MAX);
	CHECK(n >= 1);
	for (int i = 0; i < n; i++) {
		CHECK_EQ_INT(local[i].family, 4);
		CHECK_EQ_INT(local[i].port, 9001);
	}
	CHECK(n >= 1 && local[n - 1].ip[0] == 127);
	return check_exit();
}
