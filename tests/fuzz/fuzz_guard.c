/*
 * fuzz_guard.c: libFuzzer target for the HTTP guard's reading of a
 * request's Host and Origin (server/http/http_guard.c, linked with lib/
 * alone), which every request's headers go through before anything else:
 * the input is "HOST\nORIGIN" (no newline: a Host alone), decided for a
 * daemon on loopback, one behind a public URL with a CORS origin and one
 * on a wildcard address over TLS.  Never a crash, a parsed origin without
 * a name or port, or an answer outside the four kinds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addr.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http guards[3];

static void
guard(struct http *h, const char *bind, int tls, const char *pub,
    const char *cors)
{
	static char cert;       /* a struct tls the guard never reads */
	struct http_config c = { .bind = bind,
	    .token = "0123456789abcdef0123456789abcdef",
	    .tls = tls ? (struct tls *)(void *)&cert : NULL,
	    .public_url = pub, .cors = cors };
	char err[PAPO_ERR_LEN];
	struct addr_bind b;

	if (http_check(err, &c) == -1 ||
	    addr_bind(bind, HTTP_BIND_FLAGS, &b) != ADDR_OK)
		abort();
	http_guard_set(h, &c, &b);
	h->port = 7777;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct http_origin o;
	char name[HTTP_NAME_MAX];
	char *host, *origin;
	unsigned port;

	if (!ready) {
		guard(&guards[0], "127.0.0.1:7777", 0, NULL, NULL);
		guard(&guards[1], "127.0.0.1:7777", 0,
		    "https://papo.example.net", "https://app.example.net");
		guard(&guards[2], "0.0.0.0:7777", 1, NULL, NULL);
		ready = 1;
	}
	if ((host = malloc(size + 1)) == NULL)
		return 0;
	memcpy(host, data, size);
	host[size] = '\0';
	if ((origin = strchr(host, '\n')) != NULL)
		*origin++ = '\0';
	if (origin != NULL && http_parse_origin(origin, &o) == 0 &&
	    (o.name[0] == '\0' || o.port == 0 || o.port > 65535))
		abort();
	if (http_split_host(host, name, &port) == 0 &&
	    (strlen(name) >= sizeof(name) || port > 65535))
		abort();
	for (size_t i = 0; i < 3; i++) {
		enum http_origin_kind k = http_origin_check(&guards[i], host,
		    origin);

		if (k != HTTP_ORIGIN_BAD && k != HTTP_ORIGIN_NONE &&
		    k != HTTP_ORIGIN_SELF && k != HTTP_ORIGIN_CORS)
			abort();
		if ((origin == NULL) != (k == HTTP_ORIGIN_NONE) &&
		    k != HTTP_ORIGIN_BAD)
			abort();
	}
	free(host);
	return 0;
}
