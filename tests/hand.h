/*
 * hand.h: a member speaking the protocol by hand over real QUIC, for the
 * unit tests that play a forger or a peer against real nodes
 * (test_presence, test_deliver).  It joins with an invite, so it holds
 * the room key; it dials, greets, seals and opens frames as its
 * connection's version wants, and runs its own loop in slices while the
 * nodes run on their threads.  What it does with the frames it gets is
 * the test's: the test's quic callbacks call hand_greet and hand_lost.
 */
#ifndef PAPO_TESTS_HAND_H
#define PAPO_TESTS_HAND_H

#include "lib/loop.h"
#include "node/net/quic.h"
#include "node/wire/frame.h"
#include "tests/nodes.h"

struct hand {
	const char *name;
	struct identity *id;
	const struct room_keys *keys;
	struct quic *q;
	struct quic_conn *c;        /* NULL while not connected */
	unsigned version;           /* its connection's */
	int greeted;
	struct loop *l;
	struct loop_timer *slice;   /* ends a slice of the loop */
};

/* What a member speaking by hand needs of the node n, whose home is
 * home: its room's keys, its id and its QUIC address.  -1 (the reason
 * printed) when one cannot be read. */
int hand_room_of(struct node *n, const char *home, struct room_keys *keys,
    uint8_t pk[PAPO_KEY_LEN], struct addr *at);
/* A member joined in root/name with invite, its QUIC of version on l
 * (bound to 127.0.0.1) calling cbs with arg.  Aborts when it cannot. */
void hand_init(struct hand *h, const char *root, const char *name,
    const char *invite, unsigned version, const struct room_keys *keys,
    struct loop *l, const struct quic_cbs *cbs, void *arg);
void hand_free(struct hand *h);
/* The open callback's work: c is h's connection; h sends its hello. */
void hand_greet(struct hand *h, struct quic_conn *c);
/* The closed callback's work: c is no longer h's connection. */
void hand_lost(struct hand *h, struct quic_conn *c);
/* Seals fr as h's connection's version wants and sends it (a line on
 * stderr when it cannot). */
void hand_send(struct hand *h, const struct frame *fr);
/* Opens what h's connection delivered; FRAME_OK and fr to clear. */
enum frame_err hand_open(struct hand *h, const uint8_t *p, size_t n,
    struct frame *fr);
/* A msg with text in m (to clear), signed by who, named name; its
 * signature spoilt when forged. */
void hand_msg(struct frame *m, const struct room_keys *keys,
    const struct identity *who, const char *name, const char *text,
    int forged);
/* Runs h's loop for ms. */
void hand_run(struct hand *h, int ms);
/* Dials the node at at (its key pk) on a new connection and runs until
 * greeted: 1, or 0 after 5 s. */
int hand_dial(struct hand *h, const struct addr *at,
    const uint8_t pk[PAPO_KEY_LEN]);
/* Runs h's loop until n's history has text: 1, or 0 after 10 s. */
int hand_until_has(struct hand *h, struct node *n, const char *text);
/* Sends h's own message with text and runs until n has it: every frame
 * h sent before is taken by then (one stream, in order). */
int hand_sync(struct hand *h, struct node *n, const char *text);

#endif
