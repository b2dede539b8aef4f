/*
 * addr.h: a member's network address (IPv4 or IPv6 and a UDP port), its
 * text form ("192.0.2.1:7778", "[2001:db8::1]:7778"), the addresses a
 * daemon binds (PAPO_HTTP, PAPO_LISTEN), which hosts are loopback, and
 * the local addresses a daemon listening on a given address can be
 * reached at.
 */
#ifndef PAPO_ADDR_H
#define PAPO_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ADDR_STRLEN 48   /* "[" 39 "]:" 5 NUL, rounded up */

struct addr {
	uint8_t family;  /* 4 or 6 */
	uint8_t ip[16];  /* IPv4 in the first 4 bytes */
	uint16_t port;
};

/*
 * The one reading of "HOST[:PORT]" every parser in papo uses (member
 * addresses, HTTP bind addresses and origins, TURN URLs): the first n
 * bytes of s split into the host, an IPv6 address in brackets given back
 * without them (v6 set), and the port, 1 to 5 digits worth at most 65535,
 * or ADDR_NO_PORT.  ADDR_OK, or what is wrong, which addr_hostport_why
 * says in words.  What a host may be (an IP, a name) and which ports
 * count is the caller's.
 */
#define ADDR_HOST_MAX 255
#define ADDR_NO_PORT (-1L)
struct addr_hostport {
	char host[ADDR_HOST_MAX + 1];
	int v6;                  /* it was in brackets */
	long port;               /* 0..65535, or ADDR_NO_PORT */
};
enum addr_hp_err {
	ADDR_OK = 0,
	ADDR_NO_HOST,            /* nothing before the port, or too long */
	ADDR_NO_BRACKET,         /* "[" without "]" */
	ADDR_AFTER_BRACKET,      /* something but ":PORT" after "]" */
	ADDR_BARE_V6,            /* two colons outside brackets */
	ADDR_BAD_PORT,           /* ":" then not a port */
	/* addr_bind's, after a well-formed HOST[:PORT]: */
	ADDR_PORT_MISSING,       /* no ":PORT" */
	ADDR_PORT_ZERO,          /* port 0 where a real port is needed */
	ADDR_NOT_IP,             /* the host is not an IP address */
};
enum addr_hp_err addr_hostport(const char *s, size_t n,
    struct addr_hostport *out);
const char *addr_hostport_why(enum addr_hp_err e);

/*
 * The one reading of an address to bind or dial, "IP:PORT" ("[IPv6]:PORT"
 * for IPv6): s into out, with the socket address a socket of the
 * address's own family binds (the QUIC socket, dual-stack, may choose
 * another: addr_to_sockaddr), the address as a URL names it, and what
 * kind it is.  The port is required, 1 to 65535, or 0 too (any free
 * port) with ADDR_BIND_ANY_PORT; "localhost" is 127.0.0.1 with
 * ADDR_BIND_LOCALHOST (PAPO_HTTP takes it, member addresses do not).
 * No other name: nothing is resolved.  ADDR_OK, or what is wrong
 * (addr_hostport_why says it in words), out then zeroed.
 */
#define ADDR_BIND_ANY_PORT  0x1
#define ADDR_BIND_LOCALHOST 0x2
struct addr_bind {
	struct addr a;
	struct sockaddr_storage ss;
	unsigned sslen;
	char host[ADDR_STRLEN];  /* "127.0.0.1", "[::1]": the IP, no port */
	int wildcard;            /* 0.0.0.0 or [::]: every interface */
	int loopback;            /* addr_is_loopback */
};
enum addr_hp_err addr_bind(const char *s, unsigned flags,
    struct addr_bind *out);

/* addr_bind's address alone: a member's ("ADDR:PORT", port 1 to 65535),
 * and one to listen on (port 0 means any).  0 or -1. */
int addr_parse(const char *s, struct addr *out);
int addr_parse_listen(const char *s, struct addr *out);
void addr_format(const struct addr *a, char out[ADDR_STRLEN]);
int addr_equal(const struct addr *a, const struct addr *b);
/* Whether a and b have the same IP address, whatever their ports. */
int addr_same_ip(const struct addr *a, const struct addr *b);
/* Whether a is one of the n addresses v. */
int addr_in(const struct addr *a, const struct addr *v, size_t n);
/* Whether any of the n addresses v is private (addr_is_private). */
int addrs_private(const struct addr *v, size_t n);
int addr_is_unspecified(const struct addr *a);

/*
 * The one loopback test, for an address (127.0.0.0/8, ::1, and
 * ::ffff:127.0.0.0/104, IPv4's v4-mapped) and for a host as a Host
 * header, URL or bind names it: "localhost" (any case), or such an
 * address written as an IP (IPv6 with or without its brackets).
 * Nothing is resolved; any other name is not loopback.
 */
int addr_is_loopback(const struct addr *a);
int addr_host_is_loopback(const char *host);

/*
 * Fills out (room for max) with the addresses where a socket bound to
 * listen is reached: listen itself when it names one address, else the
 * up interfaces' addresses of its family (0.0.0.0 gives IPv4, :: gives
 * both), global ones first, loopback last.  Returns the count, or -1.
 */
int addr_local(const struct addr *listen, struct addr *out, size_t max);
/* Whether a is on the same link as one of this machine's interfaces
 * (inside an up, non-loopback interface's subnet). */
int addr_on_link(const struct addr *a);
/* Whether a is a private address (RFC 1918, link-local, IPv6 unique or
 * link-local), meaningful on a private network only. */
int addr_is_private(const struct addr *a);

/*
 * The one classifier of IP addresses: what kind a is (a v4-mapped IPv6
 * address as its IPv4 one).  ADDR_SCOPE_PUBLIC is everything else, the
 * documentation ranges included (the test labs' "internet").  Callers
 * choose which kinds they take: port mapping advertises only a public
 * external address, OAuth fetches only from public ones, and members
 * rank private ones after the rest.
 */
enum addr_scope {
	ADDR_SCOPE_PUBLIC = 0,
	ADDR_SCOPE_UNSPECIFIED,      /* 0.0.0.0, :: */
	ADDR_SCOPE_LOOPBACK,         /* 127/8, ::1 (addr_is_loopback) */
	ADDR_SCOPE_PRIVATE,          /* RFC 1918, IPv6 unique local fc00::/7 */
	ADDR_SCOPE_LINK_LOCAL,       /* 169.254/16, fe80::/10 */
	ADDR_SCOPE_SHARED,           /* 100.64/10, carrier-grade NAT */
	ADDR_SCOPE_SITE_LOCAL,       /* fec0::/10, deprecated */
	ADDR_SCOPE_MULTICAST,        /* 224/4, ff00::/8 */
	ADDR_SCOPE_RESERVED,         /* 0/8, 240/4 */
};
enum addr_scope addr_scope(const struct addr *a);
/* In words: "public", "private", "shared address space (...)", ... */
const char *addr_scope_name(enum addr_scope s);

/* The socket address of a (port included): AF_INET, or AF_INET6 with
 * an IPv4 address v4-mapped (a dual-stack socket's).  Its length. */
unsigned addr_to_sockaddr(const struct addr *a, int family,
    struct sockaddr_storage *ss);
/* a from a socket address (a v4-mapped one as IPv4); -1 when it is not
 * an IP one. */
int addr_from_sockaddr(const struct sockaddr *sa, struct addr *a);

#endif
