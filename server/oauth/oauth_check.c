/*
 * oauth_check.c: what oauth.c, oauth_approve.c and oauth_cimd.c share,
 * below all three (oauth_int.h): the clock every expiry is counted in,
 * checks of what a client sends (form values, scopes, redirect URIs,
 * resources, hosts: pure), the person's token, and the answers OAuth's
 * routes write (JSON, RFC 6749 errors, 403 for all but the daemon's
 * token).  It calls nothing of the other three.  Main thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/addr.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"

int64_t
oauth_now(void)
{
	return (int64_t)time(NULL);
}

/* Helpers for answers. */

void
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
void
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

/*
 * Is uri a redirect URI papo sends codes to: https, http to a loopback
 * host with an optional port (a native app's: localhost, 127.0.0.0/8,
 * [::1]), or a private-use scheme with a dot (RFC 8252 7.1, as
 * cursor://); no fragment, nothing unprintable.
 */
int
oauth_redirect_ok(const char *uri)
{
	struct addr_hostport hp;
	const char *p, *colon;

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
	if ((colon = strchr(uri, ':')) == NULL || colon == uri)
		return 0;
	for (p = uri; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '-' || *p == '+'))
			return 0;
	return memchr(uri, '.', (size_t)(colon - uri)) != NULL;
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

/* Whether r carries the daemon's own token (PAPO_TOKEN): what lists
 * and revokes grants; else 0 and r answered 403. */
int
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
