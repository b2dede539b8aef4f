/*
 * test_addr.c: lib/addr.c: address text forms, the one HOST[:PORT]
 * reading, the one bind parser, the one loopback test, the one
 * classifier, socket addresses, local address listing.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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

/* addr_hostport, the one "HOST[:PORT]" reading: every way it can go. */
static const struct {
	const char *in;
	enum addr_hp_err err;
	const char *host;
	int v6;
	long port;
} hostports[] = {
	{ "127.0.0.1:7778", ADDR_OK, "127.0.0.1", 0, 7778 },
	{ "example.org", ADDR_OK, "example.org", 0, ADDR_NO_PORT },
	{ "example.org:0", ADDR_OK, "example.org", 0, 0 },
	{ "[2001:db8::1]:443", ADDR_OK, "2001:db8::1", 1, 443 },
	{ "[::1]", ADDR_OK, "::1", 1, ADDR_NO_PORT },
	{ "h:65535", ADDR_OK, "h", 0, 65535 },
	{ "", ADDR_NO_HOST, "", 0, 0 },
	{ ":80", ADDR_NO_HOST, "", 0, 0 },
	{ "[]:80", ADDR_NO_HOST, "", 0, 0 },
	{ "[::1:80", ADDR_NO_BRACKET, "", 0, 0 },
	{ "[::1]80", ADDR_AFTER_BRACKET, "", 0, 0 },
	{ "::1:80", ADDR_BARE_V6, "", 0, 0 },
	{ "h:", ADDR_BAD_PORT, "", 0, 0 },
	{ "h:65536", ADDR_BAD_PORT, "", 0, 0 },
	{ "h:123456", ADDR_BAD_PORT, "", 0, 0 },
	{ "h:-1", ADDR_BAD_PORT, "", 0, 0 },
	{ "h:+1", ADDR_BAD_PORT, "", 0, 0 },
	{ "h:8x", ADDR_BAD_PORT, "", 0, 0 },
};

static void
test_hostport(void)
{
	struct addr_hostport hp;
	char longhost[ADDR_HOST_MAX + 8];

	for (size_t i = 0; i < sizeof(hostports) / sizeof(hostports[0]); i++) {
		enum addr_hp_err e = addr_hostport(hostports[i].in,
		    strlen(hostports[i].in), &hp);

		CHECK_EQ_INT(e, hostports[i].err);
		CHECK(strlen(addr_hostport_why(e)) > 0);
		if (e != ADDR_OK)
			continue;
		CHECK(strcmp(hp.host, hostports[i].host) == 0);
		CHECK_EQ_INT(hp.v6, hostports[i].v6);
		CHECK_EQ_INT(hp.port, hostports[i].port);
	}
	/* Only the n bytes given are read: a URL's "?query" is not. */
	CHECK(addr_hostport("h:80?x", 4, &hp) == ADDR_OK && hp.port == 80);
	memset(longhost, 'a', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	CHECK_EQ_INT(addr_hostport(longhost, strlen(longhost), &hp),
	    ADDR_NO_HOST);
}

/* addr_bind, the one bind parser: each input, its exact result or error. */
#define ANY ADDR_BIND_ANY_PORT
#define LH ADDR_BIND_LOCALHOST
static const struct {
	const char *in;
	unsigned flags;
	enum addr_hp_err err;
	const char *host;        /* the IP as a URL names it */
	long port;
	int family, wildcard, loopback;
} binds[] = {
	{ "127.0.0.1:7777", 0, ADDR_OK, "127.0.0.1", 7777, 4, 0, 1 },
	{ "127.255.255.254:1", 0, ADDR_OK, "127.255.255.254", 1, 4, 0, 1 },
	{ "128.0.0.1:1", 0, ADDR_OK, "128.0.0.1", 1, 4, 0, 0 },
	{ "126.255.255.255:1", 0, ADDR_OK, "126.255.255.255", 1, 4, 0, 0 },
	{ "192.0.2.7:65535", 0, ADDR_OK, "192.0.2.7", 65535, 4, 0, 0 },
	{ "0.0.0.0:7778", 0, ADDR_OK, "0.0.0.0", 7778, 4, 1, 0 },
	{ "[::]:7778", 0, ADDR_OK, "[::]", 7778, 6, 1, 0 },
	{ "[::1]:7777", 0, ADDR_OK, "[::1]", 7777, 6, 0, 1 },
	{ "[2001:DB8:0::1]:443", 0, ADDR_OK, "[2001:db8::1]", 443, 6, 0, 0 },
	{ "[::ffff:127.0.0.1]:80", 0, ADDR_OK, "[::ffff:127.0.0.1]", 80, 6, 0,
	  1 },
	{ "[::ffff:128.0.0.1]:80", 0, ADDR_OK, "[::ffff:128.0.0.1]", 80, 6, 0,
	  0 },
	/* Port 0, any free port: only where a bind takes it. */
	{ "127.0.0.1:0", 0, ADDR_PORT_ZERO, "", 0, 0, 0, 0 },
	{ "127.0.0.1:0", ANY, ADDR_OK, "127.0.0.1", 0, 4, 0, 1 },
	{ "[::]:0", ANY, ADDR_OK, "[::]", 0, 6, 1, 0 },
	{ "127.0.0.1:65536", ANY, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
	{ "127.0.0.1:-1", ANY, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
	{ "127.0.0.1:", ANY, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
	{ "127.0.0.1:80x", ANY, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
	{ "127.0.0.1:80 ", ANY, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
	/* The port is never optional; a bare port is a host without one. */
	{ "127.0.0.1", ANY, ADDR_PORT_MISSING, "", 0, 0, 0, 0 },
	{ "[::1]", ANY, ADDR_PORT_MISSING, "", 0, 0, 0, 0 },
	{ "7777", ANY | LH, ADDR_PORT_MISSING, "", 0, 0, 0, 0 },
	{ "localhost", ANY | LH, ADDR_PORT_MISSING, "", 0, 0, 0, 0 },
	{ ":7777", ANY | LH, ADDR_NO_HOST, "", 0, 0, 0, 0 },
	{ "", ANY | LH, ADDR_NO_HOST, "", 0, 0, 0, 0 },
	/* "localhost" exactly, and only where it is taken. */
	{ "localhost:7777", LH, ADDR_OK, "127.0.0.1", 7777, 4, 0, 1 },
	{ "localhost:0", ANY | LH, ADDR_OK, "127.0.0.1", 0, 4, 0, 1 },
	{ "localhost:7777", ANY, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "LOCALHOST:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "[localhost]:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	/* Names and trailing garbage: nothing is resolved. */
	{ "localhost.:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "localhostx:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "127.0.0.1x:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "127.0.0.1 :7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "127.0.0.1.:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "127.1:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "127.0.0.256:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "example.org:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "[127.0.0.1]:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "[::1x]:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	{ "[fe80::1%eth0]:7777", LH, ADDR_NOT_IP, "", 0, 0, 0, 0 },
	/* IPv6 needs its brackets, closed, then only :PORT. */
	{ "::1:7777", LH, ADDR_BARE_V6, "", 0, 0, 0, 0 },
	{ "[::1:7777", LH, ADDR_NO_BRACKET, "", 0, 0, 0, 0 },
	{ "[::1]7777", LH, ADDR_AFTER_BRACKET, "", 0, 0, 0, 0 },
	{ "[::1]:7777x", LH, ADDR_BAD_PORT, "", 0, 0, 0, 0 },
};

static void
test_bind(void)
{
	struct addr_bind b;
	struct addr back;

	for (size_t i = 0; i < sizeof(binds) / sizeof(binds[0]); i++) {
		enum addr_hp_err e = addr_bind(binds[i].in, binds[i].flags, &b);

		if (e != binds[i].err || (e == ADDR_OK &&
		    strcmp(b.host, binds[i].host) != 0))
			fprintf(stderr, "addr_bind(\"%s\"): %s, %s\n",
			    binds[i].in, addr_hostport_why(e), b.host);
		CHECK_EQ_INT(e, binds[i].err);
		CHECK(strlen(addr_hostport_why(e)) > 0);
		if (e != ADDR_OK) {
			CHECK(b.a.family == 0 && b.sslen == 0 && b.host[0] == 0);
			continue;
		}
		CHECK_EQ_STR(b.host, binds[i].host);
		CHECK_EQ_INT(b.a.port, binds[i].port);
		CHECK_EQ_INT(b.a.family, binds[i].family);
		CHECK_EQ_INT(b.wildcard, binds[i].wildcard);
		CHECK_EQ_INT(b.loopback, binds[i].loopback);
		CHECK_EQ_INT(addr_is_loopback(&b.a), binds[i].loopback);
		/* The socket address is the address's own family's. */
		CHECK_EQ_INT(b.ss.ss_family, b.a.family == 4 ? AF_INET : AF_INET6);
		CHECK_EQ_INT(b.sslen, b.a.family == 4 ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		CHECK(addr_from_sockaddr((struct sockaddr *)&b.ss, &back) == 0);
		CHECK_EQ_INT(back.port, binds[i].port);
		CHECK_EQ_INT(addr_is_loopback(&back), binds[i].loopback);
	}
	/* A member's address is a bind without port 0 or names. */
	CHECK(addr_parse("localhost:7777", &back) == -1);
	CHECK(addr_parse_listen("127.0.0.1:0", &back) == 0 && back.port == 0);
}
#undef ANY
#undef LH

/* addr_host_is_loopback: a host as Host, a URL or a bind names it. */
static const struct {
	const char *in;
	int loopback;
} hosts[] = {
	{ "localhost", 1 },
	{ "LocalHost", 1 },
	{ "127.0.0.1", 1 },
	{ "127.0.0.2", 1 },
	{ "127.255.255.254", 1 },
	{ "[::1]", 1 },
	{ "::1", 1 },
	{ "[0:0:0:0:0:0:0:1]", 1 },
	{ "[::ffff:127.0.0.1]", 1 },
	{ "::ffff:127.9.9.9", 1 },
	{ "128.0.0.1", 0 },
	{ "126.255.255.255", 0 },
	{ "0.0.0.0", 0 },
	{ "[::]", 0 },
	{ "[::2]", 0 },
	{ "[::ffff:128.0.0.1]", 0 },
	{ "[::127.0.0.1]", 0 },          /* IPv4-compatible, not mapped */
	{ "localhost.", 0 },
	{ "localhostx", 0 },
	{ "localhost:80", 0 },
	{ "127.0.0.1:80", 0 },
	{ "127.0.0.1x", 0 },
	{ "127.0.0.1 ", 0 },
	{ "127.1", 0 },
	{ "0x7f.0.0.1", 0 },
	{ "2130706433", 0 },
	{ "[127.0.0.1]", 0 },
	{ "[::1", 0 },
	{ "::1]", 0 },
	{ "[]", 0 },
	{ "", 0 },
	{ "example.org", 0 },
	{ "localhost.example.org", 0 },
};

static void
test_loopback(void)
{
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
		if (addr_host_is_loopback(hosts[i].in) != hosts[i].loopback) {
			fprintf(stderr, "addr_host_is_loopback(\"%s\") is not %d\n",
			    hosts[i].in, hosts[i].loopback);
			CHECK(0);
		}
}

/* addr_scope, the one classifier: each kind, and its edges. */
static const struct {
	const char *in;
	enum addr_scope scope;
} scopes[] = {
	{ "8.8.8.8:1", ADDR_SCOPE_PUBLIC },
	{ "203.0.113.7:1", ADDR_SCOPE_PUBLIC },      /* the labs' internet */
	{ "0.0.0.0:1", ADDR_SCOPE_UNSPECIFIED },
	{ "0.1.2.3:1", ADDR_SCOPE_RESERVED },
	{ "127.0.0.9:1", ADDR_SCOPE_LOOPBACK },
	{ "10.0.0.1:1", ADDR_SCOPE_PRIVATE },
	{ "172.15.255.255:1", ADDR_SCOPE_PUBLIC },
	{ "172.16.0.1:1", ADDR_SCOPE_PRIVATE },
	{ "172.31.255.255:1", ADDR_SCOPE_PRIVATE },
	{ "172.32.0.1:1", ADDR_SCOPE_PUBLIC },
	{ "192.168.1.1:1", ADDR_SCOPE_PRIVATE },
	{ "169.254.0.1:1", ADDR_SCOPE_LINK_LOCAL },
	{ "100.63.255.255:1", ADDR_SCOPE_PUBLIC },
	{ "100.64.0.1:1", ADDR_SCOPE_SHARED },
	{ "100.127.255.255:1", ADDR_SCOPE_SHARED },
	{ "100.128.0.1:1", ADDR_SCOPE_PUBLIC },
	{ "224.0.0.1:1", ADDR_SCOPE_MULTICAST },
	{ "239.255.255.255:1", ADDR_SCOPE_MULTICAST },
	{ "240.0.0.1:1", ADDR_SCOPE_RESERVED },
	{ "255.255.255.255:1", ADDR_SCOPE_RESERVED },
	{ "[2001:db8::1]:1", ADDR_SCOPE_PUBLIC },
	{ "[::]:1", ADDR_SCOPE_UNSPECIFIED },
	{ "[::1]:1", ADDR_SCOPE_LOOPBACK },
	{ "[fd00::1]:1", ADDR_SCOPE_PRIVATE },
	{ "[fe80::1]:1", ADDR_SCOPE_LINK_LOCAL },
	{ "[fec0::1]:1", ADDR_SCOPE_SITE_LOCAL },
	{ "[ff02::1]:1", ADDR_SCOPE_MULTICAST },
	{ "[::ffff:10.0.0.1]:1", ADDR_SCOPE_PRIVATE },  /* v4-mapped */
	{ "[::ffff:127.0.0.1]:1", ADDR_SCOPE_LOOPBACK },
};

static void
test_scope(void)
{
	struct sockaddr_storage ss;
	struct addr a, b;

	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		CHECK(addr_parse_listen(scopes[i].in, &a) == 0);
		CHECK_EQ_INT(addr_scope(&a), scopes[i].scope);
		CHECK(strlen(addr_scope_name(addr_scope(&a))) > 0);
	}
	/* Socket addresses both ways; IPv4 v4-mapped on a dual-stack one. */
	CHECK(addr_parse("192.0.2.1:7778", &a) == 0);
	CHECK_EQ_INT(addr_to_sockaddr(&a, AF_INET6, &ss),
	    sizeof(struct sockaddr_in6));
	CHECK(addr_from_sockaddr((struct sockaddr *)&ss, &b) == 0);
	CHECK(addr_equal(&a, &b) && b.family == 4);
	CHECK_EQ_INT(addr_to_sockaddr(&a, AF_INET, &ss),
	    sizeof(struct sockaddr_in));
	CHECK(addr_from_sockaddr((struct sockaddr *)&ss, &b) == 0);
	CHECK(addr_equal(&a, &b));
	ss.ss_family = AF_UNIX;
	CHECK(addr_from_sockaddr((struct sockaddr *)&ss, &b) == -1);
}

int
main(void)
{
	struct addr a, b, local[PAPO_ADDR_MAX];
	int n;

	test_hostport();
	test_bind();
	test_loopback();
	test_scope();
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
