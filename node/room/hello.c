/*
 * hello.c: this member's hello, the first frame on every connection and
 * the anti-entropy greeting (docs/PROTOCOL.md, "hello"): who we are,
 * where we are reached and how the peer is seen, the room's roles and
 * newest epoch (version 3), and how much history we hold, so that the
 * peer asks for what it misses.  Above role.c and the keyring,
 * below outbox.c, which greets again to resync.
 */
#include <string.h>

#include "node/room/hello.h"
#include "node/room/role.h"

void
hello_send(struct room *room, struct link *l)
{
	struct frame f;
	struct frame_hello *h = &f.u.hello;
	struct store_stats st;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_HELLO;
	h->version = l->version;
	memcpy(h->id, room->env.me->pk, PAPO_KEY_LEN);
	strcpy(h->name, room->env.room->me);
	strcpy(h->about, room->env.room->about);
	h->naddr = reach_addrs(net_reach(room->net), h->addr, PAPO_ADDR_MAX);
	/* Version 2: where we see the peer, so that it learns how it is
	 * reached from outside. */
	if (l->version >= 2)
		h->obs = *quic_remote(l->qc);
	if (l->version >= 3) {
		role_hello(room, h);
		h->epoch = keyring_newest(room->keyring);
	}
	store_stats(room->env.store, &st);
	h->msgs = st.msgs;
	store_digest(room->env.store, h->digest);
	room_send_link(room, l, &f);
}
