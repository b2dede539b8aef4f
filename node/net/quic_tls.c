/*
 * quic_tls.c: TLS 1.3 for the endpoint (quic.h): the member's Ed25519 key
 * in a self-signed certificate, a connection's GnuTLS session with the
 * protocol versions offered by ALPN, and the check that pins the peer's
 * key (the one a dial expects, or any member's on accept, told to the
 * owner); the version the agreed ALPN names.  Node thread; pure but
 * for GnuTLS's own state.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "node/net/quic_int.h"

/* TLS 1.3 only, with the ciphers and groups ngtcp2's GnuTLS glue supports;
 * Ed25519 signatures are in NORMAL. */
static const char quic_priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
    "+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
    "%DISABLE_TLS13_COMPAT_MODE";

/* TLS: a self-signed certificate of the member key, and the check of the
 * peer's certificate against the key we expect. */

int
quic_cert(char err[PAPO_ERR_LEN], gnutls_certificate_credentials_t cred,
    const struct identity *id)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t x = { (unsigned char *)id->pk, PAPO_KEY_LEN };
	gnutls_datum_t k = { (unsigned char *)id->sk, PAPO_KEY_LEN };   /* the seed */
	static const char dn[] = "CN=papo member";
	time_t now = time(NULL);
	uint8_t serial[16];
	int rv, rc = -1;

	quic_random(serial, sizeof(serial));
	serial[0] &= 0x7f;
	if ((rv = gnutls_x509_privkey_init(&key)) < 0 ||
	    (rv = gnutls_x509_privkey_import_ecc_raw(key,
	    GNUTLS_ECC_CURVE_ED25519, &x, NULL, &k)) < 0 ||
	    (rv = gnutls_x509_crt_init(&crt)) < 0 ||
	    (rv = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (rv = gnutls_x509_crt_set_serial(crt, serial, sizeof(serial))) < 0 ||
	    (rv = gnutls_x509_crt_set_activation_time(crt, now - 86400)) < 0 ||
	    (rv = gnutls_x509_crt_set_expiration_time(crt,
	    now + 20 * 365 * 86400L)) < 0 ||
	    (rv = gnutls_x509_crt_set_dn(crt, dn, NULL)) < 0 ||
	    (rv = gnutls_x509_crt_set_issuer_dn(crt, dn, NULL)) < 0 ||
	    (rv = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (rv = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA512, 0)) < 0 ||
	    (rv = gnutls_certificate_set_x509_key(cred, &crt, 1, key)) < 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot make the TLS certificate: %s",
		    gnutls_strerror(rv));
		goto out;
	}
	rc = 0;
out:
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	return rc;
}

/* Called by GnuTLS with the peer's certificate; GnuTLS itself checks that
 * the peer holds the key (CertificateVerify).  We take the Ed25519 key out
 * and compare it with the one we dialled for. */
int
quic_verify(gnutls_session_t s)
{
	ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(s);
	struct quic_conn *c = ref->user_data;
	const gnutls_datum_t *certs;
	gnutls_x509_crt_t crt = NULL;
	gnutls_pubkey_t pk = NULL;
	gnutls_datum_t x = { NULL, 0 }, y = { NULL, 0 };
	gnutls_ecc_curve_t curve;
	unsigned int n = 0;
	int rc = GNUTLS_E_CERTIFICATE_ERROR;

	certs = gnutls_certificate_get_peers(s, &n);
	if (certs == NULL || n < 1)
		return rc;
	if (gnutls_x509_crt_init(&crt) < 0 ||
	    gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0 ||
	    gnutls_pubkey_init(&pk) < 0 ||
	    gnutls_pubkey_import_x509(pk, crt, 0) < 0 ||
	    gnutls_pubkey_export_ecc_raw2(pk, &curve, &x, &y, 0) < 0)
		goto out;
	if (curve != GNUTLS_ECC_CURVE_ED25519 || x.size != PAPO_KEY_LEN)
		goto out;
	if (c->has_expect && memcmp(x.data, c->expect, PAPO_KEY_LEN) != 0) {
		char want[PAPO_ID_LEN + 1], got[PAPO_ID_LEN + 1];

		sec_id_format(c->expect, want);
		sec_id_format(x.data, got);
		log_msg(LOG_WARN, "refused a peer presenting key %.12s… where "
		    "%.12s… was expected", got, want);
		goto out;
	}
	memcpy(c->peer, x.data, PAPO_KEY_LEN);
	c->verified = 1;
	rc = 0;
out:
	gnutls_free(x.data);
	gnutls_free(y.data);
	if (pk != NULL)
		gnutls_pubkey_deinit(pk);
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	return rc;
}

static ngtcp2_conn *
quic_get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct quic_conn *)ref->user_data)->conn;
}

int
quic_tls_init(struct quic_conn *c)
{
	static const gnutls_datum_t alpn[] = {
		{ (unsigned char *)QUIC_ALPN5, sizeof(QUIC_ALPN5) - 1 },
		{ (unsigned char *)QUIC_ALPN4, sizeof(QUIC_ALPN4) - 1 },
		{ (unsigned char *)QUIC_ALPN3, sizeof(QUIC_ALPN3) - 1 },
		{ (unsigned char *)QUIC_ALPN2, sizeof(QUIC_ALPN2) - 1 },
		{ (unsigned char *)QUIC_ALPN1, sizeof(QUIC_ALPN1) - 1 },
	};
	/* The newest we speak and every one before it: a daemon made to
	 * speak as an older one offers what that one offered. */
	size_t nalpn = sizeof(alpn) / sizeof(alpn[0]);
	unsigned noffer = c->q->version < 1 ? 1 :
	    c->q->version > nalpn ? (unsigned)nalpn : c->q->version;
	const gnutls_datum_t *offer = alpn + (nalpn - noffer);
	int rv;

	if (gnutls_init(&c->tls, c->client ? GNUTLS_CLIENT : GNUTLS_SERVER) < 0) {
		c->tls = NULL;
		return -1;
	}
	rv = c->client ? ngtcp2_crypto_gnutls_configure_client_session(c->tls) :
	    ngtcp2_crypto_gnutls_configure_server_session(c->tls);
	if (rv != 0 ||
	    gnutls_priority_set_direct(c->tls, quic_priority, NULL) < 0 ||
	    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE,
	    c->q->cred) < 0 ||
	    gnutls_alpn_set_protocols(c->tls, offer, noffer,
	    GNUTLS_ALPN_MANDATORY | GNUTLS_ALPN_SERVER_PRECEDENCE) < 0)
		return -1;
	if (!c->client)
		gnutls_certificate_server_set_request(c->tls, GNUTLS_CERT_REQUIRE);
	c->ref.get_conn = quic_get_conn;
	c->ref.user_data = c;
	gnutls_session_set_ptr(c->tls, &c->ref);
	return 0;
}

/* The version the ALPN the handshake agreed names. */
unsigned
quic_alpn_version(const struct quic_conn *c)
{
	gnutls_datum_t p;
	unsigned v;

	if (c->tls == NULL || gnutls_alpn_get_selected_protocol(c->tls, &p) < 0)
		return 1;
	if (p.size != sizeof(QUIC_ALPN1) - 1 ||
	    memcmp(p.data, QUIC_ALPN_PREFIX, sizeof(QUIC_ALPN_PREFIX) - 1) != 0)
		return 1;
	v = (unsigned)(p.data[p.size - 1] - '0');
	return v >= 1 && v <= 5 ? v : 1;
}
