/*
 * net.c: what the rooms of one daemon share, on the node thread
 * (net.h): one QUIC socket, bound once, and how others reach this
 * member there: reach (reach.h), the home router's port mapping
 * (portmap.h), advertised when its external address is public, and the
 * TURN relay (turn.h), whose relayed address is advertised last and
 * through which relayed QUIC connections send, their state in status
 * (me.portmap, me.turn; docs/REACHABILITY.md).  The net sits below the
 * rooms: it knows addresses and connections, and reaches a room only
 * through the ops the node gave it (struct net_ops, room.c's
 * room_net_ops).  Each connection is one room's: a dialled one is its
 * dialler's from the start; an accepted one waits for its first frame,
 * a hello, and belongs to the room whose key opens it (docs/PROTOCOL.md,
 * "Rooms in one daemon").  Every QUIC event then goes to that room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/net.h"

/*
 * What the rooms of one daemon share (net.c): the one QUIC socket
 * and everything about how others reach this member there: the addresses
 * it advertises, its NAT, the router's port mapping and the TURN relay.
 * Connections are a room's each (struct link's room); an accepted one
 * belongs to the room whose key opens its first frame, a hello.
 */
struct net {
	struct net_env env;
	struct quic *quic;
	struct addr bound;
	struct reach reach;         /* how others reach us: what we advertise */
	struct portmap *portmap;    /* our port on the router, or NULL */
	struct turn *turn;          /* our TURN relay, or NULL (none set) */
	struct addr turn_server;    /* its server, when turn is set */
	const char *turn_from;      /* where it was set: net_env */
	int turn_told;              /* its first outcome was emitted */
	struct addr relay_ip;       /* the relay's IP as far as we know: our
	                             * relayed address (the last one, when
	                             * none now), else the server's */
	uint64_t turn_checked;      /* ns of the last turn_refresh asked */
	int stopping;               /* in net_free: nothing new starts */
	struct room *rooms[PAPO_ROOMS_MAX];  /* in the order added */
	size_t nrooms;
	uint64_t bad_frames;        /* first frames no room's key opened */
	uint64_t round_at;          /* ns of the last net_round's work */
	struct frame_peer sealing[FRAME_PEERS_MAX];  /* room_seal's, for
	                             * whichever room seals (one thread) */
};

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
	return t->turn;
}

struct quic *
net_quic(const struct net *t)
{
	return t->quic;
}

int
net_rooms_full(const struct net *t)
{
	return t->nrooms == PAPO_ROOMS_MAX;
}

void
net_room_add(struct net *t, struct room *room)
{
	if (t->nrooms < PAPO_ROOMS_MAX)
		t->rooms[t->nrooms++] = room;
}

void
net_room_remove(struct net *t, struct room *room)
{
	for (size_t i = 0; i < t->nrooms; i++)
		if (t->rooms[i] == room) {
			memmove(t->rooms + i, t->rooms + i + 1,
			    (t->nrooms - i - 1) * sizeof(t->rooms[0]));
			t->nrooms--;
			return;
		}
}

#define TURN_CHECK_NS (10ull * NS_PER_S)

/* The relay's state as status names it: "off" with none set. */
const char *
relay_turn_name(const struct net *t)
{
	static const char *const names[] = {
		[TURN_ALLOCATING] = "allocating",
		[TURN_ALLOCATED] = "allocated",
		[TURN_FAILED] = "failed",
	};

	return t->turn != NULL ? names[turn_state(t->turn)] : "off";
}

/*
 * Port mapping (portmap.h): the router's mapping, when it has a public
 * external address, is advertised after the addresses the person gave.
 */
static void
relay_portmap_changed(void *arg, const struct portmap *pm)
{
	struct net *t = arg;
	struct addr a;
	int usable = portmap_mapped(pm, &a) == 0;

	if (reach_set_mapped(&t->reach, usable ? &a : NULL))
		net_addrs_changed(t);
}

/* Adds name: v, or null when v is NULL. */
static void
relay_str(cJSON *o, const char *name, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

/* Adds name: "IP:PORT" of a when has, else null. */
static void
relay_addr(cJSON *o, const char *name, int has, const struct addr *a)
{
	char text[ADDR_STRLEN];

	if (has)
		addr_format(a, text);
	relay_str(o, name, has ? text : NULL);
}

static void
relay_portmap_json(const struct net *t, cJSON *me)
{
	cJSON *pj = cJSON_AddObjectToObject(me, "portmap");
	const struct portmap *pm = t->portmap;
	struct addr a;

	if (pm == NULL) {
		relay_str(pj, "state", "off");
		relay_str(pj, "method", NULL);
		relay_str(pj, "external", NULL);
		relay_str(pj, "reason", "listening on loopback only");
		return;
	}
	relay_str(pj, "state", portmap_state_name(portmap_state(pm)));
	relay_str(pj, "method", portmap_method(pm));
	relay_addr(pj, "external", portmap_mapped(pm, &a) == 0, &a);
	relay_str(pj, "reason", portmap_reason(pm));
}

/*
 * The TURN relay (turn.h): the client talks to its server on our QUIC
 * socket.  An allocation's relayed address is advertised last, after the
 * direct ones (reach.h).
 */
static int
relay_turn_send(void *arg, const struct addr *to, const uint8_t *p,
    size_t n)
{
	return quic_send_raw(((struct net *)arg)->quic, to, p, n, 0);
}

/* A datagram that came to our relayed address from peer: QUIC's. */
static void
relay_turn_data(void *arg, const struct addr *peer, const uint8_t *p,
    size_t n)
{
	quic_input(((struct net *)arg)->quic, peer, p, n, 1);
}

/* A packet of a relayed connection (quic.h), to peer through our relay. */
int
relay_quic_send(void *arg, const struct addr *peer, const uint8_t *p,
    size_t n)
{
	struct net *t = arg;

	return t->turn != NULL ? turn_send(t->turn, peer, p, n) : -1;
}

/* relay_permits' progress: the IPs let in so far. */
struct relay_permitting {
	struct net *t;
	const struct addr *relayed;
	struct addr *done;
	size_t *n;
};

/* A member's address a: its IP let in to our relay when public, of our
 * relayed address's family, and not let in already (at most
 * TURN_PERMITS_MAX). */
static void
relay_permit(void *arg, const struct addr *a)
{
	struct relay_permitting *p = arg;

	if (*p->n == TURN_PERMITS_MAX || addr_is_private(a) ||
	    addr_is_loopback(a) || addr_is_unspecified(a) ||
	    a->family != p->relayed->family)
		return;
	for (size_t k = 0; k < *p->n; k++)
		if (addr_same_ip(a, &p->done[k]))
			return;
	turn_permit(p->t->turn, a);
	p->done[(*p->n)++] = *a;
}

/*
 * The TURN server drops what reaches our relayed address from an IP
 * without a permission.  Members of a room use one TURN server, so the
 * relay's own IP comes first (other members' relayed addresses send
 * from it), then the IPs of members' public addresses (a member without
 * an allocation of its own dials our relayed address from one of them).
 * At most TURN_PERMITS_MAX IPs, leaving the rest of the client's peer
 * table to the relayed connections.  Called again on every announcement
 * (10 s), which keeps the permissions in use and so renewed.
 */
void
relay_permits(struct net *t)
{
	struct addr relayed, done[TURN_PERMITS_MAX];
	size_t n = 0;
	struct relay_permitting p = { t, &relayed, done, &n };

	if (t->turn == NULL || turn_relayed(t->turn, &relayed) == -1)
		return;
	turn_permit(t->turn, &relayed);
	done[n++] = relayed;
	for (size_t r = 0; r < t->nrooms && n < TURN_PERMITS_MAX; r++)
		t->env.ops->peer_addrs(t->rooms[r], relay_permit, &p);
}

/* A relayed connection ended or a dial through the relay failed: maybe
 * the TURN server lost our allocation (a restart) or is gone.  A Refresh
 * finds out (turn.h), at most once every TURN_CHECK_NS. */
void
relay_check(struct net *t)
{
	uint64_t now = loop_now_ns();

	if (t->turn == NULL || t->stopping || (t->turn_checked != 0 &&
	    now < t->turn_checked + TURN_CHECK_NS))
		return;
	t->turn_checked = now;
	turn_refresh(t->turn);
}

int
relay_on_server(const struct net *t, const struct addr *a)
{
	return t->turn != NULL && addr_same_ip(a, &t->relay_ip);
}

int
relay_both_ends(const struct net *t, const struct quic_conn *c)
{
	return quic_is_relayed(c) && relay_on_server(t, quic_remote(c));
}

static void
relay_turn_state(void *arg, const struct turn *tc)
{
	struct net *t = arg;
	char server[ADDR_STRLEN], relayed[ADDR_STRLEN];
	struct addr a;
	int has = turn_relayed(tc, &a) == 0;

	addr_format(&t->turn_server, server);
	if (has) {
		addr_format(&a, relayed);
		log_msg(LOG_INFO, "relay: allocated at %s on %s", relayed, server);
		t->relay_ip = a;
		relay_permits(t);
		/* Relayed addresses can be dialled now (members_relay_ready). */
		for (size_t r = 0; r < t->nrooms; r++)
			t->env.ops->relay_ready(t->rooms[r]);
	} else if (turn_state(tc) == TURN_FAILED) {
		log_msg(LOG_WARN, "relay: %s failed: %s", server, turn_reason(tc));
		/* Nothing goes through the relay any more: its connections
		 * end now rather than at their idle timeout. */
		for (size_t r = 0; r < t->nrooms; r++)
			t->env.ops->relay_lost(t->rooms[r]);
	}
	/* The first failure changes no address, but serve waits to hear of
	 * it (net_addrs_changed). */
	if (reach_set_relayed(&t->reach, has ? &a : NULL) ||
	    (turn_state(tc) == TURN_FAILED && !t->turn_told)) {
		t->turn_told = 1;
		/* Members learn the new address now, not in up to 10 s. */
		net_addrs_changed(t);
	}
}

static void
relay_turn_json(const struct net *t, cJSON *me)
{
	cJSON *tj = cJSON_AddObjectToObject(me, "turn");
	struct addr a;
	int on = t->turn != NULL;

	relay_str(tj, "state", relay_turn_name(t));
	relay_str(tj, "from", on ? t->turn_from : NULL);
	relay_addr(tj, "server", on, &t->turn_server);
	relay_addr(tj, "relayed", on && turn_relayed(t->turn, &a) == 0, &a);
	relay_str(tj, "reason", on ? turn_reason(t->turn) : NULL);
}

void
relay_json(const struct net *t, cJSON *me)
{
	relay_portmap_json(t, me);
	relay_turn_json(t, me);
}

int
relay_start(char err[PAPO_ERR_LEN], struct net *t,
    const struct net_env *env)
{
	/* A router can map a port for a socket others can reach at all:
	 * not for one bound to loopback. */
	if (!addr_is_loopback(&t->bound)) {
		struct portmap_env penv;

		memset(&penv, 0, sizeof(penv));
		penv.loop = env->loop;
		penv.port = t->bound.port;
		penv.off = !env->portmap;
		penv.allow_private = env->portmap_private;
		penv.changed = relay_portmap_changed;
		penv.arg = t;
		if ((t->portmap = portmap_new(err, &penv)) == NULL)
			return -1;
	}
	if (env->turn != NULL) {
		struct turn_env tenv;

		memset(&tenv, 0, sizeof(tenv));
		tenv.loop = env->loop;
		tenv.arg = t;
		tenv.send = relay_turn_send;
		tenv.data = relay_turn_data;
		tenv.state = relay_turn_state;
		t->env.turn = NULL;          /* the caller's; turn_new copies it */
		t->turn_server = env->turn->server;
		t->turn_from = env->turn_from;
		t->relay_ip = env->turn->server;
		if ((t->turn = turn_new(err, env->turn, &tenv)) == NULL)
			return -1;
	}
	return 0;
}

void
net_round(struct net *t)
{
	struct addr local[PAPO_ADDR_MAX];
	uint64_t now = loop_now_ns();
	int nl;

	if (t->round_at != 0 && now < t->round_at + NET_ROUND_NS)
		return;
	t->round_at = now;
	nl = addr_local(&t->bound, local, PAPO_ADDR_MAX);
	if (nl >= 0 && reach_set_local(&t->reach, local, (size_t)nl)) {
		log_msg(LOG_INFO, "reach: the local addresses changed");
		for (size_t i = 0; i < t->nrooms; i++)
			t->env.ops->invite_changed(t->rooms[i]);
	}
	relay_permits(t);
}

void
net_addrs_changed(struct net *t)
{
	struct addr v[PAPO_ADDR_MAX];
	size_t n = reach_addrs(&t->reach, v, PAPO_ADDR_MAX);
	char a[ADDR_STRLEN] = "nothing";

	if (n > 0)
		addr_format(&v[0], a);
	log_msg(LOG_INFO, "reach: peers see this member as %s (%s NAT)", a,
	    reach_nat_name(reach_nat(&t->reach)));
	for (size_t i = 0; i < t->nrooms; i++)
		t->env.ops->addrs_changed(t->rooms[i]);
}

/* A datagram without a QUIC long header: the TURN server's (known by
 * its source address alone: ChannelData's first byte is also a QUIC
 * short header's), a room's punch, or else QUIC's. */
static int
net_datagram(void *arg, const struct addr *from, const uint8_t *p, size_t n)
{
	struct net *t = arg;

	if (t->turn != NULL && turn_input(t->turn, from, p, n))
		return 1;
	for (size_t i = 0; i < t->nrooms; i++)
		if (t->env.ops->datagram(t->rooms[i], from, p, n))
			return 1;
	return 0;
}

static void
net_open(void *arg, struct quic_conn *qc)
{
	struct link *l = quic_data(qc);

	struct net *t = arg;

	if (l == NULL) {
		/* Accepted: its room is known at its hello. */
		if ((l = calloc(1, sizeof(*l))) == NULL) {
			quic_close(qc);
			return;
		}
		l->qc = qc;
		quic_set_data(qc, l);
	}
	l->version = quic_version(qc);
	if (l->room != NULL)
		t->env.ops->hello(l->room, l);
}

static void
net_frame(void *arg, struct quic_conn *qc, const uint8_t *p, size_t n)
{
	struct net *t = arg;
	struct link *l = quic_data(qc);

	if (l == NULL)
		return;
	if (l->room != NULL) {
		t->env.ops->frame(l->room, l, p, n);
		return;
	}
	for (size_t i = 0; i < t->nrooms; i++)
		if (t->env.ops->adopt(t->rooms[i], l, p, n))
			return;
	/* A member of one of our rooms greets first, under its key; what
	 * opens under none is not one of us. */
	t->bad_frames++;
	log_msg(LOG_WARN, "dropped a frame from a peer not yet greeted: no "
	    "room's key opens it, and the connection is closed");
	quic_close(qc);
}

static void
net_moved(void *arg, struct quic_conn *qc)
{
	struct link *l = quic_data(qc);

	struct net *t = arg;

	if (l != NULL && l->room != NULL)
		t->env.ops->moved(l->room, l);
}

/* Version 4's bulk stream: a frame for the connection's room, dropped
 * before the connection is one room's (its hello not yet read) or when
 * the rooms take none. */
static void
net_bulk(void *arg, struct quic_conn *qc, const uint8_t *p, size_t n)
{
	struct net *t = arg;
	struct link *l = quic_data(qc);

	if (l != NULL && l->room != NULL && t->env.ops->bulk != NULL)
		t->env.ops->bulk(l->room, l, p, n);
}

static void
net_bulk_room(void *arg, struct quic_conn *qc)
{
	struct net *t = arg;
	struct link *l = quic_data(qc);

	if (l != NULL && l->room != NULL && t->env.ops->bulk_room != NULL)
		t->env.ops->bulk_room(l->room, l);
}

static void
net_closed(void *arg, struct quic_conn *qc)
{
	struct link *l = quic_data(qc);

	struct net *t = arg;

	if (l == NULL)
		return;
	if (l->room != NULL)
		t->env.ops->closed(l->room, l);
	free(l);
}

struct net *
net_new(char err[PAPO_ERR_LEN], const struct net_env *env)
{
	static const struct quic_cbs cbs = {
		net_open, net_frame, net_closed, net_datagram,
		relay_quic_send, net_moved, net_bulk, net_bulk_room
	};
	struct net *t = calloc(1, sizeof(*t));
	struct addr local[PAPO_ADDR_MAX];
	int n;

	if (t == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	t->env = *env;
	if ((t->quic = quic_new(err, env->loop, &env->listen, env->me,
	    env->version, &cbs, t)) == NULL)
		goto fail;
	quic_local(t->quic, &t->bound);
	n = addr_local(&t->bound, local, PAPO_ADDR_MAX);
	reach_init(&t->reach, env->advertise, env->nadvertise, local,
	    n > 0 ? (size_t)n : 0);
	if (relay_start(err, t, env) == -1)
		goto fail;
	return t;
fail:
	net_free(t);
	return NULL;
}

void
net_local(const struct net *t, struct addr *bound)
{
	*bound = t->bound;
}

size_t
net_addrs(const struct net *t, struct addr *out, size_t max)
{
	return reach_addrs(&t->reach, out, max);
}

void
net_free(struct net *t)
{
	if (t == NULL)
		return;
	t->stopping = 1;
	/* The router's mapping goes before the socket (at most 2 s).
	 * Connections no room took close; then the relay's allocation is
	 * released on the socket still open, and the socket closes. */
	portmap_free(t->portmap);
	if (t->quic != NULL)
		quic_close_all(t->quic);
	turn_free(t->turn);
	t->turn = NULL;
	quic_free(t->quic);
	free(t);
}
