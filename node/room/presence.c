/*
 * presence.c: presence and the members we hear of, on the node thread
 * (presence.h; docs/PROTOCOL.md, "Gossip").  It tells the program when a
 * member goes online or offline, announces this member, and takes
 * hellos, peers and byes into the member table, passing news on once;
 * what they change it hands to dialling (dial.h).  It never blocks: the
 * only waits are loop timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/presence.h"

/* Its timers, the members whose life runs out, and our announcements'
 * counter. */
struct presence {
	struct loop_timer *presence_timer;
	struct loop_timer *announce_timer;
	/* The members online through others only, a binary heap on
	 * alive_until (m->heap_at: its place plus 1, 0 none): the presence
	 * timer wakes for the first, and news of one member moves that one
	 * alone. */
	struct member **heap;
	size_t nheap, cap;
	uint64_t own_seq;           /* our last announcement's or bye's
	                             * counter: wall ms, never going back */
};

static void
member_presence(struct room *room, struct member *m)
{
	cJSON *o = cJSON_CreateObject();
	char nb[16];

	cJSON_AddStringToObject(o, "id", m->idtext);
	cJSON_AddStringToObject(o, "name", member_name(m, nb));
	cJSON_AddBoolToObject(o, "online", m->shown_online);
	cJSON_AddNumberToObject(o, "last_seen", (double)m->seen);
	room_emit_json(room, NODE_EV_PRESENCE, o);
	room_log(room, LOG_INFO, "%s is %s", member_name(m, nb),
	    m->shown_online ? "online" : "offline");
}

/* The heap of deadlines. */

static void
heap_put(struct presence *s, size_t i, struct member *m)
{
	s->heap[i] = m;
	m->heap_at = (uint32_t)i + 1;
}

static void
heap_up(struct presence *s, size_t i)
{
	struct member *m = s->heap[i];

	while (i > 0 && s->heap[(i - 1) / 2]->alive_until > m->alive_until) {
		heap_put(s, i, s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(s, i, m);
}

static void
heap_down(struct presence *s, size_t i)
{
	struct member *m = s->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap &&
		    s->heap[c + 1]->alive_until < s->heap[c]->alive_until)
			c++;
		if (s->heap[c]->alive_until >= m->alive_until)
			break;
		heap_put(s, i, s->heap[c]);
		i = c;
	}
	heap_put(s, i, m);
}

/* m in the heap at its alive_until now: -1 out of memory (it is then
 * looked at again only by the next check of every member). */
static int
heap_set(struct presence *s, struct member *m)
{
	struct member **v;

	if (m->heap_at == 0) {
		if (s->nheap == s->cap) {
			size_t cap = s->cap == 0 ? 16 : s->cap * 2;

			if ((v = realloc(s->heap, cap * sizeof(*v))) == NULL)
				return -1;
			s->heap = v;
			s->cap = cap;
		}
		heap_put(s, s->nheap++, m);
	}
	heap_up(s, m->heap_at - 1);
	heap_down(s, m->heap_at - 1);
	return 0;
}

static void
heap_drop(struct presence *s, struct member *m)
{
	size_t i = m->heap_at - 1;

	if (m->heap_at == 0)
		return;
	m->heap_at = 0;
	if (i == --s->nheap)
		return;
	heap_put(s, i, s->heap[s->nheap]);
	heap_up(s, i);
	heap_down(s, s->heap[i]->heap_at - 1);
}

/* The presence timer: when the first member online through others
 * would fall silent. */
static void
presence_arm(struct room *room)
{
	struct presence *s = room->presence;

	loop_timer_set(s->presence_timer, s->nheap > 0 ?
	    s->heap[0]->alive_until : 0);
}

/* Tells the program if m's presence changed, and keeps its place in
 * the heap. */
static void
member_presence_update(struct room *room, struct member *m)
{
	int on = member_online(room, m);

	if (on != m->shown_online) {
		m->shown_online = on;
		member_presence(room, m);
		/* Back through others: what waits for it goes now, and our
		 * announcements go every 3 s from now (member.h,
		 * ANNOUNCE_FAST_NS), the first at once. */
		if (on && m->conn == NULL) {
			room->member_back(room, m);
			if (members_small(room))
				loop_timer_set(room->presence->announce_timer, 1);
		}
	}
	/* Only life shown through others runs out: a member with a
	 * connection of ours stays online until it closes, whatever its
	 * alive_until (then long past, a timer that would fire at once,
	 * again and again). */
	if (on && m->conn == NULL)
		heap_set(room->presence, m);
	else
		heap_drop(room->presence, m);
}

void
members_presence_check(struct room *room)
{
	for (size_t i = 0; i < members_n(room); i++)
		member_presence_update(room, member_at(room, i));
	presence_arm(room);
}

void
member_presence_touch(struct room *room, struct member *m)
{
	member_presence_update(room, m);
	presence_arm(room);
}

/* Those whose life ran out, each once: an update leaves a member
 * offline out of the heap, or one still online further down. */
static void
members_presence_timer(void *arg)
{
	struct room *room = arg;
	struct presence *s = room->presence;
	uint64_t now = loop_now_ns();

	while (s->nheap > 0 && s->heap[0]->alive_until <= now) {
		struct member *m = s->heap[0];

		heap_drop(s, m);
		member_presence_update(room, m);
	}
	presence_arm(room);
}

/* Announcing this member. */

/* Our next announcement's (or bye's) counter: the wall clock's ms, and
 * always more than the last, so that receivers, which take only what is
 * newer, take it even when the clock went back. */
uint64_t
members_next_seq(struct room *room)
{
	uint64_t now = loop_wall_ms();

	room->presence->own_seq = now > room->presence->own_seq ? now :
	    room->presence->own_seq + 1;
	return room->presence->own_seq;
}

/* How long to the next announcement (member.h, ANNOUNCE_FAST_NS). */
static uint64_t
members_announce_ns(const struct room *room)
{
	if (!members_small(room))
		return ANNOUNCE_NS;
	for (size_t i = 0; i < members_n(room); i++) {
		const struct member *m = member_at(room, i);

		if (m->conn == NULL && !m->left && member_online(room, m))
			return ANNOUNCE_FAST_NS;
	}
	return ANNOUNCE_NS;
}

/* Floods this member's own entry: the announcement that shows life. */
static void
members_announce(void *arg)
{
	struct room *room = arg;
	struct frame_peer me;
	struct frame f;

	net_round(room->net);
	memset(&me, 0, sizeof(me));
	memcpy(me.id, room->env.me->pk, PAPO_KEY_LEN);
	strcpy(me.name, room->env.room->me);
	strcpy(me.about, room->env.room->about);
	me.seen = members_next_seq(room);
	me.naddr = reach_addrs(net_reach(room->net), me.addr, PAPO_ADDR_MAX);
	/* Signed for connections of version 3; the others get it as
	 * before (members_flood). */
	if (frame_peer_sign(&me, room->env.keys, room->env.me) == -1)
		room_log(room, LOG_WARN, "could not sign our announcement");
	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.n = 1;
	f.u.peers.v = &me;
	members_flood(room, &f, NULL);
	loop_timer_set(room->presence->announce_timer, loop_now_ns() +
	    members_announce_ns(room));
	members_punch_check(room);
}

void
members_announce_soon(struct room *room)
{
	loop_timer_set(room->presence->announce_timer, 1);
}

/* Start and stop. */

int
presence_new(struct room *room)
{
	struct presence *s;
	struct loop *loop = room->env.loop;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	room->presence = s;
	if ((s->presence_timer = loop_timer_new(loop, members_presence_timer,
	    room)) == NULL ||
	    (s->announce_timer = loop_timer_new(loop, members_announce,
	    room)) == NULL)
		return -1;
	return 0;
}

void
presence_start(struct room *room)
{
	loop_timer_set(room->presence->announce_timer, loop_now_ns() + ANNOUNCE_NS);
}

void
presence_free(struct room *room)
{
	struct presence *s = room->presence;

	if (s == NULL)
		return;
	loop_timer_free(s->presence_timer);
	loop_timer_free(s->announce_timer);
	free(s->heap);
	free(s);
	room->presence = NULL;
}

/* Hellos, peers and byes: the members we hear of. */

/* Sends the members we know (all, or just one) to a member, in frames of
 * at most FRAME_PEERS_MAX. */
static void
members_send_peers(struct room *room, struct member *to, struct member *only)
{
	struct frame f;
	struct frame_peer v[FRAME_PEERS_MAX];

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.v = v;
	for (size_t i = 0; i <= members_n(room); i++) {
		struct member *m = i < members_n(room) ? member_at(room, i) : NULL;

		/* A member that said bye is left out: its entry carries
		 * the time of its last announcement, which a member that had
		 * not heard of it would take for life.  So is a removed
		 * one, or one refused at its hello: alive to no one. */
		if (m != NULL && (m->removed || m->refused))
			continue;
		if (m != NULL && m != to && (only == NULL || m == only) &&
		    m->name[0] != '\0' && !m->left && m->ann != NULL) {
			/* Its own words, as it signed them: the only entry
			 * a connection of version 3 takes. */
			member_ann_get(m, &v[f.u.peers.n++]);
		} else if (m != NULL && m != to && (only == NULL || m == only) &&
		    m->name[0] != '\0' && !m->left) {
			struct frame_peer *p = &v[f.u.peers.n++];

			memset(p, 0, sizeof(*p));
			memcpy(p->id, m->id, PAPO_KEY_LEN);
			strcpy(p->name, m->name);
			strcpy(p->about, m->about);
			/* Its own clock's time, so that what we pass on is
			 * never newer than what it said itself. */
			p->seen = m->announced;
			p->naddr = m->naddr;
			if (m->naddr > 0)
				memcpy(p->addr, m->addr, m->naddr * sizeof(m->addr[0]));
		}
		if (f.u.peers.n > 0 && (f.u.peers.n == FRAME_PEERS_MAX || m == NULL)) {
			member_send(room, to, &f);
			f.u.peers.n = 0;
		}
	}
}

/* A hello taken on in->l: the member's record as it says (name, about,
 * addresses, life), its dialling as the connection makes it, peers.json,
 * the relay's permissions, neighbours and presence. */
void
members_on_hello(struct room *room, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;
	int both = in->both, is_new = in->is_new;

	strcpy(m->name, h->name);
	member_set_about(m, h->about);
	if (h->naddr > 0)
		member_set_addrs(m, h->addr, h->naddr);
	m->left = 0;
	member_alive(m);
	m->backoff_ms = 0;
	/* Reached through the relay only: its direct addresses are tried
	 * again every RELAY_REDIAL_NS (members_dial), the first time at
	 * once unless our dials of them are still under way (the relayed
	 * connection came of its dial, or ours gave up already). */
	if (!both)
		m->next_dial = 0;
	else if (is_new)
		m->next_dial = loop_now_ns() +
		    (member_dials(m) == 0 ? 0 : RELAY_REDIAL_NS);
	else if (m->next_dial == 0)
		m->next_dial = loop_now_ns() + RELAY_REDIAL_NS;
	members_save_later(room);
	if (h->naddr > 0)
		relay_permits(room->net);
	if (both)
		members_plan_dials(room);
	members_evict(room, m);
	/* A new connection changes whom others are reached through: every
	 * member is looked at again. */
	if (is_new)
		members_presence_check(room);
	else
		member_presence_touch(room, m);
}

/* A hello taken: tell its member whom we know, and tell the others about
 * it if new.  After the roles' and epochs' hooks: a member behind on
 * the key opens these only once the epoch frames reached it. */
void
members_hello_peers(struct room *room, const struct hello_in *in)
{
	struct member *m = in->m;
	int fresh = in->fresh;

	members_send_peers(room, m, NULL);
	if (fresh)
		for (size_t i = 0; i < members_active(room); i++)
			if (member_connected(room, i) != m)
				members_send_peers(room, member_connected(room, i), m);
}

/*
 * Members we hear of.  An entry newer (by its member's own clock) than
 * the last we took from that member is news: it counts as a sign of life
 * and is passed on to our other neighbours, once, which is how presence
 * and addresses cross a room where not everyone is connected.
 */
void
members_on_peers(struct room *room, struct link *l, struct frame *f)
{
	const struct frame_peers *ps = &f->u.peers;
	struct frame fwd;
	struct frame_peer v[FRAME_PEERS_MAX];
	int changed = 0, small = members_small(room);

	memset(&fwd, 0, sizeof(fwd));
	fwd.type = FRAME_PEERS;
	fwd.u.peers.v = v;
	for (size_t i = 0; i < ps->n; i++) {
		const struct frame_peer *p = &ps->v[i];
		struct member *m = member_find(room, p->id);
		int fresh = m == NULL;

		/* What a member says of itself (name, about, addresses,
		 * life) is taken only under its signature once it is known
		 * to sign; unsigned, only from itself, on its own
		 * (authenticated) connection.  The decoder checked every
		 * signature. */
		if (m != NULL && m->signs && !p->has_sig && m != l->m)
			continue;
		/* News of a removed member is none: not life, not passed
		 * on (a copy of its key may still announce itself). */
		if (keyring_removed(room->keyring, p->id) != NULL)
			continue;
		if (m == NULL && (m = member_add(room, p->id)) == NULL)
			continue;
		/* Only what is newer than the last taken: an entry
		 * replayed says nothing. */
		if (!fresh && p->seen <= m->announced)
			continue;
		m->announced = p->seen;
		member_announced(room, m);
		/* Its own announcement, made as it sent it, on its own
		 * connection: what its clock said then (papo doctor). */
		if (m == l->m && m->conn == l->qc)
			member_clock(m, p->seen);
		if (p->has_sig) {
			member_ann_set(m, p);
			m->signs = 1;
		}
		if (m->conn == NULL || fresh) {
			strcpy(m->name, p->name);
			member_set_about(m, p->about);
			if (p->naddr > 0)
				member_set_addrs(m, p->addr, p->naddr);
			if (m->conn == NULL && m->next_dial == 0)
				m->next_dial = loop_now_ns();
		}
		if (p->seen > m->left_at)
			m->left = 0;
		/* News of an old announcement (a member we had not heard of
		 * yet) is not life: clocks agree to well within the window. */
		if (p->seen + ALIVE_NS / NS_PER_MS >= loop_wall_ms()) {
			member_alive(m);
			if (l->m != m)
				m->via = l->m;
		}
		v[fwd.u.peers.n++] = *p;
		member_presence_touch(room, m);
		changed = 1;
	}
	if (fwd.u.peers.n > 0)
		members_flood(room, &fwd, l->m);
	if (changed) {
		members_save_later(room);
		members_news(room);
	}
	/* The room grew past a full mesh: life shown through others now
	 * counts for every member (member_online). */
	if (members_small(room) != small)
		members_presence_check(room);
}

/* A member leaving: offline at once, and the news passed on once. */
void
members_on_bye(struct room *room, struct link *l, struct frame *in)
{
	const struct frame_bye *b = &in->u.bye;
	struct member *m = member_find(room, b->id);
	struct frame f;

	if (m == NULL)
		return;
	/* Signed (version 3): only when newer than everything it said
	 * before, so an old bye replayed after it came back says nothing.
	 * Unsigned: only from itself, or about a member never known to
	 * sign (a daemon of version 1 or 2). */
	if (b->has_sig ? b->ts <= m->announced : m != l->m && m->signs) {
		room_log(room, LOG_DEBUG, "a bye for %s that it did not sign, or "
		    "older than its last word: ignored", m->idtext);
		return;
	}
	if (b->has_sig)
		m->announced = b->ts;
	if (!m->left) {
		m->left = 1;
		m->left_at = m->announced;
		m->seen = loop_wall_ms();
		memset(&f, 0, sizeof(f));
		f.type = FRAME_BYE;
		f.u.bye = *b;
		members_flood(room, &f, l->m);
		member_presence_touch(room, m);
	}
	if (m == l->m && m->conn == l->qc) {
		member_set_conn(room, m, NULL);
		/* It left on purpose: try again later, not at once. */
		m->backoff_ms = DIAL_BACKOFF_MAX_MS / 4;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * NS_PER_MS;
		l->m = NULL;
		quic_close(l->qc);
	}
}
