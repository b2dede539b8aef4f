/*
 * fuzz_oauth.c: libFuzzer target for OAuth's checks of what a client
 * sends (server/oauth/oauth_check.c, linked with grants.c and lib/
 * alone): the input is a form body as POST /token and POST /authorize
 * receive it, and each value found in it goes through the check /token,
 * /authorize and /register put it to (redirect URI, scope, PKCE, a
 * URI's host).  Never a crash, a leak or a value that breaks what its
 * check promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "redirect_uri", "scope",
	    "code_verifier", "code_challenge", "client_id", "state" };
	char v[OAUTH_VALUE_MAX + 1], host[GRANTS_URI_MAX + 1];
	char *body;
	int rc;

	if ((body = malloc(size + 1)) == NULL)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		memset(v, 'x', sizeof(v));
		rc = oauth_form(body, names[i], v, sizeof(v));
		if (rc < -1 || rc > 1 || (rc == 1 && strlen(v) >= sizeof(v)))
			abort();
		if (rc != 1)
			continue;
		if (oauth_redirect_ok(v) && (strchr(v, '#') != NULL ||
		    strlen(v) > GRANTS_URI_MAX || strchr(v, ' ') != NULL))
			abort();
		if (oauth_scope_ok(v) && (v[0] == ' ' || strstr(v, "  ") !=
		    NULL || strchr(v, '"') != NULL))
			abort();
		oauth_uri_host(v, host, sizeof(host));
		if (strlen(host) >= sizeof(host))
			abort();
		if (oauth_pkce_ok(v, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
		    && strcmp(v, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
		    != 0)
			abort();
		if (oauth_pkce_challenge_ok("S256", v) && strlen(v) != 43)
			abort();
	}
	free(body);
	return 0;
}
