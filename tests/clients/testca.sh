#!/usr/bin/env bash
# testca.sh: sourced by the client tests that run daemons over HTTPS
# (https.sh, oauth_https.sh, conformance_https.sh).
#
#   test_ca DIR   a test CA (DIR/ca.pem) and a certificate of it for
#                 127.0.0.1 and localhost (DIR/cert.pem, DIR/key.pem),
#                 ECDSA P-256, valid two days; Node is to trust the CA
#                 through NODE_EXTRA_CA_CERTS only.
test_ca() {
	local c=$1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj /CN=papo-test-ca -keyout "$c/ca.key" -out "$c/ca.pem" 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=papo-test \
		-keyout "$c/key.pem" -out "$c/req.csr" 2>/dev/null &&
	openssl x509 -req -in "$c/req.csr" -CA "$c/ca.pem" -CAkey "$c/ca.key" -CAcreateserial \
		-days 2 -out "$c/cert.pem" \
		-extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') 2>/dev/null
}
