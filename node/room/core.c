/*
 * core.c: what every part of a room stands on (core.h): sealing frames
 * with the keys of its epochs (keyring.h) and sending them on a link,
 * and handing answers and events to the program.  The room's parts
 * (member, role, epoch, deliver, hello, room.c on top) call down to
 * it; it calls none of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/loop.h"
#include "node/room/core.h"

void
room_emit_json(struct room *room, enum node_kind kind, cJSON *o)
{
	struct node_msg *ev;

	if (o == NULL)
		return;   /* nothing this member may see, or out of memory */
	ev = node_msg_new(kind);
	/* Which room it is of, for whoever follows several. */
	cJSON_AddStringToObject(o, "room_id", room->rid);
	if (ev != NULL && (ev->json = cJSON_PrintUnformatted(o)) != NULL)
		room->env.emit(room->env.arg, ev);
	else
		node_msg_free(ev);
	cJSON_Delete(o);
}

void
room_fail(struct room *room, struct node_msg *req, int code, const char *fmt,
    ...)
{
	va_list ap;

	req->code = code;
	va_start(ap, fmt);
	vsnprintf(req->err, sizeof(req->err), fmt, ap);
	va_end(ap);
	room->env.emit(room->env.arg, req);
}

/* Sending frames. */

int
room_seal(struct room *room, const struct frame *f, unsigned version,
    struct buf *b)
{
	struct frame out;

	uint32_t n;

	if (frame_for_version(f, version, &out, net_sealing(room->net)) == -1)
		return -1;
	if (version < 3)
		return frame_seal(room->env.keys, &out, b);
	/* Version 3 seals with the newest key and says which; but a hello
	 * and an epoch frame with epoch 0's, the room secret's, which every
	 * member holds: the hello says which epochs each side has, and an
	 * epoch frame (each member's secret sealed to it alone) is how a
	 * member behind learns the newer ones. */
	n = f->type == FRAME_HELLO || f->type == FRAME_EPOCH ? 0 :
	    keyring_newest(room->keyring);
	return frame_seal_epoch(keyring_keys(room->keyring, n), n, &out, b);
}

void
room_send_link(struct room *room, struct link *l, const struct frame *f)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (room_seal(room, f, l->version, &b) == 0)
		quic_send(l->qc, b.p, b.len);
	buf_free(&b);
}

/* What an invite holds changed (our addresses, the newest key epoch):
 * the program prints invites with it from now on (NODE_EV_ADDRS). */
void
room_invite_changed(struct room *room)
{
	struct addr v[PAPO_ADDR_MAX];
	size_t n = reach_addrs(net_reach(room->net), v, PAPO_ADDR_MAX);
	cJSON *o = cJSON_CreateObject(), *arr;
	char a[ADDR_STRLEN];

	arr = cJSON_AddArrayToObject(o, "addrs");
	for (size_t i = 0; i < n; i++) {
		addr_format(&v[i], a);
		cJSON_AddItemToArray(arr, cJSON_CreateString(a));
	}
	/* serve waits for the relay's first answer before printing the
	 * invite (serve.c), which says whether it holds the relayed address. */
	cJSON_AddStringToObject(o, "relay", relay_turn_name(room->net));
	room_emit_json(room, NODE_EV_ADDRS, o);
}
