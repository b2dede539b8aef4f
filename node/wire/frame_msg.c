/*
 * frame_msg.c: the message family's frame types (docs/PROTOCOL.md,
 * "Frames"): msg (a message, signed by its author), ack (a receipt,
 * signed by who gives it) and sync (the ids a member has since a time,
 * asking for the rest), declared once each for the engine in
 * frame_desc.c (frame_int.h says how to read a descriptor).
 *
 * Pure: no I/O, no clock, no threads; data and two signing calls.
 */
#include <string.h>

#include "node/wire/frame_int.h"

#define MSG(m) offsetof(struct frame_msg, m)

static const struct frame_field msg_fields[] = {
	{ .name = "id", .kind = FK_MSGID, .off = MSG(id), .sig = 1 },
	{ .name = "from", .kind = FK_KEY, .off = MSG(from), .sig = 2 },
	{ .name = "name", .kind = FK_TEXT, .off = MSG(name),
	  .flags = FF_PRINTABLE | FF_NONEMPTY, .max = PAPO_NAME_MAX,
	  .too_long = FRAME_ERR_NAME_LONG, .sig = 4, .sig_width = 1 },
	{ .name = "ts", .kind = FK_U64, .off = MSG(ts), .sig = 3,
	  .sig_width = 8 },
	{ .name = "body", .kind = FK_BODY, .off = MSG(body),
	  .n_off = MSG(body_len), .max = PAPO_BODY_MAX, .sig = 7,
	  .sig_width = 4 },
	{ .name = "to", .kind = FK_KEY, .off = MSG(to),
	  .flags = FF_OPTIONAL | FF_HAS, .has_off = MSG(has_to), .sig = 5 },
	{ .name = "reply_to", .kind = FK_MSGID, .off = MSG(reply_to),
	  .flags = FF_OPTIONAL | FF_HAS, .has_off = MSG(has_reply_to),
	  .sig = 6 },
	/* Version 3: a person wrote it (the dashboard, the API), not an
	 * agent; 1 or absent, not signed. */
	{ .name = "person", .kind = FK_FLAG, .off = MSG(person), .since = 3,
	  .flags = FF_OPTIONAL | FF_NONZERO },
	{ .name = "sig", .kind = FK_SIG, .off = MSG(sig) },
};

const struct frame_desc frame_msg_desc = {
	.name = "msg", .fields = FRAME_FIELDS(msg_fields),
	.label = FRAME_LABEL("papo msg v1"), .signer = 1, .sig = 8,
};

static const char *const ack_states[] = {
	[ACK_DELIVERED] = "delivered", [ACK_READ] = "read", NULL
};

#define ACK(m) offsetof(struct frame_ack, m)

static const struct frame_field ack_fields[] = {
	{ .name = "id", .kind = FK_MSGID, .off = ACK(id), .sig = 1 },
	{ .name = "by", .kind = FK_KEY, .off = ACK(by), .sig = 2 },
	{ .name = "state", .kind = FK_ENUM, .off = ACK(state),
	  .names = ack_states, .sig = 3, .sig_width = 1 },
	{ .name = "ts", .kind = FK_U64, .off = ACK(ts), .sig = 4,
	  .sig_width = 8 },
	{ .name = "sig", .kind = FK_SIG, .off = ACK(sig) },
};

const struct frame_desc frame_ack_desc = {
	.name = "ack", .fields = FRAME_FIELDS(ack_fields),
	.label = FRAME_LABEL("papo ack v1"), .signer = 1, .sig = 4,
};

#define SYNC(m) offsetof(struct frame_sync, m)

static const struct frame_field sync_fields[] = {
	{ .name = "since", .kind = FK_U64, .off = SYNC(since) },
	{ .name = "have", .kind = FK_LIST, .off = SYNC(have),
	  .n_off = SYNC(n), .max = FRAME_SYNC_MAX, .elem = FK_MSGID,
	  .elem_size = sizeof(((struct frame_sync *)0)->have[0]) },
};

const struct frame_desc frame_sync_desc = {
	.name = "sync", .fields = FRAME_FIELDS(sync_fields),
};

int
frame_msg_sign(struct frame_msg *m, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_msg_desc, m, k, id);
}

int
frame_ack_sign(struct frame_ack *a, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_ack_desc, a, k, id);
}

void
frame_msg_clear(struct frame_msg *m)
{
	frame_desc_free(&frame_msg_desc, m);
	memset(m, 0, sizeof(*m));
}
