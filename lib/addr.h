/*
 * addr.h: a member's network address (IPv4 or IPv6 and a UDP port), its
 * text form ("192.0.2.1:7778", "[2001:db8::1]:7778"), and the local
 * addresses a daemon listening on a given address can be reached at.
 */
#ifndef PAPO_ADDR_H
#define PAPO_ADDR_H

#include <stddef.h>
#include <stdint.h>

#define ADDR_STRLEN 48   /* "[" 39 "]:" 5 NUL, rounded up */

struct addr {
	uint8_t family;  /* 4 or 6 */
	uint8_t ip[16];  /* IPv4 in the first 4 bytes */
	uint16_t port;
};

/* Parses "ADDR:PORT" (IPv6 in brackets), port 1 to 65535.  0 or -1. */
int addr_parse(const char *s, struct addr *out);
/* The same for an address to listen on, where port 0 means any. */
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
int addr_is_loopback(const struct addr *a);

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

#endif
