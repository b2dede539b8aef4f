#!/usr/bin/env bash
# oauth_https.sh: oauth.test.mjs again with every daemon serving HTTPS (a
# test CA and a certificate of it for 127.0.0.1, trusted by Node through
# NODE_EXTRA_CA_CERTS only), so that the official SDK's OAuth client
# provider, the by-hand flows and mcp-remote meet the issuer and the
# protected resource at https://127.0.0.1:PORT.  daemons.mjs checks that
# each daemon's URL says https.
# Usage: oauth_https.sh PATH_TO_PAPO (after `npm ci --prefix tests/clients`).
set -eu
PAPO=${1:?usage: oauth_https.sh PATH_TO_PAPO}
C=$(mktemp -d /tmp/papo-oauth-tls.XXXXXX)
trap 'rm -rf "$C"' EXIT
. "$(dirname "$0")/testca.sh"
test_ca "$C" || { echo "oauth_https.sh: openssl could not make the test CA" >&2; exit 1; }
PAPO=$PAPO PAPO_TLS_CERT=$C/cert.pem PAPO_TLS_KEY=$C/key.pem NODE_EXTRA_CA_CERTS=$C/ca.pem \
	PAPO_TEST_TLS_DIR=$C node --test "$(dirname "$0")/oauth.test.mjs"
