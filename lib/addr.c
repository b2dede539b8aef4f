/*
 * addr.c: member addresses: their text form, and the interface addresses
 * a daemon bound to a wildcard address can be reached at (for invites and
 * hello frames).  Any thread; only addr_local does I/O (getifaddrs).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"

static int
addr_port(const char *s, uint16_t *port, int any)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || (v == 0 && !any) || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int
addr_parse_port(const char *s, struct addr *out, int any)
{
	char host[64];
	const char *colon;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':')
			return -1;
		n = (size_t)(close - s - 1);
		if (n == 0 || n >= sizeof(host))
			return -1;
		memcpy(host, s + 1, n);
		host[n] = '\0';
		if (inet_pton(AF_INET6, host, out->ip) != 1)
			return -1;
		out->family = 6;
		return addr_port(close + 2, &out->port, any);
	}
	if ((colon = strrchr(s, ':')) == NULL)
		return -1;
	n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, out->ip) != 1)
		return -1;
	out->family = 4;
	return addr_port(colon + 1, &out->port, any);
}

int
addr_parse(const char *s, struct addr *out)
{
	return addr_parse_port(s, out, 0);
}

int
addr_parse_listen(const char *s, struct addr *out)
{
	return addr_parse_port(s, out, 1);
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
	static const uint8_t v6[16] = { [15] = 1 };

	return a->family == 4 ? a->ip[0] == 127 : memcmp(a->ip, v6, 16) == 0;
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
	memset(a, 0, sizeof(*a));
	a->port = port;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		a->family = 4;
		memcpy(a->ip, &in->sin_addr, 4);
		return a->ip[0] == 127 ? 1 : 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) ||
		    IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			return -1;
		a->family = 6;
		memcpy(a->ip, &in6->sin6_addr, 16);
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ? 1 : 0;
	}
	return -1;
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
	const uint8_t *ip = a->ip;

	if (a->family == 4)
		return ip[0] == 10 || (ip[0] == 172 && (ip[1] & 0xf0) == 16) ||
		    (ip[0] == 192 && ip[1] == 168) ||
		    (ip[0] == 169 && ip[1] == 254);
	return (ip[0] & 0xfe) == 0xfc || (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80);
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
