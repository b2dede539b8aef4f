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
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=papo-test-ca -keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=papo-test \
	-keyout "$C/key.pem" -out "$C/req.csr" 2>/dev/null
openssl x509 -req -in "$C/req.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
	-days 2 -out "$C/cert.pem" \
	-extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') 2>/dev/null
PAPO=$PAPO PAPO_TLS_CERT=$C/cert.pem PAPO_TLS_KEY=$C/key.pem NODE_EXTRA_CA_CERTS=$C/ca.pem \
	node --test "$(dirname "$0")/mcp.test.mjs"
