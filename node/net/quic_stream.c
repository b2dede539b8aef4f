/*
 * quic_stream.c: the one stream each way of a connection (quic.h): our
 * stream opened and the owner told, frames received (a u32 length and
 * the bytes) and handed to the owner whole, frames queued to send, and
 * the send queue freed as the peer acknowledges it.  Node thread.
 *
 * Stream data stays in our send queue until the peer acknowledges it,
 * because ngtcp2 retransmits from the application's buffers: the queue is
 * a list of chunks that are never moved, and a chunk is freed once every
 * byte of it is acknowledged.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "node/net/quic_int.h"

/* The length of the frame being received (rx holds at least 4 bytes). */
static uint32_t
quic_rx_len(const struct buf *rx)
{
	struct rd r;
	uint32_t v = 0;

	rd_init(&r, rx->p, rx->len);
	rd_u32(&r, &v);
	return v;
}

/* Stream data arrives in order; it is cut into frames here. */
int
quic_cb_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid,
    uint64_t offset, const uint8_t *data, size_t len, void *user, void *sdata)
{
	struct quic_conn *c = user;
	struct quic *q = c->q;

	(void)flags;
	(void)offset;
	(void)sdata;
	if (c->rx_sid == -1)
		c->rx_sid = sid;
	/* The peer's first data can come in the datagram that completes the
	 * handshake: the connection opens here then. */
	if (!c->opened && c->handshake_done && c->verified && !c->closing)
		quic_conn_open(c);
	if (sid != c->rx_sid || !c->opened || c->closing) {
		/* One stream each way, and nothing before the peer's key
		 * was checked. */
		c->closing = 1;
		return 0;
	}
	ngtcp2_conn_extend_max_stream_offset(conn, sid, len);
	ngtcp2_conn_extend_max_offset(conn, len);
	while (len > 0 && !c->closing) {
		uint32_t flen;
		size_t need, take;

		if (c->rx.len < QUIC_LEN_PREFIX) {
			take = QUIC_LEN_PREFIX - c->rx.len;
		} else {
			flen = quic_rx_len(&c->rx);
			if (flen > PAPO_FRAME_MAX) {
				log_msg(LOG_WARN, "a peer sent a frame of %u bytes, "
				    "over the limit: closing", flen);
				c->closing = 1;
				break;
			}
			need = QUIC_LEN_PREFIX + flen;
			take = need - c->rx.len;
		}
		if (take > len)
			take = len;
		if (buf_add(&c->rx, data, take) == -1) {
			c->closing = 1;
			break;
		}
		data += take;
		len -= take;
		if (c->rx.len >= QUIC_LEN_PREFIX) {
			flen = quic_rx_len(&c->rx);
			if (c->rx.len == QUIC_LEN_PREFIX + (size_t)flen &&
			    flen <= PAPO_FRAME_MAX) {
				q->cbs.frame(q->arg, c, c->rx.p + QUIC_LEN_PREFIX, flen);
				buf_reset(&c->rx);
			}
		}
	}
	return 0;
}

int
quic_cb_acked(ngtcp2_conn *conn, int64_t sid, uint64_t offset, uint64_t len,
    void *user, void *sdata)
{
	struct quic_conn *c = user;

	(void)conn;
	(void)sid;
	(void)sdata;
	if (offset + len > c->sq_acked)
		c->sq_acked = offset + len;
	while (c->sq_head != NULL &&
	    c->sq_head->off + c->sq_head->len <= c->sq_acked) {
		struct chunk *ch = c->sq_head;

		c->sq_head = ch->next;
		if (c->sq_head == NULL)
			c->sq_tail = NULL;
		free(ch);
	}
	return 0;
}

int
quic_cb_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t code,
    void *user, void *sdata)
{
	struct quic_conn *c = user;

	(void)conn;
	(void)flags;
	(void)code;
	(void)sdata;
	/* Either stream ending means the peer is done with us. */
	if (sid == c->tx_sid || sid == c->rx_sid)
		c->closing = 1;
	return 0;
}

/* Opens our stream to the peer and tells the owner. */
void
quic_conn_open(struct quic_conn *c)
{
	if (ngtcp2_conn_open_uni_stream(c->conn, &c->tx_sid, NULL) != 0) {
		c->closing = 1;
		return;
	}
	c->opened = 1;
	c->dirty = 1;
	c->q->cbs.open(c->q->arg, c);
}

int
quic_send(struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct chunk *ch;

	if (c->closing || c->dead || n > PAPO_FRAME_MAX ||
	    c->sq_end - c->sq_acked + n > QUIC_SENDQ_MAX)
		return -1;
	if ((ch = malloc(sizeof(*ch) + QUIC_LEN_PREFIX + n)) == NULL)
		return -1;
	ch->next = NULL;
	ch->off = c->sq_end;
	ch->len = QUIC_LEN_PREFIX + n;
	ch->data[0] = (uint8_t)(n >> 24);
	ch->data[1] = (uint8_t)(n >> 16);
	ch->data[2] = (uint8_t)(n >> 8);
	ch->data[3] = (uint8_t)n;
	memcpy(ch->data + QUIC_LEN_PREFIX, p, n);
	if (c->sq_tail != NULL)
		c->sq_tail->next = ch;
	else
		c->sq_head = ch;
	c->sq_tail = ch;
	c->sq_end += ch->len;
	c->dirty = 1;
	quic_kick(c->q);
	return 0;
}

void
quic_close(struct quic_conn *c)
{
	c->closing = 1;
	quic_kick(c->q);
}

void
quic_close_flush(struct quic_conn *c)
{
	c->flush = 1;
	quic_close(c);
}
