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
 * This file holds the metadata, /token, /register, the access tokens
 * http.c checks, /api/tokens, the route tables, start and stop.
 * /authorize, its approval page and the dashboard's approval are
 * oauth_approve.c's; fetching Client ID Metadata Documents is
 * oauth_cimd.c's; the clock, the checks and the answers all of them use
 * are oauth_check.c's.  Calls go one way, oauth.c > oauth_approve.c >
 * oauth_cimd.c > oauth_check.c; what the four share is in oauth_int.h.
 * Codes, pending approvals and fetched metadata documents live in
 * memory; clients and grants in grants.c's file.
 *
 * Runs on the main thread and must never block it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/addr.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/grants.h"
#include "server/oauth/oauth.h"
#include "server/oauth/oauth_int.h"

#define OAUTH_REGISTER_PER_MIN 10   /* registrations a minute */

/* The base URL every other one derives from: PAPO_PUBLIC_URL when set,
 * else where this machine reaches the daemon.  The one place that says
 * it, so that the HTTPS side can take it over. */
static const char *
oauth_base(const struct oauth *o)
{
	return o->public_url[0] != '\0' ? o->public_url : http_url(o->http);
}

int
oauth_check(char err[PAPO_ERR_LEN], const char *bind,
    const struct oauth_config *c)
{
	struct addr_bind b;

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
	if (addr_bind(bind, HTTP_BIND_FLAGS, &b) != ADDR_OK || !b.loopback) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_OAUTH=on serves tokens only "
		    "over HTTPS, or on loopback for development: %s is "
		    "neither (set PAPO_PUBLIC_URL to the https URL clients "
		    "reach, or bind 127.0.0.1)", bind);
		return -1;
	}
	return 0;
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
oauth_accept(void *arg, const char *token, struct http_grant *grant)
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
	/* What the token opens ends with it (http.c keeps the time). */
	snprintf(grant->id, sizeof(grant->id), "%s", gr->id);
	grant->expires_ms = gr->access_expires * 1000;
	return 1;
}

/*
 * Drops gr, and with it whatever its tokens opened: streams and waits
 * end now, not when their tokens would have expired.
 */
static void
oauth_drop(struct oauth *o, struct grant *gr)
{
	char id[GRANTS_ID_LEN + 1];

	snprintf(id, sizeof(id), "%s", gr->id);
	grants_remove(o->grants, gr);
	http_grant_ended(o->http, id);
}

static const char *
oauth_challenge(void *arg)
{
	struct oauth *o = arg;

	return o->challenge;
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
		oauth_drop(o, gr);
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
			http_grant_ended(o->http, c->grant);
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
	snprintf(gr->redirect, sizeof(gr->redirect), "%s", c->redirect);
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
			oauth_drop(o, gr);
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
		oauth_drop(o, gr);
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

	if (json_read(err, body, len, &j) != JSON_OK ||
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
			    "redirect URI must be https, http to localhost or "
			    "a loopback address (127.0.0.1, [::1]), or a "
			    "private-use scheme with a dot (as "
			    "com.example.app:/cb), without a "
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
	if (json_read(err, body, len, &j) != JSON_OK) {
		http_reply_error(r, 400, "%s", err);
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(j, "id");
	if (!cJSON_IsString(id)) {
		http_reply_error(r, 400, "the body must be {\"id\": GRANT}");
	} else if (grants_revoke(o->grants, id->valuestring) == -1) {
		http_reply_error(r, 404, "there is no grant %.32s (papo tokens "
		    "lists them)", id->valuestring);
	} else {
		/* What the grant opened ends now, stored or not. */
		http_grant_ended(o->http, id->valuestring);
		if (oauth_save(o) == -1) {
			http_reply_error(r, 500, "the revocation could not be "
			    "stored");
		} else {
			log_msg(LOG_INFO, "oauth: grant %s revoked",
			    id->valuestring);
			http_reply(r, 200, "{\"revoked\":true}");
		}
	}
	cJSON_Delete(j);
}

/* The first three are served with OAuth off too: papo tokens says it is
 * off, and the dashboard learns from /api/oauth/pending ("oauth": false)
 * that there is nothing to approve, rather than from a 404. */
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
	*n = o->on ? sizeof(oauth_table) / sizeof(oauth_table[0]) : 3;
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
	if (oauth_cimd_open(err, o) == -1)
		goto fail;
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
	if (o == NULL)
		return;
	oauth_cimd_close(o);
	if (o->grants != NULL && o->dirty)
		oauth_save(o);
	grants_free(o->grants);
	sodium_memzero(o->codes, sizeof(o->codes));
	sodium_memzero(o->pending, sizeof(o->pending));
	free(o);
}
