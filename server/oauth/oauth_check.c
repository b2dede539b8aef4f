/*
 * oauth_check.c: the checks of what an OAuth client sends (oauth_int.h),
 * below every other OAuth file: form values, scopes, redirect URIs,
 * resources, PKCE (the challenge /authorize takes, the verifier /token
 * takes), a URI's host, the person's token.  Pure: strings in, answers
 * out; no I/O, no clock, nothing of HTTP (tests/test_oauth_check.c and
 * tests/fuzz/fuzz_oauth.c link it with grants.c and lib/ alone).  Any
 * thread.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "lib/addr.h"
#include "node/node.h"
#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"

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
int
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

/* Whether the daemon's token is what the person typed. */
int
oauth_token_ok(const struct oauth *o, const char *given)
{
	unsigned char h[GRANTS_HASH_LEN];

	grants_hash(given, h);
	return sodium_memcmp(h, o->token_hash, sizeof(h)) == 0;
}

/* Is resource (RFC 8707) papo's own?  The path-less form names the same
 * server, as the root metadata says it. */
int
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
int
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

/* Schemes a browser runs or reads itself rather than hand to an app:
 * never a redirect, whatever form they take ("javascript://%0a..." runs). */
static const char *const browser_schemes[] = {
	"javascript", "data", "vbscript", "file", "blob", "about",
	"filesystem", "view-source", "ftp", "ws", "wss",
};

/* Is the scheme uri[0..len) one an app registers (RFC 3986 characters,
 * lower case, not a browser's own)? */
static int
oauth_app_scheme(const char *uri, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((uri[i] >= 'a' && uri[i] <= 'z') ||
		    (i > 0 && ((uri[i] >= '0' && uri[i] <= '9') ||
		    uri[i] == '.' || uri[i] == '-' || uri[i] == '+'))))
			return 0;
	for (size_t i = 0; i < sizeof(browser_schemes) /
	    sizeof(browser_schemes[0]); i++)
		if (strlen(browser_schemes[i]) == len &&
		    memcmp(browser_schemes[i], uri, len) == 0)
			return 0;
	return len > 0;
}

/*
 * Is uri a redirect URI papo sends codes to: https, http to a loopback
 * host with an optional port (a native app's: localhost, 127.0.0.0/8,
 * [::1]), or an app's private-use scheme: one with a dot (RFC 8252 7.1,
 * com.example.app:/cb) or one followed by "://" and a host, as the
 * agents' editors register them (cursor://anysphere.cursor-retrieval/...);
 * no fragment, nothing unprintable.
 */
int
oauth_redirect_ok(const char *uri)
{
	struct addr_hostport hp;
	const char *p, *colon;
	size_t len;

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
		return addr_hostport(p, strcspn(p, "/?"), &hp) == ADDR_OK &&
		    addr_host_is_loopback(hp.host);
	}
	if ((colon = strchr(uri, ':')) == NULL)
		return 0;
	len = (size_t)(colon - uri);
	if (!oauth_app_scheme(uri, len))
		return 0;
	if (memchr(uri, '.', len) != NULL)
		return 1;
	return strncmp(colon, "://", 3) == 0 && colon[3] != '\0' &&
	    colon[3] != '/';
}

/* The host of uri (up to its path), or its scheme for a private one. */
void
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

/* Constant-time equality of two strings through their hashes. */
static int
oauth_same(const char *a, const char *b)
{
	unsigned char ha[GRANTS_HASH_LEN], hb[GRANTS_HASH_LEN];

	grants_hash(a, ha);
	grants_hash(b, hb);
	return sodium_memcmp(ha, hb, sizeof(ha)) == 0;
}

/* Is this the PKCE /authorize takes: S256, and a challenge of 43
 * characters (RFC 7636 4.2: a SHA-256 in base64url)? */
int
oauth_pkce_challenge_ok(const char *method, const char *challenge)
{
	return strcmp(method, "S256") == 0 && strlen(challenge) == 43;
}

/* Is v a PKCE code_verifier (RFC 7636 4.1) whose S256 is challenge? */
int
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
