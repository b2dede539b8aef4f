/*
 * test_presence.c: signed presence (docs/PROTOCOL.md, "Signed presence")
 * as a forger meets it.  Two real nodes, ana and bo, in one process on
 * 127.0.0.1; and two forgers that hold the room key (they joined with an
 * invite, as any member does) and speak the protocol by hand over QUIC:
 * "mal" on a connection of version 3, "mole" on one of version 2.  They
 * say bo left while it is online, and that it is back (renamed) while it
 * is gone, with the wrong key or with no signature; mal replays bo's own
 * signed bye after bo came back; mal makes itself admin and makes a key
 * epoch removing bo, signed by itself or claiming the owner made them.
 * None of it changes what ana shows.
 * After each forgery the forger sends a message of its own: once ana has
 * it, ana has taken every frame before it (one stream, in order).
 */
#include <poll.h>
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

struct forger {
	struct hand h;
	struct frame_peer bo_entry;    /* bo's signed entry, as relayed */
	struct frame_bye bo_bye;       /* bo's signed bye, as relayed */
};

static struct room_keys keys;
static uint8_t bo_pk[PAPO_KEY_LEN];
static int msgno;

/* The forgers' side: their own loop, run in slices. */

static void
forger_open(void *arg, struct quic_conn *c)
{
	hand_greet(&((struct forger *)arg)->h, c);
}

/* Keeps the newest signed entry and bye of bo that ana passes on. */
static void
forger_frame(void *arg, struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct forger *f = arg;
	struct frame fr;

	(void)c;
	if (hand_open(&f->h, p, n, &fr) != FRAME_OK)
		return;
	if (fr.type == FRAME_PEERS)
		for (size_t i = 0; i < fr.u.peers.n; i++) {
			const struct frame_peer *e = &fr.u.peers.v[i];

			if (memcmp(e->id, bo_pk, PAPO_KEY_LEN) == 0 && e->has_sig &&
			    e->seen > f->bo_entry.seen)
				f->bo_entry = *e;
		}
	if (fr.type == FRAME_BYE && fr.u.bye.has_sig &&
	    memcmp(fr.u.bye.id, bo_pk, PAPO_KEY_LEN) == 0)
		f->bo_bye = fr.u.bye;
	frame_clear(&fr);
}

static void
forger_closed(void *arg, struct quic_conn *c)
{
	hand_lost(&((struct forger *)arg)->h, c);
}

/* Sends a message of f's own with a fresh text and runs the loop until
 * ana has it: every frame f sent before is taken by then. */
static int
forger_sync(struct forger *f, struct node *ana)
{
	char text[64];

	snprintf(text, sizeof(text), "%s control %d", f->h.name, ++msgno);
	return hand_sync(&f->h, ana, text);
}

/* bo's bye, as f can make it: signed by f itself (v3) or unsigned. */
static void
forge_bye(struct forger *f)
{
	struct frame b;

	memset(&b, 0, sizeof(b));
	b.type = FRAME_BYE;
	if (f->h.version >= 3) {
		b.u.bye.ts = loop_wall_ms() + 3600000u;
		frame_bye_sign(&b.u.bye, &keys, f->h.id);
	}
	memcpy(b.u.bye.id, bo_pk, PAPO_KEY_LEN);
	hand_send(&f->h, &b);
}

/* bo's entry saying it is here now, renamed: signed by f (v3) or not. */
static void
forge_entry(struct forger *f, const char *name)
{
	struct frame fr;
	struct frame_peer e;

	memset(&fr, 0, sizeof(fr));
	memset(&e, 0, sizeof(e));
	fr.type = FRAME_PEERS;
	fr.u.peers.n = 1;
	fr.u.peers.v = &e;
	strcpy(e.name, name);
	e.seen = loop_wall_ms() + 1000;
	e.naddr = 1;
	addr_parse("192.0.2.66:6666", &e.addr[0]);
	if (f->h.version >= 3)
		frame_peer_sign(&e, &keys, f->h.id);
	memcpy(e.id, bo_pk, PAPO_KEY_LEN);
	hand_send(&f->h, &fr);
}

/* An admin grant for who, signed by f; by then set to claim, so a claim
 * other than f is a forged signature. */
static void
forge_admin(struct forger *f, const uint8_t who[PAPO_KEY_LEN], const uint8_t claim[PAPO_KEY_LEN])
{
	struct frame fr;

	memset(&fr, 0, sizeof(fr));
	fr.type = FRAME_ADMIN;
	memcpy(fr.u.admin.id, who, PAPO_KEY_LEN);
	fr.u.admin.ts = loop_wall_ms();
	frame_admin_sign(&fr.u.admin, &keys, f->h.id);
	memcpy(fr.u.admin.by, claim, PAPO_KEY_LEN);
	hand_send(&f->h, &fr);
}

/* Epoch 1 removing bo, its secret sealed to ana and to f, signed by f;
 * by then set to claim, as forge_admin. */
static void
forge_epoch(struct forger *f, const uint8_t ana[PAPO_KEY_LEN], const uint8_t claim[PAPO_KEY_LEN])
{
	struct frame fr;
	struct frame_epoch_key k[2];
	uint8_t secret[PAPO_KEY_LEN], removed[1][PAPO_KEY_LEN];

	memset(&fr, 0, sizeof(fr));
	randombytes_buf(secret, sizeof(secret));
	memcpy(k[0].id, ana, PAPO_KEY_LEN);
	memcpy(k[1].id, f->h.id->pk, PAPO_KEY_LEN);
	memcpy(removed[0], bo_pk, PAPO_KEY_LEN);
	if (sec_box_seal(k[0].box, secret, ana) == -1 ||
	    sec_box_seal(k[1].box, secret, f->h.id->pk) == -1)
		abort();
	fr.type = FRAME_EPOCH;
	fr.u.epoch.n = 1;
	fr.u.epoch.ts = loop_wall_ms();
	fr.u.epoch.nremoved = 1;
	fr.u.epoch.removed = removed;
	fr.u.epoch.nkeys = 2;
	fr.u.epoch.keys = k;
	frame_epoch_sign(&fr.u.epoch, &keys, f->h.id);
	memcpy(fr.u.epoch.by, claim, PAPO_KEY_LEN);
	hand_send(&f->h, &fr);
}

static struct forger *
forger_new(const char *root, const char *name, const char *invite,
    unsigned version, struct loop *l)
{
	struct quic_cbs cbs = { .open = forger_open, .frame = forger_frame,
	    .closed = forger_closed };
	struct forger *f = calloc(1, sizeof(*f));

	if (f == NULL)
		abort();
	hand_init(&f->h, root, name, invite, version, &keys, l, &cbs, f);
	return f;
}

int
main(void)
{
	char err[PAPO_ERR_LEN], root[64];
	char ha[256], hb[256];
	char *inv = NULL;
	struct node *ana, *bo;
	struct forger *mal, *mole;
	struct loop *l;
	struct addr at;
	uint8_t ana_pk[PAPO_KEY_LEN];
	cJSON *s;

	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	CHECK(sec_init() == 0);
	check_tmpdir(root, sizeof(root), "presence");
	snprintf(ha, sizeof(ha), "%s/ana", root);
	snprintf(hb, sizeof(hb), "%s/bo", root);
	CHECK(home_create(err, ha, "ana", "", NULL, 0, "127.0.0.1:7778", &inv) == 0);
	free(inv);
	CHECK((ana = nodes_start(ha)) != NULL);
	inv = node_invite(ana);
	CHECK(home_join(err, hb, inv, "bo", "", 0) == 0);
	CHECK((bo = nodes_start(hb)) != NULL);
	CHECK(nodes_shown_as(ana, "bo", 1, 10000));
	CHECK(hand_room_of(ana, ha, &keys, ana_pk, &at) == 0);
	s = nodes_request(bo, node_msg_new(NODE_STATUS), 5000);
	CHECK(sec_id_parse(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "me"),
	    "id")->valuestring, bo_pk) == 0);
	cJSON_Delete(s);

	l = loop_new();
	mal = forger_new(root, "mal", inv, 3, l);
	mole = forger_new(root, "mole", inv, 2, l);
	CHECK(quic_dial(mal->h.q, &at, ana_pk, 0) != NULL);
	CHECK(quic_dial(mole->h.q, &at, ana_pk, 0) != NULL);
	for (int i = 0; i < 50 && !(mal->h.greeted && mole->h.greeted &&
	    mal->bo_entry.has_sig); i++)
		hand_run(&mal->h, 100);
	CHECK_EQ_INT(mal->h.version, 3);
	CHECK_EQ_INT(mole->h.version, 2);
	/* Ana passes bo's entry on as bo signed it, over version 3. */
	CHECK(mal->bo_entry.has_sig);

	/* 1. bo online: a bye for it signed by mal, and an unsigned one
	 * over version 2.  bo stays online. */
	forge_bye(mal);
	CHECK(forger_sync(mal, ana));
	forge_bye(mole);
	CHECK(forger_sync(mole, ana));
	CHECK_EQ_INT(nodes_shown(ana, "bo"), 1);

	/* 2. bo leaves: its signed bye reaches mal through ana. */
	node_stop(bo);
	CHECK(nodes_shown_as(ana, "bo", 0, 5000));
	for (int i = 0; i < 50 && !mal->bo_bye.has_sig; i++)
		hand_run(&mal->h, 100);
	CHECK(mal->bo_bye.has_sig);
	/* Entries saying bo is here again, renamed: signed by mal, or
	 * unsigned over version 2; and bo's own last entry, replayed.
	 * bo stays offline, and keeps its name. */
	forge_entry(mal, "evil");
	CHECK(forger_sync(mal, ana));
	forge_entry(mole, "evil2");
	CHECK(forger_sync(mole, ana));
	{
		struct frame fr;

		memset(&fr, 0, sizeof(fr));
		fr.type = FRAME_PEERS;
		fr.u.peers.n = 1;
		fr.u.peers.v = &mal->bo_entry;
		hand_send(&mal->h, &fr);
	}
	CHECK(forger_sync(mal, ana));
	CHECK_EQ_INT(nodes_shown(ana, "bo"), 0);
	CHECK_EQ_INT(nodes_shown(ana, "evil"), -1);
	CHECK_EQ_INT(nodes_shown(ana, "evil2"), -1);

	/* 3. bo comes back; mal replays the bye bo signed before: bo stays
	 * online. */
	CHECK((bo = nodes_start(hb)) != NULL);
	CHECK(nodes_shown_as(ana, "bo", 1, 10000));
	hand_run(&mal->h, 500);
	{
		struct frame fr;

		memset(&fr, 0, sizeof(fr));
		fr.type = FRAME_BYE;
		fr.u.bye = mal->bo_bye;
		hand_send(&mal->h, &fr);
	}
	CHECK(forger_sync(mal, ana));
	CHECK_EQ_INT(nodes_shown(ana, "bo"), 1);

	/* 4. mal governs: makes itself admin, and makes epoch 1 removing bo,
	 * each signed by itself, then claiming ana (the owner) made them.
	 * ana takes none: no admin, epoch 0, nobody removed, bo online. */
	CHECK(hand_dial(&mal->h, &at, ana_pk));
	forge_admin(mal, mal->h.id->pk, mal->h.id->pk);
	CHECK(forger_sync(mal, ana));
	forge_admin(mal, mal->h.id->pk, ana_pk);
	CHECK(forger_sync(mal, ana));
	CHECK(hand_dial(&mal->h, &at, ana_pk));
	forge_epoch(mal, ana_pk, mal->h.id->pk);
	CHECK(forger_sync(mal, ana));
	CHECK(hand_dial(&mal->h, &at, ana_pk));
	forge_epoch(mal, ana_pk, ana_pk);
	CHECK(forger_sync(mal, ana));
	s = nodes_request(ana, node_msg_new(NODE_STATUS), 5000);
	CHECK(s != NULL);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(s, "admins")), 0);
	CHECK_EQ_INT((int)cJSON_GetObjectItem(s, "epoch")->valuedouble, 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(s, "removed")), 0);
	cJSON_Delete(s);
	CHECK_EQ_INT(nodes_shown(ana, "bo"), 1);
	/* The frames were well made: once ana makes mal an admin, the epoch
	 * mal signs as itself is taken, and removes bo. */
	{
		struct node_msg *q = node_msg_new(NODE_ADMIN), *a;

		node_args_member(q)->name = strdup("mal");
		node_submit(ana, q);
		a = nodes_wait(ana, NODE_ADMIN, 5000);
		CHECK(a != NULL && a->code == 0);
		node_msg_free(a);
	}
	hand_run(&mal->h, 300);
	CHECK(hand_dial(&mal->h, &at, ana_pk));
	forge_epoch(mal, ana_pk, mal->h.id->pk);
	for (int i = 0; i < 50; i++) {
		hand_run(&mal->h, 100);
		s = nodes_request(ana, node_msg_new(NODE_STATUS), 5000);
		if (s != NULL && cJSON_GetObjectItem(s, "epoch")->valuedouble == 1)
			break;
		cJSON_Delete(s);
		s = NULL;
	}
	CHECK(s != NULL);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(s, "removed")), 1);
	cJSON_Delete(s);

	hand_free(&mal->h);
	hand_free(&mole->h);
	free(mal);
	free(mole);
	loop_free(l);
	node_stop(bo);
	node_stop(ana);
	free(inv);
	CHECK_EQ_INT(check_rmtree(root), 0);
	return check_exit();
}
