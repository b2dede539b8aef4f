/*
 * quic_conn.c: a QUIC connection's life (quic.h): dialled or set up for
 * quic_accept.c, ngtcp2's settings and callbacks, its timer, the packets
 * read for it, what it writes (and a close that writes what was queued
 * first), the endpoint's list of handshakes in progress, and freeing it;
 * its accessors (version by ALPN, RTT, silence, path MTU, peer, the
 * owner's data).  Node thread; never frees a connection inside an ngtcp2
 * callback: quic_process does, at the top of an event.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "node/net/quic_int.h"

/* ngtcp2 callbacks. */

static void
cb_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	quic_random(dest, len);
}

/* The list of handshakes in progress (QUIC_HS_MAX). */

void
quic_hs_add(struct quic_conn *c)
{
	struct quic *q = c->q;

	c->in_hs = 1;
	c->hs_next = NULL;
	c->hs_prev = q->hs_tail;
	if (q->hs_tail != NULL)
		q->hs_tail->hs_next = c;
	else
		q->hs_head = c;
	q->hs_tail = c;
	q->nhs++;
}

static void
quic_hs_del(struct quic_conn *c)
{
	struct quic *q = c->q;

	if (!c->in_hs)
		return;
	if (c->hs_prev != NULL)
		c->hs_prev->hs_next = c->hs_next;
	else
		q->hs_head = c->hs_next;
	if (c->hs_next != NULL)
		c->hs_next->hs_prev = c->hs_prev;
	else
		q->hs_tail = c->hs_prev;
	c->in_hs = 0;
	c->hs_prev = c->hs_next = NULL;
	q->nhs--;
}

static int
cb_handshake_completed(ngtcp2_conn *conn, void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	c->handshake_done = 1;
	c->dirty = 1;
	return 0;
}

void
quic_callbacks(ngtcp2_callbacks *cb, int client)
{
	memset(cb, 0, sizeof(*cb));
	if (client) {
		cb->client_initial = ngtcp2_crypto_client_initial_cb;
		cb->recv_retry = ngtcp2_crypto_recv_retry_cb;
	} else
		cb->recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
	cb->recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
	cb->encrypt = ngtcp2_crypto_encrypt_cb;
	cb->decrypt = ngtcp2_crypto_decrypt_cb;
	cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
	cb->update_key = ngtcp2_crypto_update_key_cb;
	cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
	cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
	cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
	cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
	cb->rand = cb_rand;
	cb->get_new_connection_id = quic_cb_new_cid;
	cb->remove_connection_id = quic_cb_remove_cid;
	cb->handshake_completed = cb_handshake_completed;
	cb->recv_stream_data = quic_cb_recv_stream_data;
	cb->acked_stream_data_offset = quic_cb_acked;
	cb->stream_close = quic_cb_stream_close;
}

/* version: the endpoint's; one of 4 lets the peer open its bulk stream
 * too (a peer of an older version never does, and a second stream on a
 * connection of one closes it: quic_stream.c). */
void
quic_settings(ngtcp2_settings *s, ngtcp2_transport_params *p,
    unsigned version, int relayed)
{
	ngtcp2_settings_default(s);
	s->initial_ts = quic_now();
	s->handshake_timeout = QUIC_HANDSHAKE_TIMEOUT;
	ngtcp2_transport_params_default(p);
	p->initial_max_streams_uni = version >= 4 ? 2 : 1;
	p->initial_max_streams_bidi = 0;
	p->initial_max_stream_data_uni = 1024 * 1024;
	p->initial_max_data = 4 * 1024 * 1024;
	p->max_idle_timeout = QUIC_IDLE_TIMEOUT;
	/* Peers must keep bit 0x40 of every packet set (RFC 9287 lets them
	 * clear it when we allow it): papo's own datagrams are the ones
	 * without it. */
	p->grease_quic_bit = 0;
	if (relayed) {
		s->max_tx_udp_payload_size = QUIC_RELAY_PKT_MAX;
		p->max_udp_payload_size = QUIC_RELAY_PKT_MAX;
	}
}

/* Connections. */

/*
 * Called as the endpoint runs (every socket read and connection timer,
 * so at least every keep-alive while there are connections): a gap of
 * more than the idle timeout means this process did not run (SIGSTOP, a
 * laptop asleep): every peer has heard nothing from us for that long and
 * has ended our connections, whatever packets of theirs wait in the
 * socket from before; ours end too, at once, so that they are dialled
 * again rather than kept up by those stale packets until our own idle
 * timer (a connection whose peer's id has no reset token would wait it
 * out).
 */
void
quic_awake(struct quic *q)
{
	uint64_t now = quic_now();

	if (q->awake != 0 && now > q->awake + QUIC_IDLE_TIMEOUT) {
		unsigned n = 0;

		for (struct quic_conn *c = q->conns; c != NULL; c = c->next)
			if (c->handshake_done && !c->dead) {
				c->dead = 1;
				n++;
			}
		if (n > 0)
			log_msg(LOG_INFO, "this daemon did not run for %llu s: "
			    "its %u connections are gone, and are dialled again",
			    (unsigned long long)((now - q->awake) / NGTCP2_SECONDS), n);
	}
	q->awake = now;
}

static void
quic_conn_timer(void *arg)
{
	struct quic_conn *c = arg;

	quic_awake(c->q);
	if (ngtcp2_conn_handle_expiry(c->conn, quic_now()) != 0)
		c->dead = 1;      /* idle or handshake timeout: just go */
	c->dirty = 1;
	quic_process(c->q);
}

struct quic_conn *
quic_conn_new(struct quic *q, const struct sockaddr_storage *remote,
    socklen_t remotelen, int client)
{
	struct quic_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->q = q;
	c->client = client;
	c->tx_sid = c->rx_sid = c->btx_sid = c->brx_sid = -1;
	memcpy(&c->remote, remote, remotelen);
	c->remotelen = remotelen;
	quic_from_sockaddr(remote, &c->raddr);
	buf_init(&c->rx, QUIC_LEN_PREFIX + PAPO_FRAME_MAX);
	buf_init(&c->brx, QUIC_LEN_PREFIX + QUIC_BULK_FRAME_MAX);
	if ((c->timer = loop_timer_new(q->loop, quic_conn_timer, c)) == NULL) {
		free(c);
		return NULL;
	}
	c->next = q->conns;
	q->conns = c;
	return c;
}

void
quic_conn_free(struct quic_conn *c)
{
	struct quic_conn **p;

	for (p = &c->q->conns; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	quic_hs_del(c);
	for (size_t i = 0; i < c->ncid; i++)
		quic_cidmap_del(&c->q->cids, &c->cids[i], c);
	quic_sendq_free(&c->sq);
	quic_sendq_free(&c->bq);
	if (c->conn != NULL)
		ngtcp2_conn_del(c->conn);
	if (c->tls != NULL)
		gnutls_deinit(c->tls);
	buf_free(&c->rx);
	buf_free(&c->brx);
	loop_timer_free(c->timer);
	quic_sock_unref(c->sock);
	free(c);
}

/* Writes the close packet (when the connection is not already over). */
void
quic_write_close(struct quic_conn *c)
{
	ngtcp2_connection_close_error ccerr;
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	uint8_t pkt[QUIC_PKT_MAX];
	ngtcp2_ssize n;

	if (c->conn == NULL || ngtcp2_conn_is_in_closing_period(c->conn) ||
	    ngtcp2_conn_is_in_draining_period(c->conn))
		return;
	ngtcp2_connection_close_error_default(&ccerr);
	if (!c->handshake_done && c->verified == 0 && c->tls != NULL &&
	    ngtcp2_conn_get_tls_alert(c->conn) != 0)
		ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr,
		    ngtcp2_conn_get_tls_alert(c->conn), NULL, 0);
	ngtcp2_path_storage_zero(&ps);
	n = ngtcp2_conn_write_connection_close(c->conn, &ps.path, &pi, pkt,
	    sizeof(pkt), &ccerr, quic_now());
	if (n > 0)
		quic_sendto(c, &ps.path, pkt, (size_t)n);
}

/* Points vec at what of sq ngtcp2 does not have yet; how many. */
static size_t
quic_sendq_vec(const struct sendq *sq, ngtcp2_vec *vec, size_t max)
{
	size_t nvec = 0;

	for (struct chunk *ch = sq->head; ch != NULL && nvec < max;
	    ch = ch->next) {
		if (ch->off + ch->len <= sq->sent)
			continue;
		size_t skip = sq->sent > ch->off ?
		    (size_t)(sq->sent - ch->off) : 0;
		vec[nvec].base = ch->data + skip;
		vec[nvec].len = ch->len - skip;
		nvec++;
	}
	return nvec;
}

/* Opens our bulk stream when there is something for it; left for a
 * later write while the peer allows no more streams. */
static void
quic_bulk_open(struct quic_conn *c)
{
	if (c->btx_sid == -1 && c->bq.sent < c->bq.end &&
	    ngtcp2_conn_open_uni_stream(c->conn, &c->btx_sid, NULL) != 0)
		c->btx_sid = -1;
}

/*
 * Writes every packet ngtcp2 has for c, feeding it queued stream data:
 * the control stream's first, each time round, so that bulk data only
 * goes out when no frame waits (or its stream is blocked), and a frame
 * queued behind a bulk backlog waits only for what is in flight.
 * Returns -1 when the connection failed.
 */
int
quic_conn_write(struct quic_conn *c)
{
	uint8_t pkt[QUIC_PKT_MAX];
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	ngtcp2_conn_stat st;
	uint64_t now = quic_now();
	int blocked = 0, bblocked = 0;

	ngtcp2_path_storage_zero(&ps);
	quic_bulk_open(c);
	for (;;) {
		ngtcp2_vec vec[8];
		size_t nvec = 0;
		int64_t sid = -1;
		struct sendq *sq = NULL;
		ngtcp2_ssize wlen = -1, n;

		if (c->tx_sid != -1 && !blocked && c->sq.sent < c->sq.end) {
			sq = &c->sq;
			sid = c->tx_sid;
		} else if (c->btx_sid != -1 && !bblocked &&
		    c->bq.sent < c->bq.end) {
			sq = &c->bq;
			sid = c->btx_sid;
		}
		if (sq != NULL)
			nvec = quic_sendq_vec(sq, vec, 8);
		n = ngtcp2_conn_writev_stream(c->conn, &ps.path, &pi, pkt,
		    sizeof(pkt), &wlen, NGTCP2_WRITE_STREAM_FLAG_MORE, sid,
		    nvec ? vec : NULL, nvec, now);
		if (n < 0) {
			if (n == NGTCP2_ERR_WRITE_MORE) {
				sq->sent += (uint64_t)wlen;
				continue;
			}
			if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED ||
			    n == NGTCP2_ERR_STREAM_SHUT_WR) {
				if (sq == &c->sq)
					blocked = 1;
				else
					bblocked = 1;
				continue;
			}
			log_msg(LOG_DEBUG, "quic write: %s", ngtcp2_strerror((int)n));
			return -1;
		}
		if (wlen > 0)
			sq->sent += (uint64_t)wlen;
		if (n == 0)
			break;
		quic_sendto(c, &ps.path, pkt, (size_t)n);
	}
	/* ngtcp2 0.12 paces at cwnd / smoothed RTT, and until the first RTT
	 * sample that RTT is the initial 333 ms: the client's padded Initial
	 * alone then bars all but ACKs for ~27 ms, so its Handshake flight,
	 * ready as soon as the server's is read, waited for the PTO, and the
	 * server's HANDSHAKE_DONE and hello for the pacing timer.  Pacing
	 * starts with the first sample instead, as ngtcp2 itself does from
	 * 0.14 (it takes the RTT as 1 ms until then); what was sent before is
	 * charged at the measured rate.  In 0.12 this call does nothing but
	 * pace. */
	ngtcp2_conn_get_conn_stat(c->conn, &st);
	if (st.first_rtt_sample_ts != UINT64_MAX)
		ngtcp2_conn_update_pkt_tx_time(c->conn, now);
	return 0;
}

static void
quic_conn_arm(struct quic_conn *c)
{
	ngtcp2_tstamp at = ngtcp2_conn_get_expiry(c->conn);

	loop_timer_set(c->timer, at == UINT64_MAX ? 0 : (at == 0 ? 1 : at));
}

/* Finishes what events left to do: opens, writes, closes. */
void
quic_process(struct quic *q)
{
	struct quic_conn *c, *next;

	for (c = q->conns; c != NULL; c = next) {
		next = c->next;
		if (!c->dead && !c->closing && c->handshake_done && c->verified &&
		    !c->opened)
			quic_conn_open(c);
		if (!c->dead && !c->closing && c->bq_room) {
			c->bq_room = 0;
			if (q->cbs.bulk_room != NULL)
				q->cbs.bulk_room(q->arg, c);
		}
		if (!c->dead && (!c->closing || c->flush) && c->dirty) {
			c->dirty = 0;
			if (quic_conn_write(c) == -1)
				c->closing = 1;
		}
		if (c->dead || c->closing) {
			if (!c->dead)
				quic_write_close(c);
			q->cbs.closed(q->arg, c);
			/* closed() may have closed others: restart the walk,
			 * which skips finished connections because c is gone. */
			quic_conn_free(c);
			next = q->conns;
			continue;
		}
		quic_conn_arm(c);
	}
}

/* Reads one datagram of c's: a path that changed under it (a NAT that
 * moved the peer's mapping, the peer on another network) is QUIC's to
 * validate and migrate to; the owner is told, since where it sees the
 * peer has changed. */
void
quic_conn_read(struct quic_conn *c, const struct sockaddr_storage *from,
    socklen_t fromlen, const uint8_t *pkt, size_t n)
{
	struct quic *q = c->q;
	const ngtcp2_path *now;
	ngtcp2_pkt_info pi;
	ngtcp2_path path;
	int rv;

	memset(&pi, 0, sizeof(pi));
	quic_path_local(q, c->sock, &path);
	path.remote.addr = (struct sockaddr *)from;
	path.remote.addrlen = fromlen;
	path.user_data = NULL;
	rv = ngtcp2_conn_read_pkt(c->conn, &path, &pi, pkt, n, quic_now());
	if (rv != 0) {
		log_msg(LOG_DEBUG, "quic read: %s", ngtcp2_strerror(rv));
		if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING ||
		    rv == NGTCP2_ERR_DROP_CONN)
			c->dead = 1;
		else
			c->closing = 1;
	} else
		c->last_rx = quic_now();
	c->dirty = 1;
	now = ngtcp2_conn_get_path(c->conn);
	if (rv == 0 && !c->relayed && now->remote.addrlen <= sizeof(c->remote) &&
	    (now->remote.addrlen != c->remotelen ||
	    memcmp(now->remote.addr, &c->remote, c->remotelen) != 0)) {
		char was[ADDR_STRLEN], is[ADDR_STRLEN];

		addr_format(&c->raddr, was);
		memset(&c->remote, 0, sizeof(c->remote));
		memcpy(&c->remote, now->remote.addr, now->remote.addrlen);
		c->remotelen = (socklen_t)now->remote.addrlen;
		quic_from_sockaddr(&c->remote, &c->raddr);
		addr_format(&c->raddr, is);
		log_msg(LOG_INFO, "a peer's path moved from %s to %s", was, is);
		if (q->cbs.moved != NULL && c->opened)
			q->cbs.moved(q->arg, c);
	}
}

struct quic_conn *
quic_dial(struct quic *q, const struct addr *to, const uint8_t expect[PAPO_KEY_LEN],
    int relayed)
{
	return quic_dial_on(q, NULL, to, expect, relayed);
}

struct quic_conn *
quic_dial_on(struct quic *q, struct quic_sock *sock, const struct addr *to,
    const uint8_t expect[PAPO_KEY_LEN], int relayed)
{
	ngtcp2_settings settings;
	ngtcp2_transport_params params;
	ngtcp2_callbacks cb;
	ngtcp2_cid dcid, scid;
	struct sockaddr_storage ss;
	socklen_t len;
	ngtcp2_path path;
	struct quic_conn *c;

	if ((q->family == AF_INET && to->family == 6) ||
	    (relayed && q->cbs.relay_send == NULL))
		return NULL;
	len = quic_to_sockaddr(q, to, &ss);
	if ((c = quic_conn_new(q, &ss, len, 1)) == NULL)
		return NULL;
	c->relayed = relayed;
	if (!relayed && (c->sock = sock) != NULL)
		sock->refs++;
	c->has_expect = 1;
	memcpy(c->expect, expect, PAPO_KEY_LEN);
	dcid.datalen = QUIC_CIDLEN;
	scid.datalen = QUIC_CIDLEN;
	quic_random(dcid.data, dcid.datalen);
	quic_random(scid.data, scid.datalen);
	quic_settings(&settings, &params, q->version, relayed);
	quic_callbacks(&cb, 1);
	quic_path_local(q, c->sock, &path);
	path.remote.addr = (struct sockaddr *)&c->remote;
	path.remote.addrlen = c->remotelen;
	path.user_data = NULL;
	if (quic_tls_init(c) == -1 ||
	    ngtcp2_conn_client_new(&c->conn, &dcid, &scid, &path,
	    NGTCP2_PROTO_VER_V1, &cb, &settings, &params, NULL, c) != 0) {
		quic_conn_free(c);
		return NULL;
	}
	ngtcp2_conn_set_tls_native_handle(c->conn, c->tls);
	ngtcp2_conn_set_keep_alive_timeout(c->conn, QUIC_KEEPALIVE);
	quic_cid_add(c, &scid);
	c->dirty = 1;
	quic_kick(q);
	return c;
}

const uint8_t *
quic_peer(const struct quic_conn *c)
{
	return c->peer;
}

const struct addr *
quic_remote(const struct quic_conn *c)
{
	return &c->raddr;
}

unsigned
quic_version(const struct quic_conn *c)
{
	return c->opened ? c->version : quic_alpn_version(c);
}

uint64_t
quic_rtt_us(const struct quic_conn *c)
{
	ngtcp2_conn_stat st;

	if (c->conn == NULL)
		return 0;
	ngtcp2_conn_get_conn_stat(c->conn, &st);
	return st.smoothed_rtt / 1000;
}

uint64_t
quic_silent_ms(const struct quic_conn *c)
{
	uint64_t now = quic_now();

	return c->last_rx == 0 || c->last_rx > now ? 0 :
	    (now - c->last_rx) / NGTCP2_MILLISECONDS;
}

size_t
quic_mtu(const struct quic_conn *c)
{
	return c->conn != NULL && c->handshake_done ?
	    ngtcp2_conn_get_path_max_tx_udp_payload_size(c->conn) : 0;
}

int
quic_is_client(const struct quic_conn *c)
{
	return c->client;
}

int
quic_is_relayed(const struct quic_conn *c)
{
	return c->relayed;
}

void
quic_greeted(struct quic_conn *c)
{
	quic_hs_del(c);
}

void
quic_set_data(struct quic_conn *c, void *data)
{
	c->data = data;
}

void *
quic_data(const struct quic_conn *c)
{
	return c->data;
}
