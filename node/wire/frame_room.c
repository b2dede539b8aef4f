/*
 * frame_room.c: the room family's frame types, version 3's
 * (docs/PROTOCOL.md, "Owner and admins", "Key epochs"): admin (the
 * owner makes a member an admin) and epoch (a new key epoch: its secret
 * sealed to each remaining member, the members it removes), declared
 * once each for the engine in frame_desc.c (frame_int.h).
 *
 * Pure: no I/O, no clock, no threads.
 */
#include <string.h>

#include "node/wire/frame_int.h"

#define ADMIN(m) offsetof(struct frame_admin, m)

static const struct frame_field admin_fields[] = {
	{ .name = "id", .kind = FK_KEY, .off = ADMIN(id), .sig = 1 },
	{ .name = "by", .kind = FK_KEY, .off = ADMIN(by), .sig = 2 },
	{ .name = "ts", .kind = FK_U64, .off = ADMIN(ts), .sig = 3,
	  .sig_width = 8 },
	{ .name = "sig", .kind = FK_SIG, .off = ADMIN(sig) },
};

const struct frame_desc frame_admin_desc = {
	.name = "admin", .since = 3, .fields = FRAME_FIELDS(admin_fields),
	.label = FRAME_LABEL("papo admin v3"), .signer = 1, .sig = 3,
};

#define EKEY(m) offsetof(struct frame_epoch_key, m)

static const struct frame_field epoch_key_fields[] = {
	{ .name = "id", .kind = FK_KEY, .off = EKEY(id), .sig = 1 },
	{ .name = "box", .kind = FK_BOX, .off = EKEY(box), .sig = 2 },
};

static const struct frame_desc epoch_key_desc = {
	.fields = FRAME_FIELDS(epoch_key_fields),
};

/* An epoch names each member once: given a key or removed, not both. */
static enum frame_err
epoch_check(const void *obj)
{
	const struct frame_epoch *e = obj;

	if (e->n == 0 || e->n > UINT32_MAX || e->nkeys == 0)
		return FRAME_ERR_VALUE;
	for (size_t i = 0; i < e->nkeys; i++) {
		for (size_t j = 0; j < i; j++)
			if (memcmp(e->keys[i].id, e->keys[j].id,
			    PAPO_KEY_LEN) == 0)
				return FRAME_ERR_VALUE;
		for (size_t j = 0; j < e->nremoved; j++)
			if (memcmp(e->keys[i].id, e->removed[j],
			    PAPO_KEY_LEN) == 0)
				return FRAME_ERR_VALUE;
	}
	for (size_t i = 0; i < e->nremoved; i++)
		for (size_t j = 0; j < i; j++)
			if (memcmp(e->removed[i], e->removed[j],
			    PAPO_KEY_LEN) == 0)
				return FRAME_ERR_VALUE;
	return FRAME_OK;
}

#define EPOCH(m) offsetof(struct frame_epoch, m)

static const struct frame_field epoch_fields[] = {
	/* The epoch, 1 to 2^32 - 1: 4 bytes where signed. */
	{ .name = "n", .kind = FK_U64, .off = EPOCH(n), .sig = 1,
	  .sig_width = 4 },
	{ .name = "by", .kind = FK_KEY, .off = EPOCH(by), .sig = 2 },
	{ .name = "ts", .kind = FK_U64, .off = EPOCH(ts), .sig = 3,
	  .sig_width = 8 },
	{ .name = "removed", .kind = FK_LIST, .off = EPOCH(removed),
	  .n_off = EPOCH(nremoved), .max = FRAME_EPOCH_REMOVED_MAX,
	  .elem = FK_KEY, .elem_size = PAPO_KEY_LEN, .sig = 4,
	  .sig_width = 2 },
	{ .name = "keys", .kind = FK_LIST, .off = EPOCH(keys),
	  .n_off = EPOCH(nkeys), .max = FRAME_EPOCH_KEYS_MAX,
	  .sub = &epoch_key_desc, .elem_size = sizeof(struct frame_epoch_key),
	  .sig = 5, .sig_width = 2 },
	{ .name = "sig", .kind = FK_SIG, .off = EPOCH(sig) },
};

const struct frame_desc frame_epoch_desc = {
	.name = "epoch", .since = 3, .fields = FRAME_FIELDS(epoch_fields),
	.label = FRAME_LABEL("papo epoch v3"), .signer = 1, .sig = 5,
	.sign_checked = 1, .check = epoch_check,
};

int
frame_admin_sign(struct frame_admin *a, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_admin_desc, a, k, id);
}

int
frame_epoch_sign(struct frame_epoch *e, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_epoch_desc, e, k, id);
}
