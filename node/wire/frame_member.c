/*
 * frame_member.c: the member family's frame types (docs/PROTOCOL.md,
 * "Frames"): hello (who a member is, first on a connection), peers (the
 * members one knows of, each entry signed by its member from version
 * 3), bye (a member leaving) and punch (hole punching arranged through
 * a mutual member, docs/REACHABILITY.md), declared once each for the
 * engine in frame_desc.c (frame_int.h says how to read a descriptor).
 *
 * Pure: no I/O, no clock, no threads.
 */
#include "node/wire/frame_int.h"

#define HELLO(m) offsetof(struct frame_hello, m)

static const struct frame_field hello_fields[] = {
	/* The connection's version: it says which of the rest it has. */
	{ .name = "v", .kind = FK_VERSION, .off = HELLO(version) },
	{ .name = "id", .kind = FK_KEY, .off = HELLO(id) },
	{ .name = "name", .kind = FK_TEXT, .off = HELLO(name),
	  .flags = FF_PRINTABLE | FF_NONEMPTY, .max = PAPO_NAME_MAX,
	  .too_long = FRAME_ERR_NAME_LONG },
	{ .name = "about", .kind = FK_TEXT, .off = HELLO(about),
	  .flags = FF_PRINTABLE, .max = PAPO_ABOUT_MAX,
	  .too_long = FRAME_ERR_ABOUT_LONG },
	{ .name = "addrs", .kind = FK_ADDRS, .off = HELLO(addr),
	  .n_off = HELLO(naddr) },
	{ .name = "msgs", .kind = FK_U64, .off = HELLO(msgs) },
	{ .name = "digest", .kind = FK_KEY, .off = HELLO(digest) },
	/* Version 2: where the sender sees the receiver. */
	{ .name = "obs", .kind = FK_ADDR, .off = HELLO(obs), .since = 2 },
	/* Version 3: the owner as far as the sender knows, the admin
	 * grants it holds, its newest key epoch (absent for 0). */
	{ .name = "owner", .kind = FK_KEY, .off = HELLO(owner), .since = 3,
	  .flags = FF_OPTIONAL | FF_HAS, .has_off = HELLO(has_owner) },
	{ .name = "events", .kind = FK_U64, .off = HELLO(events),
	  .since = 3 },
	{ .name = "epoch", .kind = FK_U32, .off = HELLO(epoch), .since = 3,
	  .flags = FF_OPTIONAL | FF_NONZERO },
};

const struct frame_desc frame_hello_desc = {
	.name = "hello", .fields = FRAME_FIELDS(hello_fields),
};

#define PEER(m) offsetof(struct frame_peer, m)

/* Version 3's entry is signed by the member it is about, over all its
 * fields, seen its counter; an older version's carries no signature,
 * and version 3 sends no unsigned entry (FF_FILTER below). */
static const struct frame_field peer_fields[] = {
	{ .name = "id", .kind = FK_KEY, .off = PEER(id), .sig = 1 },
	{ .name = "name", .kind = FK_TEXT, .off = PEER(name),
	  .flags = FF_PRINTABLE | FF_NONEMPTY, .max = PAPO_NAME_MAX,
	  .too_long = FRAME_ERR_NAME_LONG, .sig = 3, .sig_width = 1 },
	{ .name = "about", .kind = FK_TEXT, .off = PEER(about),
	  .flags = FF_PRINTABLE, .max = PAPO_ABOUT_MAX,
	  .too_long = FRAME_ERR_ABOUT_LONG, .sig = 4, .sig_width = 2 },
	{ .name = "addrs", .kind = FK_ADDRS, .off = PEER(addr),
	  .n_off = PEER(naddr), .sig = 5, .sig_width = 1 },
	{ .name = "seen", .kind = FK_U64, .off = PEER(seen), .sig = 2,
	  .sig_width = 8 },
	{ .name = "sig", .kind = FK_SIG, .off = PEER(sig), .since = 3,
	  .flags = FF_HAS, .has_off = PEER(has_sig) },
};

const struct frame_desc frame_peer_desc = {
	.fields = FRAME_FIELDS(peer_fields),
	.label = FRAME_LABEL("papo peer v3"), .signer = 0, .sig = 5,
	.sign_checked = 1,
};

static const struct frame_field peers_fields[] = {
	{ .name = "members", .kind = FK_LIST, .off =
	  offsetof(struct frame_peers, v), .n_off =
	  offsetof(struct frame_peers, n), .flags = FF_FILTER,
	  .max = FRAME_PEERS_MAX, .sub = &frame_peer_desc,
	  .elem_size = sizeof(struct frame_peer) },
};

const struct frame_desc frame_peers_desc = {
	.name = "peers", .fields = FRAME_FIELDS(peers_fields),
};

#define BYE(m) offsetof(struct frame_bye, m)

/* Version 3's is signed by the member leaving, ts on the counter of its
 * announcements; version 3 sends no unsigned bye. */
static const struct frame_field bye_fields[] = {
	{ .name = "id", .kind = FK_KEY, .off = BYE(id), .sig = 1 },
	{ .name = "ts", .kind = FK_U64, .off = BYE(ts), .since = 3,
	  .flags = FF_HAS, .has_off = BYE(has_sig), .sig = 2,
	  .sig_width = 8 },
	{ .name = "sig", .kind = FK_SIG, .off = BYE(sig), .since = 3,
	  .flags = FF_HAS, .has_off = BYE(has_sig) },
};

const struct frame_desc frame_bye_desc = {
	.name = "bye", .fields = FRAME_FIELDS(bye_fields),
	.label = FRAME_LABEL("papo bye v3"), .signer = 0, .sig = 2,
};

static const char *const punch_phases[] = {
	[PUNCH_ASK] = "ask", [PUNCH_READY] = "ready", NULL
};

/* The attempt is 1 to 3. */
static enum frame_err
punch_check(const void *obj)
{
	const struct frame_punch *p = obj;

	return p->n == 0 || p->n > 3 ? FRAME_ERR_VALUE : FRAME_OK;
}

#define PUNCH(m) offsetof(struct frame_punch, m)

static const struct frame_field punch_fields[] = {
	{ .name = "from", .kind = FK_KEY, .off = PUNCH(from), .sig = 1 },
	{ .name = "to", .kind = FK_KEY, .off = PUNCH(to), .sig = 2 },
	{ .name = "phase", .kind = FK_ENUM, .off = PUNCH(phase),
	  .names = punch_phases, .sig = 3, .sig_width = 1 },
	{ .name = "n", .kind = FK_U64, .off = PUNCH(n), .sig = 4,
	  .sig_width = 8 },
	{ .name = "ts", .kind = FK_U64, .off = PUNCH(ts), .sig = 5,
	  .sig_width = 8 },
	{ .name = "addrs", .kind = FK_ADDRS, .off = PUNCH(addr),
	  .n_off = PUNCH(naddr), .sig = 6, .sig_width = 1 },
	{ .name = "sig", .kind = FK_SIG, .off = PUNCH(sig) },
};

const struct frame_desc frame_punch_desc = {
	.name = "punch", .since = 2, .fields = FRAME_FIELDS(punch_fields),
	.label = FRAME_LABEL("papo punch v2"), .signer = 0, .sig = 6,
	.check = punch_check,
};

int
frame_peer_sign(struct frame_peer *p, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_peer_desc, p, k, id);
}

int
frame_bye_sign(struct frame_bye *b, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_bye_desc, b, k, id);
}

int
frame_punch_sign(struct frame_punch *p, const struct room_keys *k,
    const struct identity *id)
{
	return frame_desc_sign(&frame_punch_desc, p, k, id);
}
