/*
 * addr.c: addresses: the one HOST[:PORT] reading and the one bind
 * parser on it, member addresses' text form, the one loopback test and
 * the one classifier, and the interface addresses a daemon bound to a
 * wildcard address can be reached at (for invites and hello frames).
 * Any thread; only addr_local and addr_on_link do I/O (getifaddrs).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/addr.h"

enum addr_hp_err
addr_hostport(const char *s, size_t n, struct addr_hostport *out)
{
	const char *end = s + n, *host = s, *hend, *port = NULL;
	unsigned long v = 0;

	memset(out, 0, sizeof(*out));
	out->port = ADDR_NO_PORT;
	if (n > 0 && s[0] == '[') {
		if ((hend = memchr(s, ']', n)) == NULL)
			return ADDR_NO_BRACKET;
		host = s + 1;
		out->v6 = 1;
		if (hend + 1 < end) {
			if (hend[1] != ':')
				return ADDR_AFTER_BRACKET;
			port = hend + 2;
		}
	} else {
		const char *c = memchr(s, ':', n);

		if (c != NULL && memchr(c + 1, ':', (size_t)(end - c - 1)))
			return ADDR_BARE_V6;
		hend = c != NULL ? c : end;
		if (c != NULL)
			port = c + 1;
	}
	if (hend == host || (size_t)(hend - host) > ADDR_HOST_MAX)
		return ADDR_NO_HOST;
	memcpy(out->host, host, (size_t)(hend - host));
	if (port == NULL)
		return ADDR_OK;
	if (port == end || end - port > 5)
		return ADDR_BAD_PORT;
	for (const char *c = port; c < end; c++) {
		if (*c < '0' || *c > '9')
			return ADDR_BAD_PORT;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v > 65535)
		return ADDR_BAD_PORT;
	out->port = (long)v;
	return ADDR_OK;
}

const char *
addr_hostport_why(enum addr_hp_err e)
{
	switch (e) {
	case ADDR_OK:
		return "well formed";
	case ADDR_NO_HOST:
		return "no host name";
	case ADDR_NO_BRACKET:
		return "no ] after the IPv6 address";
	case ADDR_AFTER_BRACKET:
		return "expected :PORT after ]";
	case ADDR_BARE_V6:
		return "put an IPv6 address in brackets: [ADDR]:PORT";
	case ADDR_BAD_PORT:
		return "the port must be a number up to 65535";
	case ADDR_PORT_MISSING:
		return "no :PORT after the address";
	case ADDR_PORT_ZERO:
		return "port 0 (any port) cannot be reached: name the port";
	case ADDR_NOT_IP:
		return "not an IP address (no names are looked up)";
	}
	return "malformed";
}

/* Reads host, an IP address (IPv6 when v6, the brackets removed), into
 * a with port 0.  0, or -1 when it is not one. */
static int
addr_ip(const char *host, int v6, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, a->ip) != 1)
		return -1;
	a->family = v6 ? 6 : 4;
	return 0;
}

enum addr_hp_err
addr_bind(const char *s, unsigned flags, struct addr_bind *out)
{
	struct addr_hostport hp;
	enum addr_hp_err e;
	char ip[INET6_ADDRSTRLEN];

	memset(out, 0, sizeof(*out));
	if ((e = addr_hostport(s, strlen(s), &hp)) != ADDR_OK)
		return e;
	if (hp.port == ADDR_NO_PORT)
		return ADDR_PORT_MISSING;
	if (hp.port == 0 && !(flags & ADDR_BIND_ANY_PORT))
		return ADDR_PORT_ZERO;
	/* Exactly "localhost", as PAPO_HTTP has always taken it. */
	if ((flags & ADDR_BIND_LOCALHOST) && !hp.v6 &&
	    strcmp(hp.host, "localhost") == 0)
		snprintf(hp.host, sizeof(hp.host), "127.0.0.1");
	if (addr_ip(hp.host, hp.v6, &out->a) == -1)
		return ADDR_NOT_IP;
	out->a.port = (uint16_t)hp.port;
	out->sslen = addr_to_sockaddr(&out->a, hp.v6 ? AF_INET6 : AF_INET,
	    &out->ss);
	inet_ntop(hp.v6 ? AF_INET6 : AF_INET, out->a.ip, ip, sizeof(ip));
	snprintf(out->host, sizeof(out->host), hp.v6 ? "[%s]" : "%s", ip);
	out->wildcard = addr_is_unspecified(&out->a);
	out->loopback = addr_is_loopback(&out->a);
	return ADDR_OK;
}

static int
addr_parse_port(const char *s, struct addr *out, unsigned flags)
{
	struct addr_bind b;

	if (addr_bind(s, flags, &b) != ADDR_OK) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	*out = b.a;
	return 0;
}

int
addr_parse(const char *s, struct addr *out)
{
	return addr_parse_port(s, out, 0);
}

int
addr_parse_listen(const char *s, struct addr *out)
{
	return addr_parse_port(s, out, ADDR_BIND_ANY_PORT);
}

void
addr_format(const struct addr *a, char out[ADDR_STRLEN])
{
	char host[INET6_ADDRSTRLEN];

	if (a->family == 6) {
		inet_ntop(AF_INET6, a->ip, host, sizeof(host));
		snprintf(out, ADDR_STRLEN, "[%s]:%u", host, a->port);
	} else {
		inet_ntop(AF_INET, a->ip, host, sizeof(host));
		snprintf(out, ADDR_STRLEN, "%s:%u", host, a->port);
	}
}

int
addr_equal(const struct addr *a, const struct addr *b)
{
	size_t n = a->family == 6 ? 16 : 4;

	return a->family == b->family && a->port == b->port &&
	    memcmp(a->ip, b->ip, n) == 0;
}

int
addr_same_ip(const struct addr *a, const struct addr *b)
{
	size_t n = a->family == 6 ? 16 : 4;

	return a->family == b->family && memcmp(a->ip, b->ip, n) == 0;
}

int
addr_in(const struct addr *a, const struct addr *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (addr_equal(a, &v[i]))
			return 1;
	return 0;
}

int
addrs_private(const struct addr *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (addr_is_private(&v[i]))
			return 1;
	return 0;
}

int
addr_is_loopback(const struct addr *a)
{
	return addr_scope(a) == ADDR_SCOPE_LOOPBACK;
}

int
addr_host_is_loopback(const char *host)
{
	char bare[INET6_ADDRSTRLEN];
	size_t n = strlen(host);
	struct addr a;

	if (strcasecmp(host, "localhost") == 0)
		return 1;
	/* "[::1]", as Host and URLs write IPv6: only IPv6 in brackets. */
	if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
		if (n - 2 >= sizeof(bare))
			return 0;
		memcpy(bare, host + 1, n - 2);
		bare[n - 2] = '\0';
		return addr_ip(bare, 1, &a) == 0 && addr_is_loopback(&a);
	}
	return (addr_ip(host, 0, &a) == 0 || addr_ip(host, 1, &a) == 0) &&
	    addr_is_loopback(&a);
}

int
addr_is_unspecified(const struct addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->ip, zero, a->family == 6 ? 16 : 4) == 0;
}

/* Ranks an interface address: 0 global, 1 loopback, -1 unusable.  IPv6
 * link-local addresses need a scope id an invite cannot carry. */
static int
addr_rank(const struct sockaddr *sa, struct addr *a, uint16_t port)
{
	const struct in6_addr *in6 =
	    &((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (sa->sa_family == AF_INET6 && (IN6_IS_ADDR_LINKLOCAL(in6) ||
	    IN6_IS_ADDR_V4MAPPED(in6)))
		return -1;
	if (addr_from_sockaddr(sa, a) == -1)
		return -1;
	a->port = port;
	return addr_is_loopback(a) ? 1 : 0;
}

int
addr_local(const struct addr *listen, struct addr *out, size_t max)
{
	struct ifaddrs *ifs = NULL;
	size_t n = 0;

	if (!addr_is_unspecified(listen)) {
		if (max == 0)
			return 0;
		out[0] = *listen;
		return 1;
	}
	if (getifaddrs(&ifs) == -1)
		return -1;
	/* Two passes: global addresses first, so a peer elsewhere tries them
	 * before loopback, which only works on this machine. */
	for (int pass = 0; pass < 2; pass++) {
		for (struct ifaddrs *i = ifs; i != NULL && n < max; i = i->ifa_next) {
			struct addr a;

			if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP))
				continue;
			if (addr_rank(i->ifa_addr, &a, listen->port) != pass)
				continue;
			if (listen->family == 4 && a.family != 4)
				continue;
			out[n++] = a;
		}
	}
	freeifaddrs(ifs);
	return (int)n;
}

/* RFC 1918, link-local (169.254/16), unique local (fc00::/7) and
 * link-local (fe80::/10) IPv6: addresses that only mean something on a
 * private network. */
int
addr_is_private(const struct addr *a)
{
	enum addr_scope s = addr_scope(a);

	return s == ADDR_SCOPE_PRIVATE || s == ADDR_SCOPE_LINK_LOCAL;
}

static enum addr_scope
addr_scope4(const uint8_t *ip)
{
	if (ip[0] == 0)
		return ip[1] == 0 && ip[2] == 0 && ip[3] == 0 ?
		    ADDR_SCOPE_UNSPECIFIED : ADDR_SCOPE_RESERVED;
	if (ip[0] == 127)
		return ADDR_SCOPE_LOOPBACK;
	if (ip[0] == 10 || (ip[0] == 172 && (ip[1] & 0xf0) == 16) ||
	    (ip[0] == 192 && ip[1] == 168))
		return ADDR_SCOPE_PRIVATE;
	if (ip[0] == 169 && ip[1] == 254)
		return ADDR_SCOPE_LINK_LOCAL;
	if (ip[0] == 100 && (ip[1] & 0xc0) == 64)
		return ADDR_SCOPE_SHARED;
	if ((ip[0] & 0xf0) == 224)
		return ADDR_SCOPE_MULTICAST;
	if (ip[0] >= 240)
		return ADDR_SCOPE_RESERVED;
	return ADDR_SCOPE_PUBLIC;
}

enum addr_scope
addr_scope(const struct addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];
	const uint8_t *ip = a->ip;

	if (a->family == 4)
		return addr_scope4(ip);
	if (memcmp(ip, mapped, sizeof(mapped)) == 0)
		return addr_scope4(ip + 12);
	if (memcmp(ip, zero, 16) == 0)
		return ADDR_SCOPE_UNSPECIFIED;
	if (memcmp(ip, zero, 15) == 0 && ip[15] == 1)
		return ADDR_SCOPE_LOOPBACK;
	if ((ip[0] & 0xfe) == 0xfc)
		return ADDR_SCOPE_PRIVATE;
	if (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80)
		return ADDR_SCOPE_LINK_LOCAL;
	if (ip[0] == 0xfe && (ip[1] & 0xc0) == 0xc0)
		return ADDR_SCOPE_SITE_LOCAL;
	if (ip[0] == 0xff)
		return ADDR_SCOPE_MULTICAST;
	return ADDR_SCOPE_PUBLIC;
}

const char *
addr_scope_name(enum addr_scope s)
{
	switch (s) {
	case ADDR_SCOPE_PUBLIC:
		return "public";
	case ADDR_SCOPE_UNSPECIFIED:
		return "unspecified";
	case ADDR_SCOPE_LOOPBACK:
		return "loopback";
	case ADDR_SCOPE_PRIVATE:
		return "private";
	case ADDR_SCOPE_LINK_LOCAL:
		return "link-local";
	case ADDR_SCOPE_SHARED:
		return "shared address space (100.64.0.0/10, carrier-grade "
		    "NAT)";
	case ADDR_SCOPE_SITE_LOCAL:
		return "site-local";
	case ADDR_SCOPE_MULTICAST:
		return "multicast";
	case ADDR_SCOPE_RESERVED:
		return "reserved";
	}
	return "unknown";
}

unsigned
addr_to_sockaddr(const struct addr *a, int family, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->ip, 4);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(a->port);
	if (a->family == 4) {
		in6->sin6_addr.s6_addr[10] = 0xff;
		in6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&in6->sin6_addr.s6_addr[12], a->ip, 4);
	} else
		memcpy(&in6->sin6_addr, a->ip, 16);
	return sizeof(*in6);
}

int
addr_from_sockaddr(const struct sockaddr *sa, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		a->family = 4;
		memcpy(a->ip, &in->sin_addr, 4);
		a->port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family != AF_INET6)
		return -1;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

	a->port = ntohs(in6->sin6_port);
	if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		a->family = 4;
		memcpy(a->ip, &in6->sin6_addr.s6_addr[12], 4);
	} else {
		a->family = 6;
		memcpy(a->ip, &in6->sin6_addr, 16);
	}
	return 0;
}

int
addr_on_link(const struct addr *a)
{
	struct ifaddrs *ifs = NULL, *i;
	int found = 0;

	if (getifaddrs(&ifs) == -1)
		return 0;
	for (i = ifs; i != NULL && !found; i = i->ifa_next) {
		const uint8_t *ip, *mask;
		size_t len;

		if (i->ifa_addr == NULL || i->ifa_netmask == NULL ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (a->family == 4 && i->ifa_addr->sa_family == AF_INET) {
			ip = (const uint8_t *)&((struct sockaddr_in *)
			    i->ifa_addr)->sin_addr;
			mask = (const uint8_t *)&((struct sockaddr_in *)
			    i->ifa_netmask)->sin_addr;
			len = 4;
		} else if (a->family == 6 && i->ifa_addr->sa_family == AF_INET6) {
			ip = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr.s6_addr;
			mask = ((struct sockaddr_in6 *)
			    i->ifa_netmask)->sin6_addr.s6_addr;
			len = 16;
		} else
			continue;
		found = 1;
		for (size_t k = 0; k < len; k++)
			if ((ip[k] & mask[k]) != (a->ip[k] & mask[k]))
				found = 0;
	}
	freeifaddrs(ifs);
	return found;
}
