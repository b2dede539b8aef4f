/*
 * net.c: what the rooms of one daemon share, on the node thread
 * (gossip_int.h): one QUIC socket, bound once, and how others reach this
 * member there (reach.h; the port mapping and the TURN relay are
 * relay.c's).  Each connection is one room's: a dialled one is its
 * dialler's from the start; an accepted one waits for its first frame,
 * a hello, and belongs to the room whose key opens it (docs/PROTOCOL.md,
 * "Rooms in one daemon").  Every QUIC event then goes to that room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/gossip_int.h"

void
net_round(struct net *t)
{
	struct addr local[PAPO_ADDR_MAX];
	uint64_t now = loop_now_ns();
	int nl;

	if (t->round_at != 0 && now < t->round_at + ANNOUNCE_FAST_NS)
		return;
	t->round_at = now;
	nl = addr_local(&t->bound, local, PAPO_ADDR_MAX);
	if (nl >= 0 && reach_set_local(&t->reach, local, (size_t)nl)) {
		log_msg(LOG_INFO, "reach: the local addresses changed");
		for (size_t i = 0; i < t->nrooms; i++)
			gossip_invite_changed(t->rooms[i]);
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
	for (size_t i = 0; i < t->nrooms; i++) {
		struct gossip *g = t->rooms[i];

		gossip_invite_changed(g);
		/* The members hear it now, not at the next round. */
		if (!g->stopping)
			loop_timer_set(g->announce_timer, 1);
	}
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
		if (punch_datagram(t->rooms[i]->punch, from, p, n))
			return 1;
	return 0;
}

static void
net_open(void *arg, struct quic_conn *qc)
{
	struct link *l = quic_data(qc);

	(void)arg;
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
	if (l->g != NULL)
		gossip_hello(l->g, l);
}

static void
net_frame(void *arg, struct quic_conn *qc, const uint8_t *p, size_t n)
{
	struct net *t = arg;
	struct link *l = quic_data(qc);

	if (l == NULL)
		return;
	if (l->g != NULL) {
		gossip_link_frame(l->g, l, p, n);
		return;
	}
	for (size_t i = 0; i < t->nrooms; i++)
		if (gossip_link_adopt(t->rooms[i], l, p, n))
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

	(void)arg;
	if (l != NULL && l->g != NULL)
		gossip_link_moved(l->g, l);
}

static void
net_closed(void *arg, struct quic_conn *qc)
{
	struct link *l = quic_data(qc);

	(void)arg;
	if (l == NULL)
		return;
	if (l->g != NULL)
		gossip_link_closed(l->g, l);
	free(l);
}

struct net *
net_new(char err[PAPO_ERR_LEN], const struct net_env *env)
{
	static const struct quic_cbs cbs = {
		net_open, net_frame, net_closed, net_datagram,
		relay_quic_send, net_moved
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
