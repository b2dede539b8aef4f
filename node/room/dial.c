/*
 * dial.c: reaching the members of the room, on the node thread (dial.h;
 * docs/PROTOCOL.md, "Gossip"; docs/REACHABILITY.md).  It dials and
 * redials members on all their addresses, through our TURN relay where
 * theirs is on it, and, in a room above 8, picks the neighbours, lets
 * one go to make room and now and then probes a member shown offline;
 * it asks punch.c for a punch when dials are not answered.  It reads
 * the member table (member.h) and never tells the program anything.  It
 * never blocks: the only waits are loop timers.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/dial.h"

#define ACTIVE_DIAL 4                     /* neighbours we dial, above that */
#define ACTIVE_MAX 8                      /* neighbours we keep, above that */
#define EVICTED_REDIAL_NS (20ull * NS_PER_S)
/* News of members reaches dialling at most this often in a room above
 * a full mesh, where some comes every moment and each look is at every
 * member. */
#define NEWS_DELAY_NS (1ull * NS_PER_S)
/* A member not shown online is dialled about this often (from half to
 * one and a half times it, at random) in a room above 8, whatever the
 * room for neighbours: longer than a dial nobody answers takes to fail
 * (5 s), so one is under way at a time. */
#define PROBE_NS (20ull * NS_PER_S)

/* Its timers. */
struct dialling {
	struct loop_timer *dial_timer;
	struct loop_timer *punch_timer;   /* dials unanswered long enough */
	struct loop_timer *news_timer;    /* members_news, in a large room */
	struct loop_timer *probe_timer;   /* members_probe */
	int news_pending;                 /* news_timer armed */
};

/* Dialling: every member not connected, on all its addresses at once;
 * the first to answer is kept, the others closed once it greets. */

/* Whether a member is one to dial now (when = 0) or later. */
static int
member_dialable(const struct member *m)
{
	return m->conn == NULL && m->ndial == 0 && m->naddr > 0 &&
	    m->next_dial != 0 && !m->removed && !m->refused;
}

/* Whether a member reached through the relay only is to be tried again
 * on its direct addresses, now or later: whatever the room for
 * neighbours, as it is one already. */
static int
member_redialable(const struct room *room, const struct member *m)
{
	return member_relayed(room, m) && member_dials(m) == 0 &&
	    m->next_dial != 0;
}

/* How many more neighbours to dial: all in a small room, else up to
 * ACTIVE_DIAL counting those connected and being dialled. */
static size_t
members_dial_room(const struct room *room)
{
	size_t busy = 0;

	if (members_small(room))
		return ROOM_MEMBERS_MAX;
	for (size_t i = 0; i < members_n(room); i++)
		busy += member_at(room, i)->conn != NULL || member_at(room, i)->ndial > 0;
	return busy >= ACTIVE_DIAL ? 0 : ACTIVE_DIAL - busy;
}

/*
 * Open neighbours (members that took a connection we started),
 * connected or being dialled.  Behind a NAT, with punched neighbours
 * only, we would be one lost punch away from leaving the room, and
 * nobody can dial us back: so in a large room, while we have none, an
 * open member is dialled whatever the room for neighbours, and the
 * last one is never let go.
 */
static size_t
members_open_held(const struct room *room)
{
	size_t n = 0;

	for (size_t i = 0; i < members_n(room); i++) {
		const struct member *m = member_at(room, i);

		n += m->open && (m->conn != NULL || m->ndial > 0);
	}
	return n;
}

/* Whether the room needs a way back: large, and no open neighbour. */
static int
members_need_way_back(const struct room *room)
{
	return !members_small(room) && members_open_held(room) == 0;
}

/* Whether m, in a room that needs a way back, is one to dial for it. */
static int
member_way_back(const struct member *m)
{
	return m->open && member_dialable(m);
}

void
members_plan_dials(struct room *room)
{
	size_t slots = members_dial_room(room);
	int way_back = slots == 0 && members_need_way_back(room);
	uint64_t next = 0;

	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (member_redialable(room, m) && (next == 0 || m->next_dial < next))
			next = m->next_dial;
	}
	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if ((slots > 0 ? member_dialable(m) :
		    way_back && member_way_back(m)) &&
		    (next == 0 || m->next_dial < next))
			next = m->next_dial;
	}
	loop_timer_set(room->dialling->dial_timer, next);
}

/*
 * Dials m at each of n addresses at once.  Members of a room use one TURN
 * server, so an address on its IP is another member's relayed address:
 * dialled through our relay (relay to relay on the one server), since
 * that member's allocation lets in the relay's own IP
 * (relay_permits) but may not know ours (behind a symmetric NAT we
 * advertise no public address), and so that both ends know the
 * connection for relayed (relay_both_ends).  Without an allocation
 * just now, or with a relayed connection to m already (a punch, a
 * redial), such addresses wait.  Everything else is dialled directly;
 * so are relayed addresses by a member with no relay set.
 */
void
member_dial_at(struct room *room, struct member *m, const struct addr *a,
    size_t n)
{
	member_dial_on(room, m, a, n, NULL);
}

void
member_dial_on(struct room *room, struct member *m, const struct addr *a,
    size_t n, struct quic_sock *sock)
{
	struct addr relayed;
	int has = net_turn(room->net) != NULL && turn_relayed(net_turn(room->net), &relayed) == 0;

	for (size_t j = 0; j < n; j++) {
		int via = relay_on_server(room->net, &a[j]);
		struct link *l;

		/* No relay now, our own address, or one more way through
		 * the relay to a member we reach through it already. */
		if (via && (!has || addr_equal(&a[j], &relayed) ||
		    member_relayed(room, m)))
			continue;
		if ((l = calloc(1, sizeof(*l))) == NULL)
			break;
		if ((l->qc = quic_dial_on(net_quic(room->net), via ? NULL : sock, &a[j],
		    m->id, via)) == NULL) {
			free(l);
			continue;
		}
		l->target = m;
		l->room = room;
		quic_set_data(l->qc, l);
		if (m->ndial++ == 0)
			m->dial_since = loop_now_ns();
	}
	/* Dials left unanswered for a while are a reason to punch. */
	members_punch_check(room);
}

/* m's addresses, and where we last saw it if that is not one of them. */
static size_t
member_dial_addrs(const struct member *m, struct addr out[PAPO_ADDR_MAX + 1])
{
	size_t n = m->naddr;

	if (n > 0)
		memcpy(out, m->addr, n * sizeof(*out));
	if (m->has_seen_at && !addr_in(&m->seen_at, out, n))
		out[n++] = m->seen_at;
	return n;
}

static void
member_dial(struct room *room, struct member *m)
{
	struct addr a[PAPO_ADDR_MAX + 1];

	m->next_dial = 0;
	member_dial_at(room, m, a, member_dial_addrs(m, a));
	if (m->ndial == 0) {
		m->backoff_ms = DIAL_BACKOFF_MAX_MS;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * NS_PER_MS;
	}
}

/* A member reached through the relay only: its other addresses again
 * (member_dial_at leaves out the relayed ones: that path it has), and
 * again in a while. */
static void
member_redial(struct room *room, struct member *m)
{
	member_dial_at(room, m, m->addr, m->naddr);
	m->next_dial = loop_now_ns() + RELAY_REDIAL_NS;
}

/*
 * Dials the members due: all of them in a small room; in a large one as
 * many as make up ACTIVE_DIAL neighbours: members known to take our
 * connections and online first, then others online, then the rest, each
 * pass from a random starting point so the mesh comes out random.  A
 * member behind a NAT so finds the members it can reach before wasting
 * its dials on those it cannot.
 */
static void
members_dial(void *arg)
{
	struct room *room = arg;
	uint64_t now = loop_now_ns();
	size_t slots = members_dial_room(room);
	size_t start = members_n(room) ?
	    randombytes_uniform((uint32_t)members_n(room)) : 0;
	int way_back = members_need_way_back(room);

	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (member_redialable(room, m) && m->next_dial <= now)
			member_redial(room, m);
	}
	/* No open neighbour: one, the first found, whatever the room. */
	for (size_t k = 0; way_back && k < members_n(room); k++) {
		struct member *m = member_at(room, (start + k) % members_n(room));

		if (member_way_back(m) && m->next_dial <= now) {
			member_dial(room, m);
			slots -= slots > 0;
			break;
		}
	}
	for (int pass = 0; pass < 3 && slots > 0; pass++)
		for (size_t k = 0; k < members_n(room) && slots > 0; k++) {
			struct member *m = member_at(room, (start + k) % members_n(room));

			if (!member_dialable(m) || m->next_dial > now ||
			    (pass < 2 && !member_online(room, m)) ||
			    (pass == 0 && !m->open))
				continue;
			member_dial(room, m);
			slots--;
		}
	members_plan_dials(room);
}

/*
 * Probing, in a room above 8.  The member table is the whole room, and
 * in an overlay in one piece every running member's announcements reach
 * every other within a period: a member shown offline is gone, or on the
 * other side of a split.  Halves cut apart fill their neighbours within
 * their own half, and members_dial dials only into a free slot, so once
 * the path heals nothing would dial across.  So now and then one member
 * not shown online, at random, is dialled whatever the room for
 * neighbours: a dial that answers joins the pieces (the hello's peers
 * bring presence across, its digest the messages), and members_evict
 * lets a neighbour go if that makes too many.  One dial a period
 * whatever the room's size; none while every member shows online.
 */
static int
member_probeable(const struct room *room, const struct member *m,
    uint64_t now)
{
	return member_dialable(m) && m->next_dial <= now && !m->left &&
	    !member_online(room, m);
}

static void
members_probe(void *arg)
{
	struct room *room = arg;
	uint64_t now = loop_now_ns();
	size_t n = members_n(room), start;

	loop_timer_set(room->dialling->probe_timer, now + PROBE_NS / 2 +
	    randombytes_uniform((uint32_t)(PROBE_NS / NS_PER_MS)) * NS_PER_MS);
	if (members_small(room) || n == 0)
		return;
	start = randombytes_uniform((uint32_t)n);
	for (size_t k = 0; k < n; k++) {
		struct member *m = member_at(room, (start + k) % n);
		char nb[16];

		if (member_probeable(room, m, now)) {
			room_log(room, LOG_DEBUG, "probing %s, shown offline",
			    member_name(m, nb));
			member_dial(room, m);
			return;
		}
	}
}

/*
 * Makes room for a new neighbour in a large room: one other neighbour,
 * picked at random among those we could dial again, is let go and not
 * dialled again for a while.  A member we cannot dial (behind a NAT) is
 * never let go: its connection to us may be its only way into the room,
 * so a room with a single reachable member holds together however large.
 */
static int
member_evictable(const struct member *m, const struct member *keep)
{
	return m->conn != NULL && m != keep && m->open;
}

void
members_evict(struct room *room, const struct member *keep)
{
	size_t n = 0, k;

	/* Only neighbours can go, and one open neighbour must stay: the
	 * table is walked once, the neighbours (a few) twice. */
	if (members_small(room) || members_active(room) <= ACTIVE_MAX ||
	    members_open_held(room) <= 1)
		return;
	for (size_t i = 0; i < members_active(room); i++)
		n += member_evictable(member_connected(room, i), keep);
	if (n == 0)
		return;
	k = randombytes_uniform((uint32_t)n);
	for (size_t i = 0; i < members_active(room); i++) {
		struct member *m = member_connected(room, i);

		if (!member_evictable(m, keep) || k-- > 0)
			continue;
		room_log(room, LOG_DEBUG, "letting neighbour %s go", m->name);
		quic_close(m->conn);
		m->next_dial = loop_now_ns() + EVICTED_REDIAL_NS;
		return;
	}
}

/* Dials m at those of its addresses on our relay's IP (other members'
 * relayed addresses). */
static void
member_dial_relayed(struct room *room, struct member *m)
{
	for (size_t j = 0; j < m->naddr; j++)
		if (relay_on_server(room->net, &m->addr[j]))
			member_dial_at(room, m, &m->addr[j], 1);
}

void
members_relay_ready(struct room *room)
{
	/* Members we have no connection with are tried again at once;
	 * those still being dialled on their other addresses (which may
	 * never answer: a private one from an invite) at their relayed
	 * ones. */
	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (m->conn != NULL)
			continue;
		if (m->ndial == 0)
			m->next_dial = loop_now_ns();
		else
			member_dial_relayed(room, m);
	}
	members_plan_dials(room);
}

/*
 * Punching (punch.h).  A member online through others but without a
 * connection of ours (or with one through the relay only), whose
 * addresses failed us or have not answered
 * within PUNCH_AFTER_NS (a handshake answers in two round trips, well
 * within that on most paths; a QUIC dial gives up only after 5 s; a punch
 * begun where the dial would have worked costs 8 small datagrams, and the
 * first connection to greet wins anyway), is punched to through a member
 * connected to both.  Only in a
 * small room: in a large one most members are not meant to be
 * neighbours.
 */
void
members_punch_check(struct room *room)
{
	uint64_t now = loop_now_ns(), next = 0;

	if (!members_small(room)) {
		loop_timer_set(room->dialling->punch_timer, 0);
		return;
	}
	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);
		uint64_t due = m->dial_since + PUNCH_AFTER_NS;
		int waited = m->ndial > 0 && due <= now;

		/* Reached through the relay only: punch, over the relayed
		 * connection itself (no member between), for as long as that
		 * lasts; punch.c rests 60 s after every 3 failed attempts. */
		if (member_relayed(room, m)) {
			if (member_version(m) >= 2)
				punch_want(room->punch, m->id);
			continue;
		}
		if (m->conn != NULL)
			continue;
		if (m->ndial > 0 && !waited && (next == 0 || due < next))
			next = due;
		if (member_online(room, m) && (m->backoff_ms > 0 || waited) &&
		    m->via != NULL && member_version(m->via) >= 2)
			punch_want(room->punch, m->id);
	}
	loop_timer_set(room->dialling->punch_timer, next);
}

void
members_relay_lost(struct room *room)
{
	for (size_t i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (m->conn != NULL && quic_is_relayed(m->conn))
			quic_close(m->conn);
	}
}

static void
members_punch_timer(void *arg)
{
	members_punch_check(arg);
}

/* What news changes: our relay's permissions (members' addresses), the
 * dials planned, the punches wanted. */
static void
members_news_now(struct room *room)
{
	relay_permits(room->net);
	members_plan_dials(room);
	members_punch_check(room);
}

static void
members_news_timer(void *arg)
{
	struct room *room = arg;

	room->dialling->news_pending = 0;
	members_news_now(room);
}

void
members_news(struct room *room)
{
	/* A small room at once: a new member's addresses are dialled and
	 * punched to as soon as they are heard.  A large one within
	 * NEWS_DELAY_NS, armed once and not pushed back. */
	if (members_small(room)) {
		members_news_now(room);
		return;
	}
	if (room->dialling->news_pending)
		return;
	room->dialling->news_pending = 1;
	loop_timer_set(room->dialling->news_timer, loop_now_ns() + NEWS_DELAY_NS);
}

/* Start and stop. */

int
dial_new(struct room *room)
{
	struct dialling *s;
	struct loop *loop = room->env.loop;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	room->dialling = s;
	if ((s->dial_timer = loop_timer_new(loop, members_dial, room)) == NULL ||
	    (s->punch_timer = loop_timer_new(loop, members_punch_timer,
	    room)) == NULL ||
	    (s->news_timer = loop_timer_new(loop, members_news_timer,
	    room)) == NULL ||
	    (s->probe_timer = loop_timer_new(loop, members_probe,
	    room)) == NULL)
		return -1;
	return 0;
}

void
dial_start(struct room *room)
{
	members_plan_dials(room);
	loop_timer_set(room->dialling->probe_timer, loop_now_ns() + PROBE_NS);
}

void
dial_free(struct room *room)
{
	struct dialling *s = room->dialling;

	if (s == NULL)
		return;
	loop_timer_free(s->dial_timer);
	loop_timer_free(s->punch_timer);
	loop_timer_free(s->news_timer);
	loop_timer_free(s->probe_timer);
	free(s);
	room->dialling = NULL;
}
