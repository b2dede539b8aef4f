#!/usr/bin/env bash
# conformance_https.sh: conformance.sh's server scenarios against a daemon
# serving HTTPS: a test CA and a certificate of it for 127.0.0.1
# (PAPO_TLS_CERT, PAPO_TLS_KEY), which the suite's Node trusts through
# NODE_EXTRA_CA_CERTS only.  Fails unless the URL tested says https.
# Usage: conformance_https.sh PATH_TO_PAPO
set -u
PAPO=${1:?usage: conformance_https.sh PATH_TO_PAPO}
C=$(mktemp -d /tmp/papo-conf-tls.XXXXXX)
trap 'rm -rf "$C"' EXIT
. "$(dirname "$0")/testca.sh"
test_ca "$C" || { echo "conformance_https.sh: openssl could not make the test CA" >&2; exit 1; }
# All but dns-rebinding-protection, which cannot target HTTPS: the suite
# (0.1.16) sends a hard-coded Origin http://localhost:PORT, a different
# origin from https://localhost:PORT that papo rightly refuses (403), and
# Node checks the certificate against its forged Host (evil.example.com),
# so the request fails before papo sees it.  conformance.sh runs it over
# plain HTTP.
CONFORMANCE_SCENARIOS="server-initialize ping logging-set-level tools-list server-sse-multiple-streams" \
PAPO_TLS_CERT=$C/cert.pem PAPO_TLS_KEY=$C/key.pem NODE_EXTRA_CA_CERTS=$C/ca.pem \
	bash "$(dirname "$0")/conformance.sh" "$PAPO" | tee "$C/out"
rc=${PIPESTATUS[0]}
grep -q '^# papo serve (pid [0-9]*) at https://' "$C/out" || {
	echo "conformance_https.sh: the daemon did not serve https" >&2
	exit 1
}
exit "$rc"
