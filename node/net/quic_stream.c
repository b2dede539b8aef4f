/*
 * quic_stream.c: the streams of a connection (quic.h): the control
 * stream each way, and version 4's bulk stream each way; our control
 * stream opened and the owner told, frames received (a u32 length and
 * the bytes) and handed to the owner whole, frames queued to send (a
 * queue per stream, the bulk one bounded by QUIC_BULKQ_MAX), and the
 * send queues freed as the peer acknowledges them.  Node thread.
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

/* Hands the whole frame in rx to the owner and makes rx ready for the
 * next; a large bulk frame's buffer is let go. */
static void
quic_rx_deliver(struct quic_conn *c, struct buf *rx, int bulk)
{
	struct quic *q = c->q;
	uint32_t flen = quic_rx_len(rx);

	if (bulk)
		q->cbs.bulk(q->arg, c, rx->p + QUIC_LEN_PREFIX, flen);
	else
		q->cbs.frame(q->arg, c, rx->p + QUIC_LEN_PREFIX, flen);
	buf_reset(rx);
	if (bulk && rx->cap > QUIC_BULK_KEEP)
		buf_free(rx);
}

/* Cuts a stream's data into frames of at most max bytes, each delivered
 * whole.  Its buffer grows to the frame's size at most: its limit is
 * the frame's own once the length is read. */
static void
quic_rx_cut(struct quic_conn *c, struct buf *rx, uint32_t max, int bulk,
    const uint8_t *data, size_t len)
{
	while (len > 0 && !c->closing) {
		uint32_t flen;
		size_t take;

		if (rx->len < QUIC_LEN_PREFIX) {
			take = QUIC_LEN_PREFIX - rx->len;
		} else {
			flen = quic_rx_len(rx);
			take = QUIC_LEN_PREFIX + (size_t)flen - rx->len;
		}
		if (take > len)
			take = len;
		if (buf_add(rx, data, take) == -1) {
			c->closing = 1;
			break;
		}
		data += take;
		len -= take;
		if (rx->len < QUIC_LEN_PREFIX)
			continue;
		flen = quic_rx_len(rx);
		if (rx->len == QUIC_LEN_PREFIX) {
			if (flen > max) {
				log_msg(LOG_WARN, "a peer sent a %sframe of %u "
				    "bytes, over the limit of %u: closing",
				    bulk ? "bulk " : "", flen, max);
				c->closing = 1;
				break;
			}
			rx->max = QUIC_LEN_PREFIX + (size_t)flen;
		}
		if (rx->len == QUIC_LEN_PREFIX + (size_t)flen)
			quic_rx_deliver(c, rx, bulk);
	}
}

/*
 * Stream data arrives in order on each stream; it is cut into frames
 * here.  The peer's first unidirectional stream (index 0 of its kind)
 * carries its frames; on a connection of version 4 its second is its
 * bulk stream.  Any other stream, or data before the peer's key was
 * checked, ends the connection.
 */
int
quic_cb_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid,
    uint64_t offset, const uint8_t *data, size_t len, void *user, void *sdata)
{
	struct quic_conn *c = user;
	uint64_t idx = (uint64_t)sid >> 2;

	(void)flags;
	(void)offset;
	(void)sdata;
	/* The peer's first data can come in the datagram that completes the
	 * handshake: the connection opens here then. */
	if (!c->opened && c->handshake_done && c->verified && !c->closing)
		quic_conn_open(c);
	if (!c->opened || c->closing) {
		/* Nothing before the peer's key was checked. */
		c->closing = 1;
		return 0;
	}
	if (idx == 0)
		c->rx_sid = sid;
	else if (idx == 1 && c->version >= 4 && c->q->cbs.bulk != NULL)
		c->brx_sid = sid;
	else {
		log_msg(LOG_DEBUG, "a peer opened stream %lld, not one of its "
		    "version %u: closing", (long long)sid, c->version);
		c->closing = 1;
		return 0;
	}
	ngtcp2_conn_extend_max_stream_offset(conn, sid, len);
	ngtcp2_conn_extend_max_offset(conn, len);
	if (idx == 0)
		quic_rx_cut(c, &c->rx, PAPO_FRAME_MAX, 0, data, len);
	else
		quic_rx_cut(c, &c->brx, QUIC_BULK_FRAME_MAX, 1, data, len);
	return 0;
}

/* Frees the chunks of sq that the peer acknowledged up to acked. */
static void
quic_sendq_acked(struct sendq *sq, uint64_t acked)
{
	if (acked > sq->acked)
		sq->acked = acked;
	while (sq->head != NULL && sq->head->off + sq->head->len <= sq->acked) {
		struct chunk *ch = sq->head;

		sq->head = ch->next;
		if (sq->head == NULL)
			sq->tail = NULL;
		free(ch);
	}
}

void
quic_sendq_free(struct sendq *sq)
{
	while (sq->head != NULL) {
		struct chunk *ch = sq->head;

		sq->head = ch->next;
		free(ch);
	}
	sq->tail = NULL;
}

/* Appends one frame, its length first, to sq. */
static int
quic_sendq_add(struct sendq *sq, const uint8_t *p, size_t n)
{
	struct chunk *ch;

	if ((ch = malloc(sizeof(*ch) + QUIC_LEN_PREFIX + n)) == NULL)
		return -1;
	ch->next = NULL;
	ch->off = sq->end;
	ch->len = QUIC_LEN_PREFIX + n;
	ch->data[0] = (uint8_t)(n >> 24);
	ch->data[1] = (uint8_t)(n >> 16);
	ch->data[2] = (uint8_t)(n >> 8);
	ch->data[3] = (uint8_t)n;
	memcpy(ch->data + QUIC_LEN_PREFIX, p, n);
	if (sq->tail != NULL)
		sq->tail->next = ch;
	else
		sq->head = ch;
	sq->tail = ch;
	sq->end += ch->len;
	return 0;
}

int
quic_cb_acked(ngtcp2_conn *conn, int64_t sid, uint64_t offset, uint64_t len,
    void *user, void *sdata)
{
	struct quic_conn *c = user;

	(void)conn;
	(void)sdata;
	if (sid != c->btx_sid) {
		quic_sendq_acked(&c->sq, offset + len);
		return 0;
	}
	quic_sendq_acked(&c->bq, offset + len);
	/* The owner is told once per crossing, after the event (it may
	 * queue more then). */
	if (c->bq_high && quic_bulk_queued(c) <= QUIC_BULKQ_MAX / 2) {
		c->bq_high = 0;
		c->bq_room = 1;
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
	/* Any stream ending means the peer is done with us. */
	if (sid == c->tx_sid || sid == c->rx_sid ||
	    (sid != -1 && (sid == c->btx_sid || sid == c->brx_sid)))
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
	c->version = quic_alpn_version(c);
	c->dirty = 1;
	c->q->cbs.open(c->q->arg, c);
}

int
quic_send(struct quic_conn *c, const uint8_t *p, size_t n)
{
	if (c->closing || c->dead || n > PAPO_FRAME_MAX ||
	    c->sq.end - c->sq.acked + n > QUIC_SENDQ_MAX ||
	    quic_sendq_add(&c->sq, p, n) == -1)
		return -1;
	c->dirty = 1;
	quic_kick(c->q);
	return 0;
}

/* The bulk stream itself is opened as it is first written
 * (quic_conn_write), outside ngtcp2's callbacks this may be called in. */
int
quic_send_bulk(struct quic_conn *c, const uint8_t *p, size_t n)
{
	if (c->closing || c->dead || !c->opened || c->version < 4 ||
	    n > QUIC_BULK_FRAME_MAX ||
	    quic_bulk_queued(c) + QUIC_LEN_PREFIX + n > QUIC_BULKQ_MAX ||
	    quic_sendq_add(&c->bq, p, n) == -1)
		return -1;
	if (quic_bulk_queued(c) > QUIC_BULKQ_MAX / 2)
		c->bq_high = 1;
	c->dirty = 1;
	quic_kick(c->q);
	return 0;
}

size_t
quic_bulk_queued(const struct quic_conn *c)
{
	return (size_t)(c->bq.end - c->bq.acked);
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
