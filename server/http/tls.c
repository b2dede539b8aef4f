/*
 * tls.c: the HTTP side's certificate (tls.h).  It reads PEM files into
 * GnuTLS's ready-made forms (a pcert chain and a private key), makes the
 * self-signed certificate of PAPO_TLS=self, computes the fingerprints
 * serve.json and the start-up lines give, and answers MHD's certificate
 * callback at each handshake.  Runs on the main thread; it reads files
 * only at start and on SIGHUP, never during a handshake.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <sodium.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/http/tls.h"

#define TLS_PATH_MAX 4096
#define TLS_SELF_DAYS 3650        /* a self-signed certificate lasts */

/* One loaded certificate chain and its key. */
struct tls_cred {
	gnutls_pcert_st pcert[TLS_CHAIN_MAX];
	unsigned int npcert;
	gnutls_privkey_t key;
	char fingerprint[TLS_FINGERPRINT_LEN];
	char pin[TLS_PIN_LEN];
	struct tls_cred *older;   /* replaced ones, kept until tls_free */
};

struct tls {
	char certfile[TLS_PATH_MAX];
	char keyfile[TLS_PATH_MAX];
	struct tls_cred *cred;    /* the one served now */
};

/* GnuTLS's certificate callback has no argument of ours (tls.h). */
static struct tls *tls_current;

static void
tls_cred_free(struct tls_cred *c)
{
	struct tls_cred *next;

	for (; c != NULL; c = next) {
		next = c->older;
		for (unsigned int i = 0; i < c->npcert; i++)
			gnutls_pcert_deinit(&c->pcert[i]);
		if (c->key != NULL)
			gnutls_privkey_deinit(c->key);
		free(c);
	}
}

/* Reads a whole PEM file of at most TLS_FILE_MAX bytes. */
static int
tls_read(char err[PAPO_ERR_LEN], const char *path, gnutls_datum_t *d)
{
	struct stat sb;
	ssize_t n;
	size_t off = 0;
	int fd;

	d->data = NULL;
	d->size = 0;
	memset(&sb, 0, sizeof(sb));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > TLS_FILE_MAX) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
		    !S_ISREG(sb.st_mode) ? "not a file" :
		    "over 1 MiB");
		close(fd);
		return -1;
	}
	if ((d->data = gnutls_malloc((size_t)sb.st_size + 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		close(fd);
		return -1;
	}
	while (off < (size_t)sb.st_size) {
		if ((n = read(fd, d->data + off, (size_t)sb.st_size - off)) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
			    n == 0 ? "it shrank while read" : strerror(errno));
			close(fd);
			gnutls_free(d->data);
			d->data = NULL;
			return -1;
		}
		off += (size_t)n;
	}
	close(fd);
	d->data[off] = '\0';
	d->size = (unsigned int)off;
	return 0;
}

/* The SHA-256 of the DER public key, as "sha256//BASE64". */
static int
tls_make_pin(struct tls_cred *c)
{
	gnutls_datum_t der = { NULL, 0 };
	unsigned char md[32];
	int rc = -1;

	if (gnutls_pubkey_export2(c->pcert[0].pubkey, GNUTLS_X509_FMT_DER,
	    &der) < 0)
		return -1;
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, der.data, der.size, md) == 0) {
		strcpy(c->pin, "sha256//");
		sodium_bin2base64(c->pin + 8, sizeof(c->pin) - 8, md,
		    sizeof(md), sodium_base64_VARIANT_ORIGINAL);
		rc = 0;
	}
	gnutls_free(der.data);
	return rc;
}

static int
tls_make_fingerprint(struct tls_cred *c)
{
	unsigned char md[32];

	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, c->pcert[0].cert.data,
	    c->pcert[0].cert.size, md) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(c->fingerprint + 3 * i, 4, "%02X%s", md[i],
		    i + 1 < sizeof(md) ? ":" : "");
	return 0;
}

/* Whether key is the private half of pcert's public key. */
static int
tls_key_matches(gnutls_privkey_t key, gnutls_pcert_st *pcert)
{
	gnutls_pubkey_t pub = NULL;
	gnutls_datum_t a = { NULL, 0 }, b = { NULL, 0 };
	int same = 0;

	if (gnutls_pubkey_init(&pub) == 0 &&
	    gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
	    gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &a) == 0 &&
	    gnutls_pubkey_export2(pcert->pubkey, GNUTLS_X509_FMT_DER, &b) == 0)
		same = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
	gnutls_free(a.data);
	gnutls_free(b.data);
	if (pub != NULL)
		gnutls_pubkey_deinit(pub);
	return same;
}

/* Logs a warning when the served certificate is out of its dates: it
 * is still served (a renewal may follow), but clients will refuse it. */
static void
tls_check_dates(const char *path, const gnutls_datum_t *der)
{
	gnutls_x509_crt_t crt;
	time_t now = time(NULL);

	if (gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) == 0) {
		if (gnutls_x509_crt_get_expiration_time(crt) < now)
			log_msg(LOG_WARN, "tls: the certificate in %s has "
			    "expired: clients will refuse it", path);
		else if (gnutls_x509_crt_get_activation_time(crt) > now)
			log_msg(LOG_WARN, "tls: the certificate in %s is not "
			    "valid yet: clients will refuse it", path);
	}
	gnutls_x509_crt_deinit(crt);
}

/* Loads certfile and keyfile into a new tls_cred. */
static struct tls_cred *
tls_load(char err[PAPO_ERR_LEN], const char *certfile, const char *keyfile)
{
	struct tls_cred *c = NULL;
	gnutls_datum_t cert = { NULL, 0 }, key = { NULL, 0 };
	int ret;

	if (tls_read(err, certfile, &cert) == -1 ||
	    tls_read(err, keyfile, &key) == -1)
		goto fail;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	c->npcert = TLS_CHAIN_MAX;
	if ((ret = gnutls_pcert_list_import_x509_raw(c->pcert, &c->npcert,
	    &cert, GNUTLS_X509_FMT_PEM, 0)) < 0) {
		c->npcert = 0;
		snprintf(err, PAPO_ERR_LEN, "%s is not a PEM certificate "
		    "chain (at most %d certificates): %s", certfile,
		    TLS_CHAIN_MAX, gnutls_strerror(ret));
		goto fail;
	}
	if (c->npcert == 0) {
		snprintf(err, PAPO_ERR_LEN, "%s holds no certificate", certfile);
		goto fail;
	}
	if ((ret = gnutls_privkey_init(&c->key)) < 0 ||
	    (ret = gnutls_privkey_import_x509_raw(c->key, &key,
	    GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, PAPO_ERR_LEN, "%s is not an unencrypted PEM "
		    "private key: %s", keyfile, gnutls_strerror(ret));
		goto fail;
	}
	if (!tls_key_matches(c->key, &c->pcert[0])) {
		snprintf(err, PAPO_ERR_LEN, "the key in %s is not the key of "
		    "the certificate in %s", keyfile, certfile);
		goto fail;
	}
	if (tls_make_fingerprint(c) == -1 || tls_make_pin(c) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot hash the certificate in %s",
		    certfile);
		goto fail;
	}
	tls_check_dates(certfile, &c->pcert[0].cert);
	gnutls_memset(key.data, 0, key.size);
	gnutls_free(key.data);
	gnutls_free(cert.data);
	return c;
fail:
	if (key.data != NULL)
		gnutls_memset(key.data, 0, key.size);
	gnutls_free(key.data);
	gnutls_free(cert.data);
	tls_cred_free(c);
	return NULL;
}

struct tls *
tls_new(char err[PAPO_ERR_LEN], const char *certfile, const char *keyfile)
{
	struct tls *t;

	if (strlen(certfile) >= TLS_PATH_MAX || strlen(keyfile) >= TLS_PATH_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the certificate or key path is "
		    "too long");
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	snprintf(t->certfile, sizeof(t->certfile), "%s", certfile);
	snprintf(t->keyfile, sizeof(t->keyfile), "%s", keyfile);
	if ((t->cred = tls_load(err, certfile, keyfile)) == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

/* Writes data to path through a private temporary file and a rename. */
static int
tls_write(char err[PAPO_ERR_LEN], const char *path, const gnutls_datum_t *d)
{
	char tmp[TLS_PATH_MAX + 8];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		goto fail;
	if (fchmod(fd, 0600) == -1 ||
	    write(fd, d->data, d->size) != (ssize_t)d->size ||
	    fsync(fd) == -1) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	snprintf(err, PAPO_ERR_LEN, "cannot write %s: %s", path,
	    strerror(errno));
	return -1;
}

/* Adds extra to crt's subject alternative names, as an address when it
 * parses as one, else as a DNS name. */
static int
tls_add_name(gnutls_x509_crt_t crt, const char *name)
{
	unsigned char ip[16];
	char bare[256];
	size_t n = strlen(name);

	if (n >= sizeof(bare))
		return -1;
	/* "[::1]" is an address in brackets, as Host gives it. */
	if (name[0] == '[' && n > 2 && name[n - 1] == ']') {
		memcpy(bare, name + 1, n - 2);
		bare[n - 2] = '\0';
	} else {
		memcpy(bare, name, n + 1);
	}
	if (inet_pton(AF_INET, bare, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt,
		    GNUTLS_SAN_IPADDRESS, ip, 4, GNUTLS_FSAN_APPEND);
	if (inet_pton(AF_INET6, bare, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt,
		    GNUTLS_SAN_IPADDRESS, ip, 16, GNUTLS_FSAN_APPEND);
	return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME,
	    bare, (unsigned)strlen(bare), GNUTLS_FSAN_APPEND);
}

/* Names the certificate: localhost, 127.0.0.1, ::1, and extra when it
 * is another (as addr_bind writes an address: "[::1]" is ::1). */
static int
tls_add_names(gnutls_x509_crt_t crt, const char *extra)
{
	static const char *const names[] = { "localhost", "127.0.0.1",
	    "[::1]" };
	int ret;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((ret = tls_add_name(crt, names[i])) < 0)
			return ret;
		if (extra != NULL && strcmp(extra, names[i]) == 0)
			extra = NULL;
	}
	return extra != NULL ? tls_add_name(crt, extra) : 0;
}

/*
 * Makes a self-signed certificate and key in certfile and keyfile: an
 * end-entity certificate for TLS servers, valid from an hour ago (a
 * client's clock may lag) for TLS_SELF_DAYS.
 */
static int
tls_make_self(char err[PAPO_ERR_LEN], const char *certfile,
    const char *keyfile, const char *extra)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t kpem = { NULL, 0 }, cpem = { NULL, 0 };
	unsigned char serial[16];
	time_t now = time(NULL);
	int ret, rc = -1;

	randombytes_buf(serial, sizeof(serial));
	serial[0] &= 0x7f;        /* a positive number */
	if ((ret = gnutls_x509_privkey_init(&key)) < 0 ||
	    (ret = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
	    GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0 ||
	    (ret = gnutls_x509_crt_init(&crt)) < 0 ||
	    (ret = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (ret = gnutls_x509_crt_set_serial(crt, serial,
	    sizeof(serial))) < 0 ||
	    (ret = gnutls_x509_crt_set_activation_time(crt, now - 3600)) < 0 ||
	    (ret = gnutls_x509_crt_set_expiration_time(crt,
	    now + (time_t)TLS_SELF_DAYS * 86400)) < 0 ||
	    (ret = gnutls_x509_crt_set_dn_by_oid(crt,
	    GNUTLS_OID_X520_COMMON_NAME, 0, "papo", 4)) < 0 ||
	    (ret = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (ret = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (ret = gnutls_x509_crt_set_key_usage(crt,
	    GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
	    (ret = gnutls_x509_crt_set_key_purpose_oid(crt,
	    GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (ret = tls_add_names(crt, extra)) < 0 ||
	    (ret = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256,
	    0)) < 0 ||
	    (ret = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM,
	    &kpem)) < 0 ||
	    (ret = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM,
	    &cpem)) < 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot make a self-signed "
		    "certificate: %s", gnutls_strerror(ret));
		goto out;
	}
	/* The key first: a certificate without its key would be loaded
	 * next time and refused. */
	if (tls_write(err, keyfile, &kpem) == -1 ||
	    tls_write(err, certfile, &cpem) == -1)
		goto out;
	rc = 0;
out:
	if (kpem.data != NULL)
		gnutls_memset(kpem.data, 0, kpem.size);
	gnutls_free(kpem.data);
	gnutls_free(cpem.data);
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	return rc;
}

struct tls *
tls_self(char err[PAPO_ERR_LEN], const char *home, const char *extra)
{
	char certfile[TLS_PATH_MAX], keyfile[TLS_PATH_MAX];

	if ((size_t)snprintf(certfile, sizeof(certfile), "%s/%s", home,
	    TLS_SELF_CERT) >= sizeof(certfile) ||
	    (size_t)snprintf(keyfile, sizeof(keyfile), "%s/%s", home,
	    TLS_SELF_KEY) >= sizeof(keyfile)) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return NULL;
	}
	if (access(certfile, F_OK) == -1 || access(keyfile, F_OK) == -1) {
		if (errno != ENOENT) {
			snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s",
			    certfile, strerror(errno));
			return NULL;
		}
		if (tls_make_self(err, certfile, keyfile, extra) == -1)
			return NULL;
		log_msg(LOG_INFO, "tls: made a self-signed certificate in %s",
		    certfile);
	}
	return tls_new(err, certfile, keyfile);
}

int
tls_reload(char err[PAPO_ERR_LEN], struct tls *t)
{
	struct tls_cred *c;

	if ((c = tls_load(err, t->certfile, t->keyfile)) == NULL)
		return -1;
	c->older = t->cred;
	t->cred = c;
	return 0;
}

void
tls_free(struct tls *t)
{
	if (t == NULL)
		return;
	if (tls_current == t)
		tls_current = NULL;
	tls_cred_free(t->cred);
	free(t);
}

const char *
tls_fingerprint(const struct tls *t)
{
	return t->cred->fingerprint;
}

const char *
tls_pin(const struct tls *t)
{
	return t->cred->pin;
}

const char *
tls_certfile(const struct tls *t)
{
	return t->certfile;
}

void
tls_use(struct tls *t)
{
	tls_current = t;
}

int
tls_retrieve(gnutls_session_t s, const gnutls_datum_t *req_ca_dn, int nreqs,
    const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
    unsigned int *npcert, gnutls_privkey_t *key)
{
	(void)s;
	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	if (tls_current == NULL)
		return -1;
	*pcert = tls_current->cred->pcert;
	*npcert = tls_current->cred->npcert;
	*key = tls_current->cred->key;
	return 0;
}
