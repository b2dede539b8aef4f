/*
 * http_auth.c: credentials (docs/SECURITY.md): the token or OAuth's hook
 * (http_authorized), requests through a tunnel or proxy (the one list of
 * forwarding headers), wrong credentials counted per client by
 * throttle.c and answered 429 past the limit (http_screen_auth).  Main
 * thread, inside MHD's callbacks; never blocks.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "server/http/http.h"
#include "server/http/http_int.h"
#include "server/http/throttle.h"

/* The headers that proxies and tunnels add (cloudflared, tailscale
 * serve, nginx, Caddy, CDNs): any one of them marks a request as come
 * from elsewhere. */
static const char *const http_forwarding[] = {
	"Forwarded", "X-Forwarded-For", "X-Forwarded-Host",
	"X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Server",
	"X-Real-IP", "X-Client-IP", "X-Cluster-Client-IP", "True-Client-IP",
	"CF-Connecting-IP", "Fastly-Client-IP", "Via", "Tailscale-User-Login",
};

int
http_req_remote(struct http_req *r)
{
	const char *host = http_header(r, MHD_HTTP_HEADER_HOST);
	char name[HTTP_NAME_MAX];
	unsigned port;

	for (size_t i = 0; i < sizeof(http_forwarding) /
	    sizeof(http_forwarding[0]); i++)
		if (http_header(r, http_forwarding[i]) != NULL)
			return 1;
	return host != NULL && (http_split_host(host, name, &port) == -1 ||
	    !addr_host_is_loopback(name));
}

int
http_authorized(struct http_req *r)
{
	const struct http *h = r->h;
	const char *value = http_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
	int64_t now;

	if (h->token_len == 0)
		return 0;
	if (value == NULL || strncasecmp(value, "Bearer ", 7) != 0)
		return 0;
	value += 7;
	while (*value == ' ')
		value++;
	if (http_token_equal(value, h->token, h->token_len))
		return 1;
	if (h->auth.accept == NULL || !h->auth.accept(h->auth.arg, value,
	    &r->ask.grant)) {
		r->ask.grant.id[0] = '\0';
		return 0;
	}
	/* The expiry on the loop's clock, which the timer that ends streams
	 * keeps; a token a moment from its end ends at once. */
	r->ask.grant.id[sizeof(r->ask.grant.id) - 1] = '\0';
	now = (int64_t)loop_wall_ms();
	r->ask.grant_end = loop_now_ns() + (r->ask.grant.expires_ms > now ?
	    (uint64_t)(r->ask.grant.expires_ms - now) * NS_PER_MS : 0);
	return 1;
}

/*
 * The client r counts against for wrong credentials: its address, keyed
 * as connections count it (http_peer_key: an IPv6 one by its /64, what
 * one host is given), and whether it came through a tunnel or proxy, so
 * that failures through a tunnel, which connects from loopback too, never
 * slow this machine's own clients.
 */

static void
http_client_key(struct http_req *r, unsigned char key[THROTTLE_KEY_LEN])
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	memset(key, 0, THROTTLE_KEY_LEN);
	if (ci != NULL && ci->client_addr != NULL)
		(void)http_peer_key(ci->client_addr, key);
	key[THROTTLE_KEY_LEN - 1] = (unsigned char)http_req_remote(r);
}

unsigned
http_auth_wait(struct http_req *r)
{
	unsigned char key[THROTTLE_KEY_LEN];
	uint64_t ms;

	http_client_key(r, key);
	ms = throttle_wait(r->h->fails, key, loop_now_ns() / NS_PER_MS);
	return ms == 0 ? 0 : (unsigned)((ms + 999) / 1000);
}

int
http_auth_failed(struct http_req *r)
{
	unsigned char key[THROTTLE_KEY_LEN];
	int slow;

	http_client_key(r, key);
	slow = throttle_failed(r->h->fails, key, loop_now_ns() / NS_PER_MS);
	if (slow)
		log_msg(LOG_DEBUG, "http: too many wrong credentials from one "
		    "client (the last for %s): slowed", r->ask.path);
	return slow;
}

void
http_reply_slow(struct http_req *r, unsigned wait_s)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", wait_s > 0 ? wait_s : 1);
	http_reply_header(r, "Retry-After", v);
	http_reply_error(r, 429, "too many wrong credentials from this client: "
	    "it may try one every %u s until a minute passes without a "
	    "wrong one; check its token (PAPO_TOKEN)", THROTTLE_GAP_MS / 1000);
}

/*
 * The credentials check of a route that needs them: 0 when r may go on.
 * With no token set, a request from this machine's own clients passes,
 * as before; one that came through a tunnel or proxy (http_req_remote)
 * is refused with 403, since nothing it could send would be accepted.
 * With a token, every request must carry it (401).  A client that sent
 * too many wrong ones is slowed (throttle.h): its credential is checked
 * once a second, the others are refused with 429 unchecked, since a
 * check would tell a guesser when it hit.
 */
int
http_screen_auth(struct http_req *r)
{
	struct http *h = r->h;
	int given = http_header(r, MHD_HTTP_HEADER_AUTHORIZATION) != NULL;
	unsigned wait;

	if (h->token_len == 0) {
		if (!http_req_remote(r))
			return 0;
		http_reply_error(r, MHD_HTTP_FORBIDDEN, "this request came "
		    "through a proxy or tunnel (its Host is not this machine's "
		    "loopback, or it has forwarding headers), and this daemon "
		    "has no credentials to check: set PAPO_TOKEN (or "
		    "PAPO_OAUTH=on) to serve it");
		return -1;
	}
	if (given && (wait = http_auth_wait(r)) > 0) {
		http_reply_slow(r, wait);
		return -1;
	}
	if (http_authorized(r))
		return 0;
	if (given && http_auth_failed(r)) {
		http_reply_slow(r, THROTTLE_GAP_MS / 1000);
		return -1;
	}
	/* With OAuth on, its challenge says where its metadata is. */
	http_reply_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
	    h->auth.challenge != NULL ? h->auth.challenge(h->auth.arg) :
	    "Bearer realm=\"papo\"");
	http_reply_error(r, MHD_HTTP_UNAUTHORIZED, "this daemon needs "
	    "'Authorization: Bearer TOKEN' (its PAPO_TOKEN)");
	return -1;
}
