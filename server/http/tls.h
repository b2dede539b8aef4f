/*
 * tls.h: the certificate the HTTP side serves over HTTPS.  Either PEM
 * files given by the user (PAPO_TLS_CERT, PAPO_TLS_KEY: a chain such as
 * certbot's fullchain.pem or `tailscale cert` output, and its key), or a
 * self-signed one made once in $PAPO_HOME (PAPO_TLS=self).  tls_reload
 * reads the files again (SIGHUP) and makes the new certificate the one
 * handed to every handshake from then on; connections already open keep
 * theirs.  For the main thread only; the handshake callback runs inside
 * MHD_run, which is on the main thread too.
 */
#ifndef PAPO_TLS_H
#define PAPO_TLS_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "node/node.h"

#define TLS_SELF_CERT "tls-cert.pem"  /* in $PAPO_HOME, for PAPO_TLS=self */
#define TLS_SELF_KEY "tls-key.pem"    /* mode 0600 */
#define TLS_FILE_MAX (1024 * 1024)    /* bytes of a PEM file */
#define TLS_CHAIN_MAX 16              /* certificates of a chain */
/* "AB:CD:..." for the 32 bytes of a SHA-256 digest, and its NUL. */
#define TLS_FINGERPRINT_LEN (32 * 3)
/* "sha256//" and the base64 of a SHA-256 digest, as libcurl pins. */
#define TLS_PIN_LEN 64

struct tls;

/*
 * Loads the chain in certfile and its key in keyfile, and checks that
 * the key is the first certificate's.  NULL with err naming the file
 * and the reason.
 */
struct tls *tls_new(char err[PAPO_ERR_LEN], const char *certfile,
    const char *keyfile);
/*
 * Loads home's self-signed certificate, making it first when there is
 * none (an ECDSA P-256 key, mode 0600, and a certificate for localhost,
 * 127.0.0.1, ::1 and extra, a host name or address, when not NULL).
 */
struct tls *tls_self(char err[PAPO_ERR_LEN], const char *home,
    const char *extra);
/*
 * Reads the files again.  On success the new certificate serves every
 * handshake from now on (the old one is kept until tls_free, as open
 * sessions may still point at it); on failure nothing changes and err
 * says why.
 */
int tls_reload(char err[PAPO_ERR_LEN], struct tls *t);
void tls_free(struct tls *t);

/* The SHA-256 fingerprint of the served certificate, "AB:CD:...". */
const char *tls_fingerprint(const struct tls *t);
/* The SHA-256 of its public key, "sha256//BASE64" (libcurl's pin). */
const char *tls_pin(const struct tls *t);
/* The certificate file. */
const char *tls_certfile(const struct tls *t);

/*
 * Makes t the credentials tls_retrieve hands out.  GnuTLS's callback
 * takes no argument of ours, so this is the one pointer kept per
 * process (a process runs one daemon).  NULL clears it.
 */
void tls_use(struct tls *t);
/* The certificate callback for MHD_OPTION_HTTPS_CERT_CALLBACK. */
int tls_retrieve(gnutls_session_t s, const gnutls_datum_t *req_ca_dn,
    int nreqs, const gnutls_pk_algorithm_t *algos, int nalgos,
    gnutls_pcert_st **pcert, unsigned int *npcert, gnutls_privkey_t *key);

#endif
