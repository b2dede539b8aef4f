/*
 * test_oauth_check.c: server/oauth/oauth_check.c, the checks of what an
 * OAuth client sends, linked alone (with grants.c for the token's hash,
 * and lib/): form values, scopes, redirect URIs, resources, PKCE (the
 * challenge /authorize takes, RFC 7636's own example verifier), a URI's
 * host and the person's token, each input against the exact answer.
 */
#include <stdint.h>
#include <string.h>

#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"
#include "tests/check.h"

static void
test_form(void)
{
	static const struct {
		const char *body, *name;
		size_t cap;
		int rc;
		const char *out;        /* when rc is 1 */
	} cases[] = {
		{ "a=1&b=2", "a", 16, 1, "1" },
		{ "a=1&b=2", "b", 16, 1, "2" },
		{ "a=1&b=2", "c", 16, 0, NULL },
		{ "", "a", 16, 0, NULL },
		{ "a=x+y%20z", "a", 16, 1, "x y z" },
		{ "a=%41%6a", "a", 16, 1, "Aj" },
		{ "redirect_uri=https%3A%2F%2Fx.example%2Fcb", "redirect_uri",
		  64, 1, "https://x.example/cb" },
		{ "a", "a", 16, 1, "" },               /* no '=' */
		{ "a=", "a", 16, 1, "" },
		{ "%61=1", "a", 16, 1, "1" },          /* the name decoded too */
		{ "&&a=1&", "a", 16, 1, "1" },
		{ "b=%zz&a=1", "a", 16, 1, "1" },      /* another's is not read */
		{ "ab=1", "a", 16, 0, NULL },
		{ "a=abc", "a", 4, 1, "abc" },         /* fits, with its NUL */
		{ "a=abcd", "a", 4, -1, NULL },        /* does not */
		{ "a=1&a=2", "a", 16, -1, NULL },      /* RFC 6749 3.1: once */
		{ "a=1&a=1", "a", 16, -1, NULL },
		{ "a=%4", "a", 16, -1, NULL },         /* a cut escape */
		{ "a=%", "a", 16, -1, NULL },
		{ "a=%zz", "a", 16, -1, NULL },
		{ "a=%00", "a", 16, -1, NULL },        /* a NUL */
		{ "a=x%00y", "a", 16, -1, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64] = "untouched";
		int rc = oauth_form(cases[i].body, cases[i].name, out,
		    cases[i].cap);

		if (rc != cases[i].rc)
			fprintf(stderr, "form \"%s\" %s: %d\n", cases[i].body,
			    cases[i].name, rc);
		CHECK_EQ_INT(rc, cases[i].rc);
		if (rc == 1)
			CHECK_EQ_STR(out, cases[i].out);
	}
}

static void
test_scope(void)
{
	static const struct {
		const char *scope;
		int ok;
	} cases[] = {
		{ "", 1 },
		{ "papo", 1 },
		{ "papo openid offline_access", 1 },  /* more is ignored */
		{ "a:b/c!#$%&'()*+,-./;<=>?@[]^_`{|}~", 1 },
		{ " papo", 0 },
		{ "papo ", 0 },
		{ "papo  openid", 0 },
		{ "pa\"po", 0 },
		{ "pa\\po", 0 },
		{ "papo\topenid", 0 },
		{ "papo\nopenid", 0 },
		{ "pap\x7f", 0 },
		{ "caf\xc3\xa9", 0 },                 /* not ASCII */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (oauth_scope_ok(cases[i].scope) != cases[i].ok)
			fprintf(stderr, "scope \"%s\"\n", cases[i].scope);
		CHECK_EQ_INT(oauth_scope_ok(cases[i].scope), cases[i].ok);
	}
}

static void
test_redirect(void)
{
	static char long_uri[GRANTS_URI_MAX + 2];
	static const struct {
		const char *uri;
		int ok;
	} cases[] = {
		{ "https://app.example/cb", 1 },
		{ "https://app.example:8443/cb?x=1", 1 },
		{ "http://127.0.0.1:3000/cb", 1 },     /* a native app's */
		{ "http://localhost/cb", 1 },
		{ "http://[::1]:8080/callback", 1 },
		{ "http://127.0.0.2?x", 1 },
		{ "com.example.app:/cb", 1 },          /* RFC 8252 7.1 */
		{ "com.example.app://cb", 1 },
		{ "https://", 0 },
		{ "https:///cb", 0 },
		{ "http://example.com/cb", 0 },        /* http off loopback */
		{ "http://127.0.0.1.evil.example/cb", 0 },
		{ "http://192.168.1.2/cb", 0 },
		{ "https://app.example/cb#frag", 0 },
		{ "https://app.example/c b", 0 },
		{ "https://app.example/\"cb", 0 },
		{ "https://app.example/<cb>", 0 },
		{ "https://app.example/c\\b", 0 },
		{ "https://app.example/\x7f", 0 },
		{ "cursor://anysphere.cursor-retrieval/oauth/callback", 1 },
		{ "vscode://publisher.ext/cb", 1 },
		{ "cursor:", 0 },                      /* no host, no dot */
		{ "cursor:///cb", 0 },
		{ "cursor:cb", 0 },
		{ "1app://cb", 0 },                    /* a scheme starts a-z */
		{ "javascript:alert(1)", 0 },          /* no dot in the scheme */
		{ "javascript://%0aalert(1)", 0 },     /* a browser's own */
		{ "data://text/html,x", 0 },
		{ "file://etc/passwd", 0 },
		{ "wss://app.example/cb", 0 },
		{ "data:text/html,x", 0 },
		{ "Com.Example.App:/cb", 0 },          /* schemes in lower case */
		{ ":/cb", 0 },
		{ "no-scheme", 0 },
		{ "", 0 },
		{ long_uri, 0 },                        /* over GRANTS_URI_MAX */
	};

	memcpy(long_uri, "https://a.example/", 18);
	memset(long_uri + 18, 'x', sizeof(long_uri) - 19);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (oauth_redirect_ok(cases[i].uri) != cases[i].ok)
			fprintf(stderr, "redirect \"%s\"\n", cases[i].uri);
		CHECK_EQ_INT(oauth_redirect_ok(cases[i].uri), cases[i].ok);
	}
	/* GRANTS_URI_MAX itself is allowed. */
	long_uri[GRANTS_URI_MAX] = '\0';
	CHECK_EQ_INT(oauth_redirect_ok(long_uri), 1);
}

static void
test_uri_host(void)
{
	static const struct {
		const char *uri, *host;
	} cases[] = {
		{ "https://app.example/cb", "app.example" },
		{ "https://app.example:8443?x", "app.example:8443" },
		{ "http://127.0.0.1:3000", "127.0.0.1:3000" },
		{ "com.example.app:/cb", "com.example.app:" },
		{ "https://bo@app.example/cb", "bo@app.example" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];

		oauth_uri_host(cases[i].uri, out, sizeof(out));
		CHECK_EQ_STR(out, cases[i].host);
	}
}

static struct oauth o;

static void
test_resource_token(void)
{
	static const struct {
		const char *resource;
		int ours;
	} cases[] = {
		{ "https://papo.example.net/mcp", 1 },
		{ "https://papo.example.net", 1 },     /* the path-less form */
		{ "https://papo.example.net/", 1 },
		{ "https://papo.example.net/mcp/", 0 },
		{ "https://papo.example.net/api", 0 },
		{ "https://papo.example.net.evil/mcp", 0 },
		{ "http://papo.example.net/mcp", 0 },
		{ "", 0 },
	};

	snprintf(o.issuer, sizeof(o.issuer), "https://papo.example.net");
	snprintf(o.resource, sizeof(o.resource), "%s/mcp", o.issuer);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_INT(oauth_resource_ours(&o, cases[i].resource),
		    cases[i].ours);
	grants_hash("0123456789abcdef0123456789abcdef",
	    (unsigned char *)o.token_hash);
	CHECK(oauth_token_ok(&o, "0123456789abcdef0123456789abcdef"));
	CHECK(!oauth_token_ok(&o, "0123456789abcdef0123456789abcdeF"));
	CHECK(!oauth_token_ok(&o, "0123456789abcdef0123456789abcde"));
	CHECK(!oauth_token_ok(&o, ""));
}

/* RFC 7636 appendix B's verifier and its S256 challenge. */
#define RFC_VERIFIER "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
#define RFC_CHALLENGE "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

static void
test_pkce(void)
{
	static const struct {
		const char *verifier, *challenge;
		int ok;
	} cases[] = {
		{ RFC_VERIFIER, RFC_CHALLENGE, 1 },
		{ RFC_VERIFIER, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN", 0 },
		{ RFC_VERIFIER, "", 0 },
		{ RFC_VERIFIER, RFC_CHALLENGE "=", 0 },
		{ "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK", RFC_CHALLENGE,
		  0 },                                  /* another verifier */
		{ RFC_CHALLENGE, RFC_CHALLENGE, 0 },    /* the plain method */
		{ "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjX", RFC_CHALLENGE,
		  0 },                                  /* 42 characters */
		{ "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEj+k", RFC_CHALLENGE,
		  0 },                                  /* '+' not unreserved */
		{ "", RFC_CHALLENGE, 0 },
	};
	char v[130];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_INT(oauth_pkce_ok(cases[i].verifier,
		    cases[i].challenge), cases[i].ok);
	/* 128 characters at most. */
	memset(v, 'a', 128);
	v[128] = '\0';
	CHECK_EQ_INT(oauth_pkce_ok(v, RFC_CHALLENGE), 0);      /* wrong hash */
	v[128] = 'a';
	v[129] = '\0';
	CHECK_EQ_INT(oauth_pkce_ok(v, RFC_CHALLENGE), 0);
	/* What /authorize takes. */
	CHECK_EQ_INT(oauth_pkce_challenge_ok("S256", RFC_CHALLENGE), 1);
	CHECK_EQ_INT(oauth_pkce_challenge_ok("plain", RFC_CHALLENGE), 0);
	CHECK_EQ_INT(oauth_pkce_challenge_ok("s256", RFC_CHALLENGE), 0);
	CHECK_EQ_INT(oauth_pkce_challenge_ok("", RFC_CHALLENGE), 0);
	CHECK_EQ_INT(oauth_pkce_challenge_ok("S256", RFC_CHALLENGE "A"), 0);
	CHECK_EQ_INT(oauth_pkce_challenge_ok("S256", ""), 0);
}

int
main(void)
{
	test_form();
	test_scope();
	test_redirect();
	test_uri_host();
	test_resource_token();
	test_pkce();
	return check_exit();
}
