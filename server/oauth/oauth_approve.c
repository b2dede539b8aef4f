/*
 * oauth_approve.c: /authorize and its approval page, for oauth.c.  GET
 * checks what the client asks for (the client, registered or named by
 * a metadata document from oauth_cimd.c, its redirect URI, PKCE, scope
 * and resource) and shows the page; POST is the person's answer, and
 * an approval gives the client a code, which oauth.c's /token takes.
 *
 * A person approves a client on the approval page by entering the
 * daemon's PAPO_TOKEN; the page's form carries a random, single-use
 * request id, which is also what stops another site from approving in
 * the person's name.  A person at the daemon's own machine may approve
 * on the dashboard instead (/api/oauth/pending, /api/oauth/decide),
 * and the page's Continue then finishes.  Pending approvals and codes
 * live in memory.  Main thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/json.h"
#include "lib/log.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"

#define OAUTH_PENDING_S 600         /* an approval page stays valid */
#define OAUTH_TRIES_MAX 5           /* wrong tokens on one page */

static void oauth_approved(struct http_req *, struct oauth *,
    struct oauth_pending *);

/* Helpers for the page and the redirects. */

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

/* /authorize */

/* An error page, for what cannot go back to the client: an unknown
 * client or redirect URI (RFC 6749 4.1.2.1 forbids redirecting then),
 * or one never approved (oauth_authorize_error). */
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

/*
 * An error in a request whose client and redirect URI are known: back
 * to the client (RFC 6749 4.1.2.1) when a person approved this client
 * with this redirect URI once (a grant holds), else papo's own page.
 * Anyone may register a client with any redirect URI, so until then a
 * redirect would make papo an open redirector to it.
 */
static void
oauth_authorize_error(struct http_req *r, struct oauth *o, int approved,
    const char *redirect, const char *state, const char *code,
    const char *desc)
{
	if (approved) {
		oauth_redirect_error(r, o, redirect, state, state != NULL,
		    code, desc);
		return;
	}
	oauth_page_error(r, 400, "The client's request is not valid (%s: "
	    "%s). papo shows this here instead of sending the browser back "
	    "to the client, since no one has approved this client with this "
	    "redirect URI yet; start again from the client.", code, desc);
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

void
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
	int approved;

	if (client_id[0] == '\0' || strlen(client_id) > GRANTS_URI_MAX) {
		oauth_page_error(r, 400, "The request names no client "
		    "(client_id).");
		return;
	}
	if (oauth_is_cimd(o, client_id)) {
		if ((e = oauth_cimd_find(o, client_id)) == NULL) {
			if (oauth_fetch_start(o, r, client_id,
			    oauth_authorize_get) == -1)
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
	 * it (RFC 6749 4.1.2.1), once a person approved it there. */
	approved = grants_approved(o->grants, c->id, redirect, oauth_now());
	if (state != NULL && strlen(state) > OAUTH_STATE_MAX) {
		oauth_authorize_error(r, o, approved, redirect, NULL,
		    "invalid_request", "state is longer than 512 bytes");
		return;
	}
	if (strcmp(rtype, "code") != 0) {
		oauth_authorize_error(r, o, approved, redirect, state,
		    "unsupported_response_type", "papo gives codes only "
		    "(response_type=code)");
		return;
	}
	if (!oauth_pkce_challenge_ok(method, challenge)) {
		oauth_authorize_error(r, o, approved, redirect, state,
		    "invalid_request", "PKCE is required: code_challenge (43 "
		    "characters) with code_challenge_method=S256");
		return;
	}
	if (!oauth_scope_ok(scope)) {
		oauth_authorize_error(r, o, approved, redirect, state,
		    "invalid_scope", "scope is malformed (RFC 6749 3.3)");
		return;
	}
	if (resource != NULL && !oauth_resource_ours(o, resource)) {
		oauth_authorize_error(r, o, approved, redirect, state,
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

/* Too many wrong tokens from this client address, on any page. */
static void
oauth_page_slow(struct http_req *r, unsigned wait_s)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", wait_s);
	http_reply_header(r, "Retry-After", v);
	oauth_page_error(r, 429, "Too many wrong tokens came from your "
	    "address: papo checks one a second from it until a minute passes "
	    "without a wrong one. Go back, wait a moment, and enter the "
	    "token again.");
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

void
oauth_authorize_post(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char id[OAUTH_VALUE_MAX + 1], token[OAUTH_VALUE_MAX + 1];
	char decision[32];
	struct oauth_pending *p;
	unsigned wait;
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
	/* Wrong tokens count per client address too, across pages: a
	 * slowed client has one checked a second (http.c's throttle). */
	if ((wait = http_auth_wait(r)) > 0) {
		oauth_page_slow(r, wait);
		return;
	}
	if (oauth_form(body, "token", token, sizeof(token)) != 1 ||
	    !oauth_token_ok(o, token)) {
		sodium_memzero(token, sizeof(token));
		if (http_auth_failed(r)) {
			if (++p->tries >= OAUTH_TRIES_MAX)
				p->expires = 0;
			oauth_page_slow(r, 1);
			return;
		}
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

/* The dashboard's approval: /api/oauth/. */

/*
 * Whether r comes from a browser on this machine: a Host and
 * http_req_remote's verdict, so that the Host names and the forwarding
 * headers a tunnel or proxy adds are one list for the whole daemon (a
 * tunnel delivers over loopback too, but says so, or names a public
 * host).  Approving on the dashboard is for the person at the daemon's
 * machine.
 */
static int
oauth_local(struct http_req *r)
{
	return http_req_header(r, "Host") != NULL && !http_req_remote(r);
}

/* GET /api/oauth/pending: the approval pages open now, for the
 * dashboard. */
void
oauth_api_pending(struct http_req *r, void *arg)
{
	struct oauth *o = arg;
	char host[GRANTS_URI_MAX + 1];
	int64_t now = oauth_now();
	cJSON *j, *a, *e;

	/* OAuth off: nothing to approve, said to whoever passed the
	 * daemon's own check (no grant token exists to tell apart). */
	if (!o->on) {
		http_reply(r, 200, "{\"oauth\":false,\"pending\":[]}");
		return;
	}
	if (!oauth_owner(r, o))
		return;
	if ((j = cJSON_CreateObject()) == NULL ||
	    cJSON_AddBoolToObject(j, "oauth", o->on) == NULL ||
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
void
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
	if (json_read(err, body, len, &j) != JSON_OK) {
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
