/*
 * room.c: the room, on the node thread (room.h; docs/PROTOCOL.md,
 * "Gossip").  It makes the room's parts and frees them, and takes the
 * events of the room's connections from the net: it greets each with
 * hello and peers, keeps one connection per member, hands each frame
 * received to its part (member.c, dial.c and presence.c keep the
 * members, deliver.c and its parts the messages, role.c and epoch.c the
 * room's governance), answers status (the other requests go to their
 * parts by node/roomset.c's table), and is the glue to punch.c,
 * beacon.c and reach.c.  It never blocks: the only waits are loop
 * timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/deliver.h"
#include "node/room/files.h"
#include "node/room/presence.h"
#include "node/room/room.h"
#include "node/room/search.h"

#define BAD_FRAMES_MAX 3
/* A connection that has carried nothing for this long (both ends ping
 * every 1.5 s) is no longer the member's path: a new one replaces it. */
#define ROOM_SILENT_MS 3500u


/*
 * A copy of a message we hold already, seen before it is decoded: it is
 * dropped unread, as deliver_on_msg would drop it after decoding and
 * checking it, unless its author sends it (then our ack was lost, and
 * the ack takes the decoded message).  Only a greeted link's frames:
 * before the hello, anything but a hello closes the connection.
 */
struct room_peek {
	struct room *room;
	const struct link *l;
};

static int
room_held(const char *json, size_t len, void *arg)
{
	const struct room_peek *pk = arg;
	char id[PAPO_MSGID_LEN + 1], from[PAPO_ID_LEN + 1];
	char peer[PAPO_ID_LEN + 1];

	if (pk->l->m == NULL || !frame_peek_msg(json, len, id, from) ||
	    !store_has(pk->room->env.store, id))
		return 0;
	sec_id_format(quic_peer(pk->l->qc), peer);
	return strcmp(from, peer) != 0;
}

/*
 * Whether l's member vouches for f, whose signature then goes unchecked:
 * an ack signed by the member at the other end of l (its key proven by
 * the connection's TLS handshake) of a message of ours, so that it ends
 * here.  Acks passed on, and every other frame, are checked.
 */
static int
room_vouched(struct room *room, const struct link *l, const struct frame *f)
{
	uint8_t from[PAPO_KEY_LEN];

	return f->type == FRAME_ACK && l->m != NULL &&
	    memcmp(f->u.ack.by, quic_peer(l->qc), PAPO_KEY_LEN) == 0 &&
	    upstream_author(room, f->u.ack.id, from) == 0 &&
	    memcmp(from, room->env.me->pk, PAPO_KEY_LEN) == 0;
}

/* Opens a frame received on l: version 3's with the key of the epoch its
 * envelope names (FRAME_ERR_SEAL when we hold no such epoch), a copy of
 * a message held already left unread (FRAME_ERR_SKIPPED). */
static enum frame_err
room_unseal(struct room *room, const struct link *l, const uint8_t *p,
    size_t n, struct frame *f)
{
	const struct room_keys *k;
	struct room_peek pk = { room, l };
	enum frame_err e;
	uint32_t epoch;

	if (l->version < 3)
		return frame_open(room->env.keys, p, n, frame_flags(l->version), f);
	memset(f, 0, sizeof(*f));
	if (n > PAPO_FRAME_MAX)
		return FRAME_ERR_TOO_BIG;
	if (frame_envelope_epoch(p, n, &epoch) == -1)
		return FRAME_ERR_SEAL;
	if ((k = keyring_keys(room->keyring, epoch)) == NULL) {
		room_log(room, LOG_INFO, "a frame sealed under epoch %u, which this "
		    "member does not hold", (unsigned)epoch);
		return FRAME_ERR_SEAL;
	}
	if ((e = frame_open_epoch_peek(k, p, n, frame_flags(l->version) |
	    FRAME_VERIFY_LATER, room_held, &pk, f)) != FRAME_OK)
		return e;
	if (!room_vouched(room, l, f) && (e = frame_verify(k, f)) != FRAME_OK)
		frame_clear(f);
	return e;
}

/* Requests. */

/* Status: the room, and this member as the net sees it. */
static void
room_status_me(const struct room *room, cJSON *o)
{
	cJSON *me, *addrs;
	char rid[PAPO_ROOMID_LEN + 1], id[PAPO_ID_LEN + 1], a[ADDR_STRLEN];
	struct addr adv[PAPO_ADDR_MAX], pub;
	size_t n;

	sec_room_id_format(room->env.keys, rid);
	cJSON_AddStringToObject(o, "room", room->env.room->name);
	cJSON_AddStringToObject(o, "room_id", rid);
	me = cJSON_AddObjectToObject(o, "me");
	cJSON_AddStringToObject(me, "name", room->env.room->me);
	sec_id_format(room->env.me->pk, id);
	cJSON_AddStringToObject(me, "id", id);
	cJSON_AddStringToObject(me, "about", room->env.room->about);
	cJSON_AddStringToObject(me, "role", role_of(room, room->env.me->pk));
	addrs = cJSON_AddArrayToObject(me, "addrs");
	n = reach_addrs(net_reach(room->net), adv, PAPO_ADDR_MAX);
	for (size_t i = 0; i < n; i++) {
		addr_format(&adv[i], a);
		cJSON_AddItemToArray(addrs, cJSON_CreateString(a));
	}
	if (reach_public(net_reach(room->net), &pub) == 0) {
		addr_format(&pub, a);
		cJSON_AddStringToObject(me, "observed", a);
	} else
		cJSON_AddNullToObject(me, "observed");
	cJSON_AddStringToObject(me, "nat",
	    reach_nat_name(reach_nat(net_reach(room->net))));
	relay_json(room->net, me);
}

/* Status: "punch" and "lan", the paths arranged through others and on
 * our link. */
static void
room_status_paths(const struct room *room, cJSON *o)
{
	struct punch_stats ps;
	cJSON *pj = cJSON_AddObjectToObject(o, "punch");

	punch_stats(room->punch, &ps);
	cJSON_AddNumberToObject(pj, "asked", (double)ps.asked);
	cJSON_AddNumberToObject(pj, "answered", (double)ps.answered);
	cJSON_AddNumberToObject(pj, "punched", (double)ps.punched);
	cJSON_AddNumberToObject(pj, "datagrams_sent", (double)ps.datagrams_sent);
	cJSON_AddNumberToObject(pj, "datagrams_ok", (double)ps.datagrams_ok);
	cJSON_AddNumberToObject(pj, "datagrams_bad", (double)ps.datagrams_bad);
	if (room->beacon != NULL) {
		uint64_t sent, heard, bad;
		cJSON *lj = cJSON_AddObjectToObject(o, "lan");

		beacon_counts(room->beacon, &sent, &heard, &bad);
		cJSON_AddNumberToObject(lj, "beacons_sent", (double)sent);
		cJSON_AddNumberToObject(lj, "beacons_heard", (double)heard);
		cJSON_AddNumberToObject(lj, "beacons_bad", (double)bad);
	} else
		cJSON_AddNullToObject(o, "lan");
}

/* Each part's fields of a member's entry in status, in this order. */
static member_status_part *const member_status_parts[] = {
	member_status_who,          /* name, id, about */
	role_member_json,           /* role */
	member_status_path,         /* online, direct, path, rtt_ms,
	                             * protocol, mtu, last_seen,
	                             * clock_offset_ms */
	deliver_member_json,        /* dropped */
};

/* Status: "members", each asking member_status_parts. */
static void
room_status_members(const struct room *room, cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "members");

	for (size_t i = 0; i < members_n(room); i++) {
		const struct member *m = member_at(room, i);
		cJSON *e;

		/* Refused at its hello (an old invite): not of the room. */
		if (m->refused)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		for (size_t k = 0; k < sizeof(member_status_parts) /
		    sizeof(member_status_parts[0]); k++)
			member_status_parts[k](room, m, e);
	}
}

/* Status: "quic", the address bound. */
static void
room_status_quic(const struct room *room, cJSON *o)
{
	char a[ADDR_STRLEN];

	addr_format(net_bound(room->net), a);
	cJSON_AddStringToObject(o, "quic", a);
}

/* Status is built by asking each part for its fields, in this order. */
static status_part *const status_parts[] = {
	room_status_me,           /* room, room_id, me */
	room_status_paths,        /* punch, lan */
	room_status_members,      /* members */
	role_json,                  /* owner, admins */
	epoch_json,                 /* epoch, removed, me.removed */
	deliver_status_json,        /* limits, damping, outbox, messages,
	                             * retention, syncs_asked */
	room_status_quic,         /* quic */
	files_status,               /* files */
};

void
room_status(struct room *room, struct node_msg *req)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; i < sizeof(status_parts) / sizeof(status_parts[0]);
	    i++)
		status_parts[i](room, o);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	room->env.emit(room->env.arg, req);
}

/* A room's line in the list of rooms, asked of each part likewise. */
static status_part *const summary_parts[] = {
	members_summary_json,       /* members, online */
	deliver_summary_json,       /* messages */
	epoch_summary_json,         /* refused */
};

void
room_renamed(struct room *room, const char *was)
{
	room_log(room, LOG_INFO, "this member is now %s (it was %s): its "
	    "members learn it as they are greeted", room->env.room->me, was);
	for (size_t i = 0; i < members_n(room); i++)
		if (member_at(room, i)->conn != NULL)
			hello_send(room, quic_data(member_at(room, i)->conn));
	members_announce_soon(room);
}

void
room_summary(const struct room *room, cJSON *o)
{
	for (size_t i = 0; i < sizeof(summary_parts) / sizeof(summary_parts[0]);
	    i++)
		summary_parts[i](room, o);
}

/* Frames received. */

/* Where our direct connection qc sees m now (member.h, seen_at): kept,
 * and peers.json written, when it changed. */
static void
room_seen_at(struct room *room, struct member *m, struct quic_conn *qc)
{
	if (m->has_seen_at && addr_equal(&m->seen_at, quic_remote(qc)))
		return;
	m->seen_at = *quic_remote(qc);
	m->has_seen_at = 1;
	members_save_later(room);
}

/* Each part's share of a hello, in this order (core.h, "How the parts
 * take what comes in"). */
static hello_hook *const hello_hooks[] = {
	members_on_hello,           /* its record, dialling, presence */
	role_on_hello,              /* the owner; grants it lacks */
	epoch_on_hello,             /* epoch frames it lacks: before any
	                             * frame sealed under them */
	members_hello_peers,        /* whom we know, and it to the others */
	deliver_on_hello,           /* sync if histories differ; outbox */
	files_on_hello,             /* what we fetch, asked of it too */
};

/* A member whose hello arrived on l: keep one connection per pair, then
 * the hooks. */
static void
room_on_hello(struct room *room, struct link *l, struct frame *f)
{
	const struct frame_hello *h = &f->u.hello;
	const uint8_t *peer = quic_peer(l->qc);
	struct hello_in in;
	struct member *m;
	int fresh, punched, is_new;
	int relayed = quic_is_relayed(l->qc);      /* through our relay */
	int both = relay_both_ends(room->net, l->qc);  /* and it knows */

	if (memcmp(h->id, peer, PAPO_KEY_LEN) != 0 || h->version != l->version) {
		room_log(room, LOG_WARN, "a peer's hello does not match its key or "
		    "the protocol version agreed: closing");
		quic_close(l->qc);
		return;
	}
	if (epoch_refuse(room, l, h))
		return;
	fresh = member_find(room, peer) == NULL;
	if ((m = member_add(room, peer)) == NULL) {
		quic_close(l->qc);
		return;
	}
	m->refused = 0;   /* it greets under a key of ours now */
	is_new = m->conn != l->qc;
	if (m->conn != NULL && m->conn != l->qc) {
		/* Both dialled at once: keep the connection opened by the
		 * member with the smaller id, so both ends keep the same.  But
		 * a path of our own beats the relay, whoever opened it: both
		 * ends see both connections greet, and keep the same one. */
		int mine_new = quic_is_client(l->qc);
		int mine_old = quic_is_client(m->conn);
		int me_smaller = memcmp(room->env.me->pk, peer, PAPO_KEY_LEN) < 0;
		int both_old = relay_both_ends(room->net, m->conn);

		room_log(room, LOG_DEBUG, "two connections with %s (new mine %d, old "
		    "mine %d, me smaller %d, new relayed %d, old relayed %d)",
		    h->name, mine_new, mine_old, me_smaller, both, both_old);
		if (quic_silent_ms(m->conn) > ROOM_SILENT_MS) {
			/* The old one carries nothing: its peer restarted,
			 * or its path died; the new one is what works. */
			struct quic_conn *old = m->conn;

			room_log(room, LOG_INFO, "%s: a new connection replaces a "
			    "silent one", h->name);
			member_set_conn(room, m, l->qc);
			quic_close(old);
		} else if (both_old && !both) {
			struct quic_conn *old = m->conn;

			room_log(room, LOG_INFO, "%s: a direct path replaces the relay",
			    h->name);
			member_set_conn(room, m, l->qc);
			quic_close(old);
		} else if (both && !both_old) {
			quic_close(l->qc);
			return;
		} else if (mine_new != mine_old && mine_new == me_smaller) {
			struct quic_conn *old = m->conn;

			member_set_conn(room, m, l->qc);
			quic_close(old);
		} else {
			quic_close(l->qc);
			return;
		}
	}
	l->m = m;
	/* What a connection is (punched, on the LAN) is said when it
	 * greets first; the greetings every 30 s keep it.  A relayed one
	 * leaves a punch under way alone: it is what the punch is for. */
	punched = relayed ? 0 : punch_done(room->punch, peer);
	if (is_new) {
		m->punched = punched;
		/* A LAN: a private address on one of our links (two public
		 * hosts on one switch are simply direct). */
		m->lan = !relayed && addr_is_private(quic_remote(l->qc)) &&
		    addr_on_link(quic_remote(l->qc));
		/* Open: it took a connection we started, not punched, or
		 * it greeted us from an address it advertises and has no
		 * private one (a member behind a NAT that keeps ports greets
		 * from its advertised public address too, but advertises
		 * its LAN address beside it).  Not learnt from the relay,
		 * which anyone can be reached through. */
		m->open |= !relayed && ((quic_is_client(l->qc) && !punched) ||
		    (addr_in(quic_remote(l->qc), h->addr, h->naddr) &&
		    !addrs_private(h->addr, h->naddr)));
		/* A new connection: announce ourselves at once rather than
		 * at the next round.  What this neighbour tells others of us
		 * carries the time of our latest announcement; until it has
		 * one, they cannot count us as alive, nor punch to us. */
		members_announce_soon(room);
	}
	member_set_conn(room, m, l->qc);
	quic_greeted(l->qc);
	if (!relayed)
		room_seen_at(room, m, l->qc);
	/* Where a peer sees us through the relay is our relayed address,
	 * nothing our NAT did. */
	if (h->version >= 2 && !relayed &&
	    reach_observe(net_reach(room->net), peer, &h->obs))
		net_addrs_changed(room->net);
	in.m = m;
	in.h = h;
	in.fresh = fresh;
	in.is_new = is_new;
	in.both = both;
	for (size_t i = 0; i < sizeof(hello_hooks) / sizeof(hello_hooks[0]); i++)
		hello_hooks[i](room, &in);
}

/* Carries a punch frame towards its addressee: straight to it when
 * connected, else through the member news of it came by, else through
 * every neighbour of version 2. */
static int
room_punch_relay(void *arg, const struct frame *f)
{
	struct room *room = arg;
	struct member *t = member_find(room, f->u.punch.to);
	int sent = 0;

	if (t == NULL)
		return -1;
	if (member_version(t) >= 2) {
		member_send(room, t, f);
		return 0;
	}
	if (t->via != NULL && member_version(t->via) >= 2) {
		member_send(room, t->via, f);
		return 0;
	}
	for (size_t i = 0; i < members_n(room); i++)
		if (member_version(member_at(room, i)) >= 2) {
			member_send(room, member_at(room, i), f);
			sent = 1;
		}
	return sent ? 0 : -1;
}

static void
room_punch_dial(void *arg, const uint8_t id[PAPO_KEY_LEN],
    const struct addr *a,
    size_t n, struct quic_sock *sock)
{
	struct room *room = arg;
	struct member *m = member_find(room, id);

	if (m != NULL && (m->conn == NULL || member_relayed(room, m)))
		member_dial_on(room, m, a, n, sock);
}

/* What we offer for a punch (reach.h), and where the TURN server sees
 * us: a cone NAT's mapping, the guess that matters when no member is
 * connected to both (the punch arranged over a relayed connection). */
static size_t
room_punch_addrs(void *arg, struct addr *out, size_t max, uint16_t port)
{
	struct room *room = arg;
	size_t n = reach_punch_addrs(net_reach(room->net), out, max), k = 0;
	struct addr a, relayed;

	if (net_turn(room->net) != NULL && turn_mapped(net_turn(room->net), &a) == 0 && n < max &&
	    !addr_in(&a, out, n))
		out[n++] = a;
	if (port == 0)
		return n;
	/* For a socket of the punch's own: the same hosts at its port (a
	 * NAT keeps a port where it can); not the relayed address, whose
	 * port is the TURN server's. */
	for (size_t i = 0; i < n; i++) {
		if (net_turn(room->net) != NULL && turn_relayed(net_turn(room->net), &relayed) == 0 &&
		    addr_equal(&out[i], &relayed))
			continue;
		out[k] = out[i];
		out[k].port = port;
		if (!addr_in(&out[k], out, k))
			k++;
	}
	return k;
}

/* A punch frame: ours to act on, or one to carry to a member we are
 * connected to (never back where it came from). */
static void
room_on_punch(struct room *room, struct link *l, struct frame *in)
{
	const struct frame_punch *p = &in->u.punch;
	struct member *to;
	struct frame f;

	if (memcmp(p->to, room->env.me->pk, PAPO_KEY_LEN) == 0) {
		if (member_find(room, p->from) != NULL)
			punch_frame(room->punch, p);
		return;
	}
	if ((to = member_find(room, p->to)) != NULL && to != l->m &&
	    member_version(to) >= 2) {
		memset(&f, 0, sizeof(f));
		f.type = FRAME_PUNCH;
		f.u.punch = *p;
		member_send(room, to, &f);
	}
}

/* LAN discovery (beacon.h): beacons go out while a member we know is
 * not connected (or through the relay only); one heard is dialled at once (every 5 s at most),
 * whether we knew of that member or not: it holds the room key. */
static int
room_beacon_wanted(void *arg)
{
	struct room *room = arg;

	for (size_t i = 0; i < members_n(room); i++)
		if ((member_at(room, i)->conn == NULL ||
		    member_relayed(room, member_at(room, i))) && !member_at(room, i)->left)
			return 1;
	return 0;
}

static void
room_beacon_heard(void *arg, const uint8_t id[PAPO_KEY_LEN],
    const struct addr *at)
{
	struct room *room = arg;
	struct member *m = member_add(room, id);
	uint64_t now = loop_now_ns();

	if (m == NULL || m->refused ||
	    (m->conn != NULL && !member_relayed(room, m)) ||
	    (m->beacon_dial != 0 && now < m->beacon_dial + BEACON_EVERY_NS))
		return;
	m->beacon_dial = now;
	/* Its LAN address first among those we try. */
	if (!addr_in(at, m->addr, m->naddr)) {
		struct addr v[PAPO_ADDR_MAX];
		size_t n = m->naddr < PAPO_ADDR_MAX ? m->naddr :
		    PAPO_ADDR_MAX - 1;

		v[0] = *at;
		if (n > 0)
			memcpy(v + 1, m->addr, n * sizeof(v[0]));
		member_set_addrs(m, v, n + 1);
	}
	room_log(room, LOG_DEBUG, "a beacon of %s: dialling it on the LAN", m->idtext);
	member_dial_at(room, m, at, 1);
}

/* A connection's events (net.c hands each to the room of its link). */

/* Who takes a frame of each type (core.h, "How the parts take what
 * comes in"). */
static frame_handler *const frame_handlers[] = {
	[FRAME_HELLO] = room_on_hello,
	[FRAME_MSG] = deliver_on_msg,
	[FRAME_ACK] = deliver_on_ack,
	[FRAME_PEERS] = members_on_peers,
	[FRAME_SYNC] = deliver_on_sync,
	[FRAME_BYE] = members_on_bye,
	[FRAME_PUNCH] = room_on_punch,
	[FRAME_ADMIN] = role_on_admin,
	[FRAME_EPOCH] = epoch_on_frame,
};

/* A frame that opened on l, a link of the room's. */
static void
room_link_take(struct room *room, struct link *l, struct frame *f)
{
	if (l->m == NULL && f->type != FRAME_HELLO) {
		frame_clear(f);
		quic_close(l->qc);
		return;
	}
	if (l->m != NULL)
		l->m->seen = loop_wall_ms();
	if ((size_t)f->type < sizeof(frame_handlers) / sizeof(frame_handlers[0]) &&
	    frame_handlers[f->type] != NULL)
		frame_handlers[f->type](room, l, f);
	frame_clear(f);
}

static void
room_link_frame(struct room *room, struct link *l, const uint8_t *p,
    size_t n)
{
	struct frame f;
	enum frame_err e;

	if ((e = room_unseal(room, l, p, n, &f)) == FRAME_ERR_SKIPPED) {
		l->m->seen = loop_wall_ms();
		return;
	}
	if (e != FRAME_OK) {
		room->bad_frames++;
		room_log(room, LOG_WARN, "dropped a frame from %s: %s",
		    l->m != NULL ? l->m->name : "a peer not yet greeted",
		    frame_strerror(e));
		if (l->m != NULL && l->version >= 3)
			epoch_unopened(room, l, p, n);
		/* A member of this room greets first; anything else that
		 * does not open is not one of us. */
		if (l->m == NULL || ++l->bad >= BAD_FRAMES_MAX)
			quic_close(l->qc);
		return;
	}
	room_link_take(room, l, &f);
}

static int
room_link_adopt(struct room *room, struct link *l, const uint8_t *p,
    size_t n)
{
	struct frame f;

	if (room->stopping || room_unseal(room, l, p, n, &f) != FRAME_OK)
		return 0;
	if (f.type != FRAME_HELLO) {
		frame_clear(&f);
		return 0;
	}
	l->room = room;
	hello_send(room, l);
	room_link_take(room, l, &f);
	return 1;
}

/* QUIC moved a connection to the peer's new address (its NAT's mapping
 * moved, or it changed networks): it is greeted again at once, so that
 * it learns where it is seen now (the hello's observed address) and
 * advertises and punches from there. */
static void
room_link_moved(struct room *room, struct link *l)
{
	if (l->m == NULL || l->m->conn != l->qc)
		return;
	room_seen_at(room, l->m, l->qc);
	hello_send(room, l);
}

/* l's connection is gone; l is freed by the caller after. */
static void
room_link_closed(struct room *room, struct link *l)
{
	struct quic_conn *qc = l->qc;
	struct member *m;

	room_log(room, LOG_DEBUG, "connection %s %s%s closed", l->m != NULL ?
	    l->m->name : "(not greeted)", quic_is_client(qc) ? "out" : "in",
	    quic_is_relayed(qc) ? " (relayed)" : "");
	if (quic_is_relayed(qc))
		relay_check(room->net);
	if ((m = l->m) != NULL && m->conn == qc) {
		member_set_conn(room, m, NULL);
		m->punched = 0;
		if (reach_forget(net_reach(room->net), m->id))
			net_addrs_changed(room->net);
		/* In a small room every member is a neighbour: a connection
		 * lost without a new one means the member is gone, until
		 * news of its life comes through others.  Our own goes out
		 * now: the member may be alive and have lost only this path,
		 * and the news tells it (through others) to punch a new one. */
		if (members_small(room)) {
			m->alive_until = 0;
			if (!room->stopping)
				members_announce_soon(room);
		}
		/* Soon, also when only its direct addresses were planned
		 * (the relay's 30 s). */
		if (m->next_dial == 0 || quic_is_relayed(qc))
			m->next_dial = loop_now_ns() + NS_PER_S;
		members_presence_check(room);
		if (!room->stopping)
			files_link_closed(room, l);
	}
	if (l->target != NULL) {
		m = l->target;
		m->ndial--;
		if (m->ndial == 0 && m->conn == NULL) {
			/* Every address failed: wait longer each time. */
			m->backoff_ms = m->backoff_ms == 0 ? DIAL_BACKOFF_MIN_MS :
			    m->backoff_ms * 2;
			if (m->backoff_ms > DIAL_BACKOFF_MAX_MS)
				m->backoff_ms = DIAL_BACKOFF_MAX_MS;
			if (m->next_dial == 0 || m->next_dial < loop_now_ns())
				m->next_dial = loop_now_ns() +
				    (uint64_t)m->backoff_ms * NS_PER_MS;
		}
	}
	members_plan_dials(room);
	members_punch_check(room);
}

/* Start and stop. */

struct room *
room_new(char err[PAPO_ERR_LEN], const struct room_env *env)
{
	struct net *t = env->net;
	struct punch_env pe;
	struct room *room;
	const struct room_file *r = env->room;

	if (net_rooms_full(t)) {
		snprintf(err, PAPO_ERR_LEN, "this daemon holds %d rooms, the "
		    "most it can", PAPO_ROOMS_MAX);
		return NULL;
	}
	if ((room = calloc(1, sizeof(*room))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	room->env = *env;
	room->member_back = deliver_member_back;
	room->net = t;
	sec_room_id_format(env->keys, room->rid);
	memset(&pe, 0, sizeof(pe));
	pe.loop = env->loop;
	pe.quic = net_quic(t);
	pe.keys = env->keys;
	pe.me = env->me;
	pe.arg = room;
	pe.relay = room_punch_relay;
	pe.dial = room_punch_dial;
	pe.addrs = room_punch_addrs;
	if ((room->punch = punch_new(&pe)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	/* No beacons from a daemon bound to loopback: nobody on the LAN
	 * could reach the port they would announce. */
	if (env->set->lan && !addr_is_loopback(net_bound(t))) {
		struct beacon_env be;
		char why[PAPO_ERR_LEN];

		memset(&be, 0, sizeof(be));
		be.loop = env->loop;
		be.keys = env->keys;
		be.me = env->me;
		be.port = net_bound(t)->port;
		be.arg = room;
		be.wanted = room_beacon_wanted;
		be.heard = room_beacon_heard;
		if ((room->beacon = beacon_new(why, &be)) == NULL)
			room_log(room, LOG_WARN, "LAN discovery is off: %s", why);
	}
	if ((room->keyring = keyring_new()) == NULL || members_new(room) == -1 ||
	    dial_new(room) == -1 || presence_new(room) == -1 ||
	    role_new(room) == -1 || epoch_new(room) == -1 || deliver_new(room) == -1 ||
	    files_new(room) == -1 || search_new(room) == -1) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if ((room->limit = limit_new(&env->set->rate, &env->set->damp,
	    env->set->rate_self_off)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	epoch_load(room);
	members_load(room);
	epoch_mark(room);
	role_load(room);
	if (r->has_inviter) {
		struct member *m = member_add(room, r->inviter);

		/* The invite's addresses are a last resort next to what the
		 * members told us since. */
		if (m != NULL && m->naddr == 0)
			member_set_addrs(m, r->boot, r->nboot);
	}
	for (size_t i = 0; i < members_n(room); i++)
		member_at(room, i)->next_dial = loop_now_ns();
	deliver_load_outbox(room);
	net_room_add(t, room);
	dial_start(room);
	presence_start(room);
	deliver_start(room);
	search_watch(room);
	return room;
fail:
	room_free(room);
	return NULL;
}

/* Whether qc is a connection of the room arg (quic_close_some). */
static int
room_owns(void *arg, struct quic_conn *qc)
{
	const struct link *l = quic_data(qc);

	return l != NULL && l->room == arg;
}

void
room_free(struct room *room)
{
	struct net *t;
	struct frame f;

	if (room == NULL)
		return;
	t = room->net;
	/* A room half made (room_new failed) has no one to say bye to. */
	if (room->presence != NULL) {
		memset(&f, 0, sizeof(f));
		f.type = FRAME_BYE;
		f.u.bye.ts = members_next_seq(room);
		if (frame_bye_sign(&f.u.bye, room->env.keys, room->env.me) == -1)
			memcpy(f.u.bye.id, room->env.me->pk, PAPO_KEY_LEN);
		members_flood(room, &f, NULL);
	}
	/* A send still waiting for acks is stored and stays in the
	 * outbox: it is answered as queued, "stopping" (outbox.c), never
	 * as failed, so that no client sends it twice. */
	room->stopping = 1;
	deliver_stop(room);
	if (members_n(room) > 0)
		members_save(room);
	/* The byes queued above go out and the room's connections close,
	 * the relayed ones through the relay. */
	quic_close_some(net_quic(t), room_owns, room);
	net_room_remove(t, room);
	search_free(room);
	files_free(room);
	deliver_free(room);
	presence_free(room);
	dial_free(room);
	members_free(room);
	punch_free(room->punch);
	beacon_free(room->beacon);
	limit_free(room->limit);
	epoch_free(room);
	role_free(room);
	keyring_free(room->keyring);
	free(room);
}

/* What we advertise changed: the invite, and the members hear it now,
 * not at the next round. */
static void
room_addrs_changed(struct room *room)
{
	room_invite_changed(room);
	if (!room->stopping)
		members_announce_soon(room);
}

static int
room_datagram(struct room *room, const struct addr *from, const uint8_t *p,
    size_t n)
{
	return punch_datagram(room->punch, from, p, n);
}

const struct net_ops room_net_ops = {
	.invite_changed = room_invite_changed,
	.addrs_changed = room_addrs_changed,
	.relay_ready = members_relay_ready,
	.relay_lost = members_relay_lost,
	.peer_addrs = members_addrs,
	.datagram = room_datagram,
	.hello = hello_send,
	.frame = room_link_frame,
	.adopt = room_link_adopt,
	.moved = room_link_moved,
	.closed = room_link_closed,
	.bulk = files_bulk,
	.bulk_room = files_bulk_room,
};

uint32_t
room_epoch(const struct room *room, uint8_t secret[PAPO_KEY_LEN])
{
	uint32_t n = keyring_newest(room->keyring);

	memcpy(secret, keyring_find(room->keyring, n)->secret, PAPO_KEY_LEN);
	return n;
}
