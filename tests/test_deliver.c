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
#include "tests/hand.h"

struct peer {
	struct hand h;
	char watch[PAPO_MSGID_LEN + 1];   /* acks of this id are counted */
	int acks;
	int ack_bad;                      /* our acks go out forged */
	struct frame_msg got;             /* ana's last message, as sent */
};

static struct room_keys keys;

static void
peer_open(void *arg, struct quic_conn *c)
{
	hand_greet(&((struct peer *)arg)->h, c);
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
	if (frame_ack_sign(&a.u.ack, &keys, p->h.id) == 0) {
		a.u.ack.sig[7] ^= forged ? 1 : 0;
		hand_send(&p->h, &a);
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
	hand_lost(&((struct peer *)arg)->h, c);
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
	struct addr at;
	struct frame m, own;
	struct node_msg *q, *a;
	uint8_t ana_pk[PAPO_KEY_LEN];
	unsigned long v0;

	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	CHECK(sec_init() == 0);
	check_tmpdir(root, sizeof(root), "deliver");
	snprintf(ha, sizeof(ha), "%s/ana", root);
	CHECK(home_create(err, ha, "ana", "", NULL, 0, "127.0.0.1:7791", &inv) == 0);
	free(inv);
	CHECK((ana = nodes_start(ha)) != NULL);
	inv = node_invite(ana);
	CHECK(hand_room_of(ana, ha, &keys, ana_pk, &at) == 0);

	memset(&mal, 0, sizeof(mal));
	l = loop_new();
	hand_init(&mal.h, root, "mal", inv, FRAME_VERSION, &keys, l, &cbs, &mal);
	eve = member_new(root, "eve", inv);
	CHECK(hand_dial(&mal.h, &at, ana_pk));
	CHECK(hand_sync(&mal.h, ana, "mal is here"));

	/* 1. eve's message, its signature forged, as a first copy: refused,
	 * after a check. */
	hand_msg(&m, &keys, eve, "eve", "from eve", 1);
	v0 = frame_verifies();
	hand_send(&mal.h, &m);
	CHECK(hand_sync(&mal.h, ana, "after the forged first copy"));
	CHECK(!nodes_history_has(ana, "from eve", 0));
	CHECK(frame_verifies() - v0 >= 2);

	/* 2. The real one: taken. */
	frame_clear(&m);
	m.type = FRAME_MSG;
	hand_msg(&m, &keys, eve, "eve", "from eve", 0);
	hand_send(&mal.h, &m);
	CHECK(hand_until_has(&mal.h, ana, "from eve"));

	/* 3. Five more copies, their signatures broken: dropped unread.
	 * Only mal's own message after them is checked, and mal is not cut
	 * off (three bad frames would close its connection). */
	m.u.msg.sig[5] ^= 1;
	v0 = frame_verifies();
	for (int i = 0; i < 5; i++)
		hand_send(&mal.h, &m);
	CHECK(hand_sync(&mal.h, ana, "after the copies"));
	CHECK_EQ_INT((int)(frame_verifies() - v0), 1);
	CHECK(mal.h.c != NULL);

	/* 4. mal, author of a message ana holds, sends it again (its ack
	 * was lost): ana acks it again. */
	hand_msg(&own, &keys, mal.h.id, "mal", "mal twice", 0);
	strcpy(mal.watch, own.u.msg.id);
	hand_send(&mal.h, &own);
	CHECK(hand_until_has(&mal.h, ana, "mal twice"));
	for (int i = 0; i < 30 && mal.acks < 1; i++)
		hand_run(&mal.h, 100);
	CHECK_EQ_INT(mal.acks, 1);
	hand_send(&mal.h, &own);
	for (int i = 0; i < 30 && mal.acks < 2; i++)
		hand_run(&mal.h, 100);
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
		hand_run(&mal.h, 50);
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
		hand_send(&mal.h, &fa);
		CHECK(hand_sync(&mal.h, ana, "after eve's ack"));
		CHECK_EQ_INT((int)(frame_verifies() - v0), 2);
	}

	frame_clear(&m);
	hand_free(&mal.h);
	sec_identity_free(eve);
	loop_free(l);
	node_stop(ana);
	free(inv);
	CHECK_EQ_INT(check_rmtree(root), 0);
	return check_exit();
}
