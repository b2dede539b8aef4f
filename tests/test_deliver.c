/*
 * test_deliver.c: what a message costs a receiver, seen from outside
 * (docs/PROTOCOL.md, "Gossip").  One real node, ana, in this process on
 * 127.0.0.1, and "mal", a member speaking the protocol by hand over QUIC
 * (it joined with an invite, so it holds the room key).  mal passes on a
 * message written by "eve", a member that is never connected:
 *   - a first copy with a forged signature is refused;
 *   - once ana holds it, copies with broken signatures are dropped
 *     unread: no signature is checked (frame_verifies counts them) and
 *     none counts as a bad frame (three would close mal's connection);
 *   - mal's own message sent again (its author retrying) is acked again;
 *   - mal's ack of ana's message ends at ana, vouched for by the
 *     connection: it is taken without a check, where an ack that mal
 *     passes on for eve is checked, and refused when forged.
 */
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/quic.h"
#include "node/store/home.h"
#include "node/wire/frame.h"
#include "tests/check.h"
#include "tests/nodes.h"

struct peer {
	struct identity *id;
	struct quic *q;
	struct quic_conn *c;
	int greeted;
	char watch[PAPO_MSGID_LEN + 1];   /* acks of this id are counted */
	int acks;
	int ack_bad;                      /* our acks go out forged */
	struct frame_msg got;             /* ana's last message, as sent */
};

static struct room_keys keys;

static void
peer_send(struct peer *p, const struct frame *fr)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (p->c == NULL || frame_seal_epoch(&keys, 0, fr, &b) == -1 ||
	    quic_send(p->c, b.p, b.len) == -1)
		fprintf(stderr, "mal: could not send a %s\n",
		    frame_type_name(fr->type));
	buf_free(&b);
}

static void
peer_open(void *arg, struct quic_conn *c)
{
	struct peer *p = arg;
	struct frame h;

	p->c = c;
	memset(&h, 0, sizeof(h));
	h.type = FRAME_HELLO;
	h.u.hello.version = quic_version(c);
	memcpy(h.u.hello.id, p->id->pk, PAPO_KEY_LEN);
	strcpy(h.u.hello.name, "mal");
	h.u.hello.obs = *quic_remote(c);
	peer_send(p, &h);
	p->greeted = 1;
}

/* mal's ack of m, signed by mal; a forged one has a flipped byte. */
static void
peer_ack(struct peer *p, const struct frame_msg *m, int forged)
{
	struct frame a;

	memset(&a, 0, sizeof(a));
	a.type = FRAME_ACK;
	strcpy(a.u.ack.id, m->id);
	a.u.ack.state = ACK_DELIVERED;
	a.u.ack.ts = loop_wall_ms();
	if (frame_ack_sign(&a.u.ack, &keys, p->id) == 0) {
		a.u.ack.sig[7] ^= forged ? 1 : 0;
		peer_send(p, &a);
	}
}

/* Counts ana's acks of the watched id, and acks ana's messages.  mal
 * checks no signature itself: the count of checks is ana's alone. */
static void
peer_frame(void *arg, struct quic_conn *c, const uint8_t *b, size_t n)
{
	struct peer *p = arg;
	struct frame fr;

	(void)c;
	if (frame_open_epoch_peek(&keys, b, n, frame_flags(quic_version(c)) |
	    FRAME_VERIFY_LATER, NULL, NULL, &fr) != FRAME_OK)
		return;
	if (fr.type == FRAME_ACK && strcmp(fr.u.ack.id, p->watch) == 0)
		p->acks++;
	if (fr.type == FRAME_MSG) {
		peer_ack(p, &fr.u.msg, p->ack_bad);
		strcpy(p->got.id, fr.u.msg.id);
	}
	frame_clear(&fr);
}

static void
peer_closed(void *arg, struct quic_conn *c)
{
	struct peer *p = arg;

	if (p->c == c)
		p->c = NULL;
}

static void
stop_loop(void *arg)
{
	loop_stop(arg);
}

static void
pump(struct loop *l, struct loop_timer *t, int ms)
{
	loop_timer_set(t, loop_now_ns() + (uint64_t)ms * 1000000u);
	loop_run(l);
}

/* A message by who with text; its signature flipped when forged. */
static void
make_msg(struct frame *m, const struct identity *who, const char *name,
    const char *text, int forged)
{
	memset(m, 0, sizeof(*m));
	m->type = FRAME_MSG;
	sec_msgid_new(m->u.msg.id);
	strcpy(m->u.msg.name, name);
	m->u.msg.ts = loop_wall_ms();
	m->u.msg.body = strdup(text);
	m->u.msg.body_len = strlen(text);
	if (frame_msg_sign(&m->u.msg, &keys, who) == -1)
		abort();
	m->u.msg.sig[5] ^= forged ? 1 : 0;
}

/* Runs mal's loop until ana's history has text: 1, or 0 after 5 s. */
static int
until_has(struct loop *l, struct loop_timer *t, struct node *ana,
    const char *text)
{
	for (int i = 0; i < 50; i++) {
		pump(l, t, 100);
		if (nodes_history_has(ana, text, 0))
			return 1;
	}
	return 0;
}

/* mal's own message with text, sent and taken by ana: every frame mal
 * sent before is taken by then (one stream, in order). */
static int
sync_own(struct peer *p, struct loop *l, struct loop_timer *t,
    struct node *ana, const char *text)
{
	struct frame m;
	int ok;

	make_msg(&m, p->id, "mal", text, 0);
	peer_send(p, &m);
	ok = until_has(l, t, ana, text);
	frame_clear(&m);
	return ok;
}

static struct identity *
member_new(const char *root, const char *name, const char *invite)
{
	char err[PAPO_ERR_LEN], home[300];
	struct identity *id;

	snprintf(home, sizeof(home), "%s/%s", root, name);
	if (home_join(err, home, invite, name, "", 0) == -1 ||
	    (id = sec_identity_load(err, home)) == NULL) {
		fprintf(stderr, "%s: %s\n", name, err);
		abort();
	}
	return id;
}

int
main(void)
{
	char err[PAPO_ERR_LEN], root[64], ha[256];
	char *inv = NULL;
	struct quic_cbs cbs = { .open = peer_open, .frame = peer_frame,
	    .closed = peer_closed };
	struct peer mal;
	struct identity *eve;
	struct node *ana;
	struct loop *l;
	struct loop_timer *t;
	struct room_file r;
	struct addr at, any;
	struct frame m, own;
	struct node_msg *q, *a;
	uint8_t ana_pk[PAPO_KEY_LEN];
	unsigned long v0;
	cJSON *s;

	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	CHECK(sec_init() == 0);
	check_tmpdir(root, sizeof(root), "deliver");
	snprintf(ha, sizeof(ha), "%s/ana", root);
	CHECK(home_create(err, ha, "ana", "", NULL, 0, "127.0.0.1:7791", &inv) == 0);
	free(inv);
	CHECK((ana = nodes_start(ha)) != NULL);
	inv = node_invite(ana);
	CHECK(roomfile_load(err, ha, &r) == 0);
	sec_room_keys(r.secret, &keys);
	roomfile_wipe(&r);
	s = nodes_request(ana, node_msg_new(NODE_STATUS), 5000);
	CHECK(sec_id_parse(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "me"),
	    "id")->valuestring, ana_pk) == 0);
	CHECK(addr_parse(cJSON_GetObjectItem(s, "quic")->valuestring, &at) == 0);
	cJSON_Delete(s);

	memset(&mal, 0, sizeof(mal));
	mal.id = member_new(root, "mal", inv);
	eve = member_new(root, "eve", inv);
	l = loop_new();
	t = loop_timer_new(l, stop_loop, l);
	addr_parse("127.0.0.1:0", &any);
	CHECK((mal.q = quic_new(err, l, &any, mal.id, FRAME_VERSION, &cbs,
	    &mal)) != NULL);
	CHECK(quic_dial(mal.q, &at, ana_pk, 0) != NULL);
	for (int i = 0; i < 50 && !(mal.greeted && mal.c != NULL); i++)
		pump(l, t, 100);
	CHECK(mal.c != NULL);
	CHECK(sync_own(&mal, l, t, ana, "mal is here"));

	/* 1. eve's message, its signature forged, as a first copy: refused,
	 * after a check. */
	make_msg(&m, eve, "eve", "from eve", 1);
	v0 = frame_verifies();
	peer_send(&mal, &m);
	CHECK(sync_own(&mal, l, t, ana, "after the forged first copy"));
	CHECK(!nodes_history_has(ana, "from eve", 0));
	CHECK(frame_verifies() - v0 >= 2);

	/* 2. The real one: taken. */
	frame_clear(&m);
	m.type = FRAME_MSG;
	make_msg(&m, eve, "eve", "from eve", 0);
	peer_send(&mal, &m);
	CHECK(until_has(l, t, ana, "from eve"));

	/* 3. Five more copies, their signatures broken: dropped unread.
	 * Only mal's own message after them is checked, and mal is not cut
	 * off (three bad frames would close its connection). */
	m.u.msg.sig[5] ^= 1;
	v0 = frame_verifies();
	for (int i = 0; i < 5; i++)
		peer_send(&mal, &m);
	CHECK(sync_own(&mal, l, t, ana, "after the copies"));
	CHECK_EQ_INT((int)(frame_verifies() - v0), 1);
	CHECK(mal.c != NULL);

	/* 4. mal, author of a message ana holds, sends it again (its ack
	 * was lost): ana acks it again. */
	make_msg(&own, mal.id, "mal", "mal twice", 0);
	strcpy(mal.watch, own.u.msg.id);
	peer_send(&mal, &own);
	CHECK(until_has(l, t, ana, "mal twice"));
	for (int i = 0; i < 30 && mal.acks < 1; i++)
		pump(l, t, 100);
	CHECK_EQ_INT(mal.acks, 1);
	peer_send(&mal, &own);
	for (int i = 0; i < 30 && mal.acks < 2; i++)
		pump(l, t, 100);
	CHECK_EQ_INT(mal.acks, 2);
	frame_clear(&own);

	/* 5. ana sends; mal acks with a broken signature, on its own
	 * connection: the ack ends at ana, which takes it unchecked, and the
	 * send is answered delivered to mal. */
	mal.ack_bad = 1;
	q = node_msg_new(NODE_SEND);
	node_args_send(q)->text = strdup("hello mal");
	v0 = frame_verifies();
	node_submit(ana, q);
	a = NULL;
	for (int i = 0; i < 100 && a == NULL; i++) {
		pump(l, t, 50);
		a = nodes_wait(ana, NODE_SEND, 10);
	}
	CHECK(a != NULL && a->code == 0);
	CHECK(a != NULL && a->json != NULL && strstr(a->json, "\"delivered\"") != NULL);
	node_msg_free(a);
	CHECK_EQ_INT((int)(frame_verifies() - v0), 0);

	/* 6. An ack of ana's message that mal passes on for eve, forged: it
	 * is checked (and refused). */
	{
		struct frame fa;

		memset(&fa, 0, sizeof(fa));
		fa.type = FRAME_ACK;
		strcpy(fa.u.ack.id, mal.got.id);
		fa.u.ack.state = ACK_DELIVERED;
		fa.u.ack.ts = loop_wall_ms();
		CHECK(frame_ack_sign(&fa.u.ack, &keys, eve) == 0);
		fa.u.ack.sig[3] ^= 1;
		v0 = frame_verifies();
		peer_send(&mal, &fa);
		CHECK(sync_own(&mal, l, t, ana, "after eve's ack"));
		CHECK_EQ_INT((int)(frame_verifies() - v0), 2);
	}

	frame_clear(&m);
	quic_free(mal.q);
	sec_identity_free(mal.id);
	sec_identity_free(eve);
	loop_timer_free(t);
	loop_free(l);
	node_stop(ana);
	free(inv);
	CHECK_EQ_INT(check_rmtree(root), 0);
	return check_exit();
}
