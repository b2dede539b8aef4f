/*
 * oauth.c: the OAuth 2.1 authorization server built into the daemon, for
 * MCP clients that connect by URL (claude.ai, ChatGPT, Cursor, VS Code,
 * mcp-remote), following the MCP authorization spec: protected resource
 * metadata (RFC 9728), authorization server metadata (RFC 8414), the
 * authorization code flow with PKCE S256 only, refresh tokens that
 * rotate (a reused one revokes its grant), resource indicators (RFC
 * 8707), dynamic registration of public clients (RFC 7591), Client ID
 * Metadata Documents, and the `iss` of RFC 9207 in every redirect.
 *
 * A person approves a client on the approval page by entering the
 * daemon's PAPO_TOKEN; the page's form carries a random, single-use
 * request id, which is also what stops another site from approving in
 * the person's name.  Codes, pending approvals and fetched metadata
 * documents live in memory; clients and grants in grants.c's file.
 *
 * Runs on the main thread and must never block it: a metadata document
 * is fetched by a thread of its own (libcurl, bounded in time and size,
 * never at a private address unless a test allows it), whose result
 * comes back through a pipe in the loop while the request waits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <sodium.h>

#include "node/node.h"
#include "server/grants.h"
#include "server/http.h"
#include "server/oauth.h"

#define OAUTH_URL_MAX 600           /* bytes of the base URL and its paths */
#define OAUTH_PENDING_MAX 64        /* approval pages open at once */
#define OAUTH_PENDING_S 600         /* an approval page stays valid */
#define OAUTH_TRIES_MAX 5           /* wrong tokens on one page */
#define OAUTH_CODES_MAX 64          /* codes not yet expired */
#define OAUTH_STATE_MAX 512         /* bytes of a client's state */
#define OAUTH_VALUE_MAX 1024        /* bytes of any form value */
#define OAUTH_REGISTER_PER_MIN 10   /* registrations a minute */
#define OAUTH_CIMD_MAX 5120         /* bytes of a metadata document */
#define OAUTH_CIMD_CACHE 32         /* documents kept */
#define OAUTH_CIMD_OK_S 600         /* a fetched document is kept */
#define OAUTH_CIMD_FAIL_S 30        /* a failed fetch is remembered */
#define OAUTH_CIMD_TIMEOUT_MS 5000  /* a fetch, all told */
#define OAUTH_FETCHES_MAX 4         /* fetches at once */
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

/* One fetch of a document, on its own thread. */
struct oauth_fetch {
	struct oauth *o;                 /* the main thread's only */
	pthread_t thread;
	char url[GRANTS_URI_MAX + 1];
	int private_ok;
	int wfd;                         /* the pipe, to say it is done */
	struct http_req *req;            /* waiting for it; NULL: gone */
	char *doc;
	size_t len;
	long status;
	char err[PAPO_ERR_LEN];          /* set when the fetch failed */
	int refused;                     /* an address it may not reach */
	LIST_ENTRY(oauth_fetch) entry;
};

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
	int pipe[2];
	size_t nfetch;
	LIST_HEAD(, oauth_fetch) fetches;
};

static void oauth_authorize_get(struct http_req *, void *);
static void oauth_approved(struct http_req *, struct oauth *,
    struct oauth_pending *);

static int64_t
oauth_now(void)
{
	return (int64_t)time(NULL);
}

/* The base URL every other one derives from: PAPO_PUBLIC_URL when set,
 * else where this machine reaches the daemon.  The one place that says
 * it, so that the HTTPS side can take it over. */
static const char *
oauth_base(const struct oauth *o)
{
	return o->public_url[0] != '\0' ? o->public_url : http_url(o->http);
}

static int
oauth_loopback_host(const char *host, size_t n)
{
	static const char *const names[] = { "127.0.0.1", "localhost",
	    "[::1]" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && strncasecmp(host, names[i], n) == 0)
			return 1;
	return 0;
}

int
oauth_check(char err[PAPO_ERR_LEN], const char *bind,
    const struct oauth_config *c)
{
	const char *colon;

	if (!c->on)
		return 0;
	if (c->token == NULL || c->token[0] == '\0') {
		snprintf(err, PAPO_ERR_LEN, "PAPO_OAUTH=on needs a token "
		    "(PAPO_TOKEN or --token): it is what a person enters to "
		    "approve a client");
		return -1;
	}
	if (c->public_url != NULL && c->public_url[0] != '\0') {
		if (strncmp(c->public_url, "https://", 8) != 0 ||
		    strlen(c->public_url) >= OAUTH_URL_MAX - 64 ||
		    strlen(c->public_url) <= 8 ||
		    strpbrk(c->public_url + 8, "/?#@ ") != NULL) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_PUBLIC_URL must be "
			    "https://HOST[:PORT], with no path (it is "
			    "'%.64s')", c->public_url);
			return -1;
		}
		return 0;
	}
	colon = strrchr(bind, ':');
	if (colon == NULL || (!oauth_loopback_host(bind,
	    (size_t)(colon - bind)) && strncmp(bind, "127.", 4) != 0)) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_OAUTH=on serves tokens only "
		    "over HTTPS, or on loopback for development: %s is "
		    "neither (set PAPO_PUBLIC_URL to the https URL clients "
		    "reach, or bind 127.0.0.1)", bind);
		return -1;
	}
	return 0;
}

/* Helpers for answers. */

static void
oauth_json(struct http_req *r, int status, cJSON *o)
{
	char *text = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	if (text == NULL)
		http_reply_error(r, 500, "out of memory");
	else
		http_reply(r, status, text);
	cJSON_free(text);
	cJSON_Delete(o);
}

/* An OAuth error (RFC 6749 5.2): {"error", "error_description"}. */
static void
oauth_error(struct http_req *r, int status, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
oauth_error(struct http_req *r, int status, const char *code,
    const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN];
	cJSON *o = cJSON_CreateObject();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o != NULL && (cJSON_AddStringToObject(o, "error", code) == NULL ||
	    cJSON_AddStringToObject(o, "error_description", msg) == NULL)) {
		cJSON_Delete(o);
		o = NULL;
	}
	oauth_json(r, status, o);
}

/* Percent-encodes s into out (size n) for a query; -1 when it does not
 * fit. */
static int
oauth_urlenc(char *out, size_t n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t j = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			if (j + 1 >= n)
				return -1;
			out[j++] = (char)c;
		} else {
			if (j + 3 >= n)
				return -1;
			out[j++] = '%';
			out[j++] = hex[c >> 4];
			out[j++] = hex[c & 15];
		}
	}
	out[j] = '\0';
	return 0;
}

/* Escapes s for HTML text and attribute values. */
static void
oauth_html(char *out, size_t n, const char *s)
{
	size_t j = 0;

	for (; *s != '\0' && j + 7 < n; s++) {
		const char *rep = NULL;

		switch (*s) {
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '&': rep = "&amp;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		}
		if (rep != NULL) {
			memcpy(out + j, rep, strlen(rep));
			j += strlen(rep);
		} else if ((unsigned char)*s >= 0x20 && *s != 0x7f) {
			out[j++] = *s;
		}
	}
	out[j] = '\0';
}

static int
oauth_unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes n bytes of a form's value into out (size cap).  -1 on a bad
 * escape, a NUL, or when it does not fit. */
static int
oauth_formdec(const char *s, size_t n, char *out, size_t cap)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return -1;
			if ((hi = oauth_unhex(s[i + 1])) == -1 ||
			    (lo = oauth_unhex(s[i + 2])) == -1)
				return -1;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0 || j + 1 >= cap)
			return -1;
		out[j++] = (char)c;
	}
	out[j] = '\0';
	return 0;
}

/*
 * Finds name in a form body and decodes its value into out (size cap):
 * 1 found, 0 absent, -1 when the body is malformed, the value too long,
 * or name given twice (RFC 6749 3.1: a parameter at most once).
 */
static int
oauth_form(const char *body, const char *name, char *out, size_t cap)
{
	char key[64];
	int found = 0;

	while (*body != '\0') {
		const char *amp = strchr(body, '&');
		size_t len = amp != NULL ? (size_t)(amp - body) : strlen(body);
		const char *eq = memchr(body, '=', len);
		size_t klen = eq != NULL ? (size_t)(eq - body) : len;

		if (oauth_formdec(body, klen, key, sizeof(key)) == 0 &&
		    strcmp(key, name) == 0) {
			if (found)
				return -1;
			found = 1;
			if (eq == NULL)
				out[0] = '\0';
			else if (oauth_formdec(eq + 1, len - klen - 1, out,
			    cap) == -1)
				return -1;
		}
		body += len;
		if (*body == '&')
			body++;
	}
	return found;
}

/* A value from a form or query, or "" when absent.  -1 (and r
 * answered with error code) when malformed or given twice. */
static int
oauth_param(struct http_req *r, const char *body, const char *name,
    char *out, size_t cap)
{
	int rc = oauth_form(body, name, out, cap);

	if (rc == -1) {
		oauth_error(r, 400, "invalid_request", "the parameter %s is "
		    "malformed, too long or given twice", name);
		return -1;
	}
	if (rc == 0)
		out[0] = '\0';
	return 0;
}

/* Constant-time equality of two strings through their hashes. */
static int
oauth_same(const char *a, const char *b)
{
	unsigned char ha[GRANTS_HASH_LEN], hb[GRANTS_HASH_LEN];

	grants_hash(a, ha);
	grants_hash(b, hb);
	return sodium_memcmp(ha, hb, sizeof(ha)) == 0;
}

/* Whether the daemon's token is what the person typed. */
static int
oauth_token_ok(const struct oauth *o, const char *given)
{
	unsigned char h[GRANTS_HASH_LEN];

	grants_hash(given, h);
	return sodium_memcmp(h, o->token_hash, sizeof(h)) == 0;
}

/* Is resource (RFC 8707) papo's own?  The path-less form names the same
 * server, as the root metadata says it. */
static int
oauth_resource_ours(const struct oauth *o, const char *resource)
{
	size_t n = strlen(o->issuer);

	return strcmp(resource, o->resource) == 0 ||
	    strcmp(resource, o->issuer) == 0 ||
	    (strncmp(resource, o->issuer, n) == 0 &&
	    strcmp(resource + n, "/") == 0);
}

/*
 * Is scope well formed (RFC 6749 3.3: tokens of visible ASCII but '"'
 * and '\\', one space apart)?  What it asks for beyond papo's one scope
 * is ignored, as 3.3 allows: clients that add "openid" or
 * "offline_access" out of habit still get "papo", and are told so.
 */
static int
oauth_scope_ok(const char *scope)
{
	for (const char *p = scope; *p != '\0'; p++) {
		if (*p == ' ') {
			if (p == scope || p[1] == ' ' || p[1] == '\0')
				return 0;
		} else if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\') {
			return 0;
		}
	}
	return 1;
}

/*
 * Is uri a redirect URI papo sends codes to: https, http to a loopback
 * name (a native app's port), or a private-use scheme with a dot (RFC
 * 8252 7.1, as cursor://); no fragment, nothing unprintable.
 */
static int
oauth_redirect_ok(const char *uri)
{
	const char *p, *colon;
	size_t n;

	if (strlen(uri) > GRANTS_URI_MAX || strchr(uri, '#') != NULL)
		return 0;
	for (p = uri; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f || *p == '"' ||
		    *p == '<' || *p == '>' || *p == '\\')
			return 0;
	if (strncmp(uri, "https://", 8) == 0)
		return uri[8] != '\0' && uri[8] != '/';
	if (strncmp(uri, "http://", 7) == 0) {
		p = uri + 7;
		n = strcspn(p, ":/?");
		return oauth_loopback_host(p, n);
	}
	if ((colon = strchr(uri, ':')) == NULL || colon == uri)
		return 0;
	for (p = uri; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '-' || *p == '+'))
			return 0;
	return memchr(uri, '.', (size_t)(colon - uri)) != NULL;
}

/* The host of uri (up to its path), or its scheme for a private one. */
static void
oauth_uri_host(const char *uri, char *out, size_t n)
{
	const char *p = strstr(uri, "://");
	size_t len;

	if (p == NULL) {
		len = strcspn(uri, ":");
		snprintf(out, n, "%.*s:", (int)len, uri);
		return;
	}
	p += 3;
	len = strcspn(p, "/?");
	snprintf(out, n, "%.*s", (int)len, p);
}

/* Is id the URL of a Client ID Metadata Document: https with a path (or
 * http too when a test allows private addresses)? */
static int
oauth_is_cimd(const struct oauth *o, const char *id)
{
	const char *p;

	if (strncmp(id, "https://", 8) == 0)
		p = id + 8;
	else if (o->cimd_private && strncmp(id, "http://", 7) == 0)
		p = id + 7;
	else
		return 0;
	p = strchr(p, '/');
	return p != NULL && p[1] != '\0' && strchr(id, '#') == NULL &&
	    strchr(id, '@') == NULL && strlen(id) <= GRANTS_URI_MAX;
}

/* Metadata. */

static void
oauth_prm(struct http_req *r, struct oauth *o, const char *resource)
{
	cJSON *j = cJSON_CreateObject(), *a;

	if (j == NULL ||
	    cJSON_AddStringToObject(j, "resource", resource) == NULL ||
	    (a = cJSON_AddArrayToObject(j, "authorization_servers")) == NULL ||
	    !cJSON_AddItemToArray(a, cJSON_CreateString(o->issuer)) ||
	    (a = cJSON_AddArrayToObject(j, "scopes_supported")) == NULL ||
	    !cJSON_AddItemToArray(a, cJSON_CreateString(OAUTH_SCOPE)) ||
	    (a = cJSON_AddArrayToObject(j, "bearer_methods_supported")) ==
	    NULL || !cJSON_AddItemToArray(a, cJSON_CreateString("header")) ||
	    cJSON_AddStringToObject(j, "resource_name", "papo") == NULL) {
		cJSON_Delete(j);
		j = NULL;
	}
	oauth_json(r, 200, j);
}

static void
oauth_prm_root(struct http_req *r, void *arg)
{
	struct oauth *o = arg;

	oauth_prm(r, o, o->issuer);
}

static void
oauth_prm_mcp(struct http_req *r, void *arg)
{
	struct oauth *o = arg;

	oauth_prm(r, o, o->resource);
}

static int
oauth_add_list(cJSON *j, const char *name, const char *const *v)
{
	cJSON *a = cJSON_AddArrayToObject(j, name);

	if (a == NULL)
		return -1;
	for (; *v != NULL; v++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(*v)))
			return -1;
	return 0;
}

static void
oauth_asm(struct http_req *r, void *arg)
{
	static const char *const code[] = { "code", NULL };
	static const char *const grant[] = { "authorization_code",
	    "refresh_token", NULL };
	static const char *const s256[] = { "S256", NULL };
	static const char *const none[] = { "none", NULL };
	static const char *const scopes[] = { OAUTH_SCOPE, NULL };
	struct oauth *o = arg;
	char url[OAUTH_URL_MAX + 32];
	cJSON *j = cJSON_CreateObject();
	int bad = j == NULL;

	bad |= cJSON_AddStringToObject(j, "issuer", o->issuer) == NULL;
	snprintf(url, sizeof(url), "%s/authorize", o->issuer);
	bad |= cJSON_AddStringToObject(j, "authorization_endpoint", url) == NULL;
	snprintf(url, sizeof(url), "%s/token", o->issuer);
	bad |= cJSON_AddStringToObject(j, "token_endpoint", url) == NULL;
	snprintf(url, sizeof(url), "%s/register", o->issuer);
	bad |= cJSON_AddStringToObject(j, "registration_endpoint", url) == NULL;
	bad |= oauth_add_list(j, "response_types_supported", code) == -1;
	bad |= oauth_add_list(j, "grant_types_supported", grant) == -1;
	bad |= oauth_add_list(j, "code_challenge_methods_supported", s256) == -1;
	bad |= oauth_add_list(j, "token_endpoint_auth_methods_supported",
	    none) == -1;
	bad |= oauth_add_list(j, "scopes_supported", scopes) == -1;
	bad |= cJSON_AddTrueToObject(j,
	    "client_id_metadata_document_supported") == NULL;
	bad |= cJSON_AddTrueToObject(j,
	    "authorization_response_iss_parameter_supported") == NULL;
	if (bad) {
		cJSON_Delete(j);
		j = NULL;
	}
	oauth_json(r, 200, j);
}

/* Access tokens, for http.c. */

static int
oauth_accept(void *arg, const char *token)
{
	struct oauth *o = arg;
	unsigned char h[GRANTS_HASH_LEN];
	struct grant *gr;
	int64_t now = oauth_now();

	if (strlen(token) != GRANTS_TOKEN_LEN)
		return 0;
	grants_hash(token, h);
	if ((gr = grants_by_access(o->grants, h)) == NULL ||
	    gr->access_expires <= now || strcmp(gr->resource, o->resource) != 0)
		return 0;
	if (gr->last_used != now) {
		gr->last_used = now;
		o->dirty = 1;
	}
	return 1;
}

static const char *
oauth_challenge(void *arg)
{
	struct oauth *o = arg;

	return o->challenge;
}

/* Client ID Metadata Documents. */

/* May a document be fetched from this address?  Never from loopback,
 * private, link-local, shared (CGNAT), multicast or unspecified ones,
 * unless a test allows them: a client id must not make the daemon
 * reach into its own network. */
static int
oauth_addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);

		return !((a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127 ||
		    (a >> 20) == 0xac1 || (a >> 16) == 0xc0a8 ||
		    (a >> 16) == 0xa9fe || (a >> 22) == (100u << 2 | 1) ||
		    (a >> 28) >= 0xe);
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)sa)->sin6_addr;
		struct sockaddr_in v4;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memset(&v4, 0, sizeof(v4));
			v4.sin_family = AF_INET;
			memcpy(&v4.sin_addr, a->s6_addr + 12, 4);
			return oauth_addr_public((struct sockaddr *)&v4);
		}
		return !(IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
		    IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_MULTICAST(a) ||
		    IN6_IS_ADDR_SITELOCAL(a) || (a->s6_addr[0] & 0xfe) == 0xfc);
	}
	return 0;
}

static curl_socket_t
oauth_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct oauth_fetch *f = arg;

	(void)purpose;
	if (!f->private_ok && !oauth_addr_public(&a->addr)) {
		f->refused = 1;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static size_t
oauth_fetch_write(char *data, size_t size, size_t n, void *arg)
{
	struct oauth_fetch *f = arg;
	char *p;

	n *= size;
	if (f->len + n > OAUTH_CIMD_MAX) {
		snprintf(f->err, sizeof(f->err), "its metadata document is "
		    "larger than %d bytes", OAUTH_CIMD_MAX);
		return 0;
	}
	if ((p = realloc(f->doc, f->len + n + 1)) == NULL)
		return 0;
	f->doc = p;
	memcpy(f->doc + f->len, data, n);
	f->len += n;
	f->doc[f->len] = '\0';
	return n;
}

/* The fetch's thread: touches only f, then says so through the pipe. */
static void *
oauth_fetch_run(void *arg)
{
	struct oauth_fetch *f = arg;
	CURL *c = curl_easy_init();
	CURLcode rc;

	if (c == NULL) {
		snprintf(f->err, sizeof(f->err), "out of memory");
		goto done;
	}
	curl_easy_setopt(c, CURLOPT_URL, f->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR,
	    f->private_ok ? "https,http" : "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)OAUTH_CIMD_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE, (long)OAUTH_CIMD_MAX);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "papo");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, oauth_opensocket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, f);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, oauth_fetch_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &f->status);
	if (f->err[0] != '\0')
		;
	else if (f->refused)
		snprintf(f->err, sizeof(f->err), "its metadata document's "
		    "host resolves to a private, loopback or link-local "
		    "address, which papo does not fetch from");
	else if (rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(f->err, sizeof(f->err), "its metadata document is "
		    "larger than %d bytes", OAUTH_CIMD_MAX);
	else if (rc != CURLE_OK)
		snprintf(f->err, sizeof(f->err), "its metadata document "
		    "could not be fetched: %s", curl_easy_strerror(rc));
	else if (f->status != 200)
		snprintf(f->err, sizeof(f->err), "its metadata document "
		    "answered HTTP %ld, not 200", f->status);
	curl_easy_cleanup(c);
done:
	if (write(f->wfd, &f, sizeof(f)) != (ssize_t)sizeof(f))
		log_msg(LOG_ERROR, "oauth: cannot hand a fetch back: %s",
		    strerror(errno));
	return NULL;
}

/* The slot a document of url is cached in: its own, else the oldest. */
static struct oauth_cimd *
oauth_cimd_slot(struct oauth *o, const char *url)
{
	struct oauth_cimd *old = &o->cimd[0];

	for (size_t i = 0; i < OAUTH_CIMD_CACHE; i++) {
		if (strcmp(o->cimd[i].url, url) == 0)
			return &o->cimd[i];
		if (o->cimd[i].until < old->until)
			old = &o->cimd[i];
	}
	return old;
}

static struct oauth_cimd *
oauth_cimd_find(struct oauth *o, const char *url)
{
	int64_t now = oauth_now();

	for (size_t i = 0; i < OAUTH_CIMD_CACHE; i++)
		if (strcmp(o->cimd[i].url, url) == 0 && o->cimd[i].until > now)
			return &o->cimd[i];
	return NULL;
}

/* Checks a fetched document (RFC draft "OAuth Client ID Metadata
 * Document") into e; e->ok or e->err. */
static void
oauth_cimd_parse(struct oauth_fetch *f, struct oauth_cimd *e)
{
	struct grants_client *c = &e->client;
	const cJSON *v, *u;
	cJSON *j = NULL;

	memset(c, 0, sizeof(*c));
	e->ok = 0;
	if (f->err[0] != '\0') {
		snprintf(e->err, sizeof(e->err), "%s", f->err);
		return;
	}
	if (f->doc == NULL || (j = cJSON_ParseWithLength(f->doc, f->len)) ==
	    NULL || !cJSON_IsObject(j)) {
		snprintf(e->err, sizeof(e->err), "its metadata document is not "
		    "a JSON object");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "client_id");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, f->url) != 0) {
		snprintf(e->err, sizeof(e->err), "its metadata document's "
		    "client_id is not the URL it was fetched from");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "token_endpoint_auth_method");
	if (v != NULL && (!cJSON_IsString(v) ||
	    strcmp(v->valuestring, "none") != 0)) {
		snprintf(e->err, sizeof(e->err), "its metadata document asks "
		    "for token_endpoint_auth_method other than \"none\"; papo "
		    "takes public clients only");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "redirect_uris");
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 ||
	    cJSON_GetArraySize(v) > GRANTS_REDIRECTS_MAX) {
		snprintf(e->err, sizeof(e->err), "its metadata document needs "
		    "redirect_uris: 1 to %d URIs", GRANTS_REDIRECTS_MAX);
		goto out;
	}
	cJSON_ArrayForEach(u, v) {
		if (!cJSON_IsString(u) || !oauth_redirect_ok(u->valuestring)) {
			snprintf(e->err, sizeof(e->err), "its metadata "
			    "document has a redirect URI that is not https, "
			    "http on loopback or a private-use scheme");
			goto out;
		}
		strcpy(c->redirect[c->nredirect++], u->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "client_name");
	if (cJSON_IsString(v) && v->valuestring[0] != '\0' &&
	    strlen(v->valuestring) <= GRANTS_NAME_MAX)
		snprintf(c->name, sizeof(c->name), "%s", v->valuestring);
	else
		oauth_uri_host(f->url, c->name, sizeof(c->name));
	snprintf(c->id, sizeof(c->id), "%s", f->url);
	e->ok = 1;
out:
	cJSON_Delete(j);
}

static void
oauth_fetch_free(struct oauth *o, struct oauth_fetch *f)
{
	pthread_join(f->thread, NULL);
	LIST_REMOVE(f, entry);
	o->nfetch--;
	free(f->doc);
	free(f);
}

static void
oauth_on_fetched(void *arg, uint32_t events)
{
	struct oauth *o = arg;
	struct oauth_fetch *f;
	struct oauth_cimd *e;
	struct http_req *r;

	(void)events;
	while (read(o->pipe[0], &f, sizeof(f)) == (ssize_t)sizeof(f)) {
		e = oauth_cimd_slot(o, f->url);
		memset(e, 0, sizeof(*e));
		snprintf(e->url, sizeof(e->url), "%s", f->url);
		oauth_cimd_parse(f, e);
		e->until = oauth_now() + (e->ok ? OAUTH_CIMD_OK_S :
		    OAUTH_CIMD_FAIL_S);
		if (!e->ok)
			log_msg(LOG_INFO, "oauth: client %s: %s", f->url, e->err);
		r = f->req;
		oauth_fetch_free(o, f);
		if (r != NULL) {
			http_req_watch(r, NULL, NULL);
			oauth_authorize_get(r, o);
		}
	}
}

static void
oauth_fetch_gone(struct http_req *r, void *arg)
{
	struct oauth_fetch *f = arg;

	(void)r;
	f->req = NULL;
}

/* Starts fetching url's document for r, which waits.  -1 when it
 * cannot. */
static int
oauth_fetch_start(struct oauth *o, struct http_req *r, const char *url)
{
	struct oauth_fetch *f;

	if (o->nfetch >= OAUTH_FETCHES_MAX || (f = calloc(1, sizeof(*f))) ==
	    NULL)
		return -1;
	f->o = o;
	snprintf(f->url, sizeof(f->url), "%s", url);
	f->private_ok = o->cimd_private;
	f->wfd = o->pipe[1];
	f->req = r;
	if (pthread_create(&f->thread, NULL, oauth_fetch_run, f) != 0) {
		free(f);
		return -1;
	}
	LIST_INSERT_HEAD(&o->fetches, f, entry);
	o->nfetch++;
	http_defer(r);
	http_req_watch(r, oauth_fetch_gone, f);
	return 0;
}

/* /authorize */

/* An error page, for what cannot go back to the client: an unknown
 * client or redirect URI (RFC 6749 4.1.2.1 forbids redirecting then). */
static void
oauth_page_error(struct http_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
oauth_page_error(struct http_req *r, int status, const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN], esc[PAPO_ERR_LEN * 6], page[PAPO_ERR_LEN * 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oauth_html(esc, sizeof(esc), msg);
	snprintf(page, sizeof(page), "<!doctype html><html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><title>papo: authorization refused"
	    "</title></head><body><h1>papo cannot authorize this client</h1>"
	    "<p id=\"error\">%s</p></body></html>", esc);
	http_reply_page(r, status, page, HTTP_CSP_DATA);
}

/* Redirects r to the client with the given query (already encoded),
 * adding iss (RFC 9207) and state. */
static void
oauth_redirect(struct http_req *r, struct oauth *o, const char *redirect,
    const char *query, const char *state, int has_state)
{
	char url[HTTP_HEADER_VALUE_MAX], enc[3 * OAUTH_STATE_MAX + 1];
	char iss[3 * OAUTH_URL_MAX + 1];
	size_t n;

	oauth_urlenc(iss, sizeof(iss), o->issuer);
	n = (size_t)snprintf(url, sizeof(url), "%s%c%s&iss=%s", redirect,
	    strchr(redirect, '?') != NULL ? '&' : '?', query, iss);
	if (has_state && n < sizeof(url) &&
	    oauth_urlenc(enc, sizeof(enc), state) == 0)
		n += (size_t)snprintf(url + n, sizeof(url) - n, "&state=%s",
		    enc);
	if (n >= sizeof(url)) {
		oauth_page_error(r, 400, "the redirect back to the client "
		    "would be too long");
		return;
	}
	http_reply_header(r, "Location", url);
	http_reply(r, 302, "");
}

static void
oauth_redirect_error(struct http_req *r, struct oauth *o,
    const char *redirect, const char *state, int has_state,
    const char *code, const char *desc)
{
	char q[PAPO_ERR_LEN * 4], enc[PAPO_ERR_LEN * 3];

	oauth_urlenc(enc, sizeof(enc), desc);
	snprintf(q, sizeof(q), "error=%s&error_description=%s", code, enc);
	oauth_redirect(r, o, redirect, q, state, has_state);
}

/* The Content-Security-Policy of the approval page: nothing loads, the
 * form posts to us, and the redirect after it goes to the client (a
 * browser checks form-action on that redirect too). */
static void
oauth_page_csp(const char *redirect, char *out, size_t n)
{
	char host[GRANTS_URI_MAX + 1];
	const char *p = strstr(redirect, "://");

	if (p != NULL) {
		snprintf(host, sizeof(host), "%.*s", (int)(p + 3 - redirect +
		    strcspn(p + 3, "/?")), redirect);
	} else {
		snprintf(host, sizeof(host), "%.*s",
		    (int)strcspn(redirect, ":") + 1, redirect);
	}
	snprintf(out, n, "default-src 'none'; style-src 'unsafe-inline'; "
	    "form-action 'self' %s; frame-ancestors 'none'; base-uri 'none'",
	    host);
}

static void
oauth_page(struct http_req *r, int status, const struct oauth_pending *p,
    const char *why)
{
	char name[GRANTS_NAME_MAX * 6 + 1], id[GRANTS_URI_MAX * 6 + 1];
	char host[GRANTS_URI_MAX + 1], ehost[GRANTS_URI_MAX * 6 + 1];
	char ewhy[PAPO_ERR_LEN * 6], csp[GRANTS_URI_MAX + 200];
	char *page = NULL;
	size_t n = 8192 + sizeof(name) + sizeof(id) + sizeof(ehost) +
	    sizeof(ewhy);

	oauth_html(name, sizeof(name), p->client_name);
	oauth_html(id, sizeof(id), p->client_id);
	oauth_uri_host(p->redirect, host, sizeof(host));
	oauth_html(ehost, sizeof(ehost), host);
	oauth_html(ewhy, sizeof(ewhy), why != NULL ? why : "");
	oauth_page_csp(p->redirect, csp, sizeof(csp));
	if ((page = malloc(n)) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	snprintf(page, n, "<!doctype html><html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><meta name=\"viewport\" "
	    "content=\"width=device-width\"><title>papo: approve %s</title>"
	    "<style>body{font:16px system-ui,sans-serif;max-width:34em;"
	    "margin:2em auto;padding:0 1em}code{word-break:break-all}"
	    ".error{color:#b00020}</style></head><body>"
	    "<h1>Let <span id=\"client\">%s</span> into this papo room?</h1>"
	    "<p>The client <span id=\"client-name\">%s</span> "
	    "(<code id=\"client-id\">%s</code>) asks to act as this member: "
	    "to read the room and to send messages in its name, for 30 "
	    "days unless you revoke it (<code>papo tokens revoke ID</code>)."
	    "</p><p>After you answer, your browser goes back to "
	    "<strong id=\"redirect-host\">%s</strong>.</p>%s%s%s"
	    "<form method=\"post\" action=\"/authorize\">"
	    "<input type=\"hidden\" name=\"request\" value=\"%s\">"
	    "<p><label>This daemon's token (PAPO_TOKEN):<br>"
	    "<input type=\"password\" name=\"token\" autocomplete=\"off\" "
	    "autofocus></label></p><p>"
	    "<button type=\"submit\" name=\"decision\" value=\"approve\">"
	    "Approve</button> "
	    "<button type=\"submit\" name=\"decision\" value=\"deny\">"
	    "Deny</button></p>"
	    "<p>Or approve it on this daemon's dashboard, in a browser on "
	    "the daemon's machine, then: <button type=\"submit\" "
	    "name=\"decision\" value=\"continue\">Continue</button></p>"
	    "</form></body></html>",
	    name, name, name, id, ehost,
	    why != NULL ? "<p class=\"error\" id=\"error\">" : "", ewhy,
	    why != NULL ? "</p>" : "", p->id);
	http_reply_page(r, status, page, csp);
	free(page);
}

static struct oauth_pending *
oauth_pending_new(struct oauth *o)
{
	struct oauth_pending *p = &o->pending[0];
	int64_t now = oauth_now();

	for (size_t i = 0; i < OAUTH_PENDING_MAX; i++) {
		if (o->pending[i].expires <= now) {
			p = &o->pending[i];
			break;
		}
		if (o->pending[i].expires < p->expires)
			p = &o->pending[i];
	}
	memset(p, 0, sizeof(*p));
	return p;
}

static struct oauth_pending *
oauth_pending_find(struct oauth *o, const char *id)
{
	int64_t now = oauth_now();

	if (strlen(id) != OAUTH_RANDOM_LEN)
		return NULL;
	for (size_t i = 0; i < OAUTH_PENDING_MAX; i++)
		if (o->pending[i].expires > now &&
		    sodium_memcmp(o->pending[i].id, id, OAUTH_RANDOM_LEN) == 0)
			return &o->pending[i];
	return NULL;
}

static const char *
oauth_query(struct http_req *r, const char *name)
{
	const char *v = http_req_query(r, name);

	return v != NULL ? v : "";
}

static void
oauth_authorize_get(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	const char *client_id = oauth_query(r, "client_id");
	const char *redirect = oauth_query(r, "redirect_uri");
	const char *state = http_req_query(r, "state");
	const char *rtype = oauth_query(r, "response_type");
	const char *challenge = oauth_query(r, "code_challenge");
	const char *method = oauth_query(r, "code_challenge_method");
	const char *scope = oauth_query(r, "scope");
	const char *resource = http_req_query(r, "resource");
	const struct grants_client *c = NULL;
	struct oauth_cimd *e;
	struct oauth_pending *p;
	unsigned char h[GRANTS_HASH_LEN];
	size_t i;

	if (client_id[0] == '\0' || strlen(client_id) > GRANTS_URI_MAX) {
		oauth_page_error(r, 400, "The request names no client "
		    "(client_id).");
		return;
	}
	if (oauth_is_cimd(o, client_id)) {
		if ((e = oauth_cimd_find(o, client_id)) == NULL) {
			if (oauth_fetch_start(o, r, client_id) == -1)
				oauth_page_error(r, 503, "Too many clients are "
				    "being looked up at once; try again.");
			return;
		}
		if (!e->ok) {
			oauth_page_error(r, 400, "The client %s cannot be "
			    "used: %s.", client_id, e->err);
			return;
		}
		c = &e->client;
	} else if ((c = grants_client(o->grants, client_id)) == NULL) {
		oauth_page_error(r, 400, "The client %s is not registered "
		    "with this daemon (register it at /register, or use a "
		    "Client ID Metadata Document).", client_id);
		return;
	}
	for (i = 0; i < c->nredirect; i++)
		if (strcmp(c->redirect[i], redirect) == 0)
			break;
	if (i == c->nredirect) {
		oauth_page_error(r, 400, "The redirect URI '%s' is not one "
		    "the client %s registered.", redirect, client_id);
		return;
	}
	/* The redirect is the client's own: from here errors go back to
	 * it (RFC 6749 4.1.2.1). */
	if (state != NULL && strlen(state) > OAUTH_STATE_MAX) {
		oauth_redirect_error(r, o, redirect, NULL, 0,
		    "invalid_request", "state is longer than 512 bytes");
		return;
	}
	if (strcmp(rtype, "code") != 0) {
		oauth_redirect_error(r, o, redirect, state, state != NULL,
		    "unsupported_response_type", "papo gives codes only "
		    "(response_type=code)");
		return;
	}
	if (strcmp(method, "S256") != 0 || strlen(challenge) != 43) {
		oauth_redirect_error(r, o, redirect, state, state != NULL,
		    "invalid_request", "PKCE is required: code_challenge (43 "
		    "characters) with code_challenge_method=S256");
		return;
	}
	if (!oauth_scope_ok(scope)) {
		oauth_redirect_error(r, o, redirect, state, state != NULL,
		    "invalid_scope", "scope is malformed (RFC 6749 3.3)");
		return;
	}
	if (resource != NULL && !oauth_resource_ours(o, resource)) {
		oauth_redirect_error(r, o, redirect, state, state != NULL,
		    "invalid_target", "this server grants access to its own "
		    "MCP endpoint only");
		return;
	}
	p = oauth_pending_new(o);
	grants_token(p->id, h);
	snprintf(p->client_id, sizeof(p->client_id), "%s", c->id);
	snprintf(p->client_name, sizeof(p->client_name), "%s", c->name);
	snprintf(p->redirect, sizeof(p->redirect), "%s", redirect);
	snprintf(p->challenge, sizeof(p->challenge), "%s", challenge);
	if (state != NULL) {
		snprintf(p->state, sizeof(p->state), "%s", state);
		p->has_state = 1;
	}
	p->expires = oauth_now() + OAUTH_PENDING_S;
	oauth_page(r, 200, p, NULL);
}

static struct oauth_code *
oauth_code_slot(struct oauth *o)
{
	struct oauth_code *c = &o->codes[0];
	int64_t now = oauth_now();

	for (size_t i = 0; i < OAUTH_CODES_MAX; i++) {
		if (o->codes[i].expires <= now)
			return &o->codes[i];
		if (o->codes[i].expires < c->expires)
			c = &o->codes[i];
	}
	return c;
}

static void
oauth_authorize_post(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char id[OAUTH_VALUE_MAX + 1], token[OAUTH_VALUE_MAX + 1];
	char decision[32];
	struct oauth_pending *p;
	size_t len;
	const char *body = http_req_body(r, &len);

	if (oauth_form(body, "request", id, sizeof(id)) != 1 ||
	    (p = oauth_pending_find(o, id)) == NULL) {
		oauth_page_error(r, 400, "This approval request is unknown or "
		    "has expired: start again from the client.");
		return;
	}
	if (oauth_form(body, "decision", decision, sizeof(decision)) != 1 ||
	    (strcmp(decision, "approve") != 0 &&
	    strcmp(decision, "deny") != 0 &&
	    strcmp(decision, "continue") != 0)) {
		oauth_page(r, 400, p, "Choose Approve or Deny.");
		return;
	}
	if (strcmp(decision, "continue") == 0) {
		if (!p->approved) {
			oauth_page(r, 409, p, "This request is not approved on "
			    "the dashboard yet.");
			return;
		}
		oauth_approved(r, o, p);
		return;
	}
	if (strcmp(decision, "deny") == 0) {
		log_msg(LOG_INFO, "oauth: %s was denied", p->client_id);
		oauth_redirect_error(r, o, p->redirect, p->state, p->has_state,
		    "access_denied", "the person at papo denied access");
		p->expires = 0;
		return;
	}
	if (oauth_form(body, "token", token, sizeof(token)) != 1 ||
	    !oauth_token_ok(o, token)) {
		sodium_memzero(token, sizeof(token));
		if (++p->tries >= OAUTH_TRIES_MAX) {
			p->expires = 0;
			oauth_page_error(r, 403, "Too many wrong tokens: this "
			    "approval request is void; start again from the "
			    "client.");
			return;
		}
		oauth_page(r, 403, p, "That is not this daemon's token.");
		return;
	}
	sodium_memzero(token, sizeof(token));
	oauth_approved(r, o, p);
}

/* p is approved: a code, and the browser back to the client with it. */
static void
oauth_approved(struct http_req *r, struct oauth *o, struct oauth_pending *p)
{
	char code[GRANTS_TOKEN_LEN + 1], q[128];
	struct oauth_code *c;

	c = oauth_code_slot(o);
	memset(c, 0, sizeof(*c));
	grants_token(code, c->hash);
	snprintf(c->client_id, sizeof(c->client_id), "%s", p->client_id);
	snprintf(c->client_name, sizeof(c->client_name), "%s", p->client_name);
	snprintf(c->redirect, sizeof(c->redirect), "%s", p->redirect);
	snprintf(c->challenge, sizeof(c->challenge), "%s", p->challenge);
	c->expires = oauth_now() + o->code_s;
	snprintf(q, sizeof(q), "code=%s", code);
	sodium_memzero(code, sizeof(code));
	log_msg(LOG_INFO, "oauth: %s approved", p->client_id);
	oauth_redirect(r, o, p->redirect, q, p->state, p->has_state);
	p->expires = 0;
}

/* /token */

static int
oauth_save(struct oauth *o)
{
	char err[PAPO_ERR_LEN];

	if (grants_save(err, o->grants) == -1) {
		log_msg(LOG_ERROR, "oauth: %s", err);
		return -1;
	}
	o->dirty = 0;
	return 0;
}

/* Gives gr a new access and refresh token, and answers r with them. */
static void
oauth_issue(struct http_req *r, struct oauth *o, struct grant *gr)
{
	char access[GRANTS_TOKEN_LEN + 1], refresh[GRANTS_TOKEN_LEN + 1];
	int64_t now = oauth_now();
	cJSON *j;

	grants_token(access, gr->access);
	grants_token(refresh, gr->refresh);
	gr->access_expires = now + o->access_s;
	gr->refresh_expires = now + OAUTH_REFRESH_S;
	gr->last_used = now;
	/* The tokens go out only once they are on disk: a client must
	 * never hold a token a restart would forget. */
	if (oauth_save(o) == -1) {
		grants_remove(o->grants, gr);
		oauth_error(r, 500, "server_error", "the grant could not be "
		    "stored");
		goto out;
	}
	j = cJSON_CreateObject();
	if (j != NULL && (cJSON_AddStringToObject(j, "access_token",
	    access) == NULL ||
	    cJSON_AddStringToObject(j, "token_type", "Bearer") == NULL ||
	    cJSON_AddNumberToObject(j, "expires_in", (double)o->access_s) ==
	    NULL ||
	    cJSON_AddStringToObject(j, "refresh_token", refresh) == NULL ||
	    cJSON_AddStringToObject(j, "scope", OAUTH_SCOPE) == NULL)) {
		cJSON_Delete(j);
		j = NULL;
	}
	http_reply_header(r, "Pragma", "no-cache");
	oauth_json(r, 200, j);
out:
	sodium_memzero(access, sizeof(access));
	sodium_memzero(refresh, sizeof(refresh));
}

/* Is v a PKCE code_verifier (RFC 7636 4.1) whose S256 is challenge? */
static int
oauth_pkce_ok(const char *v, const char *challenge)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char b64[64];
	size_t n = strlen(v);

	if (n < 43 || n > 128 || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-._~") != n)
		return 0;
	crypto_hash_sha256(h, (const unsigned char *)v, n);
	sodium_bin2base64(b64, sizeof(b64), h, sizeof(h),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return oauth_same(b64, challenge);
}

static void
oauth_token_code(struct http_req *r, struct oauth *o, const char *body)
{
	char code[OAUTH_VALUE_MAX + 1], redirect[OAUTH_VALUE_MAX + 1];
	char verifier[OAUTH_VALUE_MAX + 1], client[OAUTH_VALUE_MAX + 1];
	unsigned char h[GRANTS_HASH_LEN];
	struct oauth_code *c = NULL;
	struct grant *gr;
	int64_t now = oauth_now();

	if (oauth_param(r, body, "code", code, sizeof(code)) == -1 ||
	    oauth_param(r, body, "redirect_uri", redirect,
	    sizeof(redirect)) == -1 ||
	    oauth_param(r, body, "code_verifier", verifier,
	    sizeof(verifier)) == -1 ||
	    oauth_param(r, body, "client_id", client, sizeof(client)) == -1)
		return;
	if (code[0] == '\0' || verifier[0] == '\0' || client[0] == '\0') {
		oauth_error(r, 400, "invalid_request", "an authorization_code "
		    "request needs code, code_verifier and client_id");
		return;
	}
	grants_hash(code, h);
	for (size_t i = 0; i < OAUTH_CODES_MAX; i++)
		if (sodium_memcmp(o->codes[i].hash, h, sizeof(h)) == 0 &&
		    o->codes[i].expires != 0)
			c = &o->codes[i];
	if (c == NULL) {
		oauth_error(r, 400, "invalid_grant", "the code is unknown");
		return;
	}
	if (c->used) {
		/* A replay: whoever holds this code may have stolen it, so
		 * the tokens it gave are taken back (RFC 6749 4.1.2). */
		if (c->grant[0] != '\0' &&
		    grants_revoke(o->grants, c->grant) == 0) {
			log_msg(LOG_WARN, "oauth: a code of %s was used twice; "
			    "its grant %s is revoked", c->client_id, c->grant);
			oauth_save(o);
		}
		oauth_error(r, 400, "invalid_grant", "the code was used "
		    "already; the tokens it gave are revoked");
		return;
	}
	if (c->expires <= now) {
		c->expires = 0;
		oauth_error(r, 400, "invalid_grant", "the code has expired "
		    "(codes live %lld s)", (long long)o->code_s);
		return;
	}
	c->used = 1;                    /* one try, whatever follows */
	if (strcmp(client, c->client_id) != 0) {
		oauth_error(r, 400, "invalid_grant", "the code was given to "
		    "another client");
		return;
	}
	if (strcmp(redirect, c->redirect) != 0) {
		oauth_error(r, 400, "invalid_grant", "redirect_uri is not the "
		    "one the code was sent to");
		return;
	}
	if (!oauth_pkce_ok(verifier, c->challenge)) {
		oauth_error(r, 400, "invalid_grant", "code_verifier does not "
		    "match the code_challenge");
		return;
	}
	grants_expire(o->grants, now);
	if ((gr = grants_add(o->grants, now)) == NULL) {
		oauth_error(r, 400, "invalid_grant", "this daemon holds %d "
		    "grants already: revoke some (papo tokens revoke ID)",
		    GRANTS_MAX);
		return;
	}
	snprintf(gr->client_id, sizeof(gr->client_id), "%s", c->client_id);
	snprintf(gr->client_name, sizeof(gr->client_name), "%s",
	    c->client_name);
	snprintf(gr->resource, sizeof(gr->resource), "%s", o->resource);
	snprintf(gr->scope, sizeof(gr->scope), "%s", OAUTH_SCOPE);
	snprintf(c->grant, sizeof(c->grant), "%s", gr->id);
	log_msg(LOG_INFO, "oauth: grant %s for %s", gr->id, gr->client_id);
	oauth_issue(r, o, gr);
}

static void
oauth_token_refresh(struct http_req *r, struct oauth *o, const char *body)
{
	char refresh[OAUTH_VALUE_MAX + 1], client[OAUTH_VALUE_MAX + 1];
	unsigned char h[GRANTS_HASH_LEN];
	struct grant *gr;
	int64_t now = oauth_now();

	if (oauth_param(r, body, "refresh_token", refresh,
	    sizeof(refresh)) == -1 ||
	    oauth_param(r, body, "client_id", client, sizeof(client)) == -1)
		return;
	if (refresh[0] == '\0' || client[0] == '\0') {
		oauth_error(r, 400, "invalid_request", "a refresh_token "
		    "request needs refresh_token and client_id");
		return;
	}
	grants_hash(refresh, h);
	sodium_memzero(refresh, sizeof(refresh));
	if ((gr = grants_by_refresh(o->grants, h)) == NULL) {
		if ((gr = grants_by_old(o->grants, h)) != NULL) {
			/* An old refresh token came back: one of two holders
			 * is not who it should be, and which cannot be told,
			 * so the whole grant goes (OAuth 2.1 4.3.1). */
			log_msg(LOG_WARN, "oauth: a rotated refresh token of "
			    "grant %s (%s) was used again; the grant is "
			    "revoked", gr->id, gr->client_id);
			grants_remove(o->grants, gr);
			oauth_save(o);
			oauth_error(r, 400, "invalid_grant", "this refresh "
			    "token was used already; the grant is revoked");
			return;
		}
		oauth_error(r, 400, "invalid_grant", "the refresh token is "
		    "unknown or revoked");
		return;
	}
	if (strcmp(gr->client_id, client) != 0) {
		oauth_error(r, 400, "invalid_grant", "the refresh token was "
		    "given to another client");
		return;
	}
	if (gr->refresh_expires <= now) {
		grants_remove(o->grants, gr);
		oauth_save(o);
		oauth_error(r, 400, "invalid_grant", "the refresh token has "
		    "expired");
		return;
	}
	if (strcmp(gr->resource, o->resource) != 0) {
		oauth_error(r, 400, "invalid_target", "the grant is for %s, "
		    "no longer this server's resource (%s)", gr->resource,
		    o->resource);
		return;
	}
	if (gr->nold == GRANTS_OLD_MAX) {
		memmove(gr->old[0], gr->old[1], (GRANTS_OLD_MAX - 1) *
		    GRANTS_HASH_LEN);
		gr->nold--;
	}
	memcpy(gr->old[gr->nold++], gr->refresh, GRANTS_HASH_LEN);
	oauth_issue(r, o, gr);
}

static void
oauth_token(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char type[64], resource[OAUTH_VALUE_MAX + 1], scope[OAUTH_VALUE_MAX + 1];
	size_t len;
	const char *body = http_req_body(r, &len);

	if (oauth_param(r, body, "grant_type", type, sizeof(type)) == -1 ||
	    oauth_param(r, body, "resource", resource,
	    sizeof(resource)) == -1 ||
	    oauth_param(r, body, "scope", scope, sizeof(scope)) == -1)
		return;
	/* Checked before anything is used up: a request for another
	 * resource changes nothing. */
	if (resource[0] != '\0' && !oauth_resource_ours(o, resource)) {
		oauth_error(r, 400, "invalid_target", "this server issues "
		    "tokens for its own MCP endpoint (%s) only", o->resource);
		return;
	}
	if (!oauth_scope_ok(scope)) {
		oauth_error(r, 400, "invalid_scope", "scope is malformed "
		    "(RFC 6749 3.3)");
		return;
	}
	if (strcmp(type, "authorization_code") == 0)
		oauth_token_code(r, o, body);
	else if (strcmp(type, "refresh_token") == 0)
		oauth_token_refresh(r, o, body);
	else if (type[0] == '\0')
		oauth_error(r, 400, "invalid_request", "grant_type is missing");
	else
		oauth_error(r, 400, "unsupported_grant_type", "papo takes "
		    "authorization_code and refresh_token");
}

/* /register */

/* Checks that array member name of j, when present, holds only values
 * of allowed. */
static int
oauth_subset(const cJSON *j, const char *name, const char *const *allowed)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, name), *v;
	size_t i;

	if (a == NULL)
		return 0;
	if (!cJSON_IsArray(a))
		return -1;
	cJSON_ArrayForEach(v, a) {
		if (!cJSON_IsString(v))
			return -1;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(v->valuestring, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return -1;
	}
	return 0;
}

static void
oauth_register(struct http_req *r, void *arg)
{
	static const char *const grant[] = { "authorization_code",
	    "refresh_token", NULL };
	static const char *const code[] = { "code", NULL };
	struct oauth *o = arg;
	char err[PAPO_ERR_LEN], id[OAUTH_RANDOM_LEN + 3];
	unsigned char h[GRANTS_HASH_LEN];
	struct grants_client *c, tmp;
	const cJSON *v, *u;
	cJSON *j, *ans = NULL, *a;
	size_t len;
	const char *body = http_req_body(r, &len);
	int64_t now = oauth_now();

	if ((j = http_json_parse(body, len, err)) == NULL ||
	    !cJSON_IsObject(j)) {
		oauth_error(r, 400, "invalid_client_metadata", "%s",
		    j == NULL ? err : "the body must be a JSON object");
		cJSON_Delete(j);
		return;
	}
	memset(&tmp, 0, sizeof(tmp));
	v = cJSON_GetObjectItemCaseSensitive(j, "redirect_uris");
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 ||
	    cJSON_GetArraySize(v) > GRANTS_REDIRECTS_MAX) {
		oauth_error(r, 400, "invalid_redirect_uri", "redirect_uris "
		    "must be an array of 1 to %d URIs", GRANTS_REDIRECTS_MAX);
		goto out;
	}
	cJSON_ArrayForEach(u, v) {
		if (!cJSON_IsString(u) || !oauth_redirect_ok(u->valuestring)) {
			oauth_error(r, 400, "invalid_redirect_uri", "each "
			    "redirect URI must be https, http to 127.0.0.1, "
			    "localhost or [::1], or a private-use scheme with "
			    "a dot (as com.example.app:/cb), without a "
			    "fragment, at most %d bytes", GRANTS_URI_MAX);
			goto out;
		}
		strcpy(tmp.redirect[tmp.nredirect++], u->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "token_endpoint_auth_method");
	if (v != NULL && (!cJSON_IsString(v) ||
	    strcmp(v->valuestring, "none") != 0)) {
		oauth_error(r, 400, "invalid_client_metadata", "papo registers "
		    "public clients only: token_endpoint_auth_method must be "
		    "\"none\"");
		goto out;
	}
	if (oauth_subset(j, "grant_types", grant) == -1 ||
	    oauth_subset(j, "response_types", code) == -1) {
		oauth_error(r, 400, "invalid_client_metadata", "grant_types "
		    "may hold authorization_code and refresh_token, "
		    "response_types only code");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "client_name");
	if (v != NULL && (!cJSON_IsString(v) || v->valuestring[0] == '\0' ||
	    strlen(v->valuestring) > GRANTS_NAME_MAX)) {
		oauth_error(r, 400, "invalid_client_metadata", "client_name "
		    "must be a string of 1 to %d bytes", GRANTS_NAME_MAX);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "scope");
	if (v != NULL && (!cJSON_IsString(v) ||
	    !oauth_scope_ok(v->valuestring))) {
		oauth_error(r, 400, "invalid_client_metadata", "scope must "
		    "be a string of scope tokens (RFC 6749 3.3)");
		goto out;
	}
	if (now / 60 != o->reg_window) {
		o->reg_window = now / 60;
		o->reg_count = 0;
	}
	if (o->reg_count >= OAUTH_REGISTER_PER_MIN) {
		http_reply_header(r, "Retry-After", "60");
		oauth_error(r, 429, "temporarily_unavailable", "more than %d "
		    "clients registered in this minute; try again later",
		    OAUTH_REGISTER_PER_MIN);
		goto out;
	}
	if ((c = grants_client_add(o->grants, now)) == NULL) {
		oauth_error(r, 400, "invalid_client_metadata", "this daemon "
		    "holds %d clients, each with a grant: revoke some (papo "
		    "tokens revoke ID)", GRANTS_CLIENTS_MAX);
		goto out;
	}
	o->reg_count++;
	grants_token(id + 2, h);
	memcpy(id, "c_", 2);
	id[sizeof(id) - 1] = '\0';
	tmp.created = now;
	snprintf(tmp.id, sizeof(tmp.id), "%s", id);
	v = cJSON_GetObjectItemCaseSensitive(j, "client_name");
	if (v != NULL)
		snprintf(tmp.name, sizeof(tmp.name), "%s", v->valuestring);
	else
		oauth_uri_host(tmp.redirect[0], tmp.name, sizeof(tmp.name));
	*c = tmp;
	if (oauth_save(o) == -1) {
		c->id[0] = '\0';
		oauth_error(r, 500, "server_error", "the client could not be "
		    "stored");
		goto out;
	}
	log_msg(LOG_INFO, "oauth: registered %s (%s)", c->id, c->name);
	if ((ans = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(ans, "client_id", c->id) == NULL ||
	    cJSON_AddNumberToObject(ans, "client_id_issued_at",
	    (double)now) == NULL ||
	    cJSON_AddStringToObject(ans, "client_name", c->name) == NULL ||
	    cJSON_AddStringToObject(ans, "token_endpoint_auth_method",
	    "none") == NULL ||
	    oauth_add_list(ans, "grant_types", grant) == -1 ||
	    oauth_add_list(ans, "response_types", code) == -1 ||
	    cJSON_AddStringToObject(ans, "scope", OAUTH_SCOPE) == NULL ||
	    (a = cJSON_AddArrayToObject(ans, "redirect_uris")) == NULL) {
		cJSON_Delete(ans);
		ans = NULL;
	} else {
		for (size_t i = 0; i < c->nredirect; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(
			    c->redirect[i]));
	}
	oauth_json(r, 201, ans);
out:
	cJSON_Delete(j);
}

/* /api/tokens: for the person (PAPO_TOKEN), never for OAuth clients. */

static int
oauth_owner(struct http_req *r, struct oauth *o)
{
	const char *a = http_req_header(r, "Authorization");

	if (a == NULL || strncasecmp(a, "Bearer ", 7) != 0 ||
	    !oauth_token_ok(o, a + 7 + strspn(a + 7, " "))) {
		http_reply_error(r, 403, "only the daemon's own token "
		    "(PAPO_TOKEN) lists and revokes grants");
		return 0;
	}
	return 1;
}

static void
oauth_api_list(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	cJSON *j, *a, *g;

	if (!o->on) {
		http_reply(r, 200, "{\"oauth\":false,\"grants\":[]}");
		return;
	}
	if (!oauth_owner(r, o))
		return;
	grants_expire(o->grants, oauth_now());
	if ((j = cJSON_CreateObject()) == NULL ||
	    cJSON_AddTrueToObject(j, "oauth") == NULL ||
	    (a = cJSON_AddArrayToObject(j, "grants")) == NULL)
		goto nomem;
	for (size_t i = 0; i < o->grants->ngrants; i++) {
		const struct grant *gr = &o->grants->grants[i];

		if ((g = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(a, g) ||
		    cJSON_AddStringToObject(g, "id", gr->id) == NULL ||
		    cJSON_AddStringToObject(g, "client_id", gr->client_id) ==
		    NULL ||
		    cJSON_AddStringToObject(g, "client_name",
		    gr->client_name) == NULL ||
		    cJSON_AddNumberToObject(g, "created",
		    (double)gr->created) == NULL ||
		    cJSON_AddNumberToObject(g, "last_used",
		    (double)gr->last_used) == NULL ||
		    cJSON_AddNumberToObject(g, "expires",
		    (double)gr->refresh_expires) == NULL)
			goto nomem;
	}
	oauth_json(r, 200, j);
	return;
nomem:
	cJSON_Delete(j);
	http_reply_error(r, 500, "out of memory");
}

static void
oauth_api_revoke(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char err[PAPO_ERR_LEN];
	const cJSON *id;
	cJSON *j;
	size_t len;
	const char *body = http_req_body(r, &len);

	if (!o->on) {
		http_reply_error(r, 404, "OAuth is off on this daemon "
		    "(PAPO_OAUTH=on turns it on): there are no grants");
		return;
	}
	if (!oauth_owner(r, o))
		return;
	if ((j = http_json_parse(body, len, err)) == NULL) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(j, "id");
	if (!cJSON_IsString(id)) {
		http_reply_error(r, 400, "the body must be {\"id\": GRANT}");
	} else if (grants_revoke(o->grants, id->valuestring) == -1) {
		http_reply_error(r, 404, "there is no grant %.32s (papo tokens "
		    "lists them)", id->valuestring);
	} else if (oauth_save(o) == -1) {
		http_reply_error(r, 500, "the revocation could not be stored");
	} else {
		log_msg(LOG_INFO, "oauth: grant %s revoked", id->valuestring);
		http_reply(r, 200, "{\"revoked\":true}");
	}
	cJSON_Delete(j);
}

/*
 * Whether r comes from a browser on this machine: a loopback Host and
 * no forwarding headers (a tunnel delivers over loopback too, but says
 * so, or names a public host).  Approving on the dashboard is for the
 * person at the daemon's machine.
 */
static int
oauth_local(struct http_req *r)
{
	const char *host = http_req_header(r, "Host");
	static const char *const fwd[] = { "Forwarded", "X-Forwarded-For",
	    "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP" };

	if (host == NULL || !oauth_loopback_host(host, host[0] == '[' ?
	    strcspn(host, "]") + 1 : strcspn(host, ":")))
		return 0;
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		if (http_req_header(r, fwd[i]) != NULL)
			return 0;
	return 1;
}

/* GET /api/oauth/pending: the approval pages open now, for the
 * dashboard. */
static void
oauth_api_pending(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char host[GRANTS_URI_MAX + 1];
	int64_t now = oauth_now();
	cJSON *j, *a, *e;

	if (!oauth_owner(r, o))
		return;
	if ((j = cJSON_CreateObject()) == NULL ||
	    cJSON_AddBoolToObject(j, "local", oauth_local(r)) == NULL ||
	    (a = cJSON_AddArrayToObject(j, "pending")) == NULL)
		goto nomem;
	for (size_t i = 0; i < OAUTH_PENDING_MAX; i++) {
		const struct oauth_pending *p = &o->pending[i];

		if (p->expires <= now)
			continue;
		oauth_uri_host(p->redirect, host, sizeof(host));
		if ((e = cJSON_CreateObject()) == NULL ||
		    !cJSON_AddItemToArray(a, e) ||
		    cJSON_AddStringToObject(e, "request", p->id) == NULL ||
		    cJSON_AddStringToObject(e, "client_name",
		    p->client_name) == NULL ||
		    cJSON_AddStringToObject(e, "client_id", p->client_id) ==
		    NULL ||
		    cJSON_AddStringToObject(e, "redirect_host", host) == NULL ||
		    cJSON_AddBoolToObject(e, "approved", p->approved) == NULL)
			goto nomem;
	}
	oauth_json(r, 200, j);
	return;
nomem:
	cJSON_Delete(j);
	http_reply_error(r, 500, "out of memory");
}

/* POST /api/oauth/decide {"request", "decision": "approve"|"deny"}: the
 * dashboard's answer; the approval page's Continue then finishes. */
static void
oauth_api_decide(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char err[PAPO_ERR_LEN];
	const cJSON *id, *d;
	struct oauth_pending *p;
	cJSON *j;
	size_t len;
	const char *body = http_req_body(r, &len);

	if (!oauth_owner(r, o))
		return;
	if (!oauth_local(r)) {
		http_reply_error(r, 403, "clients are approved on the dashboard "
		    "only from the daemon's own machine (a loopback Host, no "
		    "forwarding headers); elsewhere, on the approval page with "
		    "the token");
		return;
	}
	if ((j = http_json_parse(body, len, err)) == NULL) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(j, "request");
	d = cJSON_GetObjectItemCaseSensitive(j, "decision");
	if (!cJSON_IsString(id) || !cJSON_IsString(d) ||
	    (strcmp(d->valuestring, "approve") != 0 &&
	    strcmp(d->valuestring, "deny") != 0)) {
		http_reply_error(r, 400, "the body must be {\"request\": ID, "
		    "\"decision\": \"approve\" or \"deny\"}");
	} else if ((p = oauth_pending_find(o, id->valuestring)) == NULL) {
		http_reply_error(r, 404, "no such approval request (it expired, "
		    "or was answered)");
	} else if (strcmp(d->valuestring, "deny") == 0) {
		log_msg(LOG_INFO, "oauth: %s denied on the dashboard",
		    p->client_id);
		p->expires = 0;
		http_reply(r, 200, "{\"decision\":\"deny\"}");
	} else {
		log_msg(LOG_INFO, "oauth: %s approved on the dashboard",
		    p->client_id);
		p->approved = 1;
		http_reply(r, 200, "{\"decision\":\"approve\"}");
	}
	cJSON_Delete(j);
}

static const struct http_route oauth_table[] = {
	{ "GET", "/api/tokens", oauth_api_list, 0 },
	{ "POST", "/api/tokens/revoke", oauth_api_revoke, 0 },
	{ "GET", "/api/oauth/pending", oauth_api_pending, 0 },
	{ "POST", "/api/oauth/decide", oauth_api_decide, 0 },
	{ "GET", "/.well-known/oauth-protected-resource", oauth_prm_root, 1 },
	{ "GET", "/.well-known/oauth-protected-resource/mcp", oauth_prm_mcp,
	  1 },
	{ "GET", "/.well-known/oauth-authorization-server", oauth_asm, 1 },
	{ "GET", "/authorize", oauth_authorize_get, 1 },
	{ "POST", "/register", oauth_register, 1 },
};

/* The routes whose bodies are forms (RFC 6749's encoding, and the
 * approval page's). */
static const struct http_route oauth_form_table[] = {
	{ "POST", "/authorize", oauth_authorize_post, 1 },
	{ "POST", "/token", oauth_token, 1 },
};

const struct http_route *
oauth_routes(const struct oauth *o, size_t *n)
{
	*n = o->on ? sizeof(oauth_table) / sizeof(oauth_table[0]) : 2;
	return oauth_table;
}

const struct http_route *
oauth_form_routes(const struct oauth *o, size_t *n)
{
	*n = o->on ? sizeof(oauth_form_table) / sizeof(oauth_form_table[0]) :
	    0;
	return oauth_form_table;
}

struct oauth *
oauth_new(char err[PAPO_ERR_LEN], struct loop *l,
    const struct oauth_config *c)
{
	struct oauth *o;

	if ((o = calloc(1, sizeof(*o))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	o->loop = l;
	o->pipe[0] = o->pipe[1] = -1;
	o->on = c->on;
	LIST_INIT(&o->fetches);
	if (!o->on)
		return o;
	o->cimd_private = c->cimd_private;
	o->access_s = c->access_s != 0 ? c->access_s : OAUTH_ACCESS_S;
	o->code_s = c->code_s != 0 ? c->code_s : OAUTH_CODE_S;
	grants_hash(c->token, (unsigned char *)o->token_hash);
	if (c->public_url != NULL)
		snprintf(o->public_url, sizeof(o->public_url), "%s",
		    c->public_url);
	if ((o->grants = grants_load(err, c->home)) == NULL)
		goto fail;
	if (pipe(o->pipe) == -1 ||
	    fcntl(o->pipe[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(o->pipe[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(o->pipe[1], F_SETFD, FD_CLOEXEC) == -1 ||
	    loop_add_fd(l, o->pipe[0], EPOLLIN, oauth_on_fetched, o) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot make OAuth's pipe: %s",
		    strerror(errno));
		goto fail;
	}
	/* libcurl's global state is set up here, on the main thread,
	 * before any fetch's thread could race for it. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return o;
fail:
	oauth_free(o);
	return NULL;
}

void
oauth_start(struct oauth *o, struct http *h)
{
	struct http_auth_hook hook = { oauth_accept, oauth_challenge, o };
	const char *base;
	size_t n;

	o->http = h;
	if (!o->on)
		return;
	base = oauth_base(o);
	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	snprintf(o->issuer, sizeof(o->issuer), "%.*s", (int)n, base);
	snprintf(o->resource, sizeof(o->resource), "%s/mcp", o->issuer);
	snprintf(o->challenge, sizeof(o->challenge), "Bearer "
	    "resource_metadata=\"%s/.well-known/oauth-protected-resource/mcp\""
	    ", scope=\"" OAUTH_SCOPE "\"", o->issuer);
	http_set_auth_hook(h, &hook);
	log_msg(LOG_INFO, "oauth: on; issuer %s, resource %s", o->issuer,
	    o->resource);
}

void
oauth_free(struct oauth *o)
{
	struct oauth_fetch *f;

	if (o == NULL)
		return;
	/* Each fetch ends within its timeout; its request is answered
	 * now, while HTTP still runs. */
	while ((f = LIST_FIRST(&o->fetches)) != NULL) {
		if (f->req != NULL) {
			http_req_watch(f->req, NULL, NULL);
			http_reply_error(f->req, 503, "papo serve is stopping");
		}
		oauth_fetch_free(o, f);
	}
	if (o->pipe[0] != -1) {
		loop_del_fd(o->loop, o->pipe[0]);
		close(o->pipe[0]);
		close(o->pipe[1]);
	}
	if (o->grants != NULL && o->dirty)
		oauth_save(o);
	grants_free(o->grants);
	sodium_memzero(o->codes, sizeof(o->codes));
	sodium_memzero(o->pending, sizeof(o->pending));
	free(o);
}
