#!/usr/bin/env bash
# https.sh: the official MCP TypeScript SDK's scenarios of mcp.test.mjs
# again, with every daemon serving HTTPS: a test CA and a certificate of
# it for 127.0.0.1 (PAPO_TLS_CERT, PAPO_TLS_KEY), which Node trusts
# through NODE_EXTRA_CA_CERTS only.  daemons.mjs checks that each
# daemon's URL says https.
# Usage: https.sh PATH_TO_PAPO (after `npm ci --prefix tests/clients`).
set -eu
PAPO=${1:?usage: https.sh PATH_TO_PAPO}
C=$(mktemp -d /tmp/papo-sdk-tls.XXXXXX)
trap 'rm -rf "$C"' EXIT
. "$(dirname "$0")/testca.sh"
test_ca "$C" || { echo "https.sh: openssl could not make the test CA" >&2; exit 1; }
PAPO=$PAPO PAPO_TLS_CERT=$C/cert.pem PAPO_TLS_KEY=$C/key.pem NODE_EXTRA_CA_CERTS=$C/ca.pem \
	node --test "$(dirname "$0")/mcp.test.mjs"
