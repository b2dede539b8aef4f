/*
 * test_quic.c: protocol version 4's bulk stream (node/net/quic.h) between
 * two real endpoints on loopback, in one loop: bulk frames of 1 byte,
 * 64 KiB and QUIC_BULK_FRAME_MAX arrive whole and in order; 100 MiB go
 * through while control frames sent behind a full bulk queue arrive
 * before that queue drains; quic_send_bulk is refused past
 * QUIC_BULKQ_MAX and bulk_room fires once as acknowledgements bring the
 * queue under half; an oversized bulk frame, or one to a peer that takes
 * none, closes the connection; a connection with an endpoint of version
 * 3 is of version 3 (ALPN papo/3) and refuses bulk frames.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "lib/units.h"
#include "node/net/quic.h"
#include "node/net/quic_int.h"
#include "tests/check.h"

#define STREAM_TOTAL (100u * 1024 * 1024)
#define STREAM_FRAME (256u * 1024)
#define CTL_MAX 256

struct ep {
	const char *name;
	struct identity *id;
	struct quic *q;
	struct quic_conn *c;
	int opened, closed;
	/* Control frames received: each names its number, and what of the
	 * bulk stream had arrived when it did. */
	int nctl;
	uint64_t ctl_bulk_at[CTL_MAX];
	/* Bulk frames received, checked against what the sender made. */
	uint64_t nbulk, bulk_bytes;
	unsigned bulk_bad;
	size_t sizes[4];
	/* The sender's side of the 100 MiB run. */
	unsigned nroom;
	int streaming;
	uint64_t sent_bytes, sent_frames;
	unsigned nctl_sent;
	uint64_t ctl_queued_at[CTL_MAX];
};

static struct loop *lp;
static struct loop_timer *stopper;
static uint8_t *pattern;

/* Frame seq's bytes: its number, then a run that depends on it. */
static void
fill(uint8_t *p, size_t n, uint64_t seq)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seq * 7 + i * 13);
	for (size_t i = 0; i < 8 && i < n; i++)
		p[i] = (uint8_t)(seq >> (8 * i));
}

static void
ep_open(void *arg, struct quic_conn *c)
{
	struct ep *e = arg;

	e->c = c;
	e->opened++;
}

static void
ep_closed(void *arg, struct quic_conn *c)
{
	struct ep *e = arg;

	if (e->c == c)
		e->c = NULL;
	e->closed++;
}

static void
ep_frame(void *arg, struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct ep *e = arg;
	uint32_t k;

	(void)c;
	if (n != sizeof(k)) {
		e->bulk_bad++;
		return;
	}
	memcpy(&k, p, sizeof(k));
	if (k < CTL_MAX)
		e->ctl_bulk_at[k] = e->bulk_bytes;
	e->nctl++;
}

static void
ep_bulk(void *arg, struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct ep *e = arg;

	(void)c;
	fill(pattern, n, e->nbulk);
	if (memcmp(pattern, p, n) != 0)
		e->bulk_bad++;
	if (e->nbulk < 4)
		e->sizes[e->nbulk] = n;
	e->nbulk++;
	e->bulk_bytes += n;
}

/* Queues the run's frames until the bulk queue is full. */
static void
refill(struct ep *e)
{
	static uint8_t *frame;

	if (frame == NULL && (frame = malloc(STREAM_FRAME)) == NULL)
		abort();
	while (e->c != NULL && e->sent_bytes < STREAM_TOTAL) {
		fill(frame, STREAM_FRAME, e->sent_frames);
		if (quic_send_bulk(e->c, frame, STREAM_FRAME) == -1)
			break;
		e->sent_frames++;
		e->sent_bytes += STREAM_FRAME;
	}
}

/* A control frame behind what the bulk queue holds. */
static void
send_ctl(struct ep *e)
{
	uint32_t k = e->nctl_sent;

	if (k >= CTL_MAX || e->c == NULL)
		return;
	e->ctl_queued_at[k] = e->sent_bytes;
	CHECK_EQ_INT(quic_send(e->c, (const uint8_t *)&k, sizeof(k)), 0);
	e->nctl_sent++;
}

static void
ep_bulk_room(void *arg, struct quic_conn *c)
{
	struct ep *e = arg;

	(void)c;
	e->nroom++;
	CHECK(quic_bulk_queued(c) <= QUIC_BULKQ_MAX / 2);
	if (e->streaming) {
		refill(e);
		send_ctl(e);
	}
}

static void
stop_loop(void *arg)
{
	loop_stop(arg);
}

static void
pump(int ms)
{
	loop_timer_set(stopper, loop_now_ns() + (uint64_t)ms * NS_PER_MS);
	loop_run(lp);
}

/* Runs the loop until *flag reaches want, for ms at most. */
static int
until(const int *flag, int want, int ms)
{
	for (int i = 0; i < ms / 5 && *flag < want; i++)
		pump(5);
	return *flag >= want;
}

static int
until64(const uint64_t *v, uint64_t want, int ms)
{
	for (int i = 0; i < ms / 5 && *v < want; i++)
		pump(5);
	return *v >= want;
}

static struct ep *
ep_new(const char *root, const char *name, unsigned version, int nobulk)
{
	char err[PAPO_ERR_LEN], home[300];
	struct quic_cbs cbs = { .open = ep_open, .frame = ep_frame,
	    .closed = ep_closed, .bulk = ep_bulk, .bulk_room = ep_bulk_room };
	struct ep *e = calloc(1, sizeof(*e));
	struct addr any;

	if (nobulk)
		cbs.bulk = NULL;
	snprintf(home, sizeof(home), "%s/%s", root, name);
	e->name = name;
	if (addr_parse_listen("127.0.0.1:0", &any) == -1)
		abort();
	if ((e->id = sec_identity_load(err, home)) == NULL ||
	    (e->q = quic_new(err, lp, &any, e->id, version, &cbs, e)) == NULL) {
		fprintf(stderr, "%s: %s\n", name, err);
		abort();
	}
	return e;
}

static void
ep_free(struct ep *e)
{
	quic_free(e->q);
	sec_identity_free(e->id);
	free(e);
}

/* a dials b; 1 when both ends opened. */
static int
ep_connect(struct ep *a, struct ep *b)
{
	struct addr at;

	quic_local(b->q, &at);
	if (quic_dial(a->q, &at, b->id->pk, 0) == NULL)
		return 0;
	return until(&a->opened, 1, 5000) && until(&b->opened, 1, 5000);
}

/* 1 byte, 64 KiB and the largest frame, whole and in order. */
static void
test_sizes(struct ep *a, struct ep *b)
{
	static const size_t sizes[] = { 1, 64 * 1024, QUIC_BULK_FRAME_MAX };
	uint8_t *p = malloc(QUIC_BULK_FRAME_MAX);

	for (size_t i = 0; i < 3; i++) {
		fill(p, sizes[i], i);
		CHECK_EQ_INT(quic_send_bulk(a->c, p, sizes[i]), 0);
	}
	CHECK_EQ_INT(quic_send_bulk(a->c, p, QUIC_BULK_FRAME_MAX + 1), -1);
	CHECK(until64(&b->nbulk, 3, 10000));
	CHECK_EQ_INT(b->nbulk, 3);
	CHECK_EQ_INT(b->bulk_bad, 0);
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_INT(b->sizes[i], sizes[i]);
	/* And back the other way, on b's own bulk stream. */
	fill(p, 10, a->nbulk);
	CHECK_EQ_INT(quic_send_bulk(b->c, p, 10), 0);
	CHECK(until64(&a->nbulk, 1, 5000));
	CHECK_EQ_INT(a->sizes[0], 10);
	CHECK_EQ_INT(a->bulk_bad, 0);
	/* Once acknowledged, nothing is queued. */
	for (int i = 0; i < 400 && quic_bulk_queued(a->c) > 0; i++)
		pump(5);
	CHECK_EQ_INT(quic_bulk_queued(a->c), 0);
	CHECK_EQ_INT(a->closed + b->closed, 0);
	free(p);
}

/* Full, refused, then room as acks come. */
static void
test_full(struct ep *a, struct ep *b)
{
	uint8_t *p = calloc(1, QUIC_BULK_FRAME_MAX);
	uint64_t had = b->nbulk;
	size_t rest;
	int n = 0;

	a->nroom = 0;
	for (;;) {
		fill(p, QUIC_BULK_FRAME_MAX, had + (uint64_t)n);
		if (quic_send_bulk(a->c, p, QUIC_BULK_FRAME_MAX) == -1)
			break;
		n++;
	}
	CHECK_EQ_INT(n, 3);
	rest = QUIC_BULKQ_MAX - quic_bulk_queued(a->c);
	CHECK(rest > QUIC_LEN_PREFIX && rest < QUIC_BULK_FRAME_MAX);
	fill(p, rest - QUIC_LEN_PREFIX, had + 3);
	CHECK_EQ_INT(quic_send_bulk(a->c, p, rest - QUIC_LEN_PREFIX), 0);
	CHECK_EQ_INT(quic_bulk_queued(a->c), QUIC_BULKQ_MAX);
	CHECK_EQ_INT(quic_send_bulk(a->c, p, 1), -1);
	CHECK_EQ_INT(a->nroom, 0);
	/* The control stream is not held by it. */
	CHECK_EQ_INT(quic_send(a->c, p, 4), 0);
	{
		int fired = 0;

		for (int i = 0; i < 2000 && !fired; i++) {
			pump(5);
			fired = a->nroom > 0;
		}
		CHECK(fired);
	}
	CHECK(quic_bulk_queued(a->c) <= QUIC_BULKQ_MAX / 2);
	CHECK(until64(&b->nbulk, had + 4, 10000));
	CHECK_EQ_INT(b->bulk_bad, 0);
	for (int i = 0; i < 400 && quic_bulk_queued(a->c) > 0; i++)
		pump(5);
	CHECK_EQ_INT(quic_bulk_queued(a->c), 0);
	/* Once per crossing. */
	CHECK_EQ_INT(a->nroom, 1);
	free(p);
}

/* 100 MiB; a control frame after each refill arrives before what was
 * queued ahead of it has. */
static void
test_stream(struct ep *a, struct ep *b)
{
	uint64_t t0 = loop_now_ns();

	b->nbulk = 0;
	a->sent_frames = 0;
	a->sent_bytes = 0;
	a->nctl_sent = 0;
	b->nctl = 0;
	b->bulk_bytes = 0;
	a->streaming = 1;
	refill(a);
	CHECK(a->sent_bytes >= QUIC_BULKQ_MAX - 2 * STREAM_FRAME);
	send_ctl(a);
	CHECK(until64(&b->bulk_bytes, STREAM_TOTAL, 90000));
	a->streaming = 0;
	CHECK_EQ_INT(b->bulk_bytes, STREAM_TOTAL);
	CHECK_EQ_INT(b->nbulk, STREAM_TOTAL / STREAM_FRAME);
	CHECK_EQ_INT(b->bulk_bad, 0);
	for (int i = 0; i < 400 && (unsigned)b->nctl < a->nctl_sent; i++)
		pump(5);
	CHECK_EQ_INT(b->nctl, a->nctl_sent);
	/* One each time the queue came under half: dozens in 100 MiB. */
	CHECK(a->nctl_sent > 20);
	for (unsigned k = 0; k < a->nctl_sent && k < CTL_MAX; k++)
		if (b->ctl_bulk_at[k] >= a->ctl_queued_at[k]) {
			fprintf(stderr, "control frame %u: %" PRIu64 " bulk "
			    "bytes before it, %" PRIu64 " queued\n", k,
			    b->ctl_bulk_at[k], a->ctl_queued_at[k]);
			CHECK(b->ctl_bulk_at[k] < a->ctl_queued_at[k]);
		}
	printf("100 MiB in %" PRIu64 " ms, %u control frames\n",
	    (uint64_t)((loop_now_ns() - t0) / NS_PER_MS), a->nctl_sent);
	CHECK_EQ_INT(a->closed + b->closed, 0);
}

/* A length over QUIC_BULK_FRAME_MAX: the receiver closes. */
static void
test_oversized(struct ep *a, struct ep *b)
{
	uint8_t p[16] = { 0 };
	uint32_t over = QUIC_BULK_FRAME_MAX + 1;
	uint8_t *h;

	CHECK_EQ_INT(quic_send_bulk(a->c, p, sizeof(p)), 0);
	/* Its length, rewritten before the loop writes it. */
	h = a->c->bq.tail->data;
	h[0] = (uint8_t)(over >> 24);
	h[1] = (uint8_t)(over >> 16);
	h[2] = (uint8_t)(over >> 8);
	h[3] = (uint8_t)over;
	CHECK(until(&b->closed, 1, 5000));
	CHECK(until(&a->closed, 1, 10000));
	CHECK(b->c == NULL && a->c == NULL);
}

int
main(void)
{
	char root[64];
	const char *lv = getenv("PAPO_LOG");
	struct ep *a, *b, *b3, *nb;

	if (lv != NULL && log_parse_level(lv) >= 0)
		log_set_level((enum log_level)log_parse_level(lv));
	CHECK(sec_init() == 0);
	check_tmpdir(root, sizeof(root), "quic");
	if ((pattern = malloc(QUIC_BULK_FRAME_MAX)) == NULL)
		return 1;
	lp = loop_new();
	stopper = loop_timer_new(lp, stop_loop, lp);

	a = ep_new(root, "a", 4, 0);
	b = ep_new(root, "b", 4, 0);
	CHECK(ep_connect(a, b));
	CHECK(a->c != NULL && b->c != NULL);
	if (a->c == NULL || b->c == NULL)
		return check_exit();
	CHECK_EQ_INT(quic_version(a->c), 4);
	CHECK_EQ_INT(quic_version(b->c), 4);
	{
		gnutls_datum_t alpn;

		CHECK(gnutls_alpn_get_selected_protocol(b->c->tls,
		    &alpn) == 0 && alpn.size == 6 &&
		    memcmp(alpn.data, "papo/4", 6) == 0);
	}
	CHECK_EQ_INT(quic_bulk_queued(a->c), 0);
	test_sizes(a, b);
	test_full(a, b);
	test_stream(a, b);
	test_oversized(a, b);

	/* A peer that takes no bulk frame (cbs.bulk NULL) closes. */
	nb = ep_new(root, "nb", 4, 1);
	a->opened = 0;
	CHECK(ep_connect(a, nb));
	if (a->c != NULL) {
		CHECK_EQ_INT(quic_send_bulk(a->c, (const uint8_t *)"x", 1), 0);
		CHECK(until(&nb->closed, 1, 5000));
		CHECK(until(&a->closed, 2, 10000));
	}

	/* Version 3 at either end: papo/3, and no bulk stream. */
	b3 = ep_new(root, "b3", 3, 0);
	a->opened = 0;
	CHECK(ep_connect(a, b3));
	if (a->c != NULL && b3->c != NULL) {
		gnutls_datum_t alpn;

		CHECK_EQ_INT(quic_version(a->c), 3);
		CHECK_EQ_INT(quic_version(b3->c), 3);
		CHECK(gnutls_alpn_get_selected_protocol(a->c->tls,
		    &alpn) == 0 && alpn.size == 6 &&
		    memcmp(alpn.data, "papo/3", 6) == 0);
		CHECK_EQ_INT(quic_send_bulk(a->c, (const uint8_t *)"x", 1),
		    -1);
		CHECK_EQ_INT(quic_send_bulk(b3->c, (const uint8_t *)"x", 1),
		    -1);
		CHECK_EQ_INT(quic_send(a->c, (const uint8_t *)"abcd", 4), 0);
		CHECK(until(&b3->nctl, 1, 5000));
		/* A second stream on a connection of version 3 (a, of 4,
		 * allows it; b3 made to open it by hand) closes it. */
		b3->c->version = 4;
		CHECK_EQ_INT(quic_send_bulk(b3->c, (const uint8_t *)"x", 1), 0);
		CHECK(until(&a->closed, 3, 5000));
		CHECK(until(&b3->closed, 1, 10000));
		CHECK_EQ_INT(a->nbulk, 1);
	}
	b3->opened = 0;
	a->opened = 0;
	b->opened = 0;
	CHECK(ep_connect(b3, b));
	if (b3->c != NULL && b->c != NULL) {
		CHECK_EQ_INT(quic_version(b3->c), 3);
		CHECK_EQ_INT(quic_version(b->c), 3);
		CHECK_EQ_INT(quic_send_bulk(b->c, (const uint8_t *)"x", 1), -1);
	}

	ep_free(a);
	ep_free(b);
	ep_free(b3);
	ep_free(nb);
	loop_timer_free(stopper);
	loop_free(lp);
	free(pattern);
	CHECK_EQ_INT(check_rmtree(root), 0);
	return check_exit();
}
