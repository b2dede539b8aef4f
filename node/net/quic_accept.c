/*
 * quic_accept.c: packets that find no connection of the endpoint (quic.h):
 * a peer's Initial accepted as a new connection, or answered with a
 * stateless Retry during a handshake flood (QUIC_HS_RETRY_AT, said once
 * in the log when it starts and once when it ends), the oldest handshake
 * in progress ended beyond QUIC_HS_MAX; stateless resets sent for
 * unknown short-header packets (rate-limited) and recognized when a
 * peer sends us one.  Node thread; called by quic.c only.
 */
#include <string.h>

#include "lib/log.h"
#include "node/net/quic_int.h"

/* The handshake flood (QUIC_HS_RETRY_AT): said once when it starts. */
static void
quic_flood_on(struct quic *q)
{
	uint64_t now = quic_now();

	if (!q->flood) {
		q->flood = 1;
		q->flood_since = now;
		q->nretry = q->nevicted = q->nbadtoken = 0;
		log_msg(LOG_WARN, "under a QUIC handshake flood: %u handshakes "
		    "in progress; new peers must prove their address first "
		    "(a Retry), and at most %d handshakes are kept (members "
		    "already connected are not affected)", q->nhs, QUIC_HS_MAX);
		loop_timer_set(q->flood_timer, now + QUIC_FLOOD_QUIET);
	}
	q->flood_last = now;
}

/* And once when it is over: QUIC_FLOOD_QUIET without a Retry and fewer
 * handshakes in progress than start one. */
void
quic_flood_timer(void *arg)
{
	struct quic *q = arg;
	uint64_t now = quic_now();

	if (!q->flood)
		return;
	if (now < q->flood_last + QUIC_FLOOD_QUIET || q->nhs >= QUIC_HS_RETRY_AT) {
		loop_timer_set(q->flood_timer, (now < q->flood_last +
		    QUIC_FLOOD_QUIET ? q->flood_last : now) + QUIC_FLOOD_QUIET);
		return;
	}
	q->flood = 0;
	log_msg(LOG_INFO, "the QUIC handshake flood is over after %llu s: %llu "
	    "Initials answered with a Retry, %llu with a bad token dropped, "
	    "%llu handshakes ended unfinished",
	    (unsigned long long)((q->flood_last - q->flood_since) / NGTCP2_SECONDS),
	    (unsigned long long)q->nretry, (unsigned long long)q->nbadtoken,
	    (unsigned long long)q->nevicted);
}

/* Answers an Initial without a token with a Retry, keeping nothing: the
 * token (sealed under retry_secret) carries the id the client chose and
 * the address it was sent to, which the client's next Initial proves. */
static void
quic_retry(struct quic *q, struct quic_sock *sock, const ngtcp2_pkt_hd *hd,
    const struct sockaddr_storage *to, socklen_t tolen)
{
	uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN], pkt[QUIC_PKT_MAX];
	ngtcp2_ssize tlen, n;
	ngtcp2_cid scid;

	scid.datalen = QUIC_CIDLEN;
	if (quic_random(scid.data, scid.datalen) == -1)
		return;
	tlen = ngtcp2_crypto_generate_retry_token(token, q->retry_secret,
	    sizeof(q->retry_secret), hd->version, (const ngtcp2_sockaddr *)to,
	    tolen, &scid, &hd->dcid, quic_now());
	if (tlen < 0)
		return;
	n = ngtcp2_crypto_write_retry(pkt, sizeof(pkt), hd->version, &hd->scid,
	    &scid, &hd->dcid, token, (size_t)tlen);
	if (n < 0)
		return;
	q->nretry++;
	(void)sendto(sock != NULL ? sock->fd : q->fd, pkt, (size_t)n,
	    MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
}

/*
 * A new connection a peer opens, or NULL.  Under a handshake flood an
 * Initial without a token gets a Retry instead (not one that came
 * through our relay: only members' addresses reach us there); one with
 * a Retry token that does not verify is dropped.  Beyond QUIC_HS_MAX
 * handshakes in progress, the oldest ends.
 */
struct quic_conn *
quic_accept(struct quic *q, struct quic_sock *sock, const uint8_t *pkt,
    size_t n, const struct sockaddr_storage *from, socklen_t fromlen,
    int relayed)
{
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	ngtcp2_callbacks cb;
	ngtcp2_pkt_hd hd;
	ngtcp2_cid scid, odcid;
	ngtcp2_path path;
	struct quic_conn *c;
	int validated = 0;

	if (ngtcp2_accept(&hd, pkt, n) != 0)
		return NULL;
	if (q->nhs >= QUIC_HS_RETRY_AT)
		quic_flood_on(q);
	if (hd.token.len > 0 && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
		if (ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base,
		    hd.token.len, q->retry_secret, sizeof(q->retry_secret),
		    hd.version, (const ngtcp2_sockaddr *)from, fromlen, &hd.dcid,
		    QUIC_RETRY_TTL, quic_now()) != 0) {
			q->nbadtoken++;
			return NULL;
		}
		validated = 1;
	} else if (q->flood && !relayed) {
		quic_flood_on(q);
		quic_retry(q, sock, &hd, from, fromlen);
		return NULL;
	}
	if (q->nhs >= QUIC_HS_MAX) {
		/* Ended at once, with no close, so that the memory of one
		 * goes to the next (this is the top of a socket event, as
		 * quic_process's own). */
		struct quic_conn *old = q->hs_head;

		quic_flood_on(q);
		q->cbs.closed(q->arg, old);
		quic_conn_free(old);
		q->nevicted++;
	}
	if ((c = quic_conn_new(q, from, fromlen, 0)) == NULL)
		return NULL;
	c->relayed = relayed;
	if ((c->sock = sock) != NULL)
		sock->refs++;
	scid.datalen = QUIC_CIDLEN;
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, q->version, relayed);
	params.original_dcid = hd.dcid;
	if (validated) {
		/* The client's first id is in the token; the one it uses now
		 * is the Retry's, which the client checks we name. */
		params.original_dcid = odcid;
		params.retry_scid = hd.dcid;
		params.retry_scid_present = 1;
		settings.token = hd.token;
	}
	if (quic_reset_token(q, &scid, params.stateless_reset_token) == 0)
		params.stateless_reset_token_present = 1;
	quic_callbacks(&cb, 0);
	quic_path_local(q, sock, &path);
	path.remote.addr = (struct sockaddr *)&c->remote;
	path.remote.addrlen = c->remotelen;
	path.user_data = NULL;
	if (quic_tls_init(c) == -1 ||
	    ngtcp2_conn_server_new(&c->conn, &hd.scid, &scid, &path, hd.version,
	    &cb, &settings, &params, NULL, c) != 0) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	ngtcp2_conn_set_keep_alive_timeout(c->conn, QUIC_KEEPALIVE);
	if (quic_cid_add(c, &scid) == -1 ||
	    quic_cid_add(c, &hd.dcid) == -1) { /* the client's until it hears ours */
		quic_conn_free(c);
		return NULL;
	}
	quic_hs_add(c);
	return c;
}

/* A datagram of no connection of ours, from `from`: a stateless reset
 * is recognised by the connection to that address it ends (ngtcp2 checks
 * the token); 1 when it ended one. */
int
quic_stateless_reset_in(struct quic *q, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n)
{
	ngtcp2_pkt_info pi;
	ngtcp2_path path;

	if (n < NGTCP2_STATELESS_RESET_TOKENLEN + 5)
		return 0;
	memset(&pi, 0, sizeof(pi));
	path.remote.addr = (struct sockaddr *)from;
	path.remote.addrlen = fromlen;
	path.user_data = NULL;
	for (struct quic_conn *c = q->conns; c != NULL; c = c->next) {
		if (c->dead || c->closing || c->relayed || !c->handshake_done ||
		    c->remotelen != fromlen || memcmp(&c->remote, from, fromlen) != 0)
			continue;
		quic_path_local(q, c->sock, &path);
		if (ngtcp2_conn_read_pkt(c->conn, &path, &pi, pkt, n,
		    quic_now()) == NGTCP2_ERR_DRAINING) {
			char a[ADDR_STRLEN];

			addr_format(&c->raddr, a);
			log_msg(LOG_INFO, "the peer at %s reset our connection "
			    "(it restarted)", a);
			c->dead = 1;
			return 1;
		}
	}
	return 0;
}

/* Answers a packet of a connection we do not have with a stateless
 * reset, shorter than the packet, from the socket it came to (the peer
 * takes a reset only from the path it knows), so that the peer (our
 * previous run's, most likely) ends it at once. */
void
quic_stateless_reset_out(struct quic *q, int fd,
    const struct sockaddr_storage *to, socklen_t tolen,
    const ngtcp2_version_cid *vc, size_t n)
{
	uint8_t out[QUIC_RESET_MIN_IN], token[NGTCP2_STATELESS_RESET_TOKENLEN];
	uint8_t rnd[QUIC_RESET_MIN_IN];
	uint64_t sec = quic_now() / NGTCP2_SECONDS;
	ngtcp2_cid cid;
	ngtcp2_ssize len;
	size_t size;

	if (n <= QUIC_RESET_MIN_IN || vc->dcidlen != QUIC_CIDLEN)
		return;
	if (sec != q->reset_window) {
		q->reset_window = sec;
		q->nreset = 0;
	}
	if (q->nreset >= QUIC_RESETS_PER_S)
		return;
	q->nreset++;
	ngtcp2_cid_init(&cid, vc->dcid, vc->dcidlen);
	/* One byte shorter than what came, and never under 41 (RFC 9000,
	 * 10.3: it must look like a short header with some payload). */
	size = n - 1 < sizeof(out) ? n - 1 : sizeof(out);
	if (quic_reset_token(q, &cid, token) == -1 ||
	    quic_random(rnd, sizeof(rnd)) == -1)
		return;
	len = ngtcp2_pkt_write_stateless_reset(out, size, token, rnd,
	    size - NGTCP2_STATELESS_RESET_TOKENLEN - 1);
	if (len > 0)
		(void)sendto(fd, out, (size_t)len, MSG_DONTWAIT,
		    (const struct sockaddr *)to, tolen);
}
