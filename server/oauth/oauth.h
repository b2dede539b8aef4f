/*
 * oauth.h: papo's built-in OAuth 2.1 authorization server for remote MCP
 * clients (PAPO_OAUTH=on; docs/SECURITY.md, "OAuth"): the metadata of
 * RFC 9728 and RFC 8414, /authorize with its approval page, /token,
 * dynamic registration (RFC 7591), Client ID Metadata Documents, and the
 * grants `papo tokens` lists and revokes.  Access tokens it issues are
 * accepted by http.c through http_set_auth_hook.  Main thread only, but
 * for the short-lived threads that fetch metadata documents, which touch
 * nothing but their own fetch.
 */
#ifndef PAPO_OAUTH_H
#define PAPO_OAUTH_H

#include <stddef.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"

#define OAUTH_ACCESS_S 3600                  /* an access token lives */
#define OAUTH_REFRESH_S (30 * 24 * 3600)     /* a refresh token lives */
#define OAUTH_CODE_S 60                      /* a code lives */
#define OAUTH_SCOPE "papo"                   /* the one scope */

struct oauth_config {
	const char *home;
	const char *token;        /* PAPO_TOKEN: what a person approves with */
	const char *public_url;   /* PAPO_PUBLIC_URL, or NULL */
	int on;                   /* PAPO_OAUTH=on */
	int cimd_private;         /* PAPO_OAUTH_CIMD_PRIVATE=1 (tests):
	                           * metadata documents may be fetched from
	                           * loopback and private addresses, over
	                           * http too */
	unsigned access_s;        /* PAPO_OAUTH_ACCESS_TTL (tests); 0: 1 h */
	unsigned code_s;          /* PAPO_OAUTH_CODE_TTL (tests); 0: 60 s */
};

struct oauth;

/*
 * Whether OAuth may run as configured with HTTP on bind: -1 with err
 * when it is on without a token (the approval needs one), or when the
 * daemon is neither loopback nor reached by an https PAPO_PUBLIC_URL.
 */
int oauth_check(char err[PAPO_ERR_LEN], const char *bind,
    const struct oauth_config *c);

/* Loads the grants of c->home (when on).  NULL with err. */
struct oauth *oauth_new(char err[PAPO_ERR_LEN], struct loop *l,
    const struct oauth_config *c);
/* The routes to mount: all of OAuth's when on, else only /api/tokens
 * (which then says that OAuth is off). */
const struct http_route *oauth_routes(const struct oauth *o, size_t *n);
/* The routes whose POST bodies are forms, for a mount with form set
 * (none when off). */
const struct http_route *oauth_form_routes(const struct oauth *o,
    size_t *n);
/* Once h serves (its URL known): the issuer and resource are fixed, and
 * when on, h accepts this server's access tokens and its 401s point to
 * the metadata. */
void oauth_start(struct oauth *o, struct http *h);
/*
 * Answers requests still waiting for a metadata document with 503, waits
 * for the fetches to end (each bounded by its timeout), writes the
 * grants' last use and frees o.  Before http_free.  NULL is a no-op.
 */
void oauth_free(struct oauth *o);

#endif
