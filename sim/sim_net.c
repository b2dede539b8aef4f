/*
 * sim_net.c: the simulator's fake of node/net: every function of it the
 * room layer calls, over links the scheduler carries (sim.c).  The cut is
 * at the room's calls, not at UDP: a link is two ends (struct quic_conn),
 * one per member, and a frame sent on one is delivered whole on the other
 * after the link's latency, jitter and, for each packet lost, a probe
 * timeout (3 RTT, doubling), in order, as on one QUIC stream.  What QUIC
 * does around that is modelled by its effect: a handshake takes one RTT
 * (1.5 at the accepting end), a dial nobody answers fails after 5 s, a
 * link silent for QUIC's idle timeout (7 s: its peer stalled, killed or
 * partitioned away; keep-alives hide any shorter silence) is closed at
 * its end, and a member that did not run for longer ends its own links
 * as it wakes (quic_awake).  The callbacks into the room are called as
 * net.c calls them: a link made at an accepted end's open, hello, frame
 * or adopt, closed and the link freed.  No TURN, port mapping, punching
 * or beacons: stubs that report none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "node/net/beacon.h"
#include "node/net/punch.h"
#include "sim/sim.h"

struct quic_conn {
	struct sim_member *owner;
	struct quic_conn *peer;     /* the other end; NULL: a failed dial */
	void *data;                 /* its struct link */
	struct addr remote;
	uint8_t peer_pk[PAPO_KEY_LEN];
	int client;
	int opened;                 /* its handshake is done */
	int closing;                /* its closed callback is queued */
	int gone;                   /* its closed callback ran */
	uint64_t last_rx;           /* sim ns of the last frame delivered */
	uint64_t tail;              /* the last delivery queued to peer */
	struct quic_conn *next;     /* every end, freed at exit */
};

struct sim_frame {
	struct quic_conn *to;
	int from;
	size_t n;
	uint8_t p[];
};

struct punch {
	int unused;
};

/* One thread; every end made, for the idle tick and the end of a run. */
static struct quic_conn *sim_conns;
static uint64_t sim_frames, sim_bytes, sim_dials;

void
sim_net_counts(uint64_t *frames, uint64_t *bytes)
{
	*frames = sim_frames;
	*bytes = sim_bytes;
}

uint64_t
sim_net_dials(void)
{
	return sim_dials;
}

void
sim_net_init(struct sim_member *m, const struct addr *a)
{
	memset(&m->net, 0, sizeof(m->net));
	m->net.m = m;
	m->net.quic.m = m;
	m->net.bound = *a;
	reach_init(&m->net.reach, a, 1, a, 1);
}

static int
sim_cut(const struct sim_member *a, const struct sim_member *b)
{
	return sim_netconf(a->sim)->partitioned && a->group != b->group;
}

/* One way, for one frame: latency, jitter, and a probe timeout for each
 * packet lost in a row. */
static uint64_t
sim_delay(struct sim *s)
{
	const struct sim_netconf *nc = sim_netconf(s);
	uint64_t d = nc->lat_ns, pto = 6 * nc->lat_ns;

	if (nc->jitter_ns > 0)
		d += sim_net_rand(s, nc->jitter_ns);
	while (nc->loss_pm > 0 && sim_net_rand(s, 1000) < nc->loss_pm) {
		d += pto;
		pto *= 2;
	}
	return d;
}

/* net.c's net_closed: the room hears of it, the link goes. */
static void
sim_closed_now(struct quic_conn *c)
{
	struct link *l = c->data;

	if (c->gone)
		return;
	c->gone = 1;
	c->closing = 1;
	c->data = NULL;
	if (l == NULL)
		return;
	if (l->room != NULL)
		room_net_ops.closed(l->room, l);
	free(l);
}

static void
sim_closed_ev(struct sim_member *m, void *arg)
{
	(void)m;
	sim_closed_now(arg);
}

/* Queues c's closed callback at at (its owner's event). */
static void
sim_close_at(struct quic_conn *c, uint64_t at)
{
	if (c == NULL || c->closing || c->gone)
		return;
	c->closing = 1;
	sim_at(c->owner->sim, at, c->owner, sim_closed_ev, c, 0);
}

/* The peer hears the close after the frames queued before it, unless
 * the path is cut: then its idle timer ends it. */
static void
sim_tell_peer(struct quic_conn *c)
{
	struct quic_conn *p = c->peer;
	struct sim *s = c->owner->sim;
	uint64_t at;

	if (p == NULL || sim_cut(c->owner, p->owner))
		return;
	at = sim_now(s) + sim_delay(s);
	sim_close_at(p, at > c->tail ? at : c->tail);
}

/* net.c's net_open. */
static void
sim_open_ev(struct sim_member *m, void *arg)
{
	struct quic_conn *c = arg;
	struct link *l = c->data;

	(void)m;
	if (c->closing || c->gone)
		return;
	c->opened = 1;
	c->last_rx = sim_now(m->sim);
	if (l == NULL) {
		/* Accepted: its room is known at its hello. */
		if ((l = calloc(1, sizeof(*l))) == NULL) {
			quic_close(c);
			return;
		}
		l->qc = c;
		c->data = l;
	}
	l->version = quic_version(c);
	if (l->room != NULL)
		room_net_ops.hello(l->room, l);
}

/* net.c's net_frame. */
static void
sim_frame_ev(struct sim_member *m, void *arg)
{
	struct sim_frame *f = arg;
	struct quic_conn *c = f->to;
	struct link *l = c->data;

	if (!c->closing && !c->gone) {
		c->last_rx = sim_now(m->sim);
		sim_trace_frame(m->sim, f->from, m->idx, f->p, f->n);
		if (l != NULL && l->room != NULL)
			room_net_ops.frame(l->room, l, f->p, f->n);
		else if (l != NULL && (m->net.room == NULL ||
		    !room_net_ops.adopt(m->net.room, l, f->p, f->n))) {
			log_msg(LOG_WARN, "dropped a frame from a peer not "
			    "yet greeted: no room's key opens it, and the "
			    "connection is closed");
			quic_close(c);
		}
	}
	free(f);
}

static struct quic_conn *
sim_conn_new(struct sim_member *owner, struct sim_member *peer, int client)
{
	struct quic_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->owner = owner;
	c->client = client;
	c->remote = peer->net.bound;
	c->next = sim_conns;
	sim_conns = c;
	return c;
}

struct quic_conn *
quic_dial_on(struct quic *q, struct quic_sock *sock, const struct addr *to,
    const uint8_t expect[PAPO_KEY_LEN], int relayed)
{
	struct sim_member *a = q->m, *b;
	struct sim *s = a->sim;
	struct quic_conn *c, *d;
	uint64_t now = sim_now(s), rtt = 2 * sim_netconf(s)->lat_ns;

	(void)sock;
	(void)relayed;
	sim_dials++;
	b = sim_member_at(s, to);
	if (b == NULL || (c = sim_conn_new(a, b, 1)) == NULL)
		return NULL;
	memcpy(c->peer_pk, b->me->pk, PAPO_KEY_LEN);
	/* Nobody answers: a killed member, one cut off, or one asleep
	 * past the handshake's patience. */
	if (b == a || b->stopped || sim_cut(a, b) ||
	    b->stall_until > now + SIM_DIAL_FAIL_NS) {
		sim_close_at(c, now + SIM_DIAL_FAIL_NS);
		return c;
	}
	if (expect != NULL && memcmp(expect, b->me->pk, PAPO_KEY_LEN) != 0) {
		sim_close_at(c, now + rtt);
		return c;
	}
	if ((d = sim_conn_new(b, a, 0)) == NULL) {
		sim_close_at(c, now);
		return c;
	}
	memcpy(d->peer_pk, a->me->pk, PAPO_KEY_LEN);
	c->peer = d;
	d->peer = c;
	{
		uint64_t up = sim_delay(s), down = sim_delay(s);
		uint64_t wake = b->stall_until > now ? b->stall_until : now;

		/* The accepting end opens as the client's second flight
		 * comes, the client after one round trip. */
		sim_at(s, wake + up + down + up, b, sim_open_ev, d, 0);
		sim_at(s, wake + up + down, a, sim_open_ev, c, 0);
		c->tail = wake + up + down + up;
		d->tail = wake + up + down;
	}
	return c;
}

int
quic_send(struct quic_conn *c, const uint8_t *p, size_t n)
{
	struct sim *s = c->owner->sim;
	struct sim_frame *f;
	uint64_t at;

	/* Before the handshake is done, as QUIC does: queued, to go after
	 * it (tail starts at the other end's open). */
	if (c->closing || c->gone || n > PAPO_FRAME_MAX)
		return -1;
	sim_frames++;
	sim_bytes += n;
	/* A frame into a cut is lost for good here: its link times out
	 * before the path comes back. */
	if (c->peer == NULL || c->peer->gone || sim_cut(c->owner, c->peer->owner))
		return 0;
	if ((f = malloc(sizeof(*f) + n)) == NULL)
		return -1;
	f->to = c->peer;
	f->from = c->owner->idx;
	f->n = n;
	memcpy(f->p, p, n);
	at = sim_now(s) + sim_delay(s);
	if (at < c->tail)
		at = c->tail;
	c->tail = at;
	sim_at(s, at, c->peer->owner, sim_frame_ev, f, 1);
	return 0;
}

int
quic_send_bulk(struct quic_conn *c, const uint8_t *p, size_t n)
{
	(void)c;
	(void)p;
	(void)n;
	return -1;               /* no bulk stream: files are not simulated */
}

size_t
quic_bulk_queued(const struct quic_conn *c)
{
	(void)c;
	return 0;
}

void
quic_close(struct quic_conn *c)
{
	if (c->closing || c->gone)
		return;
	sim_tell_peer(c);
	sim_close_at(c, sim_now(c->owner->sim));
}

void
quic_close_flush(struct quic_conn *c)
{
	quic_close(c);
}

/* As quic.c's: each picked end closed now, its callback run now. */
void
quic_close_some(struct quic *q, int (*pick)(void *arg, struct quic_conn *c),
    void *arg)
{
	struct quic_conn *c = sim_conns;

	while (c != NULL) {
		if (c->owner != q->m || c->gone ||
		    (pick != NULL && !pick(arg, c))) {
			c = c->next;
			continue;
		}
		if (!c->closing)
			sim_tell_peer(c);
		sim_closed_now(c);
		c = sim_conns;
	}
}

void
sim_net_awake(struct sim_member *m)
{
	for (struct quic_conn *c = sim_conns; c != NULL; c = c->next)
		if (c->owner == m && c->opened && !c->closing && !c->gone)
			sim_close_at(c, sim_now(m->sim));
}

void
sim_net_kill(struct sim_member *m)
{
	for (struct quic_conn *c = sim_conns; c != NULL; c = c->next)
		if (c->owner == m && !c->gone) {
			c->closing = 1;
			c->gone = 1;
		}
}

uint64_t
quic_silent_ms(const struct quic_conn *c)
{
	const struct sim_member *p;
	uint64_t now = sim_now(c->owner->sim), since;

	if (!c->opened || c->peer == NULL)
		return 0;
	p = c->peer->owner;
	if (p->down_since != 0)
		since = p->down_since;
	else if (sim_cut(c->owner, p))
		since = sim_netconf(c->owner->sim)->part_since;
	else if (c->peer->gone)
		since = c->last_rx;      /* its close was lost in a cut */
	else
		return 0;                /* keep-alives every 1.5 s */
	if (c->last_rx > since)
		since = c->last_rx;
	return now > since ? (now - since) / NS_PER_MS : 0;
}

void
sim_net_tick(struct sim *s)
{
	for (struct quic_conn *c = sim_conns; c != NULL; c = c->next)
		if (!c->closing && !c->gone && !c->owner->stopped &&
		    quic_silent_ms(c) * NS_PER_MS > SIM_IDLE_NS)
			sim_close_at(c, sim_now(s));
}

void
sim_net_free(void)
{
	while (sim_conns != NULL) {
		struct quic_conn *c = sim_conns;

		sim_conns = c->next;
		free(c->data);
		free(c);
	}
}

const uint8_t *
quic_peer(const struct quic_conn *c)
{
	return c->peer_pk;
}

const struct addr *
quic_remote(const struct quic_conn *c)
{
	return &c->remote;
}

size_t
quic_mtu(const struct quic_conn *c)
{
	return c->opened ? 1200 : 0;
}

unsigned
quic_version(const struct quic_conn *c)
{
	(void)c;
	return FRAME_VERSION;     /* every member speaks today's */
}

uint64_t
quic_rtt_us(const struct quic_conn *c)
{
	return 2 * sim_netconf(c->owner->sim)->lat_ns / 1000;
}

int
quic_is_client(const struct quic_conn *c)
{
	return c->client;
}

int
quic_is_relayed(const struct quic_conn *c)
{
	(void)c;
	return 0;
}

void
quic_greeted(struct quic_conn *c)
{
	(void)c;
}

void
quic_set_data(struct quic_conn *c, void *data)
{
	c->data = data;
}

void *
quic_data(const struct quic_conn *c)
{
	return c->data;
}

/* The net. */

struct reach *
net_reach(struct net *t)
{
	return &t->reach;
}

struct frame_peer *
net_sealing(struct net *t)
{
	return t->sealing;
}

const struct addr *
net_bound(const struct net *t)
{
	return &t->bound;
}

struct turn *
net_turn(const struct net *t)
{
	(void)t;
	return NULL;
}

struct quic *
net_quic(const struct net *t)
{
	return (struct quic *)&t->quic;
}

int
net_rooms_full(const struct net *t)
{
	return t->room != NULL;
}

void
net_room_add(struct net *t, struct room *room)
{
	t->room = room;
}

void
net_room_remove(struct net *t, struct room *room)
{
	if (t->room == room)
		t->room = NULL;
}

void
net_addrs_changed(struct net *t)
{
	if (t->room != NULL)
		room_net_ops.addrs_changed(t->room);
}

void
net_round(struct net *t)
{
	(void)t;                 /* the addresses never change */
}

/* No relay. */

void
relay_json(const struct net *t, cJSON *me)
{
	(void)t;
	(void)me;
}

const char *
relay_turn_name(const struct net *t)
{
	(void)t;
	return "off";
}

void
relay_check(struct net *t)
{
	(void)t;
}

void
relay_permits(struct net *t)
{
	(void)t;
}

int
relay_on_server(const struct net *t, const struct addr *a)
{
	(void)t;
	(void)a;
	return 0;
}

int
relay_both_ends(const struct net *t, const struct quic_conn *c)
{
	(void)t;
	(void)c;
	return 0;
}

int
turn_relayed(const struct turn *t, struct addr *out)
{
	(void)t;
	(void)out;
	return -1;
}

int
turn_mapped(const struct turn *t, struct addr *out)
{
	(void)t;
	(void)out;
	return -1;
}

/* No punching: every member is reachable. */

struct punch *
punch_new(const struct punch_env *env)
{
	(void)env;
	return calloc(1, sizeof(struct punch));
}

void
punch_free(struct punch *p)
{
	free(p);
}

void
punch_want(struct punch *p, const uint8_t peer[PAPO_KEY_LEN])
{
	(void)p;
	(void)peer;
}

void
punch_frame(struct punch *p, const struct frame_punch *f)
{
	(void)p;
	(void)f;
}

int
punch_done(struct punch *p, const uint8_t peer[PAPO_KEY_LEN])
{
	(void)p;
	(void)peer;
	return 0;
}

int
punch_datagram(struct punch *p, const struct addr *from, const uint8_t *d,
    size_t n)
{
	(void)p;
	(void)from;
	(void)d;
	(void)n;
	return 0;
}

void
punch_stats(const struct punch *p, struct punch_stats *out)
{
	(void)p;
	memset(out, 0, sizeof(*out));
}

/* No LAN: the sim's rooms have lan off. */

struct beacon *
beacon_new(char err[PAPO_ERR_LEN], const struct beacon_env *env)
{
	(void)env;
	snprintf(err, PAPO_ERR_LEN, "no beacons in the simulator");
	return NULL;
}

void
beacon_free(struct beacon *b)
{
	(void)b;
}

void
beacon_counts(const struct beacon *b, uint64_t *sent, uint64_t *heard,
    uint64_t *bad)
{
	(void)b;
	*sent = *heard = *bad = 0;
}
