/*
 * core.c: what every part of a room stands on (gossip_int.h): the keys
 * of its epochs and who was removed, sealing and sending frames, and
 * handing answers and events to the program.  The room's parts (member,
 * role, epoch, deliver, hello, gossip.c on top) call down to it; it
 * calls none of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/loop.h"
#include "node/room/gossip_int.h"

void
gossip_emit_json(struct gossip *g, enum node_kind kind, cJSON *o)
{
	struct node_msg *ev = node_msg_new(kind);

	/* Which room it is of, for whoever follows several. */
	cJSON_AddStringToObject(o, "room_id", g->rid);
	if (ev != NULL && (ev->json = cJSON_PrintUnformatted(o)) != NULL)
		g->env.emit(g->env.arg, ev);
	else
		node_msg_free(ev);
	cJSON_Delete(o);
}

void
gossip_fail(struct gossip *g, struct node_msg *req, int code, const char *fmt,
    const char *arg)
{
	req->code = code;
	snprintf(req->err, sizeof(req->err), fmt, arg);
	g->env.emit(g->env.arg, req);
}

/*
 * How a member is reached now: "direct", "punched", "lan" or "relay" (our
 * own connection, the last through our TURN relay: its protocol version
 * and smoothed RTT), "via NAME" (no
 * connection, but news of its life came lately through NAME's), "via
 * others" (a large room, over several hops), or "none".
 */
/* Keys. */

/* The epoch numbered n, or NULL when we do not hold it. */
struct epoch_held *
epoch_find(const struct gossip *g, uint32_t n)
{
	for (size_t i = 0; i < g->nepochs; i++)
		if (g->epochs[i].n == n)
			return &g->epochs[i];
	return NULL;
}

const struct room_keys *
epoch_keys(const struct gossip *g, uint32_t n)
{
	struct epoch_held *e = epoch_find(g, n);

	return e != NULL ? &e->keys : NULL;
}

uint32_t
epoch_newest(const struct gossip *g)
{
	uint32_t n = 0;

	for (size_t i = 0; i < g->nepochs; i++)
		if (g->epochs[i].n > n)
			n = g->epochs[i].n;
	return n;
}

const struct removal *
epoch_removed(const struct gossip *g, const uint8_t id[32])
{
	for (size_t i = 0; i < g->nremoved; i++)
		if (memcmp(g->removed[i].id, id, 32) == 0)
			return &g->removed[i];
	return NULL;
}

/* Sending frames. */

/* Seals f as a connection of that version takes it (frame_for_version):
 * -1 when nothing of it is for that version. */
static int
gossip_seal(struct gossip *g, const struct frame *f, unsigned version,
    struct buf *b)
{
	struct frame out;

	uint32_t n;

	if (frame_for_version(f, version, &out, g->net->sealing) == -1)
		return -1;
	if (version < 3)
		return frame_seal(g->env.keys, &out, b);
	/* Version 3 seals with the newest key and says which; but a hello
	 * and an epoch frame with epoch 0's, the room secret's, which every
	 * member holds: the hello says which epochs each side has, and an
	 * epoch frame (each member's secret sealed to it alone) is how a
	 * member behind learns the newer ones. */
	n = f->type == FRAME_HELLO || f->type == FRAME_EPOCH ? 0 :
	    epoch_newest(g);
	return frame_seal_epoch(epoch_keys(g, n), n, &out, b);
}

int
gossip_send_frame(struct gossip *g, struct member *m, const struct frame *f)
{
	struct buf b;
	int rc = -1;

	if (m == NULL || m->conn == NULL)
		return -1;
	buf_init(&b, PAPO_FRAME_MAX);
	if (gossip_seal(g, f, quic_version(m->conn), &b) == 0)
		rc = quic_send(m->conn, b.p, b.len);
	buf_free(&b);
	return rc;
}

void
gossip_send_link(struct gossip *g, struct link *l, const struct frame *f)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (gossip_seal(g, f, l->version, &b) == 0)
		quic_send(l->qc, b.p, b.len);
	buf_free(&b);
}

/* Sends f to every connected member but except (may be NULL): sealed
 * once per protocol version, as each version takes it. */
void
gossip_flood(struct gossip *g, const struct frame *f, const struct member *except)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	for (unsigned v = 1; v <= FRAME_VERSION; v++) {
		int sealed = 0, ok = 0;

		for (size_t i = 0; i < g->nmembers; i++) {
			struct member *m = g->members[i];

			if (m->conn == NULL || m == except ||
			    quic_version(m->conn) != v)
				continue;
			if (!sealed) {
				buf_reset(&b);
				ok = gossip_seal(g, f, v, &b) == 0;
				sealed = 1;
			}
			if (ok)
				quic_send(m->conn, b.p, b.len);
		}
	}
	buf_free(&b);
}

/* What an invite holds changed (our addresses, the newest key epoch):
 * the program prints invites with it from now on (NODE_EV_ADDRS). */
void
gossip_invite_changed(struct gossip *g)
{
	struct addr v[PAPO_ADDR_MAX];
	size_t n = reach_addrs(&g->net->reach, v, PAPO_ADDR_MAX);
	cJSON *o = cJSON_CreateObject(), *arr;
	char a[ADDR_STRLEN];

	arr = cJSON_AddArrayToObject(o, "addrs");
	for (size_t i = 0; i < n; i++) {
		addr_format(&v[i], a);
		cJSON_AddItemToArray(arr, cJSON_CreateString(a));
	}
	/* serve waits for the relay's first answer before printing the
	 * invite (serve.c), which says whether it holds the relayed address. */
	cJSON_AddStringToObject(o, "relay", relay_turn_name(g->net));
	gossip_emit_json(g, NODE_EV_ADDRS, o);
}
