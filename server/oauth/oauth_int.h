/*
 * oauth_int.h: what the OAuth authorization server's own files share,
 * and nothing else includes.  They call one way, each only the ones
 * before it: oauth_check.c (pure checks of what clients send),
 * oauth_reply.c (the clock, the answers every route writes),
 * oauth_cimd.c (Client ID Metadata Documents), oauth_approve.c
 * (/authorize, its approval page, the dashboard's approval) and oauth.c
 * (metadata, /token, /register, access tokens, /api/tokens, start and
 * stop).  It holds struct oauth
 * and what it is made of, the limits more than one file sizes by, and
 * the functions that cross between them.  The rest of the daemon sees
 * only oauth.h.  Main thread only.
 */
#ifndef PAPO_OAUTH_INT_H
#define PAPO_OAUTH_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/grants.h"

#define OAUTH_URL_MAX 600           /* bytes of the base URL and its paths */
#define OAUTH_PENDING_MAX 64        /* approval pages open at once */
#define OAUTH_CODES_MAX 64          /* codes not yet expired */
#define OAUTH_STATE_MAX 512         /* bytes of a client's state */
#define OAUTH_VALUE_MAX 1024        /* bytes of any form value */
#define OAUTH_CIMD_CACHE 32         /* documents kept */
#define OAUTH_RANDOM_LEN GRANTS_TOKEN_LEN

/* An approval page shown and not yet answered. */
struct oauth_pending {
	char id[OAUTH_RANDOM_LEN + 1];      /* the form's request field */
	char client_id[GRANTS_URI_MAX + 1];
	char client_name[GRANTS_NAME_MAX + 1];
	char redirect[GRANTS_URI_MAX + 1];
	char challenge[64];
	char state[OAUTH_STATE_MAX + 1];
	int has_state;
	int64_t expires;
	int tries;
	int approved;                       /* on the dashboard */
};

/* A code given to a client; kept, used, until it expires, so that a
 * replay is known as one. */
struct oauth_code {
	unsigned char hash[GRANTS_HASH_LEN];
	char client_id[GRANTS_URI_MAX + 1];
	char client_name[GRANTS_NAME_MAX + 1];
	char redirect[GRANTS_URI_MAX + 1];
	char challenge[64];
	int64_t expires;
	int used;
	char grant[GRANTS_ID_LEN + 1];      /* what it was exchanged for */
};

/* A Client ID Metadata Document fetched, or the reason it could not be. */
struct oauth_cimd {
	char url[GRANTS_URI_MAX + 1];
	int ok;
	char err[PAPO_ERR_LEN];
	struct grants_client client;
	int64_t until;
};

struct cJSON;

/* One fetch of a document: oauth_cimd.c's own. */
struct oauth_fetch;

struct oauth {
	struct loop *loop;
	struct http *http;
	struct grants *grants;
	int on;
	int cimd_private;
	int64_t access_s, code_s;
	char token_hash[GRANTS_HASH_LEN];
	char public_url[OAUTH_URL_MAX];
	char issuer[OAUTH_URL_MAX];       /* the base URL */
	char resource[OAUTH_URL_MAX];     /* issuer + "/mcp" */
	char challenge[2 * OAUTH_URL_MAX];
	struct oauth_pending pending[OAUTH_PENDING_MAX];
	struct oauth_code codes[OAUTH_CODES_MAX];
	struct oauth_cimd cimd[OAUTH_CIMD_CACHE];
	int64_t reg_window;
	int reg_count;
	int dirty;                        /* last uses not yet written */
	struct chan *fetched;             /* fetches done (oauth_cimd.c) */
	size_t nfetch;
	LIST_HEAD(, oauth_fetch) fetches;
};

/* oauth_check.c: the checks, pure, below all the others. */

/* Finds name in a form body and decodes its value into out (size cap):
 * 1 found, 0 absent, -1 malformed, too long or given twice. */
int oauth_form(const char *body, const char *name, char *out, size_t cap);
/* Whether the daemon's token is what the person typed. */
int oauth_token_ok(const struct oauth *o, const char *given);
/* Whether resource (RFC 8707) is papo's own MCP endpoint. */
int oauth_resource_ours(const struct oauth *o, const char *resource);
/* Whether scope is well formed (RFC 6749 3.3). */
int oauth_scope_ok(const char *scope);
/* Whether uri is a redirect URI papo sends codes to. */
int oauth_redirect_ok(const char *uri);
/* The host of uri (up to its path), or its scheme for a private one. */
void oauth_uri_host(const char *uri, char *out, size_t n);
/* Whether /authorize's PKCE is S256 with a challenge of 43 characters. */
int oauth_pkce_challenge_ok(const char *method, const char *challenge);
/* Whether v is a code_verifier (RFC 7636 4.1) whose S256 is challenge. */
int oauth_pkce_ok(const char *v, const char *challenge);

/* oauth_reply.c: the clock and the answers, above oauth_check.c. */

/* The time now, in seconds: what every expiry is counted in. */
int64_t oauth_now(void);
/* Answers r with o as JSON (500 when o is NULL) and deletes o. */
void oauth_json(struct http_req *r, int status, struct cJSON *o);
/* Answers r with an OAuth error (RFC 6749 5.2) of code and fmt. */
void oauth_error(struct http_req *r, int status, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Whether r carries the daemon's own token; else 0 and r answered 403. */
int oauth_owner(struct http_req *r, struct oauth *o);

/* oauth_approve.c: /authorize and the dashboard's approval. */

/* GET /authorize: checks the request and shows the approval page; again
 * when the client's metadata document has been fetched. */
void oauth_authorize_get(struct http_req *r, void *arg);
/* POST /authorize: the approval page's answer. */
void oauth_authorize_post(struct http_req *r, void *arg);
/* GET /api/oauth/pending: the approval pages open now. */
void oauth_api_pending(struct http_req *r, void *arg);
/* POST /api/oauth/decide: the dashboard's approval or denial. */
void oauth_api_decide(struct http_req *r, void *arg);

/* oauth_cimd.c: Client ID Metadata Documents. */

/* Whether id is the URL of a Client ID Metadata Document. */
int oauth_is_cimd(const struct oauth *o, const char *id);
/* The document of url fetched (good or not) and not yet stale, or NULL. */
struct oauth_cimd *oauth_cimd_find(struct oauth *o, const char *url);
/* Starts fetching url's document for r, which waits and is handed to
 * again (with o) when it is in: oauth_approve.c's oauth_authorize_get,
 * which this file, below it, does not call itself.  -1 when it cannot. */
int oauth_fetch_start(struct oauth *o, struct http_req *r, const char *url,
    http_handler *again);
/* Makes the channel fetches come back through, in o's loop, and sets up
 * libcurl.  -1 with err. */
int oauth_cimd_open(char err[PAPO_ERR_LEN], struct oauth *o);
/* Answers the requests still waiting for a document with 503, waits for
 * their fetches to end and frees the channel.  Safe on any o. */
void oauth_cimd_close(struct oauth *o);

#endif
