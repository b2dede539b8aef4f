/*
 * http_guard.c: the pure checks of the HTTP guard (declared in
 * http_int.h): the bind address (lib/addr's addr_bind) and the token a
 * daemon may start with (http_check), origins and PAPO_CORS_ORIGINS,
 * the Host and Origin of a request against the daemon's names (DNS
 * rebinding and CORS in one check), the token compared in constant
 * time, a client address's key; and the names a daemon answers to, set
 * from its settings (http_guard_set).  No I/O, no clock: strings and
 * addresses in, answers out (tests/test_http_guard.c links it alone).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "lib/addr.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

static int
http_token_valid(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > HTTP_TOKEN_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i] < 0x21 || t[i] > 0x7e)
			return 0;
	return 1;
}

/*
 * Parses an origin "SCHEME://NAME[:PORT]" (http or https, NAME a DNS
 * name, an IPv4 address or a bracketed IPv6 one), with at most a
 * trailing "/" after it: no path, user or query.
 */
int
http_parse_origin(const char *s, struct http_origin *o)
{
	struct addr_hostport hp;
	const char *rest;
	size_t n;

	memset(o, 0, sizeof(*o));
	if (strncasecmp(s, "https://", 8) == 0) {
		o->https = 1;
		rest = s + 8;
	} else if (strncasecmp(s, "http://", 7) == 0) {
		rest = s + 7;
	} else {
		return -1;
	}
	n = strlen(rest);
	if (n > 0 && rest[n - 1] == '/')
		n--;
	if (addr_hostport(rest, n, &hp) != ADDR_OK || hp.port == 0 ||
	    strlen(hp.host) + 2 >= sizeof(o->name))
		return -1;
	for (const char *c = hp.host; *c != '\0'; c++)
		if (strchr("/?#@ \t[]", *c) != NULL || (unsigned char)*c < 0x21)
			return -1;
	/* The name as the Origin header spells it: IPv6 in brackets. */
	snprintf(o->name, sizeof(o->name), hp.v6 ? "[%s]" : "%s", hp.host);
	o->port = hp.port != ADDR_NO_PORT ? (unsigned)hp.port :
	    o->https ? 443 : 80;
	return 0;
}

static int
http_origin_equal(const struct http_origin *a, const struct http_origin *b)
{
	return a->https == b->https && a->port == b->port &&
	    strcasecmp(a->name, b->name) == 0;
}

/* Splits PAPO_CORS_ORIGINS (origins separated by commas or white space)
 * into out.  -1 with err naming the first bad one. */
int
http_parse_cors(char err[PAPO_ERR_LEN], const char *list,
    struct http_origin *out, size_t *n)
{
	char one[HTTP_URL_MAX];
	size_t len;

	*n = 0;
	while (list != NULL && *list != '\0') {
		list += strspn(list, ", \t\n");
		if ((len = strcspn(list, ", \t\n")) == 0)
			break;
		if (len >= sizeof(one)) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: an origin "
			    "is longer than %d bytes", HTTP_URL_MAX - 1);
			return -1;
		}
		memcpy(one, list, len);
		one[len] = '\0';
		list += len;
		if (*n == HTTP_CORS_MAX) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: more than "
			    "%d origins", HTTP_CORS_MAX);
			return -1;
		}
		if (strcmp(one, "*") == 0 || http_parse_origin(one,
		    &out[*n]) == -1) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_CORS_ORIGINS: '%s' is "
			    "not an origin such as https://app.example.net or "
			    "http://127.0.0.1:5173 (no path, no wildcard)", one);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

int
http_check(char err[PAPO_ERR_LEN], const struct http_config *c)
{
	struct http_origin o[HTTP_CORS_MAX];
	struct addr_bind b;
	enum addr_hp_err e;
	const char *token = c->token;
	size_t n;

	if ((e = addr_bind(c->bind, HTTP_BIND_FLAGS, &b)) != ADDR_OK) {
		snprintf(err, PAPO_ERR_LEN, "the HTTP address '%s' is not "
		    "ADDR:PORT (for example 127.0.0.1:7777): %s", c->bind,
		    addr_hostport_why(e));
		return -1;
	}
	if (token != NULL && token[0] != '\0' && !http_token_valid(token)) {
		snprintf(err, PAPO_ERR_LEN, "the token (PAPO_TOKEN or --token) "
		    "must be %d to %d visible ASCII characters, without spaces",
		    HTTP_TOKEN_MIN, HTTP_TOKEN_MAX);
		return -1;
	}
	if (token != NULL && token[0] != '\0' &&
	    strlen(token) < HTTP_TOKEN_MIN) {
		snprintf(err, PAPO_ERR_LEN, "the token (PAPO_TOKEN or --token) "
		    "is %zu characters; it must be at least %d random ones "
		    "(128 bits even as hex), or it can be guessed: make one "
		    "with 'openssl rand -hex 32' or 'head -c 24 /dev/urandom | "
		    "base64'", strlen(token), HTTP_TOKEN_MIN);
		return -1;
	}
	if (!b.loopback && (token == NULL || token[0] == '\0')) {
		snprintf(err, PAPO_ERR_LEN, "refusing to serve HTTP on %s "
		    "without a token, since anyone who reaches it could speak "
		    "in the room: set --token or PAPO_TOKEN, or bind 127.0.0.1",
		    c->bind);
		return -1;
	}
	if (c->public_url != NULL && (strlen(c->public_url) >= HTTP_URL_MAX ||
	    http_parse_origin(c->public_url, &o[0]) == -1)) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_PUBLIC_URL '%.200s' is not a "
		    "URL such as https://papo.example.net (a scheme and a host, "
		    "an optional port, no path)", c->public_url);
		return -1;
	}
	return http_parse_cors(err, c->cors, o, &n);
}

void
http_guard_set(struct http *h, const struct http_config *c,
    const struct addr_bind *b)
{
	char err[PAPO_ERR_LEN];

	h->tls = c->tls;
	if (c->public_url != NULL) {
		http_parse_origin(c->public_url, &h->pub);
		snprintf(h->pub_url, sizeof(h->pub_url), "%s", c->public_url);
		if (h->pub_url[0] != '\0' &&
		    h->pub_url[strlen(h->pub_url) - 1] == '/')
			h->pub_url[strlen(h->pub_url) - 1] = '\0';
	}
	http_parse_cors(err, c->cors, h->cors, &h->ncors);
	snprintf(h->host, sizeof(h->host), "%s", b->host);
	h->wildcard = b->wildcard;
}

/*
 * Splits a Host value "NAME[:PORT]" (NAME may be a bracketed IPv6
 * address, given back with its brackets).  The port is 0 when absent.
 */
int
http_split_host(const char *s, char name[HTTP_NAME_MAX], unsigned *port)
{
	struct addr_hostport hp;

	if (addr_hostport(s, strlen(s), &hp) != ADDR_OK ||
	    strlen(hp.host) + (hp.v6 ? 2 : 0) >= HTTP_NAME_MAX)
		return -1;
	snprintf(name, HTTP_NAME_MAX, hp.v6 ? "[%s]" : "%s", hp.host);
	*port = hp.port != ADDR_NO_PORT ? (unsigned)hp.port : 0;
	return 0;
}

/* Is host one of the names this daemon answers to, with its port: its
 * loopback names and bound address, or PAPO_PUBLIC_URL's host? */
static int
http_host_ours(const struct http *h, const char *host)
{
	char name[HTTP_NAME_MAX];
	unsigned port;

	if (http_split_host(host, name, &port) == -1)
		return 0;
	if (h->pub_url[0] != '\0' && strcasecmp(name, h->pub.name) == 0 &&
	    (port == 0 ? (h->pub.https ? 443u : 80u) : port) == h->pub.port)
		return 1;
	if (port != h->port)
		return 0;
	return addr_host_is_loopback(name) || strcasecmp(name, h->host) == 0;
}

/*
 * The DNS rebinding check, and CORS's: one decision on Host and Origin.
 * On a loopback or named address only this daemon's own names pass (and
 * PAPO_PUBLIC_URL's host).  On a wildcard address (which needs a token)
 * the names it is reached by cannot be known (container names, mapped
 * ports), so any Host passes and the token is the guard; a browser's
 * Origin must then still be the page's own host.  A client without Host
 * (HTTP/1.0) is not a browser, so it passes.  An Origin that is listed
 * in PAPO_CORS_ORIGINS passes, whatever the Host.
 */
enum http_origin_kind
http_origin_check(const struct http *h, const char *host, const char *origin)
{
	struct http_origin o;
	const char *rest;

	if (host != NULL && !h->wildcard && !http_host_ours(h, host))
		return HTTP_ORIGIN_BAD;
	if (origin == NULL)
		return HTTP_ORIGIN_NONE;
	if (http_parse_origin(origin, &o) == -1)
		return HTTP_ORIGIN_BAD;
	for (size_t i = 0; i < h->ncors; i++)
		if (http_origin_equal(&o, &h->cors[i]))
			return HTTP_ORIGIN_CORS;
	if (h->pub_url[0] != '\0' && http_origin_equal(&o, &h->pub))
		return HTTP_ORIGIN_SELF;
	if (o.https != (h->tls != NULL))
		return HTTP_ORIGIN_BAD;
	rest = origin + (o.https ? 8 : 7);
	if (h->wildcard)
		return host != NULL && strcasecmp(rest, host) == 0 ?
		    HTTP_ORIGIN_SELF : HTTP_ORIGIN_BAD;
	return http_host_ours(h, rest) ? HTTP_ORIGIN_SELF : HTTP_ORIGIN_BAD;
}

/*
 * Compares the given token with ours in a time that depends only on
 * their lengths, never on where they differ, so that timing answers
 * does not reveal the token a byte at a time.
 */
int
http_token_equal(const char *given, const char *token, size_t n)
{
	size_t glen = strlen(given);
	volatile unsigned char d = glen != n;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)token[i] ^
		    (unsigned char)(i < glen ? given[i] : 0);
	return d == 0;
}

/* Connections: how many each client address holds, and the deadline of
 * a request's headers. */

/* The key of a client address: IPv4 whole, IPv6 by its /64 (one host
 * holds a /64), an IPv4-mapped IPv6 address as the IPv4 one.  -1 for
 * another family. */
int
http_peer_key(const struct sockaddr *sa, unsigned char key[9])
{
	memset(key, 0, 9);
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			key[0] = 4;
			memcpy(key + 1, a->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a->s6_addr, 8);
		}
		return 0;
	}
	return -1;
}
